/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaDiffeomorphicDemonsRegistrationFilter_hxx
#define itkCudaDiffeomorphicDemonsRegistrationFilter_hxx

#include "itkCudaDiffeomorphicDemonsRegistrationFilter.h"

#include "cif/Demons.h"
#include "itkNumericTraits.h"

#include <type_traits>

namespace itk
{

template <typename TFixedImage, typename TMovingImage, typename TDisplacementField>
void
CudaDiffeomorphicDemonsRegistrationFilter<TFixedImage, TMovingImage, TDisplacementField>::DescribeVariant(
  cif::DemonsJob &                 job,
  DemonsRegistrationFunctionType * function) const
{
  using MovingPixel = typename MovingImageType::PixelType;
  job.variant = cif::DemonsVariant::Diffeomorphic;
  job.gradient = static_cast<cif::DemonsGradient>(static_cast<int>(function->GetUseGradientType()));
  job.maximumUpdateStepLength = function->GetMaximumUpdateStepLength();
  job.useFirstOrderExp = this->GetUseFirstOrderExp();
  job.movingOutside = static_cast<float>(NumericTraits<MovingPixel>::max());
  job.movingIntegral = !std::is_floating_point<MovingPixel>::value;
}

template <typename TFixedImage, typename TMovingImage, typename TDisplacementField>
void
CudaDiffeomorphicDemonsRegistrationFilter<TFixedImage, TMovingImage, TDisplacementField>::StartIteration(
  DemonsRegistrationFunctionType * function)
{
  const FixedImageType * fixed = this->GetFixedImage();
  if (m_OnePixelField.IsNull())
  {
    m_OnePixelField = DisplacementFieldType::New();
  }
  typename DisplacementFieldType::RegionType region;
  region.SetIndex(fixed->GetBufferedRegion().GetIndex());
  typename DisplacementFieldType::SizeType size;
  size.Fill(1);
  region.SetSize(size);
  if (m_OnePixelField->GetBufferedRegion() != region)
  {
    m_OnePixelField->SetRegions(region);
    m_OnePixelField->Allocate();
  }
  m_OnePixelField->CopyInformation(fixed);
  m_OnePixelField->SetRegions(region);
  typename DisplacementFieldType::PixelType zero;
  zero.Fill(0);
  m_OnePixelField->FillBuffer(zero);
  function->SetDisplacementField(m_OnePixelField);
  function->InitializeIteration();
}

template <typename TFixedImage, typename TMovingImage, typename TDisplacementField>
void
CudaDiffeomorphicDemonsRegistrationFilter<TFixedImage, TMovingImage, TDisplacementField>::FinishIterations(
  DemonsRegistrationFunctionType * function)
{
  // as ITK's InitializeIteration leaves it
  function->SetDisplacementField(this->GetOutput());
}

} // namespace itk

#endif
