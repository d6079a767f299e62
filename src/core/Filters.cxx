/*=========================================================================
 *  CudaImageFilters: the registry of filter descriptions and what every
 *  face shares (see cif/Filter.h): the one parameter check, the output
 *  extent, and the slabs of a call on host buffers.
 *=========================================================================*/
#include "cif/Filter.h"
#include "cif/Shrink.h"
#include "cif/Slabs.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace cif
{
// The descriptions, one function per filter (src/core/<filter>/<Filter>Descriptor.cxx).
FilterDescriptor
MedianDescriptor();
FilterDescriptor
MeanDescriptor();
FilterDescriptor
GrayscaleErodeDescriptor();
FilterDescriptor
RotatingMaskDescriptor();
FilterDescriptor
BinShrinkDescriptor();
FilterDescriptor
ShrinkDescriptor();
FilterDescriptor
BilateralDescriptor();
FilterDescriptor
BinaryThresholdDescriptor();
FilterDescriptor
BSplinePrefilterDescriptor();
FilterDescriptor
GradientAnisotropicDiffusionDescriptor();
FilterDescriptor
CurvatureAnisotropicDiffusionDescriptor();
FilterDescriptor
MaskDescriptor();
FilterDescriptor
SmoothingRecursiveGaussianDescriptor();
FilterDescriptor
GradientRecursiveGaussianDescriptor();
FilterDescriptor
DiscreteGaussianDescriptor();
FilterDescriptor
RecursiveGaussianDescriptor();

const std::vector<const FilterDescriptor *> &
Filters()
{
  // built once; never destroyed (the faces may hold pointers until exit)
  static const auto * filters = []
  {
    static const FilterDescriptor all[] = {
      MedianDescriptor(),
      MeanDescriptor(),
      GrayscaleErodeDescriptor(),
      RotatingMaskDescriptor(),
      BinShrinkDescriptor(),
      ShrinkDescriptor(),
      BilateralDescriptor(),
      BinaryThresholdDescriptor(),
      BSplinePrefilterDescriptor(),
      GradientAnisotropicDiffusionDescriptor(),
      CurvatureAnisotropicDiffusionDescriptor(),
      MaskDescriptor(),
      SmoothingRecursiveGaussianDescriptor(),
      DiscreteGaussianDescriptor(),
      RecursiveGaussianDescriptor(),
      GradientRecursiveGaussianDescriptor(),
    };
    auto * list = new std::vector<const FilterDescriptor *>;
    for (const auto & d : all)
    {
      list->push_back(&d);
    }
    return list;
  }();
  return *filters;
}

const char *
CTypeName(Pixel pixel)
{
  switch (pixel)
  {
    case Pixel::UInt8:
      return "unsigned char";
    case Pixel::Int16:
      return "short";
    case Pixel::UInt16:
      return "unsigned short";
    case Pixel::Float32:
      return "float";
    case Pixel::Float64:
      return "double";
  }
  return "unknown";
}

bool
HasPixel(const std::vector<Pixel> & list, Pixel pixel)
{
  return std::find(list.begin(), list.end(), pixel) != list.end();
}

bool
FloatOutputOnly(const FilterDescriptor & filter, Pixel pixel)
{
  return !HasPixel(filter.cpuPixels, pixel) && !HasPixel(filter.gpuPixels, pixel) &&
         HasPixel(filter.floatOutputPixels, pixel) && static_cast<bool>(filter.cpuFloatOutput);
}

std::string
CompanionPixelProblem(const FilterDescriptor & filter, Pixel companion)
{
  if (!filter.HasCompanion() || HasPixel(filter.companion.pixels, companion))
  {
    return {};
  }
  std::string names;
  for (Pixel p : filter.companion.pixels)
  {
    names += (names.empty() ? "" : ", ") + std::string(PixelName(p));
  }
  return filter.function + ": " + filter.companion.name + " of " + PixelName(companion) +
         " pixels is not supported; use " + names;
}

const FilterDescriptor &
FindFilter(const std::string & name)
{
  for (const auto * f : Filters())
  {
    if (f->command == name || f->function == name)
    {
      return *f;
    }
  }
  throw std::invalid_argument("no filter named '" + name + "'");
}

const char *
PixelName(Pixel pixel)
{
  switch (pixel)
  {
    case Pixel::UInt8:
      return "uint8";
    case Pixel::Int16:
      return "int16";
    case Pixel::UInt16:
      return "uint16";
    case Pixel::Float32:
      return "float32";
    case Pixel::Float64:
      return "float64";
  }
  return "unknown";
}

std::size_t
PixelBytes(Pixel pixel)
{
  switch (pixel)
  {
    case Pixel::UInt8:
      return 1;
    case Pixel::Int16:
    case Pixel::UInt16:
      return 2;
    case Pixel::Float32:
      return 4;
    case Pixel::Float64:
      return 8;
  }
  return 0;
}

bool
PixelFromName(const std::string & name, Pixel & pixel)
{
  for (Pixel p : { Pixel::UInt8, Pixel::Int16, Pixel::UInt16, Pixel::Float32, Pixel::Float64 })
  {
    if (name == PixelName(p))
    {
      pixel = p;
      return true;
    }
  }
  return false;
}

Job
WholeImageJob(const Extent & input, const Extent & output)
{
  Job job;
  job.dimension = input.dimension;
  for (int a = 0; a < 3; ++a)
  {
    job.inputSize[a] = input.size[a];
    job.outputStart[a] = 0;
    job.outputSize[a] = output.size[a];
  }
  return job;
}

namespace
{
[[noreturn]] void
Fail(const FilterDescriptor & filter, const std::string & problem)
{
  throw std::invalid_argument(filter.function + ": " + problem);
}

std::string
Number(double v)
{
  std::ostringstream text;
  text << v;
  return text.str();
}

std::string
Values(const std::vector<double> & values)
{
  std::string text = values.size() == 1 ? "" : "(";
  for (std::size_t i = 0; i < values.size(); ++i)
  {
    text += (i ? ", " : "") + Number(values[i]);
  }
  return text + (values.size() == 1 ? "" : ")");
}

const ParameterSpec &
Spec(const FilterDescriptor & filter, const std::string & name)
{
  for (const auto & spec : filter.parameters)
  {
    if (spec.name == name)
    {
      return spec;
    }
  }
  Fail(filter, "has no parameter '" + name + "'");
}

void
CheckValue(const FilterDescriptor & filter, const ParameterSpec & spec, const std::vector<double> & values, double v)
{
  const bool unbounded = spec.maximum >= 1e308;
  switch (spec.kind)
  {
    case ParameterKind::Integer:
    case ParameterKind::OptionalInteger:
      if (!(std::isfinite(v) && v == std::floor(v) && v >= spec.minimum && v <= spec.maximum))
      {
        const std::string range = spec.minimum == 0 && unbounded ? "non-negative integers"
                                  : spec.minimum == 1 && unbounded
                                    ? "positive integers"
                                    : "integers from " + Number(spec.minimum) + " to " + Number(spec.maximum);
        Fail(filter, spec.name + " must hold " + range + ", not " + Values(values));
      }
      break;
    case ParameterKind::Real:
    case ParameterKind::OptionalReal:
      if (std::isnan(v))
      {
        if (spec.nanAllowed)
        {
          break;
        }
        Fail(filter, spec.name + " is NaN");
      }
      if (spec.exclusiveMinimum && !(v > spec.minimum))
      {
        Fail(filter, spec.name + " must be greater than " + Number(spec.minimum) + ", not " + Values(values));
      }
      if (!(v >= spec.minimum && v <= spec.maximum))
      {
        Fail(filter,
             spec.name + " must be from " + Number(spec.minimum) + " to " + Number(spec.maximum) + ", not " +
               Values(values));
      }
      break;
    case ParameterKind::Choice:
      if (!(v == std::floor(v) && v >= 0 && v < static_cast<double>(spec.choices.size())))
      {
        Fail(filter, spec.name + " is not one of its choices");
      }
      break;
  }
}
} // namespace

double
ChoiceValue(const FilterDescriptor & filter, const std::string & name, const std::string & text)
{
  const ParameterSpec & spec = Spec(filter, name);
  std::string           chosen = text;
  for (const auto & alias : spec.choiceAliases)
  {
    chosen = alias.first == text ? alias.second : chosen;
  }
  std::string names;
  for (std::size_t i = 0; i < spec.choices.size(); ++i)
  {
    if (spec.choices[i] == chosen)
    {
      return static_cast<double>(i);
    }
    names += (i == 0 ? "'" : (i + 1 == spec.choices.size() ? " or '" : ", '")) + spec.choices[i] + "'";
  }
  Fail(filter, name + " must be " + names + ", not '" + text + "'");
}

void
CompleteParameters(const FilterDescriptor & filter, Parameters & parameters, int d)
{
  for (const auto & entry : parameters)
  {
    bool known = false;
    for (const auto & spec : filter.parameters)
    {
      known = known || spec.name == entry.first;
    }
    if (!known)
    {
      std::string names;
      for (const auto & spec : filter.parameters)
      {
        names += (names.empty() ? "" : ", ") + spec.name;
      }
      Fail(filter, "unknown parameter '" + entry.first + "' (its parameters: " + names + ")");
    }
  }
  for (const auto & spec : filter.parameters)
  {
    auto it = parameters.find(spec.name);
    if (it == parameters.end())
    {
      if (spec.defaults.empty() && !IsOptional(spec.kind) && !spec.matrix)
      {
        Fail(filter, spec.name + " is required");
      }
      it = parameters.emplace(spec.name, spec.defaults).first;
    }
    std::vector<double> & values = it->second;
    if (IsOptional(spec.kind) && values.empty())
    {
      continue;
    }
    if (spec.matrix)
    {
      if (values.empty())
      {
        // absent: the identity
        values.assign(static_cast<std::size_t>(d * d), 0.0);
        for (int a = 0; a < d; ++a)
        {
          values[static_cast<std::size_t>(a * d + a)] = 1.0;
        }
      }
      else if (values.size() != static_cast<std::size_t>(d * d))
      {
        Fail(filter,
             spec.name + " needs " + std::to_string(d * d) + " values (a " + std::to_string(d) + " x " +
               std::to_string(d) + " matrix, row by row), not " + std::to_string(values.size()));
      }
    }
    else if (spec.perAxis)
    {
      if (values.size() == 1)
      {
        values.assign(static_cast<std::size_t>(d), values[0]);
      }
      else if (values.size() != static_cast<std::size_t>(d))
      {
        Fail(filter,
             spec.name + " needs 1 or " + std::to_string(d) + " values (x, y, z order), not " +
               std::to_string(values.size()));
      }
    }
    else if (values.size() != 1)
    {
      Fail(filter, spec.name + " takes one value, not " + std::to_string(values.size()));
    }
    for (double v : values)
    {
      CheckValue(filter, spec, values, v);
    }
  }
}

void
CheckParameters(const FilterDescriptor & filter, Parameters & parameters, const Extent & image, Pixel pixel)
{
  const int d = image.dimension;
  if (d < filter.minDimension || d > filter.maxDimension)
  {
    Fail(filter,
         filter.minDimension == 2 && filter.maxDimension == 3
           ? "2D and 3D images only, not " + std::to_string(d) + "D"
           : "images of " + std::to_string(filter.minDimension) + " to " + std::to_string(filter.maxDimension) +
               " dimensions, not " + std::to_string(d));
  }
  for (int a = 0; a < d; ++a)
  {
    if (image.size[a] <= 0)
    {
      Fail(filter, "the image is empty (size 0 along axis " + std::to_string(a) + ")");
    }
  }
  CompleteParameters(filter, parameters, d);
  if (!HasPixel(filter.cpuPixels, pixel) && !HasPixel(filter.gpuPixels, pixel) && !FloatOutputOnly(filter, pixel))
  {
    std::string names;
    for (Pixel p : filter.cpuPixels)
    {
      names += (names.empty() ? "" : ", ") + std::string(PixelName(p));
    }
    Fail(filter, std::string(PixelName(pixel)) + " images are not supported (" + names + ")");
  }
  if (filter.check)
  {
    const std::string problem = filter.check(parameters, image, pixel);
    if (!problem.empty())
    {
      Fail(filter, problem);
    }
  }
}

void
CheckParameters(const FilterDescriptor & filter,
                Parameters &             parameters,
                const Extent &           image,
                Pixel                    pixel,
                Pixel                    outputPixel)
{
  CheckParameters(filter, parameters, image, pixel);
  if (filter.outputPixels.empty())
  {
    if (outputPixel != pixel)
    {
      Fail(filter, std::string("the output is of the input's pixel type, not ") + PixelName(outputPixel));
    }
    return;
  }
  if (!HasPixel(filter.outputPixels, outputPixel))
  {
    std::string names;
    for (Pixel p : filter.outputPixels)
    {
      names += (names.empty() ? "" : ", ") + std::string(PixelName(p));
    }
    Fail(filter, std::string(PixelName(outputPixel)) + " outputs are not supported (" + names + ")");
  }
  if (filter.outputCheck)
  {
    const std::string problem = filter.outputCheck(parameters, pixel, outputPixel);
    if (!problem.empty())
    {
      Fail(filter, problem);
    }
  }
}

Pixel
DefaultOutputPixel(const FilterDescriptor & filter, Pixel input)
{
  if (filter.outputPixels.empty())
  {
    return input;
  }
  return filter.defaultOutputPixel ? filter.defaultOutputPixel(input) : filter.outputPixels.front();
}

double
Value(const Parameters & parameters, const std::string & name, int axis)
{
  const auto it = parameters.find(name);
  if (it == parameters.end() || it->second.empty())
  {
    throw std::invalid_argument("parameter '" + name + "' has no value");
  }
  const auto & v = it->second;
  return v[std::min<std::size_t>(static_cast<std::size_t>(axis), v.size() - 1)];
}

int
ChoiceIndex(const Parameters & parameters, const std::string & name)
{
  return static_cast<int>(Value(parameters, name));
}

int
OutputComponents(const FilterDescriptor & filter, int dimension)
{
  return filter.vectorOutput ? dimension : 1;
}

Extent
OutputExtent(const FilterDescriptor & filter, const Parameters & parameters, const Extent & image)
{
  Extent out = image;
  if (filter.grid == OutputGrid::Bin || filter.grid == OutputGrid::Subsample)
  {
    for (int a = 0; a < image.dimension; ++a)
    {
      const auto f = static_cast<std::int64_t>(Value(parameters, "shrink_factors", a));
      out.size[a] = std::max<std::int64_t>(1, image.size[a] / f);
    }
  }
  return out;
}

Job
WholeImageJob(const FilterDescriptor & filter, const Parameters & parameters, const Extent & input)
{
  Job job = WholeImageJob(input, OutputExtent(filter, parameters, input));
  if (filter.grid == OutputGrid::Subsample)
  {
    for (int a = 0; a < input.dimension; ++a)
    {
      job.outputStart[a] =
        ShrinkFirstIndex(input.size[a], static_cast<std::int64_t>(Value(parameters, "shrink_factors", a)));
    }
  }
  return job;
}

void
CheckCompanion(const FilterDescriptor & filter, const Parameters & parameters, Pixel companion)
{
  if (!filter.HasCompanion())
  {
    Fail(filter, "the filter takes no companion image");
  }
  const std::string pixelProblem = CompanionPixelProblem(filter, companion);
  if (!pixelProblem.empty())
  {
    throw std::invalid_argument(pixelProblem);
  }
  if (filter.companion.check)
  {
    const std::string problem = filter.companion.check(parameters, companion);
    if (!problem.empty())
    {
      Fail(filter, problem);
    }
  }
}

std::string
GpuProblem(const FilterDescriptor & filter, Pixel pixel, const Parameters & parameters, const Extent & image)
{
  if (!HasPixel(filter.gpuPixels, pixel) && !(FloatOutputOnly(filter, pixel) && filter.cudaFloatOutput))
  {
    return std::string("the GPU does not take ") + PixelName(pixel) + " (C++ " + CTypeName(pixel) + ") images";
  }
  if (filter.gpuProblem)
  {
    std::string problem = filter.gpuProblem(parameters, image);
    if (!problem.empty())
    {
      return problem;
    }
  }
  if (!filter.cuda || !filter.cudaCompiled || !filter.cudaCompiled())
  {
    return "this build has no CUDA code";
  }
  return {};
}

std::string
GpuProblem(const FilterDescriptor & filter,
           Pixel                    pixel,
           const Parameters &       parameters,
           const Extent &           image,
           ExecutionMode            mode,
           bool                     hostData)
{
  std::string problem = GpuProblem(filter, pixel, parameters, image);
  if (problem.empty() && filter.hostCPUReason && mode == ExecutionMode::Automatic && hostData)
  {
    // host images the CPU core serves better (the report says why)
    problem = filter.hostCPUReason(parameters);
  }
  return problem;
}

std::string
RunOnHostBuffersCUDA(const FilterDescriptor &      filter,
                     Pixel                         pixel,
                     const void *                  in,
                     void *                        out,
                     const Job &                   job,
                     const Parameters &            parameters,
                     const std::function<void()> & whole,
                     std::string &                 note)
{
  if (filter.cudaOnHost)
  {
    return filter.cudaOnHost(
      true, pixel, [in] { return in; }, [out] { return out; }, job, parameters, whole);
  }
  const SlabPolicy policy = filter.slabPolicy ? filter.slabPolicy(parameters, pixel) : SlabPolicy{};
  // vector outputs run whole (the slab runner sizes one component per pixel)
  if (!(policy.slabs && filter.grid == OutputGrid::Same) || filter.vectorOutput)
  {
    whole();
    return {};
  }
  const auto halo = filter.halo ? filter.halo(parameters, job.dimension) : std::array<std::int64_t, 3>{ 0, 0, 0 };
  // the slab runner needs the pixels' sizes only: types of those widths
  const auto slabbed = [&](auto inTag, auto outTag)
  {
    using T = decltype(inTag);
    using O = decltype(outTag);
    return RunNeighbourhoodJobCUDA<T, O>(
      true,
      [&] { return static_cast<const T *>(in); },
      [&] { return static_cast<O *>(out); },
      job,
      halo,
      policy.kernelWritesInputPlanes,
      policy.workBytesPerInputPixel,
      [&](const T * x, O * y, const Job & piece) { note = filter.cuda(pixel, x, y, piece, parameters, 0).note; },
      whole,
      {},
      // the companion (on the host, as the input) is cut with the input
      job.companion != nullptr ? PixelBytes(*job.companionPixel) : 0,
      [&] { return job.companion; });
  };
  const auto withOutput = [&](auto inTag)
  {
    switch (PixelBytes(job.outputPixel ? *job.outputPixel : pixel))
    {
      case 1:
        return slabbed(inTag, std::uint8_t{});
      case 2:
        return slabbed(inTag, std::uint16_t{});
      case 4:
        return slabbed(inTag, float{});
      default:
        return slabbed(inTag, double{});
    }
  };
  switch (PixelBytes(pixel))
  {
    case 1:
      return withOutput(std::uint8_t{});
    case 2:
      return withOutput(std::uint16_t{});
    case 4:
      return withOutput(float{});
    default:
      return withOutput(double{});
  }
}

} // namespace cif
