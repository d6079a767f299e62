/*=========================================================================
 *  CudaImageFilters: the two anisotropic diffusion filters' descriptions
 *  (cif/Filter.h), one builder for ITK's gradient and curvature functions.
 *
 *  Parameters carry the names of ITK's Set methods (NumberOfIterations,
 *  TimeStep, ConductanceParameter, ConductanceScalingUpdateInterval,
 *  FixedAverageGradientMagnitude, UseImageSpacing); the image's spacing is
 *  filled in by every face. ITK's stability warnings are the description's
 *  `warning`.
 *=========================================================================*/
#include "cif/AnisotropicDiffusion.h"
#include "cif/CudaError.h"
#include "cifDispatch.h"

#include <cmath>

namespace cif
{
#ifndef CUDAIMAGEFILTERS_WITH_CUDA
bool
AnisotropicDiffusionCUDAIsCompiled()
{
  return false;
}
template <typename TIn, typename TOut>
std::string
AnisotropicDiffusionCUDA(const TIn *, TOut *, const ClampedNeighborhoodGeometry &, const AnisotropicDiffusionParameters &)
{
  throw CudaFailure(-1, "CudaImageFilters was built without CUDA", "AnisotropicDiffusionCUDA");
}
#  define CIF_DIFFUSION_STUB(TIn, TOut)                                                                                \
    template std::string AnisotropicDiffusionCUDA<TIn, TOut>(                                                         \
      const TIn *, TOut *, const ClampedNeighborhoodGeometry &, const AnisotropicDiffusionParameters &);
#  define CIF_DIFFUSION_STUB_TO_FLOAT(T) CIF_DIFFUSION_STUB(T, float)
CIF_DIFFUSION_STUB(float, float)
CIF_DIFFUSION_STUB(double, double)
CIF_FLOAT_OUTPUT_PIXELS(CIF_DIFFUSION_STUB_TO_FLOAT)
#endif

namespace
{
bool
Fixed(const Parameters & p)
{
  const auto it = p.find("fixed_average_gradient_magnitude");
  return it != p.end() && !it->second.empty();
}

AnisotropicDiffusionParameters
CoreParameters(DiffusionKind kind, const Parameters & p, int dimension)
{
  AnisotropicDiffusionParameters c;
  c.kind = kind;
  c.dimension = dimension;
  c.iterations = static_cast<int>(Value(p, "number_of_iterations"));
  const auto step = p.find("time_step");
  c.timeStep = step == p.end() || step->second.empty() ? AnisotropicDiffusionDefaultTimeStep(dimension)
                                                         : step->second.front();
  c.conductance = Value(p, "conductance_parameter");
  c.interval = static_cast<int>(Value(p, "conductance_scaling_update_interval"));
  c.fixedAverage = Fixed(p);
  c.fixedAverageGradientMagnitude = c.fixedAverage ? Value(p, "fixed_average_gradient_magnitude") : 1.0;
  const bool useSpacing = Value(p, "use_image_spacing") != 0.0;
  for (int a = 0; a < dimension && a < 3; ++a)
  {
    c.scale[a] = useSpacing ? 1.0 / Value(p, "spacing", a) : 1.0;
  }
  return c;
}

ClampedNeighborhoodGeometry
GeometryOf(const Job & job)
{
  return GeometryOfJob<ClampedNeighborhoodGeometry>(job);
}

ParameterSpec
Spec(const char * name, ParameterKind kind, std::vector<double> defaults, const char * help)
{
  ParameterSpec s;
  s.name = name;
  s.kind = kind;
  s.defaults = std::move(defaults);
  s.help = help;
  return s;
}

FilterDescriptor
DiffusionDescriptor(DiffusionKind kind)
{
  const bool       gradient = kind == DiffusionKind::Gradient;
  FilterDescriptor d;
  d.command = gradient ? "gradient-anisotropic-diffusion" : "curvature-anisotropic-diffusion";
  d.function = gradient ? "gradient_anisotropic_diffusion_image_filter" : "curvature_anisotropic_diffusion_image_filter";
  d.itkClass = gradient ? "itk::CudaGradientAnisotropicDiffusionImageFilter"
                        : "itk::CudaCurvatureAnisotropicDiffusionImageFilter";
  d.itkTwin = gradient ? "itk::GradientAnisotropicDiffusionImageFilter" : "itk::CurvatureAnisotropicDiffusionImageFilter";
  d.brief = gradient ? "Perona-Malik gradient anisotropic diffusion" : "modified curvature anisotropic diffusion";
  d.summary = gradient
                ? "Gradient anisotropic diffusion (Perona-Malik, ITK's GradientNDAnisotropicDiffusionFunction): "
                  "iterations of f += time_step div(exp(-|grad f|^2 / K) grad f) with K = 2 conductance^2 <|grad f|^2>."
                : "Modified curvature anisotropic diffusion (Whitaker and Xue, ITK's CurvatureNDAnisotropicDiffusion"
                  "Function): iterations of f += time_step |grad f| div(c(|grad f|) grad f / |grad f|).";
  d.details = "ITK's arithmetic: the CPU core computes as ITK does (in double, differences in the pixel type) and "
              "gives ITK's filter's output (identical on ITK's example images); the GPU computes the update in the "
              "image's precision with the average gradient magnitude in double, within 1e-5 of the range of ITK's "
              "result after 5 iterations (the curvature filter on integer-valued images: within ITK's own change "
              "when a tenth of the pixels move by one ulp, 3.2e-5 on ITK's brain slice). Boundary: zero-flux Neumann. Integer input is written as float. A NaN "
              "anywhere makes the average gradient magnitude NaN, and with it the whole image, as in ITK.";
  ParameterSpec iterations = IterationsParameter();
  iterations.minimum = 0;
  iterations.help = "how many diffusion steps (0: the input, cast to the output type)";
  ParameterSpec timeStep = Spec("time_step",
                                ParameterKind::OptionalReal,
                                {},
                                "the time step of each iteration (default: ITK's 0.5 / 2^dimension; stable up to "
                                "min(spacing) / 2^(dimension + 1))");
  ParameterSpec conductance =
    Spec("conductance_parameter", ParameterKind::Real, { 1.0 }, "the conductance: larger values smooth across stronger edges");
  ParameterSpec interval = Spec("conductance_scaling_update_interval",
                                ParameterKind::Integer,
                                { 1 },
                                "the average gradient magnitude is computed again every so many iterations");
  interval.minimum = 1;
  interval.maximum = 1 << 20;
  ParameterSpec fixed = Spec("fixed_average_gradient_magnitude",
                             ParameterKind::OptionalReal,
                             {},
                             "a fixed average gradient magnitude in place of the image's (default: the image's, "
                             "computed over the whole image; with it, pieces of the image are exact with a halo "
                             "of number_of_iterations pixels)");
  ParameterSpec useSpacing = Spec("use_image_spacing",
                                  ParameterKind::Integer,
                                  { 1 },
                                  "1: derivatives in physical units (divided by the spacing), as ITK's default; 0: "
                                  "per pixel");
  useSpacing.minimum = 0;
  useSpacing.maximum = 1;
  d.parameters = { iterations, timeStep, conductance, interval, fixed, useSpacing, SpacingParameter() };
  d.gpuPixels = { Pixel::Float32, Pixel::Float64 };
  d.cpuPixels = { Pixel::Float32, Pixel::Float64 };
  d.floatOutputPixels = PixelsOf(CIF_PIXEL_LIST(CIF_FLOAT_OUTPUT_PIXELS){});
  d.check = [kind](const Parameters & p, const Extent & image, Pixel) -> std::string
  { return ValidateAnisotropicDiffusionJob(GeometryOf(WholeImageJob(image, image)), CoreParameters(kind, p, image.dimension)); };
  d.warning = [kind](const Parameters & p, const Extent & image) -> std::string
  {
    const AnisotropicDiffusionParameters c = CoreParameters(kind, p, image.dimension);
    double                               spacing[3] = { 1.0, 1.0, 1.0 };
    for (int a = 0; a < image.dimension && a < 3 && Value(p, "use_image_spacing") != 0.0; ++a)
    {
      spacing[a] = Value(p, "spacing", a);
    }
    return AnisotropicDiffusionWarning(c, spacing);
  };
  d.automaticValues = [](const std::string & name, const Parameters &, int dimension)
  {
    return name == "time_step" ? std::vector<double>{ AnisotropicDiffusionDefaultTimeStep(dimension) }
                               : std::vector<double>{};
  };
  // each iteration reaches one pixel; exact only with a fixed average
  d.halo = [](const Parameters & p, int dimension)
  {
    const auto                   it = static_cast<std::int64_t>(Value(p, "number_of_iterations"));
    std::array<std::int64_t, 3> h{ 0, 0, 0 };
    for (int a = 0; a < dimension && a < 3; ++a)
    {
      h[static_cast<std::size_t>(a)] = it;
    }
    return h;
  };
  d.wholeImage = [](const Parameters & p) -> std::string
  {
    return Fixed(p) ? std::string()
                    : std::string("the conductance is scaled by the average gradient magnitude of the whole image");
  };
  d.slabPolicy = [](const Parameters & p, Pixel output)
  {
    SlabPolicy policy;
    policy.slabs = Fixed(p);
    policy.workBytesPerInputPixel = 2 * PixelBytes(output);
    return policy;
  };
  d.cudaCompiled = &AnisotropicDiffusionCUDAIsCompiled;
  const auto cpu = [kind](const auto * in, auto * out, const Job & job, const Parameters & p, int threads)
  {
    AnisotropicDiffusionCPU(in, out, GeometryOf(job), CoreParameters(kind, p, job.dimension), threads, job.progress);
    return std::string("the module's CPU core (ITK's arithmetic in double)");
  };
  const auto cuda = [kind](const auto * in, auto * out, const Job & job, const Parameters & p, int)
  { return AnisotropicDiffusionCUDA(in, out, GeometryOf(job), CoreParameters(kind, p, job.dimension)); };
  // float and double to themselves, the integers into float
  using Real = PixelList<float, double>;
  using Integers = CIF_PIXEL_LIST(CIF_FLOAT_OUTPUT_PIXELS);
  SetTypedEntries(d, false, Real{}, Integers{}, cpu);
  SetTypedEntries(d, true, Real{}, Integers{}, cuda);
  return d;
}
} // namespace

FilterDescriptor
GradientAnisotropicDiffusionDescriptor()
{
  return DiffusionDescriptor(DiffusionKind::Gradient);
}

FilterDescriptor
CurvatureAnisotropicDiffusionDescriptor()
{
  return DiffusionDescriptor(DiffusionKind::Curvature);
}
} // namespace cif
