/*=========================================================================
 *  CudaImageFilters: bin shrink's description (cif/Filter.h).
 *=========================================================================*/
#include "cif/BinShrink.h"
#include "cif/CudaError.h"
#include "cifDispatch.h"

namespace cif
{
namespace
{
/** The bin shrink cores' pixel types (their instantiation list, cifPixelLists.h). */
using Pixels = CIF_PIXEL_LIST(CIF_BIN_SHRINK_PIXELS);

BinShrinkGeometry
GeometryOf(const Job & job, const Parameters & p)
{
  BinShrinkGeometry g;
  std::int64_t      factor[3];
  AxisValues(p, "shrink_factors", job.dimension, factor, 1);
  for (int a = 0; a < 3; ++a)
  {
    g.inputSize[a] = job.inputSize[a];
    g.inputOffset[a] = job.outputStart[a];
    g.outputSize[a] = job.outputSize[a];
    g.factor[a] = static_cast<int>(factor[a]);
  }
  return g;
}
} // namespace

#ifndef CUDAIMAGEFILTERS_WITH_CUDA
bool
BinShrinkCUDAIsCompiled()
{
  return false;
}
template <typename T>
void
BinShrinkCUDA(const T *, T *, const BinShrinkGeometry &)
{
  throw CudaFailure(-1, "CudaImageFilters was built without CUDA", "BinShrinkCUDA");
}
#endif

FilterDescriptor
BinShrinkDescriptor()
{
  FilterDescriptor d;
  d.command = "bin-shrink";
  d.function = "bin_shrink_image_filter";
  d.itkClass = "itk::CudaBinShrinkImageFilter";
  d.itkTwin = "itk::BinShrinkImageFilter";
  d.brief = "the average of every bin of F pixels per axis (a shrink)";
  d.summary = "Shrinks the image by an integer factor per axis, each output pixel the average of its bin.";
  d.details = "Identical to ITK's BinShrinkImageFilter (bit for bit): the bin summed in double in raster order, times "
              "the reciprocal of its size, rounded half up for integer pixels. Output size floor(n / f) per axis; "
              "spacing times f; origin at the centre of the first bin. Pixels past the last whole bin are not used.";
  ParameterSpec factors;
  factors.name = "shrink_factors";
  factors.kind = ParameterKind::Integer;
  factors.perAxis = true;
  factors.positional = true;
  factors.minimum = 1;
  factors.defaults = { 1 };
  factors.help = "the bin's size: one factor for every axis, or one per axis (x, y, z)";
  d.parameters = { factors };
  d.gpuPixels = d.cpuPixels = PixelsOf(Pixels{});
  d.grid = OutputGrid::Bin;
  d.check = [](const Parameters & p, const Extent & image, Pixel) -> std::string
  {
    for (int a = 0; a < image.dimension; ++a)
    {
      if (Value(p, "shrink_factors", a) > static_cast<double>(image.size[a]))
      {
        return "the shrink factor " + std::to_string(static_cast<long long>(Value(p, "shrink_factors", a))) +
               " is larger than the image's " + std::to_string(image.size[a]) + " pixels along axis " +
               std::to_string(a);
      }
    }
    return {};
  };
  d.halo = [](const Parameters &, int) { return std::array<std::int64_t, 3>{ 0, 0, 0 }; };
  d.slabPolicy = [](const Parameters &, Pixel) { return SlabPolicy{ false, false, 0 }; };
  d.cudaCompiled = &BinShrinkCUDAIsCompiled;
  SetSameTypeEntry(d,
                   false,
                   Pixels{},
                   [](const auto * in, auto * out, const Job & job, const Parameters & p, int threads)
                   {
                     BinShrinkCPU(in, out, GeometryOf(job, p), threads);
                     return "";
                   });
  SetSameTypeEntry(d,
                   true,
                   Pixels{},
                   [](const auto * in, auto * out, const Job & job, const Parameters & p, int)
                   {
                     BinShrinkCUDA(in, out, GeometryOf(job, p));
                     return "one thread per output pixel, double sums";
                   });
  return d;
}
} // namespace cif
