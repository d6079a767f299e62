/*=========================================================================
 *  CudaImageFilters: CUDA kernels and launcher of the registration metric
 *  core (dense virtual domain, affine-map transforms).
 *
 *  One thread per virtual point (grid-stride loop) runs the per-point
 *  arithmetic of cifMetricPoint.h (the CPU core's) into register sums;
 *  each block reduces them (warp shuffles, then one warp over the block's
 *  warps) into its row of a partial-sum buffer, and a second kernel adds
 *  the rows in block order, so the result does not depend on scheduling.
 *  Per evaluation only the job goes up (a kernel argument) and the sums
 *  come down (14 doubles in 3D for mean squares; correlation runs a
 *  means pass of 3 sums, then one of 28). This file is compiled without fused
 *  multiply-adds (src/CMakeLists.txt), as the CPU core's arithmetic.
 *=========================================================================*/
#include "cif/CudaError.h"
#include "cif/PooledBuffer.h"
#include "cif/RegistrationMetric.h"
#include "cifCudaStream.h"
#include "cifMetricPoint.h"

#include <cuda_runtime.h>
#include <algorithm>
#include <stdexcept>

namespace cif
{

bool
DenseMetricCUDAIsCompiled()
{
  return true;
}

namespace
{

constexpr int kThreads = 256;

template <int D, typename TPixel, metric::Pass P>
__global__ void __launch_bounds__(kThreads)
  DenseMetricKernel(DenseMetricJob job, std::int64_t count, double * partial, double meanFixed, double meanMoving)
{
  constexpr int n = metric::SumCount<D, P>();
  const double  means[2] = { meanFixed, meanMoving };
  double        sums[n];
#pragma unroll
  for (int s = 0; s < n; ++s)
  {
    sums[s] = 0.0;
  }
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
  {
    metric::AccumulatePoint<D, TPixel, P>(job, i, sums, means);
  }
  __shared__ double warpSums[kThreads / 32][n];
  const int         lane = threadIdx.x & 31;
  const int         warp = threadIdx.x >> 5;
#pragma unroll
  for (int s = 0; s < n; ++s)
  {
    double v = sums[s];
    for (int offset = 16; offset > 0; offset >>= 1)
    {
      v += __shfl_down_sync(0xffffffffu, v, offset);
    }
    if (lane == 0)
    {
      warpSums[warp][s] = v;
    }
  }
  __syncthreads();
  if (threadIdx.x < n)
  {
    double v = 0.0;
    for (int w = 0; w < kThreads / 32; ++w)
    {
      v += warpSums[w][threadIdx.x];
    }
    partial[blockIdx.x * static_cast<std::int64_t>(n) + threadIdx.x] = v;
  }
}

__global__ void
AddPartialsKernel(const double * partial, int blocks, int n, double * total)
{
  const int s = threadIdx.x;
  if (s < n)
  {
    double v = 0.0;
    for (int b = 0; b < blocks; ++b)
    {
      v += partial[b * static_cast<std::int64_t>(n) + s];
    }
    total[s] = v;
  }
}

template <int D, typename TPixel, metric::Pass P>
void
RunPass(const DenseMetricJob & job, const double means[2], MetricMoments & moments)
{
  constexpr int      n = metric::SumCount<D, P>();
  const std::int64_t count = job.virtualSize[0] * job.virtualSize[1] * job.virtualSize[2];
  int                device = 0;
  CIF_CUDA_CHECK(cudaGetDevice(&device));
  int sms = 0;
  CIF_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const std::int64_t wanted = (count + kThreads - 1) / kThreads;
  const int          blocks = static_cast<int>(std::min<std::int64_t>(wanted, std::int64_t{ 8 } * std::max(1, sms)));
  const cudaStream_t stream = cif::Stream();
  PooledBuffer       partial((static_cast<std::size_t>(blocks) + 1) * n * sizeof(double), stream);
  double *           partialRows = static_cast<double *>(partial.GetPointer());
  double *           total = partialRows + static_cast<std::size_t>(blocks) * n;
  DenseMetricKernel<D, TPixel, P><<<blocks, kThreads, 0, stream>>>(job, count, partialRows, means[0], means[1]);
  CIF_CUDA_CHECK_LAUNCH("DenseMetricKernel");
  AddPartialsKernel<<<1, 32, 0, stream>>>(partialRows, blocks, n, total);
  CIF_CUDA_CHECK_LAUNCH("AddPartialsKernel");
  double host[n];
  CIF_CUDA_CHECK(cudaMemcpyAsync(host, total, sizeof(host), cudaMemcpyDeviceToHost, stream));
  CIF_CUDA_CHECK(cudaStreamSynchronize(stream));
  metric::StoreSums<D, P>(host, moments);
}

template <int D, typename TPixel>
void
Run(const DenseMetricJob & job, MetricMoments & moments)
{
  moments = MetricMoments{};
  const std::int64_t count = job.virtualSize[0] * job.virtualSize[1] * job.virtualSize[2];
  if (count == 0)
  {
    return;
  }
  double means[2] = { 0.0, 0.0 };
  if (job.kind == MetricKind::MeanSquares)
  {
    RunPass<D, TPixel, metric::Pass::MeanSquares>(job, means, moments);
    return;
  }
  RunPass<D, TPixel, metric::Pass::CorrelationMeans>(job, means, moments);
  means[0] = moments.fixedMean;
  means[1] = moments.movingMean;
  RunPass<D, TPixel, metric::Pass::Correlation>(job, means, moments);
}

} // namespace

template <typename TPixel>
void
DenseMetricMomentsCUDA(const DenseMetricJob & job, MetricMoments & moments)
{
  const std::string problem = ValidateDenseMetricJob(job);
  if (!problem.empty())
  {
    throw std::invalid_argument("DenseMetricMomentsCUDA: " + problem);
  }
  if (job.dimension == 2)
  {
    Run<2, TPixel>(job, moments);
  }
  else
  {
    Run<3, TPixel>(job, moments);
  }
}

template void
DenseMetricMomentsCUDA<float>(const DenseMetricJob &, MetricMoments &);
template void
DenseMetricMomentsCUDA<double>(const DenseMetricJob &, MetricMoments &);

} // namespace cif
