/*=========================================================================
 *  CudaImageFilters: the mask filter's description (cif/Filter.h): the
 *  first filter with a companion image (the mask).
 *
 *  itk::MaskImageFilter's rule (cif/Mask.h) for an output of the image's
 *  type, with its settings in ITK's types: the outside value is a value of
 *  the image's pixel type, the masking value one of the mask's. A face
 *  that takes numbers (Python, the tool) has them checked here: an integer
 *  type refuses a value it cannot hold; float takes every number, NaN too
 *  (cif::IsValueOf, as for the threshold's labels).
 *=========================================================================*/
#include "cif/CudaError.h"
#include "cif/Mask.h"
#include "cif/PackedMask.h"
#include "cifDispatch.h"

#include <sstream>

namespace cif
{
namespace
{
/** The cores' image and mask pixel types (their instantiation lists, cifPixelLists.h). */
using ImagePixels = CIF_PIXEL_LIST(CIF_MASK_IMAGE_PIXELS);
using MaskPixels = CIF_PIXEL_LIST(CIF_MASK_IMAGE_PIXELS);

std::string
Text(double v)
{
  std::ostringstream text;
  text << v;
  return text.str();
}

/** Why `name`'s value is not one of pixel type `pixel` (empty: it is). */
std::string
ValueProblem(const Parameters & p, const char * name, Pixel pixel, const char * whose)
{
  const double v = Value(p, name);
  const bool   fits = DispatchPixel(ImagePixels{}, pixel, [&](auto tag) { return IsValueOf<decltype(tag)>(v); });
  return fits ? std::string()
              : std::string(name) + " = " + Text(v) + " is not a value of the " + whose + "'s pixel type (" +
                  PixelName(pixel) + ")";
}

MaskGeometry
GeometryOf(const Job & job)
{
  return GeometryOfJob<MaskGeometry>(job);
}

/** One entry: the core for the image's and the mask's types, the settings
 * in them. */
template <typename TCore>
Entry
MaskImageEntry(TCore core)
{
  return [core](Pixel pixel, const void * in, void * out, const Job & job, const Parameters & p, int threads)
  {
    if (job.companion == nullptr || !job.companionPixel)
    {
      throw std::invalid_argument("mask_image_filter: the job has no mask");
    }
    DispatchPixel(ImagePixels{},
                  MaskPixels{},
                  pixel,
                  *job.companionPixel,
                  [&](auto imageTag, auto maskTag)
                  {
                    using T = decltype(imageTag);
                    using M = decltype(maskTag);
                    core(static_cast<const T *>(in),
                         static_cast<const M *>(job.companion),
                         static_cast<T *>(out),
                         GeometryOf(job),
                         AsValueOf<M>(Value(p, "masking_value")),
                         AsValueOf<T>(Value(p, "outside_value")),
                         threads);
                  });
    return EntryResult();
  };
}
} // namespace

#ifndef CUDAIMAGEFILTERS_WITH_CUDA
bool
MaskCUDAIsCompiled()
{
  return false;
}
template <typename T, typename TMask>
void
MaskCUDA(const T *, const TMask *, T *, const MaskGeometry &, TMask, T)
{
  throw CudaFailure(-1, "CudaImageFilters was built without CUDA", "MaskCUDA");
}
#endif

FilterDescriptor
MaskDescriptor()
{
  FilterDescriptor d;
  d.command = "mask";
  d.function = "mask_image_filter";
  d.itkClass = "itk::CudaMaskImageFilter";
  d.itkTwin = "itk::MaskImageFilter";
  d.brief = "keeps the image where the mask is set, the outside value elsewhere";
  d.summary = "Masks an image: each pixel is kept where the mask's pixel differs from the masking value, and is the "
              "outside value elsewhere.";
  d.details = "Identical to ITK's MaskImageFilter (bit for bit) for an output of the image's type: the mask compared "
              "in its own pixel type, so a NaN mask pixel keeps the image's pixel and a NaN masking value keeps "
              "every pixel; NaN image pixels pass through. The mask has the image's size and grid.";
  ParameterSpec outside;
  outside.name = "outside_value";
  outside.kind = ParameterKind::Real;
  outside.defaults = { 0.0 };
  outside.nanAllowed = true;
  outside.help = "the value of the masked-out pixels (a value of the image's pixel type)";
  ParameterSpec masking;
  masking.name = "masking_value";
  masking.kind = ParameterKind::Real;
  masking.defaults = { 0.0 };
  masking.nanAllowed = true;
  masking.help = "the mask's value that masks a pixel out (a value of the mask's pixel type)";
  d.parameters = { outside, masking };
  d.gpuPixels = d.cpuPixels = PixelsOf(ImagePixels{});
  d.companion.name = "mask_image";
  d.companion.operand = "MASK";
  d.companion.help = "the mask: an image of the image's size and grid";
  d.companion.pixels = PixelsOf(MaskPixels{});
  d.companion.check = [](const Parameters & p, Pixel mask) { return ValueProblem(p, "masking_value", mask, "mask"); };
  d.check = [](const Parameters & p, const Extent &, Pixel pixel)
  { return ValueProblem(p, "outside_value", pixel, "image"); };
  d.halo = [](const Parameters &, int) { return std::array<std::int64_t, 3>{ 0, 0, 0 }; };
  d.cudaCompiled = &MaskCUDAIsCompiled;
  d.cpu = MaskImageEntry([](auto in, auto mask, auto out, const MaskGeometry & g, auto maskingValue, auto outside, int threads)
                    { MaskCPU(in, mask, out, g, maskingValue, outside, threads); });
  d.cuda = MaskImageEntry([](auto in, auto mask, auto out, const MaskGeometry & g, auto maskingValue, auto outside, int)
                     { MaskCUDA(in, mask, out, g, maskingValue, outside); });
  return d;
}
} // namespace cif
