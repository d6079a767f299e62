/*=========================================================================
 *  CudaImageFilters: the bilateral filter's description (cif/Filter.h).
 *
 *  Its domain Gaussian is in physical units, so the image's spacing is one
 *  of its parameters (ParameterSpec::fromImage: every face fills it from the
 *  image unless the caller gives it); the radius, when absent, is ITK's
 *  automatic one, ceil(domain_mu domain_sigma_i / spacing_i).
 *=========================================================================*/
#include "cif/Bilateral.h"
#include "cifDispatch.h"

#include <cmath>
#include <sstream>
#include <type_traits>

namespace cif
{
namespace
{
/** The bilateral cores' pixel types (their instantiation lists, cifPixelLists.h). */
using GpuPixels = CIF_PIXEL_LIST(CIF_BILATERAL_GPU_PIXELS);
using CpuPixels = CIF_PIXEL_LIST(CIF_BILATERAL_CPU_PIXELS);

/** Largest radius per axis before the tap count is checked. */
constexpr double MaxRadius = 1 << 20;

/** The radius on three axes (0 past the dimension); the parameters have
 * passed the check. */
void
RadiusOf(const Parameters & p, int dimension, int radius[3])
{
  std::vector<std::int64_t> r;
  BilateralKernelRadius(p, dimension, r);
  for (int a = 0; a < 3; ++a)
  {
    radius[a] = a < dimension && a < static_cast<int>(r.size()) ? static_cast<int>(r[a]) : 0;
  }
}

} // namespace

BilateralParameters
BilateralParametersOf(const Parameters & p, int dimension)
{
  BilateralParameters b;
  RadiusOf(p, dimension, b.radius);
  double sigma[3] = { 1.0, 1.0, 1.0 }, spacing[3] = { 1.0, 1.0, 1.0 };
  for (int a = 0; a < dimension && a < 3; ++a)
  {
    sigma[a] = Value(p, "domain_sigma", a);
    spacing[a] = Value(p, "spacing", a);
  }
  b.domainWeights = BilateralDomainWeights(b.radius, sigma, spacing);
  b.rangeSigma = Value(p, "range_sigma");
  b.rangeCutoff = BilateralRangeCutoffInSigmas * b.rangeSigma;
  b.iterations = static_cast<int>(Value(p, "number_of_iterations"));
  return b;
}

namespace
{
ClampedNeighborhoodGeometry
GeometryOf(const Job & job)
{
  return GeometryOfJob<ClampedNeighborhoodGeometry>(job);
}

ParameterSpec
PositiveReal(const char * name, double fallback, const char * help, bool perAxis, bool positional)
{
  ParameterSpec s;
  s.name = name;
  s.kind = ParameterKind::Real;
  s.perAxis = perAxis;
  s.positional = positional;
  s.minimum = 0;
  s.exclusiveMinimum = true;
  s.defaults = { fallback };
  s.help = help;
  return s;
}
} // namespace

std::string
BilateralKernelRadius(const Parameters & p, int dimension, std::vector<std::int64_t> & radius)
{
  for (const char * name : { "domain_sigma", "range_sigma", "domain_mu", "spacing" })
  {
    const auto it = p.find(name);
    for (double v : it == p.end() ? std::vector<double>{} : it->second)
    {
      if (!(v > 0.0) || !std::isfinite(v))
      {
        std::ostringstream text;
        text << name << " must be positive and finite, not " << v;
        return text.str();
      }
    }
  }
  const auto given = p.find("radius");
  const bool automatic = given == p.end() || given->second.empty();
  radius.assign(static_cast<std::size_t>(dimension), 0);
  double taps = 1.0;
  for (int a = 0; a < dimension; ++a)
  {
    const double r = automatic ? std::ceil(Value(p, "domain_mu") * Value(p, "domain_sigma", a) / Value(p, "spacing", a))
                               : Value(p, "radius", a);
    if (!(r <= MaxRadius))
    {
      std::ostringstream text;
      text << "the automatic kernel radius on axis " << a << " (domain_mu " << Value(p, "domain_mu")
           << " x domain_sigma " << Value(p, "domain_sigma", a) << " / spacing " << Value(p, "spacing", a)
           << ") is not a usable size";
      return text.str();
    }
    radius[static_cast<std::size_t>(a)] = static_cast<std::int64_t>(r);
    taps *= 2.0 * r + 1.0;
  }
  if (taps > static_cast<double>(BilateralMaxTaps))
  {
    std::ostringstream text;
    text << "the kernel radius gives " << taps << " taps, more than the " << BilateralMaxTaps << " the filter accepts";
    return text.str();
  }
  return {};
}

FilterDescriptor
BilateralDescriptor()
{
  FilterDescriptor d;
  d.command = "bilateral";
  d.function = "bilateral_image_filter";
  d.itkClass = "itk::CudaBilateralImageFilter";
  d.itkTwin = "itk::BilateralImageFilter";
  d.brief = "edge-preserving bilateral smoothing";
  d.summary = "Bilateral smoothing: the mean of the box around each pixel weighted by ITK's normalised domain "
              "Gaussian (in physical units) and an exact range Gaussian cut at 4 range_sigma, with iterations.";
  d.details = "ITK reads the range Gaussian from a table of 100 samples: ours differs from ITK's by at most "
              "0.35 range_sigma (within 1e-4 range_sigma of ITK with 10^6 samples). GPU in float32, CPU in double. "
              "Boundary: zero-flux Neumann. A NaN neighbour is skipped; a NaN centre gives NaN.";
  ParameterSpec radius;
  radius.name = "radius";
  radius.kind = ParameterKind::OptionalInteger;
  radius.perAxis = true;
  radius.minimum = 0;
  radius.maximum = MaxRadius;
  radius.help = "half-width of the kernel (default: ITK's automatic size, ceil(domain_mu domain_sigma / spacing))";
  ParameterSpec domainSigma =
    PositiveReal("domain_sigma", 4.0, "standard deviation of the domain Gaussian, in physical units", true, true);
  ParameterSpec rangeSigma =
    PositiveReal("range_sigma", 50.0, "standard deviation of the range Gaussian, in intensity units", false, true);
  domainSigma.commandLineRequired = rangeSigma.commandLineRequired = true;
  d.parameters = {
    domainSigma,
    rangeSigma,
    PositiveReal("domain_mu", 2.5, "the automatic radius in domain sigmas", false, false),
    radius,
    IterationsParameter(),
    SpacingParameter(),
  };
  d.gpuPixels = PixelsOf(GpuPixels{});
  d.cpuPixels = PixelsOf(CpuPixels{});
  d.check = [](const Parameters & p, const Extent & image, Pixel) -> std::string
  {
    // the settings and the geometry; the domain weights are built by the
    // run, not to validate
    std::vector<std::int64_t> radius;
    const std::string         problem = BilateralKernelRadius(p, image.dimension, radius);
    return problem.empty() ? ValidateClampedNeighborhoodGeometry(GeometryOf(WholeImageJob(image, image))) : problem;
  };
  d.automaticValues = [](const std::string & name, const Parameters & p, int dimension)
  {
    std::vector<double>       values;
    std::vector<std::int64_t> radius;
    if (name == "radius" && BilateralKernelRadius(p, dimension, radius).empty())
    {
      values.assign(radius.begin(), radius.end());
    }
    return values;
  };
  // the kernel reaches its radius per iteration
  d.halo = [](const Parameters & p, int dimension)
  {
    int radius[3];
    RadiusOf(p, dimension, radius);
    const auto it = static_cast<std::int64_t>(Value(p, "number_of_iterations"));
    return std::array<std::int64_t, 3>{ radius[0] * it, radius[1] * it, radius[2] * it };
  };
  d.slabPolicy = &IteratedSlabPolicy;
  d.cudaCompiled = &BilateralCUDAIsCompiled;
  // one type in and out, or the integers into float32 (the ITK class with
  // TOutputImage = float)
  SetTypedEntries(d,
                  false,
                  CpuPixels{},
                  [](const auto * in, auto * out, const Job & job, const Parameters & p, int threads)
                  {
                    BilateralCPU(
                      in, out, GeometryOf(job), BilateralParametersOf(p, job.dimension), threads, job.progress);
                    return std::string("the module's CPU core (exact range Gaussian)");
                  });
  SetTypedEntries(d,
                  true,
                  GpuPixels{},
                  [](const auto * in, auto * out, const Job & job, const Parameters & p, int)
                  { return BilateralCUDA(in, out, GeometryOf(job), BilateralParametersOf(p, job.dimension)); });
  d.floatOutputPixels = PixelsOf(CIF_PIXEL_LIST(CIF_FLOAT_OUTPUT_PIXELS){});
  return d;
}
} // namespace cif
