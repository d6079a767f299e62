/*=========================================================================
 *  CudaImageFilters: what the runtime layer shares with the rest of src/
 *  and nothing else (not installed).
 *=========================================================================*/
#ifndef cifRuntimeInternal_h
#define cifRuntimeInternal_h

#include <cstddef>
#include <cstdlib>

namespace cif
{
/** Adds one host-to-device (toDevice) or device-to-host copy of `bytes`
 * to the transfer counters, for copies made outside cif::DeviceBuffer (the
 * slab runner's asynchronous copies). */
void
CountTransfer(bool toDevice, std::size_t bytes);

/** Device memory of the current device that the stream-ordered pool of
 * cif::PooledBuffer holds and no block uses: free for the module, though
 * cudaMemGetInfo counts it as taken. */
std::size_t
PooledIdleBytes() noexcept;

/** The one process-wide T of the runtime's host-side caches (pinned
 * staging lanes, the slab runner's pinned blocks), made on first use and
 * never destroyed by a static destructor, which may run after the CUDA
 * runtime has shut down. Its `ReleaseAll()` is registered with std::atexit
 * on first use, which comes after the runtime's own registration (the
 * caches are first used after a CUDA call), so it runs before the runtime
 * shuts down. */
template <typename T>
T &
ProcessCache()
{
  static T * const cache = []
  {
    auto * created = new T;
    std::atexit([] { ProcessCache<T>().ReleaseAll(); });
    return created;
  }();
  return *cache;
}
} // namespace cif

#endif
