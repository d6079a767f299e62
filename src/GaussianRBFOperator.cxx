/*=========================================================================
 *  CudaImageFilters: the per-axis operators of GRBF interpolation, built in
 *  double precision with Eigen's Cholesky factorisation (see
 *  cifGaussianRBF.h for the method).
 *=========================================================================*/
#include "cifGaussianRBF.h"

#include <Eigen/Cholesky>
#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

namespace cif
{
namespace
{

constexpr double kPi = 3.14159265358979323846;
constexpr double kEpsilon = std::numeric_limits<double>::epsilon();

/** Half-width of the factorisation window, in nodes (see the header): the
 * cardinal functions and the influence of the nodes beyond the window decay
 * over a length that grows like sigma^2 (about 24 sigma^2 nodes to 1e-7);
 * with 60 sigma^2 the windowed weights equal the full solve's to 2e-13 at
 * sigma = 1, 3e-11 at 1.6, and to the conditioning's own noise (1e-7) at 2. */
std::int64_t
WindowHalfWidth(double sigma)
{
  return std::max<std::int64_t>(32, static_cast<std::int64_t>(std::ceil(60.0 * sigma * sigma)));
}

/** The largest condition number whose solve still reaches `tolerance`: the
 * forward error of a backward-stable solve is about kappa * epsilon, and a
 * quarter of the error budget is left for it (the truncation takes 1/8). */
double
LargestCondition(double tolerance)
{
  return tolerance / (4.0 * kEpsilon);
}

std::string
Format(double value)
{
  std::ostringstream s;
  s.precision(3);
  s << value;
  return s.str();
}

} // namespace

double
GrbfLargestSigma(double tolerance)
{
  // kappa(sigma) ~ exp(pi^2 sigma^2 / 2) / 2 on a long axis
  return std::sqrt(2.0 * std::log(2.0 * LargestCondition(tolerance)) / (kPi * kPi));
}

GrbfAxisOperator
BuildGrbfAxisOperator(std::int64_t        inputSize,
                      double              sigma,
                      std::int64_t        outputSize,
                      double              firstPosition,
                      double              step,
                      const GrbfOptions & options)
{
  if (inputSize < 1 || outputSize < 1)
  {
    throw std::invalid_argument("GRBF: the input and output sizes must be at least 1 (got " +
                                std::to_string(inputSize) + " and " + std::to_string(outputSize) + ")");
  }
  if (!(sigma > 0.0) || !std::isfinite(sigma))
  {
    throw std::invalid_argument("GRBF: sigma must be positive and finite (got " + Format(sigma) + " pixels)");
  }
  if (!std::isfinite(firstPosition) || !std::isfinite(step) ||
      !std::isfinite(firstPosition + static_cast<double>(outputSize - 1) * step))
  {
    throw std::invalid_argument("GRBF: the output positions must be finite");
  }
  if (!(options.tolerance > 0.0) || !(options.tolerance <= 0.01))
  {
    throw std::invalid_argument("GRBF: the tolerance must be in (0, 0.01] (got " + Format(options.tolerance) + ")");
  }
  if (!(options.ridge >= 0.0) || !std::isfinite(options.ridge))
  {
    throw std::invalid_argument("GRBF: the ridge must be >= 0 and finite (got " + Format(options.ridge) + ")");
  }

  GrbfAxisOperator op;
  op.inputSize = inputSize;
  op.outputSize = outputSize;
  op.sigma = sigma;
  op.identity = options.ridge == 0.0 && outputSize == inputSize && firstPosition == 0.0 && step == 1.0;

  // The window's Gram matrix (the same for every window: uniform nodes).
  const std::int64_t H = WindowHalfWidth(sigma);
  const std::int64_t W = std::min<std::int64_t>(inputSize, 2 * H + 1);
  op.window = W;
  const double    inv2s2 = 1.0 / (2.0 * sigma * sigma);
  Eigen::MatrixXd G(W, W);
  for (std::int64_t i = 0; i < W; ++i)
  {
    for (std::int64_t j = 0; j < W; ++j)
    {
      const double d = static_cast<double>(i - j);
      G(i, j) = std::exp(-d * d * inv2s2) + (i == j ? options.ridge : 0.0);
    }
  }
  Eigen::LLT<Eigen::MatrixXd> llt(G);
  const bool                  factored = llt.info() == Eigen::Success;
  Eigen::MatrixXd             C;
  if (factored)
  {
    C = llt.solve(Eigen::MatrixXd::Identity(W, W));
    op.conditionNumber = G.cwiseAbs().colwise().sum().maxCoeff() * C.cwiseAbs().colwise().sum().maxCoeff();
  }
  else
  {
    op.conditionNumber = std::numeric_limits<double>::infinity();
  }
  const double limit = LargestCondition(options.tolerance);
  if (!factored || !(op.conditionNumber <= limit))
  {
    std::ostringstream s;
    s << "GRBF: sigma = " << Format(sigma) << " pixels makes the Gaussian Gram matrix too ill-conditioned (condition "
      << "number " << (factored ? Format(op.conditionNumber) : std::string("beyond double precision"))
      << ") for double precision to reach the tolerance " << Format(options.tolerance) << "; ";
    if (options.ridge == 0.0)
    {
      s << "without a ridge the limit is sigma <= " << Format(GrbfLargestSigma(options.tolerance))
        << " pixels (condition number " << Format(limit) << "). ";
    }
    s << "Use a smaller sigma, a larger tolerance, or a ridge (which smooths instead of interpolating).";
    throw std::domain_error(s.str());
  }
  if (op.identity)
  {
    op.taps = 1;
    op.first.resize(outputSize);
    op.weights.assign(outputSize, 1.0);
    op.outside.assign(outputSize, 0);
    for (std::int64_t k = 0; k < outputSize; ++k)
    {
      op.first[k] = k;
    }
    return op;
  }

  // Weights of every output: C e(p) over its window, e(p) nonzero (above
  // 1e-300) only within R nodes of p.
  const std::int64_t R = static_cast<std::int64_t>(std::ceil(sigma * std::sqrt(2.0 * 700.0))) + 1;
  const double       dropBudget = options.tolerance / 8.0;
  struct Row
  {
    std::int64_t lo, a, b; // window start; kept range [a, b] (absolute nodes)
  };
  std::vector<Row>    rows(outputSize);
  std::vector<double> full(static_cast<std::size_t>(outputSize * W), 0.0);
  op.outside.assign(outputSize, 0);
  std::unordered_map<long long, std::int64_t> done; // window offset -> a row that has its weights
  int                                         maxTaps = 1;
  for (std::int64_t k = 0; k < outputSize; ++k)
  {
    const double p = firstPosition + static_cast<double>(k) * step;
    if (p < -0.5 || p >= static_cast<double>(inputSize) - 0.5)
    {
      op.outside[k] = 1;
      rows[k] = Row{ 0, 0, 0 };
      continue;
    }
    const std::int64_t c = static_cast<std::int64_t>(std::floor(p + 0.5));
    const std::int64_t lo = std::clamp<std::int64_t>(c - H, 0, inputSize - W);
    double *           w = &full[static_cast<std::size_t>(k * W)];
    const double       nearest = std::round(p);
    // the same offset in the same kind of window gives the same weights:
    // interior rows of a regular zoom share a few distinct rows (positions
    // within 2^-32 pixel count as equal)
    const long long key = std::llround((p - static_cast<double>(lo)) * 4294967296.0);
    const auto      cached = done.find(key);
    if (options.ridge == 0.0 && std::abs(p - nearest) <= 1e-12)
    {
      // on a node: the interpolation property, exactly
      w[static_cast<std::int64_t>(nearest) - lo] = 1.0;
    }
    else if (cached != done.end())
    {
      const std::int64_t j = cached->second;
      std::copy(&full[static_cast<std::size_t>(j * W)], &full[static_cast<std::size_t>(j * W + W)], w);
      rows[k] = Row{ lo, lo + (rows[j].a - rows[j].lo), lo + (rows[j].b - rows[j].lo) };
      continue;
    }
    else
    {
      done.emplace(key, k);
      const std::int64_t jFirst = std::max<std::int64_t>(0, c - R - lo);
      const std::int64_t jLast = std::min<std::int64_t>(W - 1, c + R - lo);
      for (std::int64_t j = jFirst; j <= jLast; ++j)
      {
        const double d = p - static_cast<double>(lo + j);
        const double e = std::exp(-d * d * inv2s2);
        for (std::int64_t i = 0; i < W; ++i)
        {
          w[i] += C(i, j) * e;
        }
      }
    }
    // the smallest range around the peak whose outside weight <= budget
    double       total = 0.0;
    std::int64_t peak = 0;
    for (std::int64_t i = 0; i < W; ++i)
    {
      total += std::abs(w[i]);
      if (std::abs(w[i]) > std::abs(w[peak]))
      {
        peak = i;
      }
    }
    std::int64_t a = peak, b = peak;
    double       kept = std::abs(w[peak]);
    while (total - kept > dropBudget)
    {
      const double left = a > 0 ? std::abs(w[a - 1]) : -1.0;
      const double right = b < W - 1 ? std::abs(w[b + 1]) : -1.0;
      if (left >= right)
      {
        kept += left;
        --a;
      }
      else
      {
        kept += right;
        ++b;
      }
    }
    op.truncatedL1 = std::max(op.truncatedL1, std::max(0.0, total - kept));
    op.largestRowL1 = std::max(op.largestRowL1, kept);
    rows[k] = Row{ lo, lo + a, lo + b };
    maxTaps = std::max<int>(maxTaps, static_cast<int>(b - a + 1));
  }

  // Pack: taps per row, the band starting at first[k] (shifted left where it
  // would run past the axis), zeros beyond the kept range.
  op.taps = maxTaps;
  op.first.assign(outputSize, 0);
  op.weights.assign(static_cast<std::size_t>(outputSize) * maxTaps, 0.0);
  for (std::int64_t k = 0; k < outputSize; ++k)
  {
    if (op.outside[k])
    {
      continue;
    }
    const Row &        r = rows[k];
    const std::int64_t first = std::max<std::int64_t>(0, std::min<std::int64_t>(r.a, inputSize - maxTaps));
    op.first[k] = first;
    for (std::int64_t node = r.a; node <= r.b; ++node)
    {
      op.weights[static_cast<std::size_t>(k * maxTaps + (node - first))] =
        full[static_cast<std::size_t>(k * W + (node - r.lo))];
    }
  }
  if (op.largestRowL1 < 1.0)
  {
    op.largestRowL1 = 1.0;
  }
  return op;
}

namespace
{
bool
SameAxis(const GrbfGrid & g, int a, const GrbfGrid & h, int b)
{
  return g.inputSize[a] == h.inputSize[b] && g.outputSize[a] == h.outputSize[b] && g.first[a] == h.first[b] &&
         g.step[a] == h.step[b] && g.sigma[a] == h.sigma[b];
}
} // namespace

bool
GrbfGrid::operator==(const GrbfGrid & other) const
{
  if (dimension != other.dimension || options.tolerance != other.options.tolerance ||
      options.ridge != other.options.ridge)
  {
    return false;
  }
  for (int a = 0; a < dimension && a < 3; ++a)
  {
    if (!SameAxis(*this, a, other, a))
    {
      return false;
    }
  }
  return true;
}

GrbfSeparableJob
MakeGrbfSeparableJob(const GrbfGrid & grid)
{
  if (grid.dimension < 1 || grid.dimension > 3)
  {
    throw std::invalid_argument("GRBF: the dimension must be 1, 2 or 3 (got " + std::to_string(grid.dimension) + ")");
  }
  GrbfSeparableJob job;
  job.dimension = grid.dimension;
  for (int a = 0; a < grid.dimension; ++a)
  {
    for (int b = 0; b < a && !job.axis[a]; ++b)
    {
      if (SameAxis(grid, a, grid, b))
      {
        job.axis[a] = job.axis[b];
      }
    }
    if (!job.axis[a])
    {
      job.axis[a] = std::make_shared<GrbfAxisOperator>(BuildGrbfAxisOperator(
        grid.inputSize[a], grid.sigma[a], grid.outputSize[a], grid.first[a], grid.step[a], grid.options));
    }
  }
  return job;
}

} // namespace cif
