/*=========================================================================
 *  CudaImageFilters: the median's description (cif/Filter.h).
 *=========================================================================*/
#include "cif/Median.h"
#include "cifDispatch.h"

namespace cif
{
namespace
{
/** The median cores' pixel types (their instantiation list, cifPixelLists.h). */
using Pixels = CIF_PIXEL_LIST(CIF_MEDIAN_PIXELS);

MedianGeometry
GeometryOf(const Job & job, const Parameters & parameters)
{
  auto g = GeometryOfJob<MedianGeometry>(job);
  AxisValues(parameters, "radius", job.dimension, g.radius, 0);
  return g;
}
} // namespace

FilterDescriptor
MedianDescriptor()
{
  FilterDescriptor d;
  d.command = "median";
  d.function = "median_image_filter";
  d.itkClass = "itk::CudaMedianImageFilter";
  d.itkTwin = "itk::MedianImageFilter";
  d.brief = "the median of the box around every pixel";
  d.summary = "The median of the (2r+1)^D box around each pixel.";
  d.details = "Identical to ITK's MedianImageFilter for uint8, int16, uint16 and NaN-free float32 images, in 1 to 3 "
              "dimensions, on the GPU and the CPU. Boundary: ITK's zero-flux Neumann (indices clamped to the "
              "image). NaN: the median is NaN where more than half of the window is NaN.";
  ParameterSpec radius;
  radius.name = "radius";
  radius.kind = ParameterKind::Integer;
  radius.perAxis = true;
  radius.positional = true;
  radius.minimum = 0;
  radius.defaults = { 1 };
  radius.commandLineRequired = true;
  radius.help = "half-width of the window: one value for every axis, or one per axis (x, y, z)";
  ParameterSpec kernel;
  kernel.name = "kernel";
  kernel.kind = ParameterKind::Choice;
  kernel.choices = { "auto", "selection", "radix_tile", "radix_global", "sliding_histogram" };
  kernel.minimum = 0;
  kernel.maximum = static_cast<double>(kernel.choices.size() - 1);
  kernel.defaults = { 0 };
  kernel.help = "the GPU algorithm: auto (the cheapest that fits), selection, radix_tile, radix_global or "
                "sliding_histogram";
  d.parameters = { radius, kernel };
  d.gpuPixels = d.cpuPixels = PixelsOf(Pixels{});
  d.check = [](const Parameters & p, const Extent & image, Pixel)
  { return ValidateMedianJob(GeometryOf(WholeImageJob(image, image), p)); };
  d.halo = [](const Parameters & p, int dimension)
  {
    std::array<std::int64_t, 3> halo{ 0, 0, 0 };
    AxisValues(p, "radius", dimension, halo.data(), 0);
    return halo;
  };
  d.cudaCompiled = &MedianCUDAIsCompiled;
  d.cpu = [](Pixel pixel, const void * in, void * out, const Job & job, const Parameters & p, int threads)
  {
    return DispatchPixel(
      Pixels{},
      pixel,
      [&](auto tag)
      {
        using T = decltype(tag);
        MedianCPU(static_cast<const T *>(in), static_cast<T *>(out), GeometryOf(job, p), threads, job.progress);
        return std::string();
      });
  };
  d.cuda = [](Pixel pixel, const void * in, void * out, const Job & job, const Parameters & p, int)
  {
    const auto kernel = static_cast<MedianKernel>(ChoiceIndex(p, "kernel"));
    return DispatchPixel(Pixels{},
                         pixel,
                         [&](auto tag)
                         {
                           using T = decltype(tag);
                           const MedianPlan plan =
                             MedianCUDA(static_cast<const T *>(in), static_cast<T *>(out), GeometryOf(job, p), kernel);
                           // the kernel the plan took, as the index of the "kernel" choice
                           return EntryResult(plan.description, static_cast<int>(plan.kernel));
                         });
  };
  return d;
}
} // namespace cif
