/*=========================================================================
 *  CudaImageFilters Python extension: the packed-mask operations, bound
 *  once over their descriptions (cif::MaskOperationDescriptor), and the
 *  B-spline prefilter's helpers (the described filters, the binary
 *  threshold and the prefilter among them, are bound once in
 *  cifPythonDescribed.cxx).
 *=========================================================================*/
#include "cifPythonArrays.h"

#include "cif/BSplinePrefilter.h"
#include "cif/PackedMask.h"
#include "cif/Slabs.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <array>
#include <cmath>
#include <limits>
#include <sstream>
#include <type_traits>

namespace cifpy
{
namespace
{
cif::MaskExtent
ExtentOf(const ArrayInfo & image)
{
  cif::MaskExtent e;
  for (int a = 0; a < 3; ++a)
  {
    e.size[a] = image.Size(a);
  }
  return e;
}

void
CheckWords(const ArrayInfo & words, const ArrayInfo & image, const char * function)
{
  RequirePixel(words, Pixel::UInt32, function);
  bool ok = words.ndim == image.ndim && words.Size(0) == cif::MaskWordsPerRow(image.Size(0));
  for (int a = 1; ok && a < image.ndim; ++a)
  {
    ok = words.Size(a) == image.Size(a);
  }
  if (!ok)
  {
    std::ostringstream why;
    why << function << ": the mask's words do not match the image's shape (a row of " << image.Size(0)
        << " voxels takes " << cif::MaskWordsPerRow(image.Size(0)) << " words)";
    throw std::invalid_argument(why.str());
  }
}

/** The image operands' pixel type among the operation's (a TypeError
 * otherwise, as for every function). */
cif::Pixel
ImagePixel(const cif::MaskOperationDescriptor & operation, const ArrayInfo & image)
{
  cif::Pixel pixel;
  if (!cif::PixelFromName(PixelName(image.pixel), pixel) || !cif::HasPixel(operation.pixels, pixel))
  {
    std::string names;
    for (cif::Pixel p : operation.pixels)
    {
      names += (names.empty() ? "" : ", ") + std::string(cif::PixelName(p));
    }
    throw nb::type_error(
      (operation.function + ": pixel type " + image.dtype + " is not supported; use " + names).c_str());
  }
  return pixel;
}

/** One call of a packed-mask operation (cif::MaskOperationDescriptor,
 * cif/PackedMask.h) on arrays: its input operands in the description's
 * order, its output and its values. The image operands share one shape and
 * pixel type, the words match it; the values pass the description's one
 * check. Host arrays too large for the device run on z (or y) slabs, as
 * the ITK filters do. */
Report
RunMaskOperation(const std::string &          function,
                 const std::vector<InArray> & inputs,
                 const OutArray &             output,
                 const std::vector<double> &  values,
                 const std::string &          device,
                 std::uintptr_t               stream,
                 int                          threads)
{
  const cif::MaskOperationDescriptor & operation = cif::FindMaskOperation(function);
  const char *                         name = operation.function.c_str();
  if (inputs.size() != operation.inputs.size())
  {
    throw std::invalid_argument(operation.function + ": takes " + std::to_string(operation.inputs.size()) +
                                " input arrays, not " + std::to_string(inputs.size()));
  }
  const auto what = [](cif::MaskOperand operand, const char * image)
  { return operand == cif::MaskOperand::Words ? "mask" : image; };
  std::vector<ArrayInfo> in;
  for (std::size_t i = 0; i < inputs.size(); ++i)
  {
    in.push_back(Inspect(inputs[i], what(operation.inputs[i], "image")));
  }
  const ArrayInfo out = Inspect(output, what(operation.output, "output"));
  // every operand with its kind: the first image gives the shape and type
  std::vector<std::pair<const ArrayInfo *, cif::MaskOperand>> operands;
  for (std::size_t i = 0; i < in.size(); ++i)
  {
    operands.emplace_back(&in[i], operation.inputs[i]);
  }
  operands.emplace_back(&out, operation.output);
  const ArrayInfo * image = nullptr;
  for (const auto & operand : operands)
  {
    if (operand.second != cif::MaskOperand::Image)
    {
      continue;
    }
    if (image == nullptr)
    {
      image = operand.first;
      RequireImageDimension(*image, name);
    }
    else
    {
      RequireSameShape(*image, *operand.first, name);
      RequirePixel(*operand.first, image->pixel, name);
    }
  }
  for (const auto & operand : operands)
  {
    if (operand.second == cif::MaskOperand::Words)
    {
      CheckWords(*operand.first, *image, name);
    }
  }
  const cif::Pixel pixel = ImagePixel(operation, *image);
  cif::CheckMaskValues(operation, pixel, values);
  const cif::MaskExtent extent = ExtentOf(*image);
  std::string           slabs;
  const HostSlabRunner  hostSlabs = [&](const std::function<void()> & whole)
  {
    slabs = cif::RunMaskOperationCUDA(
      operation,
      true,
      pixel,
      extent,
      values,
      [&]
      {
        std::vector<const void *> pointers;
        for (const auto & a : in)
        {
          pointers.push_back(a.data);
        }
        return pointers;
      },
      [&]() -> void * { return out.data; },
      whole);
  };
  Report report = RunJob(
    name,
    device,
    cif::PackedMaskCUDAIsCompiled() ? std::string() : std::string("this build has no CUDA code"),
    in,
    { out },
    stream,
    [&](const JobPointers & p) { operation.cuda(pixel, p.in.data(), p.out[0], extent, values, 1); },
    [&](const JobPointers & p) { operation.cpu(pixel, p.in.data(), p.out[0], extent, values, Threads(threads)); },
    nullptr,
    hostSlabs);
  if (!slabs.empty() && std::get<0>(report) == "GPU")
  {
    std::get<1>(report) += "; " + slabs;
  }
  return report;
}

/** The packed-mask operations' descriptions, for the tests of every face. */
nb::list
MaskOperationDescriptions()
{
  const auto operand = [](cif::MaskOperand o) { return o == cif::MaskOperand::Words ? "words" : "image"; };
  nb::list   list;
  for (const cif::MaskOperationDescriptor * op : cif::MaskOperations())
  {
    nb::dict d;
    d["function"] = op->function;
    d["itk_class"] = op->itkClass;
    d["command"] = op->command;
    d["summary"] = op->summary;
    nb::list inputs, values, pixels;
    for (auto i : op->inputs)
    {
      inputs.append(operand(i));
    }
    for (const auto & v : op->values)
    {
      values.append(v.name);
    }
    for (auto p : op->pixels)
    {
      pixels.append(cif::PixelName(p));
    }
    d["inputs"] = inputs;
    d["output"] = operand(op->output);
    d["values"] = values;
    d["pixels"] = pixels;
    list.append(d);
  }
  return list;
}

} // namespace

void
RegisterFilters(nb::module_ & m)
{
  using namespace nb::literals;
  m.def("mask_operations",
        &MaskOperationDescriptions,
        "The core's description of every packed-mask operation (cif/PackedMask.h).");
  m.def("run_mask_operation",
        &RunMaskOperation,
        "function"_a,
        "inputs"_a,
        "output"_a,
        "values"_a,
        "device"_a,
        "stream"_a,
        "threads"_a);
  m.def("bspline_poles", &cif::BSplinePoles, "spline_order"_a);
  m.def("cubic_fir_half_width_for_tolerance", &cif::CubicFIRHalfWidthForTolerance, "tolerance"_a);
  m.def("cubic_fir_truncation_bound", &cif::CubicFIRTruncationBound, "half_width"_a);
}

} // namespace cifpy
