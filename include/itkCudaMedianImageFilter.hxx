/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaMedianImageFilter_hxx
#define itkCudaMedianImageFilter_hxx

#include "itkCudaMedianImageFilter.h"
#include "cif/Median.h"
#include "itkCudaSlabs.h"
#include "itkMultiThreaderBase.h"
#include <sstream>
#include <type_traits>

namespace itk
{

namespace CudaMedianDetail
{
/** Pixel types of the module's cores (src/core/median/MedianCPU.cxx, src/core/median/Median.cu). */
template <typename TIn, typename TOut>
constexpr bool CoreSupports = std::is_same<TIn, TOut>::value &&
                              (std::is_same<TIn, unsigned char>::value || std::is_same<TIn, short>::value ||
                               std::is_same<TIn, unsigned short>::value || std::is_same<TIn, float>::value);

/** The job of the filter's current input and (allocated) output. */
template <typename TFilter>
cif::MedianGeometry
MakeGeometry(const TFilter * filter)
{
  constexpr unsigned int D = TFilter::ImageDimension;
  const auto             in = filter->GetInput()->GetBufferedRegion();
  const auto             out = filter->GetOutput()->GetBufferedRegion();
  cif::MedianGeometry    g;
  for (unsigned int a = 0; a < D && a < 3; ++a)
  {
    g.inputSize[a] = static_cast<std::int64_t>(in.GetSize(a));
    g.outputStart[a] = out.GetIndex(a) - in.GetIndex(a);
    g.outputSize[a] = static_cast<std::int64_t>(out.GetSize(a));
    g.radius[a] = static_cast<std::int64_t>(filter->GetRadius()[a]);
  }
  return g;
}
} // namespace CudaMedianDetail

template <typename TInputImage, typename TOutputImage>
std::string
CudaMedianImageFilter<TInputImage, TOutputImage>::GetGPUUnsupportedReason() const
{
  std::ostringstream why;
  if (ImageDimension > 3)
  {
    why << "the GPU handles 1 to 3 dimensions, not " << ImageDimension;
  }
  else if (!CudaMedianDetail::CoreSupports<InputPixelType, OutputPixelType>)
  {
    why << "the GPU handles input and output pixels of the same type among unsigned char, short, unsigned short and "
           "float, not "
        << CudaPixelTypeName<InputPixelType>() << " to " << CudaPixelTypeName<OutputPixelType>();
  }
  else if (!cif::MedianCUDAIsCompiled())
  {
    why << "this build has no CUDA code";
  }
  return why.str();
}

template <typename TInputImage, typename TOutputImage>
void
CudaMedianImageFilter<TInputImage, TOutputImage>::GenerateData()
{
  this->CheckInputNotEmpty(this->GetInput());
  m_LastGPUKernel = CudaMedianKernel::Automatic;
  m_LastGPUPlan.clear();
  this->RunOnGPUOrCPU(
    this->GetGPUUnsupportedReason(),
    [this] { this->GPUGenerateData(); },
    [this] { this->CPUGenerateData(); },
    [this](CudaExecutionReport & report)
    {
      if (report.Device == CudaExecutedOn::GPU)
      {
        report.Message += "; " + m_LastGPUPlan;
      }
      else
      {
        m_LastGPUKernel = CudaMedianKernel::Automatic;
      }
    });
}

template <typename TInputImage, typename TOutputImage>
void
CudaMedianImageFilter<TInputImage, TOutputImage>::GPUGenerateData()
{
  using namespace CudaMedianDetail;
  if constexpr (CoreSupports<InputPixelType, OutputPixelType> && ImageDimension <= 3)
  {
    TOutputImage * output = this->GetOutput();
    output->SetBufferedRegion(output->GetRequestedRegion());
    output->Allocate();
    const cif::MedianGeometry g = MakeGeometry(this);
    this->CheckCoreJob(cif::ValidateMedianJob(g));
    const cif::MedianKernel request = m_GPUKernel;
    cif::MedianPlan         plan;
    this->SetLastSlabs(CudaRunNeighbourhoodJob(
      this->GetInput(),
      output,
      g,
      { g.radius[0], g.radius[1], g.radius[2] },
      false,
      0,
      [&](const InputPixelType * in, OutputPixelType * out, const cif::MedianGeometry & job)
      { plan = cif::MedianCUDA(in, out, job, request); },
      [this](double f) { this->UpdateProgress(static_cast<float>(f)); }));
    m_LastGPUKernel = plan.kernel;
    m_LastGPUPlan = plan.description;
    this->UpdateProgress(1.0f);
  }
  else
  {
    itkExceptionMacro(<< "GPU path called for an unsupported request");
  }
}

template <typename TInputImage, typename TOutputImage>
void
CudaMedianImageFilter<TInputImage, TOutputImage>::CPUGenerateData()
{
  using namespace CudaMedianDetail;
  if constexpr (CoreSupports<InputPixelType, OutputPixelType> && ImageDimension <= 3)
  {
    TOutputImage * output = this->GetOutput();
    output->SetBufferedRegion(output->GetRequestedRegion());
    output->Allocate();
    const cif::MedianGeometry g = MakeGeometry(this);
    this->CheckCoreJob(cif::ValidateMedianJob(g));
    const int threads = static_cast<int>(this->GetMultiThreader()->GetMaximumNumberOfThreads());
    cif::MedianCPU(this->GetInput()->GetBufferPointer(),
                   output->GetBufferPointer(),
                   g,
                   threads,
                   [this](double f) { this->UpdateProgress(static_cast<float>(f)); });
  }
  else
  {
    // Dimensions or pixel types outside the core: ITK's own implementation.
    Superclass::GenerateData();
  }
}

template <typename TInputImage, typename TOutputImage>
void
CudaMedianImageFilter<TInputImage, TOutputImage>::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "GPUKernel: " << m_GPUKernel << '\n';
  os << indent << "LastGPUKernel: " << m_LastGPUKernel << '\n';
  this->PrintExecution(os, indent);
}

} // namespace itk

#endif
