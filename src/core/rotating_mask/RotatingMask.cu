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

struct KernelGeometry
{
  long long inputSize[3];
  long long outputStart[3];
  long long outputSize[3];
};

__device__ __forceinline__ long long
Clamp(long long i, long long n)
{
  return i < 0 ? 0 : (i >= n ? n - 1 : i);
}

template <typename TIn, typename TOut, int Dim>
__global__ void
__launch_bounds__(kBlockThreads)
  RotatingMaskKernel(const TIn * __restrict__ in, TOut * __restrict__ out, KernelGeometry g, int tileZ)
{
  using A = rotating_mask::Arithmetic<TIn>;
  using V = typename A::Value;
  extern __shared__ __align__(16) unsigned char rotatingMaskShared[];
  V *                                           tile = reinterpret_cast<V *>(rotatingMaskShared);
  constexpr int                                 rz = Dim == 3 ? kR : 0;
  constexpr int                                 plane = kTileX * kTileY;
  const int                                     tz = tileZ + 2 * rz;

  const long long ox = static_cast<long long>(blockIdx.x) * kBlockX;
  const long long oy = static_cast<long long>(blockIdx.y) * kBlockY;
  const long long oz = static_cast<long long>(blockIdx.z) * tileZ;
  const long long bx = g.outputStart[0] + ox - kR;
  const long long by = g.outputStart[1] + oy - kR;
  const long long bz = g.outputStart[2] + oz - rz;
  const long long nx = g.inputSize[0], ny = g.inputSize[1], nz = g.inputSize[2];

  const int count = plane * tz;
  for (int i = threadIdx.y * kBlockX + threadIdx.x; i < count; i += kBlockThreads)
  {
    const int       lx = i % kTileX;
    const int       rest = i / kTileX;
    const int       ly = rest % kTileY;
    const int       lz = rest / kTileY;
    const long long gx = Clamp(bx + lx, nx), gy = Clamp(by + ly, ny), gz = Clamp(bz + lz, nz);
    tile[i] = A::Load(in[(gz * ny + gy) * nx + gx]);
  }
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

template <typename TSrc, typename TDst>
void
RunPass(const TSrc * src, TDst * dst, const ClampedNeighborhoodGeometry & g, int dimension)
{
  using V = typename rotating_mask::Arithmetic<TSrc>::Value;
  KernelGeometry kg;
  for (int a = 0; a < 3; ++a)
  {
    kg.inputSize[a] = g.inputSize[a];
    kg.outputStart[a] = g.outputStart[a];
    kg.outputSize[a] = g.outputSize[a];
  }
  const int  tileZ = g.outputSize[2] >= 4 ? 4 : 1;
  const int  rz = dimension == 3 ? kR : 0;
  const int  bytes = kTileX * kTileY * (tileZ + 2 * rz) * static_cast<int>(sizeof(V));
  const dim3 grid(static_cast<unsigned>((g.outputSize[0] + kBlockX - 1) / kBlockX),
                  static_cast<unsigned>((g.outputSize[1] + kBlockY - 1) / kBlockY),
                  static_cast<unsigned>((g.outputSize[2] + tileZ - 1) / tileZ));
  if (grid.y > 65535 || grid.z > 65535)
  {
    throw CudaFailure(-1, "the image has more rows or slices than the kernel's grid covers", "RotatingMaskCUDA");
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
