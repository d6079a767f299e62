/*=========================================================================
 *  CudaImageFilters: the cubic B-spline evaluation core (plain types only).
 *
 *  Evaluates a cubic B-spline, given by its coefficient image, and
 *  optionally its gradient at N scattered points, with the arithmetic of
 *  itk::BSplineInterpolateImageFunction (spline order 3):
 *  - region of support: floor((float) c) - 1 ... floor((float) c) + 2 (ITK
 *    casts the continuous index to float before the floor);
 *  - value weights: SetInterpolationWeights, case 3;
 *  - derivative weights: SetDerivativeWeights for spline order 3 (its
 *    `derivativeSplineOrder == 2` case: differences of quadratic weights);
 *  - boundary: ITK's single mirror reflection of each index about the first
 *    and the last sample (ApplyMirrorBoundaryConditions); an axis of length 1
 *    uses its one sample for every index;
 *  - index-space gradient divided by the spacing, then multiplied by the
 *    direction matrix when ITK's UseImageDirection is on.
 *  The ITK interpolator itk::CudaBSplineInterpolateImageFunction calls it.
 *=========================================================================*/
#ifndef cifBSplineEvaluate_h
#define cifBSplineEvaluate_h

#include <cstdint>

namespace cif
{

/** Geometry of a batch evaluation. Axes x fastest; unused axes (index >=
 * dimension) have size 1 and are ignored. */
struct BSplineEvaluateGeometry
{
  /** 2 or 3. */
  int dimension{ 3 };
  /** Size of the coefficient buffer (= the image's buffered region). */
  std::int64_t size[3]{ 1, 1, 1 };
  /** Image index of the buffer's first coefficient (the buffered region's
   * index): continuous indices are image indices, as in ITK. */
  std::int64_t start[3]{ 0, 0, 0 };
  /** Physical point p to continuous index c = pointToIndex (p - origin),
   * ITK's ImageBase::TransformPhysicalPointToContinuousIndex. Used when
   * pointsAreIndices is false. */
  double pointToIndex[3][3]{ { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } };
  double origin[3]{ 0, 0, 0 };
  /** Image spacing: the index-space gradient is divided by it. */
  double spacing[3]{ 1, 1, 1 };
  /** Applied after the division by the spacing: the direction matrix
   * (UseImageDirection on) or the identity. */
  double gradientMatrix[3][3]{ { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } };
};

/** What a batch evaluates. Device pointers; `values`, `gradients` and
 * `inside` may each be null (not written). `points` holds `dimension`
 * doubles per point (physical points, or continuous indices when
 * pointsAreIndices); `gradients` receives `dimension` doubles per point.
 *
 * A point is inside when every continuous index component c satisfies
 * start - 0.5 <= c < start + size - 0.5 (ITK's IsInsideBuffer; NaN is
 * outside). Outside points get value 0, gradient 0 and inside flag 0;
 * inside points get flag 1. */
struct BSplineEvaluateBatch
{
  std::int64_t   count{ 0 };
  const double * points{ nullptr };
  bool           pointsAreIndices{ false };
  double *       values{ nullptr };
  double *       gradients{ nullptr };
  std::uint8_t * inside{ nullptr };
};

/** GPU core: one thread per point, one launch. `coefficients` is the device
 * copy of the coefficient buffer (x fastest). The sums run in TCoefficient
 * (float or double), the index map and the gradient's physical mapping in
 * double. Throws cif::CudaFailure on CUDA errors (an invalid geometry too);
 * returns after the device finished. A batch of 0 points does nothing. */
template <typename TCoefficient>
void
BSplineEvaluateCUDA(const TCoefficient *            coefficients,
                    const BSplineEvaluateGeometry & geometry,
                    const BSplineEvaluateBatch &    batch);

/** CPU core: the same contract with host pointers, evaluated as
 * itk::BSplineInterpolateImageFunction evaluates one point (its loop over
 * the 4^D support points, x fastest, with products of the per-axis weights
 * and sums in double), multi-threaded over the points. Used where no GPU is
 * available (the Python package's CPU path). Throws std::invalid_argument
 * for an invalid geometry or batch. */
template <typename TCoefficient>
void
BSplineEvaluateCPU(const TCoefficient *            coefficients,
                   const BSplineEvaluateGeometry & geometry,
                   const BSplineEvaluateBatch &    batch,
                   int                             numberOfThreads);

/** Whether this build has the GPU core (compiled with nvcc). */
bool
BSplineEvaluateCUDAIsCompiled();

} // namespace cif

#endif
