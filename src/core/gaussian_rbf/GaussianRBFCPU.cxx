/*=========================================================================
 *  CudaImageFilters: the CPU core of separable GRBF interpolation (one
 *  pass per non-identity axis, see cifGaussianRBF.h).
 *=========================================================================*/
#include "cif/GaussianRBF.h"
#include "cifGaussianRBFDetail.h"
#include "cifParallelFor.h"
#include "cifPixelLists.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace cif
{

std::string
ValidateGrbfJob(const GrbfSeparableJob & job)
{
  if (job.dimension < 1 || job.dimension > 3)
  {
    return "the dimension must be 1, 2 or 3";
  }
  for (int a = 0; a < job.dimension; ++a)
  {
    const GrbfAxisOperator * op = job.axis[a].get();
    if (op == nullptr)
    {
      return "axis " + std::to_string(a) + " has no operator";
    }
    if (op->inputSize < 1 || op->outputSize < 1 || op->taps < 1 || op->taps > op->inputSize ||
        static_cast<std::int64_t>(op->first.size()) != op->outputSize ||
        static_cast<std::int64_t>(op->outside.size()) != op->outputSize ||
        static_cast<std::int64_t>(op->weights.size()) != op->outputSize * op->taps)
    {
      return "axis " + std::to_string(a) + " has an inconsistent operator";
    }
    for (std::int64_t k = 0; k < op->outputSize; ++k)
    {
      if (op->first[k] < 0 || op->first[k] + op->taps > op->inputSize)
      {
        return "axis " + std::to_string(a) + " reads outside its input";
      }
    }
  }
  if (!(job.outputMin <= job.outputMax))
  {
    return "outputMin must not exceed outputMax";
  }
  return {};
}

std::vector<int>
GrbfPassOrder(const GrbfSeparableJob & job)
{
  std::vector<int> order;
  for (int a = 0; a < job.dimension; ++a)
  {
    if (!job.axis[a]->identity)
    {
      order.push_back(a);
    }
  }
  std::stable_sort(order.begin(),
                   order.end(),
                   [&](int p, int q)
                   {
                     const auto & P = *job.axis[p];
                     const auto & Q = *job.axis[q];
                     // P.out / P.in < Q.out / Q.in
                     return static_cast<double>(P.outputSize) * static_cast<double>(Q.inputSize) <
                            static_cast<double>(Q.outputSize) * static_cast<double>(P.inputSize);
                   });
  return order;
}

namespace
{

/** One axis pass: dst[o][k][i] = sum_t w[k][t] src[o][first[k] + t][i]. */
template <typename TSrc, typename TDst>
void
AxisPass(const TSrc * src, TDst * dst, const GrbfAxisOperator & op, std::int64_t outer, std::int64_t inner, int threads)
{
  const std::int64_t nIn = op.inputSize;
  const std::int64_t nOut = op.outputSize;
  const int          T = op.taps;
  ParallelFor(outer * nOut,
              threads,
              [&](std::int64_t begin, std::int64_t end)
              {
                std::vector<double> acc(static_cast<std::size_t>(inner));
                for (std::int64_t line = begin; line < end; ++line)
                {
                  const std::int64_t o = line / nOut;
                  const std::int64_t k = line % nOut;
                  std::fill(acc.begin(), acc.end(), 0.0);
                  const double * w = &op.weights[static_cast<std::size_t>(k * T)];
                  const TSrc *   s = src + (o * nIn + op.first[k]) * inner;
                  for (int t = 0; t < T; ++t)
                  {
                    const double wt = w[t];
                    if (wt == 0.0)
                    {
                      continue;
                    }
                    const TSrc * row = s + static_cast<std::int64_t>(t) * inner;
                    for (std::int64_t i = 0; i < inner; ++i)
                    {
                      acc[i] += wt * static_cast<double>(row[i]);
                    }
                  }
                  TDst * d = dst + (o * nOut + k) * inner;
                  for (std::int64_t i = 0; i < inner; ++i)
                  {
                    d[i] = static_cast<TDst>(acc[i]);
                  }
                }
              });
}

} // namespace

template <typename T>
void
GrbfSeparableCPU(const T * input, T * output, const GrbfSeparableJob & job, int numberOfThreads)
{
  const std::string problem = ValidateGrbfJob(job);
  if (!problem.empty())
  {
    throw std::invalid_argument("GrbfSeparableCPU: " + problem);
  }
  using TAcc = GrbfIntermediate<T>;
  std::int64_t size[3] = { 1, 1, 1 };
  std::int64_t outSize[3] = { 1, 1, 1 };
  for (int a = 0; a < job.dimension; ++a)
  {
    size[a] = job.axis[a]->inputSize;
    outSize[a] = job.axis[a]->outputSize;
  }
  const std::vector<int> order = GrbfPassOrder(job);

  // the intermediate image after each pass; the first pass reads the input
  std::vector<TAcc> current, next;
  bool              fromInput = true;
  for (int a : order)
  {
    const GrbfAxisOperator & op = *job.axis[a];
    std::int64_t             inner = 1, outer = 1;
    for (int b = 0; b < a; ++b)
    {
      inner *= size[b];
    }
    for (int b = a + 1; b < 3; ++b)
    {
      outer *= size[b];
    }
    next.resize(static_cast<std::size_t>(outer * op.outputSize * inner)); // every sample is written
    if (fromInput)
    {
      AxisPass(input, next.data(), op, outer, inner, numberOfThreads);
    }
    else
    {
      AxisPass(current.data(), next.data(), op, outer, inner, numberOfThreads);
    }
    fromInput = false;
    size[a] = op.outputSize;
    current.swap(next);
  }
  ParallelFor(outSize[2] * outSize[1],
              numberOfThreads,
              [&](std::int64_t begin, std::int64_t end)
              {
                for (std::int64_t line = begin; line < end; ++line)
                {
                  const std::int64_t z = line / outSize[1];
                  const std::int64_t y = line % outSize[1];
                  const bool         lineOutside =
                    (job.dimension > 2 && job.axis[2]->outside[z]) || (job.dimension > 1 && job.axis[1]->outside[y]);
                  for (std::int64_t x = 0; x < outSize[0]; ++x)
                  {
                    const std::int64_t i = line * outSize[0] + x;
                    output[i] = (lineOutside || job.axis[0]->outside[x])
                                  ? static_cast<T>(job.defaultValue)
                                  : GrbfConvert<T>(
                                      fromInput ? static_cast<double>(input[i]) : static_cast<double>(current[i]), job);
                  }
                }
              });
}

#define CIF_INSTANTIATE_GRBF_CPU(T) template void GrbfSeparableCPU<T>(const T *, T *, const GrbfSeparableJob &, int);
CIF_GRBF_PIXELS(CIF_INSTANTIATE_GRBF_CPU)

template <typename T>
void
GrbfCoefficientsCPU(const T * input, double * coefficients, const GrbfPointsPlan & plan, int numberOfThreads)
{
  if constexpr (std::is_same<T, double>::value)
  {
    GrbfSeparableCPU<double>(input, coefficients, plan.coefficientJob, numberOfThreads);
  }
  else
  {
    std::int64_t count = 1;
    for (int a = 0; a < plan.dimension; ++a)
    {
      count *= plan.axis[a].inputSize;
    }
    std::vector<double> samples(static_cast<std::size_t>(count));
    std::transform(input, input + count, samples.begin(), [](T v) { return static_cast<double>(v); });
    GrbfSeparableCPU<double>(samples.data(), coefficients, plan.coefficientJob, numberOfThreads);
  }
}

namespace
{
GrbfDenseLayout
DenseLayoutOf(const GrbfPointsRule & rule)
{
  GrbfDenseLayout layout;
  layout.stride[1] = rule.size[0];
  layout.stride[2] = rule.size[0] * rule.size[1];
  return layout;
}
} // namespace

double
GrbfEvaluateCPU(const double * coefficients, const GrbfPointsRule & rule, const double c[3])
{
  return GrbfEvaluateAt(coefficients, DenseLayoutOf(rule), rule, c);
}

void
GrbfEvaluatePointsCPU(const double *         coefficients,
                      const GrbfPointsRule & rule,
                      const double *         points,
                      std::int64_t           count,
                      double                 defaultValue,
                      double *               values,
                      int                    numberOfThreads)
{
  const GrbfDenseLayout layout = DenseLayoutOf(rule);
  const int             D = rule.dimension;
  ParallelFor(count,
              numberOfThreads,
              [&](std::int64_t begin, std::int64_t end)
              {
                for (std::int64_t k = begin; k < end; ++k)
                {
                  double c[3] = { 0, 0, 0 };
                  bool   inside = true;
                  for (int a = 0; a < D; ++a)
                  {
                    c[a] = points[k * D + a];
                    inside = inside && c[a] >= -0.5 && c[a] < static_cast<double>(rule.size[a]) - 0.5;
                  }
                  values[k] = inside ? GrbfEvaluateAt(coefficients, layout, rule, c) : defaultValue;
                }
              });
}

template <typename T>
void
GrbfEvaluateAffineCPU(const double *         coefficients,
                      const GrbfPointsRule & rule,
                      const std::int64_t     outputSize[3],
                      const double           matrix[3][3],
                      const double           offset[3],
                      double                 defaultValue,
                      double                 outputMin,
                      double                 outputMax,
                      T *                    output,
                      int                    numberOfThreads)
{
  const GrbfDenseLayout layout = DenseLayoutOf(rule);
  const int             D = rule.dimension;
  ParallelFor(outputSize[1] * outputSize[2],
              numberOfThreads,
              [&](std::int64_t begin, std::int64_t end)
              {
                for (std::int64_t line = begin; line < end; ++line)
                {
                  const double o1 = static_cast<double>(line % outputSize[1]);
                  const double o2 = static_cast<double>(line / outputSize[1]);
                  for (std::int64_t x = 0; x < outputSize[0]; ++x)
                  {
                    const double o[3] = { static_cast<double>(x), o1, o2 };
                    double       c[3] = { 0, 0, 0 };
                    bool         inside = true;
                    for (int a = 0; a < D; ++a)
                    {
                      c[a] = matrix[a][0] * o[0] + matrix[a][1] * o[1] + matrix[a][2] * o[2] + offset[a];
                      inside = inside && c[a] >= -0.5 && c[a] < static_cast<double>(rule.size[a]) - 0.5;
                    }
                    output[line * outputSize[0] + x] =
                      inside ? GrbfConvertValue<T>(
                                 GrbfEvaluateAt(coefficients, layout, rule, c), outputMin, outputMax, defaultValue)
                             : static_cast<T>(defaultValue);
                  }
                }
              });
}

#define CIF_INSTANTIATE_GRBF_COEFFICIENTS_CPU(T)                                                                       \
  template void GrbfCoefficientsCPU<T>(const T *, double *, const GrbfPointsPlan &, int);                              \
  template void GrbfEvaluateAffineCPU<T>(const double *,                                                               \
                                         const GrbfPointsRule &,                                                       \
                                         const std::int64_t[3],                                                        \
                                         const double[3][3],                                                           \
                                         const double[3],                                                              \
                                         double,                                                                       \
                                         double,                                                                       \
                                         double,                                                                       \
                                         T *,                                                                          \
                                         int);
CIF_GRBF_PIXELS(CIF_INSTANTIATE_GRBF_COEFFICIENTS_CPU)

} // namespace cif
