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
} // namespace cif

#endif
