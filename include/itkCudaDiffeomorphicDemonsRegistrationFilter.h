/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaDiffeomorphicDemonsRegistrationFilter_h
#define itkCudaDiffeomorphicDemonsRegistrationFilter_h

#include "itkCudaDemonsRegistrationBase.h"
#include "itkDiffeomorphicDemonsRegistrationFilter.h"

#include <string>

namespace itk
{

/** \class CudaDiffeomorphicDemonsRegistrationFilter
 * \brief Vercauteren's diffeomorphic demons on the GPU (CUDA) or the CPU:
 * a drop-in for itk::DiffeomorphicDemonsRegistrationFilter (factory
 * override for unsigned char, short, unsigned short and float images with
 * a float vector field, 2D and 3D).
 *
 * Computed: ITK's iterations (cif/Demons.h; every step with its ITK 5.2.1
 * source in docs/design/diffeomorphic-demons/ITK52-update.md). Per
 * iteration: the moving image warped by the field onto the fixed grid (in
 * the moving pixel type, NumericTraits<moving pixel>::max() outside), the
 * update of ESMDemonsRegistrationFunction (SetUseGradientType: symmetric,
 * fixed, warped-moving or mapped-moving forces;
 * SetMaximumUpdateStepLength; SetIntensityDifferenceThreshold), the
 * optional update smoothing (SmoothUpdateField), the exponential by
 * scaling and squaring (or SetUseFirstOrderExp), the composition
 * u o (Id + exp(update)) + exp(update) with ITK's nearest-neighbour
 * extrapolating vector interpolator, and the field smoothing
 * (SmoothDisplacementField, ITK's GaussianOperator<float> kernels). The
 * images and the fields stay on the device for the whole registration;
 * per iteration only the metric's three sums come back (and, for ITK's
 * automatic exponential, MaximumUpdateStepLength 0, one number). The
 * arithmetic is ITK's, in ITK's order and precision, without fused
 * multiply-adds: against ITK's own filter the fields agree to float
 * rounding (the tests require 1e-4 pixel RMS after 50 iterations on ITK's
 * example images; the bound is 0.01), and GetMetric() and
 * GetRMSChange() agree to the order of ITK's per-thread sums.
 * GetElapsedIterations(), the IterationEvent per iteration,
 * SetMaximumRMSError, StopRegistration() and AbortGenerateData behave as
 * ITK's; observers read the metric and RMS change, but the output's buffer
 * holds the field only after the update.
 *
 * The module's cores run what ITK's filter does with its default
 * ESMDemonsRegistrationFunction and moving interpolator, for fixed and
 * moving pixels exactly representable in float, a float field, the output
 * on the fixed image's buffered grid (and an initial field on it too),
 * ManualReinitialization off. Any other request runs ITK's own code; the
 * execution report (and CUDAIMAGEFILTERS_VERBOSE=1) says so and why. A
 * fixed image with a single pixel along an axis (where ITK's warped-image
 * differences read outside the buffer) and NaN or infinite values met by
 * an iteration throw an itk::ExceptionObject.
 *
 * \ingroup CudaImageFilters
 */
template <typename TFixedImage, typename TMovingImage, typename TDisplacementField>
class ITK_TEMPLATE_EXPORT CudaDiffeomorphicDemonsRegistrationFilter
  : public CudaDemonsRegistrationBase<
      DiffeomorphicDemonsRegistrationFilter<TFixedImage, TMovingImage, TDisplacementField>>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaDiffeomorphicDemonsRegistrationFilter);

  using Self = CudaDiffeomorphicDemonsRegistrationFilter;
  using Superclass =
    CudaDemonsRegistrationBase<DiffeomorphicDemonsRegistrationFilter<TFixedImage, TMovingImage, TDisplacementField>>;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  itkNewMacro(Self);
  itkTypeMacro(CudaDiffeomorphicDemonsRegistrationFilter, DiffeomorphicDemonsRegistrationFilter);

  using typename Superclass::DemonsRegistrationFunctionType;
  using typename Superclass::DisplacementFieldType;
  using typename Superclass::FixedImageType;
  using typename Superclass::MovingImageType;
  static constexpr unsigned int ImageDimension = Superclass::ImageDimension;

protected:
  CudaDiffeomorphicDemonsRegistrationFilter() = default;
  ~CudaDiffeomorphicDemonsRegistrationFilter() override = default;

  const char *
  GetITKClassName() const override
  {
    return "DiffeomorphicDemonsRegistrationFilter";
  }

  void
  DescribeVariant(cif::DemonsJob & job, DemonsRegistrationFunctionType * function) const override;

  void
  StartIteration(DemonsRegistrationFunctionType * function) override;

  void
  FinishIterations(DemonsRegistrationFunctionType * function) override;

private:
  /** A one-pixel zero field on the fixed grid: the function's
   * InitializeIteration (its normalizer, its sums reset) then warps one
   * pixel instead of the whole moving image, which the core warps. */
  typename DisplacementFieldType::Pointer m_OnePixelField;
};

} // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#  include "itkCudaDiffeomorphicDemonsRegistrationFilter.hxx"
#endif

#endif
