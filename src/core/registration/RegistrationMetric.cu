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

#include <cub/device/device_radix_sort.cuh>
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

/** Per-point records of a B-spline derivative pass: the grid cell of the
 * point's support (its first control point, in the grid of cells, size
 * minus 3 per axis; `cells` for a point without a derivative term), the
 * point's number, and `RecordDoubles` doubles: the distances c - start
 * (D), the moving gradient (D) and the weight sets (S). */
struct PointRecords
{
  unsigned int * keys{ nullptr };
  unsigned int * points{ nullptr };
  double *       data{ nullptr };
  unsigned int   cells{ 0 };
};

template <int D, int S>
constexpr int
RecordDoubles()
{
  return 2 * D + S;
}

/** The cell of a support's first control point. */
template <int D>
__device__ __forceinline__ unsigned int
CellOf(const MetricBSpline & b, const std::int64_t start[D])
{
  std::int64_t linear = 0;
  std::int64_t stride = 1;
  for (int a = 0; a < D; ++a)
  {
    linear += start[a] * stride;
    stride *= b.gridSize[a] - 3;
  }
  return static_cast<unsigned int>(linear);
}

/** M: what the job holds (metric::MapModeOf); kRecords: the derivative
 * pass of a B-spline moving transform, which writes the per-point records
 * (separate instances, so that the other passes do not carry their
 * registers). */
template <int D, typename TPixel, metric::Pass P, bool kRecords, metric::MapMode M>
__global__ void __launch_bounds__(kThreads)
  DenseMetricKernel(DenseMetricJob job, std::int64_t count, double * partial, double meanFixed, double meanMoving,
                    const double * pRatio, PointRecords records)
{
  constexpr int n = metric::SumCount<D, P>();
  const double  means[2] = { meanFixed, meanMoving };
  double        sums[n];
#pragma unroll
  for (int s = 0; s < n; ++s)
  {
    sums[s] = 0.0;
  }
  constexpr int S = metric::WeightSets<P>();
  constexpr int R = RecordDoubles<D, S>();
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
  {
    if constexpr (kRecords)
    {
      records.keys[i] = records.cells;
      records.points[i] = static_cast<unsigned int>(i);
      metric::AccumulatePoint<D, TPixel, P, metric::MapMode::BSpline>(
        job,
        i,
        sums,
        means,
        pRatio,
        [&](std::int64_t point, const metric::BSplineSupport<D> & support, const double * w, const double * gradient)
        {
          records.keys[point] = CellOf<D>(job.bspline, support.start);
          double * data = records.data + point * R;
          for (int a = 0; a < D; ++a)
          {
            data[a] = support.offset[a];
            data[D + a] = gradient[a];
          }
          for (int set = 0; set < S; ++set)
          {
            data[2 * D + set] = w[set];
          }
        });
    }
    else
    {
      metric::AccumulatePoint<D, TPixel, P, M>(job, i, sums, means, pRatio);
    }
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

/** The first and one-past-last position of each cell in the sorted keys. */
__global__ void
CellRangesKernel(const unsigned int * keys, std::int64_t count, unsigned int cells, unsigned int * begin,
                 unsigned int * end)
{
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
  {
    const unsigned int k = keys[i];
    if (k >= cells)
    {
      continue;
    }
    if (i == 0 || keys[i - 1] != k)
    {
      begin[k] = static_cast<unsigned int>(i);
    }
    if (i == count - 1 || keys[i + 1] != k)
    {
      end[k] = static_cast<unsigned int>(i + 1);
    }
  }
}

/** One block per grid cell: the sums over the cell's points (in their
 * sorted order, which is the points' order) of w_set w_o grad_d m for each of
 * the support's control points o, axes d and sets: 4^D S D sums per cell,
 * one thread each. */
template <int D, int S>
__global__ void __launch_bounds__(kThreads)
  CellSumsKernel(const unsigned int * points, const double * data, const unsigned int * begin,
                 const unsigned int * end, double * cellSums)
{
  constexpr int R = RecordDoubles<D, S>();
  constexpr int outputs = metric::SupportCount<D>() * S * D;
  __shared__ double weights[kThreads][D][4];
  __shared__ double rest[kThreads][D + S];
  const unsigned int cell = blockIdx.x;
  const unsigned int first = begin[cell];
  const unsigned int last = end[cell];
  double             acc[(outputs + kThreads - 1) / kThreads];
  for (int k = 0; k < (outputs + kThreads - 1) / kThreads; ++k)
  {
    acc[k] = 0.0;
  }
  for (unsigned int chunk = first; chunk < last; chunk += kThreads)
  {
    const unsigned int n = min(static_cast<unsigned int>(kThreads), last - chunk);
    if (threadIdx.x < n)
    {
      const double * record = data + static_cast<std::int64_t>(points[chunk + threadIdx.x]) * R;
      double         offset[D];
      for (int a = 0; a < D; ++a)
      {
        offset[a] = record[a];
      }
      metric::BSplineWeights1D<D>(offset, weights[threadIdx.x]);
      for (int k = 0; k < D + S; ++k)
      {
        rest[threadIdx.x][k] = record[D + k];
      }
    }
    __syncthreads();
    for (int k = 0; k < (outputs + kThreads - 1) / kThreads; ++k)
    {
      const int output = threadIdx.x + k * kThreads;
      if (output < outputs)
      {
        const int o = output / (S * D);
        const int set = (output % (S * D)) / D;
        const int d = output % D;
        double    sum = acc[k];
        for (unsigned int q = 0; q < n; ++q)
        {
          const double weight = metric::BSplineSupportWeight<D>(weights[q], o);
          sum += rest[q][D + set] * (weight * rest[q][d]);
        }
        acc[k] = sum;
      }
    }
    __syncthreads();
  }
  for (int k = 0; k < (outputs + kThreads - 1) / kThreads; ++k)
  {
    const int output = threadIdx.x + k * kThreads;
    if (output < outputs)
    {
      cellSums[static_cast<std::int64_t>(cell) * outputs + output] = acc[k];
    }
  }
}

/** One thread per parameter sum (set, axis d, control point j): the sums
 * of the cells whose support holds j, in a fixed order (support offset o
 * ascending). */
template <int D, int S>
__global__ void
ParameterSumsKernel(MetricBSpline b, const double * cellSums, std::int64_t grid, double * out)
{
  constexpr int      outputs = metric::SupportCount<D>() * S * D;
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= grid * D * S)
  {
    return;
  }
  const int          set = static_cast<int>(i / (grid * D));
  const int          d = static_cast<int>((i / grid) % D);
  const std::int64_t j = i % grid;
  std::int64_t       index[D];
  std::int64_t       rest = j;
  for (int a = 0; a < D; ++a)
  {
    index[a] = rest % b.gridSize[a];
    rest /= b.gridSize[a];
  }
  double sum = 0.0;
  for (int o = 0; o < metric::SupportCount<D>(); ++o)
  {
    std::int64_t cell = 0;
    std::int64_t stride = 1;
    bool         valid = true;
    int          code = o;
    for (int a = 0; a < D; ++a)
    {
      const std::int64_t c = index[a] - (code & 3);
      valid = valid && c >= 0 && c < b.gridSize[a] - 3;
      cell += c * stride;
      stride *= b.gridSize[a] - 3;
      code >>= 2;
    }
    if (valid)
    {
      sum += cellSums[cell * outputs + o * S * D + set * D + d];
    }
  }
  out[i] = sum;
}

/** The Mattes histogram: each block adds its points into a histogram in
 * shared memory (count, fixed marginal, joint PDF), then writes it as its
 * row of `partial`. The entries are 64-bit integers: counts for the count
 * and the fixed marginal, the Parzen weights times `scale` (rounded) for
 * the joint PDF. Integer additions do not depend on their order, so the
 * histogram, and the metric, are the same at every run. */
template <int D, typename TPixel, metric::MapMode M>
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
    metric::AccumulateMattesHistogram<D, TPixel, M>(
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
  void (*kernel)(DenseMetricJob, std::int64_t, int, double, unsigned long long *) = nullptr;
  metric::WithMapMode(job, [&](auto mode) { kernel = MattesHistogramKernel<D, TPixel, decltype(mode)::value>; });
  CIF_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared)));
  const std::int64_t wanted = (count + kThreads - 1) / kThreads;
  const int blocks = static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(wanted, std::int64_t{ 2 } * std::max(1, sms))));
  const cudaStream_t stream = cif::Stream();
  PooledBuffer       partial(static_cast<std::size_t>(blocks) * shared + static_cast<std::size_t>(entries) * sizeof(double),
                       stream);
  auto *             rows = static_cast<unsigned long long *>(partial.GetPointer());
  auto *             total = reinterpret_cast<double *>(rows + static_cast<std::size_t>(blocks) * entries);
  kernel<<<blocks, kThreads, shared, stream>>>(job, count, entries, scale, rows);
  CIF_CUDA_CHECK_LAUNCH("MattesHistogramKernel");
  AddHistogramRowsKernel<<<(entries + 255) / 256, 256, 0, stream>>>(rows, blocks, entries, bins, scale, total);
  CIF_CUDA_CHECK_LAUNCH("AddHistogramRowsKernel");
  histogram.assign(entries, 0.0);
  CIF_CUDA_CHECK(cudaMemcpyAsync(
    histogram.data(), total, static_cast<std::size_t>(entries) * sizeof(double), cudaMemcpyDeviceToHost, stream));
  CIF_CUDA_CHECK(cudaStreamSynchronize(stream));
}

/** Device memory carved from one pooled block, 256-byte aligned. */
class Carver
{
public:
  explicit Carver(char * base)
    : m_Base(base)
  {}
  template <typename T>
  T *
  Take(std::size_t n)
  {
    T * p = reinterpret_cast<T *>(m_Base + m_Used);
    m_Used += (n * sizeof(T) + 255) / 256 * 256;
    return p;
  }

private:
  char *      m_Base;
  std::size_t m_Used{ 0 };
};

template <int D, typename TPixel, metric::Pass P>
void
RunPass(const DenseMetricJob & job, const double means[2], const double * pRatio, MetricMoments & moments,
        const PointRecords & records = PointRecords{});

/** A derivative pass with a B-spline moving transform: the pass writes a
 * record per point, the records are sorted by grid cell (CUB's stable
 * radix sort, so a cell's points keep their order), each cell sums its
 * points' terms for its 4^D control points, and each parameter adds the
 * sums of its cells, in fixed orders throughout. */
template <int D, typename TPixel, metric::Pass P>
void
RunBSplinePass(const DenseMetricJob & job, const double means[2], const double * pRatio, MetricMoments & moments)
{
  constexpr int      S = metric::WeightSets<P>();
  constexpr int      R = RecordDoubles<D, S>();
  constexpr int      outputs = metric::SupportCount<D>() * S * D;
  const std::int64_t count = metric::DomainCount(job);
  const std::int64_t grid = BSplineGridCount(job.bspline);
  std::int64_t       cells = 1;
  for (int a = 0; a < D; ++a)
  {
    cells *= std::max<std::int64_t>(0, job.bspline.gridSize[a] - 3);
  }
  if (count >= (std::int64_t{ 1 } << 32) || cells >= (std::int64_t{ 1 } << 31))
  {
    throw std::invalid_argument("DenseMetricMomentsCUDA: a B-spline derivative over 2^32 points or 2^31 grid cells");
  }
  int endBit = 1;
  while ((std::int64_t{ 1 } << endBit) <= cells)
  {
    ++endBit;
  }
  const cudaStream_t stream = cif::Stream();
  std::size_t        sortBytes = 0;
  CIF_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr,
                                                 sortBytes,
                                                 static_cast<const unsigned int *>(nullptr),
                                                 static_cast<unsigned int *>(nullptr),
                                                 static_cast<const unsigned int *>(nullptr),
                                                 static_cast<unsigned int *>(nullptr),
                                                 static_cast<std::int64_t>(count),
                                                 0,
                                                 endBit,
                                                 stream));
  const auto  n = static_cast<std::size_t>(count);
  const auto  c = static_cast<std::size_t>(std::max<std::int64_t>(cells, 1));
  std::size_t bytes = 0;
  for (std::size_t part : { 4 * n * sizeof(unsigned int), n * R * sizeof(double), 2 * c * sizeof(unsigned int),
                            c * outputs * sizeof(double), sortBytes })
  {
    bytes += (part + 255) / 256 * 256 + 256;
  }
  PooledBuffer memory(bytes, stream);
  Carver       carve(static_cast<char *>(memory.GetPointer()));
  PointRecords records;
  records.keys = carve.Take<unsigned int>(n);
  records.points = carve.Take<unsigned int>(n);
  records.data = carve.Take<double>(n * R);
  records.cells = static_cast<unsigned int>(cells);
  auto * sortedKeys = carve.Take<unsigned int>(n);
  auto * sortedPoints = carve.Take<unsigned int>(n);
  auto * begin = carve.Take<unsigned int>(c);
  auto * end = carve.Take<unsigned int>(c);
  auto * cellSums = carve.Take<double>(c * outputs);
  void * sortSpace = carve.Take<char>(sortBytes);

  RunPass<D, TPixel, P>(job, means, pRatio, moments, records);
  CIF_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(sortSpace,
                                                 sortBytes,
                                                 records.keys,
                                                 sortedKeys,
                                                 records.points,
                                                 sortedPoints,
                                                 static_cast<std::int64_t>(count),
                                                 0,
                                                 endBit,
                                                 stream));
  CIF_CUDA_CHECK(cudaMemsetAsync(begin, 0, c * sizeof(unsigned int), stream));
  CIF_CUDA_CHECK(cudaMemsetAsync(end, 0, c * sizeof(unsigned int), stream));
  if (cells > 0)
  {
    const std::int64_t blocks = std::min<std::int64_t>((count + kThreads - 1) / kThreads, 4096);
    CellRangesKernel<<<static_cast<unsigned int>(blocks), kThreads, 0, stream>>>(
      sortedKeys, count, records.cells, begin, end);
    CIF_CUDA_CHECK_LAUNCH("CellRangesKernel");
    CellSumsKernel<D, S><<<static_cast<unsigned int>(cells), kThreads, 0, stream>>>(
      sortedPoints, records.data, begin, end, cellSums);
    CIF_CUDA_CHECK_LAUNCH("CellSumsKernel");
  }
  const std::int64_t parameters = grid * D * S;
  if (cells > 0)
  {
    ParameterSumsKernel<D, S><<<static_cast<unsigned int>((parameters + 255) / 256), 256, 0, stream>>>(
      job.bspline, cellSums, grid, job.bspline.derivativeSums);
    CIF_CUDA_CHECK_LAUNCH("ParameterSumsKernel");
  }
  else
  {
    CIF_CUDA_CHECK(cudaMemsetAsync(job.bspline.derivativeSums, 0, parameters * sizeof(double), stream));
  }
  CIF_CUDA_CHECK(cudaStreamSynchronize(stream));
}

template <int D, typename TPixel, metric::Pass P>
void
RunPass(const DenseMetricJob & job, const double means[2], const double * pRatio, MetricMoments & moments,
        const PointRecords & records)
{
  if (records.keys == nullptr && job.bspline.coefficients != nullptr && job.derivative &&
      P != metric::Pass::CorrelationMeans)
  {
    RunBSplinePass<D, TPixel, P>(job, means, pRatio, moments);
    return;
  }
  constexpr int      n = metric::SumCount<D, P>();
  const std::int64_t count = metric::DomainCount(job);
  int                device = 0;
  CIF_CUDA_CHECK(cudaGetDevice(&device));
  int sms = 0;
  CIF_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const std::int64_t wanted = (count + kThreads - 1) / kThreads;
  const int          blocks = static_cast<int>(std::min<std::int64_t>(wanted, std::int64_t{ 8 } * std::max(1, sms)));
  const cudaStream_t stream = cif::Stream();
  if (job.field.displacements != nullptr && job.derivative && P != metric::Pass::CorrelationMeans)
  {
    // invalid points keep 0
    CIF_CUDA_CHECK(cudaMemsetAsync(
      job.field.derivative, 0, static_cast<std::size_t>(count) * D * sizeof(double), stream));
  }
  PooledBuffer       partial((static_cast<std::size_t>(blocks) + 1) * n * sizeof(double), stream);
  double *           partialRows = static_cast<double *>(partial.GetPointer());
  double *           total = partialRows + static_cast<std::size_t>(blocks) * n;
  if (records.keys != nullptr)
  {
    DenseMetricKernel<D, TPixel, P, true, metric::MapMode::BSpline>
      <<<blocks, kThreads, 0, stream>>>(job, count, partialRows, means[0], means[1], pRatio, records);
  }
  else
  {
    metric::WithMapMode(job,
                        [&](auto mode)
                        {
                          DenseMetricKernel<D, TPixel, P, false, decltype(mode)::value>
                            <<<blocks, kThreads, 0, stream>>>(job, count, partialRows, means[0], means[1], pRatio, records);
                        });
  }
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
    metric::ScaleForField(job, moments, pRatio);
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
