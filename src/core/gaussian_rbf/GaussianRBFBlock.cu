/*=========================================================================
 *  CudaImageFilters: the seed's block mode of GRBF interpolation on the GPU
 *  (see GrbfBlockJob in cifGaussianRBF.h). The block system (the same for
 *  every block) is factored once by cuSOLVER (getrf: LU with partial
 *  pivoting, the seed's Gaussian elimination) in float32 or double, every
 *  block's pixels are the right-hand sides of one getrs, and each output is
 *  evaluated by one thread from its one or two blocks per axis.
 *=========================================================================*/
#include "cif/CudaError.h"
#include "cifCudaLibraryHandle.h"
#include "cifCudaStream.h"
#include "cif/GaussianRBF.h"
#include "cifPixelLists.h"
#include "cifGaussianRBFDetail.h"
#include "cif/Runtime.h"

#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace cif
{
namespace
{

void
SolverCheck(cusolverStatus_t status, const char * what)
{
  if (status != CUSOLVER_STATUS_SUCCESS)
  {
    if (status == CUSOLVER_STATUS_ALLOC_FAILED)
    {
      throw CudaOutOfMemory(static_cast<int>(status), "cuSOLVER could not allocate", what);
    }
    throw CudaFailure(static_cast<int>(status), "cuSOLVER error " + std::to_string(static_cast<int>(status)), what);
  }
}

/** The calling thread's cuSOLVER handle on the current stream. */
cusolverDnHandle_t
SolverHandle()
{
  return CurrentLibraryHandle<cusolverDnHandle_t, cusolverStatus_t>(&cusolverDnCreate,
                                                                    &cusolverDnDestroy,
                                                                    &cusolverDnSetStream,
                                                                    &SolverCheck,
                                                                    "cusolverDnCreate",
                                                                    "cusolverDnSetStream");
}

cusolverStatus_t
GetrfBufferSize(cusolverDnHandle_t h, int n, float * A, int * lwork)
{
  return cusolverDnSgetrf_bufferSize(h, n, n, A, n, lwork);
}
cusolverStatus_t
GetrfBufferSize(cusolverDnHandle_t h, int n, double * A, int * lwork)
{
  return cusolverDnDgetrf_bufferSize(h, n, n, A, n, lwork);
}
cusolverStatus_t
Getrf(cusolverDnHandle_t h, int n, float * A, float * work, int * ipiv, int * info)
{
  return cusolverDnSgetrf(h, n, n, A, n, work, ipiv, info);
}
cusolverStatus_t
Getrf(cusolverDnHandle_t h, int n, double * A, double * work, int * ipiv, int * info)
{
  return cusolverDnDgetrf(h, n, n, A, n, work, ipiv, info);
}
cusolverStatus_t
Getrs(cusolverDnHandle_t h, int n, int nrhs, const float * A, const int * ipiv, float * B, int * info)
{
  return cusolverDnSgetrs(h, CUBLAS_OP_N, n, nrhs, A, n, ipiv, B, n, info);
}
cusolverStatus_t
Getrs(cusolverDnHandle_t h, int n, int nrhs, const double * A, const int * ipiv, double * B, int * info)
{
  return cusolverDnDgetrs(h, CUBLAS_OP_N, n, nrhs, A, n, ipiv, B, n, info);
}

struct BlockGeometry
{
  GrbfBlockAxis ax[3];
  int           dimension;
  long long     inSize[3];
  long long     outSize[3];
  double        first[3], step[3], inv2s2[3];
  double        lo, hi, defaultValue;
};

template <typename T, typename TAcc>
__global__ void
GatherBlocks(const T * input, TAcc * F, BlockGeometry g, int N, int blocks)
{
  const long long idx = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= static_cast<long long>(N) * blocks)
  {
    return;
  }
  const int i = static_cast<int>(idx % N);
  const int b = static_cast<int>(idx / N);
  const int kx = b % g.ax[0].count, ky = (b / g.ax[0].count) % g.ax[1].count, kz = b / (g.ax[0].count * g.ax[1].count);
  const int x = i % g.ax[0].B, y = (i / g.ax[0].B) % g.ax[1].B, z = i / (g.ax[0].B * g.ax[1].B);
  const long long sx = GrbfBlockStart(g.ax[0], kx) + x, sy = GrbfBlockStart(g.ax[1], ky) + y,
                  sz = GrbfBlockStart(g.ax[2], kz) + z;
  F[idx] = static_cast<TAcc>(input[(sz * g.inSize[1] + sy) * g.inSize[0] + sx]);
}

constexpr int kMaxBlockAxis = 128; // per-axis Gaussians kept in local memory

template <typename T, typename TAcc>
__global__ void
EvaluateBlocks(const TAcc * A, T * output, BlockGeometry g, int N)
{
  const long long count = g.outSize[0] * g.outSize[1] * g.outSize[2];
  const long long o = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (o >= count)
  {
    return;
  }
  const long long idx[3] = { o % g.outSize[0], (o / g.outSize[0]) % g.outSize[1], o / (g.outSize[0] * g.outSize[1]) };
  double          p[3] = { 0, 0, 0 };
  int             k[3][2] = {};
  double          w[3][2] = { { 1, 0 }, { 1, 0 }, { 1, 0 } };
  int             nk[3] = { 1, 1, 1 };
  for (int a = 0; a < g.dimension; ++a)
  {
    p[a] = g.first[a] + static_cast<double>(idx[a]) * g.step[a];
    nk[a] = GrbfBlocksAt(g.ax[a], p[a], k[a], w[a]);
    if (nk[a] == 0)
    {
      output[o] = static_cast<T>(g.defaultValue);
      return;
    }
  }
  TAcc   gx[kMaxBlockAxis];
  double value = 0;
  for (int cz = 0; cz < nk[2]; ++cz)
  {
    for (int cy = 0; cy < nk[1]; ++cy)
    {
      for (int cx = 0; cx < nk[0]; ++cx)
      {
        const double sx = static_cast<double>(GrbfBlockStart(g.ax[0], k[0][cx]));
        const double sy = static_cast<double>(GrbfBlockStart(g.ax[1], k[1][cy]));
        const double sz = static_cast<double>(GrbfBlockStart(g.ax[2], k[2][cz]));
        for (int i = 0; i < g.ax[0].B; ++i)
        {
          const double d = p[0] - (sx + i);
          gx[i] = static_cast<TAcc>(exp(-d * d * g.inv2s2[0]));
        }
        const int    b = (k[2][cz] * g.ax[1].count + k[1][cy]) * g.ax[0].count + k[0][cx];
        const TAcc * c = A + static_cast<long long>(b) * N;
        TAcc         total = 0;
        int          i = 0;
        for (int iz = 0; iz < g.ax[2].B; ++iz)
        {
          const double dz = p[2] - (sz + iz);
          const TAcc   gz = g.dimension > 2 ? static_cast<TAcc>(exp(-dz * dz * g.inv2s2[2])) : TAcc(1);
          TAcc         plane = 0;
          for (int iy = 0; iy < g.ax[1].B; ++iy)
          {
            const double dy = p[1] - (sy + iy);
            const TAcc   gy = g.dimension > 1 ? static_cast<TAcc>(exp(-dy * dy * g.inv2s2[1])) : TAcc(1);
            TAcc         row = 0;
            for (int ix = 0; ix < g.ax[0].B; ++ix, ++i)
            {
              row += gx[ix] * c[i];
            }
            plane += gy * row;
          }
          total += gz * plane;
        }
        value += w[0][cx] * w[1][cy] * w[2][cz] * static_cast<double>(total);
      }
    }
  }
  output[o] = GrbfConvertValue<T>(value, g.lo, g.hi, g.defaultValue);
}

int
Grid(long long count, int threads)
{
  return static_cast<int>((count + threads - 1) / threads);
}

template <typename T, typename TAcc>
void
RunBlocks(const T * input, T * output, const GrbfBlockJob & job)
{
  BlockGeometry g{};
  g.dimension = job.dimension;
  for (int a = 0; a < 3; ++a)
  {
    g.ax[a] = MakeGrbfBlockAxis(job, a);
    g.inSize[a] = a < job.dimension ? job.inputSize[a] : 1;
    g.outSize[a] = a < job.dimension ? job.outputSize[a] : 1;
    g.first[a] = job.first[a];
    g.step[a] = job.step[a];
    g.inv2s2[a] = 1.0 / (2.0 * job.sigma[a] * job.sigma[a]);
  }
  if (g.ax[0].B > kMaxBlockAxis)
  {
    throw std::invalid_argument("GrbfBlockCUDA: blocks of at most " + std::to_string(kMaxBlockAxis) + " nodes along x");
  }
  g.lo = job.outputMin;
  g.hi = job.outputMax;
  g.defaultValue = job.defaultValue;
  const int N = g.ax[0].B * g.ax[1].B * g.ax[2].B;
  const int blocks = g.ax[0].count * g.ax[1].count * g.ax[2].count;

  const std::vector<TAcc> phi = GrbfBlockGram<TAcc>(job, g.ax);
  cif::DeviceBuffer   dPhi(phi.size() * sizeof(TAcc)), dF(static_cast<std::size_t>(N) * blocks * sizeof(TAcc)),
    dPivots(static_cast<std::size_t>(N) * sizeof(int)), dInfo(sizeof(int));
  dPhi.CopyFromHost(phi.data(), phi.size() * sizeof(TAcc));
  auto * Phi = static_cast<TAcc *>(dPhi.GetPointer());
  auto * F = static_cast<TAcc *>(dF.GetPointer());
  auto * pivots = static_cast<int *>(dPivots.GetPointer());
  auto * info = static_cast<int *>(dInfo.GetPointer());

  GatherBlocks<T, TAcc><<<Grid(static_cast<long long>(N) * blocks, 256), 256, 0, Stream()>>>(input, F, g, N, blocks);
  CIF_CUDA_CHECK_LAUNCH("GatherBlocks");

  cusolverDnHandle_t h = SolverHandle();
  int                lwork = 0;
  SolverCheck(GetrfBufferSize(h, N, Phi, &lwork), "cusolverDn<t>getrf_bufferSize");
  cif::DeviceBuffer work(static_cast<std::size_t>(std::max(lwork, 1)) * sizeof(TAcc));
  SolverCheck(Getrf(h, N, Phi, static_cast<TAcc *>(work.GetPointer()), pivots, info), "cusolverDn<t>getrf");
  int hostInfo = 0;
  CIF_CUDA_CHECK(cudaMemcpyAsync(&hostInfo, info, sizeof(int), cudaMemcpyDeviceToHost, Stream()));
  CIF_CUDA_SYNCHRONIZE_STREAM();
  if (hostInfo != 0)
  {
    throw std::domain_error("GRBF block mode: the block system is singular in " +
                            std::string(sizeof(TAcc) == 4 ? "float32" : "double") + " (pivot " +
                            std::to_string(hostInfo) + " of " + std::to_string(N) + " is 0)");
  }
  SolverCheck(Getrs(h, N, blocks, Phi, pivots, F, info), "cusolverDn<t>getrs");

  const long long count = g.outSize[0] * g.outSize[1] * g.outSize[2];
  EvaluateBlocks<T, TAcc><<<Grid(count, 128), 128, 0, Stream()>>>(F, output, g, N);
  CIF_CUDA_CHECK_LAUNCH("EvaluateBlocks");
  CIF_CUDA_SYNCHRONIZE_STREAM();
}

} // namespace

template <typename T>
void
GrbfBlockCUDA(const T * input, T * output, const GrbfBlockJob & job)
{
  const std::string problem = ValidateGrbfBlockJob(job);
  if (!problem.empty())
  {
    throw std::invalid_argument("GrbfBlockCUDA: " + problem);
  }
  if (job.doublePrecision)
  {
    RunBlocks<T, double>(input, output, job);
  }
  else
  {
    RunBlocks<T, float>(input, output, job);
  }
}

#define CIF_INSTANTIATE_GRBF_BLOCK_CUDA(T) template void GrbfBlockCUDA<T>(const T *, T *, const GrbfBlockJob &);
CIF_GRBF_PIXELS(CIF_INSTANTIATE_GRBF_BLOCK_CUDA)

} // namespace cif
