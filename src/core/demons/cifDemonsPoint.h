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
  // ITK's TransformIndexToPhysicalPoint: the origin, then each index term
  double p[D];
  for (int r = 0; r < D; ++r)
  {
    double sum = job.origin[r];
    for (int c = 0; c < D; ++c)
    {
      sum += job.indexToPoint[r][c] * static_cast<double>(job.start[c] + index[c]);
    }
    p[r] = sum + static_cast<double>(u[r]);
  }
  double c[D];
  if (!metric::ContinuousIndex<D>(job.moving, p, c))
  {
    return result;
  }
  metric::Taps taps;
  metric::LinearTaps<D>(job.moving, c, taps);
  const double movingValue = metric::Interpolate<D>(moving, job.moving, taps, 1, 0);

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
  double gradient[D];
  double gradientSquared = 0.0;
  for (int r = 0; r < D; ++r)
  {
    double sum = 0.0;
    for (int k = 0; k < D; ++k)
    {
      sum += job.direction[r][k] * local[k];
    }
    gradient[r] = sum;
  }
  for (int r = 0; r < D; ++r)
  {
    gradientSquared += gradient[r] * gradient[r];
  }
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

} // namespace demons
} // namespace cif

#endif
