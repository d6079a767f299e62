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
#include <cstdint>
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

/** Two pixels of T in one load. */
template <typename T>
struct Pair;
template <>
struct Pair<float>
{
  using Type = float2;
};
template <>
struct Pair<double>
{
  using Type = double2;
};

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
 * cache, edges clamped as in ITK. Pairs: a thread takes two pixels along x
 * with one load per row (rows of an even number of pixels, aligned). */
template <int D, typename T, bool Pairs>
__global__ void
ConductanceKernel(const T * __restrict__ image, Extent3 e, std::int64_t planesPerBlock, T hx, T hy, T hz,
                  double conductance, double * __restrict__ partial, unsigned * __restrict__ done, T * __restrict__ k)
{
  __shared__ typename PartialReduce::TempStorage storage;
  __shared__ bool                                last;
  const std::int64_t nx = e.size[0], ny = e.size[1], nz = e.size[2];
  const std::int64_t x = (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) * (Pairs ? 2 : 1);
  const std::int64_t y = blockIdx.y * static_cast<std::int64_t>(blockDim.y) + threadIdx.y;
  const std::int64_t z0 = blockIdx.z * planesPerBlock;
  const int          steps = static_cast<int>(z0 + planesPerBlock < nz ? planesPerBlock : nz - z0);
  const T            h[3] = { hx, hy, hz };
  double             term = 0.0;
  if (x < nx && y < ny)
  {
    const std::int64_t plane = nx * ny;
    const T *          p = image + z0 * plane + y * nx + x;
    const bool         hasUp = y + 1 < ny, hasDown = y > 0;
    if constexpr (Pairs)
    {
      // pixels x and x + 1: the row's pair, the pairs above and below in y and z, x - 1 and x + 2
      using V = typename Pair<T>::Type;
      const bool hasLeft = x > 0, hasRight = x + 2 < nx;
      V          below = D == 3 ? __ldg(reinterpret_cast<const V *>(z0 > 0 ? p - plane : p)) : V{};
      V          centre = __ldg(reinterpret_cast<const V *>(p));
      for (int step = 0; step < steps; ++step, p += plane)
      {
        if constexpr (D < 3)
        {
          centre = __ldg(reinterpret_cast<const V *>(p)); // planes of a 2D stack are independent
        }
        const V   up = hasUp ? __ldg(reinterpret_cast<const V *>(p + nx)) : centre;
        const V   down = hasDown ? __ldg(reinterpret_cast<const V *>(p - nx)) : centre;
        const T   left = hasLeft ? __ldg(p - 1) : centre.x;
        const T   right = hasRight ? __ldg(p + 2) : centre.y;
        V         above{};
        if constexpr (D == 3)
        {
          above = z0 + step + 1 < nz ? __ldg(reinterpret_cast<const V *>(p + plane)) : centre;
        }
        term += GradientTerm<D>(static_cast<T>(centre.y - left), static_cast<T>(up.x - down.x),
                                static_cast<T>(above.x - below.x), h);
        term += GradientTerm<D>(static_cast<T>(right - centre.x), static_cast<T>(up.y - down.y),
                                static_cast<T>(above.y - below.y), h);
        if constexpr (D == 3)
        {
          below = centre;
          centre = above;
        }
      }
    }
    else
    {
      const int xm = x > 0 ? -1 : 0, xp = x + 1 < nx ? 1 : 0;
      const int ym = hasDown ? -static_cast<int>(nx) : 0, yp = hasUp ? static_cast<int>(nx) : 0;
      T         below = D == 3 ? __ldg(z0 > 0 ? p - plane : p) : T(0);
      T         centre = D == 3 ? __ldg(p) : T(0);
      for (int step = 0; step < steps; ++step, p += plane)
      {
        T above = 0;
        if constexpr (D == 3)
        {
          above = __ldg(z0 + step + 1 < nz ? p + plane : p);
        }
        term += GradientTerm<D>(static_cast<T>(__ldg(p + xp) - __ldg(p + xm)),
                                static_cast<T>(__ldg(p + yp) - __ldg(p + ym)), static_cast<T>(above - below), h);
        below = centre;
        centre = above;
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
    double total = 0.0;
    for (std::int64_t i = tid; i < blocks; i += BlockX * BlockY)
    {
      total += __ldcg(partial + i); // from L2, not a stale L1 line
    }
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

/** exp on the GPU's exponential unit (ex2 of x log2 e): relative error
 * within about 2^-21 plus 2^-24 |x| (the product's rounding), where ITK's
 * std::exp is correctly rounded; double stays exact. */
template <bool Fast>
__device__ __forceinline__ float
Exp(float x)
{
  return Fast ? __expf(x) : expf(x);
}
template <bool Fast>
__device__ __forceinline__ double
Exp(double x)
{
  return exp(x);
}

/** 1 / sqrt(x): the hardware's reciprocal square root in float (relative
 * error about 2^-23, where ITK divides by a correctly rounded sqrt), exact
 * arithmetic in double. */
__device__ __forceinline__ float
InverseSqrt(float x)
{
  return rsqrtf(x);
}
__device__ __forceinline__ double
InverseSqrt(double x)
{
  return 1.0 / sqrt(x);
}

/** The flux through the face between pixels a and b = a + e_i (the same
 * pixel at a clamped edge): ITK's forward term of pixel a along axis i,
 * which is also its backward term of pixel b. g = (f(b) - f(a)) scale_i;
 * da, db: the central differences along the other axes (in ITK's order) at
 * a and at b; the sums da + db commute, so b's backward term is the same
 * number. Gradient: g exp((g^2 + sum 0.25 (da + db)^2) / K); curvature:
 * g / sqrt(1e-10 + m) exp(m / K), m = g^2 + 0.25 (da + db)^2 + ... (times rsqrt
 * in float) */
template <DiffusionKind K, int Others, bool Fast, typename T>
__device__ __forceinline__ T
Flux(T g, const T (&da)[2], const T (&db)[2], T inverseK, bool zeroK)
{
  using std::sqrt;
  if (K == DiffusionKind::Gradient)
  {
    T accum = 0;
#pragma unroll
    for (int j = 0; j < Others; ++j)
    {
      accum += static_cast<T>(0.25f) * diffusion::Sqr(da[j] + db[j]);
    }
    const T c = zeroK ? T(0) : Exp<Fast>((diffusion::Sqr(g) + accum) * inverseK);
    return g * c;
  }
  else
  {
    T m = g * g;
#pragma unroll
    for (int j = 0; j < Others; ++j)
    {
      m += static_cast<T>(0.25f) * (da[j] + db[j]) * (da[j] + db[j]);
    }
    const T c = zeroK ? T(0) : Exp<Fast>(m * inverseK);
    return (g * InverseSqrt(static_cast<T>(1.0e-10) + m)) * c;
  }
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
template <int D, DiffusionKind K, typename T, bool Fast>
__global__ void __launch_bounds__(TileX * TileY)
FluxUpdateKernel(const T * __restrict__ current, T * __restrict__ next, Extent3 e, int chunk,
                 const T * __restrict__ k, T timeStep, T scaleX, T scaleY, T scaleZ)
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
  const std::int64_t z0 = static_cast<std::int64_t>(blockIdx.z) * chunk;
  const int          steps = static_cast<int>(z0 + chunk < nz ? chunk : nz - z0);
  const std::int64_t plane = nx * ny;
  const T            conductance = *k;
  const bool         zeroK = conductance == static_cast<T>(0);
  const T            inverseK = zeroK ? T(0) : T(1) / conductance;

  // the plane's pixels this thread loads: tid and tid + Threads of the ring (clamped in-plane offsets)
  const std::int64_t offset0 = ClampIndex(y0 + tid / HaloX - 1, ny) * nx + ClampIndex(x0 + tid % HaloX - 1, nx);
  const bool         second = tid + Threads < Ring;
  const int          i1 = second ? tid + Threads : tid;
  const std::int64_t offset1 = ClampIndex(y0 + i1 / HaloX - 1, ny) * nx + ClampIndex(x0 + i1 % HaloX - 1, nx);
  T                  ahead0, ahead1;
  auto               load = [&](std::int64_t z) {
    const T * p = current + ClampIndex(z, nz) * plane;
    ahead0 = __ldg(p + offset0);
    ahead1 = second ? __ldg(p + offset1) : T(0);
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
    dx[c] = diffusion::Half(f[c + 1], f[c - 1]) * scaleX;
    dy[c] = diffusion::Half(f[c + HaloX], f[c - HaloX]) * scaleY;
    if (ringDx >= 0)
    {
      dx[ringDx] = diffusion::Half(f[ringDx + 1], f[ringDx - 1]) * scaleX;
    }
    if (ringDy >= 0)
    {
      dy[ringDy] = diffusion::Half(f[ringDy + HaloX], f[ringDy - HaloX]) * scaleY;
    }
  };
  // the flux through the x face between shared points a and a + 1, and the y face between a and a + HaloX
  auto fluxX = [&](const T * f, const T * dy, int a) {
    const int b = a + 1;
    const T   g = static_cast<T>(f[b] - f[a]) * scaleX;
    const T   da[2] = { dy[a], D == 3 ? sdz[a] : T(0) }, db[2] = { dy[b], D == 3 ? sdz[b] : T(0) };
    return Flux<K, D - 1, Fast>(g, da, db, inverseK, zeroK);
  };
  auto fluxY = [&](const T * f, const T * dx, int a) {
    const int b = a + HaloX;
    const T   g = static_cast<T>(f[b] - f[a]) * scaleY;
    const T   da[2] = { dx[a], D == 3 ? sdz[a] : T(0) }, db[2] = { dx[b], D == 3 ? sdz[b] : T(0) };
    return Flux<K, D - 1, Fast>(g, da, db, inverseK, zeroK);
  };

  const std::int64_t gx = x0 + tx, gy = y0 + ty;
  const bool         inside = gx < nx && gy < ny;
  T *                out = next + z0 * plane + gy * nx + gx;
  T                  fluxBelow = 0; // the flux between planes z - 1 and z at this pixel
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
      sdz[c] = diffusion::Half(sf[Up][c], sf[Down][c]) * scaleZ;
      if (ringDz >= 0)
      {
        sdz[ringDz] = diffusion::Half(sf[Up][ringDz], sf[Down][ringDz]) * scaleZ;
      }
      differencesInPlane(sf[Up], sdx[Up], sdy[Up]);
    }
    __syncthreads();
    const T * f = sf[Here];
    const T * dx = sdx[Here];
    const T * dy = sdy[Here];

    // the faces on this pixel's minus sides, and the ring's last ones
    sphx[ty * (TileX + 1) + tx] = fluxX(f, dy, c - 1);
    sphy[ty * TileX + tx] = fluxY(f, dx, c - HaloX);
    if (lastXFace >= 0)
    {
      sphx[lastXFace * (TileX + 1) + TileX] = fluxX(f, dy, H(TileX - 1, lastXFace));
    }
    if (lastYFace >= 0)
    {
      sphy[TileY * TileX + lastYFace] = fluxY(f, dx, H(lastYFace, TileY - 1));
    }
    T fluxAbove = 0;
    T above = 0, below = 0; // this pixel in planes z + 1 and z - 1 (read before their slots are reused)
    if constexpr (D == 3)
    {
      above = sf[Up][c];
      below = sf[Down][c];
      const T g = static_cast<T>(above - f[c]) * scaleZ;
      const T da[2] = { dx[c], dy[c] }, db[2] = { sdx[Up][c], sdy[Up][c] };
      fluxAbove = Flux<K, 2, Fast>(g, da, db, inverseK, zeroK);
      if (step == 0)
      {
        // the flux from the plane below the chunk (ITK's backward term along z)
        const T * fb = sf[Down];
        const T   gb = static_cast<T>(f[c] - below) * scaleZ;
        const T   dab[2] = { diffusion::Half(fb[c + 1], fb[c - 1]) * scaleX,
                             diffusion::Half(fb[c + HaloX], fb[c - HaloX]) * scaleY };
        const T   dbb[2] = { dx[c], dy[c] };
        fluxBelow = Flux<K, 2, Fast>(gb, dab, dbb, inverseK, zeroK);
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
        // ITK's "upwind" gradient magnitude from the pixel's forward and backward differences
        const T forward[3] = { static_cast<T>(f[c + 1] - f[c]) * scaleX, static_cast<T>(f[c + HaloX] - f[c]) * scaleY,
                               static_cast<T>(above - f[c]) * scaleZ };
        const T backward[3] = { static_cast<T>(f[c] - f[c - 1]) * scaleX, static_cast<T>(f[c] - f[c - HaloX]) * scaleY,
                                static_cast<T>(f[c] - below) * scaleZ };
        T       propagation = 0;
#pragma unroll
        for (int i = 0; i < D; ++i)
        {
          const T b = backward[i], fw = forward[i];
          if (delta > 0)
          {
            propagation += diffusion::Sqr(b < 0 ? b : T(0)) + diffusion::Sqr(fw > 0 ? fw : T(0));
          }
          else
          {
            propagation += diffusion::Sqr(b > 0 ? b : T(0)) + diffusion::Sqr(fw < 0 ? fw : T(0));
          }
        }
        update = sqrt(propagation) * delta;
      }
      // ITK: f + T(u dt) with u dt in double; here in T (one rounding of the product either way)
      *out = static_cast<T>(f[c] + update * timeStep);
    }
    out += plane;
    fluxBelow = fluxAbove;
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

/** The iterations: the first reads `source`, iteration i (from 0) writes
 * buffer[i % 2] and the next reads it. */
template <int D, DiffusionKind K, typename T>
void
Iterate(const T * source, T * const buffer[2], const std::int64_t size[3], const AnisotropicDiffusionParameters & p)
{
  const std::int64_t n = size[0] * size[1] * size[2];
  const Launch       launch = LaunchOf(size);
  const Extent3      e{ { size[0], size[1], size[2] } };
  // the average's blocks: columns of several planes each, so that the second stage adds at most
  // about 2048 sums (and a thread's few fixed instructions spread over many pixels)
  const std::int64_t blocksPerPlane = static_cast<std::int64_t>(launch.grid.x) * launch.grid.y;
  const std::int64_t planesPerBlock = std::max<std::int64_t>(1, (size[2] * blocksPerPlane + 2047) / 2048);
  const dim3         sumGrid(launch.grid.x, launch.grid.y, static_cast<unsigned>((size[2] + planesPerBlock - 1) / planesPerBlock));
  const std::int64_t blocks = blocksPerPlane * sumGrid.z;
  // the update's blocks (D > 1): tiles of a plane, marching through chunks of about 16 planes
  const int          chunks = D == 3 ? static_cast<int>(std::max<std::int64_t>(1, (size[2] + 15) / 16)) : 0;
  const int          chunk = D == 3 ? static_cast<int>((size[2] + chunks - 1) / chunks) : 1;
  const dim3         tileGrid(static_cast<unsigned>((size[0] + TileX - 1) / TileX),
                              static_cast<unsigned>((size[1] + TileY - 1) / TileY),
                              static_cast<unsigned>((size[2] + chunk - 1) / chunk));
  // pairs of pixels per thread where rows have an even length and every row starts aligned for them
  const bool         pairs = D > 1 && size[0] % 2 == 0 &&
                     reinterpret_cast<std::uintptr_t>(source) % sizeof(typename Pair<T>::Type) == 0 &&
                     reinterpret_cast<std::uintptr_t>(buffer[0]) % sizeof(typename Pair<T>::Type) == 0 &&
                     reinterpret_cast<std::uintptr_t>(buffer[1]) % sizeof(typename Pair<T>::Type) == 0;
  const dim3         pairGrid(static_cast<unsigned>((size[0] / 2 + BlockX - 1) / BlockX), sumGrid.y, sumGrid.z);
  PooledBuffer       conductance(sizeof(T), Stream());
  PooledBuffer       partial(static_cast<std::size_t>(blocks) * sizeof(double), Stream());
  PooledBuffer       ticket(sizeof(unsigned), Stream());
  CIF_CUDA_CHECK(cudaMemsetAsync(ticket.GetPointer(), 0, sizeof(unsigned), Stream()));
  auto *             k = static_cast<T *>(conductance.GetPointer());
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
      auto * partialSums = static_cast<double *>(partial.GetPointer());
      auto * done = static_cast<unsigned *>(ticket.GetPointer());
      if (pairs)
      {
        ConductanceKernel<D, T, true><<<pairGrid, launch.block, 0, Stream()>>>(
          current, e, planesPerBlock, hx, hy, hz, p.conductance, partialSums, done, k);
      }
      else
      {
        ConductanceKernel<D, T, false><<<sumGrid, launch.block, 0, Stream()>>>(
          current, e, planesPerBlock, hx, hy, hz, p.conductance, partialSums, done, k);
      }
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
      // the gradient filter takes the hardware exponential; the curvature filter's upwind switch
      // (the sign of the speed) turns its errors into larger ones, so it keeps expf
      FluxUpdateKernel<D, K, T, K == DiffusionKind::Gradient><<<tileGrid, TileX * TileY, 0, Stream()>>>(
        current, next, e, chunk, k, static_cast<T>(p.timeStep), static_cast<T>(p.scale[0]),
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
