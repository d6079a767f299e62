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
#include <cmath>
#include <vector>
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
  DenseMetricKernel(DenseMetricJob job, std::int64_t count, double * partial, double meanFixed, double meanMoving,
                    const double * pRatio)
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
    metric::AccumulatePoint<D, TPixel, P>(job, i, sums, means, pRatio);
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

/** The Mattes histogram: each block adds its points into a histogram in
 * shared memory (count, fixed marginal, joint PDF), then writes it as its
 * row of `partial`. The entries are 64-bit integers: counts for the count
 * and the fixed marginal, the Parzen weights times `scale` (rounded) for
 * the joint PDF. Integer additions do not depend on their order, so the
 * histogram, and the metric, are the same at every run. */
template <int D, typename TPixel>
__global__ void __launch_bounds__(kThreads)
  MattesHistogramKernel(DenseMetricJob job, std::int64_t count, int entries, double scale,
                        unsigned long long * partial)
{
  extern __shared__ unsigned long long histogram[];
  for (int i = threadIdx.x; i < entries; i += blockDim.x)
  {
    histogram[i] = 0ull;
  }
  __syncthreads();
  const int bins = job.mattes.bins;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
  {
    metric::AccumulateMattesHistogram<D, TPixel>(
      job,
      i,
      [bins, scale](int index, double v)
      {
        const unsigned long long add =
          index <= bins ? 1ull : static_cast<unsigned long long>(__double2ll_rn(v * scale));
        atomicAdd(histogram + index, add);
      });
  }
  __syncthreads();
  for (int i = threadIdx.x; i < entries; i += blockDim.x)
  {
    partial[blockIdx.x * static_cast<std::int64_t>(entries) + i] = histogram[i];
  }
}

/** Adds the blocks' rows (integers, exact), one thread per entry, and
 * converts to double: counts as they are, the joint PDF divided by
 * `scale`. */
__global__ void
AddHistogramRowsKernel(const unsigned long long * partial, int blocks, int entries, int bins, double scale,
                       double * total)
{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < entries)
  {
    unsigned long long v = 0ull;
    for (int b = 0; b < blocks; ++b)
    {
      v += partial[b * static_cast<std::int64_t>(entries) + i];
    }
    total[i] = i <= bins ? static_cast<double>(v) : static_cast<double>(v) / scale;
  }
}

template <int D, typename TPixel>
void
MattesHistogramCUDA(const DenseMetricJob & job, std::vector<double> & histogram)
{
  const int          bins = job.mattes.bins;
  const int          entries = 1 + bins + bins * bins;
  const std::size_t  shared = static_cast<std::size_t>(entries) * sizeof(unsigned long long);
  const std::int64_t count = metric::DomainCount(job);
  // the fixed-point scale: a power of two such that every point adding at
  // most 1 (the Parzen weights of a point sum to 1) to one entry cannot
  // overflow 2^62; 2^-38 resolution up to 2^24 points, 2^-35 at 512^3
  int bits = 0;
  while ((std::int64_t{ 1 } << bits) <= count && bits < 62)
  {
    ++bits;
  }
  const double scale = std::ldexp(1.0, std::max(20, 62 - bits));
  int          device = 0;
  CIF_CUDA_CHECK(cudaGetDevice(&device));
  int sms = 0;
  CIF_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CIF_CUDA_CHECK(cudaFuncSetAttribute(
    MattesHistogramKernel<D, TPixel>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared)));
  const std::int64_t wanted = (count + kThreads - 1) / kThreads;
  const int blocks = static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(wanted, std::int64_t{ 2 } * std::max(1, sms))));
  const cudaStream_t stream = cif::Stream();
  PooledBuffer       partial(static_cast<std::size_t>(blocks) * shared + static_cast<std::size_t>(entries) * sizeof(double),
                       stream);
  auto *             rows = static_cast<unsigned long long *>(partial.GetPointer());
  auto *             total = reinterpret_cast<double *>(rows + static_cast<std::size_t>(blocks) * entries);
  MattesHistogramKernel<D, TPixel><<<blocks, kThreads, shared, stream>>>(job, count, entries, scale, rows);
  CIF_CUDA_CHECK_LAUNCH("MattesHistogramKernel");
  AddHistogramRowsKernel<<<(entries + 255) / 256, 256, 0, stream>>>(rows, blocks, entries, bins, scale, total);
  CIF_CUDA_CHECK_LAUNCH("AddHistogramRowsKernel");
  histogram.assign(entries, 0.0);
  CIF_CUDA_CHECK(cudaMemcpyAsync(
    histogram.data(), total, static_cast<std::size_t>(entries) * sizeof(double), cudaMemcpyDeviceToHost, stream));
  CIF_CUDA_CHECK(cudaStreamSynchronize(stream));
}

template <int D, typename TPixel, metric::Pass P>
void
RunPass(const DenseMetricJob & job, const double means[2], const double * pRatio, MetricMoments & moments)
{
  constexpr int      n = metric::SumCount<D, P>();
  const std::int64_t count = metric::DomainCount(job);
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
  DenseMetricKernel<D, TPixel, P>
    <<<blocks, kThreads, 0, stream>>>(job, count, partialRows, means[0], means[1], pRatio);
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
  const std::int64_t count = metric::DomainCount(job);
  if (count == 0)
  {
    return;
  }
  double means[2] = { 0.0, 0.0 };
  if (job.kind == MetricKind::MeanSquares)
  {
    RunPass<D, TPixel, metric::Pass::MeanSquares>(job, means, nullptr, moments);
    return;
  }
  if (job.kind == MetricKind::MattesMutualInformation)
  {
    std::vector<double> histogram;
    MattesHistogramCUDA<D, TPixel>(job, histogram);
    const std::size_t   tableBytes = static_cast<std::size_t>(job.mattes.bins) * job.mattes.bins * sizeof(double);
    std::vector<double> pRatio(tableBytes / sizeof(double));
    metric::MattesResults(job.mattes, histogram.data(), pRatio.data(), moments);
    if (moments.status == 0 && job.derivative)
    {
      const cudaStream_t stream = cif::Stream();
      PooledBuffer       table(tableBytes, stream);
      CIF_CUDA_CHECK(cudaMemcpyAsync(table.GetPointer(), pRatio.data(), tableBytes, cudaMemcpyHostToDevice, stream));
      const double status = moments.status;
      const double value = moments.value;
      RunPass<D, TPixel, metric::Pass::MattesDerivative>(
        job, means, static_cast<const double *>(table.GetPointer()), moments);
      moments.value = value;
      moments.status = static_cast<int>(status);
    }
    return;
  }
  RunPass<D, TPixel, metric::Pass::CorrelationMeans>(job, means, nullptr, moments);
  means[0] = moments.fixedMean;
  means[1] = moments.movingMean;
  RunPass<D, TPixel, metric::Pass::Correlation>(job, means, nullptr, moments);
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
