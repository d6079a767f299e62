/*=========================================================================
 *  CudaImageFilters: what the runtime layer shares with the rest of src/
 *  and nothing else (not installed).
 *=========================================================================*/
#ifndef cifRuntimeInternal_h
#define cifRuntimeInternal_h

#include <cstddef>

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
} // namespace cif

#endif
