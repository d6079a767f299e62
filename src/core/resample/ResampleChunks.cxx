/*=========================================================================
 *  CudaImageFilters: resampling in output chunks, for inputs or outputs
 *  larger than the device's free memory (host code over the GPU core).
 *=========================================================================*/
#include "cif/CudaError.h"
#include "cif/Resample.h"
#include "cif/Runtime.h"
#include "cifPixelLists.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace cif
{
namespace
{

/** Taps an inside point may read beyond floor(c): nearest (c + 0.5), linear
 * (+1), cubic (-1 ... +2, mirrored at most 2 samples back inside), plus a
 * margin for ITK's per-line coordinate rounding. */
constexpr std::int64_t kBoxMargin = 4;

/** The box of the input that the chunk's inside points can read: the hull
 * of the chunk's corners under the index map (every transform here is
 * affine on the chunk), grown by the taps' reach and clipped to the input.
 * The whole input for grid transforms or a non-finite map. */
void
SampleBoxOf(const ResampleGeometry & g, const ResampleParameters & p, std::int64_t start[3], std::int64_t size[3])
{
  for (int a = 0; a < 3; ++a)
  {
    start[a] = 0;
    size[a] = g.inputSize[a];
  }
  if (g.grid.kind != GridTransformKind::None)
  {
    return;
  }
  double lo[3] = { INFINITY, INFINITY, INFINITY };
  double hi[3] = { -INFINITY, -INFINITY, -INFINITY };
  for (int corner = 0; corner < 8; ++corner)
  {
    const double o[3] = { (corner & 1) ? static_cast<double>(g.outputSize[0] - 1) : 0.0,
                          (corner & 2) ? static_cast<double>(g.outputSize[1] - 1) : 0.0,
                          (corner & 4) ? static_cast<double>(g.outputSize[2] - 1) : 0.0 };
    for (int a = 0; a < 3; ++a)
    {
      const double c = g.matrix[a][0] * o[0] + g.matrix[a][1] * o[1] + g.matrix[a][2] * o[2] + g.offset[a];
      lo[a] = std::min(lo[a], c);
      hi[a] = std::max(hi[a], c);
    }
  }
  for (int a = 0; a < 3; ++a)
  {
    if (!std::isfinite(lo[a]) || !std::isfinite(hi[a]) || std::fabs(lo[a]) > 1e15 || std::fabs(hi[a]) > 1e15)
    {
      continue; // the whole axis
    }
    const std::int64_t last = g.inputSize[a] - 1;
    // the GRBF taps reach farther: the Gaussians' radius or the cardinal weights'
    const std::int64_t margin = p.interpolation == Interpolation::GaussianRBF
                                  ? std::max<std::int64_t>(kBoxMargin, p.grbf.Reach(a) + 2)
                                  : kBoxMargin;
    const std::int64_t first =
      std::clamp(static_cast<std::int64_t>(std::floor(lo[a])) - margin, std::int64_t{ 0 }, last);
    const std::int64_t end = std::clamp(static_cast<std::int64_t>(std::floor(hi[a])) + margin, first, last);
    start[a] = first;
    size[a] = end - first + 1;
  }
}

/** Copies the box out of the whole (host) input, x fastest. */
template <typename TSample>
void
PackBox(const TSample *          input,
        const ResampleGeometry & g,
        const std::int64_t       start[3],
        const std::int64_t       size[3],
        std::vector<TSample> &   box)
{
  box.resize(static_cast<std::size_t>(size[0] * size[1] * size[2]));
  TSample * destination = box.data();
  for (std::int64_t z = 0; z < size[2]; ++z)
  {
    for (std::int64_t y = 0; y < size[1]; ++y)
    {
      const TSample * row = input + start[0] + g.inputSize[0] * ((start[1] + y) + g.inputSize[1] * (start[2] + z));
      std::memcpy(destination, row, static_cast<std::size_t>(size[0]) * sizeof(TSample));
      destination += size[0];
    }
  }
}

} // namespace

template <typename TSample, typename TOut>
int
ResampleCUDAInChunks(const TSample * input, TOut * output, const ResampleGeometry & g, const ResampleParameters & p)
{
  const int          axis = g.dimension >= 3 ? 2 : 1; // the output's slowest axis
  const std::int64_t planes = g.outputSize[axis];
  const std::int64_t planeSize = axis == 2 ? g.outputSize[0] * g.outputSize[1] : g.outputSize[0];
  ResampleParameters parameters = p;
  parameters.fastTexture = false; // the texture needs the whole coefficient image

  std::vector<TSample> box;
  std::int64_t         first = 0;
  std::int64_t         height = planes;
  int                  chunks = 0;
  while (first < planes)
  {
    height = std::min(height, planes - first);
    ResampleGeometry chunk = g;
    chunk.outputSize[axis] = height;
    chunk.outputStart[axis] = g.outputStart[axis] + first;
    for (int a = 0; a < 3; ++a)
    {
      chunk.offset[a] = g.offset[a] + g.matrix[a][axis] * static_cast<double>(first);
    }
    SampleBoxOf(chunk, p, chunk.sampleBoxStart, chunk.sampleBoxSize);
    const std::size_t boxVoxels =
      static_cast<std::size_t>(chunk.sampleBoxSize[0] * chunk.sampleBoxSize[1] * chunk.sampleBoxSize[2]);
    const std::size_t outVoxels = static_cast<std::size_t>(height * planeSize);
    try
    {
      cif::DeviceBuffer samples(boxVoxels * sizeof(TSample));
      cif::DeviceBuffer out(outVoxels * sizeof(TOut));
      PackBox(input, g, chunk.sampleBoxStart, chunk.sampleBoxSize, box);
      samples.CopyFromHost(box.data(), boxVoxels * sizeof(TSample));
      ResampleCUDA(
        static_cast<const TSample *>(samples.GetPointer()), static_cast<TOut *>(out.GetPointer()), chunk, parameters);
      out.CopyToHost(output + first * planeSize, outVoxels * sizeof(TOut));
    }
    catch (const CudaOutOfMemory &)
    {
      if (height == 1)
      {
        throw; // not even one output plane (with its part of the input) fits
      }
      height = (height + 1) / 2;
      continue;
    }
    first += height;
    ++chunks;
  }
  return chunks;
}

#define CIF_INSTANTIATE_RESAMPLE_CHUNKS(TSample, TOut)                                                                 \
  template int ResampleCUDAInChunks<TSample, TOut>(                                                                    \
    const TSample *, TOut *, const ResampleGeometry &, const ResampleParameters &);
CIF_RESAMPLE_PAIRS(CIF_INSTANTIATE_RESAMPLE_CHUNKS)

} // namespace cif
