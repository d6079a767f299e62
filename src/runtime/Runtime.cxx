/*=========================================================================
 *  CudaImageFilters: the CUDA runtime layer (device discovery, errors,
 *  allocations, transfers). Compiled with or without CUDA.
 *=========================================================================*/
#include "cif/Runtime.h"
#include "cif/CudaError.h"
#include "cif/Execution.h"
#include "cif/PooledBuffer.h"
#include "cifRuntimeInternal.h"
#include "cifStagedCopy.h"

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <ostream>
#include <sstream>
#include <vector>

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

DeviceScope::DeviceScope(int device)
{
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
  if (device < 0 || !Runtime::IsDeviceAvailable())
  {
    return;
  }
  const std::string problem = Runtime::GetDeviceProblem(device);
  if (!problem.empty())
  {
    throw CudaFailure(static_cast<int>(cudaErrorInvalidDevice), problem, "DeviceScope");
  }
  CIF_CUDA_CHECK(cudaGetDevice(&m_Previous));
  if (m_Previous != device)
  {
    CIF_CUDA_CHECK(cudaSetDevice(device));
    m_Switched = true;
    m_PreviousStream = t_CurrentStream;
    t_CurrentStream = nullptr;
  }
#else
  (void)device;
#endif
}

DeviceScope::~DeviceScope()
{
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
  if (m_Switched)
  {
    t_CurrentStream = m_PreviousStream;
    if (cudaSetDevice(m_Previous) != cudaSuccess)
    {
      cudaGetLastError(); // nothing to report to from a destructor
    }
  }
#endif
}

void
ReportRunIfVerbose(const char * name, const ExecutionReport & report)
{
  const char * verbose = std::getenv("CUDAIMAGEFILTERS_VERBOSE");
  if (verbose == nullptr || verbose[0] == '\0' || std::string(verbose) == "0")
  {
    return;
  }
  // one write of the whole line, so lines of concurrent runs do not mix
  const std::string line =
    std::string("cudaimagefilters: ") + (name != nullptr ? name : "?") + ": " + report.Message + "\n";
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
}

bool
DecideGpu(cif::ExecutionMode mode, const std::string & gpuUnsupported, const char * name, std::string & why)
{
  why.clear();
  if (mode == cif::ExecutionMode::CPU)
  {
    return false;
  }
  if (!cif::Runtime::IsDeviceAvailable())
  {
    why = cif::Runtime::GetUnavailableReason();
  }
  else if (!gpuUnsupported.empty())
  {
    why = gpuUnsupported;
  }
  if (why.empty())
  {
    return true;
  }
  if (mode == cif::ExecutionMode::GPU)
  {
    throw GpuUnavailable(std::string(name) + ": GPU execution was requested but is impossible: " + why);
  }
  return false;
}
} // namespace cif

namespace cif
{

std::ostream &
operator<<(std::ostream & os, ExecutionMode mode)
{
  switch (mode)
  {
    case ExecutionMode::Automatic:
      return os << "Automatic";
    case ExecutionMode::GPU:
      return os << "GPU";
    case ExecutionMode::CPU:
      return os << "CPU";
  }
  return os << "Unknown";
}

std::ostream &
operator<<(std::ostream & os, ExecutedOn device)
{
  switch (device)
  {
    case ExecutedOn::None:
      return os << "None";
    case ExecutedOn::GPU:
      return os << "GPU";
    case ExecutedOn::CPU:
      return os << "CPU";
  }
  return os << "Unknown";
}

bool
ExecutionModeFromString(const std::string & text, ExecutionMode & mode)
{
  if (text == "auto" || text == "automatic")
  {
    mode = ExecutionMode::Automatic;
  }
  else if (text == "gpu" || text == "cuda")
  {
    mode = ExecutionMode::GPU;
  }
  else if (text == "cpu")
  {
    mode = ExecutionMode::CPU;
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
  bool                     available{ false };
  std::string              reason;
  int                      count{ 0 };
  std::vector<std::string> descriptions; ///< one per device
};

const DeviceState &
QueryDevice()
{
  // Queried once. Nothing here changes the calling thread's current device:
  // a program (or CuPy, torch) may have chosen one before the first call.
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
    for (int device = 0; device < count; ++device)
    {
      cudaDeviceProp prop{};
      if (cudaGetDeviceProperties(&prop, device) != cudaSuccess)
      {
        s.reason = "the properties of CUDA device " + std::to_string(device) + " could not be read";
        cudaGetLastError();
        s.descriptions.clear();
        return s;
      }
      std::ostringstream d;
      d << prop.name << " (sm_" << prop.major << prop.minor << ", " << prop.multiProcessorCount << " SMs, "
        << (static_cast<double>(prop.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0)) << " GiB)";
      if (count > 1)
      {
        d << ", device " << device;
      }
      s.descriptions.push_back(d.str());
    }
    s.count = count;
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
  return static_cast<cudaStream_t>(CurrentStream());
}
#endif

std::atomic<std::size_t> g_AllocationLimit{ 0 };
std::atomic<std::size_t> g_BytesAllocated{ 0 };
std::mutex               g_CounterMutex;
TransferCounters         g_Counters;

#ifdef CUDAIMAGEFILTERS_WITH_CUDA
// the stream-ordered pools of PooledBuffer, one per device, created on first use
constexpr int                           kPoolDevices = 64;
std::mutex                              g_PoolMutex;
std::array<cudaMemPool_t, kPoolDevices> g_Pools{};

/** The pool of `device` (created with a release threshold that keeps what it reserves). */
cudaMemPool_t
PoolOf(int device)
{
  if (device < 0 || device >= kPoolDevices)
  {
    throw CudaFailure(-1, "device index outside the pools' table", "PooledBuffer");
  }
  std::lock_guard<std::mutex> lock(g_PoolMutex);
  cudaMemPool_t &             pool = g_Pools[static_cast<std::size_t>(device)];
  if (pool == nullptr)
  {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    CIF_CUDA_CHECK(cudaMemPoolCreate(&pool, &props));
    std::uint64_t keep = ~std::uint64_t{ 0 };
    CIF_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  }
  return pool;
}

/** Trims every pool to what its live blocks use; true when a pool existed. */
bool
TrimPools() noexcept
{
  std::lock_guard<std::mutex> lock(g_PoolMutex);
  int                         current = -1;
  cudaGetDevice(&current);
  bool any = false;
  for (int device = 0; device < kPoolDevices; ++device)
  {
    if (cudaMemPool_t pool = g_Pools[static_cast<std::size_t>(device)])
    {
      // memory freed on a stream returns to the pool once that free has run
      cudaSetDevice(device);
      cudaDeviceSynchronize();
      cudaMemPoolTrimTo(pool, 0);
      any = true;
    }
  }
  if (current >= 0)
  {
    cudaSetDevice(current);
  }
  cudaGetLastError();
  return any;
}
#endif

} // namespace

std::size_t
PooledIdleBytes() noexcept
{
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
  int device = -1;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= kPoolDevices)
  {
    cudaGetLastError();
    return 0;
  }
  std::lock_guard<std::mutex> lock(g_PoolMutex);
  cudaMemPool_t               pool = g_Pools[static_cast<std::size_t>(device)];
  if (pool == nullptr)
  {
    return 0;
  }
  std::uint64_t reserved = 0, used = 0;
  if (cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved) != cudaSuccess ||
      cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used) != cudaSuccess)
  {
    cudaGetLastError();
    return 0;
  }
  return reserved > used ? static_cast<std::size_t>(reserved - used) : 0;
#else
  return 0;
#endif
}

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

namespace
{
[[noreturn]] void
ThrowNoCuda(const char * what)
{
  throw CudaFailure(-1, std::string(what) + ": " + Runtime::GetUnavailableReason(), "CudaImageFilters");
}
} // namespace

bool
Runtime::IsCompiledWithCuda()
{
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
  return true;
#else
  return false;
#endif
}

bool
Runtime::IsDeviceAvailable()
{
  return QueryDevice().available;
}

std::string
Runtime::GetUnavailableReason()
{
  return QueryDevice().reason;
}

std::string
Runtime::GetDeviceDescription()
{
  const DeviceState & state = QueryDevice();
  const int           device = GetCurrentDevice();
  if (!state.available || device < 0 || device >= state.count)
  {
    return "none";
  }
  return state.descriptions[static_cast<std::size_t>(device)];
}

int
Runtime::GetDeviceCount()
{
  return QueryDevice().count;
}

int
Runtime::GetCurrentDevice()
{
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
  int device = -1;
  if (IsDeviceAvailable() && cudaGetDevice(&device) == cudaSuccess)
  {
    return device;
  }
  cudaGetLastError();
#endif
  return -1;
}

std::string
Runtime::GetDeviceProblem(int device)
{
  const DeviceState & state = QueryDevice();
  if (!state.available)
  {
    return state.reason;
  }
  if (device >= state.count)
  {
    return "CUDA device " + std::to_string(device) + " does not exist: this machine has " +
           std::to_string(state.count) + (state.count == 1 ? " device" : " devices");
  }
  return {};
}

#ifdef CUDAIMAGEFILTERS_WITH_CUDA
namespace
{
/** An attribute of the current device, queried once per device (TAttribute
 * names the cache); 0 without a device or when the query fails. */
template <cudaDeviceAttr TAttribute>
int
CachedDeviceAttribute()
{
  constexpr int                                 kDevices = 64;
  static std::array<std::atomic<int>, kDevices> cache{}; // 0: not queried yet
  const int                                     device = Runtime::GetCurrentDevice();
  if (device < 0)
  {
    return 0;
  }
  int value = device < kDevices ? cache[static_cast<std::size_t>(device)].load() : 0;
  if (value == 0)
  {
    if (cudaDeviceGetAttribute(&value, TAttribute, device) != cudaSuccess)
    {
      cudaGetLastError();
      return 0;
    }
    if (device < kDevices)
    {
      cache[static_cast<std::size_t>(device)].store(value);
    }
  }
  return value;
}
} // namespace
#endif

std::size_t
Runtime::GetMaxSharedMemoryPerBlock()
{
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
  return static_cast<std::size_t>(CachedDeviceAttribute<cudaDevAttrMaxSharedMemoryPerBlockOptin>());
#else
  return 0;
#endif
}

int
Runtime::GetMultiprocessorCount()
{
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
  return CachedDeviceAttribute<cudaDevAttrMultiProcessorCount>();
#else
  return 0;
#endif
}

std::size_t
Runtime::GetFreeMemory()
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
Runtime::GetTotalMemory()
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
Runtime::SetAllocationLimit(std::size_t bytes)
{
  g_AllocationLimit = bytes;
}

std::size_t
Runtime::GetAllocationLimit()
{
  return g_AllocationLimit;
}

std::size_t
Runtime::GetBytesAllocated()
{
  return g_BytesAllocated;
}

TransferCounters
Runtime::GetTransferCounters()
{
  std::lock_guard<std::mutex> lock(g_CounterMutex);
  return g_Counters;
}

void
Runtime::ResetTransferCounters()
{
  std::lock_guard<std::mutex> lock(g_CounterMutex);
  g_Counters = TransferCounters{};
}

void
Runtime::CopyHostToDevice(void * device, const void * host, std::size_t bytes)
{
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
  if (bytes == 0)
  {
    return;
  }
  StagedCopyToDevice(device, host, bytes, CurrentCudaStream());
  CountTransfer(true, bytes);
#else
  (void)device;
  (void)host;
  (void)bytes;
  ThrowNoCuda("cannot copy to the device");
#endif
}

void
Runtime::CopyDeviceToHost(void * host, const void * device, std::size_t bytes)
{
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
  if (bytes == 0)
  {
    return;
  }
  StagedCopyToHost(host, device, bytes, CurrentCudaStream());
  CountTransfer(false, bytes);
#else
  (void)device;
  (void)host;
  (void)bytes;
  ThrowNoCuda("cannot copy from the device");
#endif
}

void
Runtime::SetStagingLanes(int lanes)
{
  ::cif::SetStagingLanes(lanes); // the staged copies' setting (cifStagedCopy.h), not this member
}

int
Runtime::GetStagingLanes()
{
  return ::cif::GetStagingLanes();
}

void
Runtime::SetStagingChunkBytes(std::size_t bytes)
{
  ::cif::SetStagingChunkBytes(bytes);
}

std::size_t
Runtime::GetStagingChunkBytes()
{
  return ::cif::GetStagingChunkBytes();
}

void
Runtime::Synchronize()
{
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
  if (IsDeviceAvailable())
  {
    CIF_CUDA_CHECK(cudaDeviceSynchronize());
  }
#endif
}

// ---------------------------------------------------------------------------
DeviceBuffer::~DeviceBuffer()
{
  this->Release();
}

DeviceBuffer::DeviceBuffer(DeviceBuffer && other) noexcept
  : m_Pointer(other.m_Pointer)
  , m_Size(other.m_Size)
  , m_Device(other.m_Device)
  , m_Owned(other.m_Owned)
{
  other.m_Pointer = nullptr;
  other.m_Size = 0;
  other.m_Device = -1;
  other.m_Owned = true;
}

DeviceBuffer
DeviceBuffer::Borrow(void * pointer, std::size_t bytes, int device) noexcept
{
  DeviceBuffer borrowed;
  if (pointer != nullptr && bytes != 0)
  {
    borrowed.m_Pointer = pointer;
    borrowed.m_Size = bytes;
    borrowed.m_Device = device;
    borrowed.m_Owned = false;
  }
  return borrowed;
}

DeviceBuffer &
DeviceBuffer::operator=(DeviceBuffer && other) noexcept
{
  if (this != &other)
  {
    this->Release();
    m_Pointer = other.m_Pointer;
    m_Size = other.m_Size;
    m_Device = other.m_Device;
    m_Owned = other.m_Owned;
    other.m_Pointer = nullptr;
    other.m_Size = 0;
    other.m_Device = -1;
    other.m_Owned = true;
  }
  return *this;
}

#ifdef CUDAIMAGEFILTERS_WITH_CUDA
namespace
{
/** Device memory for `where` from `allocate` (a cudaMalloc-like call on
 * void **): the module's limit first, one more try after the pools give
 * back what they keep, the module's exceptions; the block is counted. */
template <typename TAllocate>
void *
AllocateCounted(std::size_t bytes, const char * where, TAllocate allocate)
{
  if (!Runtime::IsDeviceAvailable())
  {
    ThrowNoCuda("cannot allocate device memory");
  }
  const std::size_t limit = g_AllocationLimit;
  if (limit != 0 && g_BytesAllocated + bytes > limit)
  {
    std::ostringstream msg;
    msg << "cudaErrorMemoryAllocation: out of memory (allocation of " << bytes
        << " bytes exceeds the module's limit of " << limit << " bytes)";
    throw CudaOutOfMemory(static_cast<int>(cudaErrorMemoryAllocation), msg.str(), where);
  }
  void * p = nullptr;
  auto   status = allocate(&p);
  if (status == cudaErrorMemoryAllocation && TrimPools())
  {
    // memory the pools of PooledBuffer kept: give it back and try once more
    cudaGetLastError();
    status = allocate(&p);
  }
  if (status != cudaSuccess)
  {
    cudaGetLastError();
    std::ostringstream msg;
    msg << cudaGetErrorName(status) << ": " << cudaGetErrorString(status) << " (allocating " << bytes << " bytes, "
        << Runtime::GetFreeMemory() << " bytes free)";
    if (status == cudaErrorMemoryAllocation)
    {
      throw CudaOutOfMemory(static_cast<int>(status), msg.str(), where);
    }
    throw CudaFailure(static_cast<int>(status), msg.str(), where);
  }
  g_BytesAllocated += bytes;
  return p;
}

/** Gives `bytes` at `pointer` back with `release` on `device` (switching to
 * it and back when another is current) and stops counting them; a failure
 * here has no one to report to. */
template <typename TRelease>
void
ReleaseCounted(int device, std::size_t bytes, TRelease release) noexcept
{
  int        current = -1;
  const bool switched =
    cudaGetDevice(&current) == cudaSuccess && current != device && cudaSetDevice(device) == cudaSuccess;
  release();
  if (switched)
  {
    cudaSetDevice(current);
  }
  cudaGetLastError();
  g_BytesAllocated -= bytes;
}
} // namespace
#endif

PooledBuffer::PooledBuffer(std::size_t bytes, void * stream)
{
  if (bytes == 0)
  {
    return;
  }
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
  const int    device = Runtime::GetCurrentDevice();
  auto * const s = static_cast<cudaStream_t>(stream);
  m_Pointer = AllocateCounted(
    bytes, "PooledBuffer", [&](void ** p) { return cudaMallocFromPoolAsync(p, bytes, PoolOf(device), s); });
  m_Size = bytes;
  m_Stream = stream;
  m_Device = device;
#else
  (void)stream;
  ThrowNoCuda("cannot allocate device memory");
#endif
}

PooledBuffer::~PooledBuffer()
{
  this->Release();
}

PooledBuffer::PooledBuffer(PooledBuffer && other) noexcept
  : m_Pointer(other.m_Pointer)
  , m_Size(other.m_Size)
  , m_Stream(other.m_Stream)
  , m_Device(other.m_Device)
{
  other.m_Pointer = nullptr;
  other.m_Size = 0;
  other.m_Stream = nullptr;
  other.m_Device = -1;
}

PooledBuffer &
PooledBuffer::operator=(PooledBuffer && other) noexcept
{
  if (this != &other)
  {
    this->Release();
    m_Pointer = other.m_Pointer;
    m_Size = other.m_Size;
    m_Stream = other.m_Stream;
    m_Device = other.m_Device;
    other.m_Pointer = nullptr;
    other.m_Size = 0;
    other.m_Stream = nullptr;
    other.m_Device = -1;
  }
  return *this;
}

void
PooledBuffer::Release() noexcept
{
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
  if (m_Pointer != nullptr)
  {
    // back to the pool after the work queued on its stream
    ReleaseCounted(m_Device, m_Size, [this] { cudaFreeAsync(m_Pointer, static_cast<cudaStream_t>(m_Stream)); });
  }
#endif
  m_Pointer = nullptr;
  m_Size = 0;
  m_Stream = nullptr;
  m_Device = -1;
}

void
ReleasePooledMemory()
{
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
  TrimPools();
#endif
}

void
DeviceBuffer::Allocate(std::size_t bytes)
{
  this->Release();
  if (bytes == 0)
  {
    return;
  }
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
  m_Pointer = AllocateCounted(bytes, "DeviceBuffer::Allocate", [&](void ** p) { return cudaMalloc(p, bytes); });
  m_Size = bytes;
  m_Device = Runtime::GetCurrentDevice();
#else
  ThrowNoCuda("cannot allocate device memory");
#endif
}

void
DeviceBuffer::Release() noexcept
{
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
  if (m_Pointer != nullptr && m_Owned)
  {
    // free on the block's own device
    ReleaseCounted(m_Device, m_Size, [this] { cudaFree(m_Pointer); });
  }
#endif
  m_Pointer = nullptr;
  m_Size = 0;
  m_Device = -1;
  m_Owned = true; // a borrowed block is forgotten, never freed
}

void
DeviceBuffer::CopyFromHost(const void * source, std::size_t bytes)
{
  if (bytes > m_Size)
  {
    throw CudaFailure(-1, "copy larger than the device buffer", "DeviceBuffer::CopyFromHost");
  }
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
  const DeviceScope own(m_Device);
  Runtime::CopyHostToDevice(m_Pointer, source, bytes);
#else
  (void)source;
  ThrowNoCuda("cannot copy to the device");
#endif
}

void
DeviceBuffer::CopyToHost(void * destination, std::size_t bytes) const
{
  if (bytes > m_Size)
  {
    throw CudaFailure(-1, "copy larger than the device buffer", "DeviceBuffer::CopyToHost");
  }
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
  const DeviceScope own(m_Device);
  Runtime::CopyDeviceToHost(destination, m_Pointer, bytes);
#else
  (void)destination;
  ThrowNoCuda("cannot copy from the device");
#endif
}

void
DeviceBuffer::CopyToDevice(void * destination, std::size_t bytes) const
{
  if (bytes > m_Size)
  {
    throw CudaFailure(-1, "copy larger than the device buffer", "DeviceBuffer::CopyToDevice");
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
DeviceBuffer::CopyFromPeer(const DeviceBuffer & source, std::size_t bytes)
{
  if (bytes > m_Size || bytes > source.m_Size)
  {
    throw CudaFailure(-1, "copy larger than a device buffer", "DeviceBuffer::CopyFromPeer");
  }
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
  if (bytes == 0)
  {
    return;
  }
  if (source.m_Device == m_Device)
  {
    CIF_CUDA_CHECK(cudaMemcpyAsync(m_Pointer, source.m_Pointer, bytes, cudaMemcpyDeviceToDevice, CurrentCudaStream()));
  }
  else
  {
    // the stream here does not wait for work still queued on the source's
    // device (its writer may be another library, or a stream of ours there):
    // let that device finish first
    {
      int current = -1;
      CIF_CUDA_CHECK(cudaGetDevice(&current));
      CIF_CUDA_CHECK(cudaSetDevice(source.m_Device));
      const cudaError_t finished = cudaDeviceSynchronize();
      CIF_CUDA_CHECK(cudaSetDevice(current));
      CIF_CUDA_CHECK(finished);
    }
    CIF_CUDA_CHECK(
      cudaMemcpyPeerAsync(m_Pointer, m_Device, source.m_Pointer, source.m_Device, bytes, CurrentCudaStream()));
  }
  CIF_CUDA_CHECK(cudaStreamSynchronize(CurrentCudaStream()));
#else
  ThrowNoCuda("cannot copy on the device");
#endif
}

void
DeviceBuffer::FillBytes(int value)
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

} // namespace cif
