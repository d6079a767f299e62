/*=========================================================================
 *  CudaImageFilters: the clamped shared-memory tile of the neighbourhood
 *  filters' CUDA kernels (bilateral, rotating mask): a box of the input
 *  read with clamped indices (ITK's zero-flux Neumann boundary), so that
 *  the taps afterwards never test an edge.
 *=========================================================================*/
#ifndef cifClampedTile_h
#define cifClampedTile_h

#include "cif/ClampedNeighborhood.h"

namespace cif
{

/** A job's sizes as the kernels take them (by value). */
struct ClampedKernelGeometry
{
  long long inputSize[3];
  long long outputStart[3];
  long long outputSize[3];

  explicit ClampedKernelGeometry(const ClampedNeighborhoodGeometry & g)
  {
    for (int a = 0; a < 3; ++a)
    {
      inputSize[a] = g.inputSize[a];
      outputStart[a] = g.outputStart[a];
      outputSize[a] = g.outputSize[a];
    }
  }
};

#if defined(__CUDACC__)
__device__ __forceinline__ long long
ClampIndex(long long i, long long n)
{
  return i < 0 ? 0 : (i >= n ? n - 1 : i);
}

/** A block's box of outputs: its first output (block index times the box
 * size (bx, by, bz), relative to the output region) and the first input
 * sample of its tile (that output's input index minus the halo (hx, hy, hz)). */
struct BlockBox
{
  long long output[3];
  long long first[3];
};

__device__ __forceinline__ BlockBox
BlockBoxOf(const ClampedKernelGeometry & g, int bx, int by, int bz, int hx, int hy, int hz)
{
  BlockBox        b;
  const long long size[3] = { bx, by, bz }, halo[3] = { hx, hy, hz }, index[3] = { blockIdx.x, blockIdx.y, blockIdx.z };
  for (int a = 0; a < 3; ++a)
  {
    b.output[a] = index[a] * size[a];
    b.first[a] = g.outputStart[a] + b.output[a] - halo[a];
  }
  return b;
}

/** All threads of the block load the input box of size (tx, ty, tz) whose
 * first sample is `first` (indices clamped to the input) into `tile`, x
 * fastest, each sample converted by `load`. */
template <typename TIn, typename V, typename TLoad>
__device__ __forceinline__ void
LoadClampedTile(const TIn * __restrict__ in,
                V *                           tile,
                const ClampedKernelGeometry & g,
                const long long               first[3],
                int                           tx,
                int                           ty,
                int                           tz,
                TLoad                         load)
{
  const int       count = tx * ty * tz;
  const int       threads = blockDim.x * blockDim.y * blockDim.z;
  const long long nx = g.inputSize[0], ny = g.inputSize[1], nz = g.inputSize[2];
  for (int i = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x; i < count; i += threads)
  {
    const int       lx = i % tx;
    const int       rest = i / tx;
    const int       ly = rest % ty;
    const int       lz = rest / ty;
    const long long gx = ClampIndex(first[0] + lx, nx), gy = ClampIndex(first[1] + ly, ny),
                    gz = ClampIndex(first[2] + lz, nz);
    tile[i] = load(in[(gz * ny + gy) * nx + gx]);
  }
}
#endif

} // namespace cif

#endif
