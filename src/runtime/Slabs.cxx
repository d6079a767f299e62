/*=========================================================================
 *  CudaImageFilters: the slab runner (see cifSlabs.h). Compiled with or
 *  without CUDA; without it, RunInSlabsCUDA throws as every GPU call does.
 *=========================================================================*/
#include "cif/Slabs.h"
#include "cif/CudaError.h"
#include "cif/Execution.h"
#include "cifParallelFor.h"
#include "cifRuntimeInternal.h"
#include "cif/Runtime.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <iomanip>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

#ifdef CUDAIMAGEFILTERS_WITH_CUDA
#  include <cuda_runtime.h>
#endif

namespace cif
{
namespace
{
std::size_t
InputSlabBytes(const SlabLayout & layout, std::size_t input, std::int64_t planes)
{
  return static_cast<std::size_t>(layout.outer * planes) * layout.inputPlaneBytes[input];
}

std::size_t
OutputSlabBytes(const SlabLayout & layout, std::int64_t planes)
{
  return static_cast<std::size_t>(layout.outer * planes) * layout.outputPlaneBytes;
}

/** Input planes and kernel planes of the thickest slab of `planes` output planes. */
std::int64_t
SlabInputPlanes(const SlabLayout & layout, std::int64_t planes)
{
  return std::min(layout.inputPlanes, planes + 2 * layout.halo);
}

std::int64_t
SlabKernelPlanes(const SlabLayout & layout, std::int64_t planes)
{
  return layout.kernelWritesInputPlanes ? SlabInputPlanes(layout, planes) : planes;
}

/** Copies `count` blocks of `bytes` from `source` (stride `sourcePitch`) to
 * `destination` (stride `destinationPitch`), on several threads when large. */
void
CopyBlocks(void *       destination,
           std::size_t  destinationPitch,
           const void * source,
           std::size_t  sourcePitch,
           std::size_t  bytes,
           std::int64_t count)
{
  auto *            d = static_cast<unsigned char *>(destination);
  const auto *      s = static_cast<const unsigned char *>(source);
  const std::size_t total = bytes * static_cast<std::size_t>(count);
  const int         threads =
    total < (std::size_t{ 8 } << 20) ? 1 : std::min(8, static_cast<int>(std::thread::hardware_concurrency()));
  // pieces of at most 4 MiB, so that a single large block splits too
  constexpr std::size_t piece = std::size_t{ 4 } << 20;
  const std::int64_t    piecesPerBlock = static_cast<std::int64_t>((bytes + piece - 1) / piece);
  ParallelFor(count * piecesPerBlock,
              threads,
              [&](std::int64_t first, std::int64_t last)
              {
                for (std::int64_t k = first; k < last; ++k)
                {
                  const std::int64_t block = k / piecesPerBlock;
                  const std::size_t  offset = static_cast<std::size_t>(k % piecesPerBlock) * piece;
                  std::memcpy(d + static_cast<std::size_t>(block) * destinationPitch + offset,
                              s + static_cast<std::size_t>(block) * sourcePitch + offset,
                              std::min(piece, bytes - offset));
                }
              });
}

/** Gathers a slab's input planes of input `k` into a dense buffer. */
void
GatherInput(void * dense, const void * host, const SlabLayout & layout, std::size_t k, const Slab & slab)
{
  const std::size_t plane = layout.inputPlaneBytes[k];
  CopyBlocks(dense,
             plane * static_cast<std::size_t>(slab.inputCount),
             static_cast<const unsigned char *>(host) + static_cast<std::size_t>(slab.inputFirst) * plane,
             plane * static_cast<std::size_t>(layout.inputPlanes),
             plane * static_cast<std::size_t>(slab.inputCount),
             layout.outer);
}

/** Scatters a slab's delivered planes (dense, [outer][outputCount][plane]) into the output. */
void
ScatterOutput(void * host, const void * dense, const SlabLayout & layout, const Slab & slab)
{
  const std::size_t plane = layout.outputPlaneBytes;
  CopyBlocks(static_cast<unsigned char *>(host) + static_cast<std::size_t>(slab.outputFirst) * plane,
             plane * static_cast<std::size_t>(layout.outputPlanes),
             dense,
             plane * static_cast<std::size_t>(slab.outputCount),
             plane * static_cast<std::size_t>(slab.outputCount),
             layout.outer);
}

void
CheckLayout(const SlabLayout & layout)
{
  const std::string problem = ValidateSlabLayout(layout);
  if (!problem.empty())
  {
    throw std::invalid_argument("slab layout: " + problem);
  }
}
} // namespace

std::string
ValidateSlabLayout(const SlabLayout & layout)
{
  if (layout.outer < 1 || layout.inputPlanes < 1 || layout.outputPlanes < 1)
  {
    return "empty extents";
  }
  if (layout.inputPlaneBytes.empty() || layout.outputPlaneBytes == 0)
  {
    return "no input or empty planes";
  }
  for (const std::size_t bytes : layout.inputPlaneBytes)
  {
    if (bytes == 0)
    {
      return "an input with empty planes";
    }
  }
  if (layout.halo < 0)
  {
    return "a negative halo";
  }
  if (layout.outputStart < 0 || layout.outputStart + layout.outputPlanes > layout.inputPlanes)
  {
    return "output planes outside the input";
  }
  return {};
}

Slab
MakeSlab(const SlabLayout & layout, std::int64_t outputFirst, std::int64_t outputCount)
{
  Slab               s;
  const std::int64_t first = layout.outputStart + outputFirst; // in input planes
  s.inputFirst = std::max<std::int64_t>(0, first - layout.halo);
  s.inputCount = std::min(layout.inputPlanes, first + outputCount + layout.halo) - s.inputFirst;
  s.outputFirst = outputFirst;
  s.outputCount = outputCount;
  s.kernelPlanes = layout.kernelWritesInputPlanes ? s.inputCount : outputCount;
  s.kernelFirst = layout.kernelWritesInputPlanes ? first - s.inputFirst : 0;
  return s;
}

namespace
{
/** Slabs of at most `planesPerSlab` output planes, of near-equal thickness,
 * covering the output planes from `first` on. */
std::vector<Slab>
SlabsFrom(const SlabLayout & layout, std::int64_t first, std::int64_t planesPerSlab)
{
  const std::int64_t remaining = layout.outputPlanes - first;
  planesPerSlab = std::max<std::int64_t>(1, std::min(planesPerSlab, remaining));
  const std::int64_t count = (remaining + planesPerSlab - 1) / planesPerSlab;
  std::vector<Slab>  slabs;
  for (std::int64_t k = 0; k < count; ++k)
  {
    // near-equal thickness: the first (remaining mod count) slabs get one more
    const std::int64_t planes = remaining / count + (k < remaining % count ? 1 : 0);
    slabs.push_back(MakeSlab(layout, first, planes));
    first += planes;
  }
  return slabs;
}
} // namespace

std::vector<Slab>
PlanSlabs(const SlabLayout & layout, std::int64_t planesPerSlab)
{
  CheckLayout(layout);
  return SlabsFrom(layout, 0, planesPerSlab);
}

std::size_t
SlabDeviceBytes(const SlabLayout & layout, std::int64_t planesPerSlab)
{
  const std::int64_t inPlanes = SlabInputPlanes(layout, planesPerSlab);
  const std::int64_t kernelPlanes = SlabKernelPlanes(layout, planesPerSlab);
  std::size_t        bytes = 0;
  for (std::size_t k = 0; k < layout.inputPlaneBytes.size(); ++k)
  {
    bytes += 2 * InputSlabBytes(layout, k, inPlanes);
  }
  bytes += 2 * OutputSlabBytes(layout, kernelPlanes);
  bytes += static_cast<std::size_t>(layout.outer * inPlanes) * layout.workBytesPerPlane;
  return bytes;
}

std::size_t
WholeJobDeviceBytes(const SlabLayout & layout)
{
  std::size_t bytes = 0;
  for (std::size_t k = 0; k < layout.inputPlaneBytes.size(); ++k)
  {
    bytes += InputSlabBytes(layout, k, layout.inputPlanes);
  }
  const std::int64_t kernelPlanes = layout.kernelWritesInputPlanes ? layout.inputPlanes : layout.outputPlanes;
  bytes += OutputSlabBytes(layout, kernelPlanes);
  bytes += static_cast<std::size_t>(layout.outer * layout.inputPlanes) * layout.workBytesPerPlane;
  return bytes;
}

std::int64_t
SlabPlanesForBudget(const SlabLayout & layout, std::size_t budgetBytes, std::size_t maxBufferBytes)
{
  CheckLayout(layout);
  if (SlabDeviceBytes(layout, 1) > budgetBytes)
  {
    return 0;
  }
  // the device bytes grow with the planes: bisect for the largest that fits
  std::int64_t lo = 1, hi = layout.outputPlanes;
  while (lo < hi)
  {
    const std::int64_t mid = lo + (hi - lo + 1) / 2;
    if (SlabDeviceBytes(layout, mid) <= budgetBytes)
    {
      lo = mid;
    }
    else
    {
      hi = mid - 1;
    }
  }
  if (maxBufferBytes != 0)
  {
    std::size_t largestPlane = layout.outputPlaneBytes;
    for (const std::size_t bytes : layout.inputPlaneBytes)
    {
      largestPlane = std::max(largestPlane, bytes);
    }
    const std::int64_t perBuffer =
      static_cast<std::int64_t>(maxBufferBytes / (largestPlane * static_cast<std::size_t>(layout.outer)));
    lo = std::max<std::int64_t>(1, std::min(lo, perBuffer - 2 * layout.halo));
  }
  return lo;
}

std::string
SlabReport::Describe(const char * axisName) const
{
  std::ostringstream os;
  os << "in " << slabs << " slab" << (slabs == 1 ? "" : "s") << " of up to " << planesPerSlab << ' ' << axisName
     << " plane" << (planesPerSlab == 1 ? "" : "s") << " (double-buffered, pinned staging; " << std::fixed
     << std::setprecision(2) << static_cast<double>(bytesUploaded) * 1e-9 << " GB up, "
     << static_cast<double>(bytesDownloaded) * 1e-9 << " GB down";
  if (retries > 0)
  {
    os << "; made thinner " << retries << " time" << (retries == 1 ? "" : "s") << " after running out of memory";
  }
  os << ')';
  return os.str();
}

SlabReport
RunInSlabsHost(const std::vector<const void *> & hostInputs,
               void *                            hostOutput,
               const SlabLayout &                layout,
               std::int64_t                      planesPerSlab,
               const SlabKernel &                kernel)
{
  if (hostInputs.size() != layout.inputPlaneBytes.size())
  {
    throw std::invalid_argument("slab runner: one host pointer per input is needed");
  }
  const std::vector<Slab>                 slabs = PlanSlabs(layout, planesPerSlab);
  std::vector<std::vector<unsigned char>> in(hostInputs.size());
  std::vector<unsigned char>              out, delivered;
  SlabReport                              report;
  report.slabs = static_cast<std::int64_t>(slabs.size());
  for (const Slab & s : slabs)
  {
    report.planesPerSlab = std::max(report.planesPerSlab, s.outputCount);
    std::vector<const void *> pointers;
    for (std::size_t k = 0; k < hostInputs.size(); ++k)
    {
      in[k].assign(InputSlabBytes(layout, k, s.inputCount), 0);
      GatherInput(in[k].data(), hostInputs[k], layout, k, s);
      pointers.push_back(in[k].data());
    }
    out.assign(OutputSlabBytes(layout, s.kernelPlanes), 0);
    kernel(pointers.data(), out.data(), s);
    // the delivered planes of each outer block, made dense
    const std::size_t plane = layout.outputPlaneBytes;
    delivered.resize(OutputSlabBytes(layout, s.outputCount));
    CopyBlocks(delivered.data(),
               plane * static_cast<std::size_t>(s.outputCount),
               out.data() + static_cast<std::size_t>(s.kernelFirst) * plane,
               plane * static_cast<std::size_t>(s.kernelPlanes),
               plane * static_cast<std::size_t>(s.outputCount),
               layout.outer);
    ScatterOutput(hostOutput, delivered.data(), layout, s);
  }
  return report;
}

std::size_t
DeviceBytesAvailable()
{
  if (!cif::Runtime::IsDeviceAvailable())
  {
    return 0;
  }
  // what the pools keep idle is the module's to use again
  std::size_t       available = cif::Runtime::GetFreeMemory() + PooledIdleBytes();
  const std::size_t limit = cif::Runtime::GetAllocationLimit();
  if (limit != 0)
  {
    const std::size_t held = cif::Runtime::GetBytesAllocated();
    available = std::min(available, limit > held ? limit - held : 0);
  }
  // a sixteenth for the kernels' small temporaries, and without a cap 32 MiB
  // more for the driver
  const std::size_t reserve = available / 16 + (limit == 0 ? std::size_t{ 32 } << 20 : 0);
  return available > reserve ? available - reserve : 0;
}

#ifdef CUDAIMAGEFILTERS_WITH_CUDA
namespace
{
/** Page-locked blocks the slab runner keeps between calls. cudaHostAlloc
 * and cudaFreeHost of a job's staging buffers (six of up to 64 MiB) cost
 * more than the job's copies: on an H200 a 512^3 mask in slabs took 223 ms
 * with them per call, against 29 ms in one piece. Up to 1 GiB is kept, per
 * device, and freed at exit (by a handler registered after the runtime's
 * own, so it runs first). */
class PinnedCache
{
public:
  static constexpr std::size_t KeepBytes = std::size_t{ 1 } << 30;

  /** A block of at least `bytes` on the current device: the smallest kept
   * one that is large enough, or a new one. */
  void *
  Take(std::size_t bytes, std::size_t & size)
  {
    int device = 0;
    CIF_CUDA_CHECK(cudaGetDevice(&device));
    {
      std::lock_guard<std::mutex> lock(m_Mutex);
      auto best = m_Free.end();
      for (auto it = m_Free.begin(); it != m_Free.end(); ++it)
      {
        if (it->device == device && it->size >= bytes && (best == m_Free.end() || it->size < best->size))
        {
          best = it;
        }
      }
      if (best != m_Free.end())
      {
        void * p = best->pointer;
        size = best->size;
        m_Kept -= best->size;
        m_Free.erase(best);
        return p;
      }
    }
    void * p = nullptr;
    CIF_CUDA_CHECK(cudaHostAlloc(&p, bytes, cudaHostAllocDefault));
    size = bytes;
    return p;
  }

  /** Back to the cache, or freed when the cache is full. */
  void
  Give(void * pointer, std::size_t size) noexcept
  {
    int device = 0;
    cudaGetDevice(&device);
    {
      std::lock_guard<std::mutex> lock(m_Mutex);
      if (m_Kept + size <= KeepBytes)
      {
        m_Free.push_back({ pointer, size, device });
        m_Kept += size;
        return;
      }
    }
    cudaFreeHost(pointer);
    cudaGetLastError();
  }

  void
  ReleaseAll() noexcept
  {
    std::vector<Block> blocks;
    {
      std::lock_guard<std::mutex> lock(m_Mutex);
      blocks.swap(m_Free);
      m_Kept = 0;
    }
    for (const Block & b : blocks)
    {
      cudaFreeHost(b.pointer);
    }
    cudaGetLastError();
  }

private:
  struct Block
  {
    void *      pointer;
    std::size_t size;
    int         device;
  };
  std::mutex         m_Mutex;
  std::vector<Block> m_Free;
  std::size_t        m_Kept{ 0 };
};

/** Page-locked host memory from the slab runner's cache, given back to it. */
class PinnedBuffer
{
public:
  PinnedBuffer() = default;
  ~PinnedBuffer() { this->Release(); }
  PinnedBuffer(const PinnedBuffer &) = delete;
  PinnedBuffer &
  operator=(const PinnedBuffer &) = delete;

  void
  Allocate(std::size_t bytes)
  {
    this->Release();
    if (bytes != 0)
    {
      std::size_t size = 0;
      m_Pointer = ProcessCache<PinnedCache>().Take(bytes, size);
      m_Size = size;
    }
  }
  void
  Release() noexcept
  {
    if (m_Pointer != nullptr)
    {
      ProcessCache<PinnedCache>().Give(m_Pointer, m_Size);
    }
    m_Pointer = nullptr;
    m_Size = 0;
  }
  unsigned char *
  Get() const
  {
    return static_cast<unsigned char *>(m_Pointer);
  }
  std::size_t
  Size() const
  {
    return m_Size;
  }

private:
  void *      m_Pointer{ nullptr };
  std::size_t m_Size{ 0 };
};

/** A stream or an event, destroyed with its owner. */
struct Stream
{
  cudaStream_t handle{ nullptr };
  Stream() { CIF_CUDA_CHECK(cudaStreamCreateWithFlags(&handle, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(handle); }
  Stream(const Stream &) = delete;
  Stream &
  operator=(const Stream &) = delete;
};
struct Event
{
  cudaEvent_t handle{ nullptr };
  Event() { CIF_CUDA_CHECK(cudaEventCreateWithFlags(&handle, cudaEventDisableTiming)); }
  ~Event() { cudaEventDestroy(handle); }
  Event(const Event &) = delete;
  Event &
  operator=(const Event &) = delete;
};

/** The double-buffered pipeline's buffers, sized for slabs of up to
 * `planes` output planes. */
struct SlabBuffers
{
  std::vector<cif::DeviceBuffer> deviceIn[2];
  cif::DeviceBuffer              deviceOut[2];
  std::vector<PinnedBuffer>          pinnedIn[2];
  PinnedBuffer                       pinnedOut[2];
  std::int64_t                       planes{ 0 };

  void
  Allocate(const SlabLayout & layout, std::int64_t slabPlanes)
  {
    this->Release();
    const std::int64_t inPlanes = SlabInputPlanes(layout, slabPlanes);
    const std::int64_t kernelPlanes = SlabKernelPlanes(layout, slabPlanes);
    for (int b = 0; b < 2; ++b)
    {
      deviceIn[b] = std::vector<cif::DeviceBuffer>(layout.inputPlaneBytes.size());
      pinnedIn[b] = std::vector<PinnedBuffer>(layout.inputPlaneBytes.size());
      for (std::size_t k = 0; k < layout.inputPlaneBytes.size(); ++k)
      {
        deviceIn[b][k].Allocate(InputSlabBytes(layout, k, inPlanes));
        pinnedIn[b][k].Allocate(InputSlabBytes(layout, k, inPlanes));
      }
      deviceOut[b].Allocate(OutputSlabBytes(layout, kernelPlanes));
      pinnedOut[b].Allocate(OutputSlabBytes(layout, slabPlanes));
    }
    planes = slabPlanes;
  }
  void
  Release() noexcept
  {
    for (int b = 0; b < 2; ++b)
    {
      deviceIn[b].clear();
      pinnedIn[b].clear();
      deviceOut[b].Release();
      pinnedOut[b].Release();
    }
    planes = 0;
  }
};

/** Runs the slabs from `slabs[first]` on; returns the index of the slab
 * whose kernel ran out of memory (everything before it is delivered), or
 * slabs.size() when all are done. Other failures propagate after the
 * streams are drained. */
std::size_t
RunPipeline(const std::vector<const void *> & hostInputs,
            void *                            hostOutput,
            const SlabLayout &                layout,
            const std::vector<Slab> &         slabs,
            SlabBuffers &                     buffers,
            const SlabKernel &                kernel,
            SlabReport &                      report,
            const SlabProgress &              progress,
            std::int64_t                      planesDoneBefore)
{
  Stream            upload, download, compute;
  Event             uploaded[2], downloaded[2];
  const std::size_t inputs = layout.inputPlaneBytes.size();
  const std::size_t plane = layout.outputPlaneBytes;

  auto stageAndUpload = [&](const Slab & s, int b)
  {
    for (std::size_t k = 0; k < inputs; ++k)
    {
      GatherInput(buffers.pinnedIn[b][k].Get(), hostInputs[k], layout, k, s);
    }
    for (std::size_t k = 0; k < inputs; ++k)
    {
      const std::size_t bytes = InputSlabBytes(layout, k, s.inputCount);
      CIF_CUDA_CHECK(cudaMemcpyAsync(buffers.deviceIn[b][k].GetPointer(),
                                     buffers.pinnedIn[b][k].Get(),
                                     bytes,
                                     cudaMemcpyHostToDevice,
                                     upload.handle));
      cif::CountTransfer(true, bytes);
      report.bytesUploaded += bytes;
    }
    CIF_CUDA_CHECK(cudaEventRecord(uploaded[b].handle, upload.handle));
  };
  auto downloadAsync = [&](const Slab & s, int b)
  {
    // the delivered planes of each outer block, made dense in the staging buffer
    CIF_CUDA_CHECK(cudaMemcpy2DAsync(buffers.pinnedOut[b].Get(),
                                     plane * static_cast<std::size_t>(s.outputCount),
                                     static_cast<const unsigned char *>(buffers.deviceOut[b].GetPointer()) +
                                       static_cast<std::size_t>(s.kernelFirst) * plane,
                                     plane * static_cast<std::size_t>(s.kernelPlanes),
                                     plane * static_cast<std::size_t>(s.outputCount),
                                     static_cast<std::size_t>(layout.outer),
                                     cudaMemcpyDeviceToHost,
                                     download.handle));
    const std::size_t bytes = OutputSlabBytes(layout, s.outputCount);
    cif::CountTransfer(false, bytes);
    report.bytesDownloaded += bytes;
    CIF_CUDA_CHECK(cudaEventRecord(downloaded[b].handle, download.handle));
  };
  std::int64_t planesDone = planesDoneBefore;
  auto         unstage = [&](const Slab & s, int b)
  {
    CIF_CUDA_CHECK(cudaEventSynchronize(downloaded[b].handle));
    ScatterOutput(hostOutput, buffers.pinnedOut[b].Get(), layout, s);
    planesDone += s.outputCount;
    if (progress)
    {
      progress(static_cast<double>(planesDone) / static_cast<double>(layout.outputPlanes));
    }
  };
  auto drain = [&]() noexcept
  {
    cudaStreamSynchronize(upload.handle);
    cudaStreamSynchronize(compute.handle);
    cudaStreamSynchronize(download.handle);
  };

  const std::size_t end = slabs.size();
  std::size_t       failedAt = end;
  // the kernels' threads start on device 0: they make the caller's device theirs
  int device = 0;
  CIF_CUDA_CHECK(cudaGetDevice(&device));
  try
  {
    stageAndUpload(slabs[0], 0);
    for (std::size_t i = 0; i < end; ++i)
    {
      const int          b = static_cast<int>(i & 1);
      std::exception_ptr failure;
      std::thread        worker(
               [&, b, i]
               {
          try
          {
            DeviceScope own(device);
            StreamScope scope(compute.handle);
            CIF_CUDA_CHECK(cudaStreamWaitEvent(compute.handle, uploaded[b].handle, 0));
            std::vector<const void *> in;
            for (std::size_t k = 0; k < inputs; ++k)
            {
              in.push_back(buffers.deviceIn[b][k].GetPointer());
            }
            kernel(in.data(), buffers.deviceOut[b].GetPointer(), slabs[i]);
          }
          catch (...)
          {
            failure = std::current_exception();
          }
               });
      try
      {
        if (i + 1 < end)
        {
          // buffers b ^ 1 were last used by slab i - 1, whose kernel finished
          stageAndUpload(slabs[i + 1], b ^ 1);
        }
        if (i >= 1)
        {
          unstage(slabs[i - 1], b ^ 1);
        }
      }
      catch (...)
      {
        worker.join();
        throw;
      }
      worker.join();
      if (failure)
      {
        try
        {
          std::rethrow_exception(failure);
        }
        catch (const CudaOutOfMemory &)
        {
          failedAt = i;
          break;
        }
      }
      downloadAsync(slabs[i], b);
    }
    if (failedAt == end)
    {
      unstage(slabs[end - 1], static_cast<int>((end - 1) & 1));
    }
  }
  catch (...)
  {
    drain();
    throw;
  }
  drain();
  return failedAt;
}
} // namespace
#endif

SlabReport
RunInSlabsCUDA(const std::vector<const void *> & hostInputs,
               void *                            hostOutput,
               const SlabLayout &                layout,
               std::size_t                       deviceBudgetBytes,
               const SlabKernel &                kernel,
               std::size_t                       maxBufferBytes,
               const SlabProgress &              progress)
{
  CheckLayout(layout);
  if (hostInputs.size() != layout.inputPlaneBytes.size())
  {
    throw std::invalid_argument("slab runner: one host pointer per input is needed");
  }
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
  if (!cif::Runtime::IsDeviceAvailable())
  {
    throw CudaFailure(-1, "no GPU: " + cif::Runtime::GetUnavailableReason(), "RunInSlabsCUDA");
  }
  SlabReport   report;
  std::size_t  budget = deviceBudgetBytes != 0 ? deviceBudgetBytes : DeviceBytesAvailable();
  std::int64_t planes = SlabPlanesForBudget(layout, budget, maxBufferBytes);
  if (planes == 0)
  {
    std::ostringstream why;
    why << "out of memory: one slab plane needs " << SlabDeviceBytes(layout, 1) << " bytes of device memory, " << budget
        << " are available";
    throw CudaOutOfMemory(2, "cudaErrorMemoryAllocation: " + why.str(), "RunInSlabsCUDA");
  }
  SlabBuffers  buffers;
  std::int64_t delivered = 0; // output planes done
  while (delivered < layout.outputPlanes)
  {
    // the output planes still to do
    const std::vector<Slab> slabs = SlabsFrom(layout, delivered, planes);
    try
    {
      if (buffers.planes < planes || buffers.planes > 2 * planes)
      {
        buffers.Allocate(layout, planes);
      }
    }
    catch (const CudaOutOfMemory &)
    {
      buffers.Release();
      if (planes == 1)
      {
        throw;
      }
      planes = std::max<std::int64_t>(1, planes / 2);
      ++report.retries;
      continue;
    }
    const std::size_t failedAt =
      RunPipeline(hostInputs, hostOutput, layout, slabs, buffers, kernel, report, progress, delivered);
    for (std::size_t i = 0; i < failedAt; ++i)
    {
      delivered += slabs[i].outputCount;
      report.planesPerSlab = std::max(report.planesPerSlab, slabs[i].outputCount);
      ++report.slabs;
    }
    if (failedAt < slabs.size())
    {
      if (slabs[failedAt].outputCount == 1)
      {
        throw CudaOutOfMemory(
          2, "cudaErrorMemoryAllocation: the kernel ran out of memory on a slab of one plane", "RunInSlabsCUDA");
      }
      planes = std::max<std::int64_t>(1, slabs[failedAt].outputCount / 2);
      ++report.retries;
      buffers.Release(); // the kernel needs the room: buffers for the thinner slabs
    }
  }
  return report;
#else
  (void)hostOutput;
  (void)deviceBudgetBytes;
  (void)kernel;
  (void)maxBufferBytes;
  (void)progress;
  throw CudaFailure(-1, "CudaImageFilters was built without CUDA", "RunInSlabsCUDA");
#endif
}

} // namespace cif
