/*=========================================================================
 *  CudaImageFilters: CUDA kernels of thresholding and the packed mask
 *  (layout in cifPackedMask.h).
 *
 *  - Threshold, unpack and apply: a block of 256 threads covers 1024
 *    consecutive voxels of one row (4 per thread, 256 apart, so every
 *    access of a warp is coalesced).
 *  - Threshold + pack: a warp handles 8 consecutive words of a row; lane i
 *    loads voxel 32 w + i of each word (8 loads in flight), and one
 *    __ballot_sync per word turns the 32 predicates into the word (bit i =
 *    lane i). Lanes 0..7 then store the 8 words (one 32-byte store).
 *=========================================================================*/
#include "cifCudaStream.h"
#include "cif/CudaError.h"
#include "cif/PackedMask.h"
#include "cifPixelLists.h"

#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>
#include <limits>

namespace cif
{

bool
PackedMaskCUDAIsCompiled()
{
  return true;
}

namespace
{

constexpr int kThreads = 256;
constexpr int kPerThread = 4;
constexpr int kRowChunk = kThreads * kPerThread; // voxels of a row per block
constexpr int kWordsPerWarp = 8;

/** q = n / d, r = n - q d, in 32-bit arithmetic when both fit (much cheaper on the GPU). */
__device__ __forceinline__ void
DivMod(std::int64_t n, std::int64_t d, std::int64_t & q, std::int64_t & r)
{
  if (n <= 0xffffffffLL && d <= 0xffffffffLL)
  {
    const auto q32 = static_cast<std::uint32_t>(n) / static_cast<std::uint32_t>(d);
    q = q32;
  }
  else
  {
    q = n / d;
  }
  r = n - q * d;
}

unsigned
BlocksFor(std::int64_t blocks, const char * kernel)
{
  if (blocks > std::numeric_limits<int>::max())
  {
    throw CudaFailure(-1, "the image is too large for one launch", kernel);
  }
  return static_cast<unsigned>(std::max<std::int64_t>(blocks, 1));
}

template <typename TIn, typename TOut>
__global__ void
ThresholdKernel(const TIn *         input, // may alias output (in-place filters): no __restrict__
                TOut *              output,
                ElementwiseGeometry g,
                std::int64_t        chunksPerRow,
                TIn                 lower,
                TIn                 upper,
                TOut                inside,
                TOut                outside)
{
  std::int64_t row, chunk, z, y;
  DivMod(blockIdx.x, chunksPerRow, row, chunk);
  DivMod(row, g.size[1], z, y);
  const TIn * in = input + y * g.inputRowPitch + z * g.inputSlicePitch;
  TOut *      out = output + row * g.size[0];
#pragma unroll
  for (int k = 0; k < kPerThread; ++k)
  {
    const std::int64_t x = chunk * kRowChunk + k * kThreads + threadIdx.x;
    if (x < g.size[0])
    {
      const TIn v = in[x];
      out[x] = (lower <= v && v <= upper) ? inside : outside;
    }
  }
}

template <typename TIn>
__global__ void
ThresholdPackKernel(const TIn * __restrict__ input,
                    std::uint32_t * __restrict__ words,
                    std::int64_t nx,
                    std::int64_t wordsPerRow,
                    std::int64_t unitsPerRow,
                    std::int64_t units,
                    TIn          lower,
                    TIn          upper)
{
  const int          lane = threadIdx.x & 31;
  const std::int64_t warps = (static_cast<std::int64_t>(gridDim.x) * blockDim.x) >> 5;
  for (std::int64_t u = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5; u < units;
       u += warps) // u is the same for the whole warp, so the ballots below see every lane
  {
    std::int64_t row, unit;
    DivMod(u, unitsPerRow, row, unit);
    const std::int64_t w0 = unit * kWordsPerWarp;
    const TIn *        in = input + row * nx;
    bool               inside[kWordsPerWarp];
#pragma unroll
    for (int k = 0; k < kWordsPerWarp; ++k)
    {
      const std::int64_t x = (w0 + k) * 32 + lane;
      inside[k] = false;
      if (x < nx)
      {
        const TIn v = in[x];
        inside[k] = lower <= v && v <= upper;
      }
    }
    std::uint32_t mine = 0;
#pragma unroll
    for (int k = 0; k < kWordsPerWarp; ++k)
    {
      const std::uint32_t word = __ballot_sync(0xffffffffu, inside[k]);
      if (lane == k)
      {
        mine = word;
      }
    }
    if (lane < kWordsPerWarp && w0 + lane < wordsPerRow)
    {
      words[row * wordsPerRow + w0 + lane] = mine;
    }
  }
}

template <typename TOut>
__global__ void
UnpackKernel(const std::uint32_t * __restrict__ words,
             TOut * __restrict__ output,
             std::int64_t nx,
             std::int64_t wordsPerRow,
             std::int64_t chunksPerRow,
             TOut         inside,
             TOut         outside)
{
  std::int64_t row, chunk;
  DivMod(blockIdx.x, chunksPerRow, row, chunk);
  const std::uint32_t * mask = words + row * wordsPerRow;
  TOut *                out = output + row * nx;
#pragma unroll
  for (int k = 0; k < kPerThread; ++k)
  {
    const std::int64_t x = chunk * kRowChunk + k * kThreads + threadIdx.x;
    if (x < nx)
    {
      out[x] = ((__ldg(mask + (x >> 5)) >> (x & 31)) & 1u) ? inside : outside;
    }
  }
}

template <typename T>
__global__ void
ApplyKernel(const T * __restrict__ input,
            const std::uint32_t * __restrict__ words,
            T * __restrict__ output,
            std::int64_t nx,
            std::int64_t wordsPerRow,
            std::int64_t chunksPerRow,
            T            outside)
{
  std::int64_t row, chunk;
  DivMod(blockIdx.x, chunksPerRow, row, chunk);
  const std::uint32_t * mask = words + row * wordsPerRow;
  const T *             in = input + row * nx;
  T *                   out = output + row * nx;
#pragma unroll
  for (int k = 0; k < kPerThread; ++k)
  {
    const std::int64_t x = chunk * kRowChunk + k * kThreads + threadIdx.x;
    if (x < nx)
    {
      out[x] = ((__ldg(mask + (x >> 5)) >> (x & 31)) & 1u) ? in[x] : outside;
    }
  }
}

std::int64_t
ChunksPerRow(std::int64_t nx)
{
  return (nx + kRowChunk - 1) / kRowChunk;
}

} // namespace

template <typename TIn, typename TOut>
void
ThresholdCUDA(const TIn *                 input,
              TOut *                      output,
              const ElementwiseGeometry & g,
              TIn                         lower,
              TIn                         upper,
              TOut                        inside,
              TOut                        outside)
{
  const std::int64_t chunks = ChunksPerRow(g.size[0]);
  const unsigned     blocks = BlocksFor(chunks * g.size[1] * g.size[2], "ThresholdKernel");
  ThresholdKernel<<<blocks, kThreads, 0, ::cif::Stream()>>>(input, output, g, chunks, lower, upper, inside, outside);
  CIF_CUDA_CHECK_LAUNCH("ThresholdKernel");
  CIF_CUDA_SYNCHRONIZE_STREAM();
}

template <typename TIn>
void
ThresholdPackCUDA(const TIn * input, std::uint32_t * words, const MaskExtent & extent, TIn lower, TIn upper)
{
  const std::int64_t wordsPerRow = MaskWordsPerRow(extent.size[0]);
  const std::int64_t unitsPerRow = (wordsPerRow + kWordsPerWarp - 1) / kWordsPerWarp;
  const std::int64_t units = unitsPerRow * extent.Rows();
  const std::int64_t warpsPerBlock = kThreads / 32;
  // one warp per unit, capped; the kernel loops when there are more units
  const unsigned blocks =
    BlocksFor(std::min<std::int64_t>((units + warpsPerBlock - 1) / warpsPerBlock, 1 << 20), "ThresholdPackKernel");
  ThresholdPackKernel<<<blocks, kThreads, 0, ::cif::Stream()>>>(
    input, words, extent.size[0], wordsPerRow, unitsPerRow, units, lower, upper);
  CIF_CUDA_CHECK_LAUNCH("ThresholdPackKernel");
  CIF_CUDA_SYNCHRONIZE_STREAM();
}

template <typename TOut>
void
UnpackMaskCUDA(const std::uint32_t * words, TOut * output, const MaskExtent & extent, TOut inside, TOut outside)
{
  const std::int64_t chunks = ChunksPerRow(extent.size[0]);
  const unsigned     blocks = BlocksFor(chunks * extent.Rows(), "UnpackKernel");
  UnpackKernel<<<blocks, kThreads, 0, ::cif::Stream()>>>(
    words, output, extent.size[0], MaskWordsPerRow(extent.size[0]), chunks, inside, outside);
  CIF_CUDA_CHECK_LAUNCH("UnpackKernel");
  CIF_CUDA_SYNCHRONIZE_STREAM();
}

template <typename T>
void
ApplyPackedMaskCUDA(const T * input, const std::uint32_t * words, T * output, const MaskExtent & extent, T outside)
{
  const std::int64_t chunks = ChunksPerRow(extent.size[0]);
  const unsigned     blocks = BlocksFor(chunks * extent.Rows(), "ApplyKernel");
  ApplyKernel<<<blocks, kThreads, 0, ::cif::Stream()>>>(
    input, words, output, extent.size[0], MaskWordsPerRow(extent.size[0]), chunks, outside);
  CIF_CUDA_CHECK_LAUNCH("ApplyKernel");
  CIF_CUDA_SYNCHRONIZE_STREAM();
}

#define CIF_INSTANTIATE_THRESHOLD_CUDA(TIn, TOut)                                                                      \
  template void ThresholdCUDA<TIn, TOut>(const TIn *, TOut *, const ElementwiseGeometry &, TIn, TIn, TOut, TOut);
#define CIF_INSTANTIATE_MASK_CUDA(T)                                                                                   \
  CIF_THRESHOLD_OUTPUT_PIXELS_WITH(CIF_INSTANTIATE_THRESHOLD_CUDA, T) \
  template void ThresholdPackCUDA<T>(const T *, std::uint32_t *, const MaskExtent &, T, T);                            \
  template void UnpackMaskCUDA<T>(const std::uint32_t *, T *, const MaskExtent &, T, T);                               \
  template void ApplyPackedMaskCUDA<T>(const T *, const std::uint32_t *, T *, const MaskExtent &, T);
CIF_MASK_PIXELS(CIF_INSTANTIATE_MASK_CUDA)

} // namespace cif
