/*=========================================================================
 *  CudaImageFilters: CUDA kernels and launchers of the box filters.
 *
 *  Integer means and all erosions whose box fits take one kernel that
 *  reads the input once and writes the output once (FusedBoxKernel: a
 *  block of 128 x 8 outputs, four along x per thread, marches through a
 *  depth of planes chosen by waves (FusedTileZ), loading the next plane
 *  while it reduces rows, columns and the last 2 rz + 1 planes; sums of
 *  integers and minima are exact in any order). Larger boxes take
 *  separable passes (one per axis, see cifBoxPlan.h) with temporaries from
 *  the stream-ordered pool, each through a shared-memory tile:
 *  - along x, a block loads 256 + 2r samples of one row (clamped at the
 *    row's ends) and each thread reduces its 2r + 1 window;
 *  - along y or z, a block loads 32 x-columns by 32 + 2r samples along the
 *    axis (coalesced rows of 32) and each thread reduces 4 windows.
 *  Integer means sum in 32-bit integers when the box cannot overflow them,
 *  else 64-bit; both are exact, so the result is ITK's double sum divided
 *  by the volume. Floating-point means use a direct kernel that sums the
 *  whole box in double precision in ITK's offset order from a 3D tile (the
 *  result is ITK's bit for bit), or separable double passes when the tile
 *  would not fit in shared memory (BoxMeanMethod::SeparableDouble).
 *=========================================================================*/
#include "cifCudaStream.h"
#include "cif/BoxFilters.h"
#include "cifPixelLists.h"
#include "cifBoxPlan.h"
#include "cif/CudaError.h"
#include "cif/PooledBuffer.h"
#include "cif/Runtime.h"

#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace cif
{

bool
BoxFiltersCUDAIsCompiled()
{
  return true;
}

namespace
{

constexpr int kRowTile = 256;    // outputs per block along x
constexpr int kColumnLanes = 32; // x columns per block along y / z
constexpr int kColumnRows = 8;   // thread rows per block along y / z
constexpr int kColumnTile = 32;  // outputs per block along the axis (4 per thread)

/** A pass in plain values for the kernels. */
struct PassArgs
{
  std::int64_t s0, s1, s2; // source extent
  std::int64_t n;          // source extent along the axis
  std::int64_t start;      // first window centre along the axis
  std::int64_t count;      // outputs along the axis
  int          radius;
};

PassArgs
ArgsOf(const BoxPass & p)
{
  PassArgs a;
  a.s0 = p.srcSize[0];
  a.s1 = p.srcSize[1];
  a.s2 = p.srcSize[2];
  a.n = p.srcSize[p.axis];
  a.start = p.start;
  a.count = p.count;
  a.radius = p.radius;
  return a;
}

__device__ __forceinline__ std::int64_t
                           ClampIndex(std::int64_t i, std::int64_t n)
{
  return i < 0 ? 0 : (i >= n ? n - 1 : i);
}

/** Sums; the final pass divides by the box volume as ITK does,
 * static_cast<TDst>(double(sum) / volume). For 32-bit sums into an integer
 * type that is the integer quotient truncated toward zero (a double
 * quotient of integers below 2^31 never rounds across an integer), computed
 * by a multiply and a shift (Granlund and Montgomery's round-up method,
 * exact for dividends below 2^31; the multiplier
 * ceil(2^(31 + s) / volume) with 2^(s - 1) < volume <= 2^s fits in 32
 * bits, so it is the high half of one 32-bit product): the same bits
 * without a division. */
template <typename TAcc, typename TDst, bool VFinal>
struct SumOp
{
  using Acc = TAcc;
  /** A window's sum can be updated by adding and subtracting. */
  __host__ __device__ static constexpr bool
  Running()
  {
    return true;
  }
  static constexpr bool kMagic = VFinal && std::is_integral<TDst>::value && std::is_same<TAcc, std::int32_t>::value;
  double                volume;
  std::uint32_t         magic{ 0 };
  int                   shift{ 0 }; // 31 + s: a volume of 1 (s = 0) is the identity

  void
  SetVolume(std::int64_t v)
  {
    volume = static_cast<double>(v);
    if constexpr (!kMagic)
    {
      return;
    }
    int s = 0;
    while ((std::int64_t{ 1 } << s) < v)
    {
      ++s;
    }
    shift = 31 + s;
    magic = static_cast<std::uint32_t>(((std::uint64_t{ 1 } << shift) + static_cast<std::uint64_t>(v) - 1) /
                                       static_cast<std::uint64_t>(v));
  }
  __device__ Acc
  Identity() const
  {
    return Acc(0);
  }
  template <typename V>
  __device__ Acc
  Combine(Acc acc, V v) const
  {
    return acc + static_cast<Acc>(v);
  }
  __device__ Acc
  Remove(Acc acc, Acc v) const
  {
    return acc - v;
  }
  __device__ TDst
  Finish(Acc acc, bool) const
  {
    if constexpr (kMagic)
    {
      const std::uint32_t a = acc < 0 ? 0u - static_cast<std::uint32_t>(acc) : static_cast<std::uint32_t>(acc);
      const auto          q = static_cast<std::int32_t>(shift < 32 ? a : __umulhi(a, magic) >> (shift - 32));
      return static_cast<TDst>(acc < 0 ? -q : q);
    }
    else if constexpr (VFinal)
    {
      return static_cast<TDst>(static_cast<double>(acc) / volume);
    }
    else
    {
      return static_cast<TDst>(acc);
    }
  }
};

template <typename T>
__device__ __forceinline__ T
MinCombine(T m, T v)
{
  if constexpr (std::is_floating_point<T>::value)
  {
    return (v < m || m != m) ? v : m; // NaN is the empty minimum: ignored
  }
  else
  {
    return v < m ? v : m;
  }
}

/** Minima; TWork is the type they are kept in between passes of the one-pass
 * kernel (32-bit for 8- and 16-bit integers: no packing and unpacking of
 * narrow lanes at every step). */
template <typename T, typename TWork = T>
struct MinOp
{
  using Acc = TWork;
  /** A window's minimum is recomputed. */
  __host__ __device__ static constexpr bool
  Running()
  {
    return false;
  }
  T boundary;
  __device__ Acc
  Identity() const
  {
    if constexpr (std::is_floating_point<T>::value)
    {
      return std::numeric_limits<T>::quiet_NaN();
    }
    else
    {
      return static_cast<Acc>(std::numeric_limits<T>::max());
    }
  }
  template <typename V>
  __device__ Acc
  Combine(Acc m, V v) const
  {
    return MinCombine(m, static_cast<Acc>(v));
  }
  __device__ T
  Finish(Acc m, bool crossesEdge) const
  {
    return static_cast<T>(crossesEdge ? MinCombine(m, static_cast<Acc>(boundary)) : m);
  }
};

/** Pass along x: one block per (row, tile of kRowTile outputs). */
template <typename TSrc, typename TDst, typename TOp>
__global__ void
RowPassKernel(const TSrc * __restrict__ src, TDst * __restrict__ dst, PassArgs a, std::int64_t tilesPerRow, TOp op)
{
  extern __shared__ __align__(16) unsigned char sharedBytes[];
  TSrc *                                        s = reinterpret_cast<TSrc *>(sharedBytes);
  const std::int64_t                            row = blockIdx.x / tilesPerRow;
  const std::int64_t                            tile = blockIdx.x - row * tilesPerRow;
  const std::int64_t                            first = tile * kRowTile; // first output of the tile
  const TSrc *                                  in = src + row * a.s0;
  const int                                     r = a.radius;
  for (int k = threadIdx.x; k < kRowTile + 2 * r; k += blockDim.x)
  {
    s[k] = in[ClampIndex(a.start + first - r + k, a.n)];
  }
  __syncthreads();
  const std::int64_t i = first + threadIdx.x;
  if (i >= a.count)
  {
    return;
  }
  const std::int64_t c = a.start + i;
  auto               acc = op.Identity();
  for (int j = 0; j <= 2 * r; ++j)
  {
    acc = op.Combine(acc, s[threadIdx.x + j]);
  }
  dst[row * a.count + i] = op.Finish(acc, c - r < 0 || c + r > a.n - 1);
}

/** Pass along y (axis 1) or z (axis 2): one block per (32 x-columns, tile of kColumnTile outputs, other index). */
template <typename TSrc, typename TDst, typename TOp>
__global__ void
ColumnPassKernel(const TSrc * __restrict__ src,
                 TDst * __restrict__ dst,
                 PassArgs     a,
                 int          axis,
                 std::int64_t xTiles,
                 std::int64_t axisTiles,
                 TOp          op)
{
  extern __shared__ __align__(16) unsigned char sharedBytes[];
  TSrc *             s = reinterpret_cast<TSrc *>(sharedBytes); // [kColumnTile + 2r][kColumnLanes]
  const std::int64_t b = blockIdx.x;
  const std::int64_t xt = b % xTiles;
  const std::int64_t rest = b / xTiles;
  const std::int64_t at = rest % axisTiles;
  const std::int64_t o = rest / axisTiles;
  const int          lane = threadIdx.x;
  const std::int64_t x = xt * kColumnLanes + lane;
  const int          r = a.radius;
  const std::int64_t srcAxisStride = axis == 1 ? a.s0 : a.s0 * a.s1;
  const std::int64_t srcOtherStride = axis == 1 ? a.s0 * a.s1 : a.s0;
  const std::int64_t dstAxisStride = srcAxisStride;
  const std::int64_t dstOtherStride = axis == 1 ? a.s0 * a.count : a.s0;
  const std::int64_t first = at * kColumnTile;
  if (x < a.s0)
  {
    const TSrc * in = src + o * srcOtherStride + x;
    for (int k = threadIdx.y; k < kColumnTile + 2 * r; k += blockDim.y)
    {
      s[k * kColumnLanes + lane] = in[ClampIndex(a.start + first - r + k, a.n) * srcAxisStride];
    }
  }
  __syncthreads();
  if (x >= a.s0)
  {
    return;
  }
  for (int q = threadIdx.y; q < kColumnTile; q += blockDim.y)
  {
    const std::int64_t i = first + q;
    if (i >= a.count)
    {
      break;
    }
    const std::int64_t c = a.start + i;
    auto               acc = op.Identity();
    for (int j = 0; j <= 2 * r; ++j)
    {
      acc = op.Combine(acc, s[(q + j) * kColumnLanes + lane]);
    }
    dst[o * dstOtherStride + i * dstAxisStride + x] = op.Finish(acc, c - r < 0 || c + r > a.n - 1);
  }
}

void
CheckBlocks(std::int64_t blocks, const char * kernel)
{
  if (blocks > std::numeric_limits<int>::max())
  {
    throw CudaFailure(-1, "the image is too large for one launch", kernel);
  }
}

template <typename TSrc, typename TDst, typename TOp>
void
LaunchPass(const TSrc * src, TDst * dst, const BoxPass & p, const TOp & op)
{
  const PassArgs a = ArgsOf(p);
  if (p.axis == 0)
  {
    const std::int64_t tiles = (p.count + kRowTile - 1) / kRowTile;
    const std::int64_t blocks = tiles * a.s1 * a.s2;
    CheckBlocks(blocks, "RowPassKernel");
    const std::size_t shared = sizeof(TSrc) * static_cast<std::size_t>(kRowTile + 2 * p.radius);
    RowPassKernel<TSrc, TDst, TOp>
      <<<static_cast<unsigned>(blocks), kRowTile, shared, ::cif::Stream()>>>(src, dst, a, tiles, op);
    CIF_CUDA_CHECK_LAUNCH("RowPassKernel");
    return;
  }
  const std::int64_t xTiles = (a.s0 + kColumnLanes - 1) / kColumnLanes;
  const std::int64_t axisTiles = (p.count + kColumnTile - 1) / kColumnTile;
  const std::int64_t other = p.axis == 1 ? a.s2 : a.s1;
  const std::int64_t blocks = xTiles * axisTiles * other;
  CheckBlocks(blocks, "ColumnPassKernel");
  const std::size_t shared =
    sizeof(TSrc) * static_cast<std::size_t>(kColumnLanes) * static_cast<std::size_t>(kColumnTile + 2 * p.radius);
  ColumnPassKernel<TSrc, TDst, TOp>
    <<<static_cast<unsigned>(blocks), dim3(kColumnLanes, kColumnRows), shared, ::cif::Stream()>>>(
      src, dst, a, p.axis, xTiles, axisTiles, op);
  CIF_CUDA_CHECK_LAUNCH("ColumnPassKernel");
}

// ---------------------------------------------------------------------------
// A box job's tiles in plain values, for the one-pass and direct kernels.

struct TileArgs
{
  std::int64_t inSize[3];
  std::int64_t outStart[3];
  std::int64_t outSize[3];
  int          radius[3];
  int          tileZ;    // outputs per block along z (a march or loop in each thread)
  std::int64_t tiles[3]; // blocks along x, y and z
};

/** The geometry of g in blocks of tileX x tileY x tileZ outputs. */
TileArgs
TileArgsOf(const BoxGeometry & g, int tileX, int tileY, int tileZ)
{
  TileArgs  a{};
  const int tile[3] = { tileX, tileY, tileZ };
  for (int k = 0; k < 3; ++k)
  {
    a.inSize[k] = g.inputSize[k];
    a.outStart[k] = g.outputStart[k];
    a.outSize[k] = g.outputSize[k];
    a.radius[k] = g.radius[k];
    a.tiles[k] = (g.outputSize[k] + tile[k] - 1) / tile[k];
  }
  a.tileZ = tileZ;
  return a;
}

// ---------------------------------------------------------------------------
// One pass: one kernel, one read and one write of the image.

constexpr int kFusedLanes = 32; // threads per block along x, 4 outputs each
constexpr int kFusedRows = 8;   // threads per block along y, one output each
constexpr int kFusedV = 4;      // consecutive x outputs per thread
constexpr int kFusedX = kFusedLanes * kFusedV;
constexpr int kFusedThreads = kFusedLanes * kFusedRows;
constexpr int kFusedMaxRadiusX = 16; // a tile row of 128 + 2 rx samples: 5 loads per lane at most
constexpr int kFusedMaxRadiusY = 8;  // 8 + 2 ry tile rows: 3 per thread row at most
constexpr int kFusedXLoads = (kFusedX + 2 * kFusedMaxRadiusX + kFusedLanes - 1) / kFusedLanes;

/** Four values in one aligned shared-memory access (16 bytes at most per access). */
template <typename T>
struct alignas(sizeof(T) * 4 > 16 ? 16 : sizeof(T) * 4) Quad
{
  T v[4];
};

/** The op's identity in each lane of a quad. */
template <typename TOp>
__device__ __forceinline__ Quad<typename TOp::Acc>
                           IdentityQuad(const TOp & op)
{
  Quad<typename TOp::Acc> q;
#pragma unroll
  for (int i = 0; i < 4; ++i)
  {
    q.v[i] = op.Identity();
  }
  return q;
}

/** Lane by lane, the op's combination of two quads. */
template <typename TOp>
__device__ __forceinline__ Quad<typename TOp::Acc>
                           CombineQuads(const TOp & op, Quad<typename TOp::Acc> a, const Quad<typename TOp::Acc> & b)
{
#pragma unroll
  for (int i = 0; i < 4; ++i)
  {
    a.v[i] = op.Combine(a.v[i], b.v[i]);
  }
  return a;
}

struct FusedArgs
{
  TileArgs tile;
  int      rowPitch;  // tile row length in samples: 128 + 2 rx rounded up to a multiple of 4
  bool     vectorOut; // output rows of whole, aligned quads
};

std::size_t
RoundUp(std::size_t n, std::size_t m)
{
  return (n + m - 1) / m * m;
}

/** Samples per input tile row of the one-pass kernel: 128 + 2 rx, rounded
 * up to a multiple of 4 (aligned quad loads). */
std::size_t
FusedRowPitch(const BoxGeometry & g)
{
  return RoundUp(kFusedX + 2 * static_cast<std::size_t>(g.radius[0]), 4);
}

/** Shared bytes of the one-pass kernel: a ring of 2 rz + 1 plane results
 * per thread (unless `ring` is false: minima over three planes keep them in
 * registers), the row results of one plane, and one plane's input tile. */
template <typename TIn, typename TAcc>
std::size_t
FusedSharedBytes(const BoxGeometry & g, bool ring)
{
  const std::size_t ly = kFusedRows + 2 * static_cast<std::size_t>(g.radius[1]);
  const std::size_t pitch = FusedRowPitch(g);
  const std::size_t planes = ring ? static_cast<std::size_t>(2 * g.radius[2] + 1) : 0;
  return sizeof(Quad<TAcc>) * (planes * kFusedThreads + ly * kFusedLanes) + RoundUp(sizeof(TIn) * ly * pitch, 16);
}

/** A thread's four x windows of one tile row, from the row's sample 4 t on.
 * KX > 0: the radius known when compiling (aligned quad loads into
 * registers); KX = 0: radius rx, sample by sample. */
template <int KX, typename TIn, typename TOp>
__device__ __forceinline__ Quad<typename TOp::Acc>
                           XWindows(const TIn * line, int rx, const TOp & op)
{
  Quad<typename TOp::Acc> acc = IdentityQuad(op);
  if constexpr (KX > 0)
  {
    constexpr int kQuads = (kFusedV + 2 * KX + 3) / 4;
    TIn           v[4 * kQuads];
#pragma unroll
    for (int q = 0; q < kQuads; ++q)
    {
      const Quad<TIn> in = reinterpret_cast<const Quad<TIn> *>(line)[q];
#pragma unroll
      for (int k = 0; k < 4; ++k)
      {
        v[4 * q + k] = in.v[k];
      }
    }
#pragma unroll
    for (int i = 0; i < kFusedV; ++i)
    {
#pragma unroll
      for (int d = 0; d <= 2 * KX; ++d)
      {
        acc.v[i] = op.Combine(acc.v[i], v[i + d]);
      }
    }
  }
  else
  {
#pragma unroll
    for (int i = 0; i < kFusedV; ++i)
    {
      for (int d = 0; d <= 2 * rx; ++d)
      {
        acc.v[i] = op.Combine(acc.v[i], line[i + d]);
      }
    }
  }
  return acc;
}

/** Each block (32 x 8 threads, 128 x 8 outputs of a plane, 4 along x per
 * thread) marches through its tileZ planes. Per input plane: the block
 * loads the tile (clamped indices, the clamps worked out once); each thread
 * reduces four x windows of a tile row (a quad per row), then its quads'
 * column windows along y into the plane's four results, kept in its ring
 * of the last 2 rz + 1 planes; once the ring is full, the thread's outputs
 * of the plane rz behind are the ring's sums (kept running: the new plane
 * added, the oldest subtracted) or minima. The op must be exact in any
 * order (integer sums, minima). At most 64 registers, four blocks per SM:
 * on one H100 that ran the 512 x 512 x 72 uint16 mean r=1 in 0.111 ms
 * against 0.130 ms with 85 registers and three blocks (the erosion 0.165
 * against 0.192 ms). KX, KY > 0: the x and y radii known when compiling
 * (0: from the arguments). KZ = 1 with minima (rz = 1): the z window is
 * two quads in registers (the last plane's minima and the minima of the
 * last two), not a ring in shared memory that each output reads back.
 * KY > 0: each thread loads its samples of the next plane's tile into
 * registers right after the barrier that publishes this plane's tile, so
 * that the loads are in flight while the plane is reduced. On one H100
 * (512 x 512 x 72 uint16, r = 1, two alternating rounds) these three
 * changes took the erosion from 0.127-0.129 to 0.073-0.074 ms (0.090 ms
 * without the early loads) and the mean from 0.093-0.095 to 0.069-0.070
 * ms; the 512^3 float32 erosion r = 1 from 0.98 to 0.62 ms. */
template <int KX, int KY, int KZ, typename TIn, typename TAcc, typename TOut, typename TOp>
__global__ void
__launch_bounds__(kFusedThreads, 4)
  FusedBoxKernel(const TIn * __restrict__ input, TOut * __restrict__ output, FusedArgs f, TOp op)
{
  // KZ = 1 (minima, rz = 1): the z window in registers, no ring
  constexpr bool    kPairZ = KZ == 1 && !TOp::Running();
  extern __shared__ __align__(16) unsigned char sharedBytes[];
  const TileArgs &                              a = f.tile;
  const int          rx = KX > 0 ? KX : a.radius[0], ry = KY > 0 ? KY : a.radius[1], rz = a.radius[2];
  const int          lx = kFusedX + 2 * rx, ly = kFusedRows + 2 * ry, window = 2 * rz + 1;
  Quad<TAcc> *       ring = reinterpret_cast<Quad<TAcc> *>(sharedBytes);      // [window][kFusedThreads]
  Quad<TAcc> *       rows = ring + (kPairZ ? 0 : window) * kFusedThreads;     // [ly][kFusedLanes]
  TIn *              tile = reinterpret_cast<TIn *>(rows + ly * kFusedLanes); // [ly][rowPitch]
  const std::int64_t b = blockIdx.x;
  const std::int64_t tx = b % a.tiles[0];
  const std::int64_t rest = b / a.tiles[0];
  const std::int64_t ty = rest % a.tiles[1];
  const std::int64_t tz = rest / a.tiles[1];
  const int          lane = threadIdx.x, thread = threadIdx.y * kFusedLanes + lane;
  const std::int64_t ox = tx * kFusedX + kFusedV * lane; // first of the thread's outputs
  const std::int64_t oy = ty * kFusedRows + threadIdx.y;
  const std::int64_t oz0 = tz * a.tileZ;
  const int          outputs = static_cast<int>(a.outSize[2] - oz0 < a.tileZ ? a.outSize[2] - oz0 : a.tileZ);
  const std::int64_t x0 = a.outStart[0] + tx * kFusedX - rx; // first input index of the tile
  const std::int64_t y0 = a.outStart[1] + ty * kFusedRows - ry;
  const std::int64_t z0 = a.outStart[2] + oz0 - rz;
  // this thread's tile columns (clamped input indices)
  int xIn[kFusedXLoads];
#pragma unroll
  for (int k = 0; k < kFusedXLoads; ++k)
  {
    xIn[k] = static_cast<int>(ClampIndex(x0 + lane + k * kFusedLanes, a.inSize[0]));
  }
  // which of the thread's outputs have a box crossing the image's edge (for the erosion's boundary)
  const std::int64_t cy = a.outStart[1] + oy;
  const bool         edgeY = cy - ry < 0 || cy + ry > a.inSize[1] - 1;
  bool               edgeXY[kFusedV];
#pragma unroll
  for (int i = 0; i < kFusedV; ++i)
  {
    const std::int64_t cx = a.outStart[0] + ox + i;
    edgeXY[i] = edgeY || cx - rx < 0 || cx + rx > a.inSize[0] - 1;
  }
  const bool         writes = oy < a.outSize[1];
  const bool         whole = f.vectorOut && ox + kFusedV <= a.outSize[0];
  const std::int64_t plane = a.inSize[0] * a.inSize[1];
  const std::int64_t outPlane = a.outSize[0] * a.outSize[1];
  TOut *             out = output + (oz0 * a.outSize[1] + oy) * a.outSize[0] + ox;
  int                slot = 0;
  Quad<TAcc>         running = IdentityQuad(op);
  Quad<TAcc>         last = running, pair = running; // kPairZ: plane p - 1's minima, and min of planes p - 1, p - 2
  // KY > 0: the next plane's tile samples are loaded into registers while
  // this plane is reduced, so that their latency overlaps the work
  constexpr bool kPrefetch = KY > 0;
  constexpr int  kPreRows = kPrefetch ? (kFusedRows + 2 * KY + kFusedRows - 1) / kFusedRows : 1;
  TIn            pre[kPreRows][kFusedXLoads];
  const auto     fetch = [&](int p)
  {
    const TIn * in = input + ClampIndex(z0 + p, a.inSize[2]) * plane;
#pragma unroll
    for (int r = 0; r < kPreRows; ++r)
    {
      const int j = threadIdx.y + r * kFusedRows;
      if (j < ly)
      {
        const TIn * row = in + ClampIndex(y0 + j, a.inSize[1]) * a.inSize[0];
#pragma unroll
        for (int k = 0; k < kFusedXLoads; ++k)
        {
          if (lane + k * kFusedLanes < lx)
          {
            pre[r][k] = row[xIn[k]];
          }
        }
      }
    }
  };
  if constexpr (kPrefetch)
  {
    fetch(0);
  }
  for (int p = 0; p < outputs + 2 * rz; ++p)
  {
    if constexpr (kPrefetch)
    {
#pragma unroll
      for (int r = 0; r < kPreRows; ++r)
      {
        const int j = threadIdx.y + r * kFusedRows;
        if (j < ly)
        {
#pragma unroll
          for (int k = 0; k < kFusedXLoads; ++k)
          {
            const int c = lane + k * kFusedLanes;
            if (c < lx)
            {
              tile[j * f.rowPitch + c] = pre[r][k];
            }
          }
        }
      }
    }
    else
    {
      const TIn * in = input + ClampIndex(z0 + p, a.inSize[2]) * plane;
      for (int j = threadIdx.y; j < ly; j += kFusedRows)
      {
        const TIn * row = in + ClampIndex(y0 + j, a.inSize[1]) * a.inSize[0];
#pragma unroll
        for (int k = 0; k < kFusedXLoads; ++k)
        {
          const int c = lane + k * kFusedLanes;
          if (c < lx)
          {
            tile[j * f.rowPitch + c] = row[xIn[k]];
          }
        }
      }
    }
    __syncthreads();
    if constexpr (kPrefetch)
    {
      if (p + 1 < outputs + 2 * rz)
      {
        fetch(p + 1);
      }
    }
    for (int j = threadIdx.y; j < ly; j += kFusedRows)
    {
      rows[j * kFusedLanes + lane] = XWindows<KX>(tile + j * f.rowPitch + kFusedV * lane, rx, op);
    }
    __syncthreads();
    Quad<TAcc> acc = rows[threadIdx.y * kFusedLanes + lane];
    for (int d = 1; d <= 2 * ry; ++d)
    {
      acc = CombineQuads(op, acc, rows[(threadIdx.y + d) * kFusedLanes + lane]);
    }
    Quad<TAcc> box;
    if constexpr (kPairZ)
    {
      box = CombineQuads(op, pair, acc);
      pair = CombineQuads(op, last, acc);
      last = acc;
    }
    else
    {
      // the ring holds this thread's own entries: no barrier needed
      Quad<TAcc> * entry = ring + slot * kFusedThreads + thread;
      if constexpr (TOp::Running())
      {
        running = CombineQuads(op, running, acc);
        if (p >= window)
        {
          const Quad<TAcc> oldest = *entry;
#pragma unroll
          for (int i = 0; i < kFusedV; ++i)
          {
            running.v[i] = op.Remove(running.v[i], oldest.v[i]);
          }
        }
      }
      *entry = acc;
      slot = slot + 1 == window ? 0 : slot + 1;
      box = running;
      if (p >= 2 * rz)
      {
        if constexpr (!TOp::Running())
        {
          for (int k = 0; k < window; ++k)
          {
            const Quad<TAcc> & r = ring[k * kFusedThreads + thread];
            box = k == 0 ? r : CombineQuads(op, box, r);
          }
        }
      }
    }
    if (p >= 2 * rz)
    {
      const std::int64_t cz = a.outStart[2] + oz0 + p - 2 * rz;
      const bool         edgeZ = cz - rz < 0 || cz + rz > a.inSize[2] - 1;
      Quad<TOut>         result;
#pragma unroll
      for (int i = 0; i < kFusedV; ++i)
      {
        result.v[i] = op.Finish(box.v[i], edgeXY[i] || edgeZ);
      }
      if (whole && writes)
      {
        *reinterpret_cast<Quad<TOut> *>(out) = result;
      }
      else if (writes)
      {
#pragma unroll
        for (int i = 0; i < kFusedV; ++i)
        {
          if (ox + i < a.outSize[0])
          {
            out[i] = result.v[i];
          }
        }
      }
      out += outPlane;
    }
  }
}

/** Planes per block (tileZ), from the number of blocks the device holds at
 * once (`slots`): each block marches through tileZ + 2 rz planes, and the
 * blocks run in ceil(blocks / slots) waves, so the time goes roughly as
 * waves x (tileZ + 2 rz). The depth from 4 to 64 (or the image's depth)
 * with the least of that, the shallower on a tie. For 512 x 512 x 72 and
 * 528 slots (132 SMs, 4 blocks each) that is 36 (512 blocks, one wave of
 * 38 planes) where 16 made 1280 blocks, 2.42 waves of 18 planes: on one
 * H100 the uint16 mean r=1 took 0.094 instead of 0.101 ms and the erosion
 * r=1 0.130 instead of 0.143 ms (24 planes: 0.109 and 0.159 ms; 72: 0.141
 * and 0.218 ms), the 512^3 float32 erosion r=3 1.30 instead of 1.44 ms. */
int
FusedTileZ(const BoxGeometry & g, std::int64_t slots)
{
  const std::int64_t xy =
    ((g.outputSize[0] + kFusedX - 1) / kFusedX) * ((g.outputSize[1] + kFusedRows - 1) / kFusedRows);
  const std::int64_t nz = g.outputSize[2];
  const std::int64_t halo = 2 * static_cast<std::int64_t>(g.radius[2]);
  slots = std::max<std::int64_t>(1, slots);
  int          best = 4;
  std::int64_t bestCost = std::numeric_limits<std::int64_t>::max();
  for (int tileZ = 4; tileZ <= 64; ++tileZ)
  {
    const std::int64_t blocks = xy * ((nz + tileZ - 1) / tileZ);
    const std::int64_t cost = (blocks + slots - 1) / slots * (std::min<std::int64_t>(tileZ, nz) + halo);
    if (cost < bestCost)
    {
      best = tileZ;
      bestCost = cost;
    }
    if (tileZ >= nz)
    {
      break; // deeper tiles hold the same single block along z
    }
  }
  return best;
}

/** The one-pass kernel for radii rx, ry: rx of 1, 2 and 3 has its own (the
 * x windows unrolled into registers), and so does ry when it equals rx (the
 * y windows unrolled too: fewer instructions and no spilled registers for
 * the erosion's 3 x 3 x 3 box). */
template <int KZ, typename TIn, typename TAcc, typename TOut, typename TOp>
auto
FusedKernelFor(int rx, int ry)
{
  if (rx == ry && rx >= 1 && rx <= 3)
  {
    return rx == 1   ? FusedBoxKernel<1, 1, KZ, TIn, TAcc, TOut, TOp>
           : rx == 2 ? FusedBoxKernel<2, 2, KZ, TIn, TAcc, TOut, TOp>
                     : FusedBoxKernel<3, 3, KZ, TIn, TAcc, TOut, TOp>;
  }
  return rx == 1   ? FusedBoxKernel<1, 0, KZ, TIn, TAcc, TOut, TOp>
         : rx == 2 ? FusedBoxKernel<2, 0, KZ, TIn, TAcc, TOut, TOp>
         : rx == 3 ? FusedBoxKernel<3, 0, KZ, TIn, TAcc, TOut, TOp>
                   : FusedBoxKernel<0, 0, KZ, TIn, TAcc, TOut, TOp>;
}

/** Runs the one-pass kernel when its tile fits in shared memory; false otherwise. */
template <typename TIn, typename TAcc, typename TOut, typename TOp>
bool
TryFused(const TIn * input, TOut * output, const BoxGeometry & g, const TOp & op)
{
  // minima over 3 planes keep their z window in registers (no ring)
  const bool        pairZ = !TOp::Running() && g.radius[2] == 1;
  const std::size_t bytes = FusedSharedBytes<TIn, TAcc>(g, !pairZ);
  if (bytes > cif::Runtime::GetMaxSharedMemoryPerBlock() || g.radius[0] > kFusedMaxRadiusX ||
      g.radius[1] > kFusedMaxRadiusY || g.inputSize[0] > std::numeric_limits<int>::max())
  {
    return false;
  }
  const int rx = g.radius[0];
  auto      kernel = FusedKernelFor<0, TIn, TAcc, TOut, TOp>(rx, g.radius[1]);
  if constexpr (!TOp::Running())
  {
    if (pairZ)
    {
      kernel = FusedKernelFor<1, TIn, TAcc, TOut, TOp>(rx, g.radius[1]);
    }
  }
  if (bytes > 48 * 1024) // deep boxes: a long ring of planes, above the default limit
  {
    CIF_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  }
  int perSm = 0;
  CIF_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, kFusedThreads, bytes));
  FusedArgs f{};
  f.tile = TileArgsOf(
    g, kFusedX, kFusedRows, FusedTileZ(g, static_cast<std::int64_t>(perSm) * cif::Runtime::GetMultiprocessorCount()));
  f.rowPitch = static_cast<int>(FusedRowPitch(g));
  f.vectorOut = g.outputSize[0] % kFusedV == 0 && reinterpret_cast<std::uintptr_t>(output) % alignof(Quad<TOut>) == 0;
  const std::int64_t blocks = f.tile.tiles[0] * f.tile.tiles[1] * f.tile.tiles[2];
  CheckBlocks(blocks, "FusedBoxKernel");
  kernel<<<static_cast<unsigned>(blocks), dim3(kFusedLanes, kFusedRows), bytes, ::cif::Stream()>>>(
    input, output, f, op);
  CIF_CUDA_CHECK_LAUNCH("FusedBoxKernel");
  CIF_CUDA_SYNCHRONIZE_STREAM();
  return true;
}

/** The planned passes on the device: TIn -> TAcc ... TAcc -> TOut, two temporaries at most. */
template <typename TIn, typename TAcc, typename TOut, typename TMakeOp>
void
RunSeparable(const TIn * input, TOut * output, const BoxGeometry & g, TMakeOp makeOp)
{
  const auto   passes = PlanBoxPasses(g);
  std::int64_t largest = 0;
  for (std::size_t k = 0; k + 1 < passes.size(); ++k)
  {
    largest = std::max(largest, passes[k].DstCount());
  }
  // the temporaries come from the stream-ordered pool: no cudaMalloc after the first call of a size
  const std::size_t images = passes.size() > 2 ? 2 : (passes.size() > 1 ? 1 : 0);
  PooledBuffer      memory(images * static_cast<std::size_t>(largest) * sizeof(TAcc), ::cif::Stream());
  TAcc *            work[2] = { static_cast<TAcc *>(memory.GetPointer()),
                                static_cast<TAcc *>(memory.GetPointer()) + (images > 1 ? largest : 0) };
  const TAcc *      src = nullptr;
  for (std::size_t k = 0; k < passes.size(); ++k)
  {
    const BoxPass & p = passes[k];
    const bool      first = k == 0;
    const bool      last = k + 1 == passes.size();
    TAcc *          target = work[k % 2];
    if (first && last)
    {
      LaunchPass(input, output, p, makeOp(static_cast<TOut *>(nullptr), std::true_type{}));
    }
    else if (first)
    {
      LaunchPass(input, target, p, makeOp(static_cast<TAcc *>(nullptr), std::false_type{}));
    }
    else if (last)
    {
      LaunchPass(src, output, p, makeOp(static_cast<TOut *>(nullptr), std::true_type{}));
    }
    else
    {
      LaunchPass(src, target, p, makeOp(static_cast<TAcc *>(nullptr), std::false_type{}));
    }
    src = target;
  }
  CIF_CUDA_SYNCHRONIZE_STREAM();
}

template <typename TAcc, typename TIn, typename TOut>
void
SeparableMean(const TIn * input, TOut * output, const BoxGeometry & g)
{
  const std::int64_t volume = BoxVolume(g);
  RunSeparable<TIn, TAcc, TOut>(input,
                                output,
                                g,
                                [volume](auto * dstTag, auto finalTag)
                                {
                                  using TDst = std::remove_pointer_t<decltype(dstTag)>;
                                  SumOp<TAcc, TDst, decltype(finalTag)::value> op;
                                  op.SetVolume(volume);
                                  return op;
                                });
}

// ---------------------------------------------------------------------------
// Direct floating-point mean in ITK's order.

constexpr int kDirectX = 32; // outputs per block along x (one per lane)
constexpr int kDirectY = 8;  // outputs per block along y (one per thread row)

struct DirectArgs
{
  TileArgs tile;
  double   volume;
};

/** Each thread sums its box from the tile: for dz, for dy, for dx (ITK's
 * offset order), sum += double(sample), from 0; then sum / volume. */
template <typename TIn, typename TOut>
__global__ void
DirectMeanKernel(const TIn * __restrict__ input, TOut * __restrict__ output, DirectArgs direct)
{
  extern __shared__ __align__(16) unsigned char sharedBytes[];
  const TileArgs &                              a = direct.tile;
  TIn *                                         s = reinterpret_cast<TIn *>(sharedBytes);
  const int                                     rx = a.radius[0], ry = a.radius[1], rz = a.radius[2];
  const int                                     lx = kDirectX + 2 * rx, ly = kDirectY + 2 * ry, lz = a.tileZ + 2 * rz;
  const std::int64_t                            b = blockIdx.x;
  const std::int64_t                            tx = b % a.tiles[0];
  const std::int64_t                            rest = b / a.tiles[0];
  const std::int64_t                            ty = rest % a.tiles[1];
  const std::int64_t                            tz = rest / a.tiles[1];
  // first input index of the tile (before clamping)
  const std::int64_t x0 = a.outStart[0] + tx * kDirectX - rx;
  const std::int64_t y0 = a.outStart[1] + ty * kDirectY - ry;
  const std::int64_t z0 = a.outStart[2] + tz * a.tileZ - rz;
  const int          total = lx * ly * lz;
  const int          thread = threadIdx.y * kDirectX + threadIdx.x;
  for (int k = thread; k < total; k += kDirectX * kDirectY)
  {
    const int          kx = k % lx;
    const int          kyz = k / lx;
    const int          ky = kyz % ly;
    const int          kz = kyz / ly;
    const std::int64_t gx = ClampIndex(x0 + kx, a.inSize[0]);
    const std::int64_t gy = ClampIndex(y0 + ky, a.inSize[1]);
    const std::int64_t gz = ClampIndex(z0 + kz, a.inSize[2]);
    s[k] = input[(gz * a.inSize[1] + gy) * a.inSize[0] + gx];
  }
  __syncthreads();
  const std::int64_t ox = tx * kDirectX + threadIdx.x;
  const std::int64_t oy = ty * kDirectY + threadIdx.y;
  if (ox >= a.outSize[0] || oy >= a.outSize[1])
  {
    return;
  }
  for (int q = 0; q < a.tileZ; ++q)
  {
    const std::int64_t oz = tz * a.tileZ + q;
    if (oz >= a.outSize[2])
    {
      break;
    }
    double sum = 0.0;
    for (int dz = 0; dz <= 2 * rz; ++dz)
    {
      for (int dy = 0; dy <= 2 * ry; ++dy)
      {
        const TIn * line = s + ((q + dz) * ly + threadIdx.y + dy) * lx + threadIdx.x;
        for (int dx = 0; dx <= 2 * rx; ++dx)
        {
          sum = __dadd_rn(sum, static_cast<double>(line[dx]));
        }
      }
    }
    output[(oz * a.outSize[1] + oy) * a.outSize[0] + ox] = static_cast<TOut>(__ddiv_rn(sum, direct.volume));
  }
}

/** Largest dynamic shared memory the direct kernel may use (opt-in above 48 KiB). */
std::size_t
DirectSharedLimit()
{
  return std::min<std::size_t>(cif::Runtime::GetMaxSharedMemoryPerBlock(), 96 * 1024);
}

/** Plans the direct kernel's tile; false when even a tile one output deep in z does not fit. */
template <typename TIn>
bool
PlanDirect(const BoxGeometry & g, DirectArgs & a, std::size_t & bytes)
{
  const std::size_t limit = DirectSharedLimit();
  a.volume = static_cast<double>(BoxVolume(g));
  for (int tileZ = static_cast<int>(std::min<std::int64_t>(8, g.outputSize[2])); tileZ >= 1; tileZ /= 2)
  {
    bytes = sizeof(TIn) * static_cast<std::size_t>(kDirectX + 2 * g.radius[0]) *
            static_cast<std::size_t>(kDirectY + 2 * g.radius[1]) * static_cast<std::size_t>(tileZ + 2 * g.radius[2]);
    if (bytes <= limit)
    {
      a.tile = TileArgsOf(g, kDirectX, kDirectY, tileZ);
      return true;
    }
  }
  return false;
}

template <typename TIn, typename TOut>
void
LaunchDirectMean(const TIn * input, TOut * output, const DirectArgs & a, std::size_t bytes)
{
  const std::int64_t blocks = a.tile.tiles[0] * a.tile.tiles[1] * a.tile.tiles[2];
  CheckBlocks(blocks, "DirectMeanKernel");
  if (bytes > 48 * 1024)
  {
    CIF_CUDA_CHECK(cudaFuncSetAttribute(
      DirectMeanKernel<TIn, TOut>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  }
  DirectMeanKernel<TIn, TOut>
    <<<static_cast<unsigned>(blocks), dim3(kDirectX, kDirectY), bytes, ::cif::Stream()>>>(input, output, a);
  CIF_CUDA_CHECK_LAUNCH("DirectMeanKernel");
  CIF_CUDA_SYNCHRONIZE_STREAM();
}

/** Largest magnitude of an integer pixel type, for the accumulator choice. */
template <typename T>
double
LargestMagnitude()
{
  return std::max(std::fabs(static_cast<double>(std::numeric_limits<T>::max())),
                  std::fabs(static_cast<double>(std::numeric_limits<T>::lowest())));
}

/** An exact integer mean: the fused kernel when its tile fits, else separable passes. */
template <typename TAcc, typename TIn, typename TOut>
BoxMeanMethod
IntegerMean(const TIn * input, TOut * output, const BoxGeometry & g)
{
  SumOp<TAcc, TOut, true> op;
  op.SetVolume(BoxVolume(g));
  if (TryFused<TIn, TAcc>(input, output, g, op))
  {
    return BoxMeanMethod::FusedInteger;
  }
  SeparableMean<TAcc>(input, output, g);
  return BoxMeanMethod::SeparableInteger;
}

} // namespace

template <typename TIn, typename TOut>
BoxMeanMethod
BoxMeanCUDA(const TIn * input, TOut * output, const BoxGeometry & g)
{
  if constexpr (std::is_floating_point<TIn>::value)
  {
    DirectArgs  a{};
    std::size_t bytes = 0;
    if (PlanDirect<TIn>(g, a, bytes))
    {
      LaunchDirectMean(input, output, a, bytes);
      return BoxMeanMethod::DirectITKOrder;
    }
    SeparableMean<double>(input, output, g);
    return BoxMeanMethod::SeparableDouble;
  }
  else
  {
    if (LargestMagnitude<TIn>() * static_cast<double>(BoxVolume(g)) < 2147483647.0)
    {
      return IntegerMean<std::int32_t>(input, output, g);
    }
    return IntegerMean<std::int64_t>(input, output, g);
  }
}

template <typename T>
void
BoxMinCUDA(const T * input, T * output, const BoxGeometry & g, T boundary)
{
  using Work = std::conditional_t<std::is_integral<T>::value && sizeof(T) < 4, std::int32_t, T>;
  MinOp<T, Work> fused;
  fused.boundary = boundary;
  if (TryFused<T, Work>(input, output, g, fused))
  {
    return;
  }
  RunSeparable<T, T, T>(input,
                        output,
                        g,
                        [boundary](auto *, auto)
                        {
                          MinOp<T> op;
                          op.boundary = boundary;
                          return op;
                        });
}

#define CIF_INSTANTIATE_BOX_MEAN_CUDA(TIn, TOut)                                                                       \
  template BoxMeanMethod BoxMeanCUDA<TIn, TOut>(const TIn *, TOut *, const BoxGeometry &);
#define CIF_BOX_MEAN_SAME(T) CIF_INSTANTIATE_BOX_MEAN_CUDA(T, T)
#define CIF_BOX_MEAN_TO_FLOAT(T) CIF_INSTANTIATE_BOX_MEAN_CUDA(T, float)
CIF_BOX_PIXELS(CIF_BOX_MEAN_SAME)
CIF_FLOAT_OUTPUT_PIXELS(CIF_BOX_MEAN_TO_FLOAT)

#define CIF_INSTANTIATE_BOX_MIN_CUDA(T) template void BoxMinCUDA<T>(const T *, T *, const BoxGeometry &, T);
CIF_BOX_PIXELS(CIF_INSTANTIATE_BOX_MIN_CUDA)

} // namespace cif
