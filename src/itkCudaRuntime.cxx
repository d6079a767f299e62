/*=========================================================================
 *  CudaImageFilters: the CUDA runtime layer (device discovery, errors,
 *  allocations, transfers). Compiled with or without CUDA.
 *=========================================================================*/
#include "itkCudaRuntime.h"
#include "cifCudaError.h"
#include "cifExecution.h"
#include "cifRuntimeInternal.h"
#include "cifStagedCopy.h"

#include <atomic>
#include <mutex>
#include <ostream>
#include <sstream>

#ifdef CUDAIMAGEFILTERS_WITH_CUDA
#  include <cuda_runtime.h>
#endif

namespace cif
{
void
ThrowCudaFailure(int code, const char * expression, const char * file, int line)
{
  std::ostringstream where;
  where << file << ':' << line << " (" << expression << ')';
  std::string message;
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
  const auto status = static_cast<cudaError_t>(code);
  message = std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
  if (status == cudaErrorMemoryAllocation)
  {
    cudaGetLastError(); // an allocation failure is not sticky: clear it
    throw CudaOutOfMemory(code, message, where.str());
  }
#else
  message = "CUDA error " + std::to_string(code);
#endif
  throw CudaFailure(code, message, where.str());
}

namespace
{
thread_local void * t_CurrentStream = nullptr;
}

void *
CurrentStream() noexcept
{
  return t_CurrentStream;
}

StreamScope::StreamScope(void * stream) noexcept
  : m_Previous(t_CurrentStream)
{
  t_CurrentStream = stream;
}

StreamScope::~StreamScope()
{
  t_CurrentStream = m_Previous;
}

bool
DecideGpu(itk::CudaExecutionMode mode, const std::string & gpuUnsupported, const char * name, std::string & why)
{
  why.clear();
  if (mode == itk::CudaExecutionMode::CPU)
  {
    return false;
  }
  if (!itk::CudaRuntime::IsDeviceAvailable())
  {
    why = itk::CudaRuntime::GetUnavailableReason();
  }
  else if (!gpuUnsupported.empty())
  {
    why = gpuUnsupported;
  }
  if (why.empty())
  {
    return true;
  }
  if (mode == itk::CudaExecutionMode::GPU)
  {
    throw GpuUnavailable(std::string(name) + ": GPU execution was requested but is impossible: " + why);
  }
  return false;
}
} // namespace cif

namespace itk
{

std::ostream &
operator<<(std::ostream & os, CudaExecutionMode mode)
{
  switch (mode)
  {
    case CudaExecutionMode::Automatic:
      return os << "Automatic";
    case CudaExecutionMode::GPU:
      return os << "GPU";
    case CudaExecutionMode::CPU:
      return os << "CPU";
  }
  return os << "Unknown";
}

std::ostream &
operator<<(std::ostream & os, CudaExecutedOn device)
{
  switch (device)
  {
    case CudaExecutedOn::None:
      return os << "None";
    case CudaExecutedOn::GPU:
      return os << "GPU";
    case CudaExecutedOn::CPU:
      return os << "CPU";
  }
  return os << "Unknown";
}

bool
CudaExecutionModeFromString(const std::string & text, CudaExecutionMode & mode)
{
  if (text == "auto" || text == "automatic")
  {
    mode = CudaExecutionMode::Automatic;
  }
  else if (text == "gpu" || text == "cuda")
  {
    mode = CudaExecutionMode::GPU;
  }
  else if (text == "cpu")
  {
    mode = CudaExecutionMode::CPU;
  }
  else
  {
    return false;
  }
  return true;
}

namespace
{
struct DeviceState
{
  bool        available{ false };
  std::string reason;
  std::string description{ "none" };
  std::size_t sharedMemoryPerBlockOptin{ 0 };
};

const DeviceState &
QueryDevice()
{
  static const DeviceState state = []
  {
    DeviceState s;
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
    int        count = 0;
    const auto status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess)
    {
      // No driver or no device: that is "no GPU", not an error.
      s.reason =
        std::string("no usable CUDA device (") + cudaGetErrorName(status) + ": " + cudaGetErrorString(status) + ")";
      cudaGetLastError();
      return s;
    }
    if (count == 0)
    {
      s.reason = "no CUDA device found";
      return s;
    }
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess || cudaSetDevice(0) != cudaSuccess)
    {
      s.reason = "CUDA device 0 could not be opened";
      cudaGetLastError();
      return s;
    }
    std::ostringstream d;
    d << prop.name << " (sm_" << prop.major << prop.minor << ", " << prop.multiProcessorCount << " SMs, "
      << (static_cast<double>(prop.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0)) << " GiB)";
    s.description = d.str();
    s.sharedMemoryPerBlockOptin = prop.sharedMemPerBlockOptin;
    s.available = true;
#else
    s.reason = "CudaImageFilters was built without CUDA";
#endif
    return s;
  }();
  return state;
}

#ifdef CUDAIMAGEFILTERS_WITH_CUDA
cudaStream_t
CurrentCudaStream()
{
  return static_cast<cudaStream_t>(cif::CurrentStream());
}
#endif

std::atomic<std::size_t> g_AllocationLimit{ 0 };
std::atomic<std::size_t> g_BytesAllocated{ 0 };
std::mutex               g_CounterMutex;
CudaTransferCounters     g_Counters;

void
CountTransfer(bool toDevice, std::size_t bytes)
{
  std::lock_guard<std::mutex> lock(g_CounterMutex);
  if (toDevice)
  {
    ++g_Counters.HostToDeviceCount;
    g_Counters.HostToDeviceBytes += bytes;
  }
  else
  {
    ++g_Counters.DeviceToHostCount;
    g_Counters.DeviceToHostBytes += bytes;
  }
}

[[noreturn]] void
ThrowNoCuda(const char * what)
{
  throw cif::CudaFailure(-1, std::string(what) + ": " + CudaRuntime::GetUnavailableReason(), "CudaImageFilters");
}
} // namespace

void
CudaCountTransfer(bool toDevice, std::size_t bytes)
{
  CountTransfer(toDevice, bytes);
}

bool
CudaRuntime::IsCompiledWithCuda()
{
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
  return true;
#else
  return false;
#endif
}

bool
CudaRuntime::IsDeviceAvailable()
{
  return QueryDevice().available;
}

std::string
CudaRuntime::GetUnavailableReason()
{
  return QueryDevice().reason;
}

std::string
CudaRuntime::GetDeviceDescription()
{
  return QueryDevice().description;
}

std::size_t
CudaRuntime::GetMaxSharedMemoryPerBlock()
{
  return QueryDevice().sharedMemoryPerBlockOptin;
}

std::size_t
CudaRuntime::GetFreeMemory()
{
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
  std::size_t freeBytes = 0, totalBytes = 0;
  if (IsDeviceAvailable() && cudaMemGetInfo(&freeBytes, &totalBytes) == cudaSuccess)
  {
    return freeBytes;
  }
#endif
  return 0;
}

std::size_t
CudaRuntime::GetTotalMemory()
{
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
  std::size_t freeBytes = 0, totalBytes = 0;
  if (IsDeviceAvailable() && cudaMemGetInfo(&freeBytes, &totalBytes) == cudaSuccess)
  {
    return totalBytes;
  }
#endif
  return 0;
}

void
CudaRuntime::SetAllocationLimit(std::size_t bytes)
{
  g_AllocationLimit = bytes;
}

std::size_t
CudaRuntime::GetAllocationLimit()
{
  return g_AllocationLimit;
}

std::size_t
CudaRuntime::GetBytesAllocated()
{
  return g_BytesAllocated;
}

CudaTransferCounters
CudaRuntime::GetTransferCounters()
{
  std::lock_guard<std::mutex> lock(g_CounterMutex);
  return g_Counters;
}

void
CudaRuntime::ResetTransferCounters()
{
  std::lock_guard<std::mutex> lock(g_CounterMutex);
  g_Counters = CudaTransferCounters{};
}

void
CudaRuntime::CopyHostToDevice(void * device, const void * host, std::size_t bytes)
{
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
  if (bytes == 0)
  {
    return;
  }
  cif::StagedCopyToDevice(device, host, bytes, CurrentCudaStream());
  CountTransfer(true, bytes);
#else
  (void)device;
  (void)host;
  (void)bytes;
  ThrowNoCuda("cannot copy to the device");
#endif
}

void
CudaRuntime::CopyDeviceToHost(void * host, const void * device, std::size_t bytes)
{
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
  if (bytes == 0)
  {
    return;
  }
  cif::StagedCopyToHost(host, device, bytes, CurrentCudaStream());
  CountTransfer(false, bytes);
#else
  (void)device;
  (void)host;
  (void)bytes;
  ThrowNoCuda("cannot copy from the device");
#endif
}

void
CudaRuntime::SetStagingLanes(int lanes)
{
  cif::SetStagingLanes(lanes);
}

int
CudaRuntime::GetStagingLanes()
{
  return cif::GetStagingLanes();
}

void
CudaRuntime::SetStagingChunkBytes(std::size_t bytes)
{
  cif::SetStagingChunkBytes(bytes);
}

std::size_t
CudaRuntime::GetStagingChunkBytes()
{
  return cif::GetStagingChunkBytes();
}

void
CudaRuntime::Synchronize()
{
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
  if (IsDeviceAvailable())
  {
    CIF_CUDA_CHECK(cudaDeviceSynchronize());
  }
#endif
}

// ---------------------------------------------------------------------------
CudaDeviceBuffer::~CudaDeviceBuffer()
{
  this->Release();
}

CudaDeviceBuffer::CudaDeviceBuffer(CudaDeviceBuffer && other) noexcept
  : m_Pointer(other.m_Pointer)
  , m_Size(other.m_Size)
{
  other.m_Pointer = nullptr;
  other.m_Size = 0;
}

CudaDeviceBuffer &
CudaDeviceBuffer::operator=(CudaDeviceBuffer && other) noexcept
{
  if (this != &other)
  {
    this->Release();
    m_Pointer = other.m_Pointer;
    m_Size = other.m_Size;
    other.m_Pointer = nullptr;
    other.m_Size = 0;
  }
  return *this;
}

void
CudaDeviceBuffer::Allocate(std::size_t bytes)
{
  this->Release();
  if (bytes == 0)
  {
    return;
  }
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
  if (!CudaRuntime::IsDeviceAvailable())
  {
    ThrowNoCuda("cannot allocate device memory");
  }
  const std::size_t limit = g_AllocationLimit;
  if (limit != 0 && g_BytesAllocated + bytes > limit)
  {
    std::ostringstream msg;
    msg << "cudaErrorMemoryAllocation: out of memory (allocation of " << bytes
        << " bytes exceeds the module's limit of " << limit << " bytes)";
    throw cif::CudaOutOfMemory(static_cast<int>(cudaErrorMemoryAllocation), msg.str(), "CudaDeviceBuffer::Allocate");
  }
  void *     p = nullptr;
  const auto status = cudaMalloc(&p, bytes);
  if (status != cudaSuccess)
  {
    cudaGetLastError();
    std::ostringstream msg;
    msg << cudaGetErrorName(status) << ": " << cudaGetErrorString(status) << " (allocating " << bytes << " bytes, "
        << CudaRuntime::GetFreeMemory() << " bytes free)";
    if (status == cudaErrorMemoryAllocation)
    {
      throw cif::CudaOutOfMemory(static_cast<int>(status), msg.str(), "CudaDeviceBuffer::Allocate");
    }
    throw cif::CudaFailure(static_cast<int>(status), msg.str(), "CudaDeviceBuffer::Allocate");
  }
  m_Pointer = p;
  m_Size = bytes;
  g_BytesAllocated += bytes;
#else
  ThrowNoCuda("cannot allocate device memory");
#endif
}

void
CudaDeviceBuffer::Release() noexcept
{
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
  if (m_Pointer != nullptr)
  {
    cudaFree(m_Pointer); // a failure here has no one to report to
    g_BytesAllocated -= m_Size;
  }
#endif
  m_Pointer = nullptr;
  m_Size = 0;
}

void
CudaDeviceBuffer::CopyFromHost(const void * source, std::size_t bytes)
{
  if (bytes > m_Size)
  {
    throw cif::CudaFailure(-1, "copy larger than the device buffer", "CudaDeviceBuffer::CopyFromHost");
  }
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
  CudaRuntime::CopyHostToDevice(m_Pointer, source, bytes);
#else
  (void)source;
  ThrowNoCuda("cannot copy to the device");
#endif
}

void
CudaDeviceBuffer::CopyToHost(void * destination, std::size_t bytes) const
{
  if (bytes > m_Size)
  {
    throw cif::CudaFailure(-1, "copy larger than the device buffer", "CudaDeviceBuffer::CopyToHost");
  }
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
  CudaRuntime::CopyDeviceToHost(destination, m_Pointer, bytes);
#else
  (void)destination;
  ThrowNoCuda("cannot copy from the device");
#endif
}

void
CudaDeviceBuffer::CopyToDevice(void * destination, std::size_t bytes) const
{
  if (bytes > m_Size)
  {
    throw cif::CudaFailure(-1, "copy larger than the device buffer", "CudaDeviceBuffer::CopyToDevice");
  }
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
  CIF_CUDA_CHECK(cudaMemcpyAsync(destination, m_Pointer, bytes, cudaMemcpyDeviceToDevice, CurrentCudaStream()));
  CIF_CUDA_CHECK(cudaStreamSynchronize(CurrentCudaStream()));
#else
  (void)destination;
  ThrowNoCuda("cannot copy on the device");
#endif
}

void
CudaDeviceBuffer::FillBytes(int value)
{
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
  if (m_Pointer != nullptr)
  {
    CIF_CUDA_CHECK(cudaMemsetAsync(m_Pointer, value, m_Size, CurrentCudaStream()));
    CIF_CUDA_CHECK(cudaStreamSynchronize(CurrentCudaStream()));
  }
#else
  (void)value;
#endif
}

} // namespace itk
