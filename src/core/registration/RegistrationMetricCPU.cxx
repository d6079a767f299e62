/*=========================================================================
 *  CudaImageFilters: the registration metric core on the CPU, and the
 *  validation of its jobs (shared with the GPU core).
 *=========================================================================*/
#include "cif/RegistrationMetric.h"
#include "cifMetricPoint.h"
#include "cifParallelFor.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace cif
{

std::string
ValidateDenseMetricJob(const DenseMetricJob & job)
{
  std::ostringstream why;
  if (job.dimension != 2 && job.dimension != 3)
  {
    why << "the metric core takes 2 or 3 dimensions, not " << job.dimension;
    return why.str();
  }
  if (job.kind != MetricKind::MeanSquares && job.kind != MetricKind::Correlation)
  {
    return "unknown metric kind";
  }
  const MetricImage * images[3] = { &job.fixed, &job.moving, &job.movingGradient };
  const char *        names[3] = { "fixed image", "moving image", "moving image gradient" };
  const bool gradientImage = job.derivative && !job.centralDifferences;
  for (int i = 0; i < (gradientImage ? 3 : 2); ++i)
  {
    if (images[i]->values == nullptr)
    {
      why << "the " << names[i] << " has no buffer";
      return why.str();
    }
    for (int a = 0; a < 3; ++a)
    {
      if (images[i]->size[a] < 1 || (a >= job.dimension && images[i]->size[a] != 1))
      {
        why << "the " << names[i] << " has an invalid size on axis " << a << " (" << images[i]->size[a] << ")";
        return why.str();
      }
    }
  }
  for (int a = 0; a < 3; ++a)
  {
    if (job.virtualSize[a] < 0 || (a >= job.dimension && job.virtualSize[a] != 1))
    {
      why << "the virtual region has an invalid size on axis " << a << " (" << job.virtualSize[a] << ")";
      return why.str();
    }
  }
  if (gradientImage)
  {
    for (int a = 0; a < job.dimension; ++a)
    {
      if (job.movingGradient.size[a] != job.moving.size[a] || job.movingGradient.start[a] != job.moving.start[a] ||
          job.movingGradient.origin[a] != job.moving.origin[a])
      {
        return "the moving image gradient is not on the moving image's grid";
      }
      for (int k = 0; k < job.dimension; ++k)
      {
        if (job.movingGradient.pointToIndex[a][k] != job.moving.pointToIndex[a][k])
        {
          return "the moving image gradient is not on the moving image's grid";
        }
      }
    }
  }
  return {};
}

namespace
{

template <int D, typename TPixel, metric::Pass P>
void
RunPass(const DenseMetricJob & job, const double * means, MetricMoments & moments, int numberOfThreads)
{
  constexpr int      n = metric::SumCount<D, P>();
  const std::int64_t count = job.virtualSize[0] * job.virtualSize[1] * job.virtualSize[2];
  // fixed chunks, summed in chunk order: the same result for any thread count
  const std::int64_t  chunk = 4096;
  const std::int64_t  chunks = (count + chunk - 1) / chunk;
  std::vector<double> partial(static_cast<std::size_t>(chunks) * n, 0.0);
  ParallelFor(chunks,
              numberOfThreads,
              [&](std::int64_t first, std::int64_t last)
              {
                for (std::int64_t b = first; b < last; ++b)
                {
                  double *           sums = partial.data() + b * n;
                  const std::int64_t end = std::min(count, (b + 1) * chunk);
                  for (std::int64_t i = b * chunk; i < end; ++i)
                  {
                    metric::AccumulatePoint<D, TPixel, P>(job, i, sums, means);
                  }
                }
              });
  double total[n] = {};
  for (std::int64_t b = 0; b < chunks; ++b)
  {
    for (int s = 0; s < n; ++s)
    {
      total[s] += partial[b * n + s];
    }
  }
  metric::StoreSums<D, P>(total, moments);
}

template <int D, typename TPixel>
void
RunCPU(const DenseMetricJob & job, MetricMoments & moments, int numberOfThreads)
{
  moments = MetricMoments{};
  if (job.kind == MetricKind::MeanSquares)
  {
    RunPass<D, TPixel, metric::Pass::MeanSquares>(job, nullptr, moments, numberOfThreads);
    return;
  }
  RunPass<D, TPixel, metric::Pass::CorrelationMeans>(job, nullptr, moments, numberOfThreads);
  const double means[2] = { moments.fixedMean, moments.movingMean };
  RunPass<D, TPixel, metric::Pass::Correlation>(job, means, moments, numberOfThreads);
}

} // namespace

template <typename TPixel>
void
DenseMetricMomentsCPU(const DenseMetricJob & job, MetricMoments & moments, int numberOfThreads)
{
  const std::string problem = ValidateDenseMetricJob(job);
  if (!problem.empty())
  {
    throw std::invalid_argument("DenseMetricMomentsCPU: " + problem);
  }
  if (job.dimension == 2)
  {
    RunCPU<2, TPixel>(job, moments, numberOfThreads);
  }
  else
  {
    RunCPU<3, TPixel>(job, moments, numberOfThreads);
  }
}

template void
DenseMetricMomentsCPU<float>(const DenseMetricJob &, MetricMoments &, int);
template void
DenseMetricMomentsCPU<double>(const DenseMetricJob &, MetricMoments &, int);

} // namespace cif
