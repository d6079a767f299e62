/*=========================================================================
 *  CudaImageFilters: CUDA kernels and launcher of the median core.
 *
 *  The per-thread code lives in cifMedianKernels.h (shared with the CPU
 *  emulation); the kernels here only map blocks and threads onto it:
 *  - SelectionKernel: 128 threads (16x2 keys) or 256 (32-bit keys), a
 *    shared-memory tile of key words, forgetful selection in registers;
 *  - RadixTileKernel: 256 threads, a shared-memory tile of keys;
 *  - RadixGlobalKernel: 256 threads, reads global memory;
 *  - SlidingKernel: 8 warps, one per output line segment, each with its
 *    counters in shared memory; one launch per 8-bit level of the key.
 *  Blocks are numbered linearly (no grid y/z limits).
 *=========================================================================*/
#include "cifCudaError.h"
#include "cifMedian.h"
#include "cifMedianKernels.h"

#include <cuda_runtime.h>
#include <algorithm>
#include <stdexcept>

namespace cif
{

bool
MedianCUDAIsCompiled()
{
  return true;
}

namespace
{
using namespace median;

extern __shared__ __align__(16) unsigned char cifMedianShared[];

__device__ __forceinline__ void
ThreadPlace(int & warp, int & lane, int & warps)
{
  const int tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  warp = tid / 32;
  lane = tid % 32;
  warps = blockDim.x * blockDim.y * blockDim.z / 32;
}

template <typename T, int B>
__global__ void __launch_bounds__(256)
  SelectionKernel(const SelectionParams p, const T * __restrict__ input, T * __restrict__ output)
{
  auto *    tile = reinterpret_cast<std::uint32_t *>(cifMedianShared);
  const int blockOutputs[3] = { p.threads[0] * kLanes<T>, p.threads[1], 2 * p.threads[2] };
  int       first[3], origin[3];
  BlockOrigins(p.blocks, blockIdx.x, blockOutputs, p.outStart, p.radius, first, origin);
  int warp, lane, warps;
  ThreadPlace(warp, lane, warps);
  SelectionLoadTile<T>(p, input, tile, origin, warp, lane, warps);
  __syncthreads();
  SelectionThread<T, kBuckets[B].common, kBuckets[B].own>(
    p, tile, output, first, threadIdx.x, threadIdx.y, threadIdx.z);
}

template <typename T>
__global__ void __launch_bounds__(256)
  RadixTileKernel(const RadixParams p, const T * __restrict__ input, T * __restrict__ output)
{
  auto * tile = reinterpret_cast<typename Keys<T>::Storage *>(cifMedianShared);
  int    first[3], origin[3];
  BlockOrigins(p.blocks, blockIdx.x, p.threads, p.outStart, p.radius, first, origin);
  int warp, lane, warps;
  ThreadPlace(warp, lane, warps);
  RadixLoadTile<T>(p, input, tile, origin, warp, lane, warps);
  __syncthreads();
  RadixTileThread<T>(p, tile, output, first, threadIdx.x, threadIdx.y, threadIdx.z);
}

template <typename T>
__global__ void
RadixGlobalKernel(const RadixParams p, const T * __restrict__ input, T * __restrict__ output)
{
  int first[3], origin[3];
  BlockOrigins(p.blocks, blockIdx.x, p.threads, p.outStart, p.radius, first, origin);
  RadixGlobalThread<T>(p, input, output, first[0] + threadIdx.x, first[1] + threadIdx.y, first[2] + threadIdx.z);
}

template <typename T>
__global__ void __launch_bounds__(256)
  SlidingKernel(const SlidingParams p, const T * __restrict__ input, T * output)
{
  auto &    w = reinterpret_cast<SlidingWarp *>(cifMedianShared)[threadIdx.x / 32];
  const int lane = threadIdx.x % 32;
  int       o0, o1, zBegin, zEnd;
  SlidingPlace(p, blockIdx.x, threadIdx.x / 32, o0, o1, zBegin, zEnd);
  if (o0 >= p.outSize[0])
  {
    return; // the whole warp
  }
  for (int z = zBegin; z < zEnd; ++z)
  {
    const SlidingStep s = SlidingBegin<T>(p, output, w, o0, o1, z, zBegin);
    SlidingClear(w, s, lane);
    __syncwarp();
    SlidingCount<T>(p, input, w, s, o0, o1, z, lane);
    __syncwarp();
    SlidingFind<T>(p, output, w, s, lane);
    __syncwarp();
  }
}

std::size_t
SharedMemoryPerBlock()
{
  static const std::size_t bytes = []
  {
    int device = 0, value = 0;
    CIF_CUDA_CHECK(cudaGetDevice(&device));
    CIF_CUDA_CHECK(cudaDeviceGetAttribute(&value, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    return static_cast<std::size_t>(value);
  }();
  return bytes;
}

/** Launches `kernel` over `blocks` blocks of `threads`, with `shared` bytes
 * of dynamic shared memory (opting in above the default 48 KiB). */
template <typename TKernel, typename... TArgs>
void
Launch(TKernel kernel, const char * name, std::int64_t blocks, const int threads[3], std::size_t shared, TArgs... args)
{
  if (blocks < 1 || blocks > 0x7FFFFFFF)
  {
    throw std::invalid_argument(std::string("MedianCUDA: ") + name + " would need " + std::to_string(blocks) +
                                " blocks");
  }
  if (shared > 48 * 1024)
  {
    CIF_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared)));
  }
  kernel<<<static_cast<unsigned>(blocks), dim3(threads[0], threads[1], threads[2]), shared>>>(args...);
  CIF_CUDA_CHECK_LAUNCH(name);
}

} // namespace

template <typename T>
MedianPlan
MedianCUDA(const T * input, T * output, const MedianGeometry & g, MedianKernel request)
{
  const std::string why = ValidateMedianJob(g);
  if (!why.empty())
  {
    throw std::invalid_argument("MedianCUDA: " + why);
  }
  const MedianPlan plan = PlanMedian<T>(g, request, SharedMemoryPerBlock());
  if (plan.kernel == MedianKernel::Selection)
  {
    const SelectionParams p = MakeSelectionParams<T>(g, plan);
    WithBucket(plan.bucket,
               [&](auto b)
               {
                 Launch(SelectionKernel<T, decltype(b)::value>,
                        "SelectionKernel",
                        BlockCount(p.blocks),
                        p.threads,
                        plan.sharedBytes,
                        p,
                        input,
                        output);
               });
  }
  else if (plan.kernel == MedianKernel::SlidingHistogram)
  {
    for (int shift = Keys<T>::Bits - 8; shift >= 0; shift -= 8)
    {
      const SlidingParams p = MakeSlidingParams<T>(g, plan, shift);
      const int           threads[3] = { 32 * p.warps, 1, 1 };
      Launch(SlidingKernel<T>, "SlidingKernel", SlidingBlockCount(p), threads, plan.sharedBytes, p, input, output);
    }
  }
  else
  {
    const RadixParams  p = MakeRadixParams(g, plan, static_cast<int>(sizeof(typename Keys<T>::Storage)));
    const std::int64_t blocks = BlockCount(p.blocks);
    if (plan.kernel == MedianKernel::RadixTile)
    {
      Launch(RadixTileKernel<T>, "RadixTileKernel", blocks, p.threads, plan.sharedBytes, p, input, output);
    }
    else
    {
      Launch(RadixGlobalKernel<T>, "RadixGlobalKernel", blocks, p.threads, 0, p, input, output);
    }
  }
  CIF_CUDA_CHECK(cudaDeviceSynchronize());
  return plan;
}

#define CIF_INSTANTIATE_MEDIAN_CUDA(T)                                                                                 \
  template MedianPlan MedianCUDA<T>(const T *, T *, const MedianGeometry &, MedianKernel);
CIF_INSTANTIATE_MEDIAN_CUDA(unsigned char)
CIF_INSTANTIATE_MEDIAN_CUDA(short)
CIF_INSTANTIATE_MEDIAN_CUDA(unsigned short)
CIF_INSTANTIATE_MEDIAN_CUDA(float)

} // namespace cif
