/*=========================================================================
 *  CudaImageFilters: the B-spline prefilter's description (cif/Filter.h).
 *
 *  itk::BSplineDecompositionImageFilter: the coefficients of the image's
 *  interpolating B-spline of order 0 to 5, with ITK's mirror boundary, as
 *  float32 or float64 (Job::outputPixel). The GPU runs order 3; host images
 *  too large for the device run in the prefilter's own exact slabs
 *  (cif::RunPrefilterJobCUDA: a halo of K planes for the FIR, two passes for
 *  the recursion).
 *=========================================================================*/
#include "cif/BSplinePrefilter.h"
#include "cifDispatch.h"

#include <algorithm>
#include <cmath>

namespace cif
{
namespace
{
/** The prefilter's GPU inputs, which the faces take (its instantiation list, cifPixelLists.h; the CPU core
 * also takes ITK's signed char, int and unsigned int, for the ITK class's TwinGenerateData). */
using GpuPixels = CIF_PIXEL_LIST(CIF_PREFILTER_GPU_PIXELS);
using OutputPixels = PixelList<float, double>;

/** The FIR half-width of checked parameters: fir_half_width, or the
 * smallest K that meets fir_tolerance, or 13. */
int
HalfWidthOf(const Parameters & p)
{
  const auto k = p.find("fir_half_width");
  if (k != p.end() && !k->second.empty())
  {
    return static_cast<int>(k->second[0]);
  }
  const auto t = p.find("fir_tolerance");
  if (t != p.end() && !t->second.empty())
  {
    return CubicFIRHalfWidthForTolerance(t->second[0]);
  }
  return 13;
}

} // namespace

PrefilterParameters
PrefilterParametersOf(const Parameters & p)
{
  PrefilterParameters core;
  core.method = ChoiceIndex(p, "method") == 1 ? PrefilterMethod::FIR : PrefilterMethod::Recursive;
  core.poles = BSplinePoles(static_cast<int>(Value(p, "spline_order")));
  core.tolerance = 1e-10; // ITK's fixed tolerance of the causal initialisation
  core.firHalfWidth = HalfWidthOf(p);
  return core;
}

// The input buffer stands for the whole image: the recursion takes the
// whole image, and the FIR's input covers the output grown by K (ITK's
// requested region), so a buffer edge inside the image is never within K of
// an output pixel and its mirror is never read.
PrefilterGeometry
PrefilterGeometryOf(const Job & job)
{
  PrefilterGeometry g;
  for (int a = 0; a < 3; ++a)
  {
    g.imageSize[a] = job.inputSize[a];
    g.inputStart[a] = 0;
    g.inputSize[a] = job.inputSize[a];
    g.outputStart[a] = job.outputStart[a];
    g.outputSize[a] = job.outputSize[a];
  }
  return g;
}

namespace
{
/** f(TIn{}, TOut{}) for the job's pixel types (the output float or double). */
template <typename F>
decltype(auto)
DispatchPair(Pixel in, const Job & job, F && f)
{
  return DispatchPixel(GpuPixels{}, OutputPixels{}, in, job.outputPixel, std::forward<F>(f));
}

template <bool Cuda>
EntryResult
Run(Pixel pixel, const void * in, void * out, const Job & job, const Parameters & p, int threads)
{
  const PrefilterGeometry   g = PrefilterGeometryOf(job);
  const PrefilterParameters core = PrefilterParametersOf(p);
  const std::string         problem = ValidatePrefilterJob(g, core);
  if (!problem.empty())
  {
    throw std::invalid_argument("bspline_decomposition_image_filter: " + problem);
  }
  return DispatchPair(
    pixel,
    job,
    [&](auto inTag, auto outTag)
    {
      using TIn = decltype(inTag);
      using TOut = decltype(outTag);
      if constexpr (Cuda)
      {
        PrefilterCUDA(static_cast<const TIn *>(in), static_cast<TOut *>(out), g, core, job.progress);
      }
      else
      {
        PrefilterCPU(static_cast<const TIn *>(in), static_cast<TOut *>(out), g, core, threads, job.progress);
      }
      return EntryResult(core.method == PrefilterMethod::FIR ? "FIR, K = " + std::to_string(core.firHalfWidth)
                                                             : std::string("recursive"));
    });
}
} // namespace

FilterDescriptor
BSplinePrefilterDescriptor()
{
  FilterDescriptor d;
  d.command = "bspline-prefilter";
  d.function = "bspline_decomposition_image_filter";
  d.itkClass = "itk::CudaBSplineDecompositionImageFilter";
  d.itkTwin = "itk::BSplineDecompositionImageFilter";
  d.brief = "B-spline coefficients of the image (the interpolation prefilter)";
  d.summary = "The coefficients of the image's interpolating B-spline of spline_order (0 to 5), with ITK's mirror "
              "boundary.";
  d.details =
    "method 'recursive': Unser's exact causal/anticausal recursion over whole lines, equal to ITK within 1e-6 "
    "of the range on the GPU (float arithmetic between axis passes) and identical on the CPU; 'fir' (order "
    "3): a direct convolution with 2K + 1 taps, K = fir_half_width, or the smallest K whose truncation bound "
    "is at most fir_tolerance (default K = 13, float32-level agreement). The output is float32 (float64 for "
    "float64 images) unless output_dtype says otherwise. The GPU runs order 3; other orders run on the CPU.";
  ParameterSpec order;
  order.name = "spline_order";
  order.kind = ParameterKind::Integer;
  order.positional = true;
  order.minimum = 0;
  order.maximum = 5;
  order.defaults = { 3 };
  order.help = "the B-spline's order, 0 to 5";
  order.optionAliases = { "order" };
  ParameterSpec method;
  method.name = "method";
  method.kind = ParameterKind::Choice;
  method.choices = { "recursive", "fir" };
  method.defaults = { 0 };
  method.help = "'recursive' (exact, whole lines; also 'iir') or 'fir' (cubic only: local, 2K + 1 taps)";
  method.choiceAliases = { { "iir", "recursive" } };
  ParameterSpec halfWidth;
  halfWidth.name = "fir_half_width";
  halfWidth.kind = ParameterKind::OptionalInteger;
  halfWidth.minimum = 0;
  halfWidth.maximum = MaxFIRHalfWidth;
  halfWidth.help = "the FIR's half-width K (default 13, or from fir_tolerance)";
  ParameterSpec tolerance;
  tolerance.name = "fir_tolerance";
  tolerance.kind = ParameterKind::OptionalReal;
  tolerance.minimum = 0;
  tolerance.maximum = 1;
  tolerance.exclusiveMinimum = true;
  tolerance.help = "the FIR's truncation bound relative to the input's largest magnitude, in (0, 1): K is the "
                   "smallest that meets it";
  d.parameters = { order, method, halfWidth, tolerance };
  d.cpuPixels = d.gpuPixels = PixelsOf(GpuPixels{});
  d.outputPixels = PixelsOf(OutputPixels{});
  d.defaultOutputPixel = [](Pixel input) { return input == Pixel::Float64 ? Pixel::Float64 : Pixel::Float32; };
  d.check = [](const Parameters & p, const Extent &, Pixel) -> std::string
  {
    const bool fir = ChoiceIndex(p, "method") == 1;
    const bool halfWidth = !p.at("fir_half_width").empty();
    const bool tolerance = !p.at("fir_tolerance").empty();
    if (halfWidth && tolerance)
    {
      return "give fir_half_width or fir_tolerance, not both";
    }
    if (tolerance && !(Value(p, "fir_tolerance") < 1.0))
    {
      return "fir_tolerance must lie in (0, 1)";
    }
    if (fir && Value(p, "spline_order") != 3)
    {
      return "the FIR method is defined for cubic splines only; spline order is " +
             std::to_string(static_cast<int>(Value(p, "spline_order")));
    }
    if (!fir && (halfWidth || tolerance))
    {
      return "fir_half_width and fir_tolerance are settings of method 'fir'";
    }
    return {};
  };
  d.gpuProblem = [](const Parameters & p, const Extent &) -> std::string
  {
    const int order = static_cast<int>(Value(p, "spline_order"));
    return order == 3 ? std::string() : "the GPU path handles spline order 3 only, not " + std::to_string(order);
  };
  d.halo = [](const Parameters & p, int) -> std::array<std::int64_t, 3>
  {
    // the FIR reads K planes on each side (exact). The recursion reads whole
    // lines, so no finite halo is exact: the depth where its influence,
    // |z|^depth, falls below 1e-7 (pieces agree to about that fraction of the
    // range; the faces cut the recursion only through cudaOnHost's exact passes)
    std::int64_t depth = 0;
    if (ChoiceIndex(p, "method") == 1)
    {
      depth = HalfWidthOf(p);
    }
    else
    {
      for (double z : BSplinePoles(static_cast<int>(Value(p, "spline_order"))))
      {
        depth =
          std::max<std::int64_t>(depth, static_cast<std::int64_t>(std::ceil(std::log(1e-7) / std::log(std::abs(z)))));
      }
    }
    return { depth, depth, depth };
  };
  d.wholeImage = [](const Parameters & p) -> std::string
  {
    return ChoiceIndex(p, "method") == 1 ? std::string()
                                         : "the recursive prefilter filters whole lines along every axis, so it "
                                           "needs the whole image; method 'fir' (a halo of K planes) does not";
  };
  d.cudaCompiled = &PrefilterCUDAIsCompiled;
  d.cpu = &Run<false>;
  d.cuda = &Run<true>;
  d.cudaOnHost = [](bool                                  mayCut,
                    Pixel                                 pixel,
                    const std::function<const void *()> & in,
                    const std::function<void *()> &       out,
                    const Job &                           job,
                    const Parameters &                    p,
                    const std::function<void()> &         whole) -> std::string
  {
    const PrefilterGeometry   g = PrefilterGeometryOf(job);
    const PrefilterParameters core = PrefilterParametersOf(p);
    return DispatchPair(pixel,
                        job,
                        [&](auto inTag, auto outTag)
                        {
                          using TIn = decltype(inTag);
                          using TOut = decltype(outTag);
                          return RunPrefilterJobCUDA<TIn, TOut>(
                            mayCut,
                            [&in] { return static_cast<const TIn *>(in()); },
                            [&out] { return static_cast<TOut *>(out()); },
                            g,
                            core,
                            whole,
                            job.progress);
                        });
  };
  return d;
}
} // namespace cif
