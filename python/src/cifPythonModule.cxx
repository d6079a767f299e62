/*=========================================================================
 *  CudaImageFilters Python extension: the module, its exceptions, the
 *  runtime queries and the job runner shared by every binding.
 *=========================================================================*/
#include "cifPythonArrays.h"

#include "cif/CudaError.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <algorithm>
#include <memory>

namespace cifpy
{

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
    case Pixel::UInt32:
      return "uint32";
    case Pixel::Float32:
      return "float32";
    case Pixel::Float64:
      return "float64";
    default:
      return "an unsupported type";
  }
}

namespace
{
Pixel
PixelOf(nb::dlpack::dtype t)
{
  using code = nb::dlpack::dtype_code;
  const auto c = static_cast<code>(t.code);
  if (t.lanes != 1)
  {
    return Pixel::Other;
  }
  if (c == code::UInt && t.bits == 8)
    return Pixel::UInt8;
  if (c == code::Int && t.bits == 16)
    return Pixel::Int16;
  if (c == code::UInt && t.bits == 16)
    return Pixel::UInt16;
  if (c == code::UInt && t.bits == 32)
    return Pixel::UInt32;
  if (c == code::Float && t.bits == 32)
    return Pixel::Float32;
  if (c == code::Float && t.bits == 64)
    return Pixel::Float64;
  return Pixel::Other;
}

std::string
DtypeName(nb::dlpack::dtype t)
{
  using code = nb::dlpack::dtype_code;
  std::string name;
  switch (static_cast<code>(t.code))
  {
    case code::Int:
      name = "int";
      break;
    case code::UInt:
      name = "uint";
      break;
    case code::Float:
      name = "float";
      break;
    case code::Bool:
      return "bool";
    case code::Complex:
      name = "complex";
      break;
    default:
      name = "type" + std::to_string(static_cast<int>(t.code)) + "_";
  }
  name += std::to_string(t.bits);
  if (t.lanes != 1)
  {
    name += "x" + std::to_string(t.lanes);
  }
  return name;
}

template <typename TArray>
ArrayInfo
InspectAny(const TArray & array, const char * name)
{
  ArrayInfo a;
  a.name = name;
  a.ndim = static_cast<int>(array.ndim());
  if (a.ndim > 4)
  {
    throw std::invalid_argument(std::string(name) + ": at most 4 axes, not " + std::to_string(a.ndim));
  }
  const auto device = array.device_type();
  if (device == nb::device::cuda::value)
  {
    a.onGpu = true;
    a.device = static_cast<int>(array.device_id());
  }
  else if (device != nb::device::cpu::value)
  {
    throw std::invalid_argument(std::string(name) + ": arrays in CPU memory or on a CUDA device only");
  }
  a.pixel = PixelOf(array.dtype());
  a.dtype = DtypeName(array.dtype());
  // C order (the slowest axis first), dense; strides are in elements
  std::int64_t expected = 1;
  for (int d = a.ndim - 1; d >= 0; --d)
  {
    a.shape[d] = static_cast<std::int64_t>(array.shape(d));
    if (a.shape[d] != 1 && array.stride(d) != expected)
    {
      throw std::invalid_argument(std::string(name) + " is not C-contiguous");
    }
    expected *= a.shape[d];
  }
  a.data = const_cast<void *>(static_cast<const void *>(array.data()));
  a.bytes = static_cast<std::size_t>(array.nbytes());
  return a;
}
} // namespace

ArrayInfo
Inspect(const InArray & array, const char * name)
{
  return InspectAny(array, name);
}

ArrayInfo
Inspect(const OutArray & array, const char * name)
{
  return InspectAny(array, name);
}

cif::ExecutionMode
ParseMode(const std::string & text)
{
  cif::ExecutionMode mode;
  if (!cif::ExecutionModeFromString(text, mode))
  {
    throw std::invalid_argument("device must be 'auto', 'gpu' or 'cpu', not '" + text + "'");
  }
  return mode;
}

Report
ToReport(const cif::ExecutionReport & report)
{
  return Report(report.Device == cif::ExecutedOn::GPU ? "GPU" : "CPU", report.Message, report.FellBackAfterOutOfMemory);
}

int
Threads(int requested)
{
  if (requested > 0)
  {
    return requested;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

void
RequirePixel(const ArrayInfo & a, Pixel pixel, const char * function)
{
  if (a.pixel != pixel)
  {
    throw nb::type_error(
      (std::string(function) + ": " + a.name + " must be " + PixelName(pixel) + ", not " + a.dtype).c_str());
  }
}

void
RequireSameShape(const ArrayInfo & a, const ArrayInfo & b, const char * function)
{
  bool same = a.ndim == b.ndim;
  for (int d = 0; same && d < a.ndim; ++d)
  {
    same = a.shape[d] == b.shape[d];
  }
  if (!same)
  {
    throw std::invalid_argument(std::string(function) + ": " + a.name + " and " + b.name + " must have the same shape");
  }
}

void
RequireImageDimension(const ArrayInfo & a, const char * function)
{
  if (a.ndim < 1 || a.ndim > 3)
  {
    throw std::invalid_argument(std::string(function) + ": images of 1 to 3 axes, not " + std::to_string(a.ndim));
  }
  if (a.Count() == 0)
  {
    throw std::invalid_argument(std::string(function) + ": the " + a.name + " is empty");
  }
}

namespace
{
/** Host copies of device arrays (or device copies of host arrays), made for
 * the side the body runs on. */
struct Staging
{
  std::vector<std::unique_ptr<unsigned char[]>> host;
  std::vector<cif::DeviceBuffer>                device;
};
} // namespace

int
CommonGpuDevice(const char * function, const std::vector<const ArrayInfo *> & arrays)
{
  const ArrayInfo * first = nullptr;
  for (const ArrayInfo * a : arrays)
  {
    if (a == nullptr || !a->onGpu)
    {
      continue;
    }
    if (first == nullptr)
    {
      first = a;
    }
    else if (a->device != first->device)
    {
      throw std::invalid_argument(std::string(function) + ": the " + first->name + " is on CUDA device " +
                                  std::to_string(first->device) + " and the " + a->name + " on CUDA device " +
                                  std::to_string(a->device) + "; they must be on one device");
    }
  }
  return first != nullptr ? first->device : -1;
}

Report
RunJob(const char *                   name,
       const std::string &            modeText,
       const std::string &            gpuUnsupported,
       const std::vector<ArrayInfo> & inputs,
       const std::vector<ArrayInfo> & outputs,
       std::uintptr_t                 stream,
       const JobBody &                onGpu,
       const JobBody &                onCpu,
       const std::string *            note,
       const HostSlabRunner &         hostSlabs)
{
  const cif::ExecutionMode mode = ParseMode(modeText);
  bool                     anyGpu = false, anyHost = false;
  for (const auto * list : { &inputs, &outputs })
  {
    for (const auto & a : *list)
    {
      (a.onGpu ? anyGpu : anyHost) = true;
    }
  }
  if (anyGpu && anyHost)
  {
    throw std::invalid_argument(std::string(name) + ": the arrays must all be on the GPU or all in host memory");
  }
  if (anyGpu && mode == cif::ExecutionMode::CPU)
  {
    throw std::invalid_argument(std::string(name) +
                                ": device='cpu' was asked for GPU arrays; copy them to the host first "
                                "(cupy.asnumpy, tensor.cpu()) or use device='auto' or 'gpu'");
  }

  // the body's note (the kernel it chose) joins the report before it is
  // printed (cif::RunWithFallback)
  const auto addNote = [note](cif::ExecutionReport & r)
  {
    if (note != nullptr)
    {
      r.AddNote(*note);
    }
  };
  cif::ExecutionReport report;
  {
    nb::gil_scoped_release release;
    if (!anyGpu)
    {
      // host arrays: upload, run, download on the GPU (or slabs, for a job
      // larger than the device); or the CPU core in place
      auto whole = [&]
      {
        Staging     s;
        JobPointers p;
        for (const auto & a : inputs)
        {
          s.device.emplace_back(a.bytes);
          s.device.back().CopyFromHost(a.data, a.bytes);
          p.in.push_back(s.device.back().GetPointer());
        }
        for (const auto & a : outputs)
        {
          s.device.emplace_back(a.bytes);
          p.out.push_back(s.device.back().GetPointer());
        }
        onGpu(p);
        for (std::size_t k = 0; k < outputs.size(); ++k)
        {
          s.device[inputs.size() + k].CopyToHost(outputs[k].data, outputs[k].bytes);
        }
      };
      auto gpu = [&]
      {
        if (hostSlabs)
        {
          hostSlabs(whole);
        }
        else
        {
          whole();
        }
      };
      auto cpu = [&]
      {
        JobPointers p;
        for (const auto & a : inputs)
        {
          p.in.push_back(a.data);
        }
        for (const auto & a : outputs)
        {
          p.out.push_back(a.data);
        }
        onCpu(p);
      };
      report = cif::RunWithFallback(mode, gpuUnsupported, name, gpu, cpu, addNote);
    }
    else
    {
      // GPU arrays: in place on the caller's stream; the CPU only in
      // automatic mode, through host copies
      std::vector<const ArrayInfo *> all;
      for (const auto * list : { &inputs, &outputs })
      {
        for (const auto & a : *list)
        {
          all.push_back(&a);
        }
      }
      GpuCallScope     scope(CommonGpuDevice(name, all), reinterpret_cast<void *>(stream));
      auto             gpu = [&]
      {
        JobPointers p;
        for (const auto & a : inputs)
        {
          p.in.push_back(a.data);
        }
        for (const auto & a : outputs)
        {
          p.out.push_back(a.data);
        }
        onGpu(p);
      };
      auto cpu = [&]
      {
        Staging     s;
        JobPointers p;
        for (const auto & a : inputs)
        {
          s.host.emplace_back(new unsigned char[std::max<std::size_t>(a.bytes, 1)]);
          cif::Runtime::CopyDeviceToHost(s.host.back().get(), a.data, a.bytes);
          p.in.push_back(s.host.back().get());
        }
        for (const auto & a : outputs)
        {
          s.host.emplace_back(new unsigned char[std::max<std::size_t>(a.bytes, 1)]);
          p.out.push_back(s.host.back().get());
        }
        onCpu(p);
        for (std::size_t k = 0; k < outputs.size(); ++k)
        {
          cif::Runtime::CopyHostToDevice(outputs[k].data, s.host[inputs.size() + k].get(), outputs[k].bytes);
        }
      };
      report = cif::RunWithFallback(mode,
                                    gpuUnsupported,
                                    name,
                                    gpu,
                                    cpu,
                                    [&](cif::ExecutionReport & r)
                                    {
                                      if (r.Device == cif::ExecutedOn::CPU)
                                      {
                                        r.AddNote("the GPU arrays were copied to the host and back");
                                      }
                                      addNote(r);
                                    });
    }
  }
  return ToReport(report);
}

} // namespace cifpy

NB_MODULE(_cif, m)
{
  namespace nb = nanobind;
  using namespace cifpy;
  m.doc() = "CudaImageFilters' core (cif) for Python: use the functions of the cudaimagefilters package.";

  // Exceptions: the translators run newest first, so the base comes first.
  static nb::exception<cif::CudaFailure>     cudaError(m, "CudaError", PyExc_RuntimeError);
  static nb::exception<cif::CudaOutOfMemory> outOfMemory(m, "CudaOutOfMemoryError", PyExc_MemoryError);
  static nb::exception<cif::GpuUnavailable>  gpuUnavailable(m, "GpuUnavailableError", PyExc_RuntimeError);

  m.def("is_compiled_with_cuda", &cif::Runtime::IsCompiledWithCuda, "True when the extension was built with nvcc.");
  m.def("is_device_available", &cif::Runtime::IsDeviceAvailable, "True when a usable CUDA device exists.");
  m.def("unavailable_reason", &cif::Runtime::GetUnavailableReason, "Why no GPU is used ('' when one is).");
  m.def("device_description", &cif::Runtime::GetDeviceDescription, "The GPU's name, compute capability and memory.");
  m.def("free_device_memory", &cif::Runtime::GetFreeMemory);
  m.def("set_allocation_limit",
        &cif::Runtime::SetAllocationLimit,
        "Caps the device memory the module's own allocations may hold (bytes, 0 = no cap); for tests.");
  m.def("get_allocation_limit", &cif::Runtime::GetAllocationLimit);
  m.def(
    "transfer_counters",
    []
    {
      const auto c = cif::Runtime::GetTransferCounters();
      return std::make_tuple(c.HostToDeviceCount, c.HostToDeviceBytes, c.DeviceToHostCount, c.DeviceToHostBytes);
    },
    "(host-to-device copies, bytes, device-to-host copies, bytes) the module made since the last reset.");
  m.def("reset_transfer_counters", &cif::Runtime::ResetTransferCounters);
  m.def(
    "decide_gpu",
    [](const std::string & mode, const std::string & gpuUnsupported, const std::string & name)
    {
      std::string why;
      const bool  gpu = cif::DecideGpu(ParseMode(mode), gpuUnsupported, name.c_str(), why);
      return std::make_tuple(gpu, why);
    },
    "(run on the GPU?, why not) for a device mode and a reason the GPU cannot run ('' if it can); raises "
    "GpuUnavailableError in mode 'gpu' when it cannot.");

  RegisterFilters(m);
  RegisterResample(m);
  RegisterGaussianRBF(m);
  RegisterKernelSuperposition(m);
  RegisterDemons(m);
  RegisterMetric(m);
  RegisterDescribed(m);
}
