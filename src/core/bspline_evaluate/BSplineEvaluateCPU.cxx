/*=========================================================================
 *  CudaImageFilters: the CPU core of the cubic B-spline evaluation (values
 *  and gradients at scattered points), with the arithmetic of
 *  itk::BSplineInterpolateImageFunction<..., double> for spline order 3.
 *=========================================================================*/
#include "cif/BSplineEvaluate.h"
#include "cifBSplineWeights.h"
#include "cifParallelFor.h"
#include "cifPixelLists.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace cif
{
namespace
{

template <typename T>
void
EvaluatePoint(const T * coefficients, const BSplineEvaluateGeometry & g, const BSplineEvaluateBatch & b, std::int64_t n)
{
  const int      D = g.dimension;
  const double * p = b.points + n * D;
  double         c[3] = { 0, 0, 0 };
  if (b.pointsAreIndices)
  {
    for (int a = 0; a < D; ++a)
    {
      c[a] = p[a];
    }
  }
  else
  {
    // ITK: index = m_PhysicalPointToIndex * (point - origin)
    double v[3] = { 0, 0, 0 };
    for (int a = 0; a < D; ++a)
    {
      v[a] = p[a] - g.origin[a];
    }
    for (int r = 0; r < D; ++r)
    {
      double sum = 0.0;
      for (int k = 0; k < D; ++k)
      {
        sum += g.pointToIndex[r][k] * v[k];
      }
      c[r] = sum;
    }
  }
  bool inside = true;
  for (int a = 0; a < D; ++a)
  {
    const double lo = static_cast<double>(g.start[a]) - 0.5;
    const double hi = static_cast<double>(g.start[a] + g.size[a] - 1) + 0.5;
    inside = inside && (c[a] >= lo && c[a] < hi); // NaN is outside
  }
  if (b.inside != nullptr)
  {
    b.inside[n] = inside ? 1 : 0;
  }
  const bool gradient = b.gradients != nullptr;
  if (!inside)
  {
    if (b.values != nullptr)
    {
      b.values[n] = 0.0;
    }
    if (gradient)
    {
      for (int a = 0; a < D; ++a)
      {
        b.gradients[n * D + a] = 0.0;
      }
    }
    return;
  }
  const std::int64_t       stride[3] = { 1, g.size[0], g.size[0] * g.size[1] };
  CubicAxisSupport<double> s[3];
  for (int a = 0; a < D; ++a)
  {
    CubicSupport<double>(c[a], g.start[a], g.size[a], stride[a], gradient, s[a]);
  }
  if (b.values != nullptr)
  {
    b.values[n] = SupportSum(coefficients, s, D);
  }
  if (gradient)
  {
    double local[3] = { 0, 0, 0 };
    for (int d = 0; d < D; ++d)
    {
      const double sum = SupportSum(coefficients, s, D, d);
      local[d] = sum / g.spacing[d];
    }
    for (int r = 0; r < D; ++r)
    {
      double sum = 0.0;
      for (int k = 0; k < D; ++k)
      {
        sum += g.gradientMatrix[r][k] * local[k];
      }
      b.gradients[n * D + r] = sum;
    }
  }
}

} // namespace

template <typename TCoefficient>
void
BSplineEvaluateCPU(const TCoefficient *            coefficients,
                   const BSplineEvaluateGeometry & geometry,
                   const BSplineEvaluateBatch &    batch,
                   int                             numberOfThreads)
{
  if (geometry.dimension != 2 && geometry.dimension != 3)
  {
    throw std::invalid_argument("BSplineEvaluateCPU: 2 or 3 dimensions, not " + std::to_string(geometry.dimension));
  }
  for (int a = 0; a < geometry.dimension; ++a)
  {
    if (geometry.size[a] < 1)
    {
      throw std::invalid_argument("BSplineEvaluateCPU: empty coefficient image");
    }
  }
  if (batch.count < 0 || (batch.count > 0 && (batch.points == nullptr || coefficients == nullptr)))
  {
    throw std::invalid_argument("BSplineEvaluateCPU: invalid batch (negative count or null pointers)");
  }
  ParallelFor(batch.count,
              numberOfThreads,
              [&](std::int64_t first, std::int64_t last)
              {
                for (std::int64_t n = first; n < last; ++n)
                {
                  EvaluatePoint(coefficients, geometry, batch, n);
                }
              });
}

#define CIF_INSTANTIATE_BSPLINE_EVALUATE_CPU(T)                                                                        \
  template void BSplineEvaluateCPU<T>(const T *, const BSplineEvaluateGeometry &, const BSplineEvaluateBatch &, int);
CIF_BSPLINE_EVALUATE_PIXELS(CIF_INSTANTIATE_BSPLINE_EVALUATE_CPU)

} // namespace cif
