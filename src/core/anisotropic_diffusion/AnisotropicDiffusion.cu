/*=========================================================================
 *  CudaImageFilters: anisotropic diffusion on the GPU. Every iteration on
 *  the device, two launches: ITK's average squared gradient magnitude and
 *  the conductance K from it (per-block sums in double, added in a fixed
 *  order by the block that finishes last, so the result does not depend on
 *  the run), then the update by fluxes (each face's flux computed once, in
 *  a shared-memory tile marching along z) from the current image into the
 *  next (the first iteration reads the input itself, then ping-pong between
 *  the output and one work image). No host synchronisation between
 *  iterations; the temporaries come from the device's stream-ordered pool
 *  (cif::PooledBuffer), so a call allocates nothing after the first.
 *=========================================================================*/
#include "cifAnisotropicDiffusionMath.h"
#include "cifCudaStream.h"
#include "cifPixelLists.h"
#include "cif/PooledBuffer.h"
#include "cif/Runtime.h"

#include <cub/block/block_reduce.cuh>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <mutex>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace cif
{
namespace
{
constexpr int BlockX = 32, BlockY = 8;

/** The grid of one thread per pixel: x in blocks of BlockX, y in blocks of
 * BlockY, z over the grid's z. */
struct Launch
{
  dim3 grid;
  dim3 block{ BlockX, BlockY, 1 };
};

Launch
LaunchOf(const std::int64_t size[3])
{
  Launch l;
  const std::int64_t gy = (size[1] + l.block.y - 1) / l.block.y;
  if (gy > 65535 || size[2] > 65535)
  {
    throw CudaFailure(-1, "the image has more lines than the diffusion kernel's grid covers", "AnisotropicDiffusionCUDA");
  }
  l.grid = dim3(static_cast<unsigned>((size[0] + l.block.x - 1) / l.block.x), static_cast<unsigned>(gy),
                static_cast<unsigned>(size[2]));
  return l;
}

template <typename TIn, typename TOut>
__global__ void
CastKernel(const TIn * __restrict__ in, TOut * __restrict__ out, std::int64_t n)
{
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
  {
    out[i] = static_cast<TOut>(in[i]);
  }
}

/** The image's extent on three axes. */
struct Extent3
{
  std::int64_t size[3];
};

using PartialReduce = cub::BlockReduce<double, BlockX, cub::BLOCK_REDUCE_WARP_REDUCTIONS, BlockY>;

/** L pixels of T in one load (L = 1, 2, or 4 for float). */
template <typename T, int L>
struct Lanes;
template <typename T>
struct Lanes<T, 1>
{
  using Type = T;
};
template <>
struct Lanes<float, 2>
{
  using Type = float2;
};
template <>
struct Lanes<float, 4>
{
  using Type = float4;
};
template <>
struct Lanes<double, 2>
{
  using Type = double2;
};

/** Lane i of a vector of pixels. */
template <typename T, typename V>
__device__ __forceinline__ T
LaneOf(const V & v, int i)
{
  return reinterpret_cast<const T *>(&v)[i];
}

/** One pixel's term of ITK's average squared gradient magnitude:
 * ((f(+) - f(-)) / -2 scale)^2 added over the axes in order. ITK adds them
 * in double; here they are formed in the pixel type (float: one relative
 * rounding of about 1e-7 per term, well inside the filter's tolerance) and
 * the pixels' terms are added in double. h: -scale / 2 per axis. */
template <int D, typename T>
__device__ __forceinline__ double
GradientTerm(T dx, T dy, T dz, const T (&h)[3])
{
  T t = static_cast<T>(dx) * h[0];
  T sum = t * t;
  if (D > 1)
  {
    t = dy * h[1];
    sum += t * t;
  }
  if (D > 2)
  {
    t = dz * h[2];
    sum += t * t;
  }
  return static_cast<double>(sum);
}

/** ITK's average squared gradient magnitude and, from it, the conductance
 * K, in one launch and in a fixed order (the result does not depend on the
 * run): every block adds its pixels' terms into partial[block]; the block
 * that finishes last (a ticket in *done) adds the partial sums in index
 * order, writes K = <|grad f|^2> conductance^2 (-2) into *k and resets the
 * ticket. A thread takes a column of planesPerBlock pixels along z and
 * keeps the column in registers; its x and y neighbours come through the
 * cache, edges clamped as in ITK. A thread takes L pixels along x with one
 * load per row (L > 1: rows of a multiple of L pixels, aligned), and 3D
 * columns go four planes at a time with all their loads first. */
template <int D, typename T, int L>
__global__ void
ConductanceKernel(const T * __restrict__ image, Extent3 e, std::int64_t planesPerBlock, T hx, T hy, T hz,
                  double conductance, double * __restrict__ partial, unsigned * __restrict__ done, T * __restrict__ k)
{
  __shared__ typename PartialReduce::TempStorage storage;
  __shared__ bool                                last;
  const std::int64_t nx = e.size[0], ny = e.size[1], nz = e.size[2];
  const std::int64_t x = (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) * L;
  const std::int64_t y = blockIdx.y * static_cast<std::int64_t>(blockDim.y) + threadIdx.y;
  const std::int64_t z0 = blockIdx.z * planesPerBlock;
  const int          steps = static_cast<int>(z0 + planesPerBlock < nz ? planesPerBlock : nz - z0);
  const T            h[3] = { hx, hy, hz };
  double             term = 0.0;
  if (x < nx && y < ny)
  {
    const std::int64_t plane = nx * ny;
    const T *          p = image + z0 * plane + y * nx + x;
    // the neighbours' offsets, clamped at the edges as in ITK (0: the pixel itself), and the steps
    // whose plane above is inside the image (all but the image's last plane)
    const std::int64_t up = y + 1 < ny ? nx : 0, down = y > 0 ? -nx : 0;
    const int          aboveSteps = static_cast<int>(z0 + steps < nz ? steps : nz - 1 - z0);
    // pixels x .. x + L - 1: the row's lanes, the lanes above and below in y and z, x - 1 and x + L
    // (L = 1: the pixel, its six neighbours)
    using V = typename Lanes<T, L>::Type;
    const int left = x > 0 ? -1 : 0, right = x + L < nx ? L : L - 1;
    V         below = D == 3 ? __ldg(reinterpret_cast<const V *>(z0 > 0 ? p - plane : p)) : V{};
    V         centre = __ldg(reinterpret_cast<const V *>(p));
    // G planes at a time: all their loads first, so that enough bytes are in flight
    constexpr int G = D == 3 ? 4 : 1;
    auto          group = [&](auto count, std::int64_t lastAbove) {
      constexpr int N = decltype(count)::value;
      V             u[N], d[N], a[N];
      T             l[N], r[N];
#pragma unroll
      for (int j = 0; j < N; ++j)
      {
        const T * q = p + j * plane;
        u[j] = __ldg(reinterpret_cast<const V *>(q + up));
        d[j] = __ldg(reinterpret_cast<const V *>(q + down));
        l[j] = __ldg(q + left);
        r[j] = __ldg(q + right);
        if constexpr (D == 3)
        {
          a[j] = __ldg(reinterpret_cast<const V *>(q + (j + 1 < N ? plane : lastAbove)));
        }
        else
        {
          a[j] = V{};
        }
      }
#pragma unroll
      for (int j = 0; j < N; ++j)
      {
#pragma unroll
        for (int i = 0; i < L; ++i)
        {
          const T plus = i + 1 < L ? LaneOf<T>(centre, i + 1) : r[j];
          const T minus = i > 0 ? LaneOf<T>(centre, i - 1) : l[j];
          term += GradientTerm<D>(static_cast<T>(plus - minus), static_cast<T>(LaneOf<T>(u[j], i) - LaneOf<T>(d[j], i)),
                                  static_cast<T>(LaneOf<T>(a[j], i) - LaneOf<T>(below, i)), h);
        }
        below = centre;
        centre = a[j];
      }
      p += N * plane;
    };
    using One = std::integral_constant<int, 1>;
    if constexpr (D < 3)
    {
      for (int i = 0; i < steps; ++i)
      {
        centre = __ldg(reinterpret_cast<const V *>(p)); // the planes of a 2D stack are independent
        group(One{}, 0);
      }
    }
    else
    {
      int i = 0;
      for (; i + G <= aboveSteps; i += G)
      {
        group(std::integral_constant<int, G>{}, plane);
      }
      for (; i < aboveSteps; ++i)
      {
        group(One{}, plane);
      }
      if (aboveSteps < steps)
      {
        group(One{}, 0); // the image's last plane: its plane above is itself
      }
    }
  }
  const std::int64_t block = blockIdx.x + static_cast<std::int64_t>(gridDim.x) * (blockIdx.y + static_cast<std::int64_t>(gridDim.y) * blockIdx.z);
  const std::int64_t blocks = static_cast<std::int64_t>(gridDim.x) * gridDim.y * gridDim.z;
  const int          tid = threadIdx.x + blockDim.x * threadIdx.y;
  const double       sum = PartialReduce(storage).Sum(term);
  if (tid == 0)
  {
    partial[block] = sum;
    __threadfence(); // the partial sum is visible before the ticket says so
    last = atomicAdd(done, 1u) == static_cast<unsigned>(blocks - 1);
  }
  __syncthreads();
  if (last)
  {
    __threadfence();
    // from L2, not a stale L1 line; four sums in flight per thread, in a fixed order
    constexpr int Stride = BlockX * BlockY;
    double        t[4] = { 0.0, 0.0, 0.0, 0.0 };
    std::int64_t  i = tid;
    for (; i + 3 * Stride < blocks; i += 4 * Stride)
    {
#pragma unroll
      for (int j = 0; j < 4; ++j)
      {
        t[j] += __ldcg(partial + i + j * Stride);
      }
    }
    for (; i < blocks; i += Stride)
    {
      t[0] += __ldcg(partial + i);
    }
    double total = (t[0] + t[1]) + (t[2] + t[3]);
    __syncthreads(); // the reduction's storage is reused
    total = PartialReduce(storage).Sum(total);
    if (tid == 0)
    {
      *k = diffusion::Conductance<T>(total / static_cast<double>(nx * ny * nz), conductance);
      *done = 0; // for the next launch
    }
  }
}

/** One iteration: next = current + dt update(current), with ITK's
 * conductance *k, one thread per pixel (1D images). */
template <int D, DiffusionKind K, typename T, typename TIndex>
__global__ void
UpdateKernel(const T * __restrict__ current, T * __restrict__ next, Extent3 e, const T * __restrict__ k,
             double timeStep, T scaleX, T scaleY, T scaleZ)
{
  const std::int64_t x = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  const std::int64_t y = blockIdx.y * static_cast<std::int64_t>(blockDim.y) + threadIdx.y;
  const std::int64_t z = blockIdx.z;
  if (x >= e.size[0] || y >= e.size[1])
  {
    return;
  }
  const T            scale[3] = { scaleX, scaleY, scaleZ };
  const std::int64_t c[3] = { x, y, z };
  const std::int64_t index = (z * e.size[1] + y) * e.size[0] + x;
  const auto         s = diffusion::LoadStencil<T, D>(current + index, diffusion::OffsetsAt<TIndex>(e.size, c));
  const T            conductance = *k;
  const T            update = K == DiffusionKind::Gradient
                                ? diffusion::GradientUpdate<D, T, T, false>(s, scale, conductance)
                                : diffusion::CurvatureUpdate<D, T, T, false>(s, scale, conductance);
  next[index] = diffusion::Apply(s.center, update, timeStep);
}

/** The flux kernel's tile: TileX x TY pixels of a plane, one thread each,
 * marching along z through a chunk of planes. Shared arrays hold the tile
 * with a ring of one pixel. */
constexpr int TileX = 32, TileY = 8, HaloX = TileX + 2;

/** v clamped to [0, n - 1]. */
__device__ __forceinline__ std::int64_t
ClampIndex(std::int64_t v, std::int64_t n)
{
  return v < 0 ? 0 : (v >= n ? n - 1 : v);
}

/** Shared index of tile coordinate (tx, ty), each in [-1, tile]. */
__device__ __forceinline__ int
H(int tx, int ty)
{
  return (ty + 1) * HaloX + tx + 1;
}

/** 2^x, 1/sqrt(x) and sqrt(x) on the special function unit (PTX's
 * .approx.ftz forms: relative errors of about 2^-22, 2^-23 and 2^-23;
 * results and arguments below 2^-126 are flushed to zero). */
__device__ __forceinline__ float
Exp2Unit(float x)
{
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ float
InverseSqrt(float x)
{
  float r;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ double
InverseSqrt(double x)
{
  return 1.0 / sqrt(x);
}
__device__ __forceinline__ float
SqrtUnit(float x)
{
  float r;
  asm("sqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ double
SqrtUnit(double x)
{
  return sqrt(x);
}

/** ITK's conductance exp(m / K) (m >= 0, K < 0: ITK's K is minus twice the
 * average times the conductance parameter squared), given mScale =
 * log2(e) / K in float: 2^(m mScale) on the exponential unit, two
 * instructions where CUDA's expf takes eleven; relative error about 2^-22
 * (the unit) plus 2^-23 |m / K| (the roundings of mScale and of the
 * product; with |x| e^-|x| <= 1/e, that part is at most about 5e-8 of exp's
 * largest value, 1). m = +inf gives 0 and NaN stays NaN, as std::exp.
 * Double: exp(m / K) with mScale = 1 / K. */
__device__ __forceinline__ float
ConductanceExp(float m, float mScale)
{
  return Exp2Unit(m * mScale);
}
__device__ __forceinline__ double
ConductanceExp(double m, double mScale)
{
  return exp(m * mScale);
}

/** c, or 0 where ITK's K is 0 (keep: all bits set, or none): one logic
 * operation, never a branch (float). */
__device__ __forceinline__ float
Keep(float c, unsigned keep)
{
  return __uint_as_float(__float_as_uint(c) & keep);
}

/** The flux through the face between pixels a and b = a + e_i (the same
 * pixel at a clamped edge): ITK's forward term of pixel a along axis i,
 * which is also its backward term of pixel b. g = (f(b) - f(a)) scale_i;
 * qa, qb: a quarter of the central differences (f(+) - f(-)) scale_j / 4
 * along the other axes (in ITK's order) at a and at b, so that ITK's
 * 0.25 (da + db)^2 is (qa + qb)^2 (the factor is a power of two: the same
 * number); the sums commute, so b's backward term is the same number.
 * m = g^2 + sum (qa + qb)^2. Gradient: g exp(m / K); curvature:
 * g / sqrt(1e-10 + m) exp(m / K). */
template <DiffusionKind K, int Others, typename T>
__device__ __forceinline__ T
Flux(T g, const T (&qa)[2], const T (&qb)[2], T mScale, unsigned keep)
{
  T m = g * g;
#pragma unroll
  for (int j = 0; j < Others; ++j)
  {
    const T s = qa[j] + qb[j];
    m = fma(s, s, m);
  }
  T c;
  if constexpr (std::is_same<T, float>::value)
  {
    c = Keep(ConductanceExp(m, mScale), keep);
  }
  else
  {
    c = keep ? ConductanceExp(m, mScale) : T(0); // double: exp's slow path stays behind the branch
  }
  if (K == DiffusionKind::Gradient)
  {
    return g * c;
  }
  return (g * InverseSqrt(static_cast<T>(1.0e-10) + m)) * c;
}

/** One iteration of a 2D or 3D image by fluxes: every face's flux is
 * computed once and used by the two pixels it joins (ITK computes it from
 * each side; both sides' operands are the same numbers). A block of
 * TileX x TileY threads holds a tile of a plane and marches along z over
 * planes [z0, z0 + chunk): per plane it stores the next plane (with a ring,
 * edges clamped as ITK's zero-flux boundary) in shared memory, then the
 * central differences the fluxes need, then the in-plane fluxes, and keeps
 * the flux to the next plane in a register for the next step.
 *
 * Each thread works on its own pixel (its differences, the faces on its
 * minus sides, the face above it), and the ring's extra work goes to
 * different warps (the y ring's d/dx to warps 0-1, the x ring's d/dy to
 * warp 2, both rings' d/dz to warps 3-5, the last x faces to warp 6, the
 * last y faces to warp 7). Every index is computed once, before the march;
 * the plane slots rotate in registers. */
// float: at most 51 registers, for 5 resident blocks; double: as many as it needs (no spills)
template <int D, DiffusionKind K, typename T>
__global__ void __launch_bounds__(TileX * TileY, sizeof(T) == 4 ? 5 : 1)
FluxUpdateKernel(const T * __restrict__ current, T * __restrict__ next, Extent3 e, int chunk,
                 const T * __restrict__ k, double timeStep, T scaleX, T scaleY, T scaleZ)
{
  constexpr int HaloY = TileY + 2, Threads = TileX * TileY, Ring = HaloX * HaloY;
  constexpr int Planes = D == 3 ? 3 : 1;
  static_assert(TileX == 32 && TileY == 8, "the ring's work is laid out for 32 x 8 tiles");
  __shared__ T sf[Planes][Ring];           // the image: planes z - 1, z, z + 1 in rotating slots
  __shared__ T sdx[Planes][Ring];          // d/dx in the planes' slots (tile and y ring)
  __shared__ T sdy[Planes][Ring];          // d/dy (tile and x ring)
  __shared__ T sdz[D == 3 ? Ring : 1];     // d/dz at plane z (tile and both rings)
  __shared__ T sphx[TileY * (TileX + 1)];  // x faces: [ty][fx], fx between tx = fx - 1 and fx
  __shared__ T sphy[(TileY + 1) * TileX];  // y faces: [fy][tx]

  const int          tid = threadIdx.x;
  const int          tx = tid % TileX, ty = tid / TileX;
  const std::int64_t nx = e.size[0], ny = e.size[1], nz = e.size[2];
  const std::int64_t x0 = static_cast<std::int64_t>(blockIdx.x) * TileX, y0 = static_cast<std::int64_t>(blockIdx.y) * TileY;
  const int          z0 = static_cast<int>(blockIdx.z) * chunk;
  const int          steps = static_cast<int>(z0 + chunk < nz ? chunk : nz - z0);
  const std::int64_t plane = nx * ny;
  // the exponential's scale (log2(e) / K for float's 2^x, 1 / K for double), and ITK's K = 0 (no
  // diffusion: every flux's conductance 0) as a mask
  const T            conductance = *k;
  const bool         zeroK = conductance == static_cast<T>(0);
  const T            mScale = zeroK ? T(0)
                                    : (std::is_same<T, float>::value ? static_cast<T>(1.4426950408889634) : T(1)) / conductance;
  const unsigned     keep = zeroK ? 0u : ~0u;
  // a quarter of the scales: the central differences are kept as (f(+) - f(-)) scale / 4 (see Flux)
  const T            qx = scaleX * static_cast<T>(0.25), qy = scaleY * static_cast<T>(0.25),
                     qz = scaleZ * static_cast<T>(0.25);

  // the plane's pixels this thread loads: tid and tid + Threads of the ring (clamped in-plane offsets)
  const std::int64_t offset0 = ClampIndex(y0 + tid / HaloX - 1, ny) * nx + ClampIndex(x0 + tid % HaloX - 1, nx);
  const bool         second = tid + Threads < Ring;
  const int          i1 = second ? tid + Threads : tid;
  const std::int64_t offset1 = ClampIndex(y0 + i1 / HaloX - 1, ny) * nx + ClampIndex(x0 + i1 % HaloX - 1, nx);
  T                  ahead0, ahead1;
  // plane z, clamped to the image (in 32 bits: the grid keeps nz within 65535 chunks)
  const T *          ring0 = current + offset0;
  const T *          ring1 = current + offset1;
  const int          lastPlane = static_cast<int>(nz) - 1;
  auto               load = [&](int z) {
    const std::int64_t o = static_cast<std::int64_t>(min(max(z, 0), lastPlane)) * plane;
    ahead0 = __ldg(ring0 + o);
    ahead1 = second ? __ldg(ring1 + o) : T(0);
  };
  auto store = [&](T * s) {
    s[tid] = ahead0;
    if (second)
    {
      s[tid + Threads] = ahead1;
    }
  };

  // this thread's pixel, and the ring's points it takes (-1: none)
  const int c = H(tx, ty);
  const int ringDx = tid < 64 ? H(tid % 32, tid < 32 ? -1 : TileY) : -1;
  const int ringDy = tid >= 64 && tid < 80 ? H((tid - 64) % 2 ? TileX : -1, (tid - 64) / 2) : -1;
  const int kz = tid - 96;
  const int ringDz = D == 3 && kz >= 0 && kz < 80 ? (kz < 64 ? H(kz % 32, kz < 32 ? -1 : TileY)
                                                             : H((kz - 64) % 2 ? TileX : -1, (kz - 64) / 2))
                                                  : -1;
  const int lastXFace = tid >= 192 && tid < 192 + TileY ? tid - 192 : -1; // row of the face at fx = TileX
  const int lastYFace = tid >= 224 ? tid - 224 : -1;                       // column of the face at fy = TileY

  auto differencesInPlane = [&](const T * f, T * dx, T * dy) {
    dx[c] = static_cast<T>(f[c + 1] - f[c - 1]) * qx;
    dy[c] = static_cast<T>(f[c + HaloX] - f[c - HaloX]) * qy;
    if (ringDx >= 0)
    {
      dx[ringDx] = static_cast<T>(f[ringDx + 1] - f[ringDx - 1]) * qx;
    }
    if (ringDy >= 0)
    {
      dy[ringDy] = static_cast<T>(f[ringDy + HaloX] - f[ringDy - HaloX]) * qy;
    }
  };
  // the flux through the x face between shared points a and a + 1, and the y face between a and a + HaloX
  // g = (f(a + e) - f(a)) scale, given when the caller keeps it
  auto fluxXOf = [&](T g, const T * dy, int a) {
    const int b = a + 1;
    const T   da[2] = { dy[a], D == 3 ? sdz[a] : T(0) }, db[2] = { dy[b], D == 3 ? sdz[b] : T(0) };
    return Flux<K, D - 1>(g, da, db, mScale, keep);
  };
  auto fluxYOf = [&](T g, const T * dx, int a) {
    const int b = a + HaloX;
    const T   da[2] = { dx[a], D == 3 ? sdz[a] : T(0) }, db[2] = { dx[b], D == 3 ? sdz[b] : T(0) };
    return Flux<K, D - 1>(g, da, db, mScale, keep);
  };
  auto fluxX = [&](const T * f, const T * dy, int a) {
    return fluxXOf(static_cast<T>(f[a + 1] - f[a]) * scaleX, dy, a);
  };
  auto fluxY = [&](const T * f, const T * dx, int a) {
    return fluxYOf(static_cast<T>(f[a + HaloX] - f[a]) * scaleY, dx, a);
  };

  const std::int64_t gx = x0 + tx, gy = y0 + ty;
  const bool         inside = gx < nx && gy < ny;
  T *                out = next + z0 * plane + gy * nx + gx;
  T                  fluxBelow = 0; // the flux between planes z - 1 and z at this pixel
  T                  backZ = 0;     // its difference (f(z) - f(z - 1)) scale_z, ITK's backward difference
  // planes z - 1, z, z + 1 are in slots (step + 0, 1, 2) mod 3 (one slot for 2D images)
  constexpr int S0 = 0, S1 = D == 3 ? 1 : 0, S2 = D == 3 ? 2 : 0;
  if constexpr (D == 3)
  {
    load(z0 - 1);
    store(sf[S0]);
    load(z0);
    store(sf[S1]);
    load(z0 + 1);
  }
  else
  {
    load(z0);
    store(sf[0]);
  }
  __syncthreads();
  differencesInPlane(sf[S1], sdx[S1], sdy[S1]);

  // one plane, with its slots known at compile time (the march is unrolled by three)
  auto planeStep = [&](int step, auto down, auto here, auto up) {
    [[maybe_unused]] constexpr int Down = decltype(down)::value, Here = decltype(here)::value, Up = decltype(up)::value;
    if constexpr (D == 3)
    {
      store(sf[Up]);
      if (step + 1 < steps)
      {
        load(z0 + step + 2);
      }
      __syncthreads();
      // d/dz at plane z (tile and both rings), the next plane's in-plane differences
      sdz[c] = static_cast<T>(sf[Up][c] - sf[Down][c]) * qz;
      if (ringDz >= 0)
      {
        sdz[ringDz] = static_cast<T>(sf[Up][ringDz] - sf[Down][ringDz]) * qz;
      }
      differencesInPlane(sf[Up], sdx[Up], sdy[Up]);
    }
    __syncthreads();
    const T * f = sf[Here];
    const T * dx = sdx[Here];
    const T * dy = sdy[Here];

    // the faces on this pixel's minus sides, and the ring's last ones
    // (their differences are the pixel's backward differences, which the curvature's upwind term reuses)
    const T backX = static_cast<T>(f[c] - f[c - 1]) * scaleX;
    const T backY = static_cast<T>(f[c] - f[c - HaloX]) * scaleY;
    sphx[ty * (TileX + 1) + tx] = fluxXOf(backX, dy, c - 1);
    sphy[ty * TileX + tx] = fluxYOf(backY, dx, c - HaloX);
    if (lastXFace >= 0)
    {
      sphx[lastXFace * (TileX + 1) + TileX] = fluxX(f, dy, H(TileX - 1, lastXFace));
    }
    if (lastYFace >= 0)
    {
      sphy[TileY * TileX + lastYFace] = fluxY(f, dx, H(lastYFace, TileY - 1));
    }
    T fluxAbove = 0;
    T forwardZ = 0; // (f(z + 1) - f(z)) scale_z
    if constexpr (D == 3)
    {
      forwardZ = static_cast<T>(sf[Up][c] - f[c]) * scaleZ;
      const T da[2] = { dx[c], dy[c] }, db[2] = { sdx[Up][c], sdy[Up][c] };
      fluxAbove = Flux<K, 2>(forwardZ, da, db, mScale, keep);
      if (step == 0)
      {
        // the flux from the plane below the chunk (ITK's backward term along z)
        const T * fb = sf[Down];
        backZ = static_cast<T>(f[c] - fb[c]) * scaleZ;
        const T dab[2] = { static_cast<T>(fb[c + 1] - fb[c - 1]) * qx, static_cast<T>(fb[c + HaloX] - fb[c - HaloX]) * qy };
        const T dbb[2] = { dx[c], dy[c] };
        fluxBelow = Flux<K, 2>(backZ, dab, dbb, mScale, keep);
      }
    }
    __syncthreads();

    if (inside)
    {
      const T fluxes[3][2] = { { sphx[ty * (TileX + 1) + tx], sphx[ty * (TileX + 1) + tx + 1] },
                               { sphy[ty * TileX + tx], sphy[(ty + 1) * TileX + tx] },
                               { fluxBelow, fluxAbove } };
      T       delta = 0;
#pragma unroll
      for (int i = 0; i < D; ++i)
      {
        delta += fluxes[i][1] - fluxes[i][0];
      }
      T update = delta;
      if (K == DiffusionKind::Curvature)
      {
        // ITK's "upwind" gradient magnitude from the pixel's forward and backward differences (the
        // backward ones and the forward one along z are the fluxes' differences): with the speed's sign
        // s (+1 where delta > 0, else -1), min(s b, 0)^2 + max(s f, 0)^2 per axis is ITK's
        // min(b, 0)^2 + max(f, 0)^2 (delta > 0) or max(b, 0)^2 + min(f, 0)^2 (otherwise)
        const T sign = delta > 0 ? T(1) : T(-1);
        T       propagation = 0;
        auto    upwind = [&](T forward, T backward) {
          const T lower = fmin(backward * sign, T(0)), upper = fmax(forward * sign, T(0));
          propagation = fma(lower, lower, propagation);
          propagation = fma(upper, upper, propagation);
        };
        upwind(static_cast<T>(f[c + 1] - f[c]) * scaleX, backX);
        upwind(static_cast<T>(f[c + HaloX] - f[c]) * scaleY, backY);
        if constexpr (D == 3)
        {
          upwind(forwardZ, backZ);
        }
        update = SqrtUnit(propagation) * delta;
      }
      *out = diffusion::Apply(f[c], update, timeStep);
    }
    out += plane;
    fluxBelow = fluxAbove;
    backZ = forwardZ;
  };
  using I0 = std::integral_constant<int, S0>;
  using I1 = std::integral_constant<int, S1>;
  using I2 = std::integral_constant<int, S2>;
  for (int step = 0; step < steps; step += 3)
  {
    planeStep(step, I0{}, I1{}, I2{});
    if (step + 1 < steps)
    {
      planeStep(step + 1, I1{}, I2{}, I0{});
    }
    if (step + 2 < steps)
    {
      planeStep(step + 2, I2{}, I0{}, I1{});
    }
  }
}

/** Planes per block of the average's 3D grid: the multiple of 4 (up to 64)
 * whose blocks fill the device's block slots in the fewest, fullest waves,
 * counting a block's own cost (the two planes it loads below its first, its
 * sum and its ticket) as two planes more. The slots (multiprocessors times
 * the kernel's resident blocks) are looked up once per kernel and device. */
std::int64_t
PlanesPerBlock(const void * kernel, std::int64_t blocksPerPlane, std::int64_t nz)
{
  int device = 0;
  CIF_CUDA_CHECK(cudaGetDevice(&device));
  static std::mutex                                  guard;
  static std::map<std::pair<const void *, int>, int> slotsOf;
  int                                                slots = 0;
  {
    const std::lock_guard<std::mutex> lock(guard);
    const auto                        found = slotsOf.find({ kernel, device });
    if (found != slotsOf.end())
    {
      slots = found->second;
    }
  }
  if (slots == 0)
  {
    int sms = 0, perSm = 0;
    CIF_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CIF_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, BlockX * BlockY, 0));
    slots = std::max(1, sms * perSm);
    const std::lock_guard<std::mutex> lock(guard);
    slotsOf[{ kernel, device }] = slots;
  }
  std::int64_t best = 4;
  double       bestEfficiency = -1.0;
  for (std::int64_t planes = 4; planes <= 64; planes += 4)
  {
    const std::int64_t blocks = blocksPerPlane * ((nz + planes - 1) / planes);
    const double       waves = std::ceil(static_cast<double>(blocks) / slots);
    const double       efficiency = static_cast<double>(nz) * blocksPerPlane / (waves * slots * (planes + 2));
    if (efficiency > bestEfficiency + 1e-9)
    {
      best = planes;
      bestEfficiency = efficiency;
    }
    if (planes >= nz)
    {
      break;
    }
  }
  return best;
}

/** The iterations: the first reads `source`, iteration i (from 0) writes
 * buffer[i % 2] and the next reads it. */
template <int D, DiffusionKind K, typename T>
void
Iterate(const T * source, T * const buffer[2], const std::int64_t size[3], const AnisotropicDiffusionParameters & p)
{
  const std::int64_t n = size[0] * size[1] * size[2];
  const Launch       launch = LaunchOf(size);
  const Extent3      e{ { size[0], size[1], size[2] } };
  // the update's blocks (D > 1): tiles of a plane, marching through chunks of about 16 planes
  const int          chunks = D == 3 ? static_cast<int>(std::max<std::int64_t>(1, (size[2] + 15) / 16)) : 0;
  const int          chunk = D == 3 ? static_cast<int>((size[2] + chunks - 1) / chunks) : 1;
  const dim3         tileGrid(static_cast<unsigned>((size[0] + TileX - 1) / TileX),
                              static_cast<unsigned>((size[1] + TileY - 1) / TileY),
                              static_cast<unsigned>((size[2] + chunk - 1) / chunk));
  // the average's pixels per thread: 4 (float) or 2 where the rows' length is a multiple and every
  // row starts aligned for one load of them, else 1
  const auto         aligned = [&](std::size_t bytes) {
    return reinterpret_cast<std::uintptr_t>(source) % bytes == 0 && reinterpret_cast<std::uintptr_t>(buffer[0]) % bytes == 0 &&
           reinterpret_cast<std::uintptr_t>(buffer[1]) % bytes == 0;
  };
  const int          lanes = D == 1 ? 1
                             : std::is_same<T, float>::value && size[0] % 4 == 0 && aligned(4 * sizeof(T)) ? 4
                             : size[0] % 2 == 0 && aligned(2 * sizeof(T))                                  ? 2
                                                                                                             : 1;
  // f(std::integral_constant<int, lanes>{}): one place that turns the lane count into a kernel
  const auto         withLanes = [&](auto && f) {
    if constexpr (std::is_same<T, float>::value)
    {
      if (lanes == 4)
      {
        return f(std::integral_constant<int, 4>{});
      }
    }
    return lanes == 2 ? f(std::integral_constant<int, 2>{}) : f(std::integral_constant<int, 1>{});
  };
  // the average's blocks: a column of planesPerBlock planes each (3D: whole groups of 4), as many as
  // fill the device's block slots in whole waves with the fewest planes loaded twice
  dim3               averageGrid(static_cast<unsigned>((size[0] / lanes + BlockX - 1) / BlockX), launch.grid.y, 1);
  const std::int64_t blocksPerPlane = static_cast<std::int64_t>(averageGrid.x) * averageGrid.y;
  const std::int64_t planesPerBlock =
    D == 3 ? PlanesPerBlock(withLanes([](auto l) { return reinterpret_cast<const void *>(ConductanceKernel<D, T, decltype(l)::value>); }),
                            blocksPerPlane, size[2])
           : 1;
  averageGrid.z = static_cast<unsigned>((size[2] + planesPerBlock - 1) / planesPerBlock);
  const std::int64_t blocks = blocksPerPlane * averageGrid.z;
  // one pooled block for the small temporaries: the partial sums, then K (8 bytes), then the ticket
  PooledBuffer       small(static_cast<std::size_t>(blocks + 2) * sizeof(double), Stream());
  auto *             partialSums = static_cast<double *>(small.GetPointer());
  auto *             k = reinterpret_cast<T *>(partialSums + blocks);
  auto *             done = reinterpret_cast<unsigned *>(partialSums + blocks + 1);
  CIF_CUDA_CHECK(cudaMemsetAsync(done, 0, sizeof(unsigned), Stream()));
  if (p.fixedAverage)
  {
    const T fixed = diffusion::Conductance<T>(p.fixedAverageGradientMagnitude * p.fixedAverageGradientMagnitude,
                                              p.conductance);
    CIF_CUDA_CHECK(cudaMemcpyAsync(k, &fixed, sizeof(T), cudaMemcpyHostToDevice, Stream()));
  }
  const T * current = source;
  for (int it = 0; it < p.iterations; ++it)
  {
    T * next = buffer[it % 2];
    if (!p.fixedAverage && it % p.interval == 0)
    {
      const T hx = static_cast<T>(-0.5 * p.scale[0]), hy = static_cast<T>(-0.5 * p.scale[1]),
              hz = static_cast<T>(-0.5 * p.scale[2]);
      withLanes([&](auto l) {
        ConductanceKernel<D, T, decltype(l)::value><<<averageGrid, launch.block, 0, Stream()>>>(
          current, e, planesPerBlock, hx, hy, hz, p.conductance, partialSums, done, k);
      });
      CIF_CUDA_CHECK_LAUNCH("AnisotropicDiffusion ConductanceKernel");
    }
    if constexpr (D == 1)
    {
      if (n < (std::int64_t{ 1 } << 31))
      {
        UpdateKernel<1, K, T, int><<<launch.grid, launch.block, 0, Stream()>>>(
          current, next, e, k, p.timeStep, static_cast<T>(p.scale[0]), static_cast<T>(p.scale[1]), static_cast<T>(p.scale[2]));
      }
      else
      {
        UpdateKernel<1, K, T, std::int64_t><<<launch.grid, launch.block, 0, Stream()>>>(
          current, next, e, k, p.timeStep, static_cast<T>(p.scale[0]), static_cast<T>(p.scale[1]), static_cast<T>(p.scale[2]));
      }
    }
    else
    {
      FluxUpdateKernel<D, K, T><<<tileGrid, TileX * TileY, 0, Stream()>>>(
        current, next, e, chunk, k, p.timeStep, static_cast<T>(p.scale[0]),
        static_cast<T>(p.scale[1]), static_cast<T>(p.scale[2]));
    }
    CIF_CUDA_CHECK_LAUNCH("AnisotropicDiffusion UpdateKernel");
    current = next;
  }
  // the temporaries go back to the pool in stream order (no synchronisation here)
}

template <typename T>
void
Dispatch(const T * source, T * const buffer[2], const std::int64_t size[3], const AnisotropicDiffusionParameters & p)
{
  const bool gradient = p.kind == DiffusionKind::Gradient;
  switch (p.dimension)
  {
    case 1:
      gradient ? Iterate<1, DiffusionKind::Gradient>(source, buffer, size, p)
               : Iterate<1, DiffusionKind::Curvature>(source, buffer, size, p);
      break;
    case 2:
      gradient ? Iterate<2, DiffusionKind::Gradient>(source, buffer, size, p)
               : Iterate<2, DiffusionKind::Curvature>(source, buffer, size, p);
      break;
    default:
      gradient ? Iterate<3, DiffusionKind::Gradient>(source, buffer, size, p)
               : Iterate<3, DiffusionKind::Curvature>(source, buffer, size, p);
      break;
  }
}
} // namespace

template <typename TIn, typename TOut>
std::string
AnisotropicDiffusionCUDA(const TIn *                            input,
                         TOut *                                 output,
                         const ClampedNeighborhoodGeometry &    g,
                         const AnisotropicDiffusionParameters & p)
{
  const std::string why = ValidateAnisotropicDiffusionJob(g, p);
  if (!why.empty())
  {
    throw std::invalid_argument("AnisotropicDiffusionCUDA: " + why);
  }
  const bool         whole = g.OutputIsWholeInput();
  const std::int64_t n = g.InputCount();
  // the work image from the device's pool: no cudaMalloc or cudaFree per call after the first
  PooledBuffer       work(static_cast<std::size_t>(whole ? n : 2 * n) * sizeof(TOut), Stream());
  auto *             w = static_cast<TOut *>(work.GetPointer());
  // the last iteration writes the output (whole) or the work image's first half
  const int          last = p.iterations > 0 ? (p.iterations - 1) % 2 : 0;
  TOut *             buffer[2];
  buffer[last] = whole ? output : w;
  buffer[1 - last] = whole ? w : w + n;
  // the first iteration reads the input itself when it has the output's type
  // (and is not the output); otherwise the input is cast into the buffer the
  // first iteration does not write (no iterations: into the result's)
  const TOut * source = nullptr;
  if (std::is_same<TIn, TOut>::value && p.iterations > 0 &&
      static_cast<const void *>(input) != static_cast<const void *>(output))
  {
    source = reinterpret_cast<const TOut *>(input);
  }
  else
  {
    TOut * cast = p.iterations > 0 ? buffer[1] : buffer[last];
    CastKernel<<<static_cast<unsigned>(std::min<std::int64_t>((n + 255) / 256, 65535 * 8)), 256, 0, Stream()>>>(input, cast, n);
    CIF_CUDA_CHECK_LAUNCH("AnisotropicDiffusion CastKernel");
    source = cast;
  }
  Dispatch(source, buffer, g.inputSize, p);
  TOut * result = buffer[last];
  if (!whole)
  {
    const std::size_t e = sizeof(TOut);
    cudaMemcpy3DParms copy{};
    copy.srcPtr = make_cudaPitchedPtr(result, static_cast<std::size_t>(g.inputSize[0]) * e,
                                      static_cast<std::size_t>(g.inputSize[0]), static_cast<std::size_t>(g.inputSize[1]));
    copy.srcPos = make_cudaPos(static_cast<std::size_t>(g.outputStart[0]) * e, static_cast<std::size_t>(g.outputStart[1]),
                               static_cast<std::size_t>(g.outputStart[2]));
    copy.dstPtr = make_cudaPitchedPtr(output, static_cast<std::size_t>(g.outputSize[0]) * e,
                                      static_cast<std::size_t>(g.outputSize[0]), static_cast<std::size_t>(g.outputSize[1]));
    copy.extent = make_cudaExtent(static_cast<std::size_t>(g.outputSize[0]) * e, static_cast<std::size_t>(g.outputSize[1]),
                                  static_cast<std::size_t>(g.outputSize[2]));
    copy.kind = cudaMemcpyDeviceToDevice;
    CIF_CUDA_CHECK(cudaMemcpy3DAsync(&copy, Stream()));
  }
  CIF_CUDA_SYNCHRONIZE_STREAM();
  return std::string(p.kind == DiffusionKind::Gradient ? "gradient" : "curvature") + " diffusion, " +
         std::to_string(p.iterations) + " iterations on the device (" +
         (std::is_same<TOut, float>::value ? "float" : "double") + " arithmetic, average gradient in double)";
}

bool
AnisotropicDiffusionCUDAIsCompiled()
{
  return true;
}

#define CIF_INSTANTIATE_DIFFUSION_CUDA(TIn, TOut)                                                                      \
  template std::string AnisotropicDiffusionCUDA<TIn, TOut>(                                                           \
    const TIn *, TOut *, const ClampedNeighborhoodGeometry &, const AnisotropicDiffusionParameters &);
#define CIF_DIFFUSION_TO_FLOAT(T) CIF_INSTANTIATE_DIFFUSION_CUDA(T, float)
CIF_INSTANTIATE_DIFFUSION_CUDA(float, float)
CIF_INSTANTIATE_DIFFUSION_CUDA(double, double)
CIF_FLOAT_OUTPUT_PIXELS(CIF_DIFFUSION_TO_FLOAT)

} // namespace cif
