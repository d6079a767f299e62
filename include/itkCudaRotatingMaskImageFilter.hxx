/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaRotatingMaskImageFilter_hxx
#define itkCudaRotatingMaskImageFilter_hxx

#include "itkCudaRotatingMaskImageFilter.h"
#include "itkCudaSlabs.h"
#include "cif/RotatingMask.h"
#include "itkMultiThreaderBase.h"
#include <sstream>

namespace itk
{

namespace CudaRotatingMaskDetail
{
/** Pixel pairs the GPU core is instantiated for (src/core/rotating_mask/RotatingMask.cu). */
template <typename TIn, typename TOut>
constexpr bool GPUCoreSupports = (CudaIsOneOf<TIn, unsigned char, short, unsigned short, float> &&
                                  std::is_same<TIn, TOut>::value) ||
                                 (CudaIsOneOf<TIn, unsigned char, short, unsigned short> &&
                                  std::is_same<TOut, float>::value);

/** Largest output rows (y) and slices (z) the GPU grid covers. */
constexpr std::int64_t GPUMaxRows = 65535LL * 8;
constexpr std::int64_t GPUMaxSlices = 65535LL * 4;

template <typename TFilter>
cif::ClampedNeighborhoodGeometry
MakeGeometry(const TFilter * filter)
{
  constexpr unsigned int           D = TFilter::ImageDimension;
  const auto                       in = filter->GetInput()->GetBufferedRegion();
  const auto                       out = filter->GetOutput()->GetBufferedRegion();
  cif::ClampedNeighborhoodGeometry g;
  for (unsigned int a = 0; a < D; ++a)
  {
    g.inputSize[a] = static_cast<std::int64_t>(in.GetSize(a));
    g.outputStart[a] = out.GetIndex(a) - in.GetIndex(a);
    g.outputSize[a] = static_cast<std::int64_t>(out.GetSize(a));
  }
  return g;
}
} // namespace CudaRotatingMaskDetail

template <typename TInputImage, typename TOutputImage>
std::string
CudaRotatingMaskImageFilter<TInputImage, TOutputImage>::GetGPUUnsupportedReason() const
{
  using namespace CudaRotatingMaskDetail;
  std::ostringstream why;
  if (!cif::RotatingMaskCUDAIsCompiled())
  {
    why << "this build has no CUDA code";
  }
  else if (!GPUCoreSupports<InputPixelType, OutputPixelType>)
  {
    why << "the GPU path does not handle " << CudaPixelTypeName<InputPixelType>() << " -> "
        << CudaPixelTypeName<OutputPixelType>()
        << " pixels (it handles unsigned char, short, unsigned short and float to the same type, and the "
           "three integer types to float)";
  }
  else if (const TOutputImage * output = this->GetOutput())
  {
    const auto size = output->GetRequestedRegion().GetSize();
    if (static_cast<std::int64_t>(size[1]) > GPUMaxRows ||
        (ImageDimension == 3 && static_cast<std::int64_t>(size[ImageDimension - 1]) > GPUMaxSlices))
    {
      why << "the output has more rows or slices than the GPU kernel's grid covers";
    }
  }
  return why.str();
}

template <typename TInputImage, typename TOutputImage>
void
CudaRotatingMaskImageFilter<TInputImage, TOutputImage>::VerifyPreconditions() ITKv5_CONST
{
  Superclass::VerifyPreconditions();
  if (m_NumberOfIterations < 1)
  {
    itkExceptionMacro(<< "NumberOfIterations must be at least 1");
  }
}

template <typename TInputImage, typename TOutputImage>
void
CudaRotatingMaskImageFilter<TInputImage, TOutputImage>::GenerateInputRequestedRegion()
{
  Superclass::GenerateInputRequestedRegion();
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
  Superclass::EnlargeOutputRequestedRegion(output);
  if (m_NumberOfIterations > 1 && output != nullptr)
  {
    output->SetRequestedRegionToLargestPossibleRegion();
  }
}

template <typename TInputImage, typename TOutputImage>
void
CudaRotatingMaskImageFilter<TInputImage, TOutputImage>::GenerateData()
{
  const TInputImage * input = this->GetInput();
  this->CheckInputNotEmpty(input);
  if (m_NumberOfIterations < 1)
  {
    itkExceptionMacro(<< "NumberOfIterations must be at least 1");
  }
  TOutputImage * output = this->GetOutput();
  output->SetBufferedRegion(output->GetRequestedRegion());
  output->Allocate();

  m_LastNote.clear();
  this->RunOnGPUOrCPU(
    this->GetGPUUnsupportedReason(),
    [this] { this->GPUGenerateData(); },
    [this] { this->CPUGenerateData(); },
    [this](CudaExecutionReport & report) { report.AddNote(m_LastNote); });
}

template <typename TInputImage, typename TOutputImage>
void
CudaRotatingMaskImageFilter<TInputImage, TOutputImage>::GPUGenerateData()
{
  using namespace CudaRotatingMaskDetail;
  if constexpr (GPUCoreSupports<InputPixelType, OutputPixelType>)
  {
    const auto                  geometry = MakeGeometry(this);
    cif::RotatingMaskParameters parameters;
    parameters.dimension = static_cast<int>(ImageDimension);
    parameters.iterations = static_cast<int>(m_NumberOfIterations);
    this->CheckCoreJob(cif::ValidateRotatingMaskJob(geometry, parameters));
    // slabs: the mask reaches 2 samples along every filtered axis per
    // iteration; an iterated kernel filters its whole slab
    const std::int64_t reach = 2 * parameters.iterations;
    this->SetLastSlabs(CudaRunNeighbourhoodJob(
      this->GetInput(),
      this->GetOutput(),
      geometry,
      { reach, reach, parameters.dimension == 3 ? reach : 0 },
      parameters.iterations > 1,
      parameters.iterations > 1 ? sizeof(OutputPixelType) : 0,
      [&](const InputPixelType * in, OutputPixelType * out, const cif::ClampedNeighborhoodGeometry & job)
      { m_LastNote = cif::RotatingMaskCUDA(in, out, job, parameters); },
      [this](double f) { this->UpdateProgress(static_cast<float>(f)); }));
    this->UpdateProgress(1.0f);
  }
  else
  {
    itkExceptionMacro(<< "GPU path called for an unsupported request");
  }
}

template <typename TInputImage, typename TOutputImage>
void
CudaRotatingMaskImageFilter<TInputImage, TOutputImage>::CPUGenerateData()
{
  const auto                  geometry = CudaRotatingMaskDetail::MakeGeometry(this);
  cif::RotatingMaskParameters parameters;
  parameters.dimension = static_cast<int>(ImageDimension);
  parameters.iterations = static_cast<int>(m_NumberOfIterations);
  this->CheckCoreJob(cif::ValidateRotatingMaskJob(geometry, parameters));
  const int threads = static_cast<int>(this->GetMultiThreader()->GetMaximumNumberOfThreads());
  cif::RotatingMaskCPU(this->GetInput()->GetBufferPointer(),
                       this->GetOutput()->GetBufferPointer(),
                       geometry,
                       parameters,
                       threads,
                       [this](double f) { this->UpdateProgress(static_cast<float>(f)); });
}

template <typename TInputImage, typename TOutputImage>
void
CudaRotatingMaskImageFilter<TInputImage, TOutputImage>::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "NumberOfIterations: " << m_NumberOfIterations << '\n';
  this->PrintExecution(os, indent);
}

} // namespace itk

#endif
