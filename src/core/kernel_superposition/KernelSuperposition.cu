/*=========================================================================
 *  CudaImageFilters: CUDA kernels and launcher of the spatially varying
 *  Gaussian kernel superposition (seed paper 004).
 *
 *  1. Prepare: one thread per input pixel checks its sigmas, computes its
 *     radius r_a = ceil(cutoff s_a) (in double, as the CPU), its inverse
 *     widths k_a = 1 / (sqrt(2) s_a) and its intensity times the cut-off
 *     normalisations; the largest radius and the first bad sigma go to a
 *     small record that the host reads (one synchronisation).
 *  2. One of
 *     - Scatter (tile plane kernel): a block of 32 x 8 threads owns a tile of
 *       32 x (8 PY) x TZ input pixels (2D: 32 x 16 x 1; 3D: 32 x 8 x 4). The
 *       tile's radius is the largest among its non-zero pixels; a tile of
 *       zeros returns at once. For every output plane the tile reaches, the
 *       block accumulates the plane of the tile plus its halo,
 *       (32 + 2 Rx)(8 PY + 2 Ry) floats, in shared memory, then adds it to
 *       the output with global atomics. Each thread keeps its pixel's x
 *       weights in registers (an array of RC + 1 floats, RC the radius class
 *       2, 4, 8, 16 or 32 above the image's largest x radius, so the x loop
 *       unrolls), evaluates the y weight of each row offset once (2 erf)
 *       and adds v w_z w_y w_x to the plane, with shared-memory atomics
 *       (Scatter) or the seed's warp-synchronous writes
 *       (ScatterWarpSynchronous: __syncthreads per row offset, __syncwarp
 *       per column offset). 3D needs one plane of shared memory, not a
 *       box, so its radius is bounded like 2D's (Rx <= 32 and the plane in
 *       the device's shared memory), not the seed's r of about 6.
 *     - ScatterGlobalAtomics: one thread per input pixel adds its
 *       contributions straight to the output (any radius).
 *     - Gather: one thread per output pixel sums over the box of the
 *       largest radius, evaluating each neighbour's own kernel (2 erf per
 *       axis) from the prepared parameters (read-only cache).
 *
 *  Arithmetic: single precision, erff / erfcf (CUDA: 2 and 4 ulp), no
 *  tables. The weights avoid cancellation (see cifKernelSuperpositionMath.h).
 *=========================================================================*/
#include "cifCudaStream.h"
#include "cif/KernelSuperposition.h"
#include "cifKernelSuperpositionMath.h"
#include "cif/Runtime.h"
#include "cifPixelLists.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <map>
#include <memory>
#include <mutex>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace cif
{

bool
KernelSuperpositionCUDAIsCompiled()
{
  return true;
}

namespace
{

constexpr int kBlockX = 32;
constexpr int kBlockY = 8;
constexpr int kThreads = kBlockX * kBlockY;
constexpr int kLargestRadiusClass = 32;

struct DeviceGeometry
{
  long long inSize[3];
  long long outStart[3];
  long long outSize[3];
  int       dimension;
};

struct DeviceParameters
{
  double cutoff;
  double pixelsPerUnit[3];
  int    renormalize;
};

/** What the prepare pass tells the host. */
struct PrepareRecord
{
  int                radius[3];
  unsigned long long firstBad; // ULLONG_MAX when every sigma is valid
};

/** A pixel's prepared parameters: intensity times the normalisations, and
 * k per axis (+inf for radius 0, so that w(0) = erf(inf) = 1). */
struct alignas(16) PixelParameters
{
  float value;
  float k[3];
};
struct alignas(8) PixelRadius
{
  unsigned short r[4];
};

DeviceGeometry
ToDevice(const KernelSuperpositionGeometry & g)
{
  DeviceGeometry d;
  for (int a = 0; a < 3; ++a)
  {
    d.inSize[a] = g.inputSize[a];
    d.outStart[a] = g.outputStart[a];
    d.outSize[a] = g.outputSize[a];
  }
  d.dimension = g.dimension;
  return d;
}

DeviceParameters
ToDevice(const KernelSuperpositionParameters & p)
{
  DeviceParameters d;
  d.cutoff = p.cutoff;
  for (int a = 0; a < 3; ++a)
  {
    d.pixelsPerUnit[a] = p.pixelsPerUnit[a];
  }
  d.renormalize = p.cutoffMass == CutoffMass::Renormalize ? 1 : 0;
  return d;
}

__device__ __forceinline__ float
Weight(int d, float k)
{
  return ks::IntegratedGaussian(d, k);
}

/** Reduces each thread's largest radii over the warp and into the record. */
__device__ __forceinline__ void
ReduceLargestRadius(const int (&r)[3], PrepareRecord * record)
{
  for (int a = 0; a < 3; ++a)
  {
    int m = r[a];
    for (int o = 16; o > 0; o /= 2)
    {
      m = max(m, __shfl_xor_sync(0xffffffffu, m, o));
    }
    if ((threadIdx.x & 31) == 0 && m > 0)
    {
      atomicMax(&record->radius[a], m);
    }
  }
}

/** Checks the sigmas, writes the prepared parameters (when `params` is not
 * null) and reduces the largest radius and the first bad pixel. */
template <typename TIn>
__global__ void
PrepareKernel(const TIn * __restrict__ input,
              const float * __restrict__ sx,
              const float * __restrict__ sy,
              const float * __restrict__ sz,
              long long        count,
              int              dimension,
              DeviceParameters p,
              PixelParameters * __restrict__ params,
              PixelRadius * __restrict__ radii,
              PrepareRecord * record)
{
  int           r[3] = { 0, 0, 0 };
  const float * maps[3] = { sx, sy, sz };
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
  {
    PixelParameters pp;
    PixelRadius     pr;
    pr.r[3] = 0;
    const float v = input != nullptr ? static_cast<float>(input[i]) : 0.0f;
    float       norm = 1.0f;
    for (int a = 0; a < 3; ++a)
    {
      int   ra = 0;
      float ka = INFINITY;
      if (a < dimension)
      {
        const double s = static_cast<double>(__ldg(maps[a] + i)) * p.pixelsPerUnit[a];
        ra = ks::RadiusOf(s, p.cutoff, KernelSuperpositionMaxRadius);
        if (ra < 0)
        {
          atomicMin(&record->firstBad, static_cast<unsigned long long>(i));
          ra = 0;
        }
        else if (ra > 0)
        {
          ka = ks::InverseWidth(static_cast<float>(s));
          if (p.renormalize)
          {
            norm /= ks::IntegratedGaussianMass(ra, ka);
          }
        }
      }
      pp.k[a] = ka;
      pr.r[a] = static_cast<unsigned short>(ra);
      if (v != 0.0f) // a pixel of zero intensity reaches nothing
      {
        r[a] = max(r[a], ra);
      }
    }
    pp.value = v * norm;
    if (params != nullptr)
    {
      params[i] = pp;
      radii[i] = pr;
    }
  }
  ReduceLargestRadius(r, record);
}

/** The radius pass for all pixels (also those of zero intensity). */
__global__ void
RadiusKernel(const float * __restrict__ sx,
             const float * __restrict__ sy,
             const float * __restrict__ sz,
             long long        count,
             int              dimension,
             DeviceParameters p,
             PrepareRecord *  record)
{
  int           r[3] = { 0, 0, 0 };
  const float * maps[3] = { sx, sy, sz };
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
  {
    for (int a = 0; a < dimension; ++a)
    {
      const double s = static_cast<double>(__ldg(maps[a] + i)) * p.pixelsPerUnit[a];
      const int    ra = ks::RadiusOf(s, p.cutoff, KernelSuperpositionMaxRadius);
      if (ra < 0)
      {
        atomicMin(&record->firstBad, static_cast<unsigned long long>(i));
      }
      r[a] = max(r[a], ra);
    }
  }
  ReduceLargestRadius(r, record);
}

/** Adds a finished plane of the tile to the output (clipped to the output
 * box) with global atomics, and clears it. */
__device__ __forceinline__ void
FlushPlane(float *                plane,
           int                    planeCount,
           int                    stride,
           long long              xFirst,
           long long              yFirst,
           long long              zo,
           const DeviceGeometry & g,
           float * __restrict__ out,
           int tid)
{
  const long long outZ = zo - g.outStart[2];
  for (int e = tid; e < planeCount; e += kThreads)
  {
    const float v = plane[e];
    if (!(v == 0.0f)) // also a NaN
    {
      plane[e] = 0.0f;
      const long long ox = xFirst + e % stride - g.outStart[0];
      const long long oy = yFirst + e / stride - g.outStart[1];
      if (ox >= 0 && ox < g.outSize[0] && oy >= 0 && oy < g.outSize[1])
      {
        atomicAdd(out + ox + g.outSize[0] * (oy + g.outSize[1] * outZ), v);
      }
    }
  }
}

/** The radius class (2, 4, 8, 16 or 32) of a tile's x radius. */
__device__ __forceinline__ int
TileClass(int r)
{
  return r <= 2 ? 2 : (r <= 4 ? 4 : (r <= 8 ? 8 : (r <= 16 ? 16 : 32)));
}

/** Adds one plane row: for dx = -C..C, the sum over the thread's TZ pixels
 * of b_q w_q(|dx|) to target[dx]. The plane's rows are 32 + 2 C wide around
 * the tile, so every offset lands inside its row; where a kernel ends its
 * weights are 0, and with finite intensities (Finite) the zeros are simply
 * added (no per-lane predicates); otherwise each term is tested, so that a
 * NaN or infinity (0 x inf = NaN) stays within its radius.
 * Warp-synchronous: plain read-modify-writes with __syncwarp between
 * column offsets (a warp's lanes write 32 consecutive addresses, and the
 * caller keeps the block at one row offset); else shared-memory atomics. */
template <int C, bool WarpSynchronous, bool Finite, int TZ, int N>
__device__ __forceinline__ void
AddRow(float * target,
       const float (&b)[TZ],
       const float (&wx)[TZ][N],
       const bool (&rowReached)[TZ],
       const int (&rx)[TZ])
{
#pragma unroll
  for (int dx = -C; dx <= C; ++dx)
  {
    const int adx = dx < 0 ? -dx : dx;
    float     c = 0.0f;
#pragma unroll
    for (int q = 0; q < TZ; ++q)
    {
      if constexpr (Finite)
      {
        c = fmaf(b[q], wx[q][adx], c);
      }
      else
      {
        c += (rowReached[q] && adx <= rx[q]) ? b[q] * wx[q][adx] : 0.0f;
      }
    }
    if constexpr (WarpSynchronous)
    {
      volatile float * t = target;
      t[dx] = t[dx] + c;
      __syncwarp();
    }
    else if (c != 0.0f)
    {
      atomicAdd(target + dx, c);
    }
  }
}

/** AddRow for the tile's class Cx (uniform across the block; at most RC). */
template <bool WarpSynchronous, int TZ, int N>
__device__ __forceinline__ void
AddRowOfClass(int     Cx,
              bool    finite,
              float * target,
              const float (&b)[TZ],
              const float (&wx)[TZ][N], // N = RC + 1
              const bool (&rowReached)[TZ],
              const int (&rx)[TZ])
{
  constexpr int RC = N - 1;
#define CIF_KS_ADD_ROW(C)                                                                                              \
  if constexpr (C <= RC)                                                                                               \
  {                                                                                                                    \
    if (Cx == C)                                                                                                       \
    {                                                                                                                  \
      if (finite)                                                                                                      \
        AddRow<C, WarpSynchronous, true>(target, b, wx, rowReached, rx);                                               \
      else                                                                                                             \
        AddRow<C, WarpSynchronous, false>(target, b, wx, rowReached, rx);                                              \
      return;                                                                                                          \
    }                                                                                                                  \
  }
  CIF_KS_ADD_ROW(2)
  CIF_KS_ADD_ROW(4)
  CIF_KS_ADD_ROW(8)
  CIF_KS_ADD_ROW(16)
  CIF_KS_ADD_ROW(32)
#undef CIF_KS_ADD_ROW
}

/** 2D scatter. A block of 32 x 8 threads owns a tile of 32 x 8 PY input
 * pixels (PY rows per thread) and accumulates the tile plus its halo,
 * (32 + 2 Rx)(8 PY + 2 Ry) floats, in shared memory. RC: the radius class of
 * the x weights held in registers. */
template <int PY, int RC, bool WarpSynchronous>
__global__ void
__launch_bounds__(kThreads) ScatterTileKernel(const PixelParameters * __restrict__ params,
                                              const PixelRadius * __restrict__ radii,
                                              float * __restrict__ out,
                                              DeviceGeometry       g,
                                              unsigned long long * skipped)
{
  constexpr int              TY = kBlockY * PY;
  extern __shared__ float    plane[];
  __shared__ int             tileRadius[2];
  __shared__ PixelParameters pixelParameters[PY * kThreads];
  __shared__ PixelRadius     pixelRadius[PY * kThreads];

  const int       lx = threadIdx.x, ly = threadIdx.y;
  const int       tid = ly * kBlockX + lx;
  const long long x0 = static_cast<long long>(blockIdx.x) * kBlockX;
  const long long y0 = static_cast<long long>(blockIdx.y) * TY;
  if (tid < 2)
  {
    tileRadius[tid] = 0;
  }
  __syncthreads();
  bool any = false, nonFinite = false;
#pragma unroll
  for (int j = 0; j < PY; ++j)
  {
    const long long x = x0 + lx, y = y0 + ly + kBlockY * j;
    PixelParameters pp;
    PixelRadius     pr;
    pp.value = 0.0f;
    pp.k[0] = pp.k[1] = pp.k[2] = INFINITY;
    pr.r[0] = pr.r[1] = pr.r[2] = pr.r[3] = 0;
    if (x < g.inSize[0] && y < g.inSize[1])
    {
      const long long i = x + g.inSize[0] * y;
      pp = params[i];
      if (pp.value != 0.0f)
      {
        pr = radii[i];
        any = true;
        nonFinite = nonFinite || !isfinite(pp.value);
        atomicMax(&tileRadius[0], pr.r[0]);
        atomicMax(&tileRadius[1], pr.r[1]);
      }
    }
    pixelParameters[j * kThreads + tid] = pp;
    pixelRadius[j * kThreads + tid] = pr;
  }
  if (!__syncthreads_or(any)) // also makes the pixels and the radius visible
  {
    if (tid == 0)
    {
      atomicAdd(skipped, 1ULL);
    }
    return; // a tile of zeros contributes nothing
  }
  // With finite intensities a lane may add b w = 0 where its kernel ends (no
  // per-lane predicates); a NaN or infinity must not spread beyond its
  // radius (0 x inf = NaN), so such tiles test every term.
  const bool tileFinite = !__syncthreads_or(nonFinite);
  const int  Cx = TileClass(tileRadius[0]), Ry = tileRadius[1];
  const int  stride = kBlockX + 2 * Cx;
  const int  planeCount = stride * (TY + 2 * Ry);
  for (int e = tid; e < planeCount; e += kThreads)
  {
    plane[e] = 0.0f;
  }
  __syncthreads();
#pragma unroll 1
  for (int j = 0; j < PY; ++j)
  {
    const PixelParameters pp = pixelParameters[j * kThreads + tid];
    const PixelRadius     pr = pixelRadius[j * kThreads + tid];
    const bool            reaches = pp.value != 0.0f;
    if (!WarpSynchronous && !reaches)
    {
      continue;
    }
    float wx[1][RC + 1];
#pragma unroll
    for (int d = 0; d <= RC; ++d)
    {
      wx[0][d] = (reaches && d <= pr.r[0]) ? Weight(d, pp.k[0]) : 0.0f;
    }
    const int rx[1] = { pr.r[0] };
    // Warp-synchronous: every thread walks the tile's row offsets so that
    // the block stays in step.
    const int ry = WarpSynchronous ? Ry : pr.r[1];
    const int cy = ly + kBlockY * j + Ry;
    float *   column = plane + lx + Cx;
    for (int d = 0; d <= ry; ++d)
    {
      const bool  rowReached[1] = { reaches && d <= pr.r[1] };
      const float b[1] = { rowReached[0] ? pp.value * Weight(d, pp.k[1]) : 0.0f };
      for (int sign = (d == 0 ? 1 : -1); sign <= 1; sign += 2)
      {
        if constexpr (WarpSynchronous)
        {
          __syncthreads(); // all warps are at the same row offset
        }
        AddRowOfClass<WarpSynchronous>(Cx, tileFinite, column + (cy + sign * d) * stride, b, wx, rowReached, rx);
      }
    }
  }
  __syncthreads(); // the plane is complete
  FlushPlane(plane, planeCount, stride, x0 - Cx, y0 - Ry, 0, g, out, tid);
}

/** 3D scatter. A block of 32 x 8 threads owns a tile of 32 x 8 x TZ input
 * pixels; each thread a column of TZ pixels at one (x, y). All pixels of a
 * column add to the same plane positions, so for each output plane the
 * thread sums its column's contributions in registers and writes the plane
 * once per position: TZ times fewer shared-memory operations than one
 * pixel at a time. Output planes are accumulated one after the other in a
 * plane of (32 + 2 Rx)(8 + 2 Ry) floats, so the z radius costs no shared
 * memory. The x weights of the column live in registers (TZ (RC + 1)), the
 * y weights times the intensity in shared memory. */
template <int TZ, int RC, bool WarpSynchronous>
__global__ void
__launch_bounds__(kThreads) ScatterColumnKernel(const PixelParameters * __restrict__ params,
                                                const PixelRadius * __restrict__ radii,
                                                float * __restrict__ out,
                                                DeviceGeometry       g,
                                                int                  planeCapacity,
                                                unsigned long long * skipped)
{
  extern __shared__ float shared[];
  float *                 plane = shared;
  float *                 yWeights = shared + planeCapacity; // [q][d][thread], d <= Ry
  __shared__ int          tileRadius[3];

  const int       lx = threadIdx.x, ly = threadIdx.y;
  const int       tid = ly * kBlockX + lx;
  const long long x0 = static_cast<long long>(blockIdx.x) * kBlockX;
  const long long y0 = static_cast<long long>(blockIdx.y) * kBlockY;
  const long long z0 = static_cast<long long>(blockIdx.z) * TZ;
  if (tid < 3)
  {
    tileRadius[tid] = 0;
  }
  __syncthreads();
  float           value[TZ], kz[TZ], ky[TZ];
  int             rx[TZ], ry[TZ], rz[TZ];
  float           wx[TZ][RC + 1];
  bool            any = false, nonFinite = false;
  const long long x = x0 + lx, y = y0 + ly;
#pragma unroll
  for (int q = 0; q < TZ; ++q)
  {
    PixelParameters pp;
    PixelRadius     pr;
    pp.value = 0.0f;
    pp.k[0] = pp.k[1] = pp.k[2] = INFINITY;
    pr.r[0] = pr.r[1] = pr.r[2] = pr.r[3] = 0;
    if (x < g.inSize[0] && y < g.inSize[1] && z0 + q < g.inSize[2])
    {
      const long long i = x + g.inSize[0] * (y + g.inSize[1] * (z0 + q));
      pp = params[i];
      if (pp.value != 0.0f)
      {
        pr = radii[i];
        any = true;
        nonFinite = nonFinite || !isfinite(pp.value);
        atomicMax(&tileRadius[0], pr.r[0]);
        atomicMax(&tileRadius[1], pr.r[1]);
        atomicMax(&tileRadius[2], pr.r[2]);
      }
    }
    value[q] = pp.value;
    ky[q] = pp.k[1];
    kz[q] = pp.k[2];
    rx[q] = pr.r[0];
    ry[q] = pr.r[1];
    rz[q] = pr.r[2];
#pragma unroll
    for (int d = 0; d <= RC; ++d)
    {
      wx[q][d] = (pp.value != 0.0f && d <= pr.r[0]) ? Weight(d, pp.k[0]) : 0.0f;
    }
  }
  if (!__syncthreads_or(any))
  {
    if (tid == 0)
    {
      atomicAdd(skipped, 1ULL);
    }
    return;
  }
  const bool tileFinite = !__syncthreads_or(nonFinite);
  const int  Cx = TileClass(tileRadius[0]), Ry = tileRadius[1], Rz = tileRadius[2];
  const int  stride = kBlockX + 2 * Cx;
  const int  planeCount = stride * (kBlockY + 2 * Ry);
  for (int e = tid; e < planeCount; e += kThreads)
  {
    plane[e] = 0.0f;
  }
#pragma unroll
  for (int q = 0; q < TZ; ++q)
  {
    for (int d = 0; d <= Ry; ++d)
    {
      yWeights[(q * (Ry + 1) + d) * kThreads + tid] =
        (value[q] != 0.0f && d <= ry[q]) ? value[q] * Weight(d, ky[q]) : 0.0f;
    }
  }
  const long long zFirst = max(z0 - Rz, g.outStart[2]);
  const long long zLast = min(z0 + TZ - 1 + Rz, g.outStart[2] + g.outSize[2] - 1);
  float *         column = plane + lx + Cx;
  const int       cy = ly + Ry;
  for (long long zo = zFirst; zo <= zLast; ++zo)
  {
    __syncthreads(); // the plane is clear (and the y weights are stored)
    float wz[TZ];
    bool  reaches[TZ];
#pragma unroll
    for (int q = 0; q < TZ; ++q)
    {
      const int dz = static_cast<int>(zo - (z0 + q));
      const int adz = dz < 0 ? -dz : dz;
      reaches[q] = value[q] != 0.0f && adz <= rz[q];
      wz[q] = reaches[q] ? Weight(adz, kz[q]) : 0.0f;
    }
    // Warp-synchronous: every thread walks the tile's row offsets so that
    // the block stays in step; otherwise only the rows its pixels reach.
    int rows = -1;
#pragma unroll
    for (int q = 0; q < TZ; ++q)
    {
      rows = reaches[q] ? max(rows, ry[q]) : rows;
    }
    if constexpr (WarpSynchronous)
    {
      rows = Ry;
    }
    for (int d = 0; d <= rows; ++d)
    {
      float b[TZ];
      bool  rowReached[TZ];
#pragma unroll
      for (int q = 0; q < TZ; ++q)
      {
        rowReached[q] = reaches[q] && d <= ry[q];
        b[q] = rowReached[q] ? wz[q] * yWeights[(q * (Ry + 1) + d) * kThreads + tid] : 0.0f;
      }
      for (int sign = (d == 0 ? 1 : -1); sign <= 1; sign += 2)
      {
        if constexpr (WarpSynchronous)
        {
          __syncthreads(); // all warps are at the same row offset
        }
        AddRowOfClass<WarpSynchronous>(Cx, tileFinite, column + (cy + sign * d) * stride, b, wx, rowReached, rx);
      }
    }
    __syncthreads(); // the plane is complete
    FlushPlane(plane, planeCount, stride, x0 - Cx, y0 - Ry, zo, g, out, tid);
  }
}

/** One thread per input pixel, contributions added to the output with
 * global atomics. RC >= 0: x weights in registers (radius class RC);
 * RC < 0: evaluated per tap (any radius). */
template <int RC>
__global__ void
ScatterGlobalKernel(const PixelParameters * __restrict__ params,
                    const PixelRadius * __restrict__ radii,
                    float * __restrict__ out,
                    DeviceGeometry g)
{
  const long long count = g.inSize[0] * g.inSize[1] * g.inSize[2];
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
  {
    const PixelParameters pp = params[i];
    if (pp.value == 0.0f)
    {
      continue;
    }
    const PixelRadius pr = radii[i];
    const long long   x = i % g.inSize[0];
    const long long   y = (i / g.inSize[0]) % g.inSize[1];
    const long long   z = i / (g.inSize[0] * g.inSize[1]);
    const int         rx = pr.r[0], ry = pr.r[1], rz = pr.r[2];
    float             wx[RC >= 0 ? RC + 1 : 1];
    if constexpr (RC >= 0)
    {
#pragma unroll
      for (int d = 0; d <= RC; ++d)
      {
        wx[d] = d <= rx ? Weight(d, pp.k[0]) : 0.0f;
      }
    }
    for (int dz = -rz; dz <= rz; ++dz)
    {
      const long long oz = z + dz - g.outStart[2];
      if (oz < 0 || oz >= g.outSize[2])
      {
        continue;
      }
      const float a = pp.value * Weight(dz < 0 ? -dz : dz, pp.k[2]);
      for (int dy = -ry; dy <= ry; ++dy)
      {
        const long long oy = y + dy - g.outStart[1];
        if (oy < 0 || oy >= g.outSize[1])
        {
          continue;
        }
        const float     b = a * Weight(dy < 0 ? -dy : dy, pp.k[1]);
        float *         row = out + g.outSize[0] * (oy + g.outSize[1] * oz);
        const long long ox0 = x - g.outStart[0];
        if constexpr (RC >= 0)
        {
#pragma unroll
          for (int dx = -RC; dx <= RC; ++dx)
          {
            const int       adx = dx < 0 ? -dx : dx;
            const long long ox = ox0 + dx;
            if (adx <= rx && ox >= 0 && ox < g.outSize[0])
            {
              atomicAdd(row + ox, b * wx[adx]);
            }
          }
        }
        else
        {
          for (int dx = -rx; dx <= rx; ++dx)
          {
            const long long ox = ox0 + dx;
            if (ox >= 0 && ox < g.outSize[0])
            {
              atomicAdd(row + ox, b * Weight(dx < 0 ? -dx : dx, pp.k[0]));
            }
          }
        }
      }
    }
  }
}

/** Exact gather: one thread per output pixel over the box of the largest
 * radius; every neighbour's kernel is evaluated (2 erf per axis). */
__global__ void
GatherKernel(const PixelParameters * __restrict__ params,
             const PixelRadius * __restrict__ radii,
             float * __restrict__ out,
             DeviceGeometry g,
             int            Rx,
             int            Ry,
             int            Rz)
{
  const long long count = g.outSize[0] * g.outSize[1] * g.outSize[2];
  for (long long o = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; o < count;
       o += static_cast<long long>(gridDim.x) * blockDim.x)
  {
    const long long x = o % g.outSize[0] + g.outStart[0];
    const long long y = (o / g.outSize[0]) % g.outSize[1] + g.outStart[1];
    const long long z = o / (g.outSize[0] * g.outSize[1]) + g.outStart[2];
    float           sum = 0.0f;
    const long long zb = max(z - Rz, 0LL), ze = min(z + Rz, g.inSize[2] - 1);
    const long long yb = max(y - Ry, 0LL), ye = min(y + Ry, g.inSize[1] - 1);
    const long long xb = max(x - Rx, 0LL), xe = min(x + Rx, g.inSize[0] - 1);
    for (long long zi = zb; zi <= ze; ++zi)
    {
      const int dz = static_cast<int>(zi > z ? zi - z : z - zi);
      for (long long yi = yb; yi <= ye; ++yi)
      {
        const int       dy = static_cast<int>(yi > y ? yi - y : y - yi);
        const long long base = g.inSize[0] * (yi + g.inSize[1] * zi);
        for (long long xi = xb; xi <= xe; ++xi)
        {
          const int         dx = static_cast<int>(xi > x ? xi - x : x - xi);
          const PixelRadius pr = radii[base + xi];
          if (dx <= pr.r[0] && dy <= pr.r[1] && dz <= pr.r[2])
          {
            const PixelParameters pp = params[base + xi];
            if (pp.value != 0.0f)
            {
              sum += pp.value * Weight(dx, pp.k[0]) * Weight(dy, pp.k[1]) * Weight(dz, pp.k[2]);
            }
          }
        }
      }
    }
    out[o] = sum;
  }
}

int
GridFor(long long count)
{
  return static_cast<int>(std::min<long long>((count + 255) / 256, 65535LL * 8));
}

int
RadiusClass(int r)
{
  for (int c : { 2, 4, 8, 16, 32 })
  {
    if (r <= c)
    {
      return c;
    }
  }
  return -1;
}

/** How the tile kernels are launched for the image's largest radii R and
 * radius class rc. 2D: the plane (dynamic) and the pixels (static). 3D: the
 * plane and the column's y weights (dynamic); columns of 4 pixels, 2 for
 * the largest class (the x weights of a column are TZ (RC + 1) registers). */
struct TileLaunch
{
  int       tileZ{ 1 };
  int       planeCapacity{ 0 };
  int       dynamicBytes{ 0 };
  long long totalBytes{ 0 };
};

TileLaunch
TileLaunchFor(bool is3D, int rc, const int R[3])
{
  TileLaunch t;
  const int  py = is3D ? 1 : 2;
  // rows of 32 + 2 rc: a tile's rows are 32 + 2 C wide, C its radius class (<= rc)
  const long long plane = static_cast<long long>(kBlockX + 2 * rc) * (kBlockY * py + 2 * static_cast<long long>(R[1]));
  t.tileZ = is3D ? (rc <= 16 ? 4 : 2) : 1;
  const long long weights = is3D ? static_cast<long long>(t.tileZ) * (R[1] + 1) * kThreads : 0;
  const long long dynamicBytes = (plane + weights) * static_cast<long long>(sizeof(float));
  t.planeCapacity = static_cast<int>(std::min<long long>(plane, INT_MAX / 8));
  t.dynamicBytes = static_cast<int>(std::min<long long>(dynamicBytes, INT_MAX / 2));
  t.totalBytes =
    dynamicBytes + (is3D ? 0 : static_cast<long long>(py) * kThreads * (sizeof(PixelParameters) + sizeof(PixelRadius)));
  return t;
}

template <int RC, bool WS>
void
LaunchTile(const PixelParameters * params,
           const PixelRadius *     radii,
           float *                 out,
           const DeviceGeometry &  g,
           const TileLaunch &      t,
           unsigned long long *    skipped)
{
  const dim3 block(kBlockX, kBlockY);
  if (g.dimension < 3)
  {
    constexpr int PY = 2;
    auto          kernel = ScatterTileKernel<PY, RC, WS>;
    CIF_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, t.dynamicBytes));
    const dim3 grid(static_cast<unsigned>((g.inSize[0] + kBlockX - 1) / kBlockX),
                    static_cast<unsigned>((g.inSize[1] + kBlockY * PY - 1) / (kBlockY * PY)));
    kernel<<<grid, block, t.dynamicBytes, ::cif::Stream()>>>(params, radii, out, g, skipped);
    CIF_CUDA_CHECK_LAUNCH("ScatterTileKernel");
    return;
  }
  constexpr int TZ = RC <= 16 ? 4 : 2;
  auto          kernel = ScatterColumnKernel<TZ, RC, WS>;
  CIF_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, t.dynamicBytes));
  const dim3 grid(static_cast<unsigned>((g.inSize[0] + kBlockX - 1) / kBlockX),
                  static_cast<unsigned>((g.inSize[1] + kBlockY - 1) / kBlockY),
                  static_cast<unsigned>((g.inSize[2] + TZ - 1) / TZ));
  kernel<<<grid, block, t.dynamicBytes, ::cif::Stream()>>>(params, radii, out, g, t.planeCapacity, skipped);
  CIF_CUDA_CHECK_LAUNCH("ScatterColumnKernel");
}

template <bool WS>
void
LaunchTileClass(int                     rc,
                const PixelParameters * params,
                const PixelRadius *     radii,
                float *                 out,
                const DeviceGeometry &  g,
                const TileLaunch &      t,
                unsigned long long *    skipped)
{
  switch (rc)
  {
    case 2:
      return LaunchTile<2, WS>(params, radii, out, g, t, skipped);
    case 4:
      return LaunchTile<4, WS>(params, radii, out, g, t, skipped);
    case 8:
      return LaunchTile<8, WS>(params, radii, out, g, t, skipped);
    case 16:
      return LaunchTile<16, WS>(params, radii, out, g, t, skipped);
    default:
      return LaunchTile<32, WS>(params, radii, out, g, t, skipped);
  }
}

/** The work buffers of a call (record, skipped-tile counter, the pixels'
 * parameters and radii) in one allocation, one set per device. Up to 64 MiB
 * stay allocated between calls (a 512^2 image needs 6 MiB): cudaMalloc and
 * cudaFree cost more than the superposition of a small image. One call at a
 * time per device (Mutex()); calls on different devices run at once. */
class WorkBuffers
{
public:
  /** The set of the current device (made on first use, kept for the process). */
  static WorkBuffers &
  ForCurrentDevice()
  {
    static std::mutex                                   registryMutex;
    static std::map<int, std::unique_ptr<WorkBuffers>> registry;
    int                                                 device = 0;
    CIF_CUDA_CHECK(cudaGetDevice(&device));
    std::lock_guard<std::mutex> lock(registryMutex);
    auto &                      slot = registry[device];
    if (!slot)
    {
      slot.reset(new WorkBuffers);
    }
    return *slot;
  }
  std::mutex &
  Mutex()
  {
    return m_Mutex;
  }
  /** Pointers into a block of at least `bytes`; the block is released by
   * Finish() when it is larger than the cache keeps. */
  void *
  Get(std::size_t bytes)
  {
    if (m_Buffer.GetSize() < bytes)
    {
      m_Buffer.Release();
      m_Buffer.Allocate(bytes);
    }
    return m_Buffer.GetPointer();
  }
  void
  Finish()
  {
    if (m_Buffer.GetSize() > kKeptBytes)
    {
      m_Buffer.Release();
    }
  }

private:
  static constexpr std::size_t kKeptBytes = std::size_t{ 64 } << 20;
  cif::DeviceBuffer        m_Buffer;
  std::mutex               m_Mutex;
};

void
LaunchGlobal(int rc, const PixelParameters * params, const PixelRadius * radii, float * out, const DeviceGeometry & g)
{
  const long long count = g.inSize[0] * g.inSize[1] * g.inSize[2];
  const int       blocks = GridFor(count);
  switch (rc)
  {
    case 2:
      ScatterGlobalKernel<2><<<blocks, 256, 0, ::cif::Stream()>>>(params, radii, out, g);
      break;
    case 4:
      ScatterGlobalKernel<4><<<blocks, 256, 0, ::cif::Stream()>>>(params, radii, out, g);
      break;
    case 8:
      ScatterGlobalKernel<8><<<blocks, 256, 0, ::cif::Stream()>>>(params, radii, out, g);
      break;
    case 16:
      ScatterGlobalKernel<16><<<blocks, 256, 0, ::cif::Stream()>>>(params, radii, out, g);
      break;
    case 32:
      ScatterGlobalKernel<32><<<blocks, 256, 0, ::cif::Stream()>>>(params, radii, out, g);
      break;
    default:
      ScatterGlobalKernel<-1><<<blocks, 256, 0, ::cif::Stream()>>>(params, radii, out, g);
      break;
  }
  CIF_CUDA_CHECK_LAUNCH("ScatterGlobalKernel");
}

[[noreturn]] void
ThrowBadSigma(const SigmaMaps<float> &              sigma,
              const PrepareRecord &                 rec,
              const KernelSuperpositionParameters & p,
              int                                   dim)
{
  // find the axis and the value of the first bad pixel
  for (int a = 0; a < dim; ++a)
  {
    float v = 0.0f;
    CIF_CUDA_CHECK(
      cudaMemcpyAsync(&v, sigma.Get(a) + rec.firstBad, sizeof(float), cudaMemcpyDeviceToHost, ::cif::Stream()));
    CIF_CUDA_SYNCHRONIZE_STREAM();
    const double s = static_cast<double>(v) * p.pixelsPerUnit[a];
    if (KernelSuperpositionRadiusOf(s, p.cutoff) < 0)
    {
      const bool perAxis = sigma.axis[1] != nullptr || sigma.axis[2] != nullptr;
      ThrowBadKernelSuperpositionSigma(static_cast<std::int64_t>(rec.firstBad), perAxis ? a : -1, v, s, p);
    }
  }
  throw std::invalid_argument("a sigma is negative, not finite, or too large");
}

PrepareRecord
ReadRecord(const PrepareRecord * record)
{
  PrepareRecord rec;
  CIF_CUDA_CHECK(cudaMemcpyAsync(&rec, record, sizeof(PrepareRecord), cudaMemcpyDeviceToHost, ::cif::Stream()));
  CIF_CUDA_SYNCHRONIZE_STREAM();
  return rec;
}

void
ClearRecord(PrepareRecord * record)
{
  PrepareRecord rec;
  rec.radius[0] = rec.radius[1] = rec.radius[2] = 0;
  rec.firstBad = ULLONG_MAX;
  CIF_CUDA_CHECK(cudaMemcpyAsync(record, &rec, sizeof(PrepareRecord), cudaMemcpyHostToDevice, ::cif::Stream()));
}

void
CheckJob(const SigmaMaps<float> & sigma, const KernelSuperpositionGeometry & g, const KernelSuperpositionParameters & p)
{
  const std::string why = ValidateKernelSuperpositionJob(g, p);
  if (!why.empty())
  {
    throw std::invalid_argument("KernelSuperpositionCUDA: " + why);
  }
  if (sigma.axis[0] == nullptr)
  {
    throw std::invalid_argument("KernelSuperpositionCUDA: no sigma map");
  }
}

} // namespace

KernelSuperpositionRadius
KernelSuperpositionLargestRadiusCUDA(const SigmaMaps<float> &              sigma,
                                     const KernelSuperpositionGeometry &   g,
                                     const KernelSuperpositionParameters & p)
{
  CheckJob(sigma, g, p);
  cif::DeviceBuffer record(sizeof(PrepareRecord));
  ClearRecord(static_cast<PrepareRecord *>(record.GetPointer()));
  const long long count = g.InputCount();
  RadiusKernel<<<GridFor(count), 256, 0, ::cif::Stream()>>>(sigma.Get(0),
                                                            sigma.Get(1),
                                                            sigma.Get(2),
                                                            count,
                                                            g.dimension,
                                                            ToDevice(p),
                                                            static_cast<PrepareRecord *>(record.GetPointer()));
  CIF_CUDA_CHECK_LAUNCH("RadiusKernel");
  const PrepareRecord rec = ReadRecord(static_cast<const PrepareRecord *>(record.GetPointer()));
  if (rec.firstBad != ULLONG_MAX)
  {
    ThrowBadSigma(sigma, rec, p, g.dimension);
  }
  KernelSuperpositionRadius r;
  for (int a = 0; a < 3; ++a)
  {
    r.radius[a] = a < g.dimension ? rec.radius[a] : 0;
  }
  return r;
}

template <typename TIn>
std::string
KernelSuperpositionCUDA(const TIn *                           input,
                        const SigmaMaps<float> &              sigma,
                        float *                               output,
                        const KernelSuperpositionGeometry &   g,
                        const KernelSuperpositionParameters & p)
{
  CheckJob(sigma, g, p);
  const long long             count = g.InputCount();
  WorkBuffers &               work = WorkBuffers::ForCurrentDevice();
  std::lock_guard<std::mutex> lock(work.Mutex());
  struct FinishWork
  {
    WorkBuffers & w;
    ~FinishWork() { w.Finish(); }
  } finishWork{ work };
  // [record | skipped counter | parameters | radii], 256-byte aligned parts
  const std::size_t headBytes = 256;
  const std::size_t paramBytes = static_cast<std::size_t>(count) * sizeof(PixelParameters);
  const std::size_t radiusBytes = static_cast<std::size_t>(count) * sizeof(PixelRadius);
  auto *            base = static_cast<char *>(work.Get(headBytes + paramBytes + radiusBytes));
  auto *            rp = reinterpret_cast<PrepareRecord *>(base);
  auto *            skipped = reinterpret_cast<unsigned long long *>(base + 128);
  auto *            pp = reinterpret_cast<PixelParameters *>(base + headBytes);
  auto *            pr = reinterpret_cast<PixelRadius *>(base + headBytes + paramBytes);
  ClearRecord(rp);
  CIF_CUDA_CHECK(cudaMemsetAsync(skipped, 0, sizeof(unsigned long long), ::cif::Stream()));
  PrepareKernel<TIn><<<GridFor(count), 256, 0, ::cif::Stream()>>>(
    input, sigma.Get(0), sigma.Get(1), sigma.Get(2), count, g.dimension, ToDevice(p), pp, pr, rp);
  CIF_CUDA_CHECK_LAUNCH("PrepareKernel");
  const PrepareRecord rec = ReadRecord(rp);
  if (rec.firstBad != ULLONG_MAX)
  {
    ThrowBadSigma(sigma, rec, p, g.dimension);
  }
  const int      R[3] = { rec.radius[0], rec.radius[1], rec.radius[2] };
  DeviceGeometry dg = ToDevice(g);

  // choose the method: the warp-synchronous scatter measured fastest on
  // Hopper (docs/KernelSuperposition.md), the global-atomics scatter where
  // the tile does not fit
  KernelSuperpositionMethod method = p.method;
  const bool                is3D = g.dimension == 3;
  const int                 py = is3D ? 1 : 2;
  const int                 rc = RadiusClass(std::max(R[0], 1));
  const TileLaunch          tile = TileLaunchFor(is3D, rc < 0 ? kLargestRadiusClass : rc, R);
  const long long           sharedBytes = tile.totalBytes;
  const int                 tz = tile.tileZ;
  std::ostringstream        note;
  std::string               tileProblem;
  if (rc < 0)
  {
    tileProblem = "the largest x radius, " + std::to_string(R[0]) + ", exceeds the tile kernel's " +
                  std::to_string(kLargestRadiusClass);
  }
  else if (sharedBytes > static_cast<long long>(cif::Runtime::GetMaxSharedMemoryPerBlock()))
  {
    tileProblem = "the tile (" + std::to_string(sharedBytes) + " bytes) exceeds the device's shared memory";
  }
  if (method == KernelSuperpositionMethod::Automatic)
  {
    method = KernelSuperpositionMethod::ScatterWarpSynchronous;
    if (!tileProblem.empty())
    {
      note << " (the tile kernel is impossible: " << tileProblem << ")";
      method = KernelSuperpositionMethod::ScatterGlobalAtomics;
    }
  }
  else if ((method == KernelSuperpositionMethod::Scatter ||
            method == KernelSuperpositionMethod::ScatterWarpSynchronous) &&
           !tileProblem.empty())
  {
    note << " (" << ToString(method) << " impossible: " << tileProblem << ")";
    method = KernelSuperpositionMethod::ScatterGlobalAtomics;
  }

  const std::size_t outBytes = static_cast<std::size_t>(g.OutputCount()) * sizeof(float);
  if (method != KernelSuperpositionMethod::Gather)
  {
    CIF_CUDA_CHECK(cudaMemsetAsync(output, 0, outBytes, ::cif::Stream()));
  }
  switch (method)
  {
    case KernelSuperpositionMethod::Scatter:
    case KernelSuperpositionMethod::ScatterWarpSynchronous:
    {
      const bool ws = method == KernelSuperpositionMethod::ScatterWarpSynchronous;
      ws ? LaunchTileClass<true>(rc, pp, pr, output, dg, tile, skipped)
         : LaunchTileClass<false>(rc, pp, pr, output, dg, tile, skipped);
      break;
    }
    case KernelSuperpositionMethod::ScatterGlobalAtomics:
      LaunchGlobal(RadiusClass(std::max(R[0], 1)), pp, pr, output, dg);
      break;
    case KernelSuperpositionMethod::Gather:
      GatherKernel<<<GridFor(g.OutputCount()), 256, 0, ::cif::Stream()>>>(pp, pr, output, dg, R[0], R[1], R[2]);
      CIF_CUDA_CHECK_LAUNCH("GatherKernel");
      break;
    default:
      break;
  }
  unsigned long long skippedTiles = 0;
  CIF_CUDA_CHECK(
    cudaMemcpyAsync(&skippedTiles, skipped, sizeof(skippedTiles), cudaMemcpyDeviceToHost, ::cif::Stream()));
  CIF_CUDA_SYNCHRONIZE_STREAM();

  std::ostringstream description;
  description << ToString(method) << note.str() << ", largest radius " << R[0];
  for (int a = 1; a < g.dimension; ++a)
  {
    description << " x " << R[a];
  }
  if (method == KernelSuperpositionMethod::Scatter || method == KernelSuperpositionMethod::ScatterWarpSynchronous)
  {
    const long long tiles = ((g.inputSize[0] + kBlockX - 1) / kBlockX) *
                            ((g.inputSize[1] + kBlockY * py - 1) / (kBlockY * py)) * ((g.inputSize[2] + tz - 1) / tz);
    description << ", " << skippedTiles << " of " << tiles << " tiles skipped (all zero)";
  }
  return description.str();
}

#define CIF_INSTANTIATE_KS_CUDA(TIn)                                                                                   \
  template std::string KernelSuperpositionCUDA<TIn>(const TIn *,                                                       \
                                                    const SigmaMaps<float> &,                                          \
                                                    float *,                                                           \
                                                    const KernelSuperpositionGeometry &,                               \
                                                    const KernelSuperpositionParameters &);
CIF_KERNEL_SUPERPOSITION_GPU_PIXELS(CIF_INSTANTIATE_KS_CUDA)

} // namespace cif
