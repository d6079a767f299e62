/*=========================================================================
 *  CudaImageFilters: the rotating mask's description (cif/Filter.h).
 *=========================================================================*/
#include "cif/RotatingMask.h"
#include "cifDispatch.h"

namespace cif
{
namespace
{
/** The rotating mask cores' pixel types (their instantiation list, cifPixelLists.h). */
using Pixels = CIF_PIXEL_LIST(CIF_ROTATING_MASK_PIXELS);

ClampedNeighborhoodGeometry
GeometryOf(const Job & job)
{
  return GeometryOfJob<ClampedNeighborhoodGeometry>(job);
}

RotatingMaskParameters
ParametersOf(const Parameters & p, int dimension)
{
  RotatingMaskParameters r;
  r.dimension = dimension;
  r.iterations = static_cast<int>(Value(p, "number_of_iterations"));
  return r;
}

} // namespace

FilterDescriptor
RotatingMaskDescriptor()
{
  FilterDescriptor d;
  d.command = "rotating-mask";
  d.function = "rotating_mask_image_filter";
  d.itkClass = "itk::CudaRotatingMaskImageFilter";
  d.brief = "edge-preserving rotating-mask (Nagao) smoothing";
  d.summary = "Nagao-Matsuyama rotating-mask smoothing: each pixel takes the mean of the least dispersed of Nagao's "
              "nine sub-regions of its 5x5 window (2D) or of six 3x3x3 half-masks of its 5x5x5 window (3D).";
  d.details = "Exact integer arithmetic for 8/16-bit images (identical on the GPU and the CPU); float32 in double. NaN "
              "or Inf in a sub-region gives NaN. Boundary: zero-flux Neumann.";
  d.parameters = { IterationsParameter() };
  d.gpuPixels = d.cpuPixels = PixelsOf(Pixels{});
  d.minDimension = 2;
  d.check = [](const Parameters & p, const Extent & image, Pixel)
  { return ValidateRotatingMaskJob(GeometryOf(WholeImageJob(image, image)), ParametersOf(p, image.dimension)); };
  d.gpuProblem = [](const Parameters &, const Extent & image) -> std::string
  {
    if (image.size[1] > 65535LL * 8 || (image.dimension == 3 && image.size[2] > 65535LL * 4))
    {
      return "the output has more rows or slices than the GPU kernel's grid covers";
    }
    return {};
  };
  // the mask reaches 2 samples along every filtered axis per iteration
  d.halo = [](const Parameters & p, int dimension)
  {
    const auto reach = static_cast<std::int64_t>(2 * Value(p, "number_of_iterations"));
    return std::array<std::int64_t, 3>{ reach, reach, dimension == 3 ? reach : 0 };
  };
  d.slabPolicy = &IteratedSlabPolicy;
  d.cudaCompiled = &RotatingMaskCUDAIsCompiled;
  // one type in and out, or the integers into float32 (the ITK class with
  // TOutputImage = float)
  SetTypedEntries(d,
                  false,
                  Pixels{},
                  [](const auto * in, auto * out, const Job & job, const Parameters & p, int threads)
                  {
                    RotatingMaskCPU(in, out, GeometryOf(job), ParametersOf(p, job.dimension), threads, job.progress);
                    return std::string();
                  });
  SetTypedEntries(d,
                  true,
                  Pixels{},
                  [](const auto * in, auto * out, const Job & job, const Parameters & p, int)
                  { return RotatingMaskCUDA(in, out, GeometryOf(job), ParametersOf(p, job.dimension)); });
  d.floatOutputPixels = PixelsOf(CIF_PIXEL_LIST(CIF_FLOAT_OUTPUT_PIXELS){});
  return d;
}
} // namespace cif
