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
  const cif::Parameters parameters = this->CheckedParameters();
  this->AllocateOutputs();
  const cif::Job                   job = this->RequestedJob(parameters);
  const auto                       geometry = cif::GeometryOfJob<cif::ClampedNeighborhoodGeometry>(job);
  cif::RotatingMaskParameters core;
  core.dimension = job.dimension;
  core.iterations = static_cast<int>(m_NumberOfIterations);
  this->CheckCoreJob(cif::ValidateRotatingMaskJob(geometry, core));
  cif::RotatingMaskCPU(this->GetInput()->GetBufferPointer(),
                       this->GetOutput()->GetBufferPointer(),
                       geometry,
                       core,
                       this->CoreThreads(),
                       job.progress);
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
