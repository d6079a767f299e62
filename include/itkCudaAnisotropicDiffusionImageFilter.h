/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaAnisotropicDiffusionImageFilter_h
#define itkCudaAnisotropicDiffusionImageFilter_h

#include "cif/AnisotropicDiffusion.h"
#include "itkCudaDescribedImageFilter.h"

namespace itk
{

/** \class CudaAnisotropicDiffusionImageFilter
 * \brief What the module's two anisotropic diffusion filters share: ITK's
 * settings as the description's parameters, the requested regions, and the
 * elapsed iterations.
 *
 * TTwin is itk::GradientAnisotropicDiffusionImageFilter or
 * itk::CurvatureAnisotropicDiffusionImageFilter; TSelf the module's class
 * that derives from this one. The settings are the twin's (SetTimeStep,
 * SetConductanceParameter, SetConductanceScalingUpdateInterval,
 * SetFixedAverageGradientMagnitude, SetNumberOfIterations,
 * SetUseImageSpacing). As in ITK's DenseFiniteDifferenceImageFilter, a
 * MaximumRMSError above 0 stops after the first iteration (the dense
 * filter never computes its RMS change, so it stays 0).
 *
 * Requested regions: the whole input and the whole output, because every
 * iteration scales the conductance by the average gradient magnitude of the
 * whole image; with SetFixedAverageGradientMagnitude the output's requested
 * region padded by NumberOfIterations pixels (each iteration reaches one
 * pixel), so streamed pieces equal the whole-image result.
 *
 * \ingroup CudaImageFilters
 */
template <typename TSelf, typename TTwin>
class ITK_TEMPLATE_EXPORT CudaAnisotropicDiffusionImageFilter : public CudaDescribedImageFilter<TSelf, TTwin>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaAnisotropicDiffusionImageFilter);

  using Superclass = CudaDescribedImageFilter<TSelf, TTwin>;
  using InputImageType = typename TTwin::InputImageType;
  using OutputImageType = typename TTwin::OutputImageType;
  static constexpr unsigned int ImageDimension = TTwin::ImageDimension;

  /** The filter's settings as the description's parameters. */
  static cif::Parameters
  DescribedParameters(const TSelf * filter)
  {
    double iterations = static_cast<double>(filter->GetNumberOfIterations());
    if (filter->GetMaximumRMSError() > 0.0 && iterations > 1)
    {
      iterations = 1; // ITK's Halt(): MaximumRMSError > RMSChange (0) after the first iteration
    }
    cif::Parameters p{
      { "number_of_iterations", { iterations } },
      { "time_step", { static_cast<double>(filter->GetTimeStep()) } },
      { "conductance_parameter", { filter->GetConductanceParameter() } },
      { "conductance_scaling_update_interval", { static_cast<double>(filter->GetConductanceScalingUpdateInterval()) } },
      { "fixed_average_gradient_magnitude", {} },
      { "use_image_spacing", { filter->GetUseImageSpacing() ? 1.0 : 0.0 } },
    };
    if (filter->m_GradientMagnitudeIsFixed)
    {
      p["fixed_average_gradient_magnitude"] = { filter->GetFixedAverageGradientMagnitude() };
    }
    if (const InputImageType * input = filter->GetInput())
    {
      p["spacing"] = CudaPerAxisValues<ImageDimension>(input->GetSpacing());
    }
    return p;
  }

protected:
  CudaAnisotropicDiffusionImageFilter() = default;
  ~CudaAnisotropicDiffusionImageFilter() override = default;

  /** Whether the next update needs the whole image (no fixed average
   * gradient magnitude). */
  bool
  NeedsWholeImage() const
  {
    return !this->m_GradientMagnitudeIsFixed;
  }

  void
  GenerateInputRequestedRegion() override
  {
    TTwin::GenerateInputRequestedRegion();
    auto * input = const_cast<InputImageType *>(this->GetInput());
    if (input == nullptr)
    {
      return;
    }
    if (this->NeedsWholeImage())
    {
      input->SetRequestedRegionToLargestPossibleRegion();
      return;
    }
    typename InputImageType::RegionType region = this->GetOutput()->GetRequestedRegion();
    region.PadByRadius(static_cast<SizeValueType>(this->GetNumberOfIterations()));
    region.Crop(input->GetLargestPossibleRegion());
    input->SetRequestedRegion(region);
  }

  void
  EnlargeOutputRequestedRegion(DataObject * output) override
  {
    TTwin::EnlargeOutputRequestedRegion(output);
    if (output != nullptr && this->NeedsWholeImage())
    {
      output->SetRequestedRegionToLargestPossibleRegion();
    }
  }

  /** The update, then ITK's count of elapsed iterations. */
  void
  GenerateData() override
  {
    Superclass::GenerateData();
    if (this->GetCoreUnsupportedReason().empty())
    {
      this->SetElapsedIterations(
        static_cast<IdentifierType>(cif::Value(TSelf::DescribedParameters(static_cast<const TSelf *>(this)), "number_of_iterations")));
    }
  }
};

} // namespace itk

#endif
