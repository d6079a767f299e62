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
 *    counters in shared memory; one launch, or one per 8-bit level of the
 *    key, after KeyRangeKernel found the keys' range.
 *  Blocks are numbered linearly (no grid y/z limits).
 *=========================================================================*/
#include "cifCudaStream.h"
#include "cif/CudaError.h"
#include "cif/Runtime.h"
#include "cif/Median.h"
#include "cifMedianKernels.h"
#include "cifPixelLists.h"

#include <cuda_runtime.h>
#include <algorithm>
#include <stdexcept>
#include <type_traits>

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

template <typename T, class Window>
__global__ void __launch_bounds__(256)
  SelectionKernel(const SelectionParams p, const T * __restrict__ input, T * __restrict__ output)
{
  auto *    tile = reinterpret_cast<std::uint32_t *>(cifMedianShared);
  const int blockOutputs[3] = { p.threads[0] * kLanes<T>, p.threads[1], 2 * p.threads[2] };
  int       first[3], origin[3];
  BlockOrigins(p.blocks, blockIdx.x, blockOutputs, p.outStart, p.radius, first, origin);
  int warp, lane, warps;
  ThreadPlace(warp, lane, warps);
  const auto lines = reinterpret_cast<const T **>(tile + SelectionLinesWord(p.tile, p.span));
  SelectionLines<T>(p, input, lines, origin, warp * 32 + lane, warps * 32);
  __syncthreads();
  SelectionLoadTile<T>(p, lines, tile, origin, warp, lane, warps);
  __syncthreads();
  SelectionThread<T, Window>(p, tile, output, first, threadIdx.x, threadIdx.y, threadIdx.z);
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
__global__ void __launch_bounds__(256, 4) SlidingKernel(const SlidingParams p, const T * __restrict__ input, T * output)
{
  const int words = SlidingWarpWords(p);
  auto *    mine = reinterpret_cast<Word *>(cifMedianShared) + (threadIdx.x / 32) * words;
  auto &    header = *reinterpret_cast<SlidingHeader *>(mine);
  Word *    counts = mine + kSlidingHeaderWords;
  const int lane = threadIdx.x % 32;
  int       o0, o1, zBegin, zEnd;
  SlidingPlace(p, blockIdx.x, threadIdx.x / 32, o0, o1, zBegin, zEnd);
  if (o0 >= p.outSize[0])
  {
    return; // the whole warp
  }
  for (int z = zBegin; z < zEnd; ++z)
  {
    const SlidingStep s = SlidingBegin<T>(p, output, header, o0, o1, z, zBegin);
    SlidingClear(p, header, counts, s, lane);
    __syncwarp();
    SlidingCount<T>(p, input, header, counts, s, o0, o1, z, lane);
    __syncwarp();
    SlidingFind<T>(p, output, header, counts, s, lane);
    __syncwarp();
  }
}

/** range[0] = min, range[1] = max of the keys of input[0, count). */
template <typename T>
__global__ void
KeyRangeKernel(const T * __restrict__ input, std::int64_t count, Word * range)
{
  Word lowest = 0xFFFFFFFFu, highest = 0;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
  {
    const Word key = Keys<T>::ToKey(input[i]);
    lowest = min(lowest, key);
    highest = max(highest, key);
  }
  for (int k = 16; k > 0; k /= 2)
  {
    lowest = min(lowest, __shfl_xor_sync(0xFFFFFFFFu, lowest, k));
    highest = max(highest, __shfl_xor_sync(0xFFFFFFFFu, highest, k));
  }
  if (threadIdx.x % 32 == 0)
  {
    atomicMin(&range[0], lowest);
    atomicMax(&range[1], highest);
  }
}

/** range[0] = smallest, range[1] = largest value, range[2] = 1 if a value
 * is not an IntegralFloat (range[0..1] are then meaningless). */
__global__ void
IntegerRangeKernel(const float * __restrict__ input, std::int64_t count, int * range)
{
  int  lowest = 0x7FFFFFFF, highest = -0x7FFFFFFF - 1;
  bool integral = true;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
  {
    const float v = input[i];
    integral = integral && IntegralFloat(v);
    lowest = integral ? min(lowest, static_cast<int>(v)) : lowest;
    highest = integral ? max(highest, static_cast<int>(v)) : highest;
  }
  for (int k = 16; k > 0; k /= 2)
  {
    lowest = min(lowest, __shfl_xor_sync(0xFFFFFFFFu, lowest, k));
    highest = max(highest, __shfl_xor_sync(0xFFFFFFFFu, highest, k));
  }
  const bool all = __all_sync(0xFFFFFFFFu, integral);
  if (threadIdx.x % 32 == 0)
  {
    atomicMin(&range[0], lowest);
    atomicMax(&range[1], highest);
    if (!all)
    {
      atomicOr(&range[2], 1);
    }
  }
}

__global__ void
ToOffsetsKernel(const float * __restrict__ input, std::int64_t count, int lowest, unsigned short * offsets)
{
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
  {
    offsets[i] = static_cast<unsigned short>(static_cast<int>(input[i]) - lowest);
  }
}

__global__ void
FromOffsetsKernel(const unsigned short * __restrict__ offsets, std::int64_t count, int lowest, float * output)
{
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
  {
    output[i] = static_cast<float>(lowest + offsets[i]);
  }
}

unsigned
GridFor(std::int64_t count)
{
  return static_cast<unsigned>(std::max<std::int64_t>(1, std::min<std::int64_t>((count + 255) / 256, 4096)));
}

/** Device memory freed on scope exit; Allocate returns false (and clears
 * the error) when the device is out of memory. */
struct Scratch
{
  void * pointer = nullptr;
  bool
  Allocate(std::size_t bytes)
  {
    const cudaError_t status = cudaMalloc(&pointer, bytes);
    if (status == cudaErrorMemoryAllocation)
    {
      (void)cudaGetLastError();
      pointer = nullptr;
      return false;
    }
    CIF_CUDA_CHECK(status);
    return true;
  }
  ~Scratch()
  {
    if (pointer)
    {
      cudaFree(pointer);
    }
  }
};

/** Smallest and largest key of the whole input buffer. */
template <typename T>
void
KeyRangeOnDevice(const T * input, const MedianGeometry & g, Word & lowest, Word & highest)
{
  const std::int64_t count = g.inputSize[0] * g.inputSize[1] * g.inputSize[2];
  Word               bounds[2] = { 0xFFFFFFFFu, 0u };
  Scratch            range;
  if (!range.Allocate(sizeof bounds))
  {
    CIF_CUDA_CHECK(cudaErrorMemoryAllocation); // throws, as any failed allocation
  }
  CIF_CUDA_CHECK(cudaMemcpyAsync(range.pointer, bounds, sizeof bounds, cudaMemcpyHostToDevice, ::cif::Stream()));
  KeyRangeKernel<T><<<GridFor(count), 256, 0, ::cif::Stream()>>>(input, count, static_cast<Word *>(range.pointer));
  CIF_CUDA_CHECK_LAUNCH("KeyRangeKernel");
  CIF_CUDA_CHECK(cudaMemcpyAsync(bounds, range.pointer, sizeof bounds, cudaMemcpyDeviceToHost, ::cif::Stream()));
  CIF_CUDA_SYNCHRONIZE_STREAM();
  lowest = bounds[0];
  highest = bounds[1];
}

std::size_t
SharedMemoryPerBlock()
{
  return cif::Runtime::GetMaxSharedMemoryPerBlock();
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
  kernel<<<static_cast<unsigned>(blocks), dim3(threads[0], threads[1], threads[2]), shared, ::cif::Stream()>>>(args...);
  CIF_CUDA_CHECK_LAUNCH(name);
}

} // namespace

namespace
{
/** Float jobs past the selection kernel whose pixels are all integers
 * (IntegralFloat) spanning fewer than 2^16 values run on 16-bit offsets
 * from the smallest one: the same order, so the same median, with narrower
 * keys (one level of sliding-histogram counters for a span under 4096).
 * Returns false, having written nothing, when the pixels do not qualify or
 * the 16-bit copies do not fit the device. */
bool
MedianOfIntegralFloats(const float *          input,
                       float *                output,
                       const MedianGeometry & g,
                       MedianKernel           request,
                       MedianPlan &           plan)
{
  const std::int64_t inCount = g.inputSize[0] * g.inputSize[1] * g.inputSize[2];
  const std::int64_t outCount = g.outputSize[0] * g.outputSize[1] * g.outputSize[2];
  Scratch            range;
  int                bounds[3] = { 0x7FFFFFFF, -0x7FFFFFFF - 1, 0 };
  if (!range.Allocate(sizeof bounds))
  {
    return false;
  }
  CIF_CUDA_CHECK(cudaMemcpyAsync(range.pointer, bounds, sizeof bounds, cudaMemcpyHostToDevice, ::cif::Stream()));
  IntegerRangeKernel<<<GridFor(inCount), 256, 0, ::cif::Stream()>>>(input, inCount, static_cast<int *>(range.pointer));
  CIF_CUDA_CHECK_LAUNCH("IntegerRangeKernel");
  CIF_CUDA_CHECK(cudaMemcpyAsync(bounds, range.pointer, sizeof bounds, cudaMemcpyDeviceToHost, ::cif::Stream()));
  CIF_CUDA_SYNCHRONIZE_STREAM();
  Scratch in, out;
  if (bounds[2] != 0 || bounds[1] - bounds[0] >= 65536 || !in.Allocate(inCount * sizeof(unsigned short)) ||
      !out.Allocate(outCount * sizeof(unsigned short)))
  {
    return false;
  }
  ToOffsetsKernel<<<GridFor(inCount), 256, 0, ::cif::Stream()>>>(
    input, inCount, bounds[0], static_cast<unsigned short *>(in.pointer));
  CIF_CUDA_CHECK_LAUNCH("ToOffsetsKernel");
  plan =
    MedianCUDA(static_cast<const unsigned short *>(in.pointer), static_cast<unsigned short *>(out.pointer), g, request);
  FromOffsetsKernel<<<GridFor(outCount), 256, 0, ::cif::Stream()>>>(
    static_cast<const unsigned short *>(out.pointer), outCount, bounds[0], output);
  CIF_CUDA_CHECK_LAUNCH("FromOffsetsKernel");
  CIF_CUDA_SYNCHRONIZE_STREAM();
  plan.description = IntegralFloatsNote(bounds[0], bounds[1]) + plan.description;
  return true;
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
  MedianPlan plan = PlanMedian<T>(g, request, SharedMemoryPerBlock());
  if constexpr (std::is_same<T, float>::value)
  {
    if (plan.kernel != MedianKernel::Selection && MedianWindowSize(g) > 1 &&
        MedianOfIntegralFloats(input, output, g, request, plan))
    {
      return plan;
    }
  }
  Word lowest = 0, highest = 0xFFFFFFFFu;
  if (plan.kernel != MedianKernel::Selection && MedianWindowSize(g) > 1)
  {
    // The keys' span can make the sliding histogram cheaper (one level).
    KeyRangeOnDevice(input, g, lowest, highest);
    plan = PlanMedian<T>(g, request, SharedMemoryPerBlock(), highest - lowest);
  }
  if (plan.kernel == MedianKernel::Selection)
  {
    const SelectionParams p = MakeSelectionParams<T>(g, plan);
    WithSelectionWindow(plan.bucket,
                        p,
                        [&](auto window)
                        {
                          Launch(SelectionKernel<T, decltype(window)>,
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
    std::string what;
    for (const SlidingParams & p : SlidingLaunches<T>(g, lowest, highest, SharedMemoryPerBlock(), what))
    {
      const int threads[3] = { 32 * p.warps, 1, 1 };
      Launch(SlidingKernel<T>,
             "SlidingKernel",
             SlidingBlockCount(p),
             threads,
             static_cast<std::size_t>(p.warps) * SlidingWarpWords(p) * sizeof(Word),
             p,
             input,
             output);
    }
    plan.description += what;
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
  CIF_CUDA_SYNCHRONIZE_STREAM();
  return plan;
}

#define CIF_INSTANTIATE_MEDIAN_CUDA(T)                                                                                 \
  template MedianPlan MedianCUDA<T>(const T *, T *, const MedianGeometry &, MedianKernel);
CIF_MEDIAN_PIXELS(CIF_INSTANTIATE_MEDIAN_CUDA)

} // namespace cif
