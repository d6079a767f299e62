/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaRotatingMaskImageFilter_hxx
#define itkCudaRotatingMaskImageFilter_hxx

#include "itkCudaRotatingMaskImageFilter.h"
#include "itkMultiThreaderBase.h"

namespace itk
{

template <typename TInputImage, typename TOutputImage>
void
CudaRotatingMaskImageFilter<TInputImage, TOutputImage>::GenerateInputRequestedRegion()
{
  ImageToImageFilter<TInputImage, TOutputImage>::GenerateInputRequestedRegion();
  auto * input = const_cast<TInputImage *>(this->GetInput());
  if (input == nullptr)
  {
    return;
  }
  if (input->GetLargestPossibleRegion().GetNumberOfPixels() == 0)
  {
    itkExceptionMacro(<< "The input image is empty (size " << input->GetLargestPossibleRegion().GetSize() << ")");
  }
  if (m_NumberOfIterations > 1)
  {
    input->SetRequestedRegionToLargestPossibleRegion();
    return;
  }
  typename TInputImage::RegionType region = this->GetOutput()->GetRequestedRegion();
  region.PadByRadius(MaskRadius);
  region.Crop(input->GetLargestPossibleRegion());
  input->SetRequestedRegion(region);
}

template <typename TInputImage, typename TOutputImage>
void
CudaRotatingMaskImageFilter<TInputImage, TOutputImage>::EnlargeOutputRequestedRegion(DataObject * output)
{
  ImageToImageFilter<TInputImage, TOutputImage>::EnlargeOutputRequestedRegion(output);
  if (m_NumberOfIterations > 1 && output != nullptr)
  {
    output->SetRequestedRegionToLargestPossibleRegion();
  }
}

template <typename TInputImage, typename TOutputImage>
void
CudaRotatingMaskImageFilter<TInputImage, TOutputImage>::TwinGenerateData()
{
  // the parameters are checked as the description checks them
  cif::Parameters parameters = DescribedParameters(this);
  try
  {
    cif::CompleteParameters(Description(), parameters, static_cast<int>(ImageDimension));
  }
  catch (const std::invalid_argument & e)
  {
    itkExceptionMacro(<< e.what());
  }
  this->AllocateOutputs();
  const auto                       in = this->GetInput()->GetBufferedRegion();
  const auto                       out = this->GetOutput()->GetRequestedRegion();
  cif::ClampedNeighborhoodGeometry geometry;
  for (unsigned int a = 0; a < ImageDimension; ++a)
  {
    geometry.inputSize[a] = static_cast<std::int64_t>(in.GetSize(a));
    geometry.outputStart[a] = out.GetIndex(a) - in.GetIndex(a);
    geometry.outputSize[a] = static_cast<std::int64_t>(out.GetSize(a));
  }
  cif::RotatingMaskParameters core;
  core.dimension = static_cast<int>(ImageDimension);
  core.iterations = static_cast<int>(m_NumberOfIterations);
  this->CheckCoreJob(cif::ValidateRotatingMaskJob(geometry, core));
  const int threads = static_cast<int>(this->GetMultiThreader()->GetMaximumNumberOfThreads());
  cif::RotatingMaskCPU(this->GetInput()->GetBufferPointer(),
                       this->GetOutput()->GetBufferPointer(),
                       geometry,
                       core,
                       threads > 0 ? threads : 1,
                       [this](double f) { this->UpdateProgress(static_cast<float>(f)); });
}

template <typename TInputImage, typename TOutputImage>
void
CudaRotatingMaskImageFilter<TInputImage, TOutputImage>::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "NumberOfIterations: " << m_NumberOfIterations << '\n';
}

} // namespace itk

#endif
