/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaDemonsRegistrationBase_h
#define itkCudaDemonsRegistrationBase_h

#include "itkCudaExecution.h"

#include <string>
#include <type_traits>

namespace cif
{
struct DemonsJob;
}

namespace itk
{

/** \class CudaDemonsRegistrationBase
 * \brief What the module's demons filters share: ITK's iteration loop
 * (FiniteDifferenceImageFilter::GenerateData, the halting, the
 * IterationEvent, StopRegistration and AbortGenerateData, the function's
 * own metric and RMS bookkeeping) around the core's solver (cif/Demons.h)
 * on the GPU or the module's CPU core, the checks that send other set-ups
 * to ITK's own code, and the description of the images and the smoothing.
 *
 * TITKFilter is ITK's filter the subclass replaces
 * (DemonsRegistrationFilter or DiffeomorphicDemonsRegistrationFilter); the
 * subclass says what differs: its difference function's checks, the
 * core's variant and its settings, and how the function is prepared for
 * an iteration.
 *
 * \ingroup CudaImageFilters
 */
template <typename TITKFilter>
class ITK_TEMPLATE_EXPORT CudaDemonsRegistrationBase
  : public TITKFilter
  , public CudaExecutionControl
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaDemonsRegistrationBase);

  using Self = CudaDemonsRegistrationBase;
  using Superclass = TITKFilter;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  using typename Superclass::DemonsRegistrationFunctionType;
  using typename Superclass::DisplacementFieldType;
  using typename Superclass::FixedImageType;
  using typename Superclass::MovingImageType;
  static constexpr unsigned int ImageDimension = Superclass::ImageDimension;

  /** Why the module's cores cannot run the registration as set up now
   * (empty when they can): then ITK's own code runs. */
  std::string
  GetCoreUnsupportedReason() const;

protected:
  CudaDemonsRegistrationBase() = default;
  ~CudaDemonsRegistrationBase() override = default;

  void
  GenerateData() override;

  void
  PrintSelf(std::ostream & os, Indent indent) const override;

  /** The name of ITK's filter, for the execution report. */
  virtual const char *
  GetITKClassName() const = 0;

  /** The subclass's own reasons to run ITK's code (empty: none). */
  virtual std::string
  GetVariantUnsupportedReason(DemonsRegistrationFunctionType * function) const
  {
    (void)function;
    return {};
  }

  /** The core's variant and its settings. */
  virtual void
  DescribeVariant(cif::DemonsJob & job, DemonsRegistrationFunctionType * function) const = 0;

  /** The function's per-iteration set-up (its images, its normalizer, its
   * sums reset), without any per-pixel work; then the core's sums are
   * handed to the function's ReleaseGlobalDataPointer. */
  virtual void
  StartIteration(DemonsRegistrationFunctionType * function) = 0;

  /** After the last iteration. */
  virtual void
  FinishIterations(DemonsRegistrationFunctionType * function)
  {
    (void)function;
  }

  /** Whether the module's cores take the template's types. */
  static constexpr bool kCoreTypes =
    (ImageDimension == 2 || ImageDimension == 3) &&
    std::is_same<typename DisplacementFieldType::PixelType::ValueType, float>::value &&
    CudaIsOneOf<typename FixedImageType::PixelType, unsigned char, short, unsigned short, float> &&
    CudaIsOneOf<typename MovingImageType::PixelType, unsigned char, short, unsigned short, float>;

private:
  /** ITK's iteration loop around the core's solver. */
  void
  RunCore(bool onGpu);
};

} // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#  include "itkCudaDemonsRegistrationBase.hxx"
#endif

#endif
