/*=========================================================================
 *  CudaImageFilters: the descriptions (cif/Filter.h) of the recursive
 *  Gaussian along one axis (orders 0 to 2) and of the smoothing along
 *  every axis. Their sigma is in physical units, so the image's spacing is
 *  one of their parameters (filled from the image by every face). The
 *  recursion reads whole lines: the filters ask for the whole image and
 *  are not cut into slabs.
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
  d.halo = [](const Parameters &, int) { return std::array<std::int64_t, 3>{ 0, 0, 0 }; };
  d.wholeImage = [](const Parameters &) -> std::string
  { return "the recursive Gaussian filters whole lines along its direction, so it needs the whole image"; };
  d.slabPolicy = [](const Parameters &, Pixel) { return SlabPolicy{ false, false, 0 }; };
  d.cudaCompiled = &RecursiveGaussianCUDAIsCompiled;
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
  ParameterSpec sigma;
  sigma.name = "sigma";
  sigma.kind = ParameterKind::Real;
  sigma.perAxis = true;
  sigma.positional = true;
  sigma.minimum = 0;
  sigma.exclusiveMinimum = true;
  sigma.defaults = { 1.0 };
  sigma.help = "the Gaussian's standard deviation, in physical units: one for every axis, or one per axis";
  d.parameters = { sigma, NormalizeAcrossScale("it changes nothing for the zero-order smoothing"), SpacingParameter() };
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
      const std::string spacing = SpacingProblem(p, a);
      if (!spacing.empty())
      {
        return spacing;
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
