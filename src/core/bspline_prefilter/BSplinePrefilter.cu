/*=========================================================================
 *  CudaImageFilters: CUDA kernels and launcher of the cubic B-spline prefilter.
 *
 *  Recursive method: a block loads a tile of whole lines into shared memory
 *  with coalesced loads (along x for the x pass, across x for the y and z
 *  passes), runs the causal and anticausal recursions there, one thread per
 *  line, and writes the tile back coalesced. Each pass therefore reads and
 *  writes the volume once. The tile holds doubles: rounding the causal
 *  intermediate to float would cost a factor of ~5 in accuracy against ITK
 *  (which recurses in double and rounds once per pass), and double
 *  arithmetic on 2 FMAs per sample is free next to the memory traffic.
 *  Lines longer than a whole shared-memory block (about 29000 samples) use a
 *  slower kernel that recurses in global memory, in the output's precision.
 *
 *  FIR method: one thread per output sample and axis pass, taps passed by
 *  value; neighbouring threads share loads through the caches.
 *=========================================================================*/
#include "cifCudaStream.h"
#include "cif/BSplinePrefilter.h"
#include "cif/CudaError.h"
#include "cifBSplineRecursion.h"
#include "cifPixelLists.h"
#include "cifMirror.h"
#include "cif/PooledBuffer.h"
#include "cif/Runtime.h"

#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace cif
{

bool
PrefilterCUDAIsCompiled()
{
  return true;
}

namespace
{

constexpr int kThreads = 256;
// Tuning knobs of the tile kernel (measured on an H200 at 512^3: 512 threads,
// three blocks per multiprocessor, 8 loads in flight, tiles up to 72 KiB,
// 16 interleaved lines for the y and z passes, segments of at least 64
// samples; smaller tiles, more loads in flight, shorter segments and a
// register-prefetching persistent variant were all slower).
#ifndef CIF_TILE_THREADS
#  define CIF_TILE_THREADS 512
#endif
#ifndef CIF_TILE_MIN_BLOCKS
#  define CIF_TILE_MIN_BLOCKS 3
#endif
#ifndef CIF_TILE_BUDGET_KB
#  define CIF_TILE_BUDGET_KB 72
#endif
#ifndef CIF_STRIDED_LINES
#  define CIF_STRIDED_LINES 16
#endif
#ifndef CIF_MIN_SEGMENT
#  define CIF_MIN_SEGMENT 64
#endif
#ifndef CIF_MAX_SEGMENTS
#  define CIF_MAX_SEGMENTS 16
#endif
#ifndef CIF_LOADS_IN_FLIGHT
#  define CIF_LOADS_IN_FLIGHT 8
#endif
constexpr int kTileThreads = CIF_TILE_THREADS;

/** One line's recursion, in place in shared (or global) memory: sample i is c[i * step]. */
template <typename T>
__device__ void
RecursiveLine(T * c, std::int64_t n, std::int64_t step, T z, int horizon)
{
  const T sum = MirrorCausalStart(c, n, step, z, static_cast<std::int64_t>(horizon));
  c[0] = sum;
  T previous = sum;
#pragma unroll 8
  for (std::int64_t i = 1; i < n; ++i)
  {
    previous = c[i * step] + z * previous;
    c[i * step] = previous;
  }
  T next = MirrorAnticausalStart(c, n, step, z);
  c[(n - 1) * step] = next;
#pragma unroll 8
  for (std::int64_t i = n - 2; i >= 0; --i)
  {
    next = z * (next - c[i * step]);
    c[i * step] = next;
  }
}

/** Geometry of one recursive pass: lines are indexed by (u, v); lines with
 * consecutive u are grouped in a tile. */
struct LinePass
{
  std::int64_t n;  // samples per line
  std::int64_t sn; // stride between samples
  std::int64_t nu; // number of u lines
  std::int64_t su; // stride between u lines
  std::int64_t nv; // number of v lines
  std::int64_t sv; // stride between v lines
};

using Accumulator = double; // precision of the shared-memory tile and the recursion

/** Loads, in flight at once per thread, when a tile is read or written:
 * enough bytes in flight per multiprocessor to cover the memory latency. */
constexpr int kLoadsInFlight = CIF_LOADS_IN_FLIGHT;

/** Where line l, sample i of a tile lives in shared memory: rows of
 * `rowStride` (odd: the lines' threads hit distinct banks) for contiguous
 * lines (x pass), interleaved lines for strided ones (y and z passes). */
struct TileMap
{
  bool contiguous;
  int  n;
  int  linesPerTile;
  int  rowStride;

  __device__ int
  Shared(int l, int i) const
  {
    return contiguous ? l * rowStride + i : i * linesPerTile + l;
  }
};

/** Moves a tile between global and shared memory, kLoadsInFlight accesses
 * per thread at a time, with index arithmetic kept to increments: the x pass
 * gives each warp whole lines (coalesced along x), the y and z passes give
 * each thread one line and consecutive threads neighbouring lines (coalesced
 * across x). `Move(global, shared)` is called for every element. */
template <typename TMove>
__device__ void
ForEachTileElement(const TileMap & map, int lines, std::int64_t lineStride, std::int64_t sampleStride, TMove move)
{
  if (map.contiguous)
  {
    const int warps = blockDim.x / 32;
    const int lane = threadIdx.x % 32;
    for (int l = threadIdx.x / 32; l < lines; l += warps)
    {
      const std::int64_t line = l * lineStride;
      const int          row = l * map.rowStride;
      for (int i0 = lane; i0 < map.n; i0 += 32 * kLoadsInFlight)
      {
        move.template Batch<kLoadsInFlight>(
          [&](int k, bool & valid, std::int64_t & g, int & sh)
          {
            const int i = i0 + 32 * k;
            valid = i < map.n;
            g = line + i;
            sh = row + i;
          });
      }
    }
  }
  else
  {
    const int l = threadIdx.x % map.linesPerTile;
    const int rows = blockDim.x / map.linesPerTile;
    if (l >= lines)
    {
      return;
    }
    const std::int64_t rowStep = rows * sampleStride;
    for (int i0 = threadIdx.x / map.linesPerTile; i0 < map.n; i0 += rows * kLoadsInFlight)
    {
      const std::int64_t g0 = l * lineStride + static_cast<std::int64_t>(i0) * sampleStride;
      move.template Batch<kLoadsInFlight>(
        [&](int k, bool & valid, std::int64_t & g, int & sh)
        {
          const int i = i0 + rows * k;
          valid = i < map.n;
          g = g0 + k * rowStep;
          sh = i * map.linesPerTile + l;
        });
    }
  }
}

/** Global -> shared, scaled by the gain: all loads of a batch are issued before the first store. */
template <typename TIn>
struct LoadTile
{
  const TIn *   source;
  Accumulator * tile;
  Accumulator   gain;
  template <int K, typename TIndex>
  __device__ void
  Batch(TIndex index) const
  {
    TIn  value[K];
    bool valid[K];
    int  shared[K];
#pragma unroll
    for (int k = 0; k < K; ++k)
    {
      std::int64_t g;
      index(k, valid[k], g, shared[k]);
      if (valid[k])
      {
        value[k] = source[g];
      }
    }
#pragma unroll
    for (int k = 0; k < K; ++k)
    {
      if (valid[k])
      {
        tile[shared[k]] = gain * static_cast<Accumulator>(value[k]);
      }
    }
  }
};

/** Shared -> global, rounded to the output type. */
template <typename T>
struct StoreTile
{
  T *                 destination;
  const Accumulator * tile;
  template <int K, typename TIndex>
  __device__ void
  Batch(TIndex index) const
  {
#pragma unroll
    for (int k = 0; k < K; ++k)
    {
      bool         valid;
      std::int64_t g;
      int          sh;
      index(k, valid, g, sh);
      if (valid)
      {
        destination[g] = static_cast<T>(tile[sh]);
      }
    }
  }
};

/** The recursion of a whole tile, in parallel over lines and over segments
 * of each line. Every thread of the block must call it (it synchronises).
 *
 * A line is cut into `segments` pieces of `segmentLength` samples (the last
 * one possibly shorter, never shorter than the horizon). A piece's causal
 * recursion starts from the truncated sum c+[s] = sum_{k < horizon} z^k x[s - k]
 * and its anticausal recursion from c[e] = -sum_{k < horizon} z^(k+1) c+[e + k]:
 * the same truncation, |z|^horizon < 1e-10, that ITK applies to the
 * initial causal coefficient of every line. The line's true ends use ITK's
 * mirror-boundary initialisations exactly. */
template <typename TMap>
__device__ void
RecursiveTile(Accumulator * tile,
              const TMap &  map,
              int           lines,
              int           segments,
              int           segmentLength,
              Accumulator   z,
              int           horizon)
{
  const int     n = map.n;
  const int     l = threadIdx.x % map.linesPerTile;
  const int     segment = threadIdx.x / map.linesPerTile;
  const bool    active = l < lines && segment < segments;
  const int     first = segment * segmentLength;
  const int     last = min(first + segmentLength, n) - 1;
  const int     step = map.contiguous ? 1 : map.linesPerTile;
  Accumulator * c = tile + map.Shared(l, 0);

  // 1. causal start values (reads only)
  Accumulator start = 0;
  if (active)
  {
    if (segment > 0)
    {
      Accumulator zk = 1;
      for (int k = 0; k < horizon; ++k)
      {
        start += zk * c[(first - k) * step];
        zk *= z;
      }
    }
    else
    {
      start = MirrorCausalStart(
        c, static_cast<std::int64_t>(n), static_cast<std::int64_t>(step), z, static_cast<std::int64_t>(horizon));
    }
  }
  __syncthreads();
  // 2. causal recursion over the segment, four loads ahead
  if (active)
  {
    Accumulator previous = start;
    c[first * step] = previous;
    int i = first + 1;
    for (; i + 3 <= last; i += 4)
    {
      const Accumulator x0 = c[i * step], x1 = c[(i + 1) * step], x2 = c[(i + 2) * step], x3 = c[(i + 3) * step];
      previous = x0 + z * previous;
      c[i * step] = previous;
      previous = x1 + z * previous;
      c[(i + 1) * step] = previous;
      previous = x2 + z * previous;
      c[(i + 2) * step] = previous;
      previous = x3 + z * previous;
      c[(i + 3) * step] = previous;
    }
    for (; i <= last; ++i)
    {
      previous = c[i * step] + z * previous;
      c[i * step] = previous;
    }
  }
  __syncthreads();
  // 3. anticausal start values (reads the causal results only)
  if (active)
  {
    if (segment == segments - 1)
    {
      start = MirrorAnticausalStart(c, static_cast<std::int64_t>(n), static_cast<std::int64_t>(step), z);
    }
    else
    {
      start = 0;
      Accumulator zk = z;
      for (int k = 0; k < horizon; ++k)
      {
        start -= zk * c[(last + k) * step];
        zk *= z;
      }
    }
  }
  __syncthreads();
  // 4. anticausal recursion over the segment
  if (active)
  {
    Accumulator next = start;
    c[last * step] = next;
    int i = last - 1;
    for (; i - 3 >= first; i -= 4)
    {
      const Accumulator x0 = c[i * step], x1 = c[(i - 1) * step], x2 = c[(i - 2) * step], x3 = c[(i - 3) * step];
      next = z * (next - x0);
      c[i * step] = next;
      next = z * (next - x1);
      c[(i - 1) * step] = next;
      next = z * (next - x2);
      c[(i - 2) * step] = next;
      next = z * (next - x3);
      c[(i - 3) * step] = next;
    }
    for (; i >= first; --i)
    {
      next = z * (next - c[i * step]);
      c[i * step] = next;
    }
  }
}

template <typename TIn, typename T>
__global__ void
__launch_bounds__(kTileThreads, CIF_TILE_MIN_BLOCKS) RecursiveTileKernel(const TIn * in,
                                                                         T *         out,
                                                                         LinePass    pass,
                                                                         int         linesPerTile,
                                                                         int         segments,
                                                                         int         segmentLength,
                                                                         Accumulator z,
                                                                         Accumulator gain,
                                                                         int         horizon)
{
  extern __shared__ unsigned char sharedBytes[];
  Accumulator *                   tile = reinterpret_cast<Accumulator *>(sharedBytes);
  TileMap                         map;
  map.contiguous = pass.sn == 1;
  map.n = static_cast<int>(pass.n);
  map.linesPerTile = linesPerTile;
  map.rowStride = static_cast<int>(pass.n | 1);
  const std::int64_t u0 = static_cast<std::int64_t>(blockIdx.x) * linesPerTile;
  const int          lines = static_cast<int>(min(static_cast<std::int64_t>(linesPerTile), pass.nu - u0));

  for (std::int64_t v = blockIdx.y; v < pass.nv; v += gridDim.y)
  {
    const std::int64_t base = u0 * pass.su + v * pass.sv;
    ForEachTileElement(map, lines, pass.su, pass.sn, LoadTile<TIn>{ in + base, tile, gain });
    __syncthreads();
    RecursiveTile(tile, map, lines, segments, segmentLength, z, horizon);
    __syncthreads();
    ForEachTileElement(map, lines, pass.su, pass.sn, StoreTile<T>{ out + base, tile });
    __syncthreads();
  }
}

/** Lines too long for shared memory: one thread per line, in global memory. */
template <typename TIn, typename T>
__global__ void
RecursiveGlobalKernel(const TIn * in, T * out, LinePass pass, T z, T gain, int horizon)
{
  const std::int64_t lines = pass.nu * pass.nv;
  for (std::int64_t line = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; line < lines;
       line += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
  {
    const std::int64_t base = (line % pass.nu) * pass.su + (line / pass.nu) * pass.sv;
    for (std::int64_t i = 0; i < pass.n; ++i)
    {
      out[base + i * pass.sn] = gain * static_cast<T>(in[base + i * pass.sn]);
    }
    RecursiveLine(out + base, pass.n, pass.sn, z, horizon);
  }
}

template <typename TIn, typename T>
__global__ void
ConvertKernel(const TIn * __restrict__ in, T * out, std::int64_t count)
{
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
  {
    out[i] = static_cast<T>(in[i]);
  }
}

struct Box
{
  std::int64_t start[3];
  std::int64_t size[3];
};

/** FIR taps b(0..K), passed by value. The sums run in double: the float
 * sums of 2K + 1 signed terms lost a factor of ~4 in accuracy, and the
 * kernel is far from being limited by arithmetic. */
struct Taps
{
  double value[MaxFIRHalfWidth + 1];
};

/** One FIR pass along `axis`: dst (box dstBox) from src (box srcBox). */
template <typename TSrc, typename T>
__global__ void
FIRAxisKernel(const TSrc * __restrict__ src,
              Box srcBox,
              T * __restrict__ dst,
              Box          dstBox,
              int          axis,
              std::int64_t n,
              int          k,
              Taps         taps)
{
  const std::int64_t x = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  const std::int64_t y = blockIdx.y * static_cast<std::int64_t>(blockDim.y) + threadIdx.y;
  if (x >= dstBox.size[0] || y >= dstBox.size[1])
  {
    return;
  }
  const std::int64_t srcStride[3] = { 1, srcBox.size[0], srcBox.size[0] * srcBox.size[1] };
  for (std::int64_t z = blockIdx.z; z < dstBox.size[2]; z += gridDim.z)
  {
    const std::int64_t p[3] = { dstBox.start[0] + x, dstBox.start[1] + y, dstBox.start[2] + z };
    std::int64_t       base = 0;
#pragma unroll
    for (int a = 0; a < 3; ++a)
    {
      if (a != axis)
      {
        base += (p[a] - srcBox.start[a]) * srcStride[a];
      }
    }
    const std::int64_t c = p[axis];
    const std::int64_t s = srcStride[axis];
    double             sum;
    if (c - k >= 0 && c + k < n)
    {
      const TSrc * center = src + base + (c - srcBox.start[axis]) * s;
      sum = taps.value[0] * static_cast<double>(center[0]);
      for (int j = 1; j <= k; ++j)
      {
        sum += taps.value[j] * (static_cast<double>(center[j * s]) + static_cast<double>(center[-j * s]));
      }
    }
    else
    {
      sum = 0.0;
      for (int j = -k; j <= k; ++j)
      {
        const std::int64_t q = MirrorIndex(c + j, n) - srcBox.start[axis];
        sum += taps.value[j < 0 ? -j : j] * static_cast<double>(src[base + q * s]);
      }
    }
    dst[x + dstBox.size[0] * (y + dstBox.size[1] * z)] = static_cast<T>(sum);
  }
}

int
MaxSharedBytes()
{
  return static_cast<int>(cif::Runtime::GetMaxSharedMemoryPerBlock());
}

int
BlocksFor(std::int64_t count)
{
  return static_cast<int>(std::min<std::int64_t>((count + kThreads - 1) / kThreads, 65535 * 16));
}

template <typename TIn, typename T>
void
RecursivePassCUDA(const TIn *        in,
                  T *                out,
                  const std::int64_t size[3],
                  int                axis,
                  Accumulator        z,
                  Accumulator        gain,
                  int                horizon)
{
  const std::int64_t stride[3] = { 1, size[0], size[0] * size[1] };
  LinePass           pass{};
  pass.n = size[axis];
  pass.sn = stride[axis];
  if (axis == 0)
  {
    pass.nu = size[1];
    pass.su = stride[1];
    pass.nv = size[2];
    pass.sv = stride[2];
  }
  else
  {
    const int other = axis == 1 ? 2 : 1;
    pass.nu = size[0];
    pass.su = 1;
    pass.nv = size[other];
    pass.sv = stride[other];
  }
  const bool         contiguous = axis == 0;
  const std::int64_t lineBytes = (contiguous ? (pass.n | 1) : pass.n) * static_cast<std::int64_t>(sizeof(Accumulator));
  // Prefer tiles small enough for three blocks per multiprocessor (latency
  // hiding), with at least 16 lines across x for the strided passes (64-byte
  // segments); take what fits otherwise.
  const std::int64_t comfortable = std::min<std::int64_t>(MaxSharedBytes(), CIF_TILE_BUDGET_KB * 1024);
  int                lines = 0;
  for (int l = 32; l >= 1 && lines == 0; l /= 2)
  {
    if (l * lineBytes <= comfortable && (contiguous || l >= CIF_STRIDED_LINES))
    {
      lines = l;
    }
  }
  // Long lines: the most lines that fit at all (down to one), so that the
  // recursion stays in double precision; only lines longer than a whole
  // shared-memory block fall back to the global-memory kernel.
  for (int l = 32; l >= 1 && lines == 0; l /= 2)
  {
    if (l * lineBytes <= MaxSharedBytes())
    {
      lines = l;
    }
  }
  if (lines > 0)
  {
    const int bytes = static_cast<int>(lines * lineBytes);
    CIF_CUDA_CHECK(cudaFuncSetAttribute(
      RecursiveTileKernel<TIn, T>, cudaFuncAttributeMaxDynamicSharedMemorySize, std::max(bytes, 48 * 1024)));
    // All of the unified L1/shared storage as shared memory: three tiles per
    // multiprocessor instead of the two the default split leaves room for.
    CIF_CUDA_CHECK(cudaFuncSetAttribute(
      RecursiveTileKernel<TIn, T>, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared));
    const dim3 grid(static_cast<unsigned>((pass.nu + lines - 1) / lines),
                    static_cast<unsigned>(std::min<std::int64_t>(pass.nv, 65535)));
    // Segments of at least 64 samples (never fewer than the horizon in the
    // last one), as many as the block has threads for, at most 16.
    int segments = static_cast<int>(
      std::min<std::int64_t>(pass.n / CIF_MIN_SEGMENT, std::min(CIF_MAX_SEGMENTS, kTileThreads / lines)));
    segments = std::max(segments, 1);
    const int segmentLength = static_cast<int>((pass.n + segments - 1) / segments);
    if (segments > 1 &&
        (segmentLength < horizon || pass.n - (segments - 1) * static_cast<std::int64_t>(segmentLength) < horizon))
    {
      segments = 1;
    }
    RecursiveTileKernel<TIn, T><<<grid, kTileThreads, bytes, ::cif::Stream()>>>(
      in, out, pass, lines, segments, segments == 1 ? static_cast<int>(pass.n) : segmentLength, z, gain, horizon);
    CIF_CUDA_CHECK_LAUNCH("RecursiveTileKernel");
  }
  else
  {
    RecursiveGlobalKernel<TIn, T><<<BlocksFor(pass.nu * pass.nv), kThreads, 0, ::cif::Stream()>>>(
      in, out, pass, static_cast<T>(z), static_cast<T>(gain), horizon);
    CIF_CUDA_CHECK_LAUNCH("RecursiveGlobalKernel");
  }
}

template <typename TSrc, typename T>
void
FIRPassCUDA(const TSrc * src,
            const Box &  srcBox,
            T *          dst,
            const Box &  dstBox,
            int          axis,
            std::int64_t n,
            int          k,
            const Taps & taps)
{
  const dim3 block(32, 8);
  const dim3 grid(static_cast<unsigned>((dstBox.size[0] + block.x - 1) / block.x),
                  static_cast<unsigned>((dstBox.size[1] + block.y - 1) / block.y),
                  static_cast<unsigned>(std::min<std::int64_t>(dstBox.size[2], 65535)));
  if (grid.y > 65535)
  {
    throw std::invalid_argument("PrefilterCUDA: image too large along y for the FIR kernel");
  }
  FIRAxisKernel<TSrc, T><<<grid, block, 0, ::cif::Stream()>>>(src, srcBox, dst, dstBox, axis, n, k, taps);
  CIF_CUDA_CHECK_LAUNCH("FIRAxisKernel");
}

} // namespace

template <typename TIn, typename TOut>
void
PrefilterCUDA(const TIn *                 input,
              TOut *                      output,
              const PrefilterGeometry &   g,
              const PrefilterParameters & p,
              const ProgressCallback &    progress)
{
  const std::string why = ValidatePrefilterJob(g, p);
  if (!why.empty())
  {
    throw std::invalid_argument("PrefilterCUDA: " + why);
  }
  int active[3], activeCount = 0;
  for (int a = 0; a < 3; ++a)
  {
    if (g.imageSize[a] > 1 && p.filterAxis[a])
    {
      active[activeCount++] = a;
    }
  }

  if (p.method == PrefilterMethod::Recursive)
  {
    if (p.poles.size() != 1)
    {
      throw std::invalid_argument("PrefilterCUDA: the GPU recursive prefilter handles one pole (cubic) only");
    }
    const double z = p.poles[0];
    const double gain = (1.0 - z) * (1.0 - 1.0 / z);
    const int    horizon =
      static_cast<int>(std::min<double>(std::ceil(std::log(p.tolerance) / std::log(std::fabs(z))), 1 << 30));
    if (activeCount == 0)
    {
      ConvertKernel<<<1, 32, 0, ::cif::Stream()>>>(input, output, 1);
      CIF_CUDA_CHECK_LAUNCH("ConvertKernel");
    }
    for (int i = 0; i < activeCount; ++i)
    {
      if (i == 0)
      {
        RecursivePassCUDA(input, output, g.imageSize, active[i], z, gain, horizon);
      }
      else
      {
        RecursivePassCUDA(static_cast<const TOut *>(output), output, g.imageSize, active[i], z, gain, horizon);
      }
      if (progress)
      {
        progress((i + 1.0) / activeCount);
      }
    }
    CIF_CUDA_SYNCHRONIZE_STREAM();
    return;
  }

  // FIR: active axes in order; intermediates in the output's precision.
  const std::vector<double> taps64 = CubicFIRTaps(p.firHalfWidth);
  Taps                      taps{};
  for (int j = 0; j <= p.firHalfWidth; ++j)
  {
    taps.value[j] = taps64[j];
  }
  Box current{}, target{};
  for (int a = 0; a < 3; ++a)
  {
    current.start[a] = g.inputStart[a];
    current.size[a] = g.inputSize[a];
  }
  if (activeCount == 0)
  {
    ConvertKernel<<<1, 32, 0, ::cif::Stream()>>>(input, output, 1);
    CIF_CUDA_CHECK_LAUNCH("ConvertKernel");
  }
  // Intermediates: for a whole-image job the output buffer itself serves as
  // one of the two ping-pong buffers, so a single temporary is needed.
  bool wholeImage = true;
  for (int a = 0; a < 3; ++a)
  {
    wholeImage = wholeImage && g.inputStart[a] == 0 && g.outputStart[a] == 0 && g.inputSize[a] == g.imageSize[a] &&
                 g.outputSize[a] == g.imageSize[a];
  }
  cif::PooledBuffer stage[2]; // from the stream-ordered pool: no cudaMalloc per call
  const TOut *      previous = nullptr;
  for (int i = 0; i < activeCount; ++i)
  {
    const int axis = active[i];
    for (int a = 0; a < 3; ++a)
    {
      const bool done = a <= axis;
      target.start[a] = done ? g.outputStart[a] : current.start[a];
      target.size[a] = done ? g.outputSize[a] : current.size[a];
    }
    TOut * destination = output;
    // passes still to come after this one; the last lands in the output
    const int remaining = activeCount - 1 - i;
    if (remaining > 0)
    {
      const bool useOutput = wholeImage && remaining % 2 == 0;
      const int  slot = wholeImage ? 0 : i % 2;
      if (!useOutput)
      {
        const std::size_t bytes =
          static_cast<std::size_t>(target.size[0] * target.size[1] * target.size[2]) * sizeof(TOut);
        if (stage[slot].GetSize() < bytes)
        {
          stage[slot] = cif::PooledBuffer(bytes, ::cif::Stream());
        }
        destination = static_cast<TOut *>(stage[slot].GetPointer());
      }
    }
    if (i == 0)
    {
      FIRPassCUDA(input, current, destination, target, axis, g.imageSize[axis], p.firHalfWidth, taps);
    }
    else
    {
      FIRPassCUDA(previous, current, destination, target, axis, g.imageSize[axis], p.firHalfWidth, taps);
    }
    previous = destination;
    current = target;
    if (progress)
    {
      progress((i + 1.0) / activeCount);
    }
  }
  CIF_CUDA_SYNCHRONIZE_STREAM();
}

#define CIF_INSTANTIATE_PREFILTER_CUDA(TIn, TOut)                                                                      \
  template void PrefilterCUDA<TIn, TOut>(                                                                              \
    const TIn *, TOut *, const PrefilterGeometry &, const PrefilterParameters &, const ProgressCallback &);
#define CIF_INSTANTIATE_PREFILTER_CUDA_IN(TIn)                                                                         \
  CIF_INSTANTIATE_PREFILTER_CUDA(TIn, float)                                                                           \
  CIF_INSTANTIATE_PREFILTER_CUDA(TIn, double)

CIF_PREFILTER_GPU_PIXELS(CIF_INSTANTIATE_PREFILTER_CUDA_IN)

} // namespace cif
