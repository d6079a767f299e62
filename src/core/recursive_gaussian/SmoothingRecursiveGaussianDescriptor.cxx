/*=========================================================================
 *  CudaImageFilters: the smoothing recursive Gaussian's description
 *  (cif/Filter.h). Its sigma is in physical units, so the image's spacing
 *  is one of its parameters (filled from the image by every face). The
 *  recursion reads whole lines along every axis: the filter asks for the
 *  whole image and is not cut into slabs.
 *=========================================================================*/
#include "cif/RecursiveGaussian.h"
#include "cifDispatch.h"
#include "cifPixelLists.h"

#include <cmath>
#include <sstream>

namespace cif
{
namespace
{
using Pixels = CIF_PIXEL_LIST(CIF_CORE_PIXELS);

SmoothingRecursiveGaussianJob
JobOf(const Job & job, const Parameters & p)
{
  SmoothingRecursiveGaussianJob s;
  s.dimension = job.dimension;
  for (int a = 0; a < 3; ++a)
  {
    s.size[a] = job.inputSize[a];
    s.sigma[a] = a < job.dimension ? Value(p, "sigma", a) : 1.0;
    s.spacing[a] = a < job.dimension ? Value(p, "spacing", a) : 1.0;
  }
  s.normalizeAcrossScale = Value(p, "normalize_across_scale") != 0.0;
  return s;
}
} // namespace

FilterDescriptor
SmoothingRecursiveGaussianDescriptor()
{
  FilterDescriptor d;
  d.command = "smoothing-recursive-gaussian";
  d.function = "smoothing_recursive_gaussian_image_filter";
  d.itkClass = "itk::CudaSmoothingRecursiveGaussianImageFilter";
  d.itkTwin = "itk::SmoothingRecursiveGaussianImageFilter";
  d.brief = "Gaussian smoothing by the recursive (IIR) approximation";
  d.summary = "Gaussian smoothing with sigma in physical units per axis, by Deriche's recursive fourth-order "
              "approximation along each axis, as ITK's SmoothingRecursiveGaussianImageFilter computes it.";
  d.details = "ITK's arithmetic on both devices: the coefficients from sigma / spacing, each line filtered in double "
              "(causal and anticausal passes, the edge value continued beyond the ends), the last axis first into "
              "float (ITK's internal type, for double images too), then the other axes in place, then converted to "
              "the pixel type "
              "(integers truncated, as ITK's cast). Within 1e-6 of the range of ITK's result (the tests' "
              "tolerance). At least 4 pixels along every axis.";
  ParameterSpec sigma;
  sigma.name = "sigma";
  sigma.kind = ParameterKind::Real;
  sigma.perAxis = true;
  sigma.positional = true;
  sigma.minimum = 0;
  sigma.exclusiveMinimum = true;
  sigma.defaults = { 1.0 };
  sigma.help = "the Gaussian's standard deviation, in physical units: one for every axis, or one per axis";
  ParameterSpec normalize;
  normalize.name = "normalize_across_scale";
  normalize.kind = ParameterKind::Integer;
  normalize.minimum = 0;
  normalize.maximum = 1;
  normalize.defaults = { 0 };
  normalize.help = "ITK's NormalizeAcrossScale (1: on); it changes nothing for the zero-order smoothing";
  d.parameters = { sigma, normalize, SpacingParameter() };
  d.gpuPixels = d.cpuPixels = PixelsOf(Pixels{});
  d.check = [](const Parameters & p, const Extent & image, Pixel) -> std::string
  {
    for (int a = 0; a < image.dimension; ++a)
    {
      if (image.size[a] < 4)
      {
        std::ostringstream why;
        why << "the recursive Gaussian needs at least 4 pixels along every axis; axis " << a << " has "
            << image.size[a];
        return why.str();
      }
      if (!std::isfinite(Value(p, "sigma", a)))
      {
        return "sigma must be finite";
      }
      if (!(Value(p, "spacing", a) >= 1e-8) || !std::isfinite(Value(p, "spacing", a)))
      {
        return "the spacing must be finite and at least 1e-8";
      }
    }
    return {};
  };
  d.halo = [](const Parameters &, int) { return std::array<std::int64_t, 3>{ 0, 0, 0 }; };
  d.wholeImage = [](const Parameters &) -> std::string
  { return "the recursive Gaussian filters whole lines along every axis, so it needs the whole image"; };
  d.slabPolicy = [](const Parameters &, Pixel) { return SlabPolicy{ false, false, 0 }; };
  d.cudaCompiled = &RecursiveGaussianCUDAIsCompiled;
  d.cpu = [](Pixel pixel, const void * in, void * out, const Job & job, const Parameters & p, int threads)
  {
    return DispatchPixel(Pixels{},
                         pixel,
                         [&](auto tag)
                         {
                           using T = decltype(tag);
                           SmoothingRecursiveGaussianCPU(
                             static_cast<const T *>(in), static_cast<T *>(out), JobOf(job, p), threads);
                           return std::string("the module's CPU core (ITK's arithmetic)");
                         });
  };
  d.cuda = [](Pixel pixel, const void * in, void * out, const Job & job, const Parameters & p, int)
  {
    return DispatchPixel(Pixels{},
                         pixel,
                         [&](auto tag)
                         {
                           using T = decltype(tag);
                           SmoothingRecursiveGaussianCUDA(static_cast<const T *>(in), static_cast<T *>(out), JobOf(job, p));
                           return std::string("one thread per line, ITK's arithmetic in double");
                         });
  };
  return d;
}
} // namespace cif
