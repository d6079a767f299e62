/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaDemonsRegistrationFilter_h
#define itkCudaDemonsRegistrationFilter_h

#include "itkCudaDemonsRegistrationBase.h"
#include "itkDemonsRegistrationFilter.h"

#include <string>

namespace itk
{

/** \class CudaDemonsRegistrationFilter
 * \brief Thirion's demons registration on the GPU (CUDA) or the CPU: a
 * drop-in for itk::DemonsRegistrationFilter (factory override for
 * unsigned char, short, unsigned short and float images with a float
 * vector field, 2D and 3D), the successor of ITK's removed OpenCL
 * GPUDemonsRegistrationFilter.
 *
 * Computed: ITK's iterations (cif/Demons.h), in ITK's order: the field
 * smoothed with ITK's GaussianOperator<float> kernels (SetStandardDeviations,
 * SetMaximumError, SetMaximumKernelWidth; SmoothDisplacementField), the
 * update of DemonsRegistrationFunction (moving image linearly interpolated
 * at x + u(x), fixed image gradient by central differences, ITK's
 * normaliser and thresholds), optionally smoothed (SmoothUpdateField), and
 * added. The field, the images and the update stay on the device for the
 * whole registration; per iteration only the metric's sums come back. The
 * per-pixel arithmetic is ITK's (double, then float for the field, as
 * ITK's), the smoothing is ITK's float arithmetic in ITK's order, so the
 * field equals ITK's up to the order of ITK's per-thread sums; the tests
 * require 1e-4 pixel RMS after 50 iterations on ITK's example images (the
 * issue's bound is 0.01). GetMetric(), GetRMSChange(),
 * GetElapsedIterations(), the IterationEvent per iteration,
 * SetMaximumRMSError, StopRegistration() and AbortGenerateData behave as
 * ITK's.
 *
 * One difference: observers of IterationEvent read the metric, the RMS
 * change and the iteration count, but the output's buffer holds the field
 * only after the update (copying the field to the host every iteration
 * would cost more than the iteration).
 *
 * The module's cores (GPU, and the multi-threaded CPU core in CPU mode)
 * run what ITK's filter does with its default difference function: fixed
 * and moving pixels exactly representable in float (unsigned char, short,
 * unsigned short, float), a float field, the default linear interpolator,
 * the fixed image's gradient (UseMovingImageGradient off), the output on
 * the fixed image's buffered grid (and an initial field, when given, on it
 * too), ManualReinitialization off. Any other request runs ITK's own
 * DemonsRegistrationFilter code; the execution report (and
 * CUDAIMAGEFILTERS_VERBOSE=1) says so and why. NaN or infinite values met
 * by an iteration throw an itk::ExceptionObject.
 *
 * \ingroup CudaImageFilters
 */
template <typename TFixedImage, typename TMovingImage, typename TDisplacementField>
class ITK_TEMPLATE_EXPORT CudaDemonsRegistrationFilter
  : public CudaDemonsRegistrationBase<DemonsRegistrationFilter<TFixedImage, TMovingImage, TDisplacementField>>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaDemonsRegistrationFilter);

  using Self = CudaDemonsRegistrationFilter;
  using Superclass =
    CudaDemonsRegistrationBase<DemonsRegistrationFilter<TFixedImage, TMovingImage, TDisplacementField>>;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  itkNewMacro(Self);
  itkTypeMacro(CudaDemonsRegistrationFilter, DemonsRegistrationFilter);

  using typename Superclass::FixedImageType;
  using typename Superclass::MovingImageType;
  using typename Superclass::DisplacementFieldType;
  using typename Superclass::DemonsRegistrationFunctionType;
  static constexpr unsigned int ImageDimension = Superclass::ImageDimension;

protected:
  CudaDemonsRegistrationFilter() = default;
  ~CudaDemonsRegistrationFilter() override = default;

  const char *
  GetITKClassName() const override
  {
    return "DemonsRegistrationFilter";
  }

  std::string
  GetVariantUnsupportedReason(DemonsRegistrationFunctionType *) const override
  {
    return this->GetUseMovingImageGradient() ? "UseMovingImageGradient (the moving image's gradient)" : "";
  }

  void
  DescribeVariant(cif::DemonsJob &, DemonsRegistrationFunctionType *) const override
  {
  }

  void
  StartIteration(DemonsRegistrationFunctionType * function) override
  {
    // DemonsRegistrationFunction::InitializeIteration sets up its
    // calculators and resets its sums; it does no per-pixel work
    function->InitializeIteration();
  }
};

} // namespace itk

#endif
