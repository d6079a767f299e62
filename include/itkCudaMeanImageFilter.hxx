/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaMeanImageFilter_hxx
#define itkCudaMeanImageFilter_hxx

#include "itkCudaMeanImageFilter.h"
#include "itkCudaSlabs.h"
#include "itkCudaBoxFilterDetail.h"
#include "itkMultiThreaderBase.h"

namespace itk
{

namespace CudaMeanDetail
{
/** (input, output) pixel pairs of the mean cores: same type, or integer in and float out. */
template <typename TIn, typename TOut>
constexpr bool CoreSupports = CudaBoxFilterDetail::IsCorePixel<TIn> &&
                              (std::is_same<TIn, TOut>::value || std::is_same<TOut, float>::value);
} // namespace CudaMeanDetail

template <typename TInputImage, typename TOutputImage>
std::string
CudaMeanImageFilter<TInputImage, TOutputImage>::GetGPUUnsupportedReason() const
{
  if (ImageDimension > 3)
  {
    return "the GPU filters 1 to 3 dimensions";
  }
  if (!CudaMeanDetail::CoreSupports<InputPixelType, OutputPixelType>)
  {
    return std::string("the GPU averages unsigned char, short, unsigned short or float pixels into the same type or "
                       "float (here ") +
           CudaPixelTypeName<InputPixelType>() + " to " + CudaPixelTypeName<OutputPixelType>() + ")";
  }
  return CudaBoxFilterDetail::GPUProblem<ImageDimension>(this->GetRadius());
}

template <typename TInputImage, typename TOutputImage>
void
CudaMeanImageFilter<TInputImage, TOutputImage>::GenerateData()
{
  this->CheckInputNotEmpty(this->GetInput());
  m_LastGPUMethod.clear();
  this->RunOnGPUOrCPU(
    this->GetGPUUnsupportedReason(),
    [this] { this->GPUGenerateData(); },
    [this] { this->CPUGenerateData(); },
    [this](CudaExecutionReport & report)
    {
      if (report.Device == CudaExecutedOn::GPU)
      {
        report.AddNote(m_LastGPUMethod);
      }
    });
}

template <typename TInputImage, typename TOutputImage>
void
CudaMeanImageFilter<TInputImage, TOutputImage>::GPUGenerateData()
{
  if constexpr (CudaMeanDetail::CoreSupports<InputPixelType, OutputPixelType> && ImageDimension <= 3)
  {
    this->AllocateOutputs();
    const cif::BoxGeometry g = CudaBoxFilterDetail::MakeBoxGeometry(this, this->GetRadius());
    this->CheckCoreJob(cif::ValidateBoxJob(g));
    cif::BoxMeanMethod method{};
    // the separable passes' two temporaries (int64 or double) are the work
    this->SetLastSlabs(CudaRunNeighbourhoodJob(
      this->GetInput(),
      this->GetOutput(),
      g,
      { g.radius[0], g.radius[1], g.radius[2] },
      false,
      2 * 8,
      [&](const InputPixelType * in, OutputPixelType * out, const cif::BoxGeometry & job)
      { method = cif::BoxMeanCUDA(in, out, job); },
      [this](double f) { this->UpdateProgress(static_cast<float>(f)); }));
    switch (method)
    {
      case cif::BoxMeanMethod::SeparableInteger:
        m_LastGPUMethod = "separable integer sums (exact)";
        break;
      case cif::BoxMeanMethod::DirectITKOrder:
        m_LastGPUMethod = "direct double sums in ITK's order (exact)";
        break;
      case cif::BoxMeanMethod::SeparableDouble:
        m_LastGPUMethod = "separable double sums (the box is too large for the ITK-order tile; may differ from ITK "
                          "in the last bit when the double sums round)";
        break;
    }
  }
  else
  {
    itkExceptionMacro(<< "GPU path called for an unsupported request");
  }
}

template <typename TInputImage, typename TOutputImage>
void
CudaMeanImageFilter<TInputImage, TOutputImage>::CPUGenerateData()
{
  if constexpr (CudaMeanDetail::CoreSupports<InputPixelType, OutputPixelType> && ImageDimension <= 3)
  {
    if (CudaBoxFilterDetail::RadiusFitsCore<ImageDimension>(this->GetRadius()))
    {
      this->AllocateOutputs();
      const cif::BoxGeometry g = CudaBoxFilterDetail::MakeBoxGeometry(this, this->GetRadius());
      this->CheckCoreJob(cif::ValidateBoxJob(g));
      const int threads = static_cast<int>(this->GetMultiThreader()->GetMaximumNumberOfThreads());
      cif::BoxMeanCPU(this->GetInput()->GetBufferPointer(), this->GetOutput()->GetBufferPointer(), g, threads);
      return;
    }
  }
  Superclass::GenerateData(); // other pixel types, dimensions or huge radii: ITK's implementation
}

template <typename TInputImage, typename TOutputImage>
void
CudaMeanImageFilter<TInputImage, TOutputImage>::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  this->PrintExecution(os, indent);
}

} // namespace itk

#endif
