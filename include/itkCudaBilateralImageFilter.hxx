/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaBilateralImageFilter_hxx
#define itkCudaBilateralImageFilter_hxx

#include "itkCudaBilateralImageFilter.h"
#include "itkCudaFactorylessTwin.h"
#include <algorithm>
#include <vector>

namespace itk
{

template <typename TInputImage, typename TOutputImage>
auto
CudaBilateralImageFilter<TInputImage, TOutputImage>::GetKernelRadius() const -> SizeType
{
  if (this->GetAutomaticKernelSize() && this->GetInput() == nullptr)
  {
    itkExceptionMacro(<< "The automatic kernel radius depends on the input's spacing: set the input first");
  }
  cif::Parameters           parameters = DescribedParameters(this);
  std::vector<std::int64_t> radius;
  std::string               problem;
  try
  {
    cif::CompleteParameters(Description(), parameters, static_cast<int>(ImageDimension));
    problem = cif::BilateralKernelRadius(parameters, static_cast<int>(ImageDimension), radius);
  }
  catch (const std::invalid_argument & e)
  {
    problem = e.what();
  }
  if (!problem.empty())
  {
    itkExceptionMacro(<< problem);
  }
  SizeType size;
  for (unsigned int a = 0; a < ImageDimension; ++a)
  {
    size[a] = static_cast<SizeValueType>(radius[a]);
  }
  return size;
}

template <typename TInputImage, typename TOutputImage>
void
CudaBilateralImageFilter<TInputImage, TOutputImage>::VerifyPreconditions() ITKv5_CONST
{
  Superclass::VerifyPreconditions();
  // ITK's own setting: only ITK's implementation reads its table
  if (this->GetNumberOfRangeGaussianSamples() < 1)
  {
    itkExceptionMacro(<< "NumberOfRangeGaussianSamples must be at least 1");
  }
}

template <typename TInputImage, typename TOutputImage>
void
CudaBilateralImageFilter<TInputImage, TOutputImage>::GenerateInputRequestedRegion()
{
  auto * input = const_cast<TInputImage *>(this->GetInput());
  if (input == nullptr)
  {
    return;
  }
  if (input->GetLargestPossibleRegion().GetNumberOfPixels() == 0)
  {
    itkExceptionMacro(<< "The input image is empty (size " << input->GetLargestPossibleRegion().GetSize() << ")");
  }
  this->GetKernelRadius(); // throws for unusable parameters before ITK pads by the radius
  if (m_NumberOfIterations > 1)
  {
    ImageToImageFilter<TInputImage, TOutputImage>::GenerateInputRequestedRegion();
    input->SetRequestedRegionToLargestPossibleRegion();
    return;
  }
  Twin::GenerateInputRequestedRegion();
}

template <typename TInputImage, typename TOutputImage>
void
CudaBilateralImageFilter<TInputImage, TOutputImage>::EnlargeOutputRequestedRegion(DataObject * output)
{
  Twin::EnlargeOutputRequestedRegion(output);
  if (m_NumberOfIterations > 1 && output != nullptr)
  {
    output->SetRequestedRegionToLargestPossibleRegion(); // each iteration needs the previous one everywhere
  }
}

template <typename TInputImage, typename TOutputImage>
void
CudaBilateralImageFilter<TInputImage, TOutputImage>::TwinGenerateData()
{
  if constexpr (CoreWritesThisPair)
  {
    const cif::Parameters parameters = this->CheckedParameters();
    this->AllocateOutputs();
    const cif::Job job = this->RequestedJob(parameters);
    const auto     geometry = cif::GeometryOfJob<cif::ClampedNeighborhoodGeometry>(job);
    const auto     core = cif::BilateralParametersOf(parameters, job.dimension);
    this->CheckCoreJob(cif::ValidateBilateralJob(geometry, core));
    cif::BilateralCPU(this->GetInput()->GetBufferPointer(),
                      this->GetOutput()->GetBufferPointer(),
                      geometry,
                      core,
                      this->CoreThreads(),
                      job.progress);
    return;
  }
  this->GetKernelRadius(); // the description's check of the settings
  // First iteration: ITK's own algorithm into this filter's output.
  Twin::GenerateData();
  // Further iterations: ITK's filter on the previous result.
  for (unsigned int i = 1; i < m_NumberOfIterations; ++i)
  {
    auto previous = TOutputImage::New();
    previous->Graft(this->GetOutput());
    // ITK's own class, whatever factory overrides are registered
    using Inner = CudaFactorylessTwin<BilateralImageFilter<TOutputImage, TOutputImage>>;
    auto inner = Inner::New();
    inner->SetInput(previous);
    inner->SetDomainSigma(this->GetDomainSigma());
    inner->SetDomainMu(this->GetDomainMu());
    inner->SetRangeSigma(this->GetRangeSigma());
    inner->SetAutomaticKernelSize(this->GetAutomaticKernelSize());
    inner->SetRadius(this->GetRadius());
    inner->SetNumberOfRangeGaussianSamples(this->GetNumberOfRangeGaussianSamples());
    inner->SetNumberOfWorkUnits(this->GetNumberOfWorkUnits());
    inner->Update();
    const auto * source = inner->GetOutput()->GetBufferPointer();
    std::copy(source,
              source + this->GetOutput()->GetBufferedRegion().GetNumberOfPixels(),
              this->GetOutput()->GetBufferPointer());
  }
}

template <typename TInputImage, typename TOutputImage>
void
CudaBilateralImageFilter<TInputImage, TOutputImage>::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "NumberOfIterations: " << m_NumberOfIterations << '\n';
}

} // namespace itk

#endif
