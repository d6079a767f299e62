/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaResampleImageFilter_h
#define itkCudaResampleImageFilter_h

#include "cif/Resample.h"
#include "itkCudaBSplineDecompositionImageFilter.h"
#include "itkCudaExecution.h"
#include "itkCudaFilterImage.h"
#include "itkResampleImageFilter.h"

namespace itk
{

/** How CudaResampleImageFilter evaluates the cubic B-spline on the GPU. */
enum class CudaBSplineEvaluationMode : std::uint8_t
{
  /** 4^N coefficients fetched explicitly, weights on the fly, float32 arithmetic. */
  Accurate,
  /** 2^N hardware-linear texture fetches with on-the-fly weights g and h
   * (Ruijters et al., eq. 9): faster, but the texture unit quantises the
   * interpolation fraction, which puts a floor under the accuracy. Float
   * coefficients only: double images are evaluated in the accurate mode. */
  Fast
};
inline std::ostream &
operator<<(std::ostream & os, CudaBSplineEvaluationMode mode)
{
  return os << (mode == CudaBSplineEvaluationMode::Fast ? "Fast" : "Accurate");
}

/** \class CudaResampleImageFilter
 * \brief Resamples an image through a transform, on the GPU (CUDA) or the
 * CPU: a drop-in for itk::ResampleImageFilter.
 *
 * Same API and semantics as itk::ResampleImageFilter: output size, spacing,
 * origin, direction and start index (or a reference image), default pixel
 * value, physical-space mapping through both images' spacing, origin and
 * direction, ITK's inside-buffer test ([-0.5, size - 0.5) in continuous
 * index), and output values clamped to the output pixel type's range.
 *
 * The GPU runs the request when
 * - the transform is affine (itk::MatrixOffsetTransformBase and its
 *   subclasses: affine, Euler, similarity, versor rigid, ...), a
 *   translation, the identity, an itk::DisplacementFieldTransform<double>
 *   with its default vector linear interpolator, or a third-order
 *   itk::BSplineTransform<double>. Affine maps follow ITK's per-line chain;
 *   the two grid transforms are replayed per output pixel, step for step as
 *   ITK's non-linear path (for the B-spline transform: ITK's weights, its
 *   valid region [1, grid size - 2) and its snap of points within 4 ULPs of
 *   the upper limit; outside, the point does not move);
 * - the interpolator is nearest neighbour, linear, a cubic
 *   itk::BSplineInterpolateImageFunction, or a
 *   CudaGaussianRBFInterpolateImageFunction (Gaussian RBF: its plan on the
 *   host, its coefficient image on the GPU in double precision, and the
 *   point evaluation in double, equal to its CPU evaluation within 1e-9 of
 *   the input's range);
 * - the images are 2D or 3D, input and output pixels of the same type among
 *   unsigned char, short, unsigned short, float and double; no extrapolator.
 *
 * For the cubic interpolator the coefficients are computed on the GPU by
 * the module's prefilter (SetPrefilterMethod: exact recursive or FIR), in
 * single precision (double for double images), and evaluated with explicit
 * weights (SetEvaluationMode(Accurate), the default) or with 2^N hardware
 * trilinear texture fetches (Fast, float only, with the texture unit's
 * 8-bit fraction as its floor). Everything else runs ITK's own CPU
 * implementation; GetLastExecutionReport() says where the last update ran
 * and why. GPU mode throws when the GPU cannot run the request.
 *
 * Device memory: when the whole job does not fit, the output is computed in
 * chunks along its slowest axis, each uploading only the part of the input
 * (or of the coefficients) that it can reach (the whole input for grid
 * transforms); the coefficients then come from the GPU prefilter if input
 * and coefficients fit, else from the CPU core. Chunks evaluate the cubic in
 * the accurate mode. The report and a warning say so, and
 * GetLastNumberOfChunks() gives the count. When not even one output plane
 * fits, automatic mode falls back to the CPU (with a warning) and GPU mode
 * throws.
 *
 * NaN: NaN input pixels propagate as in ITK (through the cubic prefilter's
 * recursion to every coefficient, so every inside output pixel is NaN); a
 * NaN continuous index (from a NaN transform parameter) is outside, so the
 * pixel gets the default value, as ITK's inside test decides.
 *
 * Accuracy against ITK's CPU filter (tested): linear and cubic within 1e-5
 * of the input's range for float images; nearest neighbour identical except
 * at exact rounding ties; integer outputs within 1 (ITK truncates the
 * interpolated double, the GPU interpolates in float). Fast mode: within
 * 1e-3 of the range on smooth images, 3e-2 on uniform noise. Against a
 * float64 reference (README): accurate 2e-7 of the range, fast 6e-3.
 *
 * \ingroup CudaImageFilters
 */
template <typename TInputImage,
          typename TOutputImage,
          typename TInterpolatorPrecisionType = double,
          typename TTransformPrecisionType = TInterpolatorPrecisionType>
class ITK_TEMPLATE_EXPORT CudaResampleImageFilter
  : public ResampleImageFilter<TInputImage, TOutputImage, TInterpolatorPrecisionType, TTransformPrecisionType>
  , public CudaExecutionControl
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaResampleImageFilter);

  using Self = CudaResampleImageFilter;
  using Superclass =
    ResampleImageFilter<TInputImage, TOutputImage, TInterpolatorPrecisionType, TTransformPrecisionType>;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  itkNewMacro(Self);
  itkTypeMacro(CudaResampleImageFilter, ResampleImageFilter);

  static constexpr unsigned int ImageDimension = TOutputImage::ImageDimension;
  using InputPixelType = typename TInputImage::PixelType;
  using OutputPixelType = typename TOutputImage::PixelType;

  /** How the cubic coefficients are computed on the GPU (default: exact recursive). */
  itkSetEnumMacro(PrefilterMethod, CudaBSplinePrefilterMethod);
  itkGetEnumMacro(PrefilterMethod, CudaBSplinePrefilterMethod);
  /** Cubic evaluation on the GPU: accurate (default) or fast texture fetches. */
  itkSetEnumMacro(EvaluationMode, CudaBSplineEvaluationMode);
  itkGetEnumMacro(EvaluationMode, CudaBSplineEvaluationMode);
  /** FIR half-width K for the FIR prefilter (default 13). */
  itkSetClampMacro(FIRHalfWidth, unsigned int, 0, 32);
  itkGetConstMacro(FIRHalfWidth, unsigned int);

  /** 0 when the last GPU update ran in one piece; else the number of output
   * chunks it was cut into because the whole job did not fit the device. */
  int
  GetLastNumberOfChunks() const
  {
    return m_LastNumberOfChunks;
  }

  /** Why the GPU cannot run the current request (empty if it can). */
  std::string
  GetGPUUnsupportedReason() const;

protected:
  CudaResampleImageFilter() = default;
  ~CudaResampleImageFilter() override = default;

  void
  PrintSelf(std::ostream & os, Indent indent) const override;
  /** ITK's request, except for interpolators whose coefficients span the
   * whole input (itk::BSplineInterpolateImageFunction and
   * CudaGaussianRBFInterpolateImageFunction): for those the whole input is
   * requested, as ITK's interpolator requests it through its coefficient
   * filter, but the image is not handed to the interpolator here.
   * ITK's ResampleImageFilter::GenerateInputRequestedRegion calls the
   * interpolator's SetInputImage, which for the B-spline interpolator runs
   * ITK's single-threaded decomposition of the whole input (about 100 s at
   * 1024^3) before GenerateData; the GPU path computes its own coefficients
   * and never needs that, and ITK's CPU path hands the image over again in
   * BeforeThreadedGenerateData. */
  void
  GenerateInputRequestedRegion() override;
  void
  GenerateData() override;
  void
  GPUGenerateData();
  /** The GPU path of CudaGaussianRBFInterpolateImageFunction: its plan,
   * the coefficient image on the GPU (double), the point evaluation. */
  void
  GaussianRBFGenerateData(const cif::ResampleGeometry & g, cif::ResampleParameters p);

private:
  CudaBSplinePrefilterMethod m_PrefilterMethod{ CudaBSplinePrefilterMethod::Recursive };
  CudaBSplineEvaluationMode  m_EvaluationMode{ CudaBSplineEvaluationMode::Accurate };
  unsigned int               m_FIRHalfWidth{ 13 };
  int                        m_LastNumberOfChunks{ 0 };
};

} // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#  include "itkCudaResampleImageFilter.hxx"
#endif

#endif
