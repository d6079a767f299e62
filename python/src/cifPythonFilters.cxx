/*=========================================================================
 *  CudaImageFilters Python extension: the neighbourhood filters, the
 *  threshold and packed-mask filters and the B-spline prefilter. Each
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

/** A threshold given as a Python number, in the pixel type T: ITK's
 * BinaryThresholdImageFilter compares in the input type, so a value the
 * type cannot hold exactly is refused. */
template <typename T>
T
ThresholdValue(double v, const char * what, const char * function)
{
  if (std::isnan(v))
  {
    throw std::invalid_argument(std::string(function) + ": " + what + " is NaN");
  }
  if constexpr (std::is_integral<T>::value)
  {
    if (!(v >= static_cast<double>(std::numeric_limits<T>::lowest()) &&
          v <= static_cast<double>(std::numeric_limits<T>::max())) ||
        v != std::floor(v))
    {
      std::ostringstream why;
      why << function << ": " << what << " = " << v << " is not a value of the image's pixel type";
      throw std::invalid_argument(why.str());
    }
  }
  return static_cast<T>(v);
}

/** Calls f(TOut{}) for an output pixel type of the threshold filters. */
template <typename F>
void
DispatchOutput(const ArrayInfo & a, const char * function, F && f)
{
  DispatchScalar(a, function, std::forward<F>(f));
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
BinaryThreshold(const InArray &     input,
                const OutArray &    output,
                double              lower,
                double              upper,
                double              inside,
                double              outside,
                const std::string & device,
                std::uintptr_t      stream,
                int                 threads)
{
  const char * name = "binary_threshold_image_filter";
  const auto   in = Inspect(input, "image");
  const auto   out = Inspect(output, "output");
  RequireImageDimension(in, name);
  RequireSameShape(in, out, name);
  const auto e = ExtentOf(in);
  // dense arrays: the geometry of the whole, or of a slab's extent
  auto geometryOf = [](const cif::MaskExtent & extent)
  {
    cif::ElementwiseGeometry g;
    for (int a = 0; a < 3; ++a)
    {
      g.size[a] = extent.size[a];
    }
    g.inputRowPitch = g.size[0];
    g.inputSlicePitch = g.size[0] * g.size[1];
    return g;
  };
  Report report;
  DispatchScalar(
    in,
    name,
    [&](auto tagIn)
    {
      using TIn = decltype(tagIn);
      const TIn lo = ThresholdValue<TIn>(lower, "lower", name);
      const TIn hi = ThresholdValue<TIn>(upper, "upper", name);
      DispatchOutput(
        out,
        name,
        [&](auto tagOut)
        {
          using TOut = decltype(tagOut);
          const TOut vin = ThresholdValue<TOut>(inside, "inside_value", name);
          const TOut vout = ThresholdValue<TOut>(outside, "outside_value", name);
          report = RunMaskJob(
            name,
            device,
            { in },
            out,
            stream,
            e,
            { sizeof(TIn) },
            sizeof(TOut),
            [&](const void * const * x, void * y, const cif::MaskExtent & job) {
              cif::ThresholdCUDA(
                static_cast<const TIn *>(x[0]), static_cast<TOut *>(y), geometryOf(job), lo, hi, vin, vout);
            },
            [&](const void * const * x, void * y)
            {
              cif::ThresholdCPU(static_cast<const TIn *>(x[0]),
                                static_cast<TOut *>(y),
                                geometryOf(e),
                                lo,
                                hi,
                                vin,
                                vout,
                                Threads(threads));
            });
        });
    });
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

Report
BSplineDecomposition(const InArray &     input,
                     const OutArray &    output,
                     int                 splineOrder,
                     const std::string & method,
                     int                 firHalfWidth,
                     const std::string & device,
                     std::uintptr_t      stream,
                     int                 threads)
{
  const char * name = "bspline_decomposition_image_filter";
  const auto   in = Inspect(input, "image");
  const auto   out = Inspect(output, "output");
  RequireImageDimension(in, name);
  RequireSameShape(in, out, name);
  cif::PrefilterGeometry   g;
  cif::PrefilterParameters p;
  for (int a = 0; a < 3; ++a)
  {
    g.imageSize[a] = g.inputSize[a] = g.outputSize[a] = in.Size(a);
  }
  if (method == "recursive")
  {
    p.method = cif::PrefilterMethod::Recursive;
  }
  else if (method == "fir")
  {
    p.method = cif::PrefilterMethod::FIR;
    if (splineOrder != 3)
    {
      throw std::invalid_argument(std::string(name) + ": the FIR method is for spline order 3 only");
    }
  }
  else
  {
    throw std::invalid_argument(std::string(name) + ": method must be 'recursive' or 'fir', not '" + method + "'");
  }
  p.poles = cif::BSplinePoles(splineOrder);
  p.firHalfWidth = firHalfWidth;
  const std::string problem = cif::ValidatePrefilterJob(g, p);
  if (!problem.empty())
  {
    throw std::invalid_argument(std::string(name) + ": " + problem);
  }
  std::string gpuProblem = NoCudaReason(cif::PrefilterCUDAIsCompiled());
  if (splineOrder != 3)
  {
    gpuProblem = "the GPU path handles spline order 3 only, not " + std::to_string(splineOrder);
  }
  Report      report;
  std::string slabs;
  auto        run = [&](auto tagIn, auto tagOut)
  {
    using TIn = decltype(tagIn);
    using TOut = decltype(tagOut);
    // host arrays larger than the device: exact slabs (cif::RunPrefilterJobCUDA)
    const HostSlabRunner hostSlabs = [&](const std::function<void()> & whole)
    {
      slabs = cif::RunPrefilterJobCUDA<TIn, TOut>(
        true,
        [&] { return static_cast<const TIn *>(in.data); },
        [&] { return static_cast<TOut *>(out.data); },
        g,
        p,
        whole);
    };
    report = RunJob(
      name,
      device,
      gpuProblem,
      { in },
      { out },
      stream,
      [&](const JobPointers & q)
      { cif::PrefilterCUDA(static_cast<const TIn *>(q.in[0]), static_cast<TOut *>(q.out[0]), g, p); },
      [&](const JobPointers & q)
      { cif::PrefilterCPU(static_cast<const TIn *>(q.in[0]), static_cast<TOut *>(q.out[0]), g, p, Threads(threads)); },
      nullptr,
      hostSlabs);
  };
  auto withOutput = [&](auto tagIn)
  {
    if (out.pixel == Pixel::Float32)
      run(tagIn, 0.0f);
    else if (out.pixel == Pixel::Float64)
      run(tagIn, 0.0);
    else
      throw nb::type_error((std::string(name) + ": the coefficients are float32 or float64").c_str());
  };
  switch (in.pixel)
  {
    case Pixel::UInt8:
      withOutput(static_cast<unsigned char>(0));
      break;
    case Pixel::Int16:
      withOutput(static_cast<short>(0));
      break;
    case Pixel::UInt16:
      withOutput(static_cast<unsigned short>(0));
      break;
    case Pixel::Float32:
      withOutput(0.0f);
      break;
    case Pixel::Float64:
      if (out.pixel != Pixel::Float64)
      {
        throw nb::type_error((std::string(name) + ": float64 images give float64 coefficients").c_str());
      }
      run(0.0, 0.0);
      break;
    default:
      throw nb::type_error((std::string(name) + ": pixel type " + in.dtype +
                            " is not supported; use uint8, int16, uint16, float32 or float64")
                             .c_str());
  }
  AddSlabs(report, slabs);
  return report;
}

} // namespace

void
RegisterFilters(nb::module_ & m)
{
  using namespace nb::literals;
  m.def("binary_threshold",
        &BinaryThreshold,
        "image"_a,
        "output"_a,
        "lower"_a,
        "upper"_a,
        "inside"_a,
        "outside"_a,
        "device"_a,
        "stream"_a,
        "threads"_a);
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
  m.def("bspline_decomposition",
        &BSplineDecomposition,
        "image"_a,
        "output"_a,
        "spline_order"_a,
        "method"_a,
        "fir_half_width"_a,
        "device"_a,
        "stream"_a,
        "threads"_a);
  m.def("bspline_poles", &cif::BSplinePoles, "spline_order"_a);
  m.def("cubic_fir_half_width_for_tolerance", &cif::CubicFIRHalfWidthForTolerance, "tolerance"_a);
  m.def("cubic_fir_truncation_bound", &cif::CubicFIRTruncationBound, "half_width"_a);
}

} // namespace cifpy
