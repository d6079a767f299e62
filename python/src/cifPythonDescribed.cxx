/*=========================================================================
 *  CudaImageFilters Python extension: one binder for every filter the core
 *  describes (cif/Filter.h). `filters()` hands the descriptions to the
 *  Python package, which makes one function per filter from them
 *  (cudaimagefilters/_described.py); `run_filter` runs any of them on an
 *  array, through RunJob like every other binding.
 *=========================================================================*/
#include "cif/Filter.h"
#include "cifPythonArrays.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cmath>
#include <optional>

namespace cifpy
{
namespace
{
/** The array's pixel type among the filter's (a TypeError otherwise, as for every function). */
cif::Pixel
CorePixel(const cif::FilterDescriptor & filter, const ArrayInfo & a)
{
  cif::Pixel  pixel;
  std::string names;
  for (cif::Pixel p : filter.cpuPixels)
  {
    names += (names.empty() ? "" : ", ") + std::string(cif::PixelName(p));
  }
  const bool known = cif::PixelFromName(PixelName(a.pixel), pixel);
  if (!known || !cif::HasPixel(filter.cpuPixels, pixel))
  {
    // integers the C++ class and the tool take into float: an array keeps its type, so the caller casts
    const std::string hint = known && cif::FloatOutputOnly(filter, pixel)
                               ? " (cast the image to float32 first: the C++ class and the command line compute " +
                                   a.dtype + " images in float)"
                               : std::string();
    throw nb::type_error(
      (filter.function + ": pixel type " + a.dtype + " is not supported; use " + names + hint).c_str());
  }
  return pixel;
}

/** A Python value as a parameter's values: a number, a sequence of
 * numbers, None (absent), or a choice's name. */
std::vector<double>
ValuesOf(const cif::FilterDescriptor & filter, const std::string & name, const nb::handle & value)
{
  if (value.is_none())
  {
    return {};
  }
  if (nb::isinstance<nb::str>(value))
  {
    return { cif::ChoiceValue(filter, name, nb::cast<std::string>(value)) };
  }
  if (nb::isinstance<nb::bool_>(value))
  {
    // an on/off setting (an integer of 0 or 1, ITK's SetUseImageSpacing) takes True and False
    for (const auto & spec : filter.parameters)
    {
      if (spec.name == name && spec.kind == cif::ParameterKind::Integer && spec.minimum == 0.0 && spec.maximum == 1.0)
      {
        return { nb::cast<bool>(value) ? 1.0 : 0.0 };
      }
    }
    throw std::invalid_argument(filter.function + ": " + name + " must be a number, not a bool");
  }
  if (nb::isinstance<nb::int_>(value) || nb::isinstance<nb::float_>(value))
  {
    return { nb::cast<double>(value) };
  }
  std::vector<double> values;
  try
  {
    for (nb::handle item : value)
    {
      if (nb::isinstance<nb::bool_>(item))
      {
        throw std::invalid_argument(filter.function + ": " + name + " must hold numbers, not bools");
      }
      values.push_back(nb::cast<double>(item));
    }
  }
  catch (const nb::cast_error &)
  {
    throw std::invalid_argument(filter.function + ": " + name + " must be a number or a sequence of numbers");
  }
  catch (const nb::python_error &)
  {
    throw std::invalid_argument(filter.function + ": " + name + " must be a number or a sequence of numbers");
  }
  return values;
}

cif::Extent
ExtentOf(const ArrayInfo & a)
{
  cif::Extent e;
  e.dimension = a.ndim;
  for (int axis = 0; axis < 3; ++axis)
  {
    e.size[axis] = a.Size(axis);
  }
  return e;
}

/** The output's pixel type: the input's, or for a filter that chooses it
 * apart (outputPixels: the threshold, the prefilter) `dtype` (None: the
 * description's default for the input's type). */
std::optional<cif::Pixel>
OutputPixelOf(const cif::FilterDescriptor & filter, const nb::handle & dtype, cif::Pixel input)
{
  if (filter.outputPixels.empty())
  {
    if (!dtype.is_none())
    {
      throw std::invalid_argument(filter.function + ": the output is of the image's pixel type");
    }
    return std::nullopt;
  }
  if (dtype.is_none())
  {
    return cif::DefaultOutputPixel(filter, input);
  }
  const std::string name = nb::cast<std::string>(dtype);
  cif::Pixel        pixel;
  if (!cif::PixelFromName(name, pixel) || !cif::HasPixel(filter.outputPixels, pixel))
  {
    std::string names;
    for (cif::Pixel p : filter.outputPixels)
    {
      names += (names.empty() ? "" : ", ") + std::string(cif::PixelName(p));
    }
    throw nb::type_error((filter.function + ": output_dtype " + name + " is not supported; use " + names).c_str());
  }
  return pixel;
}

/** The checked parameters of a call (cif::CheckParameters, once). */
cif::Parameters
CheckedParameters(const cif::FilterDescriptor & filter,
                  const nb::dict &              keywords,
                  const ArrayInfo &             in,
                  std::optional<cif::Pixel>     outputPixel)
{
  cif::Parameters parameters;
  for (auto item : keywords)
  {
    const std::string   name = nb::cast<std::string>(item.first);
    std::vector<double> values = ValuesOf(filter, name, item.second);
    bool                optional = false;
    for (const auto & spec : filter.parameters)
    {
      optional = optional || (spec.name == name && cif::IsOptional(spec.kind));
    }
    if (!values.empty() || optional)
    {
      parameters[name] = values;
    }
  }
  if (outputPixel)
  {
    cif::CheckParameters(filter, parameters, ExtentOf(in), CorePixel(filter, in), *outputPixel);
  }
  else
  {
    cif::CheckParameters(filter, parameters, ExtentOf(in), CorePixel(filter, in));
  }
  return parameters;
}

/** A call whose parameters passed cif::CheckParameters (once): made only
 * by check_filter, so run_checked trusts its parameters. */
struct CheckedCall
{
  const cif::FilterDescriptor * filter{ nullptr };
  cif::Parameters               parameters;
  cif::Extent                   input;
  cif::Extent                   output;
  cif::Pixel                    pixel{ cif::Pixel::UInt8 };
  std::string                   dtype;
  /** the output's type where the filter chooses it apart from the input's */
  std::optional<cif::Pixel> outputPixel;
  /** the description's warning for these parameters (empty: none) */
  std::string warning;
  /** the companion image's (the mask's) pixel type and dtype, for filters
   * with one */
  std::optional<cif::Pixel> companionPixel;
  std::string               companionDtype;
};

/** The companion array (the mask) of a call: given exactly where the
 * filter has one, of the image's shape and a pixel type it takes
 * (TypeError otherwise, as for the image). */
std::optional<cif::Pixel>
CompanionPixelOf(const cif::FilterDescriptor & filter, const ArrayInfo & in, const std::optional<ArrayInfo> & companion)
{
  const char * function = filter.function.c_str();
  if (!filter.HasCompanion())
  {
    if (companion)
    {
      throw std::invalid_argument(filter.function + ": the filter takes one image");
    }
    return std::nullopt;
  }
  if (!companion)
  {
    throw std::invalid_argument(filter.function + ": " + filter.companion.name + " is required");
  }
  cif::Pixel pixel;
  if (!cif::PixelFromName(PixelName(companion->pixel), pixel))
  {
    std::string names;
    for (cif::Pixel p : filter.companion.pixels)
    {
      names += (names.empty() ? "" : ", ") + std::string(cif::PixelName(p));
    }
    throw nb::type_error((filter.function + ": " + filter.companion.name + " of " + companion->dtype +
                          " pixels is not supported; use " + names)
                           .c_str());
  }
  const std::string problem = cif::CompanionPixelProblem(filter, pixel);
  if (!problem.empty())
  {
    throw nb::type_error(problem.c_str());
  }
  if (companion->ndim != in.ndim)
  {
    throw std::invalid_argument(filter.function + ": " + filter.companion.name + " has " +
                                std::to_string(companion->ndim) + " axes, the image " + std::to_string(in.ndim));
  }
  RequireSameShape(in, *companion, function);
  return pixel;
}

CheckedCall
Check(const std::string &             name,
      const ArrayInfo &               in,
      const nb::dict &                keywords,
      const nb::handle &              outputDtype,
      const std::optional<ArrayInfo> & companion = std::nullopt)
{
  CheckedCall call;
  call.filter = &cif::FindFilter(name);
  RequireImageDimension(in, call.filter->function.c_str());
  call.pixel = CorePixel(*call.filter, in);
  call.companionPixel = CompanionPixelOf(*call.filter, in, companion);
  call.outputPixel = OutputPixelOf(*call.filter, outputDtype, call.pixel);
  call.parameters = CheckedParameters(*call.filter, keywords, in, call.outputPixel);
  if (call.companionPixel)
  {
    cif::CheckCompanion(*call.filter, call.parameters, *call.companionPixel);
    call.companionDtype = companion->dtype;
  }
  call.input = ExtentOf(in);
  call.output = cif::OutputExtent(*call.filter, call.parameters, call.input);
  call.dtype = in.dtype;
  if (call.filter->warning)
  {
    call.warning = call.filter->warning(call.parameters, call.input);
  }
  return call;
}

/** The ArrayInfo of an optional companion array, named `label` in messages
 * (its argument's name, "mask_image"). */
std::optional<ArrayInfo>
InspectCompanion(const std::optional<InArray> & companion, const char * label = "companion")
{
  return companion ? std::optional<ArrayInfo>(Inspect(*companion, label)) : std::nullopt;
}

/** (the checked call, the output's shape, slowest axis first, with a last
 * axis of D components for a vector output, the output's dtype name). */
nb::tuple
CheckFilter(const std::string &            name,
            const InArray &                input,
            const nb::dict &               keywords,
            const nb::handle &             outputDtype,
            const std::optional<InArray> & companion)
{
  const ArrayInfo in = Inspect(input, "image");
  CheckedCall     call = Check(name, in, keywords, outputDtype, InspectCompanion(companion));
  nb::list        shape;
  for (int axis = in.ndim - 1; axis >= 0; --axis)
  {
    shape.append(call.output.size[axis]);
  }
  if (call.filter->vectorOutput)
  {
    // a gradient: a last axis of D components
    shape.append(cif::OutputComponents(*call.filter, in.ndim));
  }
  const std::string dtype = call.outputPixel ? std::string(cif::PixelName(*call.outputPixel)) : in.dtype;
  return nb::make_tuple(nb::cast(std::move(call)), nb::tuple(shape), dtype);
}

Report
RunChecked(const CheckedCall &            call,
           const InArray &                input,
           const OutArray &               output,
           const std::string &            device,
           std::uintptr_t                 stream,
           int                            threads,
           const std::optional<InArray> & companionArray)
{
  const cif::FilterDescriptor &  filter = *call.filter;
  const char *                   function = filter.function.c_str();
  const ArrayInfo                in = Inspect(input, "image");
  const ArrayInfo                out = Inspect(output, "output");
  const std::optional<ArrayInfo> companion =
    InspectCompanion(companionArray, filter.HasCompanion() ? filter.companion.name.c_str() : "companion");
  if (companion.has_value() != call.companionPixel.has_value() ||
      (companion && (companion->dtype != call.companionDtype || companion->ndim != in.ndim)))
  {
    throw std::invalid_argument(std::string(function) + ": the companion image is not the one the call was checked for");
  }
  if (companion)
  {
    RequireSameShape(in, *companion, function);
  }
  const cif::Extent             inExtent = ExtentOf(in);
  for (int axis = 0; axis < 3; ++axis)
  {
    if (in.ndim != call.input.dimension || inExtent.size[axis] != call.input.size[axis] || in.dtype != call.dtype)
    {
      throw std::invalid_argument(std::string(function) + ": the image is not the one the call was checked for");
    }
  }
  // the output: the output extent, and a last axis of D components for a vector output
  const int components = cif::OutputComponents(filter, in.ndim);
  const int spatial = out.ndim - (filter.vectorOutput ? 1 : 0);
  bool      shapeMatches = spatial == in.ndim && (!filter.vectorOutput || out.shape[out.ndim - 1] == components);
  for (int axis = 0; axis < in.ndim && shapeMatches; ++axis)
  {
    shapeMatches = out.shape[spatial - 1 - axis] == call.output.size[axis];
  }
  if (!shapeMatches)
  {
    throw std::invalid_argument(std::string(function) + ": the output array has the wrong shape");
  }
  if (call.outputPixel)
  {
    if (out.dtype != cif::PixelName(*call.outputPixel))
    {
      throw std::invalid_argument(std::string(function) + ": the output array is " + out.dtype + ", not " +
                                  cif::PixelName(*call.outputPixel));
    }
  }
  else
  {
    RequirePixel(out, in.pixel, function);
  }
  const cif::Pixel        pixel = call.pixel;
  const cif::Parameters & parameters = call.parameters;
  cif::Job                job = cif::WholeImageJob(filter, parameters, inExtent);
  if (call.outputPixel)
  {
    job.outputPixel = *call.outputPixel;
  }
  std::vector<ArrayInfo> inputs{ in };
  if (companion)
  {
    job.companionPixel = *call.companionPixel;
    inputs.push_back(*companion);
  }
  // the job with the companion's buffer where the body's inputs are
  const auto jobOn = [&](const JobPointers & p)
  {
    cif::Job with = job;
    with.companion = companion ? p.in[1] : nullptr;
    return with;
  };
  std::string note, slabs;
  // host arrays on the GPU: whole, or in slabs when they do not fit the device
  const HostSlabRunner hostSlabs = [&](const std::function<void()> & whole)
  {
    cif::Job onHost = job;
    onHost.companion = companion ? companion->data : nullptr;
    slabs = cif::RunOnHostBuffersCUDA(filter, pixel, in.data, out.data, onHost, parameters, whole, note);
  };
  const std::string gpuProblem = cif::GpuProblem(filter, pixel, parameters, inExtent, ParseMode(device), !in.onGpu);
  Report report = RunJob(
    function,
    device,
    gpuProblem,
    inputs,
    { out },
    stream,
    [&](const JobPointers & p) { note = filter.cuda(pixel, p.in[0], p.out[0], jobOn(p), parameters, 0).note; },
    [&](const JobPointers & p)
    { note = filter.cpu(pixel, p.in[0], p.out[0], jobOn(p), parameters, Threads(threads)).note; },
    nullptr,
    hostSlabs);
  std::string & message = std::get<1>(report);
  if (!note.empty())
  {
    message += "; " + note;
  }
  if (!slabs.empty() && std::get<0>(report) == "GPU")
  {
    message += "; " + slabs;
  }
  return report;
}

/** check_filter and run_checked in one call (on an output already allocated). */
Report
RunFilter(const std::string & name,
          const InArray &     input,
          const OutArray &    output,
          const nb::dict &    keywords,
          const std::string & device,
          std::uintptr_t      stream,
          int                 threads)
{
  return RunChecked(
    Check(name, Inspect(input, "image"), keywords, nb::none()), input, output, device, stream, threads, std::nullopt);
}

/** The descriptions, as plain Python data for the package. */
nb::list
Descriptions()
{
  nb::list list;
  for (const cif::FilterDescriptor * f : cif::Filters())
  {
    nb::dict d;
    d["command"] = f->command;
    d["function"] = f->function;
    d["itk_class"] = f->itkClass;
    d["itk_twin"] = f->itkTwin;
    d["summary"] = f->summary;
    d["details"] = f->details;
    d["min_dimension"] = f->minDimension;
    d["max_dimension"] = f->maxDimension;
    d["grid"] = f->grid == cif::OutputGrid::Bin ? "bin" : f->grid == cif::OutputGrid::Subsample ? "subsample" : "same";
    nb::list gpu, cpu;
    for (auto p : f->gpuPixels)
    {
      gpu.append(cif::PixelName(p));
    }
    for (auto p : f->cpuPixels)
    {
      cpu.append(cif::PixelName(p));
    }
    d["gpu_pixels"] = gpu;
    d["cpu_pixels"] = cpu;
    nb::list outputs;
    for (auto p : f->outputPixels)
    {
      outputs.append(cif::PixelName(p));
    }
    d["output_pixels"] = outputs;
    d["output_follows_input"] = static_cast<bool>(f->defaultOutputPixel);
    d["vector_output"] = f->vectorOutput;
    if (f->HasCompanion())
    {
      nb::dict companion;
      companion["name"] = f->companion.name;
      companion["help"] = f->companion.help;
      nb::list pixels;
      for (auto p : f->companion.pixels)
      {
        pixels.append(cif::PixelName(p));
      }
      companion["pixels"] = pixels;
      d["companion"] = companion;
    }
    else
    {
      d["companion"] = nb::none();
    }
    nb::list parameters;
    for (const auto & spec : f->parameters)
    {
      nb::dict p;
      p["name"] = spec.name;
      p["kind"] = spec.kind == cif::ParameterKind::Integer           ? "integer"
                  : spec.kind == cif::ParameterKind::Real            ? "real"
                  : spec.kind == cif::ParameterKind::Choice          ? "choice"
                  : spec.kind == cif::ParameterKind::OptionalInteger ? "optional_integer"
                                                                     : "optional_real";
      p["from_image"] = spec.fromImage;
      p["per_axis"] = spec.perAxis;
      p["matrix"] = spec.matrix;
      p["positional"] = spec.positional;
      p["minimum"] = spec.minimum;
      p["maximum"] = spec.maximum;
      p["defaults"] = spec.defaults;
      p["choices"] = spec.choices;
      p["help"] = spec.help;
      parameters.append(p);
    }
    d["parameters"] = parameters;
    list.append(d);
  }
  return list;
}

/** The halo (x, y, z) a piece needs, for checked parameters of an image of
 * `ndim` axes. */
std::vector<std::int64_t>
Halo(const std::string & name, const nb::dict & keywords, int ndim)
{
  const cif::FilterDescriptor & filter = cif::FindFilter(name);
  cif::Parameters               parameters;
  for (auto item : keywords)
  {
    const std::string   key = nb::cast<std::string>(item.first);
    std::vector<double> values = ValuesOf(filter, key, item.second);
    if (!values.empty())
    {
      parameters[key] = values;
    }
  }
  cif::CompleteParameters(filter, parameters, ndim);
  const auto halo = filter.halo ? filter.halo(parameters, ndim) : std::array<std::int64_t, 3>{ 0, 0, 0 };
  return std::vector<std::int64_t>(halo.begin(), halo.begin() + ndim);
}
} // namespace

void
RegisterDescribed(nb::module_ & m)
{
  using namespace nb::literals;
  m.def("filters", &Descriptions, "The core's description of every filter (cif/Filter.h).");
  m.def("run_filter",
        &RunFilter,
        "name"_a,
        "image"_a,
        "output"_a,
        "parameters"_a,
        "device"_a,
        "stream"_a,
        "threads"_a,
        "check_filter and run_checked in one call, on an output of the right shape.");
  nb::class_<CheckedCall>(m, "CheckedCall", "A call whose parameters the core has checked (check_filter).")
    .def_ro("warning", &CheckedCall::warning, "ITK's warning for these parameters (empty: none).");
  m.def("check_filter",
        &CheckFilter,
        "name"_a,
        "image"_a,
        "parameters"_a,
        "output_dtype"_a = nb::none(),
        "companion"_a = nb::none(),
        "Checks a call's parameters once (cif::CheckParameters): (the checked call, the output's shape, the "
        "output's dtype name).");
  m.def("run_checked",
        &RunChecked,
        "call"_a,
        "image"_a,
        "output"_a,
        "device"_a,
        "stream"_a,
        "threads"_a,
        "companion"_a = nb::none());
  m.def("filter_halo", &Halo, "name"_a, "parameters"_a, "ndim"_a);
}

} // namespace cifpy
