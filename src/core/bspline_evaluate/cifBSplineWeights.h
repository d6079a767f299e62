/*=========================================================================
 *  CudaImageFilters: the cubic B-spline support of one axis as
 *  itk::BSplineInterpolateImageFunction computes it (region of support,
 *  value and derivative weights, mirror boundary), shared by the CPU core
 *  (BSplineEvaluateCPU.cxx) and the CUDA kernel (BSplineEvaluate.cu).
 *=========================================================================*/
#ifndef cifBSplineWeights_h
#define cifBSplineWeights_h

#include "cifMirror.h"

#include <cmath>
#include <cstdint>

namespace cif
{

/** Offsets (times the axis stride) and weights of the four coefficients
 * along one axis; R is the type the sums run in. */
template <typename R>
struct CubicAxisSupport
{
  std::int64_t offset[4];
  R            weight[4];
  R            derivative[4];
};

/** The support of continuous index c on an axis of `size` samples whose
 * buffer starts at index `start`:
 * - ITK's DetermineRegionOfSupport: floor((float) c) - 1 (ITK casts to float
 *   before the floor);
 * - ITK's SetInterpolationWeights (order 3) and, with `gradient`,
 *   SetDerivativeWeights (order 3: the differences of the quadratic weights
 *   at c + 1/2), computed in double;
 * - ITK's ApplyMirrorBoundaryConditions: one reflection about the first and
 *   the last sample, an axis of length 1 using its one sample; for an axis
 *   of length 2 one reflection can leave the buffer (ITK then reads outside
 *   it), where the full mirror fold keeps the index inside. */
template <typename R>
CIF_HOST_DEVICE void
CubicSupport(double                c,
             std::int64_t          start,
             std::int64_t          size,
             std::int64_t          stride,
             bool                  gradient,
             CubicAxisSupport<R> & s)
{
  const std::int64_t first = static_cast<std::int64_t>(floorf(static_cast<float>(c))) - 1;
  {
    const double w = c - static_cast<double>(first + 1);
    const double w3 = (1.0 / 6.0) * w * w * w;
    const double w0 = (1.0 / 6.0) + 0.5 * w * (w - 1.0) - w3;
    const double w2 = w + w0 - 2.0 * w3;
    const double w1 = 1.0 - w0 - w2 - w3;
    s.weight[0] = static_cast<R>(w0);
    s.weight[1] = static_cast<R>(w1);
    s.weight[2] = static_cast<R>(w2);
    s.weight[3] = static_cast<R>(w3);
  }
  if (gradient)
  {
    const double v = c + 0.5 - static_cast<double>(first + 2);
    const double q2 = 0.75 - v * v;
    const double q3 = 0.5 * (v - q2 + 1.0);
    const double q1 = 1.0 - q2 - q3;
    s.derivative[0] = static_cast<R>(0.0 - q1);
    s.derivative[1] = static_cast<R>(q1 - q2);
    s.derivative[2] = static_cast<R>(q2 - q3);
    s.derivative[3] = static_cast<R>(q3);
  }
  const std::int64_t end = start + size - 1;
#ifdef __CUDACC__
#  pragma unroll
#endif
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

/** ITK's sum over the support of `dimension` axes
 * (BSplineInterpolateImageFunction's loops over its interpolation points):
 * the 4^dimension points x fastest, each point's weight the product of its
 * axes' weights in axis order, times its coefficient, added in that order.
 * With derivativeAxis >= 0 that axis takes its derivative weights (ITK's
 * EvaluateDerivativeAtContinuousIndex, one axis at a time). */
template <typename T, typename R>
CIF_HOST_DEVICE double
SupportSum(const T * coefficients, const CubicAxisSupport<R> * s, int dimension, int derivativeAxis = -1)
{
  const int points = dimension == 2 ? 16 : 64;
  double    sum = 0.0;
  for (int q = 0; q < points; ++q)
  {
    double       w = 1.0;
    std::int64_t offset = 0;
    for (int a = 0, rest = q; a < dimension; ++a, rest /= 4)
    {
      w *= a == derivativeAxis ? s[a].derivative[rest % 4] : s[a].weight[rest % 4];
      offset += s[a].offset[rest % 4];
    }
    sum += w * static_cast<double>(coefficients[offset]);
  }
  return sum;
}

} // namespace cif

#endif
