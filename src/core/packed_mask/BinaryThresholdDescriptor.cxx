/*=========================================================================
 *  CudaImageFilters: the binary threshold's description (cif/Filter.h).
 *
 *  itk::BinaryThresholdImageFilter's rule, with its parameters in ITK's
 *  types: the thresholds are values of the input's pixel type (compared in
 *  it), the labels values of the output's. A face that takes numbers
 *  (Python) has them checked here: an integer type refuses a value it
 *  cannot hold; float takes every number, rounded as C++ converts a double
 *  (beyond the float range: the infinity); NaN is a float value, and as in
 *  ITK no pixel lies inside a NaN bound.
 *=========================================================================*/
#include "cif/PackedMask.h"
#include "cifDispatch.h"

#include <cmath>
#include <limits>
#include <sstream>

namespace cif
{
namespace
{
/** The threshold cores' input and output pixel types (their instantiation list, cifPixelLists.h). */
using Pixels = CIF_PIXEL_LIST(CIF_MASK_PIXELS);

std::string
Text(double v)
{
  std::ostringstream text;
  text << v;
  return text.str();
}

/** ITK's defaults: the thresholds span the input type
 * (NumericTraits<T>::NonpositiveMin(), max()), inside is the output
 * type's max(). */
template <typename T>
T
ValueOr(const Parameters & p, const std::string & name, T absent)
{
  const auto it = p.find(name);
  return it == p.end() || it->second.empty() ? absent : AsValueOf<T>(it->second[0]);
}
template <typename T>
T
LowestOf()
{
  return std::is_integral<T>::value ? std::numeric_limits<T>::lowest() : -std::numeric_limits<T>::max();
}

template <typename TIn>
std::string
CheckThresholds(const Parameters & p)
{
  for (const char * name : { "lower_threshold", "upper_threshold" })
  {
    const auto it = p.find(name);
    if (it != p.end() && !it->second.empty() && !IsValueOf<TIn>(it->second[0]))
    {
      return std::string(name) + " = " + Text(it->second[0]) + " is not a value of the image's pixel type";
    }
  }
  const TIn lower = ValueOr<TIn>(p, "lower_threshold", LowestOf<TIn>());
  const TIn upper = ValueOr<TIn>(p, "upper_threshold", std::numeric_limits<TIn>::max());
  if (lower > upper)
  {
    return "Lower threshold cannot be greater than upper threshold (lower_threshold " + Text(lower) +
           " > upper_threshold " + Text(upper) + ")";
  }
  return {};
}

template <typename TOut>
std::string
CheckLabels(const Parameters & p)
{
  for (const char * name : { "inside_value", "outside_value" })
  {
    const auto it = p.find(name);
    if (it != p.end() && !it->second.empty() && !IsValueOf<TOut>(it->second[0]))
    {
      return std::string(name) + " = " + Text(it->second[0]) + " is not a value of the output's pixel type";
    }
  }
  return {};
}

/** The job's output region inside its input buffer. */
ElementwiseGeometry
GeometryOf(const Job & job, std::int64_t & offset)
{
  ElementwiseGeometry g;
  for (int a = 0; a < 3; ++a)
  {
    g.size[a] = job.outputSize[a];
  }
  g.inputRowPitch = job.inputSize[0];
  g.inputSlicePitch = job.inputSize[0] * job.inputSize[1];
  offset = job.outputStart[0] + job.outputStart[1] * g.inputRowPitch + job.outputStart[2] * g.inputSlicePitch;
  return g;
}

template <bool Cuda>
EntryResult
Run(Pixel pixel, const void * in, void * out, const Job & job, const Parameters & p, int threads)
{
  return DispatchPixel(Pixels{},
                       Pixels{},
                       pixel,
                       job.outputPixel,
                      [&](auto inTag, auto outTag)
                      {
                        using TIn = decltype(inTag);
                        using TOut = decltype(outTag);
                        std::int64_t              offset = 0;
                        const ElementwiseGeometry g = GeometryOf(job, offset);
                        const TIn                 lower = ValueOr<TIn>(p, "lower_threshold", LowestOf<TIn>());
                        const TIn   upper = ValueOr<TIn>(p, "upper_threshold", std::numeric_limits<TIn>::max());
                        const TOut  inside = ValueOr<TOut>(p, "inside_value", std::numeric_limits<TOut>::max());
                        const TOut  outside = ValueOr<TOut>(p, "outside_value", TOut{});
                        const TIn * x = static_cast<const TIn *>(in) + offset;
                        if constexpr (Cuda)
                        {
                          ThresholdCUDA(x, static_cast<TOut *>(out), g, lower, upper, inside, outside);
                        }
                        else
                        {
                          ThresholdCPU(x, static_cast<TOut *>(out), g, lower, upper, inside, outside, threads);
                        }
                        return EntryResult();
                      });
}

ParameterSpec
ThresholdParameter(const char * name, ParameterKind kind, bool positional, const char * option, const char * help)
{
  ParameterSpec spec;
  spec.name = name;
  // the command line's spelling from before the description ("--lower")
  spec.optionAliases = { option };
  // a tool's user says where the thresholds lie (ITK's defaults span the type)
  spec.commandLineRequired = positional;
  spec.kind = kind;
  spec.positional = positional;
  spec.nanAllowed = true;
  // every float is a value, the infinities too (an integer type's range is the check's)
  spec.minimum = -std::numeric_limits<double>::infinity();
  spec.maximum = std::numeric_limits<double>::infinity();
  spec.help = help;
  return spec;
}
} // namespace

FilterDescriptor
BinaryThresholdDescriptor()
{
  FilterDescriptor d;
  d.command = "threshold";
  d.function = "binary_threshold_image_filter";
  d.itkClass = "itk::CudaBinaryThresholdImageFilter";
  d.itkTwin = "itk::BinaryThresholdImageFilter";
  d.brief = "a label image (or --packed: a packed mask) of lower <= value <= upper";
  d.summary = "Labels the image: inside_value where lower_threshold <= value <= upper_threshold, outside_value "
              "elsewhere.";
  d.details = "Identical to ITK's BinaryThresholdImageFilter: both thresholds inclusive and compared in the input's "
              "pixel type (so NaN pixels are outside, and a NaN threshold leaves every pixel outside). Defaults as "
              "ITK: the thresholds span the input type (for float -FLT_MAX and FLT_MAX, so the infinities are "
              "outside), inside_value is the output type's largest value (255 for uint8), outside_value 0. A "
              "threshold an integer input cannot hold is refused, as is a lower threshold above the upper one.";
  d.parameters = {
    ThresholdParameter("lower_threshold",
                       ParameterKind::OptionalReal,
                       true,
                       "lower",
                       "the lowest value inside, in the input's pixel type (default: the type's lowest)"),
    ThresholdParameter("upper_threshold",
                       ParameterKind::OptionalReal,
                       true,
                       "upper",
                       "the highest value inside, in the input's pixel type (default: the type's largest)"),
    ThresholdParameter("inside_value",
                       ParameterKind::OptionalReal,
                       false,
                       "inside",
                       "the label of pixels inside, in the output's pixel type (default: the type's largest)"),
    ThresholdParameter("outside_value",
                       ParameterKind::Real,
                       false,
                       "outside",
                       "the label of pixels outside, in the output's pixel type"),
  };
  d.parameters.back().defaults = { 0 };
  d.gpuPixels = d.cpuPixels = d.outputPixels = PixelsOf(Pixels{});
  d.check = [](const Parameters & p, const Extent &, Pixel pixel) -> std::string
  { return DispatchPixel(Pixels{}, pixel, [&](auto tag) { return CheckThresholds<decltype(tag)>(p); }); };
  d.outputCheck = [](const Parameters & p, Pixel, Pixel output) -> std::string
  { return DispatchPixel(Pixels{}, output, [&](auto tag) { return CheckLabels<decltype(tag)>(p); }); };
  d.halo = [](const Parameters &, int) { return std::array<std::int64_t, 3>{ 0, 0, 0 }; };
  d.cudaCompiled = &PackedMaskCUDAIsCompiled;
  d.cpu = &Run<false>;
  d.cuda = &Run<true>;
  return d;
}
} // namespace cif
