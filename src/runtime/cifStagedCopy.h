/*=========================================================================
 *  CudaImageFilters: whole-buffer copies between pageable host memory and
 *  the device through pinned staging buffers (private to src/).
 *
 *  cudaMemcpy from pageable memory goes through the driver's own small
 *  staging buffer, one thread at a time: on an H200 it moved 8.7 GB/s up and
 *  1.6 GB/s down (docs/results/slab-benchmark-h200.log), against 55 GB/s
 *  from pinned memory. These copies cut the buffer into chunks and run
 *  several lanes at once, each a host thread with its own stream and two
 *  cached pinned chunks: while one chunk crosses PCIe, the lane's thread
 *  copies the next one between the user's memory and its other pinned chunk.
 *  The user's buffer is never page-locked. Host memory that is already
 *  pinned (cudaHostAlloc, cudaHostRegister) is copied directly.
 *=========================================================================*/
#ifndef cifStagedCopy_h
#define cifStagedCopy_h

#include <cstddef>

namespace cif
{
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
/** Copies `bytes` from host memory to the device, after the work already
 * queued on `stream` (a cudaStream_t), and returns when the copy is done. */
void
StagedCopyToDevice(void * device, const void * host, std::size_t bytes, void * stream);

/** Copies `bytes` from the device to host memory, after the work already
 * queued on `stream`, and returns when the copy is done. */
void
StagedCopyToHost(void * host, const void * device, std::size_t bytes, void * stream);
#endif

/** The number of lanes (host threads with a stream and two pinned chunks)
 * a large copy uses; 0 restores the default (one per hardware thread, at
 * most 16). For measurements. */
void
SetStagingLanes(int lanes);
int
GetStagingLanes();

/** The bytes of one pinned chunk; 0 restores the default (4 MiB). For
 * measurements. */
void
SetStagingChunkBytes(std::size_t bytes);
std::size_t
GetStagingChunkBytes();

/** Frees the cached pinned chunks of every device (they are reallocated at
 * the next large copy). */
void
ReleaseStagingBuffers();
} // namespace cif

#endif
