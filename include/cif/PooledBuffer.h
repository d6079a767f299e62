/*=========================================================================
 *  CudaImageFilters: device memory for one call's temporaries, from a
 *  stream-ordered pool per device.
 *=========================================================================*/
#ifndef cif_PooledBuffer_h
#define cif_PooledBuffer_h

#include <cstddef>

namespace cif
{
/** \class PooledBuffer
 * \brief A move-only block of device memory for a call's temporaries, taken
 * from the current device's stream-ordered memory pool
 * (cudaMallocFromPoolAsync) on a stream and given back on that stream
 * (cudaFreeAsync) when it goes out of scope.
 *
 * After the first call of a size, the block comes back from the pool
 * without cudaMalloc, cudaFree or their implicit synchronisation, so a
 * filter that allocates its work images per call pays nothing for it. The
 * pool keeps what it has reserved (as CuPy's and PyTorch's allocators do);
 * cif::ReleasePooledMemory() gives it back, and an allocation that fails
 * for lack of memory (here or in cif::DeviceBuffer) gives it back and tries
 * once more before it throws cif::CudaOutOfMemory. A live block counts
 * against Runtime::SetAllocationLimit like a DeviceBuffer.
 * \ingroup CudaImageFilters
 */
class PooledBuffer
{
public:
  PooledBuffer() = default;
  /** `bytes` on the current device, ordered on `stream` (a cudaStream_t). */
  PooledBuffer(std::size_t bytes, void * stream);
  ~PooledBuffer();
  PooledBuffer(const PooledBuffer &) = delete;
  PooledBuffer &
  operator=(const PooledBuffer &) = delete;
  PooledBuffer(PooledBuffer && other) noexcept;
  PooledBuffer &
  operator=(PooledBuffer && other) noexcept;

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

private:
  void
  Release() noexcept;

  void *      m_Pointer{ nullptr };
  std::size_t m_Size{ 0 };
  void *      m_Stream{ nullptr };
  int         m_Device{ -1 };
};

/** Gives the memory the pools hold and no PooledBuffer uses back to the
 * devices (every device the module has used). */
void
ReleasePooledMemory();

} // namespace cif

#endif
