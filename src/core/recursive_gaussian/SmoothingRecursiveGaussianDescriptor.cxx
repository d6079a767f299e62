/*=========================================================================
 *  CudaImageFilters: the descriptions (cif/Filter.h) of the recursive
 *  Gaussian along one axis (orders 0 to 2), of the smoothing along every
 *  axis and of the gradient of the smoothed image. Their sigma is in
 *  physical units, so the image's spacing is one of their parameters
 *  (filled from the image by every face; the gradient's direction matrix
 *  too). The recursion reads whole lines: the filters ask for the whole
 *  image and are not cut into slabs.
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
using ToFloat = CIF_PIXEL_LIST(CIF_FLOAT_OUTPUT_PIXELS);
using GradientComponents = PixelList<float, double>;

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
/** ITK's NormalizeAcrossScale. */
ParameterSpec
NormalizeAcrossScale(const std::string & note)
{
  ParameterSpec normalize;
  normalize.name = "normalize_across_scale";
  normalize.kind = ParameterKind::Integer;
  normalize.minimum = 0;
  normalize.maximum = 1;
  normalize.defaults = { 0 };
  normalize.help = "ITK's NormalizeAcrossScale (1: on); " + note;
  return normalize;
}

/** The sigma of the filters along every axis: positive, in physical units,
 * per axis (`note` ends its help). */
ParameterSpec
PerAxisSigma(const std::string & note)
{
  ParameterSpec sigma;
  sigma.name = "sigma";
  sigma.kind = ParameterKind::Real;
  sigma.perAxis = true;
  sigma.positional = true;
  sigma.minimum = 0;
  sigma.exclusiveMinimum = true;
  sigma.defaults = { 1.0 };
  sigma.help = "the Gaussian's standard deviation, in physical units: one for every axis, or one per axis" + note;
  return sigma;
}

/** The spacing's check (finite, at least 1e-8: ITK's SetUp). */
std::string
SpacingProblem(const Parameters & p, int axis)
{
  const double s = Value(p, "spacing", axis);
  return (s >= 1e-8 && std::isfinite(s)) ? std::string() : std::string("the spacing must be finite and at least 1e-8");
}

RecursiveGaussianAxisJob
AxisJobOf(const Job & job, const Parameters & p)
{
  RecursiveGaussianAxisJob a;
  for (int i = 0; i < 3; ++i)
  {
    a.size[i] = job.inputSize[i];
  }
  a.axis = static_cast<int>(Value(p, "direction"));
  a.coefficients = RecursiveGaussianSetUp(
    Value(p, "sigma"), Value(p, "spacing", a.axis), ChoiceIndex(p, "order"), Value(p, "normalize_across_scale") != 0.0);
  return a;
}
/** The recursive Gaussian's check of every axis: at least 4 pixels, a
 * finite sigma, a valid spacing. */
std::string
EveryAxisProblem(const Parameters & p, const Extent & image)
{
  for (int a = 0; a < image.dimension; ++a)
  {
    if (image.size[a] < 4)
    {
      std::ostringstream why;
      why << "the recursive Gaussian needs at least 4 pixels along every axis; axis " << a << " has " << image.size[a];
      return why.str();
    }
    if (!std::isfinite(Value(p, "sigma", a)))
    {
      return "sigma must be finite";
    }
    const std::string spacing = SpacingProblem(p, a);
    if (!spacing.empty())
    {
      return spacing;
    }
  }
  return {};
}

GradientRecursiveGaussianJob
GradientJobOf(const Job & job, const Parameters & p)
{
  GradientRecursiveGaussianJob g;
  g.dimension = job.dimension;
  const std::vector<double> & direction = p.at("direction");
  for (int a = 0; a < 3; ++a)
  {
    g.size[a] = job.inputSize[a];
    g.sigma[a] = a < job.dimension ? Value(p, "sigma", a) : 1.0;
    g.spacing[a] = a < job.dimension ? Value(p, "spacing", a) : 1.0;
    for (int b = 0; b < 3; ++b)
    {
      g.direction[a][b] = a < job.dimension && b < job.dimension
                            ? direction.at(static_cast<std::size_t>(a * job.dimension + b))
                            : (a == b ? 1.0 : 0.0);
    }
  }
  g.useImageDirection = Value(p, "use_image_direction") != 0.0;
  g.normalizeAcrossScale = Value(p, "normalize_across_scale") != 0.0;
  return g;
}
/** What the three recursive descriptions share: the recursion reads whole
 * lines along `axes`, so no halo bounds a piece and nothing is cut. */
void
SetWholeLines(FilterDescriptor & d, const std::string & axes)
{
  d.halo = [](const Parameters &, int) { return std::array<std::int64_t, 3>{ 0, 0, 0 }; };
  const std::string why = "the recursive Gaussian filters whole lines along " + axes + ", so it needs the whole image";
  d.wholeImage = [why](const Parameters &) { return why; };
  d.slabPolicy = [](const Parameters &, Pixel) { return SlabPolicy{ false, false, 0 }; };
  d.cudaCompiled = &RecursiveGaussianCUDAIsCompiled;
}

/** The gradient's entry on the CPU (threads) or the current CUDA stream:
 * the five input types into float or double components (Job::outputPixel). */
template <bool TCuda>
Entry
GradientEntry()
{
  return [](Pixel pixel, const void * in, void * out, const Job & job, const Parameters & p, int threads)
  {
    return DispatchPixel(Pixels{},
                         GradientComponents{},
                         pixel,
                         job.outputPixel,
                         [&](auto inTag, auto outTag)
                         {
                           using T = decltype(inTag);
                           using O = decltype(outTag);
                           const auto * input = static_cast<const T *>(in);
                           auto *       output = static_cast<O *>(out);
                           if constexpr (TCuda)
                           {
                             (void)threads;
                             GradientRecursiveGaussianCUDA(input, output, GradientJobOf(job, p));
                             return EntryResult("one thread per line, ITK's arithmetic in double");
                           }
                           else
                           {
                             GradientRecursiveGaussianCPU(input, output, GradientJobOf(job, p), threads);
                             return EntryResult("the module's CPU core (ITK's arithmetic)");
                           }
                         });
  };
}
} // namespace

FilterDescriptor
RecursiveGaussianDescriptor()
{
  FilterDescriptor d;
  d.command = "recursive-gaussian";
  d.function = "recursive_gaussian_image_filter";
  d.itkClass = "itk::CudaRecursiveGaussianImageFilter";
  d.itkTwin = "itk::RecursiveGaussianImageFilter";
  d.brief = "the recursive Gaussian or its first or second derivative along one axis";
  d.summary = "The Gaussian (order zero) or its first or second derivative along one axis, by Deriche's recursive "
              "fourth-order approximation, as ITK's RecursiveGaussianImageFilter computes it.";
  d.details = "ITK's arithmetic on both devices: the coefficients from sigma / spacing of the axis (a negative "
              "spacing negates the first derivative), each line filtered in double (causal and anticausal passes, "
              "the edge value continued beyond the ends), converted to the output pixel (integers truncated, as "
              "ITK's cast). Within 1e-6 of the range of ITK's result (the tests' tolerance). At least 4 pixels "
              "along the axis.";
  ParameterSpec sigma;
  sigma.name = "sigma";
  sigma.kind = ParameterKind::Real;
  sigma.positional = true;
  sigma.minimum = 0;
  sigma.exclusiveMinimum = true;
  sigma.defaults = { 1.0 };
  sigma.help = "the Gaussian's standard deviation along the axis, in physical units";
  ParameterSpec direction;
  direction.name = "direction";
  direction.kind = ParameterKind::Integer;
  direction.minimum = 0;
  direction.maximum = 2;
  direction.defaults = { 0 };
  direction.help = "the axis filtered (0: x, 1: y, 2: z)";
  ParameterSpec order;
  order.name = "order";
  order.kind = ParameterKind::Choice;
  order.choices = { "zero", "first", "second" };
  order.minimum = 0;
  order.maximum = 2;
  order.defaults = { 0 };
  order.help = "the derivative's order (ITK's ZeroOrder, FirstOrder, SecondOrder)";
  d.parameters = { sigma, direction, order, NormalizeAcrossScale("sigma^order times the derivative"),
                   SpacingParameter() };
  d.gpuPixels = d.cpuPixels = PixelsOf(Pixels{});
  d.check = [](const Parameters & p, const Extent & image, Pixel) -> std::string
  {
    const int axis = static_cast<int>(Value(p, "direction"));
    if (axis >= image.dimension)
    {
      return "the direction " + std::to_string(axis) + " is not an axis of a " + std::to_string(image.dimension) +
             "-dimensional image";
    }
    if (image.size[axis] < 4)
    {
      return "the recursive Gaussian needs at least 4 pixels along its direction; axis " + std::to_string(axis) +
             " has " + std::to_string(image.size[axis]);
    }
    if (!std::isfinite(Value(p, "sigma")))
    {
      return "sigma must be finite";
    }
    return SpacingProblem(p, axis);
  };
  SetWholeLines(d, "its direction");
  SetTypedEntries(d,
                  false,
                  Pixels{},
                  ToFloat{},
                  [](const auto * in, auto * out, const Job & job, const Parameters & p, int threads)
                  {
                    RecursiveGaussianAxisCPU(in, out, AxisJobOf(job, p), threads);
                    return "the module's CPU core (ITK's arithmetic)";
                  });
  SetTypedEntries(d,
                  true,
                  Pixels{},
                  ToFloat{},
                  [](const auto * in, auto * out, const Job & job, const Parameters & p, int)
                  {
                    RecursiveGaussianAxisCUDA(in, out, AxisJobOf(job, p));
                    return "one thread per line, ITK's arithmetic in double";
                  });
  d.floatOutputPixels = PixelsOf(ToFloat{});
  return d;
}

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
  d.parameters = { PerAxisSigma(""),
                   NormalizeAcrossScale("it changes nothing for the zero-order smoothing"),
                   SpacingParameter() };
  d.gpuPixels = d.cpuPixels = PixelsOf(Pixels{});
  d.check = [](const Parameters & p, const Extent & image, Pixel) { return EveryAxisProblem(p, image); };
  SetWholeLines(d, "every axis");
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

FilterDescriptor
GradientRecursiveGaussianDescriptor()
{
  FilterDescriptor d;
  d.command = "gradient-recursive-gaussian";
  d.function = "gradient_recursive_gaussian_image_filter";
  d.itkClass = "itk::CudaGradientRecursiveGaussianImageFilter";
  d.itkTwin = "itk::GradientRecursiveGaussianImageFilter";
  d.brief = "the gradient of the image smoothed by the recursive Gaussian";
  d.summary = "The gradient of the image smoothed by a Gaussian with sigma in physical units, by Deriche's recursive "
              "fourth-order approximation (the first derivative along each axis, the smoothing along the others), "
              "as ITK's GradientRecursiveGaussianImageFilter computes it: one vector of D components per pixel.";
  d.details = "ITK's arithmetic on both devices: for each axis the first derivative along it into float (ITK's "
              "internal type), then the smoothing along the other axes in increasing order, each line in double; "
              "the component divided by the spacing of its axis and stored as float, then (use_image_direction, "
              "ITK's default) each vector turned by the image's direction matrix in double. Within 1e-6 of the "
              "largest component of ITK's result (the tests' tolerance). At least 4 pixels along every axis.";
  ParameterSpec useDirection;
  useDirection.name = "use_image_direction";
  useDirection.kind = ParameterKind::Integer;
  useDirection.minimum = 0;
  useDirection.maximum = 1;
  useDirection.defaults = { 1 };
  useDirection.help = "ITK's UseImageDirection (1: on): the gradient turned into physical space by the direction";
  ParameterSpec direction;
  direction.name = "direction";
  direction.kind = ParameterKind::Real;
  direction.matrix = true;
  direction.fromImage = true;
  direction.help = "the image's direction matrix, D x D values row by row";
  d.parameters = { PerAxisSigma(" (ITK's SetSigma, SetSigmaArray)"),
                   NormalizeAcrossScale("sigma times each derivative"),
                   useDirection,
                   SpacingParameter(),
                   direction };
  d.gpuPixels = d.cpuPixels = PixelsOf(Pixels{});
  d.outputPixels = PixelsOf(GradientComponents{});
  // ITK Python's wrapped output: float vectors, double for double images
  d.defaultOutputPixel = [](Pixel input) { return input == Pixel::Float64 ? Pixel::Float64 : Pixel::Float32; };
  d.vectorOutput = true;
  // (the core's ValidateGradientRecursiveGaussianJob asks nothing more of a checked call)
  d.check = [](const Parameters & p, const Extent & image, Pixel) { return EveryAxisProblem(p, image); };
  SetWholeLines(d, "every axis");
  d.cpu = GradientEntry<false>();
  d.cuda = GradientEntry<true>();
  return d;
}
} // namespace cif
