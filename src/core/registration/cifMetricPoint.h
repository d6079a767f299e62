/*=========================================================================
 *  CudaImageFilters: the per-point arithmetic of the registration metric
 *  core (private to src/), shared by the CUDA kernel and the CPU core so
 *  that both evaluate a point with the same operations.
 *
 *  ITK's operations, in double:
 *  - ImageBase::TransformIndexToPhysicalPoint and
 *    TransformPhysicalPointToContinuousIndex (sums in axis order);
 *  - ImageFunction::IsInsideBuffer (start - 0.5 <= c < end + 0.5, NaN out);
 *  - LinearInterpolateImageFunction::EvaluateOptimized: base index
 *    floor(c) raised to the buffer's first index, distance c - base; an
 *    axis with distance <= 0 or whose next index passes the buffer's last
 *    uses the base sample alone. The nested form a + (b - a) d, x first,
 *    then y, then z, gives ITK's value in each of its branches (a term with
 *    d = 0 or b = a adds exactly 0). The CUDA source is compiled without
 *    fused multiply-adds, so both cores round as ITK's x86-64 build does.
 *=========================================================================*/
#ifndef cifMetricPoint_h
#define cifMetricPoint_h

#include "cif/RegistrationMetric.h"
#include "../bspline_evaluate/cifBSplineWeights.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#ifdef __CUDACC__
#  define CIF_METRIC_HD __host__ __device__ __forceinline__
#else
#  define CIF_METRIC_HD inline
#endif

namespace cif
{
namespace metric
{

/** The number of virtual points: the sampled points, or the region's. */
CIF_METRIC_HD std::int64_t
DomainCount(const DenseMetricJob & job)
{
  return job.points != nullptr ? job.pointCount : job.virtualSize[0] * job.virtualSize[1] * job.virtualSize[2];
}

/** The virtual point number `linear`: a sampled point, or the point of
 * region offset `linear` (x fastest). */
template <int D>
CIF_METRIC_HD void
VirtualPoint(const DenseMetricJob & job, std::int64_t linear, double x[D])
{
  if (job.points != nullptr)
  {
    for (int a = 0; a < D; ++a)
    {
      x[a] = job.points[linear * D + a];
    }
    return;
  }
  double index[D];
  for (int a = 0; a < D; ++a)
  {
    const std::int64_t q = linear / job.virtualSize[a];
    index[a] = static_cast<double>(job.virtualStart[a] + (linear - q * job.virtualSize[a]));
    linear = q;
  }
  // ITK's order: the origin first, then each index term
  for (int r = 0; r < D; ++r)
  {
    double sum = job.virtualOrigin[r];
    for (int c = 0; c < D; ++c)
    {
      sum += job.virtualIndexToPoint[r][c] * index[c];
    }
    x[r] = sum;
  }
}

template <int D>
CIF_METRIC_HD void
Map(const MetricAffineMap & map, const double x[D], double y[D])
{
  for (int r = 0; r < D; ++r)
  {
    double sum = 0.0;
    for (int c = 0; c < D; ++c)
    {
      sum += map.matrix[r][c] * x[c];
    }
    y[r] = sum + map.offset[r];
  }
}

/** The maps of `chain` applied to x in turn (x itself for count 0). */
template <int D>
CIF_METRIC_HD void
MapChain(const MetricAffineChain & chain, const double x[D], double y[D])
{
  for (int a = 0; a < D; ++a)
  {
    y[a] = x[a];
  }
  for (int i = 0; i < chain.count; ++i)
  {
    double t[D];
    for (int a = 0; a < D; ++a)
    {
      t[a] = y[a];
    }
    Map<D>(chain.maps[i], t, y);
  }
}

/** ITK's Math::FloatAlmostEqual(x1, x2) with its defaults (4 ULP, or an
 * absolute difference of a tenth of double's epsilon). */
CIF_METRIC_HD bool
AlmostEqualUlps(double x1, double x2)
{
  const double difference = x1 > x2 ? x1 - x2 : x2 - x1;
  if (difference <= 0.1 * 2.220446049250313e-16)
  {
    return true;
  }
  if (std::signbit(x1) != std::signbit(x2))
  {
    return false;
  }
  std::int64_t a = 0;
  std::int64_t b = 0;
  std::memcpy(&a, &x1, sizeof(a));
  std::memcpy(&b, &x2, sizeof(b));
  const std::int64_t ulps = a > b ? a - b : b - a;
  return ulps <= 4;
}

/** ITK's Math::FloatAddULP(x, ulps) for double. */
CIF_METRIC_HD double
AddUlps(double x, std::int64_t ulps)
{
  std::int64_t bits = 0;
  std::memcpy(&bits, &x, sizeof(bits));
  bits += ulps;
  double y = 0.0;
  std::memcpy(&y, &bits, sizeof(y));
  return y;
}

/** itk::BSplineKernelFunction<3> and itk::BSplineDerivativeKernelFunction<3>. */
CIF_METRIC_HD double
CubicBSpline(double u)
{
  const double a = u < 0 ? -u : u;
  if (a < 1.0)
  {
    const double q = a * a;
    return (4.0 - 6.0 * q + 3.0 * q * a) / 6.0;
  }
  if (a < 2.0)
  {
    const double q = a * a;
    return (8.0 - 12.0 * a + 6.0 * q - q * a) / 6.0;
  }
  return 0.0;
}


/** Where a virtual point falls in a B-spline moving transform's grid: the
 * support's first control point, the distances c - start on each axis (the
 * argument of the first 1D weight) and the 1D weights; `inside` false when
 * the support is not inside the grid. */
/** The number of points of a cubic B-spline's support in D dimensions,
 * 4^D. */
template <int D>
constexpr int
SupportCount()
{
  return D == 2 ? 16 : 64;
}

template <int D>
struct BSplineSupport
{
  bool         inside{ false };
  std::int64_t start[D];
  double       offset[D];
  double       weights[D][4];
};

/** itk::BSplineInterpolationWeightFunction's 1D weights from the distances:
 * B3(x), B3(x - 1), B3(x - 2), B3(x - 3), x decremented by 1 each step. */
template <int D>
CIF_METRIC_HD void
BSplineWeights1D(const double offset[D], double weights[D][4])
{
  for (int a = 0; a < D; ++a)
  {
    double x = offset[a];
    for (int k = 0; k < 4; ++k)
    {
      weights[a][k] = CubicBSpline(x);
      x -= 1.0;
    }
  }
}

/** The weight of support control point `o` (o_0 fastest, 4 per axis): ITK's
 * product 1 * w_0 * w_1 (* w_2), in that order. */
template <int D>
CIF_METRIC_HD double
BSplineSupportWeight(const double weights[D][4], int o)
{
  double w = 1.0;
  for (int a = 0; a < D; ++a)
  {
    w *= weights[a][o & 3];
    o >>= 2;
  }
  return w;
}

/** The grid offset of support control point `o` of `support`. */
template <int D>
CIF_METRIC_HD std::int64_t
BSplineSupportIndex(const MetricBSpline & b, const std::int64_t start[D], int o)
{
  std::int64_t linear = 0;
  std::int64_t stride = 1;
  for (int a = 0; a < D; ++a)
  {
    linear += (start[a] + (o & 3)) * stride;
    stride *= b.gridSize[a];
    o >>= 2;
  }
  return linear;
}

/** itk::BSplineTransform<double, D, 3>::TransformPoint(x) into y, and where x
 * falls in the grid (InsideValidRegion with ITK's nudge, the weights). */
template <int D>
CIF_METRIC_HD void
MapBSpline(const MetricBSpline & b, const double x[D], double y[D], BSplineSupport<D> & support)
{
  double d[D];
  for (int a = 0; a < D; ++a)
  {
    d[a] = x[a] - b.gridOrigin[a];
  }
  double c[D];
  support.inside = true;
  for (int r = 0; r < D; ++r)
  {
    double sum = 0.0;
    for (int k = 0; k < D; ++k)
    {
      sum += b.gridPointToIndex[r][k] * d[k];
    }
    c[r] = sum;
  }
  for (int a = 0; a < D && support.inside; ++a)
  {
    // ITK: minLimit 0.5 (order - 1), maxLimit size - 0.5 (order - 1) - 1
    const double maxLimit = static_cast<double>(b.gridSize[a]) - 1.0 - 1.0;
    if (AlmostEqualUlps(c[a], maxLimit))
    {
      c[a] = AddUlps(maxLimit, -6);
    }
    else if (!(c[a] < maxLimit) || !(c[a] >= 1.0))
    {
      // NaN is outside too
      support.inside = false;
    }
  }
  if (!support.inside)
  {
    for (int a = 0; a < D; ++a)
    {
      y[a] = x[a];
    }
    return;
  }
  for (int a = 0; a < D; ++a)
  {
    support.start[a] = static_cast<std::int64_t>(floor(c[a] + 0.5 - 1.5));
    support.offset[a] = c[a] - static_cast<double>(support.start[a]);
  }
  BSplineWeights1D<D>(support.offset, support.weights);
  const std::int64_t count = b.gridSize[0] * b.gridSize[1] * b.gridSize[2];
  double             sum[D];
  for (int a = 0; a < D; ++a)
  {
    sum[a] = 0.0;
  }
  constexpr int supportCount = SupportCount<D>();
  for (int o = 0; o < supportCount; ++o)
  {
    const double       w = BSplineSupportWeight<D>(support.weights, o);
    const std::int64_t j = BSplineSupportIndex<D>(b, support.start, o);
    for (int a = 0; a < D; ++a)
    {
      sum[a] += w * b.coefficients[a * count + j];
    }
  }
  for (int a = 0; a < D; ++a)
  {
    y[a] = sum[a] + x[a];
  }
}

/** The continuous index of physical point p in `image`, and whether it lies
 * inside the buffer (ITK's IsInsideBuffer). */
template <int D>
CIF_METRIC_HD bool
ContinuousIndex(const MetricImage & image, const double p[D], double c[D])
{
  double d[D];
  for (int a = 0; a < D; ++a)
  {
    d[a] = p[a] - image.origin[a];
  }
  bool inside = true;
  for (int r = 0; r < D; ++r)
  {
    double sum = 0.0;
    for (int k = 0; k < D; ++k)
    {
      sum += image.pointToIndex[r][k] * d[k];
    }
    c[r] = sum;
    const double first = static_cast<double>(image.start[r]) - 0.5;
    const double end = static_cast<double>(image.start[r] + image.size[r] - 1) + 0.5;
    inside = inside && (sum >= first && sum < end);
  }
  return inside;
}

/** itk::DisplacementFieldTransform::TransformPoint(x) into y with its
 * VectorLinearInterpolateImageFunction (see MetricDisplacementField). */
template <int D>
CIF_METRIC_HD void
MapField(const MetricDisplacementField & f, const double x[D], double y[D])
{
  for (int a = 0; a < D; ++a)
  {
    y[a] = x[a];
  }
  double c[D];
  if (!ContinuousIndex<D>(f.grid, x, c))
  {
    return;
  }
  std::int64_t base[D];
  double       distance[D];
  for (int a = 0; a < D; ++a)
  {
    base[a] = static_cast<std::int64_t>(floor(c[a]));
    distance[a] = c[a] - static_cast<double>(base[a]);
  }
  double u[D];
  for (int a = 0; a < D; ++a)
  {
    u[a] = 0.0;
  }
  double total = 0.0;
  for (int counter = 0; counter < (1 << D); ++counter)
  {
    double       overlap = 1.0;
    std::int64_t offset = 0;
    std::int64_t stride = 1;
    for (int a = 0; a < D; ++a)
    {
      std::int64_t n = base[a];
      if ((counter >> a) & 1)
      {
        n += 1;
        const std::int64_t last = f.grid.start[a] + f.grid.size[a] - 1;
        n = n > last ? last : n;
        overlap *= distance[a];
      }
      else
      {
        n = n < f.grid.start[a] ? f.grid.start[a] : n;
        overlap *= 1.0 - distance[a];
      }
      offset += (n - f.grid.start[a]) * stride;
      stride *= f.grid.size[a];
    }
    if (overlap != 0.0)
    {
      const double * v = f.displacements + offset * D;
      for (int a = 0; a < D; ++a)
      {
        u[a] += overlap * v[a];
      }
      total += overlap;
    }
    if (total == 1.0)
    {
      break;
    }
  }
  for (int a = 0; a < D; ++a)
  {
    y[a] += u[a];
  }
}

/** Whether physical point p is inside `mask` (true without a mask): ITK's
 * ImageMaskSpatialObject::IsInsideInWorldSpace, see MetricMask. */
template <int D>
CIF_METRIC_HD bool
InsideMask(const MetricMask & mask, const double p[D])
{
  const auto * flags = static_cast<const unsigned char *>(mask.image.values);
  if (flags == nullptr)
  {
    return true;
  }
  double o[D];
  Map<D>(mask.worldToObject, p, o);
  std::int64_t offset = 0;
  std::int64_t stride = 1;
  for (int r = 0; r < D; ++r)
  {
    double sum = 0.0;
    for (int k = 0; k < D; ++k)
    {
      sum += mask.image.pointToIndex[r][k] * (o[k] - mask.image.origin[k]);
    }
    // Math::RoundHalfIntegerUp; NaN is outside
    const double index = floor(sum + 0.5);
    const double first = static_cast<double>(mask.image.start[r]);
    if (!(index >= first && index < first + static_cast<double>(mask.image.size[r])))
    {
      return false;
    }
    offset += (static_cast<std::int64_t>(index) - mask.image.start[r]) * stride;
    stride *= mask.image.size[r];
  }
  return flags[offset] != 0;
}

/** Where linear interpolation reads on one axis: the two buffer offsets
 * (equal when the axis uses its base sample alone) and the distance. */
struct Taps
{
  std::int64_t low[3];
  std::int64_t high[3];
  double       distance[3];
};

template <int D>
CIF_METRIC_HD void
LinearTaps(const MetricImage & image, const double c[D], Taps & t)
{
  for (int a = 0; a < D; ++a)
  {
    std::int64_t base = static_cast<std::int64_t>(floor(c[a]));
    if (base < image.start[a])
    {
      base = image.start[a];
    }
    double             distance = c[a] - static_cast<double>(base);
    const std::int64_t last = image.start[a] + image.size[a] - 1;
    std::int64_t       next = base + 1;
    if (distance <= 0.0 || next > last)
    {
      next = base;
      distance = 0.0;
    }
    t.low[a] = base - image.start[a];
    t.high[a] = next - image.start[a];
    t.distance[a] = distance;
  }
}

/** Linear interpolation of component `component` of `components`-vector
 * samples at the taps. */
template <int D, typename T>
CIF_METRIC_HD double
Interpolate(const T * values, const MetricImage & image, const Taps & t, int components, int component)
{
  const std::int64_t sx = components;
  const std::int64_t sy = sx * image.size[0];
  const std::int64_t x0 = t.low[0] * sx + component;
  const std::int64_t x1 = t.high[0] * sx + component;
  if (D == 2)
  {
    const std::int64_t y0 = t.low[1] * sy;
    const std::int64_t y1 = t.high[1] * sy;
    const double       v00 = static_cast<double>(values[y0 + x0]);
    const double       v10 = static_cast<double>(values[y0 + x1]);
    const double       v01 = static_cast<double>(values[y1 + x0]);
    const double       v11 = static_cast<double>(values[y1 + x1]);
    const double       vx0 = v00 + (v10 - v00) * t.distance[0];
    const double       vx1 = v01 + (v11 - v01) * t.distance[0];
    return vx0 + (vx1 - vx0) * t.distance[1];
  }
  const std::int64_t sz = sy * image.size[1];
  const std::int64_t y0 = t.low[1] * sy;
  const std::int64_t y1 = t.high[1] * sy;
  const std::int64_t z0 = t.low[2] * sz;
  const std::int64_t z1 = t.high[2] * sz;
  const double       v000 = static_cast<double>(values[z0 + y0 + x0]);
  const double       v100 = static_cast<double>(values[z0 + y0 + x1]);
  const double       v010 = static_cast<double>(values[z0 + y1 + x0]);
  const double       v110 = static_cast<double>(values[z0 + y1 + x1]);
  const double       v001 = static_cast<double>(values[z1 + y0 + x0]);
  const double       v101 = static_cast<double>(values[z1 + y0 + x1]);
  const double       v011 = static_cast<double>(values[z1 + y1 + x0]);
  const double       v111 = static_cast<double>(values[z1 + y1 + x1]);
  const double       vx00 = v000 + (v100 - v000) * t.distance[0];
  const double       vx10 = v010 + (v110 - v010) * t.distance[0];
  const double       vx01 = v001 + (v101 - v001) * t.distance[0];
  const double       vx11 = v011 + (v111 - v011) * t.distance[0];
  const double       vxy0 = vx00 + (vx10 - vx00) * t.distance[1];
  const double       vxy1 = vx01 + (vx11 - vx01) * t.distance[1];
  return vxy0 + (vxy1 - vxy0) * t.distance[2];
}

/** itk::CentralDifferenceImageFunction::Evaluate(point) with its linear
 * interpolator and UseImageDirection on, at moving point p. */
template <int D, typename TPixel>
CIF_METRIC_HD void
CentralDifference(const DenseMetricJob & job, const double p[D], double gradient[D])
{
  double q1[D];
  double q2[D];
  double c[D];
  for (int a = 0; a < D; ++a)
  {
    q1[a] = p[a];
    q2[a] = p[a];
  }
  const TPixel * values = static_cast<const TPixel *>(job.moving.values);
  for (int a = 0; a < D; ++a)
  {
    gradient[a] = 0.0;
    const double offset = 0.5 * job.movingSpacing[a];
    q1[a] = p[a] - offset;
    q2[a] = p[a] + offset;
    double c2[D];
    if (ContinuousIndex<D>(job.moving, q1, c) && ContinuousIndex<D>(job.moving, q2, c2))
    {
      const double delta = q2[a] - q1[a];
      // ITK: 10 epsilon of double
      if (delta > 10.0 * 2.220446049250313e-16)
      {
        Taps t;
        LinearTaps<D>(job.moving, c2, t);
        const double v2 = Interpolate<D>(values, job.moving, t, 1, 0);
        LinearTaps<D>(job.moving, c, t);
        const double v1 = Interpolate<D>(values, job.moving, t, 1, 0);
        gradient[a] = (v2 - v1) / delta;
      }
    }
    q1[a] = p[a];
    q2[a] = p[a];
  }
}

/** What one pass of the core sums (the template argument of the point
 * function). */
enum class Pass
{
  MeanSquares,      ///< count, sum (f - m)^2, D (D + 1) moments of 2 (f - m) grad m
  CorrelationMeans, ///< count, sum f, sum m
  Correlation,      ///< count, fm, f2, m2, the moments of f1 grad m and of m1 grad m
  MattesDerivative  ///< count, D (D + 1) moments of (sum_bins pRatio B3'(arg)) grad m
};

/** The number of weight sets a pass's derivative has (MetricWeightSets):
 * 2 for correlation's second pass, else 1. */
template <Pass P>
constexpr int
WeightSets()
{
  return P == Pass::Correlation ? 2 : 1;
}

/** The number of sums of a pass in dimension D. */
template <int D, Pass P>
constexpr int
SumCount()
{
  return P == Pass::MeanSquares        ? 2 + D * (D + 1)
         : P == Pass::CorrelationMeans ? 3
         : P == Pass::Correlation      ? 4 + 2 * D * (D + 1)
                                       : 1 + D * (D + 1);
}

/** Adds `w` times the moment row of x to `row` (D + 1 sums per gradient
 * component: w grad_r (x_k - x0_k), then w grad_r). */
template <int D>
CIF_METRIC_HD void
AddMoments(double * moments, double w, const double gradient[D], const double relative[D])
{
  for (int r = 0; r < D; ++r)
  {
    const double wr = w * gradient[r];
    double *     row = moments + r * (D + 1);
    for (int k = 0; k < D; ++k)
    {
      row[k] += wr * relative[k];
    }
    row[D] += wr;
  }
}

/** The value at continuous index c: linear interpolation of the image's
 * values, or ITK's cubic B-spline of its coefficients (CubicSupport and
 * SupportSum, as BSplineInterpolateImageFunction::EvaluateAtContinuousIndex
 * computes it). */
template <int D, typename TPixel>
CIF_METRIC_HD double
ImageValue(const MetricImage & image, const double c[D])
{
  if (image.coefficients == nullptr)
  {
    Taps t;
    LinearTaps<D>(image, c, t);
    return Interpolate<D>(static_cast<const TPixel *>(image.values), image, t, 1, 0);
  }
  const std::int64_t       stride[3] = { 1, image.size[0], image.size[0] * image.size[1] };
  CubicAxisSupport<double> support[D];
  for (int a = 0; a < D; ++a)
  {
    CubicSupport<double>(c[a], image.start[a], image.size[a], stride[a], false, support[a]);
  }
  return SupportSum(image.coefficients, support, D);
}

/** One virtual point: its position, the moving point, and both values. */
template <int D, typename TPixel>
struct Sample
{
  double x[D];
  double p[D];
  TPixel fixedValue;
  TPixel movingValue;
  /** A B-spline moving transform: where x falls in its grid. */
  BSplineSupport<D> support;
};

/** What an instance of the per-point code takes (a template argument, so
 * that the common instances do not carry the registers of the others):
 * - Plain: one affine map per transform, no masks, linear interpolation;
 * - General: chains of affine maps, masks, cubic interpolation;
 * - BSpline: General with a B-spline moving transform;
 * - Field: General with a displacement field moving transform. */
enum class MapMode
{
  Plain,
  General,
  BSpline,
  Field
};

/** The mode `job` needs. */
inline MapMode
MapModeOf(const DenseMetricJob & job)
{
  if (job.bspline.coefficients != nullptr)
  {
    return MapMode::BSpline;
  }
  if (job.field.displacements != nullptr)
  {
    return MapMode::Field;
  }
  const bool plain = job.fixedTransform.count == 1 && job.movingTransform.count == 1 &&
                     job.fixedMask.image.values == nullptr && job.movingMask.image.values == nullptr &&
                     job.fixed.coefficients == nullptr && job.moving.coefficients == nullptr;
  return plain ? MapMode::Plain : MapMode::General;
}

/** body(std::integral_constant<MapMode, M>{}) with M the mode `job` needs:
 * one dispatch per pass instead of one per point (host code). */
template <typename TBody>
inline void
WithMapMode(const DenseMetricJob & job, TBody && body)
{
  switch (MapModeOf(job))
  {
    case MapMode::BSpline:
      body(std::integral_constant<MapMode, MapMode::BSpline>{});
      break;
    case MapMode::Field:
      body(std::integral_constant<MapMode, MapMode::Field>{});
      break;
    case MapMode::General:
      body(std::integral_constant<MapMode, MapMode::General>{});
      break;
    case MapMode::Plain:
      body(std::integral_constant<MapMode, MapMode::Plain>{});
      break;
  }
}

/** The virtual point of region offset `linear`, mapped and evaluated in
 * both images; false when it is not a valid point (outside either image or
 * either mask). M: what the job holds (MapModeOf). */
template <int D, typename TPixel, MapMode M>
CIF_METRIC_HD bool
SamplePoint(const DenseMetricJob & job, std::int64_t linear, Sample<D, TPixel> & s)
{
  VirtualPoint<D>(job, linear, s.x);
  double c[D];
  if constexpr (M == MapMode::Plain)
  {
    Map<D>(job.fixedTransform.maps[0], s.x, s.p);
    if (!ContinuousIndex<D>(job.fixed, s.p, c))
    {
      return false;
    }
    Taps t;
    LinearTaps<D>(job.fixed, c, t);
    s.fixedValue =
      static_cast<TPixel>(Interpolate<D>(static_cast<const TPixel *>(job.fixed.values), job.fixed, t, 1, 0));
    Map<D>(job.movingTransform.maps[0], s.x, s.p);
    if (!ContinuousIndex<D>(job.moving, s.p, c))
    {
      return false;
    }
    LinearTaps<D>(job.moving, c, t);
    s.movingValue =
      static_cast<TPixel>(Interpolate<D>(static_cast<const TPixel *>(job.moving.values), job.moving, t, 1, 0));
    return true;
  }
  else
  {
    MapChain<D>(job.fixedTransform, s.x, s.p);
    if (!InsideMask<D>(job.fixedMask, s.p) || !ContinuousIndex<D>(job.fixed, s.p, c))
    {
      return false;
    }
    s.fixedValue = static_cast<TPixel>(ImageValue<D, TPixel>(job.fixed, c));
    if constexpr (M == MapMode::BSpline)
    {
      // the B-spline, then the transforms before it in a composite (affine)
      double y[D];
      MapBSpline<D>(job.bspline, s.x, y, s.support);
      MapChain<D>(job.movingTransform, y, s.p);
    }
    else if constexpr (M == MapMode::Field)
    {
      // the field, then the transforms before it in a composite (affine)
      double y[D];
      MapField<D>(job.field, s.x, y);
      MapChain<D>(job.movingTransform, y, s.p);
    }
    else
    {
      MapChain<D>(job.movingTransform, s.x, s.p);
    }
    if (!InsideMask<D>(job.movingMask, s.p) || !ContinuousIndex<D>(job.moving, s.p, c))
    {
      return false;
    }
    s.movingValue = static_cast<TPixel>(ImageValue<D, TPixel>(job.moving, c));
    return true;
  }
}

/** The moving image gradient at moving point p, as the job says (central
 * differences, or the gradient image). */
template <int D, typename TPixel>
CIF_METRIC_HD void
MovingGradient(const DenseMetricJob & job, const double p[D], double gradient[D])
{
  double c[D];
  if (job.centralDifferences)
  {
    CentralDifference<D, TPixel>(job, p, gradient);
  }
  else if (ContinuousIndex<D>(job.movingGradient, p, c))
  {
    Taps t;
    LinearTaps<D>(job.movingGradient, c, t);
    for (int a = 0; a < D; ++a)
    {
      gradient[a] =
        Interpolate<D>(static_cast<const float *>(job.movingGradient.values), job.movingGradient, t, D, a);
    }
  }
  else
  {
    // not reached: ValidateDenseMetricJob puts the gradient image on the
    // moving image's grid, where the moving point was found inside
    for (int a = 0; a < D; ++a)
    {
      gradient[a] = 0.0;
    }
  }
}

CIF_METRIC_HD double
CubicBSplineDerivative(double u)
{
  if (u >= 0.0 && u < 1.0)
  {
    return -2.0 * u + 1.5 * u * u;
  }
  if (u > -1.0 && u < 0.0)
  {
    return -2.0 * u - 1.5 * u * u;
  }
  if (u >= 1.0 && u < 2.0)
  {
    return -2.0 + 2.0 * u - 0.5 * u * u;
  }
  if (u > -2.0 && u <= -1.0)
  {
    return 2.0 + 2.0 * u + 0.5 * u * u;
  }
  return 0.0;
}

/** Where a valid pair of values falls in the Mattes histogram (ITK's
 * ProcessPoint and ComputeSingleFixedImageParzenWindowIndex): the fixed
 * bin, the first of the four moving bins, and the Parzen argument of that
 * first bin (the next ones add 1 each). False when the moving value is
 * outside the moving image's range (not a valid point). */
template <typename TPixel>
CIF_METRIC_HD bool
MattesBins(const MattesHistogram & h, TPixel fixedValue, TPixel movingValue, int & fixedBin, int & movingFirst,
           double & argument)
{
  if (movingValue < h.movingTrueMin || movingValue > h.movingTrueMax)
  {
    return false;
  }
  const double  movingTerm = static_cast<double>(movingValue) / h.movingBinSize - h.movingNormalizedMin;
  std::int64_t  movingIndex = static_cast<std::int64_t>(movingTerm);
  const std::int64_t last = static_cast<std::int64_t>(h.bins) - 3;
  movingIndex = movingIndex < 2 ? 2 : (movingIndex > last ? last : movingIndex);
  movingFirst = static_cast<int>(movingIndex - 1);
  argument = static_cast<double>(movingFirst) - movingTerm;
  const double fixedTerm = static_cast<double>(fixedValue) / h.fixedBinSize - h.fixedNormalizedMin;
  std::int64_t fixedIndex = static_cast<std::int64_t>(fixedTerm);
  fixedIndex = fixedIndex < 2 ? 2 : (fixedIndex > last ? last : fixedIndex);
  fixedBin = static_cast<int>(fixedIndex);
  return true;
}

/** What the affine path passes for the B-spline sink (never called). */
struct NoBSplineSink
{
  template <int D>
  CIF_METRIC_HD void
  operator()(std::int64_t, const BSplineSupport<D> &, const double *, const double *) const
  {}
};

/** Adds the contribution of virtual point `linear` to `sums` (SumCount<D,
 * P>() doubles, laid out as Pass says). `means` holds the correlation
 * means (pass Correlation); `pRatio` the Mattes table (bins x bins, fixed
 * bin major; pass MattesDerivative). With a B-spline moving transform the
 * derivative terms do not go to the moments: for a valid point inside the
 * grid, sink(linear, support, w, gradient) receives the weight sets w
 * (MetricWeightSets of them) and the moving gradient. */
template <int D, typename TPixel, Pass P, MapMode M, typename TSink = NoBSplineSink>
CIF_METRIC_HD void
AccumulatePoint(const DenseMetricJob & job, std::int64_t linear, double * sums, const double * means,
                const double * pRatio, TSink && sink = TSink{})
{
  constexpr bool    kBSpline = M == MapMode::BSpline;
  Sample<D, TPixel> s;
  if (!SamplePoint<D, TPixel, M>(job, linear, s))
  {
    return;
  }
  int    fixedBin = 0;
  int    movingFirst = 0;
  double argument = 0.0;
  if (P == Pass::MattesDerivative &&
      !MattesBins<TPixel>(job.mattes, s.fixedValue, s.movingValue, fixedBin, movingFirst, argument))
  {
    return;
  }
  sums[0] += 1.0;
  if (P == Pass::CorrelationMeans)
  {
    sums[1] += static_cast<double>(s.fixedValue);
    sums[2] += static_cast<double>(s.movingValue);
    return;
  }
  // ITK: FixedImagePixelType diff = fixed - moving, squared in double
  const double d = static_cast<double>(static_cast<TPixel>(s.fixedValue - s.movingValue));
  // ITK: f1 = fixed - mean, m1 = moving - mean, in double
  const double f1 = static_cast<double>(s.fixedValue) - (P == Pass::Correlation ? means[0] : 0.0);
  const double m1 = static_cast<double>(s.movingValue) - (P == Pass::Correlation ? means[1] : 0.0);
  if (P == Pass::MeanSquares)
  {
    sums[1] += d * d;
  }
  else if (P == Pass::Correlation)
  {
    sums[1] += f1 * m1;
    sums[2] += f1 * f1;
    sums[3] += m1 * m1;
  }
  if (!job.derivative)
  {
    return;
  }
  if (kBSpline && !s.support.inside)
  {
    // ITK's B-spline Jacobian is zero there
    return;
  }
  double gradient[D];
  MovingGradient<D, TPixel>(job, s.p, gradient);
  double w[2] = { 0.0, 0.0 };
  if (P == Pass::MeanSquares)
  {
    w[0] = 2.0 * d;
  }
  else if (P == Pass::Correlation)
  {
    w[0] = f1;
    w[1] = m1;
  }
  else
  {
    const double * row = pRatio + static_cast<std::int64_t>(fixedBin) * job.mattes.bins + movingFirst;
    for (int b = 0; b < 4; ++b)
    {
      w[0] += row[b] * CubicBSplineDerivative(argument + b);
    }
  }
  if constexpr (kBSpline)
  {
    sink(linear, s.support, w, gradient);
  }
  else if constexpr (M == MapMode::Field)
  {
    // this point's own parameters (dense domain: `linear` is its region
    // offset); ITK: the composite Jacobian A (the field's is the identity)
    // against the gradient, times the metric's factor
    double * out = job.field.derivative + linear * D;
    for (int d = 0; d < D; ++d)
    {
      double inner = 0.0;
      for (int r = 0; r < D; ++r)
      {
        inner += job.field.outer[r][d] * gradient[r];
      }
      out[d] = w[0] * inner;
    }
  }
  else
  {
    double relative[D];
    for (int k = 0; k < D; ++k)
    {
      relative[k] = s.x[k] - job.momentOrigin[k];
    }
    if (P == Pass::MeanSquares)
    {
      AddMoments<D>(sums + 2, w[0], gradient, relative);
    }
    else if (P == Pass::Correlation)
    {
      AddMoments<D>(sums + 4, w[0], gradient, relative);
      AddMoments<D>(sums + 4 + D * (D + 1), w[1], gradient, relative);
    }
    else
    {
      AddMoments<D>(sums + 1, w[0], gradient, relative);
    }
  }
}

/** The derivative terms of one point for B-spline parameters: for each
 * support control point j and axis d, add(set, d, j, w_set (w_j grad_d m))
 * (ITK's order: the Jacobian entry times the gradient, then the metric's
 * factor). */
template <int D, int S, typename TAdd>
CIF_METRIC_HD void
ScatterBSplinePoint(const MetricBSpline & b, const BSplineSupport<D> & support, const double * w,
                    const double * gradient, TAdd && add)
{
  constexpr int supportCount = SupportCount<D>();
  for (int o = 0; o < supportCount; ++o)
  {
    const double       weight = BSplineSupportWeight<D>(support.weights, o);
    const std::int64_t j = BSplineSupportIndex<D>(b, support.start, o);
    for (int d = 0; d < D; ++d)
    {
      const double inner = weight * gradient[d];
      for (int set = 0; set < S; ++set)
      {
        add(set, d, j, w[set] * inner);
      }
    }
  }
}

/** The Mattes histogram's contribution of virtual point `linear`: the
 * count (hist[0]), the fixed marginal (hist[1 + bin]) and the joint PDF
 * (hist[1 + bins + fixedBin * bins + movingBin]), through `add(index,
 * value)` (an atomic add on the GPU). */
template <int D, typename TPixel, MapMode M, typename TAdd>
CIF_METRIC_HD void
AccumulateMattesHistogram(const DenseMetricJob & job, std::int64_t linear, TAdd && add)
{
  Sample<D, TPixel> s;
  if (!SamplePoint<D, TPixel, M>(job, linear, s))
  {
    return;
  }
  int    fixedBin = 0;
  int    movingFirst = 0;
  double argument = 0.0;
  if (!MattesBins<TPixel>(job.mattes, s.fixedValue, s.movingValue, fixedBin, movingFirst, argument))
  {
    return;
  }
  const int bins = job.mattes.bins;
  add(0, 1.0);
  add(1 + fixedBin, 1.0);
  const int joint = 1 + bins + fixedBin * bins + movingFirst;
  for (int b = 0; b < 4; ++b)
  {
    add(joint + b, CubicBSpline(argument + b));
  }
}

/** ITK's GetValueCommonAfterThreadedExecution and ComputeResults on the
 * summed histogram (count, fixed marginal, joint PDF): the value into
 * moments.value, the table pRatio (bins x bins, 0 where ITK adds nothing),
 * moments.count and moments.status. */
void
MattesResults(const MattesHistogram & h, const double * histogram, double * pRatio, MetricMoments & moments);

/** With a displacement field, the Mattes table times -1 / (movingBinSize
 * n), ITK's pRatioArray with its sign (ComputeResults' local-support path),
 * so that the derivative pass writes ITK's derivative itself. */
inline void
ScaleForField(const DenseMetricJob & job, const MetricMoments & moments, std::vector<double> & pRatio)
{
  if (job.field.displacements == nullptr || moments.status != 0)
  {
    return;
  }
  const double factor = 1.0 / (job.mattes.movingBinSize * moments.count);
  for (double & v : pRatio)
  {
    v = -(v * factor);
  }
}

/** The moments of a pass's sums into `moments`. */
template <int D, Pass P>
inline void
StoreSums(const double * sums, MetricMoments & moments)
{
  moments.count = sums[0];
  if (P == Pass::CorrelationMeans)
  {
    moments.fixedMean = sums[0] > 0 ? sums[1] / sums[0] : 0.0;
    moments.movingMean = sums[0] > 0 ? sums[2] / sums[0] : 0.0;
    return;
  }
  if (P == Pass::MattesDerivative)
  {
    for (int r = 0; r < D; ++r)
    {
      for (int k = 0; k <= D; ++k)
      {
        moments.weighted[r][k] = sums[1 + r * (D + 1) + k];
      }
    }
    return;
  }
  moments.value = sums[1];
  const double * w = sums + (P == Pass::MeanSquares ? 2 : 4);
  for (int r = 0; r < D; ++r)
  {
    for (int k = 0; k <= D; ++k)
    {
      moments.weighted[r][k] = w[r * (D + 1) + k];
      if (P == Pass::Correlation)
      {
        moments.movingWeighted[r][k] = w[D * (D + 1) + r * (D + 1) + k];
      }
    }
  }
  if (P == Pass::Correlation)
  {
    moments.fixedSquares = sums[2];
    moments.movingSquares = sums[3];
  }
}

} // namespace metric
} // namespace cif

#endif
