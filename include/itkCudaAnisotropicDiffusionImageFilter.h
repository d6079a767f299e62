/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaAnisotropicDiffusionImageFilter_h
#define itkCudaAnisotropicDiffusionImageFilter_h

#include "cif/AnisotropicDiffusion.h"
#include "itkCudaDescribedImageFilter.h"

namespace itk
{

/** \class CudaAnisotropicDiffusion
 * \brief What the module's two anisotropic diffusion filters share: ITK's
 * settings as the description's parameters, the requested regions, and the
 * elapsed iterations.
 *
 * TFilter is CudaGradientAnisotropicDiffusionImageFilter or
 * CudaCurvatureAnisotropicDiffusionImageFilter (each derives from
 * CudaDescribedImageFilter directly, so that ITK's wrapping sees one base
 * between them and ITK's filter); `fixed` is ITK's protected
 * m_GradientMagnitudeIsFixed, which the filter passes. As in ITK's
 * DenseFiniteDifferenceImageFilter, a MaximumRMSError above 0 stops after
 * the first iteration (the dense filter never computes its RMS change, so
 * it stays 0).
 *
 * Requested regions: the whole input and the whole output, because every
 * iteration scales the conductance by the average gradient magnitude of the
 * whole image; with SetFixedAverageGradientMagnitude the output's requested
 * region padded by NumberOfIterations pixels (each iteration reaches one
 * pixel), so streamed pieces equal the whole-image result.
 *
 * \ingroup CudaImageFilters
 */
template <typename TFilter>
struct CudaAnisotropicDiffusion
{
  using InputImageType = typename TFilter::InputImageType;
  static constexpr unsigned int ImageDimension = InputImageType::ImageDimension;

  /** The filter's settings as the description's parameters. */
  static cif::Parameters
  Parameters(const TFilter * filter, bool fixed)
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
    if (fixed)
    {
      p["fixed_average_gradient_magnitude"] = { filter->GetFixedAverageGradientMagnitude() };
    }
    if (const InputImageType * input = filter->GetInput())
    {
      p["spacing"] = CudaPerAxisValues<ImageDimension>(input->GetSpacing());
    }
    return p;
  }

  /** After ITK's own request: the whole input, or the output's request
   * padded by the iterations with a fixed average gradient magnitude. */
  static void
  RequestInput(TFilter * filter, bool fixed)
  {
    auto * input = const_cast<InputImageType *>(filter->GetInput());
    if (input == nullptr)
    {
      return;
    }
    if (!fixed)
    {
      input->SetRequestedRegionToLargestPossibleRegion();
      return;
    }
    typename InputImageType::RegionType region = filter->GetOutput()->GetRequestedRegion();
    region.PadByRadius(static_cast<SizeValueType>(filter->GetNumberOfIterations()));
    region.Crop(input->GetLargestPossibleRegion());
    input->SetRequestedRegion(region);
  }

  /** After ITK's own enlargement: the whole output without a fixed
   * average gradient magnitude. */
  static void
  EnlargeOutput(DataObject * output, bool fixed)
  {
    if (output != nullptr && !fixed)
    {
      output->SetRequestedRegionToLargestPossibleRegion();
    }
  }

  /** The iterations the last update ran on the module's cores (0 when
   * ITK's filter ran: it counts its own). */
  static IdentifierType
  ElapsedIterations(const TFilter * filter, bool fixed)
  {
    return filter->GetCoreUnsupportedReason().empty()
             ? static_cast<IdentifierType>(cif::Value(Parameters(filter, fixed), "number_of_iterations"))
             : filter->GetElapsedIterations();
  }
};

} // namespace itk

#endif
