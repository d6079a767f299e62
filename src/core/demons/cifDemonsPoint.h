/*=========================================================================
 *  CudaImageFilters: the per-pixel arithmetic of the demons core (private
 *  to src/), shared by the CUDA kernels and the CPU core (see cif/Demons.h
 *  for what it computes). The moving image's coordinates and linear
 *  interpolation are the registration metric core's (cifMetricPoint.h),
 *  which are ITK's.
 *=========================================================================*/
#ifndef cifDemonsPoint_h
#define cifDemonsPoint_h

#include "cif/Demons.h"
#include "../registration/cifMetricPoint.h"

#include <cmath>
#include <cstdint>
#include <vector>

namespace cif
{
namespace demons
{

/** ITK's GaussianOperator<float> coefficients for a standard deviation in
 * pixels (GaussianOperatorCoefficients rounded to float); host code. */
std::vector<float>
SmoothingKernel(double standardDeviation, const DemonsJob & job);

/** Throws std::runtime_error when an iteration's sums are not finite. */
void
CheckSumsFinite(const DemonsSums & sums);

/** One smoothing pass's kernel: `taps` float coefficients (odd). */
struct Kernel
{
  const float * coefficients{ nullptr };
  int           taps{ 1 };
};

/** The local index of sample `linear` (x fastest). */
template <int D>
CIF_METRIC_HD void
LocalIndex(const std::int64_t size[3], std::int64_t linear, std::int64_t index[3])
{
  index[2] = 0;
  for (int a = 0; a < D; ++a)
  {
    const std::int64_t q = linear / size[a];
    index[a] = linear - q * size[a];
    linear = q;
  }
}

/** Sample `linear` of the pass along `axis`: each of the D components a
 * float sum over the kernel in its order, the neighbours' indices clamped
 * to the buffer (ITK's VectorNeighborhoodInnerProduct with
 * ZeroFluxNeumannBoundaryCondition). */
template <int D>
CIF_METRIC_HD void
SmoothSample(const float * in, float * out, const std::int64_t size[3], int axis, const Kernel & kernel,
             std::int64_t linear)
{
  std::int64_t index[3];
  LocalIndex<D>(size, linear, index);
  std::int64_t stride = 1;
  for (int a = 0; a < axis; ++a)
  {
    stride *= size[a];
  }
  const std::int64_t n = size[axis];
  const std::int64_t lineStart = linear - index[axis] * stride;
  const int          radius = kernel.taps / 2;
  float              sum[D];
  for (int c = 0; c < D; ++c)
  {
    sum[c] = 0.0f;
  }
  for (int k = 0; k < kernel.taps; ++k)
  {
    std::int64_t j = index[axis] + k - radius;
    j = j < 0 ? 0 : (j >= n ? n - 1 : j);
    const float   w = kernel.coefficients[k];
    const float * v = in + (lineStart + j * stride) * D;
    for (int c = 0; c < D; ++c)
    {
      sum[c] += w * v[c];
    }
  }
  for (int c = 0; c < D; ++c)
  {
    out[linear * D + c] = sum[c];
  }
}

/** ITK's TransformIndexToPhysicalPoint of the fixed grid's local index
 * (the origin, then each index term in axis order), plus the D float
 * components of `displacement` promoted to double: the point x + u(x). */
template <int D>
CIF_METRIC_HD void
DisplacedPoint(const DemonsJob & job, const std::int64_t index[3], const float * displacement, double p[D])
{
  for (int r = 0; r < D; ++r)
  {
    double sum = job.origin[r];
    for (int c = 0; c < D; ++c)
    {
      sum += job.indexToPoint[r][c] * static_cast<double>(job.start[c] + index[c]);
    }
    p[r] = sum + static_cast<double>(displacement[r]);
  }
}

/** The moving image's linear interpolation at p when p lies inside its
 * buffer (ITK's IsInsideBuffer then Evaluate). */
template <int D>
CIF_METRIC_HD bool
MovingValueAt(const DemonsJob & job, const float * moving, const double p[D], double & value)
{
  double c[D];
  if (!metric::ContinuousIndex<D>(job.moving, p, c))
  {
    return false;
  }
  metric::Taps taps;
  metric::LinearTaps<D>(job.moving, c, taps);
  value = metric::Interpolate<D>(moving, job.moving, taps, 1, 0);
  return true;
}

/** out = matrix in (ITK's matrix-vector product: each row's sum from 0 in
 * column order); returns |out|^2 summed in axis order. */
template <int D>
CIF_METRIC_HD double
Turn(const double matrix[3][3], const double in[D], double out[D])
{
  for (int r = 0; r < D; ++r)
  {
    double sum = 0.0;
    for (int c = 0; c < D; ++c)
    {
      sum += matrix[r][c] * in[c];
    }
    out[r] = sum;
  }
  double squared = 0.0;
  for (int r = 0; r < D; ++r)
  {
    squared += out[r] * out[r];
  }
  return squared;
}

/** What one pixel adds to the iteration's sums. */
struct PixelSums
{
  double squaredDifference{ 0 };
  double squaredChange{ 0 };
  bool   counted{ false };
};

/** ITK's mean squared spacing K (DemonsRegistrationFunction's normalizer). */
template <int D>
CIF_METRIC_HD double
Normalizer(const DemonsJob & job)
{
  double k = 0.0;
  for (int a = 0; a < D; ++a)
  {
    k += job.spacing[a] * job.spacing[a];
  }
  return k / static_cast<double>(D);
}

/** DemonsRegistrationFunction::ComputeUpdate at sample `linear` of the
 * fixed grid, with the field value u there: the update (D floats) and what
 * the pixel adds to the sums. */
template <int D>
CIF_METRIC_HD PixelSums
UpdateAt(const DemonsJob & job, double normalizer, const float * fixed, const float * moving, const float * u,
         std::int64_t linear, float update[D])
{
  PixelSums result;
  for (int a = 0; a < D; ++a)
  {
    update[a] = 0.0f;
  }
  std::int64_t index[3];
  LocalIndex<D>(job.size, linear, index);
  double p[D];
  DisplacedPoint<D>(job, index, u, p);
  double movingValue = 0.0;
  if (!MovingValueAt<D>(job, moving, p, movingValue))
  {
    return result;
  }

  // CentralDifferenceImageFunction::EvaluateAtIndex (double), then the
  // direction (TransformLocalVectorToPhysicalVector)
  double       local[D];
  std::int64_t stride = 1;
  for (int a = 0; a < D; ++a)
  {
    local[a] = 0.0;
    if (index[a] >= 1 && index[a] <= job.size[a] - 2)
    {
      double d = static_cast<double>(fixed[linear + stride]);
      d -= static_cast<double>(fixed[linear - stride]);
      d *= 0.5 / job.spacing[a];
      local[a] = d;
    }
    stride *= job.size[a];
  }
  double       gradient[D];
  const double gradientSquared = Turn<D>(job.direction, local, gradient);
  const double speed = static_cast<double>(fixed[linear]) - movingValue;
  const double speedSquared = speed * speed;
  result.counted = true;
  result.squaredDifference = speedSquared;
  const double denominator = speedSquared / normalizer + gradientSquared;
  if (fabs(speed) < job.intensityDifferenceThreshold || denominator < job.denominatorThreshold)
  {
    return result;
  }
  for (int a = 0; a < D; ++a)
  {
    update[a] = static_cast<float>(speed * gradient[a] / denominator);
    // itk::Math::sqr of the float component: a float product
    const float square = update[a] * update[a];
    result.squaredChange += static_cast<double>(square);
  }
  return result;
}

// ---------------------------------------------------------------------
// The diffeomorphic demons (cif/Demons.h, variant Diffeomorphic; the
// steps and their ITK sources: docs/design/diffeomorphic-demons/)

/** ITK's Math::Floor on x86-64 (itkMathDetail.h): 2x - 0.5 rounded half
 * to even, halved by an arithmetic shift. It equals floor(x) except for
 * tiny negative x, which it takes to 0. */
CIF_METRIC_HD std::int64_t
              ItkFloor(double x)
{
#ifdef __CUDA_ARCH__
  return __double2ll_rn(2.0 * x - 0.5) >> 1;
#else
  return static_cast<std::int64_t>(std::llrint(2.0 * x - 0.5)) >> 1;
#endif
}

/** ESMDemonsRegistrationFunction's normalizer K: the fixed spacings'
 * squares summed, times L^2 / D; -1 (no s^2/K term) for L <= 0. */
template <int D>
CIF_METRIC_HD double
EsmNormalizer(const DemonsJob & job)
{
  const double step = job.maximumUpdateStepLength;
  if (!(step > 0.0))
  {
    return -1.0;
  }
  double k = 0.0;
  for (int a = 0; a < D; ++a)
  {
    k += job.spacing[a] * job.spacing[a];
  }
  k *= step * step / static_cast<double>(D);
  return k;
}

/** The warped moving image at sample `linear` (WarpImageFilter with the
 * linear interpolator, the field read at the pixel): the moving value at
 * x + u(x) in the moving pixel type (integer types truncated), or
 * job.movingOutside beyond half a pixel outside the moving buffer. */
template <int D>
CIF_METRIC_HD float
WarpedMovingAt(const DemonsJob & job, const float * moving, const float * field, std::int64_t linear)
{
  std::int64_t index[3];
  LocalIndex<D>(job.size, linear, index);
  double p[D];
  DisplacedPoint<D>(job, index, field + linear * D, p);
  double value = 0.0;
  if (!MovingValueAt<D>(job, moving, p, value))
  {
    return job.movingOutside;
  }
  return job.movingIntegral ? static_cast<float>(trunc(value)) : static_cast<float>(value);
}

/** ESMDemonsRegistrationFunction::ComputeUpdate at sample `linear`, from
 * the warped moving image W (WarpedMovingAt of every sample), the field
 * before the update (MappedMoving reads it) and K (EsmNormalizer): the
 * update (D floats) and what the pixel adds to the sums (nothing where W
 * is job.movingOutside). */
template <int D>
CIF_METRIC_HD PixelSums
EsmUpdateAt(const DemonsJob & job,
            double            normalizer,
            const float *     fixed,
            const float *     warped,
            const float *     moving,
            const float *     field,
            std::int64_t      linear,
            float             update[D])
{
  PixelSums result;
  for (int a = 0; a < D; ++a)
  {
    update[a] = 0.0f;
  }
  const float mv = warped[linear];
  if (mv == job.movingOutside)
  {
    return result;
  }
  const double f = static_cast<double>(fixed[linear]);
  const double m = static_cast<double>(mv);
  std::int64_t index[3];
  LocalIndex<D>(job.size, linear, index);
  const DemonsGradient type = job.gradient;
  const bool           useFixed = type == DemonsGradient::Symmetric || type == DemonsGradient::Fixed;
  const bool           useWarped = type == DemonsGradient::Symmetric || type == DemonsGradient::WarpedMoving;

  // the gradients along the image's axes (in index order)
  double       fg[D];
  double       wg[D];
  std::int64_t stride = 1;
  for (int a = 0; a < D; ++a)
  {
    fg[a] = 0.0;
    wg[a] = 0.0;
    const double       sp = job.spacing[a];
    const std::int64_t last = job.size[a] - 1;
    if (useFixed && index[a] >= 1 && index[a] <= last - 1)
    {
      // CentralDifferenceImageFunction::EvaluateAtIndex, no direction
      double d = static_cast<double>(fixed[linear + stride]);
      d -= static_cast<double>(fixed[linear - stride]);
      d *= 0.5 / sp;
      fg[a] = d;
    }
    if (useWarped)
    {
      // one-sided at the buffer's edges and beside outside pixels
      if (index[a] == 0)
      {
        const float next = warped[linear + stride];
        wg[a] = next == job.movingOutside ? 0.0 : (static_cast<double>(next) - m) / sp;
      }
      else if (index[a] == last)
      {
        const float previous = warped[linear - stride];
        wg[a] = previous == job.movingOutside ? 0.0 : (m - static_cast<double>(previous)) / sp;
      }
      else
      {
        const float next = warped[linear + stride];
        const float previous = warped[linear - stride];
        if (next == job.movingOutside)
        {
          wg[a] = previous == job.movingOutside ? 0.0 : (m - static_cast<double>(previous)) / sp;
        }
        else if (previous == job.movingOutside)
        {
          wg[a] = (static_cast<double>(next) - m) / sp;
        }
        else
        {
          double d = static_cast<double>(next);
          d -= static_cast<double>(previous);
          d *= 0.5 / sp;
          wg[a] = d;
        }
      }
    }
    stride *= job.size[a];
  }

  double g[D];
  if (type == DemonsGradient::MappedMoving)
  {
    // CentralDifferenceImageFunction::Evaluate(point) of the moving image,
    // half-pixel steps along the physical axes, then into the moving
    // image's index axes
    double p[D];
    DisplacedPoint<D>(job, index, field + linear * D, p);
    double od[D];
    for (int a = 0; a < D; ++a)
    {
      od[a] = 0.0;
      const double offset = 0.5 * job.movingSpacing[a];
      double       p1[D];
      double       p2[D];
      for (int r = 0; r < D; ++r)
      {
        p1[r] = p[r];
        p2[r] = p[r];
      }
      p1[a] = p[a] - offset;
      p2[a] = p[a] + offset;
      double v1 = 0.0;
      double v2 = 0.0;
      if (!MovingValueAt<D>(job, moving, p1, v1) || !MovingValueAt<D>(job, moving, p2, v2))
      {
        continue;
      }
      const double delta = p2[a] - p1[a];
      // ITK: 10 epsilon of double
      if (delta > 10.0 * 2.220446049250313e-16)
      {
        od[a] = (v2 - v1) / delta;
      }
    }
    Turn<D>(job.movingInverseDirection, od, g);
    for (int r = 0; r < D; ++r)
    {
      g[r] = g[r] + g[r];
    }
  }
  else
  {
    for (int a = 0; a < D; ++a)
    {
      g[a] = type == DemonsGradient::Symmetric ? fg[a] + wg[a]
                                               : (type == DemonsGradient::Fixed ? fg[a] + fg[a] : wg[a] + wg[a]);
    }
  }
  // into physical axes with the fixed image's direction
  double       gradient[D];
  const double gradientSquared = Turn<D>(job.direction, g, gradient);
  const double speed = f - m;
  result.counted = true;
  result.squaredDifference = speed * speed;
  if (fabs(speed) < job.intensityDifferenceThreshold)
  {
    return result;
  }
  const double denominator = normalizer > 0.0 ? gradientSquared + speed * speed / normalizer : gradientSquared;
  if (denominator < job.denominatorThreshold)
  {
    return result;
  }
  const double factor = 2.0 * speed / denominator;
  double       change = 0.0;
  for (int a = 0; a < D; ++a)
  {
    update[a] = static_cast<float>(factor * gradient[a]);
    // Vector<float>::GetSquaredNorm: in double, of the float components
    const double v = static_cast<double>(update[a]);
    change += v * v;
  }
  result.squaredChange = change;
  return result;
}

/** out(x) = add(x) + in(x + by(x)), the warp by ITK's
 * VectorLinearInterpolateNearestNeighborExtrapolateImageFunction on the
 * fixed grid (WarpVectorImageFilter: edge values beyond the buffer, the
 * corners' weights as products in corner order, zero weights skipped,
 * stopping once the weights sum to exactly 1; the sums in double, rounded
 * to float), then a float addition (AddImageFilter). `out` must differ
 * from `in`. */
template <int D>
CIF_METRIC_HD void
WarpVectorAddAt(const DemonsJob & job,
                const float *     in,
                const float *     by,
                const float *     add,
                float *           out,
                std::int64_t      linear)
{
  std::int64_t index[3];
  LocalIndex<D>(job.size, linear, index);
  double p[D];
  DisplacedPoint<D>(job, index, by + linear * D, p);
  double v[D];
  for (int k = 0; k < D; ++k)
  {
    v[k] = p[k] - job.origin[k];
  }
  std::int64_t base[D];
  double       distance[D];
  for (int r = 0; r < D; ++r)
  {
    double c = 0.0;
    for (int k = 0; k < D; ++k)
    {
      c += job.pointToIndex[r][k] * v[k];
    }
    const std::int64_t first = job.start[r];
    const std::int64_t last = job.start[r] + job.size[r] - 1;
    std::int64_t       b = ItkFloor(c);
    double             d = 0.0;
    if (b >= first)
    {
      if (b < last)
      {
        d = c - static_cast<double>(b);
      }
      else
      {
        b = last;
      }
    }
    else
    {
      b = first;
    }
    base[r] = b - first;
    distance[r] = d;
  }
  double sum[D];
  for (int k = 0; k < D; ++k)
  {
    sum[k] = 0.0;
  }
  double total = 0.0;
  for (int corner = 0; corner < (1 << D); ++corner)
  {
    double       w = 1.0;
    std::int64_t offset = 0;
    std::int64_t stride = 1;
    for (int a = 0; a < D; ++a)
    {
      const bool upper = ((corner >> a) & 1) != 0;
      if (upper)
      {
        w *= distance[a];
      }
      else
      {
        w *= 1.0 - distance[a];
      }
      offset += (base[a] + (upper ? 1 : 0)) * stride;
      stride *= job.size[a];
    }
    if (w != 0.0)
    {
      for (int k = 0; k < D; ++k)
      {
        sum[k] += w * static_cast<double>(in[offset * D + k]);
      }
      total += w;
    }
    if (total == 1.0)
    {
      break;
    }
  }
  for (int k = 0; k < D; ++k)
  {
    out[linear * D + k] = add[linear * D + k] + static_cast<float>(sum[k]);
  }
}

/** The squared norm of a field sample, Vector<float>::GetSquaredNorm (the
 * automatic exponential's maximum). */
template <int D>
CIF_METRIC_HD double
SquaredNorm(const float * field, std::int64_t linear)
{
  double sum = 0.0;
  for (int a = 0; a < D; ++a)
  {
    const double v = static_cast<double>(field[linear * D + a]);
    sum += v * v;
  }
  return sum;
}

/** The number of squarings of the exponential (ITK's
 * DiffeomorphicDemonsRegistrationFilter::ApplyUpdate and
 * ExponentialDisplacementFieldImageFilter); `maximumSquaredNorm` (the
 * largest SquaredNorm of the update) is read only for
 * maximumUpdateStepLength <= 0. Host code. */
unsigned
SquaringCount(const DemonsJob & job, double maximumSquaredNorm);

/** Whether SquaringCount needs the update's largest squared norm. */
inline bool
NeedsMaximumNorm(const DemonsJob & job)
{
  return !job.useFirstOrderExp && !(job.maximumUpdateStepLength > 0.0);
}

} // namespace demons
} // namespace cif

#endif
