/*=========================================================================
 *  CudaImageFilters: CUDA kernels and launcher of the bilateral filter.
 *
 *  Tile kernel: a block of 32 x 8 threads computes a 32 x 8 x Z box of the
 *  output (Z = 4 along z for volumes, 1 for images); it first loads the box
 *  grown by the radius into shared memory as float (clamped reads, so the
 *  boundary costs nothing afterwards), then every thread walks the kernel
 *  taps from shared memory with the domain weights in constant memory
 *  (uniform across the warp: a broadcast). Radii (1,1,1), (2,2,2), (3,3,3)
 *  and (1,1,0), (2,2,0), (3,3,0) have unrolled variants (the tap offsets and
 *  weight addresses become immediates); other radii use the same kernel with
 *  run-time loops.
 *
 *  Global kernel: for kernels with more taps than the constant buffer holds
 *  (8192) or tiles larger than the device's shared memory per block, one
 *  thread per output sample reads its clamped neighbours through the
 *  caches and the weights from global memory.
 *
 *  Arithmetic (single precision):
 *    d = f(q) - f(x);  h = w_domain * __expf(-d^2 / (2 sigma^2)), 0 unless |d| < cutoff;
 *    g = f(x) + sum h d / sum h.
 *  __expf has a maximum error of 2 + floor(|1.173 t|) ulp at argument t
 *  (CUDA C++ Programming Guide, intrinsic functions); inside the cutoff
 *  t > -8, so at most 11 ulp, a relative error below 1.4e-6 of each range
 *  weight. Together with float accumulation over at most 343 taps the
 *  result differs from the double-precision CPU core by at most about
 *  1e-4 RangeSigma plus one float rounding of the output (see the ITK
 *  filter's documentation for the tested bound).
 *=========================================================================*/
#include "cifCudaStream.h"
#include "cif/Bilateral.h"
#include "cifPixelLists.h"
#include "cif/CudaError.h"
#include "cif/PooledBuffer.h"
#include "cif/Runtime.h"

#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <type_traits>

namespace cif
{

bool
BilateralCUDAIsCompiled()
{
  return true;
}

namespace
{

constexpr int kBlockX = 32;
constexpr int kBlockY = 8;
constexpr int kBlockThreads = kBlockX * kBlockY;
constexpr int kMaxConstantTaps = 8192; // 32 KiB of the 64 KiB constant bank

__constant__ float c_DomainWeights[kMaxConstantTaps];

/** The constant buffer is one per device: one launcher at a time on a
 * device (devices past the 64th share locks, which is still safe). */
std::mutex &
DeviceConstantMutex()
{
  static std::mutex locks[64];
  int               device = 0;
  CIF_CUDA_CHECK(cudaGetDevice(&device));
  return locks[static_cast<unsigned>(device) % 64u];
}

struct KernelGeometry
{
  long long inputSize[3];
  long long outputStart[3];
  long long outputSize[3];
};

struct RangeTerm
{
  float negHalfInvVariance; ///< -1 / (2 sigma^2)
  float cutoff;             ///< a neighbour contributes when |d| < cutoff
};

template <typename TOut>
__device__ __forceinline__ TOut
ToOutput(float v)
{
  if constexpr (std::is_integral<TOut>::value)
  {
    // ITK's static_cast truncates toward zero; clamp first (float rounding
    // can leave the weighted mean a hair outside the samples' range).
    constexpr float lo = static_cast<float>(std::numeric_limits<TOut>::lowest());
    constexpr float hi = static_cast<float>(std::numeric_limits<TOut>::max());
    return static_cast<TOut>(fminf(fmaxf(v, lo), hi));
  }
  else
  {
    return static_cast<TOut>(v);
  }
}

__device__ __forceinline__ long long
Clamp(long long i, long long n)
{
  return i < 0 ? 0 : (i >= n ? n - 1 : i);
}

/** One tap: accumulates h d and h. A neighbour outside the cutoff adds
 * nothing; with floating-point samples its difference may be NaN or
 * infinite (0 x d would be NaN), so it is zeroed too, as ITK skips it. */
template <bool NonFinitePossible>
__device__ __forceinline__ void
Accumulate(float v, float c, float w, const RangeTerm & range, float & num, float & den)
{
  float      d = v - c;
  const bool inside = fabsf(d) < range.cutoff; // false for NaN
  float      h = w * __expf(d * d * range.negHalfInvVariance);
  h = inside ? h : 0.0f;
  if constexpr (NonFinitePossible)
  {
    d = inside ? d : 0.0f;
  }
  num = fmaf(h, d, num);
  den += h;
}

/** R >= 0: radius (R, R, RZ) fixed at compile time; R < 0: run-time radius. */
template <typename TIn, typename TOut, int R, int RZ>
__global__ void
__launch_bounds__(kBlockThreads) BilateralTileKernel(const TIn * __restrict__ in,
                                                     TOut * __restrict__ out,
                                                     KernelGeometry g,
                                                     int            rxRun,
                                                     int            ryRun,
                                                     int            rzRun,
                                                     int            tileZ,
                                                     RangeTerm      range)
{
  extern __shared__ float tile[];
  const int               rx = R >= 0 ? R : rxRun;
  const int               ry = R >= 0 ? R : ryRun;
  const int               rz = R >= 0 ? RZ : rzRun;
  const int               tx = kBlockX + 2 * rx;
  const int               ty = kBlockY + 2 * ry;
  const int               tz = tileZ + 2 * rz;

  const long long ox = static_cast<long long>(blockIdx.x) * kBlockX;
  const long long oy = static_cast<long long>(blockIdx.y) * kBlockY;
  const long long oz = static_cast<long long>(blockIdx.z) * tileZ;
  const long long bx = g.outputStart[0] + ox - rx;
  const long long by = g.outputStart[1] + oy - ry;
  const long long bz = g.outputStart[2] + oz - rz;
  const long long nx = g.inputSize[0], ny = g.inputSize[1], nz = g.inputSize[2];

  const int count = tx * ty * tz;
  for (int i = threadIdx.y * kBlockX + threadIdx.x; i < count; i += kBlockThreads)
  {
    const int       lx = i % tx;
    const int       rest = i / tx;
    const int       ly = rest % ty;
    const int       lz = rest / ty;
    const long long gx = Clamp(bx + lx, nx), gy = Clamp(by + ly, ny), gz = Clamp(bz + lz, nz);
    tile[i] = static_cast<float>(in[(gz * ny + gy) * nx + gx]);
  }
  __syncthreads();

  const long long x = ox + threadIdx.x;
  const long long y = oy + threadIdx.y;
  if (x >= g.outputSize[0] || y >= g.outputSize[1])
  {
    return;
  }
  const int plane = tx * ty;
#pragma unroll 1
  for (int t = 0; t < tileZ; ++t)
  {
    const long long z = oz + t;
    if (z >= g.outputSize[2])
    {
      break;
    }
    // tile position of tap (-rx, -ry, -rz) of this output sample
    const float * base = tile + (t * ty + threadIdx.y) * tx + threadIdx.x;
    const float   c = base[rz * plane + ry * tx + rx];
    float         num = 0.0f, den = 0.0f;
    if constexpr (R >= 0)
    {
      constexpr int wx = 2 * R + 1;
      constexpr int wz = 2 * RZ + 1;
      constexpr int ctx = kBlockX + 2 * R;
      constexpr int cty = kBlockY + 2 * R;
#pragma unroll
      for (int dz = 0; dz < wz; ++dz)
      {
#pragma unroll
        for (int dy = 0; dy < wx; ++dy)
        {
#pragma unroll
          for (int dx = 0; dx < wx; ++dx)
          {
            Accumulate<std::is_floating_point<TIn>::value>(
              base[(dz * cty + dy) * ctx + dx], c, c_DomainWeights[(dz * wx + dy) * wx + dx], range, num, den);
          }
        }
      }
    }
    else
    {
      int tap = 0;
      for (int dz = 0; dz <= 2 * rz; ++dz)
      {
        for (int dy = 0; dy <= 2 * ry; ++dy)
        {
          const float * row = base + dz * plane + dy * tx;
#pragma unroll 4
          for (int dx = 0; dx <= 2 * rx; ++dx)
          {
            Accumulate<std::is_floating_point<TIn>::value>(row[dx], c, c_DomainWeights[tap + dx], range, num, den);
          }
          tap += 2 * rx + 1;
        }
      }
    }
    // den >= the centre's weight > 0 unless the centre is not finite: then 0 / 0 = NaN.
    out[(z * g.outputSize[1] + y) * g.outputSize[0] + x] = ToOutput<TOut>(c + num / den);
  }
}

template <typename TIn, typename TOut>
__global__ void __launch_bounds__(256) BilateralGlobalKernel(const TIn * __restrict__ in,
                                                             TOut * __restrict__ out,
                                                             KernelGeometry g,
                                                             int            rx,
                                                             int            ry,
                                                             int            rz,
                                                             const float * __restrict__ weights,
                                                             RangeTerm range)
{
  const long long count = g.outputSize[0] * g.outputSize[1] * g.outputSize[2];
  const long long nx = g.inputSize[0], ny = g.inputSize[1], nz = g.inputSize[2];
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
  {
    const long long x = i % g.outputSize[0];
    const long long rest = i / g.outputSize[0];
    const long long y = rest % g.outputSize[1];
    const long long z = rest / g.outputSize[1];
    const long long px = g.outputStart[0] + x, py = g.outputStart[1] + y, pz = g.outputStart[2] + z;
    const float     c = static_cast<float>(in[(pz * ny + py) * nx + px]);
    float           num = 0.0f, den = 0.0f;
    int             tap = 0;
    for (int dz = -rz; dz <= rz; ++dz)
    {
      const long long gz = Clamp(pz + dz, nz);
      for (int dy = -ry; dy <= ry; ++dy)
      {
        const TIn * row = in + (gz * ny + Clamp(py + dy, ny)) * nx;
        for (int dx = -rx; dx <= rx; ++dx, ++tap)
        {
          Accumulate<std::is_floating_point<TIn>::value>(
            static_cast<float>(__ldg(row + Clamp(px + dx, nx))), c, __ldg(weights + tap), range, num, den);
        }
      }
    }
    out[i] = ToOutput<TOut>(c + num / den);
  }
}

int
MaxSharedBytesOptin()
{
  return static_cast<int>(cif::Runtime::GetMaxSharedMemoryPerBlock());
}

/** How a job runs on the device. */
struct Plan
{
  bool        tiled{ false };
  int         tileZ{ 1 };
  int         sharedBytes{ 0 };
  std::string description;
};

Plan
MakePlan(const ClampedNeighborhoodGeometry & g, const BilateralParameters & p)
{
  Plan               plan;
  const int          rx = p.radius[0], ry = p.radius[1], rz = p.radius[2];
  const std::int64_t taps = static_cast<std::int64_t>(p.domainWeights.size());
  const int          maxShared = MaxSharedBytesOptin();
  std::ostringstream why;
  if (taps <= kMaxConstantTaps)
  {
    for (int tileZ : { 4, 1 })
    {
      if (tileZ > 1 && g.outputSize[2] < tileZ)
      {
        continue;
      }
      const std::int64_t bytes = static_cast<std::int64_t>(kBlockX + 2 * rx) * (kBlockY + 2 * ry) *
                                 (tileZ + 2 * static_cast<std::int64_t>(rz)) * static_cast<std::int64_t>(sizeof(float));
      if (bytes <= maxShared)
      {
        plan.tiled = true;
        plan.tileZ = tileZ;
        plan.sharedBytes = static_cast<int>(bytes);
        break;
      }
    }
    if (!plan.tiled)
    {
      why << "global-memory kernel: radius (" << rx << ", " << ry << ", " << rz
          << ") needs a shared-memory tile larger than the device's " << maxShared / 1024 << " KiB per block";
    }
  }
  else
  {
    why << "global-memory kernel: " << taps << " taps exceed the constant-memory weight buffer (" << kMaxConstantTaps
        << ")";
  }
  if (plan.tiled &&
      ((g.outputSize[1] + kBlockY - 1) / kBlockY > 65535 || (g.outputSize[2] + plan.tileZ - 1) / plan.tileZ > 65535))
  {
    plan.tiled = false;
    why << "global-memory kernel: the image has more rows or slices than the tile kernel's grid covers";
  }
  if (plan.tiled)
  {
    const bool unrolled = rx == ry && rx >= 1 && rx <= 3 && (rz == rx || rz == 0);
    why << "shared-memory tile kernel (radius " << rx << ", " << ry << ", " << rz << "; " << taps
        << " taps, domain weights in constant memory" << (unrolled ? ", unrolled" : "") << ")";
  }
  plan.description = why.str();
  return plan;
}

template <typename TIn, typename TOut, int R, int RZ>
void
LaunchTile(const TIn *                 in,
           TOut *                      out,
           const KernelGeometry &      kg,
           const BilateralParameters & p,
           const Plan &                plan,
           RangeTerm                   range)
{
  auto kernel = BilateralTileKernel<TIn, TOut, R, RZ>;
  if (plan.sharedBytes > 48 * 1024)
  {
    CIF_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, plan.sharedBytes));
  }
  const dim3 grid(static_cast<unsigned>((kg.outputSize[0] + kBlockX - 1) / kBlockX),
                  static_cast<unsigned>((kg.outputSize[1] + kBlockY - 1) / kBlockY),
                  static_cast<unsigned>((kg.outputSize[2] + plan.tileZ - 1) / plan.tileZ));
  kernel<<<grid, dim3(kBlockX, kBlockY), plan.sharedBytes, ::cif::Stream()>>>(
    in, out, kg, p.radius[0], p.radius[1], p.radius[2], plan.tileZ, range);
  CIF_CUDA_CHECK_LAUNCH("BilateralTileKernel");
}

/** One pass src -> dst. */
template <typename TSrc, typename TDst>
void
RunPass(const TSrc *                        src,
        TDst *                              dst,
        const ClampedNeighborhoodGeometry & g,
        const BilateralParameters &         p,
        const Plan &                        plan,
        const float *                       globalWeights)
{
  KernelGeometry kg;
  for (int a = 0; a < 3; ++a)
  {
    kg.inputSize[a] = g.inputSize[a];
    kg.outputStart[a] = g.outputStart[a];
    kg.outputSize[a] = g.outputSize[a];
  }
  RangeTerm range;
  range.negHalfInvVariance = static_cast<float>(-0.5 / (p.rangeSigma * p.rangeSigma));
  if (std::is_integral<TSrc>::value)
  {
    // integer differences d < cutoff exactly when |d| < ceil(cutoff) - 1/2
    range.cutoff = static_cast<float>(std::ceil(p.rangeCutoff) - 0.5);
  }
  else
  {
    range.cutoff = static_cast<float>(p.rangeCutoff);
  }
  if (plan.tiled)
  {
    const int rx = p.radius[0], ry = p.radius[1], rz = p.radius[2];
    if (rx == ry && (rz == rx || rz == 0))
    {
      switch (rx * 10 + (rz == 0 ? 0 : 1))
      {
        case 11:
          return LaunchTile<TSrc, TDst, 1, 1>(src, dst, kg, p, plan, range);
        case 21:
          return LaunchTile<TSrc, TDst, 2, 2>(src, dst, kg, p, plan, range);
        case 31:
          return LaunchTile<TSrc, TDst, 3, 3>(src, dst, kg, p, plan, range);
        case 10:
          return LaunchTile<TSrc, TDst, 1, 0>(src, dst, kg, p, plan, range);
        case 20:
          return LaunchTile<TSrc, TDst, 2, 0>(src, dst, kg, p, plan, range);
        case 30:
          return LaunchTile<TSrc, TDst, 3, 0>(src, dst, kg, p, plan, range);
        default:
          break;
      }
    }
    return LaunchTile<TSrc, TDst, -1, -1>(src, dst, kg, p, plan, range);
  }
  const long long count = g.OutputCount();
  const int       blocks = static_cast<int>(std::min<long long>((count + 255) / 256, 65535LL * 16));
  BilateralGlobalKernel<TSrc, TDst>
    <<<blocks, 256, 0, ::cif::Stream()>>>(src, dst, kg, p.radius[0], p.radius[1], p.radius[2], globalWeights, range);
  CIF_CUDA_CHECK_LAUNCH("BilateralGlobalKernel");
}

} // namespace

template <typename TIn, typename TOut>
std::string
BilateralCUDA(const TIn * input, TOut * output, const ClampedNeighborhoodGeometry & g, const BilateralParameters & p)
{
  const std::string why = ValidateBilateralJob(g, p);
  if (!why.empty())
  {
    throw std::invalid_argument("BilateralCUDA: " + why);
  }
  std::lock_guard<std::mutex> lock(DeviceConstantMutex());
  const Plan                  plan = MakePlan(g, p);
  std::vector<float>          weights(p.domainWeights.begin(), p.domainWeights.end());
  cif::PooledBuffer           globalWeights; // temporaries from the stream-ordered pool: no cudaMalloc per call
  if (plan.tiled)
  {
    CIF_CUDA_CHECK(cudaMemcpyToSymbolAsync(
      c_DomainWeights, weights.data(), weights.size() * sizeof(float), 0, cudaMemcpyHostToDevice, ::cif::Stream()));
  }
  else
  {
    globalWeights = cif::PooledBuffer(weights.size() * sizeof(float), ::cif::Stream());
    CIF_CUDA_CHECK(cudaMemcpyAsync(globalWeights.GetPointer(),
                                   weights.data(),
                                   weights.size() * sizeof(float),
                                   cudaMemcpyHostToDevice,
                                   ::cif::Stream()));
  }
  const auto * w = static_cast<const float *>(globalWeights.GetPointer());
  if (p.iterations == 1)
  {
    RunPass(input, output, g, p, plan, w);
  }
  else
  {
    // Ping-pong between the output and one device temporary; the last
    // iteration writes the output.
    cif::PooledBuffer temporary(static_cast<std::size_t>(g.OutputCount()) * sizeof(TOut), ::cif::Stream());
    auto *            tmp = static_cast<TOut *>(temporary.GetPointer());
    const TOut *      previous = nullptr;
    for (int i = 0; i < p.iterations; ++i)
    {
      TOut * target = ((p.iterations - 1 - i) % 2 == 0) ? output : tmp;
      if (i == 0)
      {
        RunPass(input, target, g, p, plan, w);
      }
      else
      {
        RunPass(previous, target, g, p, plan, w);
      }
      previous = target;
    }
  }
  CIF_CUDA_SYNCHRONIZE_STREAM();
  std::string description = plan.description;
  if (p.iterations > 1)
  {
    description += ", " + std::to_string(p.iterations) + " iterations on the device";
  }
  return description;
}

#define CIF_INSTANTIATE_BILATERAL_CUDA(TIn, TOut)                                                                      \
  template std::string BilateralCUDA<TIn, TOut>(                                                                       \
    const TIn *, TOut *, const ClampedNeighborhoodGeometry &, const BilateralParameters &);
#define CIF_BILATERAL_SAME(T) CIF_INSTANTIATE_BILATERAL_CUDA(T, T)
#define CIF_BILATERAL_TO_FLOAT(T) CIF_INSTANTIATE_BILATERAL_CUDA(T, float)
CIF_BILATERAL_GPU_PIXELS(CIF_BILATERAL_SAME)
CIF_FLOAT_OUTPUT_PIXELS(CIF_BILATERAL_TO_FLOAT)

} // namespace cif
