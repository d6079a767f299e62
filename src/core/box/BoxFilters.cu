/*=========================================================================
 *  CudaImageFilters: CUDA kernels and launchers of the box filters.
 *
 *  Separable passes (one per axis, see cifBoxPlan.h), each through a
 *  shared-memory tile:
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

template <typename TAcc, typename TDst, bool VFinal>
struct SumOp
{
  using Acc = TAcc;
  double volume;
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
  __device__ TDst
  Finish(Acc acc, bool) const
  {
    if constexpr (VFinal)
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

template <typename T>
struct MinOp
{
  using Acc = T;
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
      return std::numeric_limits<T>::max();
    }
  }
  __device__ Acc
  Combine(Acc m, T v) const
  {
    return MinCombine(m, v);
  }
  __device__ T
  Finish(Acc m, bool crossesEdge) const
  {
    return crossesEdge ? MinCombine(m, boundary) : m;
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
  cif::DeviceBuffer a, b;
  if (passes.size() > 1)
  {
    a.Allocate(static_cast<std::size_t>(largest) * sizeof(TAcc));
  }
  if (passes.size() > 2)
  {
    b.Allocate(static_cast<std::size_t>(largest) * sizeof(TAcc));
  }
  const TAcc * src = nullptr;
  for (std::size_t k = 0; k < passes.size(); ++k)
  {
    const BoxPass & p = passes[k];
    const bool      first = k == 0;
    const bool      last = k + 1 == passes.size();
    TAcc *          target = static_cast<TAcc *>((k % 2 == 0 ? a : b).GetPointer());
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
  CIF_CUDA_SYNCHRONIZE_STREAM(); // before the temporaries are freed
}

template <typename TAcc, typename TIn, typename TOut>
void
SeparableMean(const TIn * input, TOut * output, const BoxGeometry & g)
{
  const double volume = static_cast<double>(BoxVolume(g));
  RunSeparable<TIn, TAcc, TOut>(input,
                                output,
                                g,
                                [volume](auto * dstTag, auto finalTag)
                                {
                                  using TDst = std::remove_pointer_t<decltype(dstTag)>;
                                  SumOp<TAcc, TDst, decltype(finalTag)::value> op;
                                  op.volume = volume;
                                  return op;
                                });
}

// ---------------------------------------------------------------------------
// Direct floating-point mean in ITK's order.

constexpr int kDirectX = 32; // outputs per block along x (one per lane)
constexpr int kDirectY = 8;  // outputs per block along y (one per thread row)

struct DirectArgs
{
  std::int64_t inSize[3];
  std::int64_t outStart[3];
  std::int64_t outSize[3];
  int          radius[3];
  int          tileZ; // outputs per block along z (a loop in each thread)
  std::int64_t tiles[3];
  double       volume;
};

/** Each thread sums its box from the tile: for dz, for dy, for dx (ITK's
 * offset order), sum += double(sample), from 0; then sum / volume. */
template <typename TIn, typename TOut>
__global__ void
DirectMeanKernel(const TIn * __restrict__ input, TOut * __restrict__ output, DirectArgs a)
{
  extern __shared__ __align__(16) unsigned char sharedBytes[];
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
    output[(oz * a.outSize[1] + oy) * a.outSize[0] + ox] = static_cast<TOut>(__ddiv_rn(sum, a.volume));
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
  for (int a3 = 0; a3 < 3; ++a3)
  {
    a.inSize[a3] = g.inputSize[a3];
    a.outStart[a3] = g.outputStart[a3];
    a.outSize[a3] = g.outputSize[a3];
    a.radius[a3] = g.radius[a3];
  }
  a.volume = static_cast<double>(BoxVolume(g));
  for (int tileZ = static_cast<int>(std::min<std::int64_t>(8, g.outputSize[2])); tileZ >= 1; tileZ /= 2)
  {
    bytes = sizeof(TIn) * static_cast<std::size_t>(kDirectX + 2 * g.radius[0]) *
            static_cast<std::size_t>(kDirectY + 2 * g.radius[1]) * static_cast<std::size_t>(tileZ + 2 * g.radius[2]);
    if (bytes <= limit)
    {
      a.tileZ = tileZ;
      a.tiles[0] = (g.outputSize[0] + kDirectX - 1) / kDirectX;
      a.tiles[1] = (g.outputSize[1] + kDirectY - 1) / kDirectY;
      a.tiles[2] = (g.outputSize[2] + tileZ - 1) / tileZ;
      return true;
    }
  }
  return false;
}

template <typename TIn, typename TOut>
void
LaunchDirectMean(const TIn * input, TOut * output, const DirectArgs & a, std::size_t bytes)
{
  const std::int64_t blocks = a.tiles[0] * a.tiles[1] * a.tiles[2];
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
      SeparableMean<std::int32_t>(input, output, g);
    }
    else
    {
      SeparableMean<std::int64_t>(input, output, g);
    }
    return BoxMeanMethod::SeparableInteger;
  }
}

template <typename T>
void
BoxMinCUDA(const T * input, T * output, const BoxGeometry & g, T boundary)
{
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
