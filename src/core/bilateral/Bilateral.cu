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
 *    d = f(q) - f(x);  h = 2^(L + d^2 k), 0 unless |d| < cutoff;
 *    g = f(x) + sum h d / sum h,
 *  with L = log2(w_domain / max w_domain) per tap (the common factor
 *  cancels in the quotient) and k = -log2(e) / (2 sigma^2), evaluated as
 *  t = fma(d, d k, L), and t = -inf outside the cutoff: per tap one FMUL,
 *  one FFMA, one FSEL and one MUFU.EX2 (ex2.approx.ftz, 2 ulp) instead of
 *  w * exp(-d^2 / (2 sigma^2)) (SASS of the unrolled radius-2 kernels:
 *  14 instructions per tap before, 9 now for integer samples, 10 for float).
 *  The argument's error is at most (2 |t| + 24) 2^-24: the FFMA's rounding
 *  (|t| 2^-24), d k's and k's (11.6 2^-24 each, |d^2 k| < 11.6 inside the
 *  cutoff) and L's (|L| <= |t|); so each weight of at least 2^-20 of the
 *  largest (|t| <= 20) is within 3e-6 of its relative value, and smaller
 *  weights, less accurate, have as small a share of the sums. Together with
 *  float accumulation over at most 343 taps
 *  the result differs from the double-precision CPU core by at most about
 *  1e-4 RangeSigma plus one float rounding of the output (see the ITK
 *  filter's documentation for the tested bound).
 *=========================================================================*/
#include "cifClampedTile.h"
#include "cifCudaStream.h"
#include "cif/Bilateral.h"
#include "cifPixelLists.h"
#include "cif/CudaError.h"
#include "cif/PooledBuffer.h"
#include "cif/Runtime.h"

#include <cuda_runtime.h>
#include <math_constants.h>
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

__constant__ float c_LogDomainWeights[kMaxConstantTaps]; ///< log2(w / max w) per tap

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

struct RangeTerm
{
  float log2Scale; ///< -log2(e) / (2 sigma^2)
  float cutoff;    ///< a neighbour contributes when |d| < cutoff
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

/** 2^t on the multi-function unit, subnormal results flushed to zero. */
__device__ __forceinline__ float
Exp2Approx(float t)
{
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(t));
  return r;
}

/** One tap with L = log2 of its relative domain weight: accumulates h d and
 * h. A neighbour outside the cutoff adds nothing: its exponent is -inf
 * (2^-inf = 0) and, with floating-point samples, where d may be NaN or
 * infinite (0 x d would be NaN), its difference is zeroed too, as ITK skips
 * it. Branch-free: as a branch, ptxas predicates the body and reloads the
 * constants of every tap with LDC. */
template <bool NonFinitePossible>
__device__ __forceinline__ void
Accumulate(float v, float c, float logWeight, const RangeTerm & range, float & num, float & den)
{
  float d = v - c;
  float t = fmaf(d, d * range.log2Scale, logWeight);
  // t = -inf unless |d| < cutoff (false for NaN), as a PTX select: written
  // in C++, the compiler turns it into a branch, then ptxas into predicated
  // instructions that reload each tap's constants with LDC
  asm("{\n\t.reg .pred inside;\n\t"
      "setp.lt.f32 inside, %1, %2;\n\t"
      "selp.f32 %0, %3, 0fFF800000, inside;\n\t}"
      : "=f"(t)
      : "f"(fabsf(d)), "f"(range.cutoff), "f"(t));
  const float h = Exp2Approx(t);
  if constexpr (NonFinitePossible)
  {
    d = fabsf(d) < range.cutoff ? d : 0.0f;
  }
  num = fmaf(h, d, num);
  den += h;
}

/** R >= 0: radius (R, R, RZ) fixed at compile time; R < 0: run-time radius. */
template <typename TIn, typename TOut, int R, int RZ>
__global__ void
__launch_bounds__(kBlockThreads) BilateralTileKernel(const TIn * __restrict__ in,
                                                     TOut * __restrict__ out,
                                                     ClampedKernelGeometry g,
                                                     int                   rxRun,
                                                     int                   ryRun,
                                                     int                   rzRun,
                                                     int                   tileZ,
                                                     RangeTerm             range)
{
  extern __shared__ float tile[];
  const int               rx = R >= 0 ? R : rxRun;
  const int               ry = R >= 0 ? R : ryRun;
  const int               rz = R >= 0 ? RZ : rzRun;
  const int               tx = kBlockX + 2 * rx;
  const int               ty = kBlockY + 2 * ry;
  const int               tz = tileZ + 2 * rz;

  const BlockBox  box = BlockBoxOf(g, kBlockX, kBlockY, tileZ, rx, ry, rz);
  const long long ox = box.output[0], oy = box.output[1], oz = box.output[2];
  LoadClampedTile(in, tile, g, box.first, tx, ty, tz, [](TIn v) { return static_cast<float>(v); });
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
              base[(dz * cty + dy) * ctx + dx], c, c_LogDomainWeights[(dz * wx + dy) * wx + dx], range, num, den);
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
            Accumulate<std::is_floating_point<TIn>::value>(row[dx], c, c_LogDomainWeights[tap + dx], range, num, den);
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
                                                             ClampedKernelGeometry g,
                                                             int                   rx,
                                                             int                   ry,
                                                             int                   rz,
                                                             const float * __restrict__ logWeights,
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
      const long long gz = ClampIndex(pz + dz, nz);
      for (int dy = -ry; dy <= ry; ++dy)
      {
        const TIn * row = in + (gz * ny + ClampIndex(py + dy, ny)) * nx;
        for (int dx = -rx; dx <= rx; ++dx, ++tap)
        {
          Accumulate<std::is_floating_point<TIn>::value>(
            static_cast<float>(__ldg(row + ClampIndex(px + dx, nx))), c, __ldg(logWeights + tap), range, num, den);
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
    // output planes per block: 8 for z radii up to 2, so that the tile's
    // 2 rz halo planes are loaded for 8 outputs rather than 4 (one H100,
    // 512x512x72 uint16 radius 2: 0.944 -> 0.891 ms; 512^3 float32 radius 1:
    // 2.137 -> 1.915 ms); 4 above, where the deeper tile measured slower
    // (fewer blocks per SM)
    for (int tileZ : { rz <= 2 ? 8 : 4, 4, 1 })
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
LaunchTile(const TIn *                   in,
           TOut *                        out,
           const ClampedKernelGeometry & kg,
           const BilateralParameters &   p,
           const Plan &                  plan,
           RangeTerm                     range)
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
  const ClampedKernelGeometry kg(g);
  RangeTerm                   range;
  range.log2Scale = static_cast<float>(-0.5 / (p.rangeSigma * p.rangeSigma) / std::log(2.0));
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
  // log2 of each weight relative to the largest (-inf for a zero weight:
  // 2^-inf = 0); the quotient does not depend on the weights' scale.
  const double       largest = *std::max_element(p.domainWeights.begin(), p.domainWeights.end());
  std::vector<float> weights(p.domainWeights.size());
  std::transform(p.domainWeights.begin(),
                 p.domainWeights.end(),
                 weights.begin(),
                 [largest](double w) { return static_cast<float>(std::log2(largest > 0.0 ? w / largest : w)); });
  cif::PooledBuffer globalWeights; // temporaries from the stream-ordered pool: no cudaMalloc per call
  if (plan.tiled)
  {
    CIF_CUDA_CHECK(cudaMemcpyToSymbolAsync(
      c_LogDomainWeights, weights.data(), weights.size() * sizeof(float), 0, cudaMemcpyHostToDevice, ::cif::Stream()));
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
