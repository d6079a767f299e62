/*=========================================================================
 *  CudaImageFilters: the registration metric core (plain types only).
 *
 *  Evaluates an image-to-image metric and its derivative over a dense
 *  virtual domain (or a sampled point set), the way ITK's
 *  ImageToImageMetricv4 and its dense (sparse) threader do, for transforms whose point map is affine (ITK's "Linear"
 *  transform category: Translation, Euler, VersorRigid3D, Similarity,
 *  Affine and composites of them). Per virtual index i, in the virtual
 *  region:
 *  - the virtual point x = origin + indexToPoint i (ITK's
 *    TransformIndexToPhysicalPoint);
 *  - the fixed point F x + f and the moving point M x + m (each a chain of
 *    such maps for a composite transform, see MetricAffineChain);
 *  - each point's continuous index in its image and ITK's IsInsideBuffer
 *    test (start - 0.5 <= c < start + size - 0.5 on every axis, NaN is
 *    outside); a point outside either image, or outside the fixed or the
 *    moving image mask, is not a valid point;
 *  - the fixed and moving values by itk::LinearInterpolateImageFunction's
 *    arithmetic (edge samples repeated), or by
 *    itk::BSplineInterpolateImageFunction's (order 3) from its
 *    coefficients, in double, converted to the pixel type as ITK stores
 *    them; the moving image gradient by the same
 *    interpolation of a precomputed gradient image (ITK's default: the
 *    metric's GradientRecursiveGaussianImageFilter output, interpolated
 *    linearly at the moving point).
 *
 *  The derivative of an affine-map transform's point with respect to its
 *  parameters is affine in x: J_p(x) = J_p(x0) + sum_k (x_k - x0_k) G_pk.
 *  So the core does not need the transform's parameterisation: it returns
 *  per-metric sums ("moments") of the form sum_points w_d (x - x0)~ over the
 *  valid points, and the caller contracts them with the Jacobian that ITK's
 *  transform reports at x0 and x0 + e_k (see MetricMoments). For mean
 *  squares, w_d = 2 (f - m) grad_d m, the terms of ITK's
 *  MeanSquaresImageToImageMetricv4 ProcessPoint; for correlation two sets,
 *  (f - mean f) grad_d m and (m - mean m) grad_d m, ITK's fdm and mdm.
 *
 *  A displacement field (MetricDisplacementField) has D parameters per
 *  virtual point: the core writes each point's derivative terms in place.
 *
 *  A B-spline moving transform (MetricBSpline) has a sparse Jacobian
 *  that is not affine in x: the core then sums, per parameter, the weights
 *  times the point's B-spline weight of that control point (on the GPU:
 *  per-point records sorted by grid cell, summed per cell and then per
 *  control point in a fixed order, so the result does not depend on
 *  scheduling).
 *
 *  The ITK classes itk::CudaMeanSquaresImageToImageMetricv4,
 *  itk::CudaCorrelationImageToImageMetricv4 and
 *  itk::CudaMattesMutualInformationImageToImageMetricv4 build the job from
 *  the metric's images, transforms and virtual domain.
 *=========================================================================*/
#ifndef cifRegistrationMetric_h
#define cifRegistrationMetric_h

#include <cstdint>
#include <string>

namespace cif
{

/** The metric a job evaluates. */
enum class MetricKind
{
  /** itk::MeanSquaresImageToImageMetricv4: mean of (f - m)^2 over the valid
   * points; derivative sum 2 (f - m) grad m . J / n. */
  MeanSquares,
  /** itk::CorrelationImageToImageMetricv4: two passes, as ITK's helper
   * threader and its threader: the means of f and m over the valid points,
   * then with f1 = f - mean f and m1 = m - mean m the sums fm = sum f1 m1,
   * f2 = sum f1^2, m2 = sum m1^2 and the moments of f1 grad m (fdm) and
   * m1 grad m (mdm). ITK's value is -fm^2 / (f2 m2). */
  Correlation,
  /** itk::MattesMutualInformationImageToImageMetricv4 (transforms without
   * local support): a first pass builds ITK's joint PDF (a zero-order
   * Parzen window on the fixed value, ITK's cubic B-spline on the moving
   * value over four bins) and the fixed marginal over the points whose
   * moving value lies in the moving image's range; the core then computes
   * ITK's ComputeResults (normalisation, marginals, value -sum p log(p /
   * (p_f p_m)), the table pRatio = log(p / p_m)); a second pass sums the
   * moments of w grad m with w = sum over the four moving bins of pRatio
   * times the cubic B-spline's derivative. ITK's derivative is
   * -1 / (movingBinSize n) times their contraction. */
  MattesMutualInformation
};

/** The most histogram bins the Mattes core takes (its GPU histogram lives in
 * shared memory). */
constexpr int kMaxMattesBins = 160;

/** The histogram of the Mattes metric, as ITK's Initialize sets it up
 * (the bins padded by two on each side). */
struct MattesHistogram
{
  int    bins{ 50 };
  double fixedBinSize{ 1 };
  double fixedNormalizedMin{ 0 };
  double movingBinSize{ 1 };
  double movingNormalizedMin{ 0 };
  /** Points whose moving value is outside [movingTrueMin, movingTrueMax]
   * are not valid (ITK's ProcessPoint). */
  double movingTrueMin{ 0 };
  double movingTrueMax{ 0 };
};

/** A sampled image (or the gradient image: `dimension` floats per sample)
 * that a metric reads, x fastest. Continuous index c = pointToIndex (p -
 * origin), in image index units (ITK's
 * TransformPhysicalPointToContinuousIndex); the buffer holds the samples of
 * [start, start + size). */
struct MetricImage
{
  const void * values{ nullptr };
  /** The fixed and the moving image: itk::BSplineInterpolateImageFunction
   * of order 3 instead of linear interpolation, with its coefficients (in
   * double, on the buffer's grid), evaluated with ITK's arithmetic (its
   * region of support, weights and mirror boundary, see
   * cif/BSplineEvaluate.h); null: linear interpolation of `values`. */
  const double * coefficients{ nullptr };
  std::int64_t size[3]{ 1, 1, 1 };
  std::int64_t start[3]{ 0, 0, 0 };
  double       origin[3]{ 0, 0, 0 };
  double       pointToIndex[3][3]{ { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } };
};

/** An affine point map p' = matrix p + offset. */
struct MetricAffineMap
{
  double matrix[3][3]{ { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } };
  double offset[3]{ 0, 0, 0 };
};

/** The most maps of a MetricAffineChain. */
constexpr int kMaxAffineChain = 4;

/** Affine maps applied one after another, maps[0] first, as ITK's
 * CompositeTransform applies its transforms (the last added first), so
 * that each step rounds as ITK's does; count 0 is the identity. */
struct MetricAffineChain
{
  MetricAffineMap maps[kMaxAffineChain];
  int             count{ 1 };
};

/** An image mask, tested as itk::ImageMaskSpatialObject::IsInsideInWorldSpace
 * tests a physical point p (depth 0): its object-space position
 * o = worldToObject p (the mask's ObjectToWorldTransformInverse), the index
 * RoundHalfIntegerUp(pointToIndex (o - origin)) (ITK's
 * TransformPhysicalPointToIndex), inside when that index lies in the
 * buffer and its sample is not zero. `image.values`: one byte per buffer
 * sample, nonzero where the mask's pixel is not zero (ITK's
 * Math::NotExactlyEquals(pixel, 0), so NaN is inside); null: no mask. */
struct MetricMask
{
  MetricImage     image;
  MetricAffineMap worldToObject;
};

/** The moving transform as itk::BSplineTransform of order 3 computes it
 * (BSplineTransform::TransformPoint and
 * ComputeJacobianWithRespectToParameters): the continuous index c of the
 * virtual point x in the coefficient grid; x itself (and a zero Jacobian)
 * when the support is not inside the grid (ITK's InsideValidRegion, with
 * its nudge of 6 ULP below the upper limit); else the support start
 * s = floor(c + 0.5 - 1.5), the 1D weights B3(c - s - k), k = 0..3, their
 * products over the axes (x fastest) w_j, and x + sum_j w_j coef_j. The
 * Jacobian row d of parameter d * gridCount + j is w_j. */
struct MetricBSpline
{
  /** D arrays of gridCount coefficients, one per axis (ITK's parameter
   * order: axis major, then the grid x fastest); null: no B-spline (the
   * affine movingTransform applies). On the device for the GPU core. */
  const double * coefficients{ nullptr };
  std::int64_t   gridSize[3]{ 1, 1, 1 };
  double         gridOrigin[3]{ 0, 0, 0 };
  double         gridPointToIndex[3][3]{ { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } };
  /** Where the derivative sums go (with `derivative` on): `sets` arrays of
   * D * gridCount doubles (the metric's weight sets, see MetricMoments),
   * overwritten; on the device for the GPU core. Entry d * gridCount + j of
   * set s is the sum over the valid points of w_s grad_d m w_j. */
  double * derivativeSums{ nullptr };
};

/** The moving transform as itk::DisplacementFieldTransform computes it with
 * its default itk::VectorLinearInterpolateImageFunction (TransformPoint and
 * the identity Jacobian), a transform with local support: x + u(x) when x
 * lies inside the field's buffer (ITK's IsInsideBuffer), else x itself; u(x)
 * by VectorLinearInterpolateImageFunction's arithmetic at the continuous
 * index c of x (base floor(c), the 2^D neighbours in counter order clamped
 * to the buffer, each weighted by its overlap and skipped when that is 0,
 * stopping when the overlaps sum to exactly 1).
 *
 * The derivative has D parameters per virtual point (ITK's
 * ComputeParameterOffsetFromVirtualIndex: the point's region offset times
 * D), so only the dense virtual domain takes one: entry i D + d of
 * `derivative` is w grad m . A_d at virtual point i (A the matrix below),
 * 0 where the point is not valid. ITK's local-support derivative is these
 * entries themselves: for mean squares w = 2 (f - m) (not divided by the
 * number of points), for Mattes w = the point's sum over its four moving
 * bins of B3' times -pRatio / (movingBinSize n) (ITK's pRatioArray). */
struct MetricDisplacementField
{
  /** D doubles per sample of `grid`'s buffer (itk::Vector<double, D>
   * pixels); null: no displacement field. On the device for the GPU core. */
  const double * displacements{ nullptr };
  /** The field's buffer and geometry (`values` unused). */
  MetricImage grid;
  /** The Jacobian with respect to the point of the transforms a composite
   * applies after the field (their matrices' product; identity when there
   * are none): ITK's composite Jacobian is A times the field's identity. */
  double outer[3][3]{ { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } };
  /** D doubles per virtual point, overwritten when `derivative` is on; on
   * the device for the GPU core. */
  double * derivative{ nullptr };
};

/** The number of coefficients per axis of a B-spline moving transform. */
inline std::int64_t
BSplineGridCount(const MetricBSpline & b)
{
  return b.gridSize[0] * b.gridSize[1] * b.gridSize[2];
}

/** One evaluation over the dense virtual domain. Unused axes (index >=
 * dimension) have size 1 and are ignored. */
struct DenseMetricJob
{
  MetricKind kind{ MetricKind::MeanSquares };
  /** 2 or 3. */
  int dimension{ 3 };
  /** The virtual region: its first index and size, and the virtual image's
   * index-to-point map (direction times spacing) and origin. */
  std::int64_t    virtualStart[3]{ 0, 0, 0 };
  std::int64_t    virtualSize[3]{ 1, 1, 1 };
  double          virtualOrigin[3]{ 0, 0, 0 };
  double          virtualIndexToPoint[3][3]{ { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } };
  /** The fixed and moving transforms' point maps (the moving one unused
   * with a B-spline, see bspline). */
  MetricAffineChain fixedTransform;
  MetricAffineChain movingTransform;
  /** Pixel values of the image's pixel type (the TPixel of the entry
   * points). */
  MetricImage fixed;
  MetricImage moving;
  /** `dimension` floats per sample: the moving image's physical gradient
   * (ITK's default, UseMovingImageGradientFilter on), on the moving image's
   * grid. Read only when `derivative` is set and centralDifferences is off. */
  MetricImage movingGradient;
  /** UseMovingImageGradientFilter off: the gradient at the moving point p
   * by itk::CentralDifferenceImageFunction (UseImageDirection on), from the
   * moving image: per physical axis a, the linear interpolations at
   * p -/+ spacing_a / 2 along that axis, their difference divided by the
   * distance between the two points; 0 on an axis where either point is
   * outside the buffer. */
  bool   centralDifferences{ false };
  double movingSpacing[3]{ 1, 1, 1 };
  /** The point x0 the moments' positions are taken from (the middle of the
   * virtual domain keeps the sums well conditioned). */
  double momentOrigin[3]{ 0, 0, 0 };
  bool   derivative{ true };
  /** A sampled point set instead of the dense region (ITK's
   * UseSampledPointSet: its virtual sampled points): `dimension` doubles per
   * virtual point, `pointCount` of them. Null: the virtual region. */
  const double * points{ nullptr };
  std::int64_t   pointCount{ 0 };
  /** ITK's metric masks: a virtual point is valid only if its fixed point
   * is inside fixedMask and its moving point inside movingMask (ITK's
   * TransformAndEvaluateFixedPoint and ...MovingPoint). */
  MetricMask fixedMask;
  MetricMask movingMask;
  /** MattesMutualInformation only. */
  MattesHistogram mattes;
  /** A B-spline moving transform: the moving point is then
   * movingTransform(B-spline(x)), movingTransform being the affine maps of
   * the transforms a composite applies after the B-spline (count 0 when
   * there are none). */
  MetricBSpline bspline;
  /** A displacement field moving transform (dense domain, mean squares or
   * Mattes): the moving point is then movingTransform(field(x)), as for
   * the B-spline. */
  MetricDisplacementField field;
};

/** The number of per-point weight sets of a metric's derivative: 2 for
 * correlation (f1 grad m and m1 grad m), else 1. */
inline int
MetricWeightSets(MetricKind kind)
{
  return kind == MetricKind::Correlation ? 2 : 1;
}

/** What an evaluation returns: sums over the valid points, in double.
 * - `count`: the number of valid points (ITK's NumberOfValidPoints);
 * - `value`: the sum of the per-point metric values (mean squares:
 *   (f - m)^2; ITK's value is value / count);
 * - `weighted[d][k]`, k < dimension: sum of w_d (x_k - x0_k);
 *   `weighted[d][dimension]`: sum of w_d; w_d is the per-point weight of the
 *   transform Jacobian's row d (mean squares: 2 (f - m) grad_d m). Then
 *   ITK's derivative for parameter p is
 *   (sum_d J_dp(x0) weighted[d][D] + sum_d sum_k G_dpk weighted[d][k]) / count,
 *   where G_dpk = J_dp(x0 + e_k) - J_dp(x0). Zero when `derivative` is off
 *   and with a B-spline moving transform (whose sums go to
 *   MetricBSpline::derivativeSums instead). */
struct MetricMoments
{
  double count{ 0 };
  double value{ 0 };
  double weighted[3][4]{};
  /** Correlation: `value` is fm, `weighted` the moments of f1 grad m,
   * `movingWeighted` those of m1 grad m; f2 and m2 in fixedSquares and
   * movingSquares; the means of the first pass in fixedMean and movingMean
   * (0 when no point is valid). */
  double movingWeighted[3][4]{};
  double fixedSquares{ 0 };
  double movingSquares{ 0 };
  double fixedMean{ 0 };
  double movingMean{ 0 };
  /** Mattes: `value` is ITK's final value; `weighted` the moments of the
   * second pass; status 1 when no point is valid, 2 when the joint PDF sums
   * to less than epsilon (ITK throws then), 0 otherwise. */
  int status{ 0 };
};

/** Why `job` is not a valid request (empty when it is): dimension, sizes,
 * missing buffers. */
std::string
ValidateDenseMetricJob(const DenseMetricJob & job);

/** GPU core: device pointers in the job, one thread per virtual point (per
 * pass), the sums reduced per block and then in a fixed order
 * (deterministic). TPixel:
 * float or double. Throws cif::CudaFailure on CUDA errors and
 * std::invalid_argument for an invalid job; returns after the device
 * finished. */
template <typename TPixel>
void
DenseMetricMomentsCUDA(const DenseMetricJob & job, MetricMoments & moments);

/** CPU core: the same contract with host pointers, multi-threaded over
 * fixed chunks of the virtual region whose sums are added in chunk order
 * (the result does not depend on the thread count). */
template <typename TPixel>
void
DenseMetricMomentsCPU(const DenseMetricJob & job, MetricMoments & moments, int numberOfThreads);

/** Whether this build has the GPU core (compiled with nvcc). */
bool
DenseMetricCUDAIsCompiled();

} // namespace cif

#endif
