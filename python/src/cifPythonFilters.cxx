/*=========================================================================
 *  CudaImageFilters Python extension: the packed-mask filters and the
 *  B-spline prefilter's helpers (the described filters, the binary
 *  threshold and the prefilter among them, are bound once in
 *  cifPythonDescribed.cxx). Each
 *  binding checks its arrays, builds the core's job from plain parameters
 *  (sizes x fastest) and runs the core through RunJob.
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

void
CheckFilterArrays(const ArrayInfo & in, const ArrayInfo & out, const char * function)
{
  RequireImageDimension(in, function);
  RequireSameShape(in, out, function);
  RequirePixel(out, in.pixel, function);
}

std::string
NoCudaReason(bool compiled)
{
  return compiled ? std::string() : std::string("this build has no CUDA code");
}

/** A threshold or label given as a Python number, in the pixel type T, by
 * the binary threshold's rule (cif::IsValueOf, cif/PackedMask.h, which its
 * description checks with too): ITK compares in the input type, so an integer type refuses
 * a value it cannot hold; float takes every number (NaN too: no pixel lies
 * inside a NaN bound, as in ITK), with the infinities beyond its range. */
template <typename T>
T
ThresholdValue(double v, const char * what, const char * function)
{
  if (!cif::IsValueOf<T>(v))
  {
    std::ostringstream why;
    why << function << ": " << what << " = " << v << " is not a value of the image's pixel type";
    throw std::invalid_argument(why.str());
  }
  return cif::AsValueOf<T>(v);
}

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

/** Appends a GPU run's slab note to its report. */
void
AddSlabs(Report & report, const std::string & slabs)
{
  if (!slabs.empty() && std::get<0>(report) == "GPU")
  {
    std::get<1>(report) += "; " + slabs;
  }
}

/** RunJob for a threshold or packed-mask job on dense arrays of `extent`:
 * `gpu(inputs, output, extent)` with device pointers, `cpu(inputs, output)`
 * with host pointers. Host arrays too large for the device run `gpu` on z
 * (or y) slabs (cif::RunMaskJobCUDA, as the ITK filters do); the inputs'
 * and the output's bytes per voxel as for cif::MaskSlabLayout (0: packed
 * words). */
template <typename TGpu, typename TCpu>
Report
RunMaskJob(const char *                     name,
           const std::string &              device,
           const std::vector<ArrayInfo> &   inputs,
           const ArrayInfo &                output,
           std::uintptr_t                   stream,
           const cif::MaskExtent &          extent,
           const std::vector<std::size_t> & inputPixelBytes,
           std::size_t                      outputPixelBytes,
           TGpu &&                          gpu,
           TCpu &&                          cpu)
{
  std::string          slabs;
  const HostSlabRunner hostSlabs = [&](const std::function<void()> & whole)
  {
    slabs = cif::RunMaskJobCUDA(
      true,
      extent,
      inputPixelBytes,
      outputPixelBytes,
      [&]
      {
        std::vector<const void *> pointers;
        for (const auto & a : inputs)
        {
          pointers.push_back(a.data);
        }
        return pointers;
      },
      [&]() -> void * { return output.data; },
      gpu,
      whole);
  };
  Report report = RunJob(
    name,
    device,
    NoCudaReason(cif::PackedMaskCUDAIsCompiled()),
    inputs,
    { output },
    stream,
    [&](const JobPointers & p) { gpu(p.in.data(), p.out[0], extent); },
    [&](const JobPointers & p) { cpu(p.in.data(), p.out[0]); },
    nullptr,
    hostSlabs);
  AddSlabs(report, slabs);
  return report;
}

Report
ThresholdToPackedMask(const InArray &     input,
                      const OutArray &    words,
                      double              lower,
                      double              upper,
                      const std::string & device,
                      std::uintptr_t      stream,
                      int                 threads)
{
  const char * name = "threshold_to_packed_mask";
  const auto   in = Inspect(input, "image");
  const auto   w = Inspect(words, "mask");
  RequireImageDimension(in, name);
  CheckWords(w, in, name);
  const auto e = ExtentOf(in);
  Report     report;
  DispatchScalar(
    in,
    name,
    [&](auto tag)
    {
      using T = decltype(tag);
      const T lo = ThresholdValue<T>(lower, "lower", name);
      const T hi = ThresholdValue<T>(upper, "upper", name);
      report = RunMaskJob(
        name,
        device,
        { in },
        w,
        stream,
        e,
        { sizeof(T) },
        0,
        [&](const void * const * x, void * y, const cif::MaskExtent & job)
        { cif::ThresholdPackCUDA(static_cast<const T *>(x[0]), static_cast<std::uint32_t *>(y), job, lo, hi); },
        [&](const void * const * x, void * y) {
          cif::ThresholdPackCPU(
            static_cast<const T *>(x[0]), static_cast<std::uint32_t *>(y), e, lo, hi, Threads(threads));
        });
    });
  return report;
}

Report
UnpackMask(const InArray &     words,
           const OutArray &    output,
           double              inside,
           double              outside,
           const std::string & device,
           std::uintptr_t      stream,
           int                 threads)
{
  const char * name = "unpack_mask";
  const auto   w = Inspect(words, "mask");
  const auto   out = Inspect(output, "output");
  RequireImageDimension(out, name);
  CheckWords(w, out, name);
  const auto e = ExtentOf(out);
  Report     report;
  DispatchScalar(
    out,
    name,
    [&](auto tag)
    {
      using T = decltype(tag);
      const T vin = ThresholdValue<T>(inside, "inside_value", name);
      const T vout = ThresholdValue<T>(outside, "outside_value", name);
      report = RunMaskJob(
        name,
        device,
        { w },
        out,
        stream,
        e,
        { 0 },
        sizeof(T),
        [&](const void * const * x, void * y, const cif::MaskExtent & job)
        { cif::UnpackMaskCUDA(static_cast<const std::uint32_t *>(x[0]), static_cast<T *>(y), job, vin, vout); },
        [&](const void * const * x, void * y) {
          cif::UnpackMaskCPU(
            static_cast<const std::uint32_t *>(x[0]), static_cast<T *>(y), e, vin, vout, Threads(threads));
        });
    });
  return report;
}

Report
ApplyPackedMask(const InArray &     input,
                const InArray &     words,
                const OutArray &    output,
                double              outside,
                const std::string & device,
                std::uintptr_t      stream,
                int                 threads)
{
  const char * name = "apply_packed_mask";
  const auto   in = Inspect(input, "image");
  const auto   w = Inspect(words, "mask");
  const auto   out = Inspect(output, "output");
  CheckFilterArrays(in, out, name);
  CheckWords(w, in, name);
  const auto e = ExtentOf(in);
  Report     report;
  DispatchScalar(
    in,
    name,
    [&](auto tag)
    {
      using T = decltype(tag);
      const T vout = ThresholdValue<T>(outside, "outside_value", name);
      report = RunMaskJob(
        name,
        device,
        { in, w },
        out,
        stream,
        e,
        { sizeof(T), 0 },
        sizeof(T),
        [&](const void * const * x, void * y, const cif::MaskExtent & job)
        {
          cif::ApplyPackedMaskCUDA(
            static_cast<const T *>(x[0]), static_cast<const std::uint32_t *>(x[1]), static_cast<T *>(y), job, vout);
        },
        [&](const void * const * x, void * y)
        {
          cif::ApplyPackedMaskCPU(static_cast<const T *>(x[0]),
                                  static_cast<const std::uint32_t *>(x[1]),
                                  static_cast<T *>(y),
                                  e,
                                  vout,
                                  Threads(threads));
        });
    });
  return report;
}

} // namespace

void
RegisterFilters(nb::module_ & m)
{
  using namespace nb::literals;
  m.def("threshold_to_packed_mask",
        &ThresholdToPackedMask,
        "image"_a,
        "words"_a,
        "lower"_a,
        "upper"_a,
        "device"_a,
        "stream"_a,
        "threads"_a);
  m.def(
    "unpack_mask", &UnpackMask, "words"_a, "output"_a, "inside"_a, "outside"_a, "device"_a, "stream"_a, "threads"_a);
  m.def("apply_packed_mask",
        &ApplyPackedMask,
        "image"_a,
        "words"_a,
        "output"_a,
        "outside"_a,
        "device"_a,
        "stream"_a,
        "threads"_a);
  m.def("bspline_poles", &cif::BSplinePoles, "spline_order"_a);
  m.def("cubic_fir_half_width_for_tolerance", &cif::CubicFIRHalfWidthForTolerance, "tolerance"_a);
  m.def("cubic_fir_truncation_bound", &cif::CubicFIRTruncationBound, "half_width"_a);
}

} // namespace cifpy
