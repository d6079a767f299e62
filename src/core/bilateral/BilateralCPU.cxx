/*=========================================================================
 *  CudaImageFilters: CPU core of the bilateral filter.
 *
 *  Double-precision arithmetic, exact range Gaussian. Rows of the output
 *  are shared among threads; each row gathers its (2 r1 + 1)(2 r2 + 1)
 *  clamped input rows once, and x positions through a clamped index table.
 *=========================================================================*/
#include "cif/Bilateral.h"
#include "cifPixelLists.h"
#include "cifClampedNeighborhoodCPU.h"

#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace cif
{

std::vector<double>
BilateralDomainWeights(const int radius[3], const double sigma[3], const double spacing[3])
{
  const int           w[3] = { 2 * radius[0] + 1, 2 * radius[1] + 1, 2 * radius[2] + 1 };
  std::vector<double> weights(static_cast<std::size_t>(w[0]) * w[1] * w[2]);
  double              sum = 0.0;
  std::size_t         i = 0;
  for (int kz = -radius[2]; kz <= radius[2]; ++kz)
  {
    for (int ky = -radius[1]; ky <= radius[1]; ++ky)
    {
      for (int kx = -radius[0]; kx <= radius[0]; ++kx, ++i)
      {
        const int k[3] = { kx, ky, kz };
        double    e = 0.0;
        for (int a = 0; a < 3; ++a)
        {
          if (radius[a] > 0)
          {
            const double t = k[a] * spacing[a] / sigma[a];
            e += 0.5 * t * t;
          }
        }
        weights[i] = std::exp(-e);
        sum += weights[i];
      }
    }
  }
  for (double & v : weights)
  {
    v /= sum;
  }
  return weights;
}

std::string
ValidateBilateralJob(const ClampedNeighborhoodGeometry & g, const BilateralParameters & p)
{
  const std::string why = ValidateClampedNeighborhoodGeometry(g);
  if (!why.empty())
  {
    return why;
  }
  std::ostringstream out;
  std::int64_t       taps = 1;
  for (int a = 0; a < 3; ++a)
  {
    if (p.radius[a] < 0)
    {
      out << "negative radius on axis " << a;
      return out.str();
    }
    taps *= 2 * static_cast<std::int64_t>(p.radius[a]) + 1;
    if (taps > BilateralMaxTaps)
    {
      out << "the kernel has more than " << BilateralMaxTaps << " taps";
      return out.str();
    }
  }
  if (static_cast<std::int64_t>(p.domainWeights.size()) != taps)
  {
    out << "expected " << taps << " domain weights, got " << p.domainWeights.size();
    return out.str();
  }
  for (double w : p.domainWeights)
  {
    if (!(w >= 0.0) || !std::isfinite(w))
    {
      return "the domain weights must be finite and non-negative";
    }
  }
  if (!(p.rangeSigma > 0.0) || !std::isfinite(p.rangeSigma))
  {
    out << "the range sigma must be positive and finite, not " << p.rangeSigma;
    return out.str();
  }
  if (!(p.rangeCutoff > 0.0))
  {
    out << "the range cutoff must be positive, not " << p.rangeCutoff;
    return out.str();
  }
  if (p.iterations < 1)
  {
    out << "the number of iterations must be at least 1, not " << p.iterations;
    return out.str();
  }
  if (p.iterations > 1 && !g.OutputIsWholeInput())
  {
    return "more than one iteration needs the whole image as input and output";
  }
  return {};
}

namespace
{

template <typename TOut>
TOut
ToOutput(double v)
{
  if constexpr (std::is_integral<TOut>::value)
  {
    // ITK's static_cast: truncation toward zero (after clamping, which the
    // weighted mean of in-range samples never needs but rounding might).
    constexpr double lo = static_cast<double>(std::numeric_limits<TOut>::lowest());
    constexpr double hi = static_cast<double>(std::numeric_limits<TOut>::max());
    return static_cast<TOut>(v < lo ? lo : (v > hi ? hi : v));
  }
  else
  {
    return static_cast<TOut>(v);
  }
}

/** exp(-d^2 / (2 sigma^2)) for |d| < cutoff, else 0; for integer samples
 * from a table of the same std::exp values at every integer |d|. */
template <typename TSrc>
class RangeGaussian
{
public:
  explicit RangeGaussian(const BilateralParameters & p)
    : m_HalfInvVariance(0.5 / (p.rangeSigma * p.rangeSigma))
    , m_Cutoff(p.rangeCutoff)
  {
    if constexpr (std::is_integral<TSrc>::value)
    {
      // integers d with |d| < cutoff: |d| <= ceil(cutoff) - 1
      const double largest = std::ceil(p.rangeCutoff) - 1.0;
      const double typeSpan = static_cast<double>(std::numeric_limits<TSrc>::max()) -
                              static_cast<double>(std::numeric_limits<TSrc>::lowest());
      const double entries = std::min(largest, typeSpan) + 1.0;
      if (entries <= double(1 << 20))
      {
        m_Table.resize(static_cast<std::size_t>(entries));
        for (std::size_t k = 0; k < m_Table.size(); ++k)
        {
          const double d = static_cast<double>(k);
          m_Table[k] = std::exp(-d * d * m_HalfInvVariance);
        }
      }
    }
  }

  /** Weight of a difference d (0 outside the cutoff or for NaN). */
  double
  operator()(double d) const
  {
    const double a = std::fabs(d);
    if (!(a < m_Cutoff))
    {
      return 0.0;
    }
    if (!m_Table.empty())
    {
      // integer samples: |d| is an integer below the cutoff
      const auto k = static_cast<std::size_t>(a);
      return k < m_Table.size() ? m_Table[k] : 0.0;
    }
    return std::exp(-d * d * m_HalfInvVariance);
  }

private:
  double              m_HalfInvVariance;
  double              m_Cutoff;
  std::vector<double> m_Table;
};

template <typename TSrc, typename TDst>
void
Pass(const TSrc * src, TDst * dst, const ClampedNeighborhoodGeometry & g, const BilateralParameters & p, int threads)
{
  const int                 rx = p.radius[0], ry = p.radius[1], rz = p.radius[2];
  const int                 wx = 2 * rx + 1, wy = 2 * ry + 1, wz = 2 * rz + 1;
  const std::int64_t        nx = g.inputSize[0], ny = g.inputSize[1], nz = g.inputSize[2];
  const auto                xi = clamped::ClampedIndices(g.outputStart[0], g.outputSize[0], rx, nx);
  const auto                yi = clamped::ClampedIndices(g.outputStart[1], g.outputSize[1], ry, ny);
  const auto                zi = clamped::ClampedIndices(g.outputStart[2], g.outputSize[2], rz, nz);
  const RangeGaussian<TSrc> range(p);
  const double *            domain = p.domainWeights.data();
  const std::int64_t        rows = g.outputSize[1] * g.outputSize[2];
  clamped::ParallelFor(rows,
                       threads,
                       [&](std::int64_t first, std::int64_t last)
                       {
                         std::vector<const TSrc *> row(static_cast<std::size_t>(wy) * wz);
                         for (std::int64_t k = first; k < last; ++k)
                         {
                           const std::int64_t y = k % g.outputSize[1], z = k / g.outputSize[1];
                           for (int dz = 0; dz < wz; ++dz)
                           {
                             for (int dy = 0; dy < wy; ++dy)
                             {
                               row[static_cast<std::size_t>(dz * wy + dy)] = src + (zi[z + dz] * ny + yi[y + dy]) * nx;
                             }
                           }
                           const TSrc * centreRow = row[static_cast<std::size_t>(rz * wy + ry)];
                           TDst *       out = dst + k * g.outputSize[0];
                           for (std::int64_t x = 0; x < g.outputSize[0]; ++x)
                           {
                             const std::int64_t * xc = xi.data() + x; // xc[rx] is the centre
                             const double         c = static_cast<double>(centreRow[xc[rx]]);
                             double               num = 0.0, den = 0.0;
                             const double *       w = domain;
                             for (const TSrc * r : row)
                             {
                               for (int dx = 0; dx < wx; ++dx, ++w)
                               {
                                 const double d = static_cast<double>(r[xc[dx]]) - c;
                                 const double h = *w * range(d);
                                 if (h > 0.0) // skipped, not added as 0 x d: d may be NaN or infinite
                                 {
                                   num += h * d;
                                   den += h;
                                 }
                               }
                             }
                             // den >= the centre's domain weight > 0 unless the centre is
                             // not finite; then 0 / 0 gives NaN, as in ITK.
                             out[x] = ToOutput<TDst>(c + num / den);
                           }
                         }
                       });
}

} // namespace

template <typename TIn, typename TOut>
void
BilateralCPU(const TIn *                         input,
             TOut *                              output,
             const ClampedNeighborhoodGeometry & g,
             const BilateralParameters &         p,
             int                                 threads,
             const BilateralProgress &           progress)
{
  const std::string why = ValidateBilateralJob(g, p);
  if (!why.empty())
  {
    throw std::invalid_argument("BilateralCPU: " + why);
  }
  clamped::IteratePasses(
    input,
    output,
    g.OutputCount(),
    p.iterations,
    [&](const auto * source, TOut * target) { Pass(source, target, g, p, threads); },
    progress);
}

#define CIF_INSTANTIATE_BILATERAL_CPU(TIn, TOut)                                                                       \
  template void BilateralCPU<TIn, TOut>(const TIn *,                                                                   \
                                        TOut *,                                                                        \
                                        const ClampedNeighborhoodGeometry &,                                           \
                                        const BilateralParameters &,                                                   \
                                        int,                                                                           \
                                        const BilateralProgress &);
#define CIF_INSTANTIATE_BILATERAL_CPU_IN(TIn)                                                                          \
  CIF_INSTANTIATE_BILATERAL_CPU(TIn, TIn)                                                                              \
  CIF_INSTANTIATE_BILATERAL_CPU(TIn, float)                                                                            \
  CIF_INSTANTIATE_BILATERAL_CPU(TIn, double)

CIF_INTEGER_PIXELS(CIF_INSTANTIATE_BILATERAL_CPU_IN)
CIF_EXTRA_CPU_PIXELS(CIF_INSTANTIATE_BILATERAL_CPU_IN)
CIF_INSTANTIATE_BILATERAL_CPU(float, float)
CIF_INSTANTIATE_BILATERAL_CPU(float, double)
CIF_INSTANTIATE_BILATERAL_CPU(double, float)
CIF_INSTANTIATE_BILATERAL_CPU(double, double)

} // namespace cif
