/*=========================================================================
 *  CudaImageFilters: the recursive Gaussian's coefficients and its CPU
 *  cores (cif/RecursiveGaussian.h).
 *=========================================================================*/
#include "cif/RecursiveGaussian.h"
#include "cifParallelFor.h"
#include "cifPixelLists.h"
#include "cifRecursiveGaussianLine.h"

#include <cmath>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace cif
{
namespace
{

/** Deriche's approximation as sums of two damped cosines and sines,
 * exp(l / s) (a cos(w / s) + b sin(w / s)), the constants of Farnebäck and
 * Westin for the Gaussian (index 0) and its derivatives (1, 2). */
struct Exponentials
{
  double a1[3]{ 1.3530, -0.6724, -1.3563 };
  double b1[3]{ 1.8151, -3.4327, 5.2318 };
  double w1{ 0.6681 };
  double l1{ -1.3932 };
  double a2[3]{ -0.3531, 0.6724, 0.3446 };
  double b2[3]{ 0.0902, 0.6100, -2.2355 };
  double w2{ 2.0787 };
  double l2{ -1.3732 };
};

/** The feed-forward terms of one order, and their sums S, the first moment
 * D and the second moment E (sum k^i n_k, i = 0, 1, 2). */
struct Forward
{
  double n[4];
  double sum;
  double first;
  double second;
};

Forward
ForwardTerms(double sigmad, double a1, double b1, double a2, double b2, const Exponentials & e)
{
  const double sin1 = std::sin(e.w1 / sigmad);
  const double sin2 = std::sin(e.w2 / sigmad);
  const double cos1 = std::cos(e.w1 / sigmad);
  const double cos2 = std::cos(e.w2 / sigmad);
  const double exp1 = std::exp(e.l1 / sigmad);
  const double exp2 = std::exp(e.l2 / sigmad);
  Forward      f;
  f.n[0] = a1 + a2;
  f.n[1] = exp2 * (b2 * sin2 - (a2 + 2 * a1) * cos2);
  f.n[1] += exp1 * (b1 * sin1 - (a1 + 2 * a2) * cos1);
  f.n[2] = (a1 + a2) * cos2 * cos1;
  f.n[2] -= b1 * cos2 * sin1 + b2 * cos1 * sin2;
  f.n[2] *= 2 * exp1 * exp2;
  f.n[2] += a2 * exp1 * exp1 + a1 * exp2 * exp2;
  f.n[3] = exp2 * exp1 * exp1 * (b2 * sin2 - a2 * cos2);
  f.n[3] += exp1 * exp2 * exp2 * (b1 * sin1 - a1 * cos1);
  f.sum = f.n[0] + f.n[1] + f.n[2] + f.n[3];
  f.first = f.n[1] + 2 * f.n[2] + 3 * f.n[3];
  f.second = f.n[1] + 4 * f.n[2] + 9 * f.n[3];
  return f;
}

} // namespace

RecursiveGaussianCoefficients
RecursiveGaussianSetUp(double sigma, double spacing, int order, bool normalizeAcrossScale)
{
  if (!(sigma > 0.0))
  {
    throw std::invalid_argument("the recursive Gaussian's sigma must be greater than zero");
  }
  if (order < 0 || order > 2)
  {
    throw std::invalid_argument("the recursive Gaussian's order must be 0, 1 or 2");
  }
  const double direction = spacing < 0.0 ? -1.0 : 1.0;
  spacing = std::abs(spacing);
  if (!(spacing >= 1e-8))
  {
    std::ostringstream why;
    why << "the spacing " << spacing << " is too small for the recursive Gaussian (at least 1e-8)";
    throw std::invalid_argument(why.str());
  }
  const Exponentials e;
  const double       sigmad = sigma / spacing;
  RecursiveGaussianCoefficients c;
  // the feedback terms, common to every order
  {
    const double cos1 = std::cos(e.w1 / sigmad);
    const double cos2 = std::cos(e.w2 / sigmad);
    const double exp1 = std::exp(e.l1 / sigmad);
    const double exp2 = std::exp(e.l2 / sigmad);
    c.d[3] = exp1 * exp1 * exp2 * exp2;
    c.d[2] = -2 * cos1 * exp1 * exp2 * exp2;
    c.d[2] += -2 * cos2 * exp2 * exp1 * exp1;
    c.d[1] = 4 * cos2 * cos1 * exp1 * exp2;
    c.d[1] += exp1 * exp1 + exp2 * exp2;
    c.d[0] = -2 * (exp2 * cos2 + exp1 * cos1);
  }
  const double sd = 1.0 + c.d[0] + c.d[1] + c.d[2] + c.d[3];
  const double dd = c.d[0] + 2 * c.d[1] + 3 * c.d[2] + 4 * c.d[3];
  const double ed = c.d[0] + 4 * c.d[1] + 9 * c.d[2] + 16 * c.d[3];
  double       scale = 1.0; // the normalisation over the response's moment
  bool         symmetric = true;
  if (order == 0)
  {
    const Forward f = ForwardTerms(sigmad, e.a1[0], e.b1[0], e.a2[0], e.b2[0], e);
    const double  alpha = 2 * f.sum / sd - f.n[0];
    for (int k = 0; k < 4; ++k)
    {
      c.n[k] = f.n[k];
    }
    scale = alpha;
  }
  else if (order == 1)
  {
    const Forward f = ForwardTerms(sigmad, e.a1[1], e.b1[1], e.a2[1], e.b2[1], e);
    double        alpha = 2 * (f.sum * dd - f.first * sd) / (sd * sd);
    alpha *= direction;
    for (int k = 0; k < 4; ++k)
    {
      c.n[k] = f.n[k];
    }
    scale = alpha;
    symmetric = false;
  }
  else
  {
    const Forward g = ForwardTerms(sigmad, e.a1[0], e.b1[0], e.a2[0], e.b2[0], e);
    const Forward h = ForwardTerms(sigmad, e.a1[2], e.b1[2], e.a2[2], e.b2[2], e);
    const double  beta = -(2 * h.sum - sd * h.n[0]) / (2 * g.sum - sd * g.n[0]);
    for (int k = 0; k < 4; ++k)
    {
      c.n[k] = h.n[k] + beta * g.n[k];
    }
    const double sn = h.sum + beta * g.sum;
    const double dn = h.first + beta * g.first;
    const double en = h.second + beta * g.second;
    double       alpha = en * sd * sd - ed * sn * sd - 2 * dn * dd * sd + 2 * dd * dd * sn;
    alpha /= sd * sd * sd;
    scale = alpha;
  }
  const double normalization = (normalizeAcrossScale && order > 0) ? (order == 1 ? sigma : sigma * sigma) : 1.0;
  for (int k = 0; k < 4; ++k)
  {
    c.n[k] *= normalization / scale;
  }
  // the anticausal terms: mirrored (even orders) or negated (first order)
  const double sign = symmetric ? 1.0 : -1.0;
  for (int k = 0; k < 3; ++k)
  {
    c.m[k] = sign * (c.n[k + 1] - c.d[k] * c.n[0]);
  }
  c.m[3] = sign * -c.d[3] * c.n[0];
  // the edge value continued beyond the line's ends
  const double sn = c.n[0] + c.n[1] + c.n[2] + c.n[3];
  const double sm = c.m[0] + c.m[1] + c.m[2] + c.m[3];
  const double sdd = 1.0 + c.d[0] + c.d[1] + c.d[2] + c.d[3];
  for (int k = 0; k < 4; ++k)
  {
    c.bn[k] = c.d[k] * sn / sdd;
    c.bm[k] = c.d[k] * sm / sdd;
  }
  return c;
}

std::string
ValidateRecursiveGaussianAxisJob(const RecursiveGaussianAxisJob & job)
{
  if (job.axis < 0 || job.axis > 2)
  {
    return "the recursive Gaussian's axis must be 0, 1 or 2";
  }
  for (int a = 0; a < 3; ++a)
  {
    if (job.size[a] < 1)
    {
      return "the image has an empty axis";
    }
  }
  if (job.size[job.axis] < 4)
  {
    std::ostringstream why;
    why << "the recursive Gaussian needs at least 4 pixels along axis " << job.axis << ", not "
        << job.size[job.axis];
    return why.str();
  }
  return {};
}

template <typename TIn, typename TOut>
void
RecursiveGaussianAxisCPU(const TIn * input, TOut * output, const RecursiveGaussianAxisJob & job, int numberOfThreads)
{
  const std::string problem = ValidateRecursiveGaussianAxisJob(job);
  if (!problem.empty())
  {
    throw std::invalid_argument(problem);
  }
  const int          axis = job.axis;
  const std::int64_t length = job.size[axis];
  const std::int64_t stride = axis == 0 ? 1 : (axis == 1 ? job.size[0] : job.size[0] * job.size[1]);
  const std::int64_t lines = job.size[0] * job.size[1] * job.size[2] / length;
  ParallelFor(lines,
              numberOfThreads,
              [&](std::int64_t first, std::int64_t end)
              {
                std::vector<double> causal(static_cast<std::size_t>(length));
                for (std::int64_t line = first; line < end; ++line)
                {
                  // the line's first sample: `line` counts the other axes, x fastest
                  const std::int64_t inner = axis == 0 ? 1 : stride;
                  const std::int64_t base = (line % inner) + (line / inner) * inner * length;
                  const TIn *        in = input + base;
                  TOut *             out = output + base;
                  recursive_gaussian::FilterLine(
                    job.coefficients,
                    length,
                    [&](std::int64_t i) { return static_cast<double>(in[i * stride]); },
                    [&](std::int64_t i, double v) { causal[static_cast<std::size_t>(i)] = v; },
                    [&](std::int64_t i) { return causal[static_cast<std::size_t>(i)]; },
                    [&](std::int64_t i, double v) { out[i * stride] = recursive_gaussian::Convert<TOut>(v); });
                }
              });
}

namespace
{
/** The internal pixel of the smoothing: ITK's NumericTraits<T>::FloatType,
 * float for every pixel type of the cores (double included). */
using Internal = float;

} // namespace

template <typename T>
void
SmoothingRecursiveGaussianCPU(const T * input, T * output, const SmoothingRecursiveGaussianJob & job,
                              int numberOfThreads)
{
  using R = Internal;
  const std::size_t count = static_cast<std::size_t>(job.size[0] * job.size[1] * job.size[2]);
  std::vector<R>    work(count);
  recursive_gaussian::SmoothingPasses(job,
                   [&](int step, const RecursiveGaussianAxisJob & a)
                   {
                     if (step == 0)
                     {
                       RecursiveGaussianAxisCPU<T, R>(input, work.data(), a, numberOfThreads);
                     }
                     else
                     {
                       RecursiveGaussianAxisCPU<R, R>(work.data(), work.data(), a, numberOfThreads);
                     }
                   });
  ParallelFor(static_cast<std::int64_t>(count),
              numberOfThreads,
              [&](std::int64_t first, std::int64_t end)
              {
                for (std::int64_t i = first; i < end; ++i)
                {
                  output[i] = recursive_gaussian::Convert<T>(static_cast<double>(work[static_cast<std::size_t>(i)]));
                }
              });
}

std::string
ValidateGradientRecursiveGaussianJob(const GradientRecursiveGaussianJob & job)
{
  if (job.dimension < 1 || job.dimension > 3)
  {
    return "the recursive Gaussian gradient takes 1 to 3 dimensions";
  }
  for (int a = 0; a < job.dimension; ++a)
  {
    if (job.size[a] < 4)
    {
      std::ostringstream why;
      why << "the recursive Gaussian needs at least 4 pixels along every axis; axis " << a << " has " << job.size[a];
      return why.str();
    }
    if (!(job.sigma[a] > 0.0) || !std::isfinite(job.sigma[a]))
    {
      return "sigma must be positive and finite";
    }
    if (!(std::abs(job.spacing[a]) >= 1e-8) || !std::isfinite(job.spacing[a]))
    {
      return "the spacing must be finite and at least 1e-8";
    }
  }
  return {};
}

template <typename T, typename TOut>
void
GradientRecursiveGaussianCPU(const T * input, TOut * output, const GradientRecursiveGaussianJob & job,
                             int numberOfThreads)
{
  const std::string problem = ValidateGradientRecursiveGaussianJob(job);
  if (!problem.empty())
  {
    throw std::invalid_argument(problem);
  }
  const int          D = job.dimension;
  const std::int64_t count = job.size[0] * job.size[1] * job.size[2];
  std::vector<float> work(static_cast<std::size_t>(count));
  for (int d = 0; d < D; ++d)
  {
    recursive_gaussian::GradientPasses(job,
                                       d,
                                       [&](bool first, const RecursiveGaussianAxisJob & a)
                                       {
                                         if (first)
                                         {
                                           RecursiveGaussianAxisCPU<T, float>(input, work.data(), a, numberOfThreads);
                                         }
                                         else
                                         {
                                           RecursiveGaussianAxisCPU<float, float>(
                                             work.data(), work.data(), a, numberOfThreads);
                                         }
                                       });
    const double spacing = job.spacing[d];
    ParallelFor(count,
                numberOfThreads,
                [&](std::int64_t begin, std::int64_t end)
                {
                  for (std::int64_t i = begin; i < end; ++i)
                  {
                    output[i * D + d] = static_cast<TOut>(static_cast<float>(work[static_cast<std::size_t>(i)] / spacing));
                  }
                });
  }
  if (job.useImageDirection)
  {
    ParallelFor(count,
                numberOfThreads,
                [&](std::int64_t begin, std::int64_t end)
                {
                  for (std::int64_t i = begin; i < end; ++i)
                  {
                    if (D == 3)
                    {
                      recursive_gaussian::ApplyDirection<3>(job.direction, output + i * D);
                    }
                    else if (D == 2)
                    {
                      recursive_gaussian::ApplyDirection<2>(job.direction, output + i * D);
                    }
                    else
                    {
                      recursive_gaussian::ApplyDirection<1>(job.direction, output + i * D);
                    }
                  }
                });
  }
}

#define CIF_INSTANTIATE_GRADIENT(T)                                                                                  \
  template void GradientRecursiveGaussianCPU<T, float>(const T *, float *, const GradientRecursiveGaussianJob &, int); \
  template void GradientRecursiveGaussianCPU<T, double>(const T *, double *, const GradientRecursiveGaussianJob &, int);
CIF_RECURSIVE_GAUSSIAN_PIXELS(CIF_INSTANTIATE_GRADIENT)
#undef CIF_INSTANTIATE_GRADIENT

#define CIF_INSTANTIATE(T) template void SmoothingRecursiveGaussianCPU<T>(const T *, T *, const SmoothingRecursiveGaussianJob &, int);
#define CIF_INSTANTIATE_AXIS(TIN, TOUT)                                                                              \
  template void RecursiveGaussianAxisCPU<TIN, TOUT>(const TIN *, TOUT *, const RecursiveGaussianAxisJob &, int);
CIF_RECURSIVE_GAUSSIAN_PIXELS(CIF_INSTANTIATE)
CIF_RECURSIVE_GAUSSIAN_AXIS_PAIRS(CIF_INSTANTIATE_AXIS)
#undef CIF_INSTANTIATE
#undef CIF_INSTANTIATE_AXIS
} // namespace cif
