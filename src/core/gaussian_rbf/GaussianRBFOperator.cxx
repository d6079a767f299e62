/*=========================================================================
 *  CudaImageFilters: the per-axis operators of GRBF interpolation, built in
 *  double precision with Eigen's Cholesky factorisation (see
 *  cifGaussianRBF.h for the method).
 *=========================================================================*/
#include "cif/GaussianRBF.h"

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

namespace
{

void
CheckAxisArguments(std::int64_t inputSize, double sigma, const GrbfOptions & options)
{
  if (inputSize < 1)
  {
    throw std::invalid_argument("GRBF: the input size must be at least 1 (got " + std::to_string(inputSize) + ")");
  }
  if (!(sigma > 0.0) || !std::isfinite(sigma))
  {
    throw std::invalid_argument("GRBF: sigma must be positive and finite (got " + Format(sigma) + " pixels)");
  }
  if (!(options.tolerance > 0.0) || !(options.tolerance <= 0.01))
  {
    throw std::invalid_argument("GRBF: the tolerance must be in (0, 0.01] (got " + Format(options.tolerance) + ")");
  }
  if (!(options.ridge >= 0.0) || !std::isfinite(options.ridge))
  {
    throw std::invalid_argument("GRBF: the ridge must be >= 0 and finite (got " + Format(options.ridge) + ")");
  }
}

/** The window of an axis and the inverse C of its (ridged) Gram matrix, or
 * std::domain_error when it is too ill-conditioned for the tolerance. */
struct WindowInverse
{
  std::int64_t                H{ 0 };
  std::int64_t                W{ 0 };
  Eigen::LLT<Eigen::MatrixXd> llt; ///< the window's Cholesky factor
  Eigen::MatrixXd             C;
  double                      conditionNumber{ 1.0 };
};

WindowInverse
FactorWindow(std::int64_t inputSize, double sigma, const GrbfOptions & options)
{
  WindowInverse f;
  f.H = WindowHalfWidth(sigma);
  f.W = std::min<std::int64_t>(inputSize, 2 * f.H + 1);
  const std::int64_t W = f.W;
  const double       inv2s2 = 1.0 / (2.0 * sigma * sigma);
  Eigen::MatrixXd    G(W, W);
  for (std::int64_t i = 0; i < W; ++i)
  {
    for (std::int64_t j = 0; j < W; ++j)
    {
      const double d = static_cast<double>(i - j);
      G(i, j) = std::exp(-d * d * inv2s2) + (i == j ? options.ridge : 0.0);
    }
  }
  f.llt.compute(G);
  const bool factored = f.llt.info() == Eigen::Success;
  if (factored)
  {
    f.C = f.llt.solve(Eigen::MatrixXd::Identity(W, W));
    f.conditionNumber = G.cwiseAbs().colwise().sum().maxCoeff() * f.C.cwiseAbs().colwise().sum().maxCoeff();
  }
  else
  {
    f.conditionNumber = std::numeric_limits<double>::infinity();
  }
  const double limit = LargestCondition(options.tolerance);
  if (!factored || !(f.conditionNumber <= limit))
  {
    std::ostringstream s;
    s << "GRBF: sigma = " << Format(sigma) << " pixels makes the Gaussian Gram matrix too ill-conditioned (condition "
      << "number " << (factored ? Format(f.conditionNumber) : std::string("beyond double precision"))
      << ") for double precision to reach the tolerance " << Format(options.tolerance) << "; ";
    if (options.ridge == 0.0)
    {
      s << "without a ridge the limit is sigma <= " << Format(GrbfLargestSigma(options.tolerance))
        << " pixels (condition number " << Format(limit) << "). ";
    }
    s << "Use a smaller sigma, a larger tolerance, or a ridge (which smooths instead of interpolating).";
    throw std::domain_error(s.str());
  }
  return f;
}

/** The smallest range [a, b] around the largest |w| whose outside weight
 * (L1) is at most `budget`; returns the weight dropped and the kept L1. */
void
KeptRange(const double * w,
          std::int64_t   W,
          double         budget,
          std::int64_t & a,
          std::int64_t & b,
          double &       dropped,
          double &       kept)
{
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
  a = b = peak;
  kept = std::abs(w[peak]);
  while (total - kept > budget)
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
  dropped = std::max(0.0, total - kept);
}

GrbfAxisOperator
IdentityOperator(std::int64_t n, double sigma)
{
  GrbfAxisOperator op;
  op.inputSize = op.outputSize = n;
  op.sigma = sigma;
  op.identity = true;
  op.taps = 1;
  op.first.resize(n);
  op.weights.assign(n, 1.0);
  op.outside.assign(n, 0);
  op.window = 1;
  for (std::int64_t k = 0; k < n; ++k)
  {
    op.first[k] = k;
  }
  return op;
}

} // namespace

GrbfAxisOperator
BuildGrbfAxisOperator(std::int64_t        inputSize,
                      double              sigma,
                      std::int64_t        outputSize,
                      double              firstPosition,
                      double              step,
                      const GrbfOptions & options)
{
  if (outputSize < 1)
  {
    throw std::invalid_argument("GRBF: the input and output sizes must be at least 1 (got " +
                                std::to_string(inputSize) + " and " + std::to_string(outputSize) + ")");
  }
  CheckAxisArguments(inputSize, sigma, options);
  if (!std::isfinite(firstPosition) || !std::isfinite(step) ||
      !std::isfinite(firstPosition + static_cast<double>(outputSize - 1) * step))
  {
    throw std::invalid_argument("GRBF: the output positions must be finite");
  }
  if (options.ridge == 0.0 && outputSize == inputSize && firstPosition == 0.0 && step == 1.0)
  {
    // the outputs are the nodes: the interpolation property, no solve (and
    // no conditioning limit: nothing is computed along this axis)
    return IdentityOperator(inputSize, sigma);
  }

  GrbfAxisOperator op;
  op.inputSize = inputSize;
  op.outputSize = outputSize;
  op.sigma = sigma;
  const WindowInverse factor = FactorWindow(inputSize, sigma, options);
  const std::int64_t  H = factor.H;
  const std::int64_t  W = factor.W;
  const double        inv2s2 = 1.0 / (2.0 * sigma * sigma);
  op.window = W;
  op.conditionNumber = factor.conditionNumber;

  // Weights of every output: G^-1 e(p) over its window, e(p) nonzero (above
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
  Eigen::VectorXd                             e(W);
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
      // w solves G w = e(p) with the window's Cholesky factor: a
      // backward-stable solve, far closer to the full solve at sigma = 2
      // than multiplying e(p) by the explicit inverse (whose entries reach
      // 4e7 there and cancel)
      done.emplace(key, k);
      const std::int64_t jFirst = std::max<std::int64_t>(0, c - R - lo);
      const std::int64_t jLast = std::min<std::int64_t>(W - 1, c + R - lo);
      e.setZero();
      for (std::int64_t j = jFirst; j <= jLast; ++j)
      {
        const double d = p - static_cast<double>(lo + j);
        e(j) = std::exp(-d * d * inv2s2);
      }
      Eigen::Map<Eigen::VectorXd>(w, W) = factor.llt.solve(e);
    }
    std::int64_t a = 0, b = 0;
    double       dropped = 0.0, kept = 0.0;
    KeptRange(w, W, dropBudget, a, b, dropped, kept);
    op.truncatedL1 = std::max(op.truncatedL1, dropped);
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

namespace
{

/** An upper bound on the Gaussian weight beyond `radius` nodes of any point:
 * the dropped nodes on each side lie at distances > radius, radius + 1, ... */
double
GaussianTail(int radius, double inv2s2)
{
  double tail = 0.0;
  for (int k = 0; k < 4096; ++k)
  {
    const double d = static_cast<double>(radius + k);
    const double e = std::exp(-d * d * inv2s2);
    tail += e;
    if (e < 1e-300)
    {
      break;
    }
  }
  return 2.0 * tail;
}

/** The largest sum of Gaussians over the nodes of an infinite axis. */
double
GaussianSum(double inv2s2)
{
  double best = 0.0;
  for (double p : { 0.0, 0.25, 0.5 })
  {
    double sum = 0.0;
    for (int k = -4096; k <= 4096; ++k)
    {
      const double d = p - k;
      sum += std::exp(-d * d * inv2s2);
    }
    best = std::max(best, sum);
  }
  return best;
}

/** Rows of G^-1 (the window's inverse placed at each node) truncated to
 * `budget`: the coefficient operator of one axis. */
GrbfAxisOperator
InverseOperator(std::int64_t n, double sigma, const WindowInverse & f, double budget)
{
  GrbfAxisOperator op;
  op.inputSize = op.outputSize = n;
  op.sigma = sigma;
  op.window = f.W;
  op.conditionNumber = f.conditionNumber;
  op.outside.assign(n, 0);
  const std::int64_t        W = f.W;
  std::vector<std::int64_t> from(n), to(n), lo(n);
  std::vector<double>       row(W);
  int                       maxTaps = 1;
  for (std::int64_t i = 0; i < n; ++i)
  {
    lo[i] = std::clamp<std::int64_t>(i - f.H, 0, n - W);
    for (std::int64_t j = 0; j < W; ++j)
    {
      row[j] = f.C(i - lo[i], j);
    }
    std::int64_t a = 0, b = 0;
    double       dropped = 0.0, kept = 0.0;
    KeptRange(row.data(), W, budget, a, b, dropped, kept);
    from[i] = a;
    to[i] = b;
    op.truncatedL1 = std::max(op.truncatedL1, dropped);
    op.largestRowL1 = std::max(op.largestRowL1, kept);
    maxTaps = std::max<int>(maxTaps, static_cast<int>(b - a + 1));
  }
  op.taps = maxTaps;
  op.first.assign(n, 0);
  op.weights.assign(static_cast<std::size_t>(n) * maxTaps, 0.0);
  for (std::int64_t i = 0; i < n; ++i)
  {
    const std::int64_t first = std::max<std::int64_t>(0, std::min<std::int64_t>(lo[i] + from[i], n - maxTaps));
    op.first[i] = first;
    for (std::int64_t j = from[i]; j <= to[i]; ++j)
    {
      op.weights[static_cast<std::size_t>(i * maxTaps + (lo[i] + j - first))] = f.C(i - lo[i], j);
    }
  }
  return op;
}

/** The half-width (around a point's nearest node m) that holds the point's
 * truncated cardinal weights, for each distance d = min(m, n - 1 - m) of m
 * from the axis's ends, d < min(n, H + 2): probed with
 * BuildGrbfAxisOperator at 8 positions per pixel over the first H + 2
 * nodes. Every window placement there is different; farther in they repeat
 * (the interior value, the last entry), and the right end mirrors the left.
 * Points near an end need the widest range (their cardinal functions lean
 * inwards): about 1.7 times the interior's. */
std::vector<int>
CardinalRadii(std::int64_t n, double sigma, std::int64_t H, const GrbfOptions & options)
{
  const std::int64_t     nodes = std::min<std::int64_t>(n, H + 2);
  const GrbfAxisOperator probe = BuildGrbfAxisOperator(n, sigma, 8 * nodes, -0.5 + 1.0 / 16.0, 1.0 / 8.0, options);
  std::vector<int>       radii(static_cast<std::size_t>(nodes), 0);
  for (std::int64_t k = 0; k < probe.outputSize; ++k)
  {
    const double       p = -0.5 + 1.0 / 16.0 + static_cast<double>(k) / 8.0;
    const std::int64_t m = std::clamp<std::int64_t>(static_cast<std::int64_t>(std::floor(p + 0.5)), 0, n - 1);
    const std::int64_t d = std::min<std::int64_t>(m, n - 1 - m);
    const double *     w = &probe.weights[static_cast<std::size_t>(k * probe.taps)];
    for (int t = 0; t < probe.taps; ++t)
    {
      if (w[t] != 0.0)
      {
        const std::int64_t node = probe.first[k] + t;
        // a margin of one node for the positions between the probes
        radii[d] = std::max<int>(radii[d], static_cast<int>(std::abs(node - m)) + 1);
      }
    }
  }
  return radii;
}

} // namespace

GrbfPointsPlan
MakeGrbfPointsPlan(int dimension, const std::int64_t inputSize[3], const double sigma[3], const GrbfOptions & options)
{
  if (dimension < 1 || dimension > 3)
  {
    throw std::invalid_argument("GRBF: the dimension must be 1, 2 or 3 (got " + std::to_string(dimension) + ")");
  }
  GrbfPointsPlan plan;
  plan.dimension = dimension;
  plan.options = options;
  plan.coefficientJob.dimension = dimension;
  const double  tol = options.tolerance;
  const double  D = static_cast<double>(dimension);
  WindowInverse factor[3];
  for (int a = 0; a < dimension; ++a)
  {
    CheckAxisArguments(inputSize[a], sigma[a], options);
    factor[a] = FactorWindow(inputSize[a], sigma[a], options);
  }
  // Coefficient axes, best conditioned first, while eps * prod(kappa) <=
  // tol / 4 (the coefficients' growth) and each axis has kappa <= tol /
  // (1000 eps): the windowed rows of G^-1 lose accuracy faster than the
  // cardinal weights (against a full-axis solve at 1e-6: 7e-8 at sigma =
  // 1.8, 4.5e-5 at 2, where the cardinal weights stay near 1e-6).
  int order[3] = { 0, 1, 2 };
  std::sort(
    order, order + dimension, [&](int p, int q) { return factor[p].conditionNumber < factor[q].conditionNumber; });
  double product = 1.0;
  for (int k = 0; k < dimension; ++k)
  {
    const int    a = order[k];
    const double kappa = factor[a].conditionNumber;
    const bool   eligible = kappa <= tol / (1000.0 * kEpsilon) && kEpsilon * product * kappa <= tol / 4.0;
    plan.axis[a].cardinal = !eligible;
    if (eligible)
    {
      product *= kappa;
    }
  }
  for (int a = 0; a < dimension; ++a)
  {
    GrbfPointsAxis &      axis = plan.axis[a];
    const WindowInverse & f = factor[a];
    const double          inv2s2 = 1.0 / (2.0 * sigma[a] * sigma[a]);
    axis.inputSize = inputSize[a];
    axis.sigma = sigma[a];
    axis.window = f.W;
    axis.halfWindow = f.H;
    axis.conditionNumber = f.conditionNumber;
    // Gaussian taps: what they drop, times the largest row of C (the
    // coefficients' or the cardinal sums' amplification), within tol / (16 D)
    const double rowL1 = f.C.cwiseAbs().rowwise().sum().maxCoeff();
    int          radius = 1;
    while (GaussianTail(radius, inv2s2) * rowL1 > tol / (16.0 * D) && radius < kGrbfMaxPointTaps)
    {
      ++radius;
    }
    axis.radius = radius;
    if (axis.cardinal)
    {
      GrbfOptions probe = options;
      probe.tolerance = tol / (2.0 * D); // drops tol / (16 D)
      const std::vector<int> radii = CardinalRadii(inputSize[a], sigma[a], f.H, probe);
      axis.cardinalRadius = *std::max_element(radii.begin(), radii.end());
      axis.radii = static_cast<int>(radii.size());
      axis.inverse.assign(f.C.data(), f.C.data() + f.W * f.W); // symmetric: row- and column-major agree
      axis.inverse.insert(axis.inverse.end(), radii.begin(), radii.end());
      plan.coefficientJob.axis[a] = std::make_shared<GrbfAxisOperator>(IdentityOperator(inputSize[a], sigma[a]));
    }
    else
    {
      // a coefficient error is seen through the Gaussians' sum along the axis
      plan.coefficientJob.axis[a] = std::make_shared<GrbfAxisOperator>(
        InverseOperator(inputSize[a], sigma[a], f, tol / (16.0 * D * GaussianSum(inv2s2))));
    }
    const int taps = 2 * std::max(axis.cardinal ? axis.cardinalRadius : 0, axis.radius) + 1;
    if (taps > kGrbfMaxPointTaps)
    {
      throw std::domain_error("GRBF: sigma = " + Format(sigma[a]) + " pixels needs " + std::to_string(taps) +
                              " taps per axis at points off the grid; the point evaluation takes at most " +
                              std::to_string(kGrbfMaxPointTaps) + " (use a smaller sigma or a larger tolerance)");
    }
  }
  return plan;
}

GrbfPointsRule
GrbfHostRule(const GrbfPointsPlan & plan)
{
  GrbfPointsRule r;
  r.dimension = plan.dimension;
  for (int a = 0; a < plan.dimension; ++a)
  {
    const GrbfPointsAxis & axis = plan.axis[a];
    r.size[a] = axis.inputSize;
    r.inv2s2[a] = 1.0 / (2.0 * axis.sigma * axis.sigma);
    r.radius[a] = axis.radius;
    r.cardinal[a] = axis.cardinal ? 1 : 0;
    r.cardinalRadius[a] = axis.cardinalRadius;
    r.radii[a] = axis.radii;
    r.window[a] = axis.window;
    r.halfWindow[a] = axis.halfWindow;
    r.inverse[a] = axis.cardinal ? axis.inverse.data() : nullptr;
  }
  return r;
}

} // namespace cif
