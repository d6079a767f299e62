/*=========================================================================
 *  CudaImageFilters: the CPU core of the cubic B-spline evaluation (values
 *  and gradients at scattered points), with the arithmetic of
 *  itk::BSplineInterpolateImageFunction<..., double> for spline order 3.
 *=========================================================================*/
#include "cifBSplineEvaluate.h"
#include "cifMirror.h"
#include "cifParallelFor.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace cif
{
namespace
{

/** One axis of the support: the four coefficient offsets and weights. */
struct Support
{
  std::int64_t offset[4];
  double       weight[4];
  double       derivative[4];
};

void
CubicSupport(double c, std::int64_t start, std::int64_t size, std::int64_t stride, bool gradient, Support & s)
{
  // ITK's DetermineRegionOfSupport: floor((float) x) - 1.
  const std::int64_t first = static_cast<std::int64_t>(std::floor(static_cast<float>(c))) - 1;
  // ITK's SetInterpolationWeights, spline order 3.
  const double w = c - static_cast<double>(first + 1);
  s.weight[3] = (1.0 / 6.0) * w * w * w;
  s.weight[0] = (1.0 / 6.0) + 0.5 * w * (w - 1.0) - s.weight[3];
  s.weight[2] = w + s.weight[0] - 2.0 * s.weight[3];
  s.weight[1] = 1.0 - s.weight[0] - s.weight[2] - s.weight[3];
  if (gradient)
  {
    // ITK's SetDerivativeWeights for spline order 3: differences of the
    // quadratic weights at x + 1/2.
    const double v = c + 0.5 - static_cast<double>(first + 2);
    const double q1 = 0.75 - v * v;
    const double q2 = 0.5 * (v - q1 + 1.0);
    const double q3 = 1.0 - q1 - q2;
    s.derivative[0] = 0.0 - q3;
    s.derivative[1] = q3 - q1;
    s.derivative[2] = q1 - q2;
    s.derivative[3] = q2;
  }
  // ITK's ApplyMirrorBoundaryConditions (one reflection about the first and
  // the last sample; a length-1 axis uses its one sample), then the full
  // fold for the length-2 case where one reflection leaves the buffer, as
  // the GPU kernel does.
  const std::int64_t end = start + size - 1;
  for (int k = 0; k < 4; ++k)
  {
    std::int64_t i = first + k;
    if (i < start)
    {
      i = start + (start - i);
    }
    if (i >= end)
    {
      i = end - (i - end);
    }
    i -= start;
    if (size == 1)
    {
      i = 0;
    }
    else if (i < 0 || i >= size)
    {
      i = MirrorIndex(i, size);
    }
    s.offset[k] = i * stride;
  }
}

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
  const std::int64_t stride[3] = { 1, g.size[0], g.size[0] * g.size[1] };
  Support            s[3];
  for (int a = 0; a < D; ++a)
  {
    CubicSupport(c[a], g.start[a], g.size[a], stride[a], gradient, s[a]);
  }
  const int points = D == 2 ? 16 : 64;
  if (b.values != nullptr)
  {
    // ITK's loop over the support points, x fastest, weights multiplied in axis order
    double value = 0.0;
    for (int q = 0; q < points; ++q)
    {
      double       w = 1.0;
      std::int64_t offset = 0;
      for (int a = 0, rest = q; a < D; ++a, rest /= 4)
      {
        w *= s[a].weight[rest % 4];
        offset += s[a].offset[rest % 4];
      }
      value += w * static_cast<double>(coefficients[offset]);
    }
    b.values[n] = value;
  }
  if (gradient)
  {
    double local[3] = { 0, 0, 0 };
    for (int d = 0; d < D; ++d)
    {
      double sum = 0.0;
      for (int q = 0; q < points; ++q)
      {
        double       w = 1.0;
        std::int64_t offset = 0;
        for (int a = 0, rest = q; a < D; ++a, rest /= 4)
        {
          w *= a == d ? s[a].derivative[rest % 4] : s[a].weight[rest % 4];
          offset += s[a].offset[rest % 4];
        }
        sum += static_cast<double>(coefficients[offset]) * w;
      }
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

template void
BSplineEvaluateCPU<float>(const float *, const BSplineEvaluateGeometry &, const BSplineEvaluateBatch &, int);
template void
BSplineEvaluateCPU<double>(const double *, const BSplineEvaluateGeometry &, const BSplineEvaluateBatch &, int);

} // namespace cif
