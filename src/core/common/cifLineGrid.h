/*=========================================================================
 *  CudaImageFilters: a launch with one thread per output pixel over the
 *  lines of an output region (private to the .cu files of src/core).
 *
 *  x runs along a line (blockDim.x threads per block); the lines (y + ny z
 *  of the output region) go over the grid's y and z, each at most 65535.
 *=========================================================================*/
#ifndef cifLineGrid_h
#define cifLineGrid_h

#include "cif/CudaError.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace cif
{
/** The grid for `lines` lines of `lineLength` pixels and `threads` threads
 * per block; throws cif::CudaFailure naming `launcher` when the lines do
 * not fit the grid. */
inline dim3
LineGrid(std::int64_t lineLength, std::int64_t lines, unsigned threads, const char * launcher)
{
  const std::int64_t gridY = lines < 65535 ? lines : 65535;
  const std::int64_t gridZ = (lines + gridY - 1) / gridY;
  if (gridZ > 65535)
  {
    throw CudaFailure(-1, "the output has more lines than the kernel's grid covers", launcher);
  }
  return dim3(static_cast<unsigned>((lineLength + threads - 1) / threads),
              static_cast<unsigned>(gridY),
              static_cast<unsigned>(gridZ));
}

/** This thread's pixel `i` along its line and its `line` in a LineGrid
 * launch; false for the threads past the region. */
__device__ inline bool
LineGridPixel(std::int64_t lineLength, std::int64_t lines, std::int64_t & i, std::int64_t & line)
{
  i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  line = blockIdx.y + static_cast<std::int64_t>(gridDim.y) * blockIdx.z;
  return i < lineLength && line < lines;
}
} // namespace cif

#endif
