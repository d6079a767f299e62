/*=========================================================================
 *  CudaImageFilters: the runtime layer of the core (namespace cif): device
 *  discovery, allocations, host-device copies, where a job may run. Plain
 *  C++ (no ITK, no CUDA headers), so that the CUDA launchers, the ITK
 *  layer, the tool and the Python extension all use it.
 *=========================================================================*/
#ifndef cif_Runtime_h
#define cif_Runtime_h

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>

namespace cif
{

/** Where a filter is allowed to run.
 * - Automatic: on the GPU when a device exists and the filter supports the
 *   pixel type and parameters there, otherwise on the CPU (the reason is
 *   recorded in the filter's execution report).
 * - GPU: on the GPU only; impossible requests throw (cif::GpuUnavailable, an
 *   itk::ExceptionObject in the ITK classes) and say why.
 * - CPU: on the CPU only. */
enum class ExecutionMode : std::uint8_t
{
  Automatic,
  GPU,
  CPU
};

/** Which device produced a filter's last output. */
enum class ExecutedOn : std::uint8_t
{
  None,
  GPU,
  CPU
};

std::ostream &
operator<<(std::ostream & os, ExecutionMode mode);
std::ostream &
operator<<(std::ostream & os, ExecutedOn device);

/** Parses "auto" (or "automatic"), "gpu" (or "cuda") and "cpu"; returns false for anything else. */
bool
ExecutionModeFromString(const std::string & text, ExecutionMode & mode);

/** Counters of the pixel data the module moved between host and device
 * (process-wide, thread-safe). Tests use them to prove that a chain of GPU
 * filters keeps its data on the device. */
struct TransferCounters
{
  std::uint64_t HostToDeviceCount{ 0 };
  std::uint64_t HostToDeviceBytes{ 0 };
  std::uint64_t DeviceToHostCount{ 0 };
  std::uint64_t DeviceToHostBytes{ 0 };
};

/** \class Runtime
 * \brief Device discovery and process-wide settings of the module's CUDA layer.
 *
 * Discovery never throws: on a machine with the CUDA runtime but no GPU or no
 * driver (a CI machine), cudaGetDeviceCount fails and that simply means "no
 * GPU"; GetUnavailableReason() says what was found. The module runs on the
 * calling thread's current CUDA device (cudaSetDevice, or a CuPy/torch
 * device context); cif::DeviceScope and the ITK classes' SetCudaDevice()
 * pick another for one call. Per-device state (library handles, staging
 * lanes, work buffers, the queried limits) is kept per device.
 *
 * \ingroup CudaImageFilters
 */
class Runtime
{
public:
  /** True when the module was compiled with nvcc. */
  static bool
  IsCompiledWithCuda();

  /** True when a usable CUDA device exists (queried once, then cached). */
  static bool
  IsDeviceAvailable();

  /** Why IsDeviceAvailable() is false; empty when it is true. */
  static std::string
  GetUnavailableReason();

  /** Name, compute capability and memory of the calling thread's current
   * device, with ", device N" when the machine has several; "none" without
   * a device. */
  static std::string
  GetDeviceDescription();

  /** The number of CUDA devices (0 without a device or without CUDA). */
  static int
  GetDeviceCount();

  /** The calling thread's current CUDA device (cudaGetDevice); -1 without a
   * device. */
  static int
  GetCurrentDevice();

  /** Empty when `device` can be used: a negative index (the current device)
   * or an index below GetDeviceCount(). Otherwise why not ("CUDA device 3
   * does not exist: this machine has 2"). Without any device, why none is
   * usable (GetUnavailableReason()). */
  static std::string
  GetDeviceProblem(int device);

  /** The most shared memory one block may use, in bytes, once a kernel
   * opts in above 48 KiB (cudaDevAttrMaxSharedMemoryPerBlockOptin of the
   * current device; 0 without a device). Queried once per device. */
  static std::size_t
  GetMaxSharedMemoryPerBlock();

  /** Streaming multiprocessors of the current device (0 without a device).
   * Queried once per device. */
  static int
  GetMultiprocessorCount();

  /** Free and total memory of the current device in bytes (0 without a device). */
  static std::size_t
  GetFreeMemory();
  static std::size_t
  GetTotalMemory();

  /** Caps the device memory that the module's own allocations may hold, in
   * bytes (0, the default, means no cap). An allocation past the cap fails
   * exactly as a real out-of-memory does, so tests can exercise the
   * fallback path on a large GPU. */
  static void
  SetAllocationLimit(std::size_t bytes);
  static std::size_t
  GetAllocationLimit();
  /** Device bytes currently held by the module's allocations. */
  static std::size_t
  GetBytesAllocated();

  static cif::TransferCounters
  GetTransferCounters();
  static void
  ResetTransferCounters();

  /** Waits for all device work (checked). */
  static void
  Synchronize();

  /** Synchronous, counted copies between host memory and device memory the
   * module does not own (a CuPy or torch array), after the work queued on
   * the calling thread's stream (cif::CurrentStream). Pageable host memory
   * of 256 KiB or more travels through cached pinned staging chunks, several
   * host threads at once, each overlapping its memcpy with the previous
   * chunk's DMA (the driver's own pageable path moved 1.6 GB/s down on an
   * H200); pinned host memory is copied directly. The caller's buffer is
   * never page-locked. */
  static void
  CopyHostToDevice(void * device, const void * host, std::size_t bytes);
  static void
  CopyDeviceToHost(void * host, const void * device, std::size_t bytes);

  /** The host threads (lanes) a large staged copy uses; 0 restores the
   * default (one per hardware thread, at most 16). For measurements. */
  static void
  SetStagingLanes(int lanes);
  static int
  GetStagingLanes();
  /** The bytes of one pinned staging chunk; 0 restores the default (4 MiB).
   * For measurements. */
  static void
  SetStagingChunkBytes(std::size_t bytes);
  static std::size_t
  GetStagingChunkBytes();
};

/** \class DeviceBuffer
 * \brief An owning (or, by Borrow, borrowed), move-only block of device memory.
 *
 * Every allocation and copy goes through here, so that errors, the
 * allocation cap and the transfer counters have one place. The block lives
 * on the device that was current when it was allocated (GetDevice());
 * freeing it and its copies to and from the host switch to that device when
 * another is current (then on that device's default stream). Errors throw
 * cif::CudaFailure / cif::CudaOutOfMemory (see cif/CudaError.h).
 * \ingroup CudaImageFilters
 */
class DeviceBuffer
{
public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes) { this->Allocate(bytes); }
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &
  operator=(const DeviceBuffer &) = delete;
  DeviceBuffer(DeviceBuffer && other) noexcept;
  DeviceBuffer &
  operator=(DeviceBuffer && other) noexcept;

  /** A block of `bytes` at `pointer` on CUDA device `device` that someone
   * else allocated and frees (another library's image, see
   * itkCudaCommonInterop.h): used like an owned block, never freed here, and
   * not counted against the allocation limit. */
  static DeviceBuffer
  Borrow(void * pointer, std::size_t bytes, int device) noexcept;
  /** False for a borrowed block. */
  bool
  IsOwned() const
  {
    return m_Owned;
  }

  /** Frees what is held, then allocates `bytes` (no-op for 0). */
  void
  Allocate(std::size_t bytes);
  void
  Release() noexcept;

  void *
  GetPointer() const
  {
    return m_Pointer;
  }
  std::size_t
  GetSize() const
  {
    return m_Size;
  }
  /** The CUDA device the block is on (-1 when nothing is held). */
  int
  GetDevice() const
  {
    return m_Device;
  }

  /** Synchronous copies of the first `bytes` bytes; counted. */
  void
  CopyFromHost(const void * source, std::size_t bytes);
  void
  CopyToHost(void * destination, std::size_t bytes) const;

  /** Device-to-device copy of the first `bytes` bytes into `destination`
   * (device memory); not a host transfer, so not counted. */
  void
  CopyToDevice(void * destination, std::size_t bytes) const;

  /** Copies the first `bytes` bytes of `source`, which may be on another
   * device, into this block, device to device (cudaMemcpyPeerAsync on the
   * current stream, then waits): no host copy, so not counted. */
  void
  CopyFromPeer(const DeviceBuffer & source, std::size_t bytes);

  /** Sets every byte (used to poison outputs in tests and benchmarks). */
  void
  FillBytes(int value);

private:
  void *      m_Pointer{ nullptr };
  std::size_t m_Size{ 0 };
  int         m_Device{ -1 };
  bool        m_Owned{ true };
};

} // namespace cif

#endif
