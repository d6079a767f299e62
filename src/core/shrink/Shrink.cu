/*=========================================================================
 *  CudaImageFilters: shrink by subsampling on the GPU (cif/Shrink.h). One
 *  thread per output pixel, a strided gather: the output is written once
 *  and one pixel per output is read (a sector per pixel along x for
 *  factors above the sector's pixels).
 *=========================================================================*/
#include "cif/Shrink.h"
#include "cifPixelLists.h"
#include "cifCudaStream.h"
#include "cifLineGrid.h"

#include <cstdint>

namespace cif
{
namespace
{
template <typename T>
__global__ void
ShrinkKernel(const T * __restrict__ input, T * __restrict__ output, ShrinkGeometry g)
{
  std::int64_t i, line;
  if (!LineGridPixel(g.outputSize[0], g.outputSize[1] * g.outputSize[2], i, line))
  {
    return;
  }
  const std::int64_t j = line % g.outputSize[1], k = line / g.outputSize[1];
  const std::int64_t source =
    ((g.inputOffset[2] + k * g.factor[2]) * g.inputSize[1] + g.inputOffset[1] + j * g.factor[1]) * g.inputSize[0] +
    g.inputOffset[0] + i * g.factor[0];
  output[line * g.outputSize[0] + i] = input[source];
}
} // namespace

template <typename T>
void
ShrinkCUDA(const T * input, T * output, const ShrinkGeometry & g)
{
  const unsigned threads = 128;
  const dim3     grid = LineGrid(g.outputSize[0], g.outputSize[1] * g.outputSize[2], threads, "ShrinkCUDA");
  ShrinkKernel<T><<<grid, threads, 0, Stream()>>>(input, output, g);
  CIF_CUDA_CHECK_LAUNCH("ShrinkKernel");
  CIF_CUDA_SYNCHRONIZE_STREAM();
}

bool
ShrinkCUDAIsCompiled()
{
  return true;
}

#define CIF_INSTANTIATE(T) template void ShrinkCUDA<T>(const T *, T *, const ShrinkGeometry &);
CIF_CORE_PIXELS(CIF_INSTANTIATE)
#undef CIF_INSTANTIATE

} // namespace cif
