/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaGaussianRBFInterpolateImageFunction_h
#define itkCudaGaussianRBFInterpolateImageFunction_h

#include "cif/GaussianRBF.h"
#include "itkFixedArray.h"
#include "itkInterpolateImageFunction.h"

#include <vector>

namespace itk
{

/** \class CudaGaussianRBFInterpolateImageFunction
 * \brief Gaussian radial basis function (GRBF) interpolation of an image at
 * any point: the interpolator of CudaGaussianRBFInterpolationImageFilter
 * (seed 003) for transforms and point sets.
 *
 * What is computed: the interpolant
 *   S(x) = sum_i a_i exp(-sum_d (x_d - x_i,d)^2 / (2 sigma_d^2))
 * through every pixel of the input (continuous index space; Phi a = f), at
 * the continuous index asked for, as itk::BSplineInterpolateImageFunction
 * evaluates its spline: the same interpolant as the filter's separable
 * method, without its axis-aligned grid. Sigma is per axis in physical units
 * (0, the default, means one input spacing).
 *
 * How (cifGaussianRBF.h, "GRBF at arbitrary points"): SetInputImage builds
 * the plan (per-axis Gram matrices in double, Eigen's Cholesky) and the
 * coefficient image along the axes where coefficients are numerically safe
 * (every axis at sigma = 1 pixel, fewer as sigma grows, none beyond about
 * 1.8 pixels); each evaluation sums over the point's taps, Gaussians along
 * those axes and cardinal weights along the others, O(taps^D) per point
 * (about 15^D at sigma = 1, 200 per cardinal axis at sigma = 2). On the CPU
 * in double precision; itk::CudaResampleImageFilter recognises this
 * interpolator and evaluates it on the GPU (double precision too).
 *
 * Accuracy: within Tolerance (default 1e-6) of the input's largest
 * magnitude against a dense float64 solve of Phi a = f (tested in 2D and
 * 3D, with rotations and anisotropic spacing); the input is reproduced at
 * its nodes to the same tolerance. The conditioning limit is the filter's:
 * above sigma = 2.09 pixels (tolerance 1e-6) the plan throws, naming sigma
 * and the limit; SetRidge extends it and smooths.
 *
 * Border: the Gaussian sum runs over the pixels only (no mirror); ITK's
 * resampler asks for points inside [-0.5, size - 0.5) only (IsInsideBuffer).
 * Evaluation outside the buffer is allowed and continues the sum.
 *
 * Any scalar pixel type (converted to double). 1D to 3D.
 *
 * \ingroup CudaImageFilters
 */
template <typename TInputImage, typename TCoordRep = double>
class ITK_TEMPLATE_EXPORT CudaGaussianRBFInterpolateImageFunction
  : public InterpolateImageFunction<TInputImage, TCoordRep>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaGaussianRBFInterpolateImageFunction);

  using Self = CudaGaussianRBFInterpolateImageFunction;
  using Superclass = InterpolateImageFunction<TInputImage, TCoordRep>;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  itkNewMacro(Self);
  itkTypeMacro(CudaGaussianRBFInterpolateImageFunction, InterpolateImageFunction);

  static constexpr unsigned int ImageDimension = TInputImage::ImageDimension;
  using InputImageType = TInputImage;
  using OutputType = typename Superclass::OutputType;
  using ContinuousIndexType = typename Superclass::ContinuousIndexType;
  using IndexType = typename Superclass::IndexType;
  using SizeType = typename Superclass::SizeType;
  using ArrayType = FixedArray<double, ImageDimension>;

  /** Gaussian sigma per axis in physical units; 0 means one input spacing. */
  itkSetMacro(Sigma, ArrayType);
  itkGetConstReferenceMacro(Sigma, ArrayType);
  /** Error bound relative to the input's largest magnitude, in (0, 0.01]. */
  itkSetMacro(Tolerance, double);
  itkGetConstMacro(Tolerance, double);
  /** Tikhonov term added to the Gram diagonals (0: interpolate). */
  itkSetMacro(Ridge, double);
  itkGetConstMacro(Ridge, double);

  /** Builds the plan and the coefficient image (CPU) for `image`; throws
   * itk::ExceptionObject for bad sigma, tolerance or ridge, an empty image,
   * more than 3 dimensions, or a sigma beyond the conditioning limit. */
  void
  SetInputImage(const TInputImage * image) override;

  /** The plan of `image`'s interpolant with this function's parameters
   * (what SetInputImage builds; the GPU resampler calls it instead). */
  cif::GrbfPointsPlan
  MakePlan(const TInputImage * image) const;

  OutputType
  EvaluateAtContinuousIndex(const ContinuousIndexType & index) const override;

  /** S at a pixel: the pixel itself without a ridge (to the tolerance), the
   * smoothed value with one. */
  OutputType
  EvaluateAtIndex(const IndexType & index) const override
  {
    ContinuousIndexType c;
    for (unsigned int d = 0; d < ImageDimension; ++d)
    {
      c[d] = static_cast<TCoordRep>(index[d]);
    }
    return this->EvaluateAtContinuousIndex(c);
  }

  /** The taps reach this many pixels on either side of a point. */
  SizeType
  GetRadius() const override;

protected:
  CudaGaussianRBFInterpolateImageFunction();
  ~CudaGaussianRBFInterpolateImageFunction() override = default;
  void
  PrintSelf(std::ostream & os, Indent indent) const override;

private:
  ArrayType           m_Sigma;
  double              m_Tolerance{ 1e-6 };
  double              m_Ridge{ 0.0 };
  cif::GrbfPointsPlan m_Plan;
  cif::GrbfPointsRule m_Rule;
  std::vector<double> m_Coefficients;
};

} // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#  include "itkCudaGaussianRBFInterpolateImageFunction.hxx"
#endif

#endif
