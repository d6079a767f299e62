/*=========================================================================
 *  CudaImageFilters: host-device copies through pinned staging buffers
 *  (see cifStagedCopy.h).
 *=========================================================================*/
#include "cifStagedCopy.h"
#include "cifRuntimeInternal.h"
#include "cif/CudaError.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#ifdef CUDAIMAGEFILTERS_WITH_CUDA
#  include <cuda_runtime.h>
#endif
#if defined(__linux__)
#  include <sys/mman.h>
#endif

namespace cif
{
namespace
{
std::atomic<int>         g_Lanes{ 0 };
std::atomic<std::size_t> g_ChunkBytes{ 0 };
/** Bytes of one pinned chunk by default: a chunk's DMA (75 us at 55 GB/s)
 * still dwarfs the per-copy overhead, and 16 lanes of two chunks hold
 * 128 MiB. */
constexpr std::size_t DefaultChunkBytes = std::size_t{ 4 } << 20;

/** One lane per hardware thread, at most 16: on an H100 machine with 16
 * cores (docs/results/staging-sweep-h100.log), 16 lanes of 4 MiB chunks
 * moved 51 GB/s each way into memory already touched (pinned: 55), and
 * 21 GB/s down into memory the copy touches first, against 13 GB/s with 8
 * lanes; larger chunks were slower. */
int
DefaultLanes()
{
  const int hardware = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(1, std::min(16, hardware));
}
} // namespace

void
SetStagingLanes(int lanes)
{
  g_Lanes = std::max(0, lanes);
}

int
GetStagingLanes()
{
  const int lanes = g_Lanes;
  return lanes > 0 ? lanes : DefaultLanes();
}

void
SetStagingChunkBytes(std::size_t bytes)
{
  g_ChunkBytes = bytes == 0 ? 0 : std::max<std::size_t>(bytes, 64 << 10);
}

std::size_t
GetStagingChunkBytes()
{
  const std::size_t bytes = g_ChunkBytes;
  return bytes > 0 ? bytes : DefaultChunkBytes;
}

#ifdef CUDAIMAGEFILTERS_WITH_CUDA
namespace
{
/** Copies below this size go straight through the driver. */
constexpr std::size_t DirectBelow = std::size_t{ 256 } << 10;

/** A host thread's tools: its stream, two pinned chunks and the events
 * that say when the last copy from or into each chunk has finished. */
struct Lane
{
  cudaStream_t stream{ nullptr };
  void *       pinned[2]{ nullptr, nullptr };
  cudaEvent_t  done[2]{ nullptr, nullptr };
};

void
DestroyLane(Lane & lane) noexcept
{
  // failures here have no one to report to
  for (int i = 0; i < 2; ++i)
  {
    if (lane.done[i] != nullptr)
    {
      cudaEventDestroy(lane.done[i]);
    }
    if (lane.pinned[i] != nullptr)
    {
      cudaFreeHost(lane.pinned[i]);
    }
  }
  if (lane.stream != nullptr)
  {
    cudaStreamDestroy(lane.stream);
  }
  lane = Lane{};
}

/** cv.wait(lock, done), through wait_for: libstdc++ 12 exports
 * condition_variable::wait(unique_lock &) under GLIBCXX_3.4.30, which
 * auditwheel's manylinux_2_34 policy does not allow (the wheel became
 * manylinux_2_35); wait_for is inline over pthread_cond_clockwait. */
template <typename TDone>
void
WaitUntilDone(std::condition_variable & cv, std::unique_lock<std::mutex> & lock, TDone done)
{
  while (!cv.wait_for(lock, std::chrono::seconds(1), done))
  {
  }
}

/** The lanes of one copy, on one device, with the host threads that run
 * lanes 1, 2, ... (lane 0 is the caller's). The threads live as long as
 * the set, which the pool keeps between copies: starting 15 threads (each
 * making the device current) for every copy cost about a millisecond, which
 * a copy cut into pieces paid per piece (docs/WholeImages.md). */
struct LaneSet
{
  int               device{ 0 };
  std::size_t       chunkBytes{ 0 }; ///< the size of every pinned chunk
  std::vector<Lane> lanes;

  LaneSet() = default;
  LaneSet(const LaneSet &) = delete;
  LaneSet &
  operator=(const LaneSet &) = delete;

  /** Runs job(0) on the calling thread and job(1) ... job(count - 1) on the
   * set's threads (started on first need), and returns when all returned.
   * `job` must not throw. Throws std::system_error when a thread cannot be
   * started (before any job ran). */
  void
  Run(int count, const std::function<void(int)> & job)
  {
    {
      std::lock_guard<std::mutex> lock(m_Mutex);
      while (static_cast<int>(m_Workers.size()) < count - 1)
      {
        const int           index = static_cast<int>(m_Workers.size()) + 1;
        const std::uint64_t seen = m_Generation;
        m_Workers.emplace_back([this, index, seen] { this->Work(index, seen); });
      }
      m_Job = &job;
      m_Active = count;
      m_Remaining = count - 1;
      ++m_Generation;
    }
    m_Start.notify_all();
    job(0);
    std::unique_lock<std::mutex> lock(m_Mutex);
    WaitUntilDone(m_Finished, lock, [this] { return m_Remaining == 0; });
    m_Job = nullptr;
  }

  ~LaneSet()
  {
    {
      std::lock_guard<std::mutex> lock(m_Mutex);
      m_Quit = true;
    }
    m_Start.notify_all();
    for (auto & worker : m_Workers)
    {
      worker.join();
    }
    int current = 0;
    const bool switched = cudaGetDevice(&current) == cudaSuccess && current != device && cudaSetDevice(device) == cudaSuccess;
    for (auto & lane : lanes)
    {
      DestroyLane(lane);
    }
    if (switched)
    {
      cudaSetDevice(current);
    }
    cudaGetLastError();
  }

  /** Adds lanes up to `count` on the current device (throws CudaFailure). */
  void
  Grow(int count)
  {
    while (static_cast<int>(lanes.size()) < count)
    {
      lanes.emplace_back();
      Lane & lane = lanes.back();
      try
      {
        CIF_CUDA_CHECK(cudaStreamCreateWithFlags(&lane.stream, cudaStreamNonBlocking));
        for (int i = 0; i < 2; ++i)
        {
          CIF_CUDA_CHECK(cudaHostAlloc(&lane.pinned[i], chunkBytes, cudaHostAllocDefault));
          CIF_CUDA_CHECK(cudaEventCreateWithFlags(&lane.done[i], cudaEventDisableTiming));
        }
      }
      catch (...)
      {
        DestroyLane(lane);
        lanes.pop_back();
        throw;
      }
    }
  }

private:
  /** Lane `index`'s thread: runs each new job that has a lane for it. */
  void
  Work(int index, std::uint64_t seen)
  {
    for (;;)
    {
      const std::function<void(int)> * job = nullptr;
      {
        std::unique_lock<std::mutex> lock(m_Mutex);
        WaitUntilDone(m_Start, lock, [&] { return m_Quit || m_Generation != seen; });
        if (m_Quit)
        {
          return;
        }
        seen = m_Generation;
        if (index >= m_Active)
        {
          continue;
        }
        job = m_Job;
      }
      (*job)(index);
      std::lock_guard<std::mutex> lock(m_Mutex);
      if (--m_Remaining == 0)
      {
        m_Finished.notify_all();
      }
    }
  }

  std::mutex                       m_Mutex;
  std::condition_variable          m_Start, m_Finished;
  std::vector<std::thread>         m_Workers;
  const std::function<void(int)> * m_Job{ nullptr };
  std::uint64_t                    m_Generation{ 0 };
  int                              m_Active{ 0 };
  int                              m_Remaining{ 0 };
  bool                             m_Quit{ false };
};

/** Lane sets not in use, per device: a copy takes one (or makes one) and
 * gives it back, so that copies from several threads run side by side. */
class LanePool
{
public:
  std::unique_ptr<LaneSet>
  Take(int device, int count, std::size_t chunkBytes)
  {
    std::unique_ptr<LaneSet> set;
    {
      std::lock_guard<std::mutex> lock(m_Mutex);
      for (auto it = m_Free.begin(); it != m_Free.end(); ++it)
      {
        if ((*it)->device == device && (*it)->chunkBytes == chunkBytes)
        {
          set = std::move(*it);
          m_Free.erase(it);
          break;
        }
      }
    }
    if (!set)
    {
      set = std::make_unique<LaneSet>();
      set->device = device;
      set->chunkBytes = chunkBytes;
    }
    set->Grow(count);
    return set;
  }

  void
  Give(std::unique_ptr<LaneSet> set)
  {
    std::lock_guard<std::mutex> lock(m_Mutex);
    m_Free.push_back(std::move(set));
  }

  void
  ReleaseAll()
  {
    std::vector<std::unique_ptr<LaneSet>> released;
    {
      std::lock_guard<std::mutex> lock(m_Mutex);
      released.swap(m_Free);
    }
  }

private:
  std::mutex                            m_Mutex;
  std::vector<std::unique_ptr<LaneSet>> m_Free;
};

bool
IsPinned(const void * host)
{
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, host) != cudaSuccess)
  {
    cudaGetLastError();
    return false;
  }
  return attributes.type == cudaMemoryTypeHost || attributes.type == cudaMemoryTypeManaged;
}

/** The chunks of a copy to the device: the first round (one chunk per
 * lane) grows from 1/lanes of a chunk to a whole one, the rest are whole.
 * With equal chunks every lane copies its first 4 MiB into pinned memory
 * at once, and the link waits for the first of them; growing ones put the
 * first bytes on the link after a sixteenth of that. */
class UploadChunks
{
public:
  UploadChunks(std::size_t chunk, int lanes)
    : m_Chunk(chunk)
  {
    std::size_t end = 0;
    for (int k = 0; k < lanes; ++k)
    {
      // 64 KiB multiples (the chunk is one), at least 64 KiB
      const std::size_t size =
        std::max<std::size_t>(64 << 10, (chunk * static_cast<std::size_t>(k + 1) / static_cast<std::size_t>(lanes)) &
                                          ~std::size_t{ 0xFFFF });
      end += std::min(size, chunk);
      m_RampEnds.push_back(end);
    }
  }
  /** Chunk k's offset and size within `bytes`; false past the end. */
  bool
  At(std::size_t k, std::size_t bytes, std::size_t & offset, std::size_t & size) const
  {
    const std::size_t ramp = m_RampEnds.empty() ? 0 : m_RampEnds.back();
    std::size_t       end = 0;
    if (k < m_RampEnds.size())
    {
      offset = k == 0 ? 0 : m_RampEnds[k - 1];
      end = m_RampEnds[k];
    }
    else
    {
      offset = ramp + (k - m_RampEnds.size()) * m_Chunk;
      end = offset + m_Chunk;
    }
    if (offset >= bytes)
    {
      return false;
    }
    size = std::min(end, bytes) - offset;
    return true;
  }

private:
  std::size_t              m_Chunk;
  std::vector<std::size_t> m_RampEnds;
};

/** One lane's share of a copy to the device: chunks taken from `next`; each
 * is copied into a pinned chunk once that chunk's previous DMA is done, then
 * sent on the lane's stream. */
void
LaneToDevice(Lane &                     lane,
             char *                     device,
             const char *               host,
             std::size_t                bytes,
             const UploadChunks &       chunks,
             std::atomic<std::size_t> & next,
             const std::atomic<bool> &  failed)
{
  int parity = 0;
  for (;;)
  {
    std::size_t offset = 0, n = 0;
    if (failed || !chunks.At(next.fetch_add(1), bytes, offset, n))
    {
      break;
    }
    CIF_CUDA_CHECK(cudaEventSynchronize(lane.done[parity]));
    std::memcpy(lane.pinned[parity], host + offset, n);
    CIF_CUDA_CHECK(cudaMemcpyAsync(device + offset, lane.pinned[parity], n, cudaMemcpyHostToDevice, lane.stream));
    CIF_CUDA_CHECK(cudaEventRecord(lane.done[parity], lane.stream));
    parity ^= 1;
  }
  CIF_CUDA_CHECK(cudaStreamSynchronize(lane.stream));
}

/** One lane's share of a copy to the host: each chunk's DMA into a pinned
 * chunk is queued before the previous chunk is copied out of the other. */
void
LaneToHost(Lane &                     lane,
           char *                     host,
           const char *               device,
           std::size_t                bytes,
           std::size_t                chunk,
           std::atomic<std::size_t> & next,
           const std::atomic<bool> &  failed)
{
  int         parity = 0;
  bool        pending = false;
  std::size_t pendingOffset = 0;
  for (;;)
  {
    const std::size_t offset = failed ? bytes : next.fetch_add(1) * chunk;
    const bool        more = offset < bytes;
    if (more)
    {
      const std::size_t n = std::min(chunk, bytes - offset);
      CIF_CUDA_CHECK(cudaMemcpyAsync(lane.pinned[parity], device + offset, n, cudaMemcpyDeviceToHost, lane.stream));
      CIF_CUDA_CHECK(cudaEventRecord(lane.done[parity], lane.stream));
    }
    if (pending)
    {
      const int         other = parity ^ 1;
      const std::size_t n = std::min(chunk, bytes - pendingOffset);
      CIF_CUDA_CHECK(cudaEventSynchronize(lane.done[other]));
      std::memcpy(host + pendingOffset, lane.pinned[other], n);
      pending = false;
    }
    if (!more)
    {
      break;
    }
    pending = true;
    pendingOffset = offset;
    parity ^= 1;
  }
  CIF_CUDA_CHECK(cudaStreamSynchronize(lane.stream));
}

/** Asks for transparent huge pages for the whole 2 MiB pages inside a
 * host range the copy is about to write. A new output image's pages are
 * first touched by the copy, and where the kernel's huge pages are on
 * request only (the GPU machines: "madvise"), each 4 KiB page costs a fault:
 * down into such memory moved 10 GB/s as it came and 16 GB/s with this
 * advice (8 lanes, H100 machine). Pages already there are not changed;
 * the advice is a hint, and failure is harmless. */
void
AdviseHugePages(void * host, std::size_t bytes)
{
#ifdef MADV_HUGEPAGE
  constexpr std::uintptr_t huge = std::uintptr_t{ 2 } << 20;
  const std::uintptr_t     first = (reinterpret_cast<std::uintptr_t>(host) + huge - 1) & ~(huge - 1);
  const std::uintptr_t     last = (reinterpret_cast<std::uintptr_t>(host) + bytes) & ~(huge - 1);
  if (last > first)
  {
    madvise(reinterpret_cast<void *>(first), last - first, MADV_HUGEPAGE);
  }
#else
  (void)host;
  (void)bytes;
#endif
}

void
StagedCopy(bool toDevice, void * destination, const void * source, std::size_t bytes, cudaStream_t stream)
{
  if (bytes == 0)
  {
    return;
  }
  const void * host = toDevice ? source : destination;
  const auto   direct = [&]
  {
    CIF_CUDA_CHECK(cudaMemcpyAsync(
      destination, source, bytes, toDevice ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, stream));
    CIF_CUDA_CHECK(cudaStreamSynchronize(stream));
  };
  if (bytes < DirectBelow || IsPinned(host))
  {
    direct();
    return;
  }
  if (!toDevice)
  {
    AdviseHugePages(destination, bytes);
  }
  int device = 0;
  CIF_CUDA_CHECK(cudaGetDevice(&device));
  const int         wanted = GetStagingLanes();
  const std::size_t perLane = (bytes + wanted - 1) / wanted;
  // chunks of at most ChunkBytes, 64 KiB multiples, so that small copies still use every lane
  const std::size_t chunkBytes = GetStagingChunkBytes();
  const std::size_t chunk =
    std::min(chunkBytes, std::max<std::size_t>(64 << 10, (perLane + 0xFFFF) & ~std::size_t{ 0xFFFF }));
  const std::size_t chunks = (bytes + chunk - 1) / chunk;
  const int         lanes = static_cast<int>(std::min<std::size_t>(wanted, chunks));

  std::unique_ptr<LaneSet> set;
  try
  {
    set = ProcessCache<LanePool>().Take(device, lanes, chunkBytes);
  }
  catch (const CudaFailure &)
  {
    // no pinned memory to be had (a locked-memory limit, say): the driver's path is slower but right
    direct();
    return;
  }

  // the lanes start after the work already queued on the caller's stream
  cudaEvent_t ready = nullptr;
  CIF_CUDA_CHECK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
  const UploadChunks       uploadChunks(chunk, lanes);
  std::atomic<std::size_t> next{ 0 };
  std::atomic<bool>        failed{ false };
  std::exception_ptr       error;
  std::mutex               errorMutex;
  const auto               lane = [&](int l) noexcept
  {
    try
    {
      CIF_CUDA_CHECK(cudaSetDevice(device));
      Lane & own = set->lanes[static_cast<std::size_t>(l)];
      CIF_CUDA_CHECK(cudaStreamWaitEvent(own.stream, ready, 0));
      if (toDevice)
      {
        LaneToDevice(own, static_cast<char *>(destination), static_cast<const char *>(source), bytes, uploadChunks, next, failed);
      }
      else
      {
        LaneToHost(own, static_cast<char *>(destination), static_cast<const char *>(source), bytes, chunk, next, failed);
      }
    }
    catch (...)
    {
      failed = true;
      std::lock_guard<std::mutex> lock(errorMutex);
      if (!error)
      {
        error = std::current_exception();
      }
    }
  };
  try
  {
    CIF_CUDA_CHECK(cudaEventRecord(ready, stream));
    set->Run(lanes, lane);
  }
  catch (...)
  {
    // the event could not be recorded or no lane thread could be started:
    // nothing was copied
    cudaEventDestroy(ready);
    ProcessCache<LanePool>().Give(std::move(set));
    throw;
  }
  cudaEventDestroy(ready);
  if (error)
  {
    // nothing may still be copying from or into the pinned chunks when they go back
    for (auto & own : set->lanes)
    {
      cudaStreamSynchronize(own.stream);
    }
    cudaGetLastError();
    ProcessCache<LanePool>().Give(std::move(set));
    std::rethrow_exception(error);
  }
  ProcessCache<LanePool>().Give(std::move(set));
}
} // namespace

void
StagedCopyToDevice(void * device, const void * host, std::size_t bytes, void * stream)
{
  StagedCopy(true, device, host, bytes, static_cast<cudaStream_t>(stream));
}

void
StagedCopyToHost(void * host, const void * device, std::size_t bytes, void * stream)
{
  StagedCopy(false, host, device, bytes, static_cast<cudaStream_t>(stream));
}

void
ReleaseStagingBuffers()
{
  ProcessCache<LanePool>().ReleaseAll();
}
#else
void
ReleaseStagingBuffers()
{}
#endif
} // namespace cif
