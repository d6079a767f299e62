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
#include "cifKernelSuperposition.h"
#include "cifKernelSuperpositionMath.h"
#include "itkCudaRuntime.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
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
  int                badAxis;
  unsigned long long nonZero; // pixels of non-zero intensity
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
  int                r[3] = { 0, 0, 0 };
  unsigned long long nonZero = 0;
  const float *      maps[3] = { sx, sy, sz };
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
  {
    PixelParameters pp;
    PixelRadius     pr;
    pr.r[3] = 0;
    const float v = input != nullptr ? static_cast<float>(input[i]) : 0.0f;
    float       norm = 1.0f;
    bool        bad = false;
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
          bad = true;
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
    nonZero += (v != 0.0f && !bad) ? 1 : 0;
    pp.value = v * norm;
    if (params != nullptr)
    {
      params[i] = pp;
      radii[i] = pr;
    }
  }
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
  for (int o = 16; o > 0; o /= 2)
  {
    nonZero += __shfl_xor_sync(0xffffffffu, nonZero, o);
  }
  if ((threadIdx.x & 31) == 0 && nonZero > 0)
  {
    atomicAdd(&record->nonZero, nonZero);
  }
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

/** The scatter tile kernel. PY rows per thread, TZ planes per tile, RC the
 * radius class of the x weights held in registers. */
template <int PY, int TZ, int RC, bool WarpSynchronous>
__global__ void
__launch_bounds__(kThreads) ScatterTileKernel(const PixelParameters * __restrict__ params,
                                              const PixelRadius * __restrict__ radii,
                                              float * __restrict__ out,
                                              DeviceGeometry       g,
                                              unsigned long long * skipped)
{
  constexpr int           TY = kBlockY * PY;
  constexpr int           P = PY * TZ;
  extern __shared__ float plane[];
  __shared__ int          tileRadius[3];

  const int       lx = threadIdx.x, ly = threadIdx.y;
  const int       tid = ly * kBlockX + lx;
  const long long x0 = static_cast<long long>(blockIdx.x) * kBlockX;
  const long long y0 = static_cast<long long>(blockIdx.y) * TY;
  const long long z0 = static_cast<long long>(blockIdx.z) * TZ;

  if (tid < 3)
  {
    tileRadius[tid] = 0;
  }
  __syncthreads();
  // this thread's pixels: (x0 + lx, y0 + ly + 8 j, z0 + q), p = q PY + j,
  // kept in shared memory (registers are for the x weights)
  __shared__ PixelParameters pixelParameters[P * kThreads];
  __shared__ PixelRadius     pixelRadius[P * kThreads];
  bool                       any = false;
#pragma unroll
  for (int q = 0; q < TZ; ++q)
  {
#pragma unroll
    for (int j = 0; j < PY; ++j)
    {
      const int       p = q * PY + j;
      const long long x = x0 + lx, y = y0 + ly + kBlockY * j, z = z0 + q;
      PixelParameters pp;
      PixelRadius     pr;
      pp.value = 0.0f;
      pr.r[0] = pr.r[1] = pr.r[2] = pr.r[3] = 0;
      if (x < g.inSize[0] && y < g.inSize[1] && z < g.inSize[2])
      {
        const long long i = x + g.inSize[0] * (y + g.inSize[1] * z);
        pp = params[i];
        if (pp.value != 0.0f)
        {
          pr = radii[i];
          any = true;
          atomicMax(&tileRadius[0], pr.r[0]);
          atomicMax(&tileRadius[1], pr.r[1]);
          atomicMax(&tileRadius[2], pr.r[2]);
        }
      }
      pixelParameters[p * kThreads + tid] = pp;
      pixelRadius[p * kThreads + tid] = pr;
    }
  }
  if (!__syncthreads_or(any)) // also makes the pixels and the radius visible
  {
    if (tid == 0)
    {
      atomicAdd(skipped, 1ULL);
    }
    return; // a tile of zeros contributes nothing
  }
  __syncthreads();
  const int Rx = tileRadius[0], Ry = tileRadius[1], Rz = tileRadius[2];
  const int stride = kBlockX + 2 * Rx;
  const int rows = TY + 2 * Ry;
  const int planeCount = stride * rows;
  for (int e = tid; e < planeCount; e += kThreads)
  {
    plane[e] = 0.0f;
  }

  // output planes this tile reaches, clipped to the output box
  const long long  zFirst = max(z0 - Rz, g.outStart[2]);
  const long long  zLast = min(z0 + TZ - 1 + Rz, g.outStart[2] + g.outSize[2] - 1);
  volatile float * vplane = plane;
  for (long long zo = zFirst; zo <= zLast; ++zo)
  {
    __syncthreads(); // the plane is clear
#pragma unroll 1
    for (int p = 0; p < P; ++p)
    {
      const int             q = p / PY, j = p % PY;
      const PixelParameters pp = pixelParameters[p * kThreads + tid];
      const PixelRadius     pr = pixelRadius[p * kThreads + tid];
      const int             dz = static_cast<int>(zo - (z0 + q));
      const int             adz = dz < 0 ? -dz : dz;
      // Warp-synchronous: every thread walks the tile's row offsets so that
      // the block stays in step; pixels that do not reach write nothing.
      const bool reaches = pp.value != 0.0f && adz <= pr.r[2];
      if (!WarpSynchronous && !reaches)
      {
        continue;
      }
      const float a = reaches ? pp.value * Weight(adz, pp.k[2]) : 0.0f;
      float       wx[RC + 1];
#pragma unroll
      for (int d = 0; d <= RC; ++d)
      {
        wx[d] = (reaches && d <= pr.r[0]) ? Weight(d, pp.k[0]) : 0.0f;
      }
      const int rx = reaches ? pr.r[0] : -1;
      const int ry = WarpSynchronous ? Ry : pr.r[1];
      const int cy = ly + kBlockY * j + Ry; // this pixel's row in the plane
      const int cx = lx + Rx;
      for (int d = 0; d <= ry; ++d)
      {
        const bool  rowReached = reaches && d <= pr.r[1];
        const float b = rowReached ? a * Weight(d, pp.k[1]) : 0.0f;
        for (int sign = (d == 0 ? 1 : -1); sign <= 1; sign += 2)
        {
          const int row = cy + sign * d;
          if constexpr (WarpSynchronous)
          {
            __syncthreads(); // all warps are at the same row offset
#pragma unroll
            for (int dx = -RC; dx <= RC; ++dx)
            {
              const int adx = dx < 0 ? -dx : dx;
              if (rowReached && adx <= rx)
              {
                vplane[row * stride + cx + dx] = vplane[row * stride + cx + dx] + b * wx[adx];
              }
              __syncwarp();
            }
          }
          else
          {
            if (rowReached)
            {
              float * target = plane + row * stride + cx;
#pragma unroll
              for (int dx = -RC; dx <= RC; ++dx)
              {
                const int adx = dx < 0 ? -dx : dx;
                if (adx <= rx)
                {
                  atomicAdd(target + dx, b * wx[adx]);
                }
              }
            }
          }
        }
      }
    }
    __syncthreads(); // the plane is complete
    // add the plane to the output (clipped to the output box) and clear it
    const long long outZ = zo - g.outStart[2];
    for (int e = tid; e < planeCount; e += kThreads)
    {
      const float v = plane[e];
      if (!(v == 0.0f)) // also a NaN
      {
        plane[e] = 0.0f;
        const long long ox = x0 - Rx + e % stride - g.outStart[0];
        const long long oy = y0 - Ry + e / stride - g.outStart[1];
        if (ox >= 0 && ox < g.outSize[0] && oy >= 0 && oy < g.outSize[1])
        {
          atomicAdd(out + ox + g.outSize[0] * (oy + g.outSize[1] * outZ), v);
        }
      }
    }
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
MaxSharedBytesOptin()
{
  int device = 0, value = 0;
  CIF_CUDA_CHECK(cudaGetDevice(&device));
  CIF_CUDA_CHECK(cudaDeviceGetAttribute(&value, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return value;
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

template <int PY, int TZ, int RC, bool WS>
void
LaunchTile(const PixelParameters * params,
           const PixelRadius *     radii,
           float *                 out,
           const DeviceGeometry &  g,
           int                     sharedBytes,
           unsigned long long *    skipped)
{
  auto kernel = ScatterTileKernel<PY, TZ, RC, WS>;
  CIF_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, sharedBytes));
  const dim3 grid(static_cast<unsigned>((g.inSize[0] + kBlockX - 1) / kBlockX),
                  static_cast<unsigned>((g.inSize[1] + kBlockY * PY - 1) / (kBlockY * PY)),
                  static_cast<unsigned>((g.inSize[2] + TZ - 1) / TZ));
  kernel<<<grid, dim3(kBlockX, kBlockY), sharedBytes, ::cif::Stream()>>>(params, radii, out, g, skipped);
  CIF_CUDA_CHECK_LAUNCH("ScatterTileKernel");
}

template <int PY, int TZ, bool WS>
void
LaunchTileClass(int                     rc,
                const PixelParameters * params,
                const PixelRadius *     radii,
                float *                 out,
                const DeviceGeometry &  g,
                int                     sharedBytes,
                unsigned long long *    skipped)
{
  switch (rc)
  {
    case 2:
      return LaunchTile<PY, TZ, 2, WS>(params, radii, out, g, sharedBytes, skipped);
    case 4:
      return LaunchTile<PY, TZ, 4, WS>(params, radii, out, g, sharedBytes, skipped);
    case 8:
      return LaunchTile<PY, TZ, 8, WS>(params, radii, out, g, sharedBytes, skipped);
    case 16:
      return LaunchTile<PY, TZ, 16, WS>(params, radii, out, g, sharedBytes, skipped);
    default:
      return LaunchTile<PY, TZ, 32, WS>(params, radii, out, g, sharedBytes, skipped);
  }
}

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
      std::ostringstream why;
      why << "sigma";
      if (sigma.axis[1] != nullptr || sigma.axis[2] != nullptr)
      {
        why << " (axis " << a << " map)";
      }
      why << " at pixel " << rec.firstBad << " is " << v;
      if (std::isfinite(v) && v >= 0.0f)
      {
        why << ", whose radius ceil(" << p.cutoff << " x " << s << " samples) exceeds the largest accepted, "
            << KernelSuperpositionMaxRadius;
      }
      else
      {
        why << "; sigmas must be finite and not negative";
      }
      throw std::invalid_argument(why.str());
    }
  }
  throw std::invalid_argument("a sigma is negative, not finite, or too large");
}

PrepareRecord
ReadRecord(itk::CudaDeviceBuffer & buffer)
{
  PrepareRecord rec;
  CIF_CUDA_CHECK(
    cudaMemcpyAsync(&rec, buffer.GetPointer(), sizeof(PrepareRecord), cudaMemcpyDeviceToHost, ::cif::Stream()));
  CIF_CUDA_SYNCHRONIZE_STREAM();
  return rec;
}

void
ClearRecord(itk::CudaDeviceBuffer & buffer)
{
  PrepareRecord rec;
  rec.radius[0] = rec.radius[1] = rec.radius[2] = 0;
  rec.firstBad = ULLONG_MAX;
  rec.badAxis = -1;
  rec.nonZero = 0;
  CIF_CUDA_CHECK(
    cudaMemcpyAsync(buffer.GetPointer(), &rec, sizeof(PrepareRecord), cudaMemcpyHostToDevice, ::cif::Stream()));
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
  itk::CudaDeviceBuffer record(sizeof(PrepareRecord));
  ClearRecord(record);
  const long long count = g.InputCount();
  RadiusKernel<<<GridFor(count), 256, 0, ::cif::Stream()>>>(sigma.Get(0),
                                                            sigma.Get(1),
                                                            sigma.Get(2),
                                                            count,
                                                            g.dimension,
                                                            ToDevice(p),
                                                            static_cast<PrepareRecord *>(record.GetPointer()));
  CIF_CUDA_CHECK_LAUNCH("RadiusKernel");
  const PrepareRecord rec = ReadRecord(record);
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
  const long long       count = g.InputCount();
  itk::CudaDeviceBuffer record(sizeof(PrepareRecord));
  itk::CudaDeviceBuffer params(static_cast<std::size_t>(count) * sizeof(PixelParameters));
  itk::CudaDeviceBuffer radii(static_cast<std::size_t>(count) * sizeof(PixelRadius));
  ClearRecord(record);
  auto * pp = static_cast<PixelParameters *>(params.GetPointer());
  auto * pr = static_cast<PixelRadius *>(radii.GetPointer());
  auto * rp = static_cast<PrepareRecord *>(record.GetPointer());
  PrepareKernel<TIn><<<GridFor(count), 256, 0, ::cif::Stream()>>>(
    input, sigma.Get(0), sigma.Get(1), sigma.Get(2), count, g.dimension, ToDevice(p), pp, pr, rp);
  CIF_CUDA_CHECK_LAUNCH("PrepareKernel");
  const PrepareRecord rec = ReadRecord(record);
  if (rec.firstBad != ULLONG_MAX)
  {
    ThrowBadSigma(sigma, rec, p, g.dimension);
  }
  const int      R[3] = { rec.radius[0], rec.radius[1], rec.radius[2] };
  DeviceGeometry dg = ToDevice(g);

  // choose the method
  KernelSuperpositionMethod method = p.method;
  const bool                is3D = g.dimension == 3;
  const int                 py = is3D ? 1 : 2, tz = is3D ? 4 : 1;
  const long long           planeFloats =
    static_cast<long long>(kBlockX + 2 * R[0]) * (kBlockY * py + 2 * static_cast<long long>(R[1]));
  const long long    sharedBytes = planeFloats * static_cast<long long>(sizeof(float));
  const int          rc = RadiusClass(std::max(R[0], 1));
  std::ostringstream note;
  std::string        tileProblem;
  if (rc < 0)
  {
    tileProblem = "the largest x radius, " + std::to_string(R[0]) + ", exceeds the tile kernel's " +
                  std::to_string(kLargestRadiusClass);
  }
  else if (sharedBytes > MaxSharedBytesOptin())
  {
    tileProblem = "the tile plane (" + std::to_string(sharedBytes) + " bytes) exceeds the device's shared memory";
  }
  if (method == KernelSuperpositionMethod::Automatic)
  {
    method = KernelSuperpositionMethod::Scatter;
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

  itk::CudaDeviceBuffer skippedBuffer(sizeof(unsigned long long));
  auto *                skipped = static_cast<unsigned long long *>(skippedBuffer.GetPointer());
  CIF_CUDA_CHECK(cudaMemsetAsync(skipped, 0, sizeof(unsigned long long), ::cif::Stream()));
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
      const int  bytes = static_cast<int>(sharedBytes);
      if (is3D)
      {
        ws ? LaunchTileClass<1, 4, true>(rc, pp, pr, output, dg, bytes, skipped)
           : LaunchTileClass<1, 4, false>(rc, pp, pr, output, dg, bytes, skipped);
      }
      else
      {
        ws ? LaunchTileClass<2, 1, true>(rc, pp, pr, output, dg, bytes, skipped)
           : LaunchTileClass<2, 1, false>(rc, pp, pr, output, dg, bytes, skipped);
      }
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
CIF_INSTANTIATE_KS_CUDA(unsigned char)
CIF_INSTANTIATE_KS_CUDA(short)
CIF_INSTANTIATE_KS_CUDA(unsigned short)
CIF_INSTANTIATE_KS_CUDA(float)

} // namespace cif
