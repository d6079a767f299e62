/*=========================================================================
 *  CudaImageFilters: the registration metric core on the CPU, and the
 *  validation of its jobs (shared with the GPU core).
 *=========================================================================*/
#include "cif/RegistrationMetric.h"
#include "cifMetricPoint.h"
#include "cifParallelFor.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace cif
{

namespace metric
{

void
MattesResults(const MattesHistogram & h, const double * histogram, double * pRatio, MetricMoments & moments)
{
  const int      bins = h.bins;
  const double   count = histogram[0];
  const double * fixedCounts = histogram + 1;
  const double * joint = histogram + 1 + bins;
  std::fill(pRatio, pRatio + static_cast<std::size_t>(bins) * bins, 0.0);
  moments.count = count;
  moments.value = 0.0;
  moments.status = 0;
  if (count == 0)
  {
    moments.status = 1;
    return;
  }
  // ITK's CompensatedSummation of the joint PDF
  double sum = 0.0;
  double compensation = 0.0;
  for (int i = 0; i < bins * bins; ++i)
  {
    const double y = joint[i] - compensation;
    const double t = sum + y;
    compensation = (t - sum) - y;
    sum = t;
  }
  if (sum < std::numeric_limits<double>::epsilon())
  {
    moments.status = 2;
    return;
  }
  const double        normalization = 1.0 / sum;
  std::vector<double> pdf(joint, joint + static_cast<std::size_t>(bins) * bins);
  std::vector<double> fixedMarginal(fixedCounts, fixedCounts + bins);
  for (auto & v : pdf)
  {
    v *= normalization;
  }
  for (auto & v : fixedMarginal)
  {
    v *= normalization;
  }
  std::vector<double> movingMarginal(bins, 0.0);
  for (int m = 0; m < bins; ++m)
  {
    for (int f = 0; f < bins; ++f)
    {
      movingMarginal[m] += pdf[f * bins + m];
    }
  }
  constexpr double closeToZero = std::numeric_limits<double>::epsilon();
  double           value = 0.0;
  for (int f = 0; f < bins; ++f)
  {
    if (fixedMarginal[f] > closeToZero)
    {
      const double logFixed = std::log(fixedMarginal[f]);
      for (int m = 0; m < bins; ++m)
      {
        const double p = pdf[f * bins + m];
        if (movingMarginal[m] > closeToZero && p > closeToZero)
        {
          const double ratio = std::log(p / movingMarginal[m]);
          value += p * (ratio - logFixed);
          pRatio[f * bins + m] = ratio;
        }
      }
    }
  }
  moments.value = -1.0 * value;
}

} // namespace metric

std::string
ValidateDenseMetricJob(const DenseMetricJob & job)
{
  std::ostringstream why;
  if (job.dimension != 2 && job.dimension != 3)
  {
    why << "the metric core takes 2 or 3 dimensions, not " << job.dimension;
    return why.str();
  }
  if (job.kind != MetricKind::MeanSquares && job.kind != MetricKind::Correlation &&
      job.kind != MetricKind::MattesMutualInformation)
  {
    return "unknown metric kind";
  }
  if (job.kind == MetricKind::MattesMutualInformation)
  {
    if (job.mattes.bins < 5 || job.mattes.bins > kMaxMattesBins)
    {
      why << "the Mattes histogram takes 5 to " << kMaxMattesBins << " bins, not " << job.mattes.bins;
      return why.str();
    }
    if (!(job.mattes.fixedBinSize > 0) || !(job.mattes.movingBinSize > 0))
    {
      return "the Mattes histogram has a bin size that is not positive (a constant image)";
    }
  }
  const MetricImage * images[5] = { &job.fixed, &job.moving, &job.movingGradient, &job.fixedMask.image,
                                     &job.movingMask.image };
  const char *        names[5] = { "fixed image", "moving image", "moving image gradient", "fixed image mask",
                                   "moving image mask" };
  const bool          read[5] = { true, true, job.derivative && !job.centralDifferences,
                                  job.fixedMask.image.values != nullptr, job.movingMask.image.values != nullptr };
  for (int i = 0; i < 5; ++i)
  {
    if (!read[i])
    {
      continue;
    }
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
  if (job.points != nullptr && job.pointCount < 0)
  {
    return "a negative number of sampled points";
  }
  for (int a = 0; a < 3; ++a)
  {
    if (job.virtualSize[a] < 0 || (a >= job.dimension && job.virtualSize[a] != 1))
    {
      why << "the virtual region has an invalid size on axis " << a << " (" << job.virtualSize[a] << ")";
      return why.str();
    }
  }
  if (job.bspline.coefficients != nullptr)
  {
    for (int a = 0; a < 3; ++a)
    {
      if (job.bspline.gridSize[a] < 1 || (a >= job.dimension && job.bspline.gridSize[a] != 1))
      {
        why << "the B-spline grid has an invalid size on axis " << a << " (" << job.bspline.gridSize[a] << ")";
        return why.str();
      }
    }
    if (job.derivative && job.bspline.derivativeSums == nullptr)
    {
      return "a B-spline derivative without a place for its sums";
    }
  }
  if (job.field.displacements != nullptr)
  {
    if (job.bspline.coefficients != nullptr)
    {
      return "a B-spline and a displacement field moving transform at once";
    }
    if (job.kind == MetricKind::Correlation)
    {
      return "a displacement field with the correlation metric (ITK's correlation metric does not support "
             "displacement field transforms)";
    }
    if (job.points != nullptr)
    {
      return "a displacement field with a sampled point set (its derivative has parameters per virtual index)";
    }
    for (int a = 0; a < 3; ++a)
    {
      if (job.field.grid.size[a] < 1 || (a >= job.dimension && job.field.grid.size[a] != 1))
      {
        why << "the displacement field has an invalid size on axis " << a << " (" << job.field.grid.size[a] << ")";
        return why.str();
      }
    }
    if (job.derivative && job.field.derivative == nullptr)
    {
      return "a displacement field derivative without a place for it";
    }
  }
  if (read[2])
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

/** Sums of `n` doubles over `slices` pieces of work: body(slice, sums)
 * adds a slice's contributions into its own row, the slices run on up to
 * `numberOfThreads` threads, and the rows are added in slice order, so the
 * result does not depend on the thread count. */
template <typename TBody>
std::vector<double>
SumOverSlices(std::int64_t slices, std::size_t n, int numberOfThreads, TBody body)
{
  std::vector<double> partial(static_cast<std::size_t>(slices) * n, 0.0);
  ParallelFor(slices,
              numberOfThreads,
              [&](std::int64_t first, std::int64_t last)
              {
                for (std::int64_t b = first; b < last; ++b)
                {
                  body(b, partial.data() + b * n);
                }
              });
  std::vector<double> total(n, 0.0);
  for (std::int64_t b = 0; b < slices; ++b)
  {
    for (std::size_t i = 0; i < n; ++i)
    {
      total[i] += partial[b * n + i];
    }
  }
  return total;
}

/** A pass with a B-spline moving transform: at most 64 slices of the
 * points, each with its own sums and its own per-parameter derivative
 * arrays (S sets of D x gridCount), added in slice order. */
template <int D, typename TPixel, metric::Pass P, int S>
void
RunBSplinePass(const DenseMetricJob & job, const double * means, const double * pRatio, MetricMoments & moments,
               int numberOfThreads)
{
  constexpr int      n = metric::SumCount<D, P>();
  const std::int64_t count = metric::DomainCount(job);
  const std::int64_t grid = BSplineGridCount(job.bspline);
  const std::size_t  parameters = static_cast<std::size_t>(D) * grid;
  const std::size_t  perSlice = job.derivative ? S * parameters : 0;
  // at most 64 slices, fewer when the arrays are large (2^27 doubles in all)
  const std::int64_t bySize = std::max<std::int64_t>(1, (std::int64_t{ 1 } << 27) / std::max<std::size_t>(1, perSlice));
  const std::int64_t slices =
    std::max<std::int64_t>(1, std::min({ std::int64_t{ 64 }, (count + 4095) / 4096, bySize }));
  const auto total = SumOverSlices(slices,
                                   n + perSlice,
                                   numberOfThreads,
                                   [&](std::int64_t b, double * sums)
                                   {
                                     double *           derivative = sums + n;
                                     const std::int64_t end = count * (b + 1) / slices;
                                     auto               sink = [&](std::int64_t,
                                                     const metric::BSplineSupport<D> & support,
                                                     const double *                    w,
                                                     const double *                    gradient)
                                     {
                                       metric::ScatterBSplinePoint<D, S>(
                                         job.bspline,
                                         support,
                                         w,
                                         gradient,
                                         [&](int set, int d, std::int64_t j, double v)
                                         { derivative[set * parameters + d * grid + j] += v; });
                                     };
                                     for (std::int64_t i = count * b / slices; i < end; ++i)
                                     {
                                       metric::AccumulatePoint<D, TPixel, P, metric::MapMode::BSpline>(job, i, sums, means, pRatio, sink);
                                     }
                                   });
  metric::StoreSums<D, P>(total.data(), moments);
  if (job.derivative)
  {
    std::copy(total.begin() + n, total.end(), job.bspline.derivativeSums);
  }
}

template <int D, typename TPixel, metric::Pass P>
void
RunPass(const DenseMetricJob & job, const double * means, const double * pRatio, MetricMoments & moments,
        int numberOfThreads)
{
  if (job.bspline.coefficients != nullptr && P != metric::Pass::CorrelationMeans)
  {
    RunBSplinePass<D, TPixel, P, metric::WeightSets<P>()>(
      job, means, pRatio, moments, numberOfThreads);
    return;
  }
  const std::int64_t count = metric::DomainCount(job);
  if (job.field.displacements != nullptr && job.derivative)
  {
    // invalid points keep 0 (the passes that write it overwrite it)
    std::fill(job.field.derivative, job.field.derivative + count * D, 0.0);
  }
  // fixed chunks of 4096 points
  const std::int64_t chunk = 4096;
  std::vector<double> total;
  metric::WithMapMode(job,
                      [&](auto mode)
                      {
                        constexpr metric::MapMode M = decltype(mode)::value;
                        total = SumOverSlices((count + chunk - 1) / chunk,
                                              metric::SumCount<D, P>(),
                                              numberOfThreads,
                                              [&](std::int64_t b, double * sums)
                                              {
                                                const std::int64_t end = std::min(count, (b + 1) * chunk);
                                                for (std::int64_t i = b * chunk; i < end; ++i)
                                                {
                                                  metric::AccumulatePoint<D, TPixel, P, M>(job, i, sums, means, pRatio);
                                                }
                                              });
                      });
  metric::StoreSums<D, P>(total.data(), moments);
}

/** The Mattes histogram on the CPU: at most 64 slices of the points, each
 * with its own histogram (count, fixed marginal, joint PDF). */
template <int D, typename TPixel>
void
MattesHistogramCPU(const DenseMetricJob & job, std::vector<double> & histogram, int numberOfThreads)
{
  const int          bins = job.mattes.bins;
  const std::size_t  n = 1 + static_cast<std::size_t>(bins) + static_cast<std::size_t>(bins) * bins;
  const std::int64_t count = metric::DomainCount(job);
  const std::int64_t slices = std::max<std::int64_t>(1, std::min<std::int64_t>(64, count / 4096));
  metric::WithMapMode(job,
                      [&](auto mode)
                      {
                        constexpr metric::MapMode M = decltype(mode)::value;
                        histogram = SumOverSlices(slices,
                                                  n,
                                                  numberOfThreads,
                                                  [&](std::int64_t b, double * h)
                                                  {
                                                    const std::int64_t end = count * (b + 1) / slices;
                                                    auto add = [h](int index, double v) { h[index] += v; };
                                                    for (std::int64_t i = count * b / slices; i < end; ++i)
                                                    {
                                                      metric::AccumulateMattesHistogram<D, TPixel, M>(job, i, add);
                                                    }
                                                  });
                      });
}

template <int D, typename TPixel>
void
RunCPU(const DenseMetricJob & job, MetricMoments & moments, int numberOfThreads)
{
  moments = MetricMoments{};
  if (job.kind == MetricKind::MeanSquares)
  {
    RunPass<D, TPixel, metric::Pass::MeanSquares>(job, nullptr, nullptr, moments, numberOfThreads);
    return;
  }
  if (job.kind == MetricKind::MattesMutualInformation)
  {
    std::vector<double> histogram;
    MattesHistogramCPU<D, TPixel>(job, histogram, numberOfThreads);
    std::vector<double> pRatio(static_cast<std::size_t>(job.mattes.bins) * job.mattes.bins);
    metric::MattesResults(job.mattes, histogram.data(), pRatio.data(), moments);
    metric::ScaleForField(job, moments, pRatio);
    if (moments.status == 0 && job.derivative)
    {
      RunPass<D, TPixel, metric::Pass::MattesDerivative>(job, nullptr, pRatio.data(), moments, numberOfThreads);
    }
    return;
  }
  RunPass<D, TPixel, metric::Pass::CorrelationMeans>(job, nullptr, nullptr, moments, numberOfThreads);
  const double means[2] = { moments.fixedMean, moments.movingMean };
  RunPass<D, TPixel, metric::Pass::Correlation>(job, means, nullptr, moments, numberOfThreads);
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
