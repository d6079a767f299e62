/*=========================================================================
 *  CudaImageFilters: the discrete Gaussian's description (cif/Filter.h).
 *  Its variance is in physical units (with use_image_spacing, ITK's
 *  default), so the image's spacing is one of its parameters; its halo is
 *  the kernels' radii, so it streams and cuts into slabs.
 *=========================================================================*/
#include "cif/CudaError.h"
#include "cif/DiscreteGaussian.h"
#include "cifDiscreteGaussianPasses.h"
#include "cifDispatch.h"
#include "cifPixelLists.h"

#include <cmath>
#include <sstream>

namespace cif
{
namespace
{
using Pixels = CIF_PIXEL_LIST(CIF_CORE_PIXELS);
using ToFloat = CIF_PIXEL_LIST(CIF_FLOAT_OUTPUT_PIXELS);

/** The axes ITK filters: FilterDimensionality, at most the image's. */
int
FilteredAxes(const Parameters & p, int dimension)
{
  return std::min(dimension, static_cast<int>(Value(p, "filter_dimensionality")));
}

/** ITK's operator along `axis`: the variance in pixels squared (divided by
 * the spacing squared with use_image_spacing). */
std::vector<double>
KernelOf(const Parameters & p, int axis, bool * truncated = nullptr)
{
  double variance = Value(p, "variance", axis);
  if (Value(p, "use_image_spacing") != 0.0)
  {
    const double s = Value(p, "spacing", axis);
    variance /= s * s;
  }
  return GaussianOperatorCoefficients(variance,
                                      Value(p, "maximum_error", axis),
                                      static_cast<unsigned>(Value(p, "maximum_kernel_width")),
                                      truncated);
}

DiscreteGaussianJob
JobOf(const Job & job, const Parameters & p)
{
  DiscreteGaussianJob g;
  g.filterDimensionality = FilteredAxes(p, job.dimension);
  for (int a = 0; a < 3; ++a)
  {
    g.inputSize[a] = job.inputSize[a];
    g.outputStart[a] = job.outputStart[a];
    g.outputSize[a] = job.outputSize[a];
    if (a < g.filterDimensionality)
    {
      g.kernel[a] = KernelOf(p, a);
    }
  }
  return g;
}

ParameterSpec
Spec(const char * name, ParameterKind kind, double minimum, double maximum, double value, const char * help)
{
  ParameterSpec s;
  s.name = name;
  s.kind = kind;
  s.minimum = minimum;
  s.maximum = maximum;
  s.defaults = { value };
  s.help = help;
  return s;
}
} // namespace

#ifndef CUDAIMAGEFILTERS_WITH_CUDA
bool
DiscreteGaussianCUDAIsCompiled()
{
  return false;
}
template <typename TIn, typename TOut>
void
DiscreteGaussianCUDA(const TIn *, TOut *, const DiscreteGaussianJob &)
{
  throw CudaFailure(-1, "CudaImageFilters was built without CUDA", "DiscreteGaussianCUDA");
}
#  define CIF_INSTANTIATE(TIn, TOut) \
    template void DiscreteGaussianCUDA<TIn, TOut>(const TIn *, TOut *, const DiscreteGaussianJob &);
CIF_DISCRETE_GAUSSIAN_PAIRS(CIF_INSTANTIATE)
#  undef CIF_INSTANTIATE
#endif

FilterDescriptor
DiscreteGaussianDescriptor()
{
  FilterDescriptor d;
  d.command = "discrete-gaussian";
  d.function = "discrete_gaussian_image_filter";
  d.itkClass = "itk::CudaDiscreteGaussianImageFilter";
  d.itkTwin = "itk::DiscreteGaussianImageFilter";
  d.brief = "Gaussian smoothing by convolution with ITK's discrete Gaussian kernel";
  d.summary = "Gaussian smoothing by separable convolution with the discrete Gaussian kernel (modified Bessel "
              "functions) of a variance per axis, as ITK's DiscreteGaussianImageFilter computes it.";
  d.details = "ITK's arithmetic on both devices: the kernel of ITK's GaussianOperator (grown until its sum reaches "
              "1 - maximum_error, at most maximum_kernel_width samples on each side, normalised), the last "
              "filtered axis first, each sample's sum in double in the kernel's order, indices clamped to the "
              "image (zero-flux Neumann), every pass cast to the output's type (ITK 5.2's intermediate images are "
              "of the output's type; integers truncated, as ITK's cast). Equal to ITK's filter up to the order of identical operations (the "
              "tests: within 1e-6 of the range, integers equal).";
  ParameterSpec variance = Spec("variance",
                                ParameterKind::Real,
                                0,
                                1e308,
                                0.0,
                                "the Gaussian's variance (sigma squared), in physical units with use_image_spacing: "
                                "one for every axis, or one per axis (ITK's default 0 leaves the image as it is)");
  variance.perAxis = true;
  variance.positional = true;
  variance.commandLineRequired = true;
  ParameterSpec error = Spec("maximum_error",
                             ParameterKind::Real,
                             0,
                             1,
                             0.01,
                             "the kernel's truncation: it grows until its sum reaches 1 - maximum_error, in (0, 1)");
  error.perAxis = true;
  error.exclusiveMinimum = true;
  d.parameters = {
    variance,
    error,
    Spec("maximum_kernel_width", ParameterKind::Integer, 0, 4294967295.0, 32, "the most samples on each side of the kernel's "
         "centre (ITK warns when it truncates the kernel there)"),
    Spec("use_image_spacing", ParameterKind::Integer, 0, 1, 1, "1: the variance is in physical units (ITK's default)"),
    Spec("filter_dimensionality", ParameterKind::Integer, 0, 3, 3,
         "the number of axes filtered, from x (ITK's default: all; larger values mean all)"),
    SpacingParameter(),
  };
  d.gpuPixels = d.cpuPixels = PixelsOf(Pixels{});
  d.check = [](const Parameters & p, const Extent & image, Pixel) -> std::string
  {
    for (int a = 0; a < image.dimension; ++a)
    {
      if (!(Value(p, "maximum_error", a) < 1.0))
      {
        return "maximum_error must lie in (0, 1)";
      }
      if (!std::isfinite(Value(p, "variance", a)) || !std::isfinite(Value(p, "spacing", a)))
      {
        return "the variance and the spacing must be finite";
      }
    }
    return {};
  };
  d.warning = [](const Parameters & p, const Extent & image) -> std::string
  {
    for (int a = 0; a < FilteredAxes(p, image.dimension); ++a)
    {
      bool truncated = false;
      const auto kernel = KernelOf(p, a, &truncated);
      if (truncated)
      {
        std::ostringstream why;
        why << "Kernel size has exceeded the specified maximum width of " << Value(p, "maximum_kernel_width")
            << " and has been truncated to " << kernel.size() / 2 + 1
            << " elements.  You can raise the maximum width using the SetMaximumKernelWidth method.";
        return why.str();
      }
    }
    return {};
  };
  d.halo = [](const Parameters & p, int dimension)
  {
    std::array<std::int64_t, 3> halo{ 0, 0, 0 };
    for (int a = 0; a < FilteredAxes(p, dimension); ++a)
    {
      halo[a] = static_cast<std::int64_t>(KernelOf(p, a).size() / 2);
    }
    return halo;
  };
  // two intermediate images of the output's type
  d.slabPolicy = [](const Parameters &, Pixel out) { return SlabPolicy{ true, false, 2 * PixelBytes(out) }; };
  d.cudaCompiled = &DiscreteGaussianCUDAIsCompiled;
  SetTypedEntries(d,
                  false,
                  Pixels{},
                  ToFloat{},
                  [](const auto * in, auto * out, const Job & job, const Parameters & p, int threads)
                  {
                    DiscreteGaussianCPU(in, out, JobOf(job, p), threads);
                    return "the module's CPU core (ITK's arithmetic)";
                  });
  SetTypedEntries(d,
                  true,
                  Pixels{},
                  ToFloat{},
                  [](const auto * in, auto * out, const Job & job, const Parameters & p, int)
                  {
                    DiscreteGaussianCUDA(in, out, JobOf(job, p));
                    return "one thread per output sample and pass, ITK's arithmetic (sums in double)";
                  });
  d.floatOutputPixels = PixelsOf(ToFloat{});
  return d;
}
} // namespace cif
