/*=========================================================================
 *  CudaImageFilters: the discrete Gaussian's kernel (ITK's GaussianOperator)
 *  and its CPU core (cif/DiscreteGaussian.h).
 *=========================================================================*/
#include "cif/DiscreteGaussian.h"
#include "cifDiscreteGaussianPasses.h"
#include "cifItkCast.h"
#include "cifParallelFor.h"

#include <cmath>
#include <sstream>
#include <stdexcept>

namespace cif
{
namespace
{
// The modified Bessel functions of the first kind as ITK's GaussianOperator
// evaluates them: Abramowitz and Stegun's polynomial approximations 9.8.1
// to 9.8.4 for orders 0 and 1 (each written in ITK's nesting, so the
// roundings are ITK's), and Miller's downward recurrence, normalised by
// I0, for higher orders.
double
BesselI0(double y)
{
  const double d = std::fabs(y);
  if (d < 3.75)
  {
    double t = y / 3.75;
    t *= t;
    return 1.0 + t * (3.5156229 + t * (3.0899424 + t * (1.2067492 + t * (0.2659732 + t * (0.360768e-1 + t * 0.45813e-2)))));
  }
  const double t = 3.75 / d;
  return (std::exp(d) / std::sqrt(d)) *
         (0.39894228 +
          t * (0.1328592e-1 +
               t * (0.225319e-2 +
                    t * (-0.157565e-2 +
                         t * (0.916281e-2 + t * (-0.2057706e-1 + t * (0.2635537e-1 + t * (-0.1647633e-1 + t * 0.392377e-2))))))));
}

double
BesselI1(double y)
{
  const double d = std::fabs(y);
  double       value;
  if (d < 3.75)
  {
    double t = y / 3.75;
    t *= t;
    value = d * (0.5 + t * (0.87890594 + t * (0.51498869 + t * (0.15084934 + t * (0.2658733e-1 + t * (0.301532e-2 + t * 0.32411e-3))))));
  }
  else
  {
    const double t = 3.75 / d;
    value = 0.2282967e-1 + t * (-0.2895312e-1 + t * (0.1787654e-1 - t * 0.420059e-2));
    value = 0.39894228 + t * (-0.3988024e-1 + t * (-0.362018e-2 + t * (0.163801e-2 + t * (-0.1031555e-1 + t * value))));
    value *= std::exp(d) / std::sqrt(d);
  }
  return y < 0.0 ? -value : value;
}

double
BesselI(int n, double y)
{
  if (y == 0.0)
  {
    return 0.0;
  }
  // start the recurrence well above n (ITK's 2 (n + sqrt(40 n))), rescale
  // when it grows, keep the n-th term, normalise by I0
  const double two_over_y = 2.0 / std::fabs(y);
  double       above = 0.0, current = 1.0, kept = 0.0;
  for (int j = 2 * (n + static_cast<int>(std::sqrt(40.0 * n))); j > 0; j--)
  {
    const double below = above + j * two_over_y * current;
    above = current;
    current = below;
    if (std::fabs(current) > 1.0e10)
    {
      kept *= 1.0e-10;
      current *= 1.0e-10;
      above *= 1.0e-10;
    }
    if (j == n)
    {
      kept = above;
    }
  }
  kept *= BesselI0(y) / current;
  return (y < 0.0 && (n & 1)) ? -kept : kept;
}
} // namespace

std::vector<double>
GaussianOperatorCoefficients(double variance, double maximumError, unsigned maximumKernelWidth, bool * truncated)
{
  if (!(variance >= 0.0) || !std::isfinite(variance))
  {
    throw std::invalid_argument("the variance must be finite and at least 0");
  }
  if (!(maximumError > 0.0 && maximumError < 1.0))
  {
    throw std::invalid_argument("the maximum error must lie in (0, 1)");
  }
  if (truncated)
  {
    *truncated = false;
  }
  const double        decay = std::exp(-variance);
  const double        cap = 1.0 - maximumError;
  std::vector<double> half{ decay * BesselI0(variance), decay * BesselI1(variance) };
  double              sum = half[0] + half[1] * 2.0;
  for (int i = 2; sum < cap; i++)
  {
    half.push_back(decay * BesselI(i, variance));
    sum += half[i] * 2.0;
    if (half[i] <= 0.0)
    {
      break;
    }
    if (half.size() > maximumKernelWidth)
    {
      if (truncated)
      {
        *truncated = true;
      }
      break;
    }
  }
  const std::size_t   r = half.size() - 1;
  std::vector<double> kernel(2 * r + 1);
  for (std::size_t k = 0; k <= r; ++k)
  {
    kernel[r + k] = kernel[r - k] = half[k] / sum;
  }
  return kernel;
}

std::string
ValidateDiscreteGaussianJob(const DiscreteGaussianJob & job)
{
  if (job.filterDimensionality < 0 || job.filterDimensionality > 3)
  {
    return "the filter dimensionality must lie in [0, 3]";
  }
  for (int a = 0; a < 3; ++a)
  {
    if (job.inputSize[a] < 1 || job.outputSize[a] < 1 || job.outputStart[a] < 0 ||
        job.outputStart[a] + job.outputSize[a] > job.inputSize[a])
    {
      std::ostringstream why;
      why << "the output [" << job.outputStart[a] << ", " << job.outputStart[a] + job.outputSize[a]
          << ") does not lie in the input's " << job.inputSize[a] << " pixels along axis " << a;
      return why.str();
    }
    if (a < job.filterDimensionality && job.kernel[a].size() % 2 != 1)
    {
      return "every filtered axis needs a kernel of odd length";
    }
  }
  return {};
}

namespace
{
template <typename TSrc, typename TDst>
void
RunPass(const discrete_gaussian::Pass & p, const TSrc * src, TDst * dst, const double * kernel, int threads)
{
  const std::int64_t nx = p.DstSize(0);
  const std::int64_t lines = p.DstCount() / nx;
  ParallelFor(lines,
              threads,
              [&](std::int64_t first, std::int64_t last)
              {
                for (std::int64_t line = first; line < last; ++line)
                {
                  for (std::int64_t i = 0; i < nx; ++i)
                  {
                    const std::int64_t d = line * nx + i;
                    dst[d] = ItkCast<TDst>(discrete_gaussian::Sample(p, src, kernel, d));
                  }
                }
              });
}
} // namespace

template <typename TIn, typename TOut>
void
DiscreteGaussianCPU(const TIn * input, TOut * output, const DiscreteGaussianJob & job, int threads)
{
  const std::string problem = ValidateDiscreteGaussianJob(job);
  if (!problem.empty())
  {
    throw std::invalid_argument("DiscreteGaussianCPU: " + problem);
  }
  // the intermediate images are of the output's type, as ITK 5.2's
  // (its RealOutputImageType is Image<OutputPixelType>): each pass casts
  const discrete_gaussian::Plan plan = discrete_gaussian::PlanPasses(job);
  const std::size_t             n = plan.passes.size();
  std::vector<TOut>             work[2];
  const TOut *                  previous = nullptr;
  for (std::size_t i = 0; i < n; ++i)
  {
    const auto &   p = plan.passes[i];
    const double * kernel = plan.kernels.data() + p.kernel;
    TOut *         target = output;
    if (i + 1 < n)
    {
      work[i % 2].resize(static_cast<std::size_t>(p.DstCount()));
      target = work[i % 2].data();
    }
    if (i == 0)
    {
      RunPass(p, input, target, kernel, threads);
    }
    else
    {
      RunPass(p, previous, target, kernel, threads);
    }
    previous = target;
  }
}

#define CIF_INSTANTIATE(TIn, TOut) \
  template void DiscreteGaussianCPU<TIn, TOut>(const TIn *, TOut *, const DiscreteGaussianJob &, int);
CIF_DISCRETE_GAUSSIAN_PAIRS(CIF_INSTANTIATE)
#undef CIF_INSTANTIATE

} // namespace cif
