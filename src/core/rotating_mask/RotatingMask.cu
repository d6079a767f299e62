/*=========================================================================
 *  CudaImageFilters: CUDA kernel and launcher of the rotating-mask
 *  (Nagao-Matsuyama) filter.
 *
 *  A block of 32 x 8 threads computes a 32 x 8 x Z box of the output
 *  (Z = 4 along z for volumes, 1 for images). It loads the box grown by the
 *  mask's half-width 2 (clamped reads) into shared memory, already in the
 *  arithmetic's type (int for integer samples of up to 16 bits, double
 *  otherwise), then each thread evaluates its samples with the arithmetic
 *  shared with the CPU core (cifRotatingMaskMath.h), so both make the same
 *  choices: exact integer sums, or double sums of differences to the centre.
 *  For 3D the 81 samples of the six half-masks are read once each and summed
 *  into per-axis 3 x 3 slabs (the seed paper's six passes of 27 fetches
 *  become one pass of 81).
 *=========================================================================*/
#include "cifClampedTile.h"
#include "cifCudaStream.h"
#include "cif/CudaError.h"
#include "cif/RotatingMask.h"
#include "cifPixelLists.h"
#include "cifRotatingMaskMath.h"
#include "cif/PooledBuffer.h"
#include "cif/Runtime.h"

#include <cuda_runtime.h>
#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace cif
{

bool
RotatingMaskCUDAIsCompiled()
{
  return true;
}

namespace
{

constexpr int kBlockX = 32;
constexpr int kBlockY = 8;
constexpr int kBlockThreads = kBlockX * kBlockY;
constexpr int kR = RotatingMaskRadius;
constexpr int kTileX = kBlockX + 2 * kR;
constexpr int kTileY = kBlockY + 2 * kR;
constexpr int kMaxTileZ = 4; ///< output planes per block
/** Plane boxes of one axis in RotatingMaskBoxSumKernel's shared memory, at most. */
constexpr int kMaxBoxes = kBlockX * kBlockY * (kMaxTileZ + 2 * kR);

template <typename TIn, typename TOut, int Dim>
__global__ void
__launch_bounds__(kBlockThreads)
  RotatingMaskKernel(const TIn * __restrict__ in, TOut * __restrict__ out, ClampedKernelGeometry g, int tileZ)
{
  using A = rotating_mask::Arithmetic<TIn>;
  using V = typename A::Value;
  extern __shared__ __align__(16) unsigned char rotatingMaskShared[];
  V *                                           tile = reinterpret_cast<V *>(rotatingMaskShared);
  constexpr int                                 rz = Dim == 3 ? kR : 0;
  const int                                     tz = tileZ + 2 * rz;

  const BlockBox  box = BlockBoxOf(g, kBlockX, kBlockY, tileZ, kR, kR, rz);
  const long long ox = box.output[0], oy = box.output[1], oz = box.output[2];
  LoadClampedTile(in, tile, g, box.first, kTileX, kTileY, tz, [](TIn v) { return A::Load(v); });
  __syncthreads();

  const long long x = ox + threadIdx.x;
  const long long y = oy + threadIdx.y;
  if (x >= g.outputSize[0] || y >= g.outputSize[1])
  {
    return;
  }
#pragma unroll 1
  for (int t = 0; t < tileZ; ++t)
  {
    const long long z = oz + t;
    if (z >= g.outputSize[2])
    {
      break;
    }
    const V *  centre = tile + ((t + rz) * kTileY + threadIdx.y + kR) * kTileX + threadIdx.x + kR;
    const auto fetch = [centre](int dx, int dy, int dz) { return centre[(dz * kTileY + dy) * kTileX + dx]; };
    TOut       result;
    if constexpr (Dim == 3)
    {
      result = rotating_mask::Evaluate3D<TIn, TOut>(fetch);
    }
    else
    {
      result = rotating_mask::Evaluate2D<TIn, TOut>(fetch);
    }
    out[(z * g.outputSize[1] + y) * g.outputSize[0] + x] = result;
  }
}

/** Sums of one plane box: the nine samples' sum and the sum of their squares. */
struct PlaneBoxSums
{
  int                s1;
  unsigned long long s2;
};

/** The 3D filter for integer samples of up to 16 bits as box sums. A
 * half-mask's dispersion does not depend on the origin of the values:
 * 27 sum f^2 - (sum f)^2 equals the centred form of cifRotatingMaskMath.h
 * exactly (64-bit integers), and its mean is (sum f) / 27; so the choices
 * and outputs are those of Evaluate3D. Each half-mask along an axis is
 * three 3 x 3 boxes in the planes across that axis, and neighbouring
 * outputs share these boxes: per axis, the block first writes the plane
 * boxes its outputs need to shared memory (9 samples each), then each
 * thread adds three of them for each of its two half-masks. About 300
 * instructions per output instead of about 1,200 for the 81 differences
 * to the centre (SASS of the 16-bit kernels). */
template <typename TIn, typename TOut>
__global__ void
__launch_bounds__(kBlockThreads)
  RotatingMaskBoxSumKernel(const TIn * __restrict__ in, TOut * __restrict__ out, ClampedKernelGeometry g, int tileZ)
{
  using A = rotating_mask::Arithmetic<TIn>;
  static_assert(A::Exact, "box sums are exact for integers of up to 16 bits only");
  extern __shared__ __align__(16) unsigned char rotatingMaskShared[];
  auto *    boxS2 = reinterpret_cast<unsigned long long *>(rotatingMaskShared); // [kMaxBoxes]
  auto *    boxS1 = reinterpret_cast<int *>(boxS2 + kMaxBoxes);                 // [kMaxBoxes]
  int *     tile = boxS1 + kMaxBoxes;                                           // [tz][kTileY][kTileX]
  const int tz = tileZ + 2 * kR;

  const BlockBox  box = BlockBoxOf(g, kBlockX, kBlockY, tileZ, kR, kR, kR);
  const long long ox = box.output[0], oy = box.output[1], oz = box.output[2];
  LoadClampedTile(in, tile, g, box.first, kTileX, kTileY, tz, [](TIn v) { return A::Load(v); });
  // the 3 x 3 box across axis `axis` centred at tile sample (x, y, z)
  const auto planeBox = [tile](int axis, int x, int y, int z)
  {
    PlaneBoxSums b{ 0, 0ull };
#pragma unroll
    for (int u = -1; u <= 1; ++u)
    {
#pragma unroll
      for (int v = -1; v <= 1; ++v)
      {
        const int f = axis == 0 ? tile[((z + v) * kTileY + y + u) * kTileX + x]
                                : (axis == 1 ? tile[((z + v) * kTileY + y) * kTileX + x + u]
                                             : tile[(z * kTileY + y + v) * kTileX + x + u]);
        b.s1 += f;
        b.s2 += static_cast<unsigned long long>(static_cast<long long>(f) * f); // one IMAD.WIDE
      }
    }
    return b;
  };
  long long bestD[kMaxTileZ];
  int       bestS1[kMaxTileZ];
  // half-masks in the documented order: +x, -x, +y, -y, +z, -z (ties: the first)
#pragma unroll
  for (int axis = 0; axis < 3; ++axis)
  {
    // this axis's plane boxes: the block's outputs, and 2 more each way along the axis
    const int cols = axis == 0 ? kTileX : kBlockX;
    const int rows = axis == 1 ? kTileY : kBlockY;
    const int planes = axis == 2 ? tz : tileZ;
    __syncthreads(); // the tile is complete; the previous axis's boxes are read
    for (int r = threadIdx.y; r < rows * planes; r += kBlockY)
    {
      const int y = r % rows, z = r / rows;
      for (int c = threadIdx.x; c < cols; c += kBlockX)
      {
        const PlaneBoxSums b = planeBox(axis, axis == 0 ? c : c + kR, axis == 1 ? y : y + kR, axis == 2 ? z : z + kR);
        boxS1[r * cols + c] = b.s1;
        boxS2[r * cols + c] = b.s2;
      }
    }
    __syncthreads();
#pragma unroll
    for (int t = 0; t < kMaxTileZ; ++t)
    {
      if (t >= tileZ)
      {
        break;
      }
      // the five boxes along the axis around this thread's output t, -2..+2
      int                s1[5];
      unsigned long long s2[5];
#pragma unroll
      for (int k = 0; k < 5; ++k)
      {
        const int c = threadIdx.x + (axis == 0 ? k : 0);
        const int y = threadIdx.y + (axis == 1 ? k : 0);
        const int z = t + (axis == 2 ? k : 0);
        const int i = (z * rows + y) * cols + c;
        s1[k] = boxS1[i];
        s2[k] = boxS2[i];
      }
#pragma unroll
      for (int side = 0; side < 2; ++side)
      {
        const int                lo = side == 0 ? 2 : 0; // + side first
        const int                m1 = s1[lo] + s1[lo + 1] + s1[lo + 2];
        const unsigned long long m2 = s2[lo] + s2[lo + 1] + s2[lo + 2];
        const long long          d = 27 * static_cast<long long>(m2) - static_cast<long long>(m1) * m1;
        if ((axis == 0 && side == 0) || d < bestD[t])
        {
          bestD[t] = d;
          bestS1[t] = m1;
        }
      }
    }
  }
  const long long x = ox + threadIdx.x;
  const long long y = oy + threadIdx.y;
  if (x >= g.outputSize[0] || y >= g.outputSize[1])
  {
    return;
  }
#pragma unroll
  for (int t = 0; t < kMaxTileZ; ++t)
  {
    if (t >= tileZ || oz + t >= g.outputSize[2])
    {
      break;
    }
    // the mean of the chosen half-mask: its sum about 0 instead of the centre
    out[((oz + t) * g.outputSize[1] + y) * g.outputSize[0] + x] =
      rotating_mask::MeanToOutput<TOut, A>(0, bestS1[t], 27, true);
  }
}

template <typename TSrc, typename TDst>
void
RunPass(const TSrc * src, TDst * dst, const ClampedNeighborhoodGeometry & g, int dimension)
{
  using V = typename rotating_mask::Arithmetic<TSrc>::Value;
  const ClampedKernelGeometry kg(g);
  const int                   tileZ = g.outputSize[2] >= kMaxTileZ ? kMaxTileZ : 1;
  const int                   rz = dimension == 3 ? kR : 0;
  const int                   bytes = kTileX * kTileY * (tileZ + 2 * rz) * static_cast<int>(sizeof(V));
  const dim3                  grid(static_cast<unsigned>((g.outputSize[0] + kBlockX - 1) / kBlockX),
                  static_cast<unsigned>((g.outputSize[1] + kBlockY - 1) / kBlockY),
                  static_cast<unsigned>((g.outputSize[2] + tileZ - 1) / tileZ));
  if (grid.y > 65535 || grid.z > 65535)
  {
    throw CudaFailure(-1, "the image has more rows or slices than the kernel's grid covers", "RotatingMaskCUDA");
  }
  if constexpr (rotating_mask::Arithmetic<TSrc>::Exact)
  {
    if (dimension == 3)
    {
      const int boxBytes = kMaxBoxes * static_cast<int>(sizeof(unsigned long long) + sizeof(int)) +
                           kTileX * kTileY * (tileZ + 2 * kR) * static_cast<int>(sizeof(int));
      RotatingMaskBoxSumKernel<TSrc, TDst>
        <<<grid, dim3(kBlockX, kBlockY), boxBytes, ::cif::Stream()>>>(src, dst, kg, tileZ);
      CIF_CUDA_CHECK_LAUNCH("RotatingMaskBoxSumKernel");
      return;
    }
  }
  if (dimension == 3)
  {
    RotatingMaskKernel<TSrc, TDst, 3><<<grid, dim3(kBlockX, kBlockY), bytes, ::cif::Stream()>>>(src, dst, kg, tileZ);
  }
  else
  {
    RotatingMaskKernel<TSrc, TDst, 2><<<grid, dim3(kBlockX, kBlockY), bytes, ::cif::Stream()>>>(src, dst, kg, tileZ);
  }
  CIF_CUDA_CHECK_LAUNCH("RotatingMaskKernel");
}

} // namespace

template <typename TIn, typename TOut>
std::string
RotatingMaskCUDA(const TIn *                         input,
                 TOut *                              output,
                 const ClampedNeighborhoodGeometry & g,
                 const RotatingMaskParameters &      p)
{
  const std::string why = ValidateRotatingMaskJob(g, p);
  if (!why.empty())
  {
    throw std::invalid_argument("RotatingMaskCUDA: " + why);
  }
  if (p.iterations == 1)
  {
    RunPass(input, output, g, p.dimension);
  }
  else
  {
    cif::PooledBuffer temporary(static_cast<std::size_t>(g.OutputCount()) * sizeof(TOut), ::cif::Stream());
    auto *            tmp = static_cast<TOut *>(temporary.GetPointer());
    const TOut *      previous = nullptr;
    for (int i = 0; i < p.iterations; ++i)
    {
      TOut * target = ((p.iterations - 1 - i) % 2 == 0) ? output : tmp;
      if (i == 0)
      {
        RunPass(input, target, g, p.dimension);
      }
      else
      {
        RunPass(previous, target, g, p.dimension);
      }
      previous = target;
    }
  }
  CIF_CUDA_SYNCHRONIZE_STREAM();
  std::ostringstream description;
  description << "shared-memory tile kernel, " << (p.dimension == 3 ? "six 3D half-masks" : "Nagao's nine 2D masks")
              << (rotating_mask::Arithmetic<TIn>::Exact ? ", exact integer arithmetic" : ", double arithmetic");
  if (p.iterations > 1)
  {
    description << ", " << p.iterations << " iterations on the device";
  }
  return description.str();
}

#define CIF_INSTANTIATE_ROTATING_MASK_CUDA(TIn, TOut)                                                                  \
  template std::string RotatingMaskCUDA<TIn, TOut>(                                                                    \
    const TIn *, TOut *, const ClampedNeighborhoodGeometry &, const RotatingMaskParameters &);
#define CIF_ROTATING_MASK_SAME(T) CIF_INSTANTIATE_ROTATING_MASK_CUDA(T, T)
#define CIF_ROTATING_MASK_TO_FLOAT(T) CIF_INSTANTIATE_ROTATING_MASK_CUDA(T, float)
CIF_ROTATING_MASK_PIXELS(CIF_ROTATING_MASK_SAME)
CIF_FLOAT_OUTPUT_PIXELS(CIF_ROTATING_MASK_TO_FLOAT)

} // namespace cif
