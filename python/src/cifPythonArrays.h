/*=========================================================================
 *  CudaImageFilters Python extension: arrays in, the core's calls, reports
 *  out. Every binding goes through RunJob, which decides GPU or CPU with
 *  the core's own logic (cif::RunWithFallback), moves host arrays to the
 *  device and back when the GPU runs, keeps GPU arrays (CuPy, torch) where
 *  they are on the caller's stream, and copies them to the host and back
 *  only when the CPU must run (automatic mode, the GPU unable or out of
 *  memory: the report says so).
 *=========================================================================*/
#ifndef cifPythonArrays_h
#define cifPythonArrays_h

#include "cif/Execution.h"
#include "cif/Runtime.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace cifpy
{
namespace nb = nanobind;

/** Any array that speaks DLPack or the buffer protocol (NumPy, CuPy, torch), read-only. */
using InArray = nb::ndarray<nb::ro>;
/** The same, written to. */
using OutArray = nb::ndarray<>;

/** The pixel types the bindings know. */
enum class Pixel
{
  UInt8,
  Int16,
  UInt16,
  UInt32,
  Float32,
  Float64,
  Other
};

/** What a binding needs to know of one array. */
struct ArrayInfo
{
  void *       data{ nullptr };
  std::size_t  bytes{ 0 };
  int          ndim{ 0 };
  std::int64_t shape[4]{ 1, 1, 1, 1 }; ///< as the array has it (slowest axis first)
  Pixel        pixel{ Pixel::Other };
  bool         onGpu{ false };
  int          device{ -1 }; ///< the CUDA device of a GPU array (-1 in host memory)
  std::string  name;  ///< for messages: "image", "mask", ...
  std::string  dtype; ///< the array's element type, for messages ("int32", "complex64", ...)
  /** Size along x, y, z (fastest first) of an image array of `ndim` axes. */
  std::int64_t
  Size(int axis) const
  {
    return axis < ndim ? shape[ndim - 1 - axis] : 1;
  }
  std::int64_t
  Count() const
  {
    std::int64_t n = 1;
    for (int a = 0; a < ndim; ++a)
    {
      n *= shape[a];
    }
    return n;
  }
};

const char *
PixelName(Pixel pixel);

/** Reads an array's layout; throws std::invalid_argument (ValueError) for
 * non-contiguous arrays, arrays on a device other than the CPU or a CUDA
 * device, and more than 4 axes. */
ArrayInfo
Inspect(const InArray & array, const char * name);
ArrayInfo
Inspect(const OutArray & array, const char * name);

/** The CUDA device of a call's GPU arrays, -1 when none is on the GPU;
 * throws std::invalid_argument (ValueError) when they are on different
 * devices. */
int
CommonGpuDevice(const char * function, const std::vector<const ArrayInfo *> & arrays);

/** For the length of a call on GPU arrays: their CUDA device current
 * (cif::DeviceScope, `device` -1 changes nothing) and then the caller's
 * stream, a stream of that device, current on it (cif::StreamScope). Host
 * arrays run on the calling thread's current device (CuPy's
 * `with cupy.cuda.Device(n)` sets it) with the default stream. */
class GpuCallScope
{
public:
  GpuCallScope(int device, void * stream)
    : m_Device(device)
    , m_Stream(stream)
  {}

private:
  cif::DeviceScope m_Device;
  cif::StreamScope m_Stream;
};

/** Parses "auto" / "gpu" / "cpu"; throws std::invalid_argument otherwise. */
cif::ExecutionMode
ParseMode(const std::string & text);

/** What a call reports: (device "GPU" or "CPU", message, fell back after out of memory). */
using Report = std::tuple<std::string, std::string, bool>;

Report
ToReport(const cif::ExecutionReport & report);

/** Threads for the CPU cores: `requested` if positive, else the hardware's. */
int
Threads(int requested);

/** Pointers handed to a job's GPU or CPU body: inputs, then outputs, all on
 * the side the body runs on. */
struct JobPointers
{
  std::vector<const void *> in;
  std::vector<void *>       out;
};

using JobBody = std::function<void(const JobPointers &)>;

/** For host arrays on the GPU: runs `whole` (RunJob's upload, GPU body and
 * download), or the job in slabs straight from the host arrays when it does
 * not fit the device (cif::RunNeighbourhoodJobCUDA). */
using HostSlabRunner = std::function<void(const std::function<void()> & whole)>;

/** Runs a job. `inputs` and `outputs` must all be host arrays or all GPU
 * arrays. `gpuUnsupported` is empty when the GPU body can run the request,
 * else why not. `stream` is the caller's CUDA stream (GPU arrays; 0 = the
 * legacy default stream). `note` (optional) is appended to the report's
 * message. `hostSlabs` (optional) runs host arrays' GPU job, whole or in
 * slabs. Releases the GIL while the job runs. */
Report
RunJob(const char *                   name,
       const std::string &            mode,
       const std::string &            gpuUnsupported,
       const std::vector<ArrayInfo> & inputs,
       const std::vector<ArrayInfo> & outputs,
       std::uintptr_t                 stream,
       const JobBody &                onGpu,
       const JobBody &                onCpu,
       const std::string *            note = nullptr,
       const HostSlabRunner &         hostSlabs = {});

/** Checks that `a` has pixel type `pixel`. */
void
RequirePixel(const ArrayInfo & a, Pixel pixel, const char * function);

/** Checks that two image arrays have the same shape. */
void
RequireSameShape(const ArrayInfo & a, const ArrayInfo & b, const char * function);

/** Checks that an image array has 1 to 3 axes. */
void
RequireImageDimension(const ArrayInfo & a, const char * function);

/** Calls f(T{}) with T the C++ type of the array's pixels among uint8,
 * int16, uint16, float32 (the neighbourhood filters' types); throws otherwise. */
template <typename F>
void
DispatchScalar(const ArrayInfo & a, const char * function, F && f)
{
  switch (a.pixel)
  {
    case Pixel::UInt8:
      f(static_cast<unsigned char>(0));
      return;
    case Pixel::Int16:
      f(static_cast<short>(0));
      return;
    case Pixel::UInt16:
      f(static_cast<unsigned short>(0));
      return;
    case Pixel::Float32:
      f(0.0f);
      return;
    default:
      throw nb::type_error(
        (std::string(function) + ": pixel type " + a.dtype + " is not supported; use uint8, int16, uint16 or float32")
          .c_str());
  }
}

/** A D x D matrix given row by row as D * D values, into a 3 x 3 one;
 * throws std::invalid_argument naming `function` and `what` otherwise. */
inline void
SquareMatrix(const std::vector<double> & values, int d, double out[3][3], const char * function, const char * what)
{
  if (values.size() != static_cast<std::size_t>(d * d))
  {
    throw std::invalid_argument(std::string(function) + ": " + what + " needs " + std::to_string(d * d) + " values");
  }
  for (int r = 0; r < d; ++r)
  {
    for (int c = 0; c < d; ++c)
    {
      out[r][c] = values[static_cast<std::size_t>(r * d + c)];
    }
  }
}

/** Three per-axis values (x, y, z) from a Python sequence of 1 to 3 numbers. */
template <typename T>
void
Axes(const std::vector<T> & values, T out[3], T fill, const char * what)
{
  if (values.size() > 3)
  {
    throw std::invalid_argument(std::string(what) + ": at most 3 values");
  }
  for (int a = 0; a < 3; ++a)
  {
    out[a] = a < static_cast<int>(values.size()) ? values[a] : fill;
  }
}

void
RegisterFilters(nb::module_ & m);
void
RegisterResample(nb::module_ & m);
void
RegisterGaussianRBF(nb::module_ & m);
void
RegisterKernelSuperposition(nb::module_ & m);
void
RegisterDemons(nb::module_ & m);
void
RegisterMetric(nb::module_ & m);
void
RegisterDescribed(nb::module_ & m);

} // namespace cifpy

#endif
