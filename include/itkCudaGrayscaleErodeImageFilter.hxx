/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaGrayscaleErodeImageFilter_hxx
#define itkCudaGrayscaleErodeImageFilter_hxx

#include "itkCudaGrayscaleErodeImageFilter.h"
#include "itkCudaSlabs.h"
#include "itkCudaBoxFilterDetail.h"
#include "itkMultiThreaderBase.h"
#include <cmath>

namespace itk
{

template <typename TInputImage, typename TOutputImage, typename TKernel>
bool
CudaGrayscaleErodeImageFilter<TInputImage, TOutputImage, TKernel>::IsFlatBox(const KernelType & kernel)
{
  if constexpr (std::is_same<TKernel, FlatStructuringElement<ImageDimension>>::value)
  {
    if (!kernel.GetDecomposable())
    {
      return false;
    }
    for (auto it = kernel.Begin(); it != kernel.End(); ++it)
    {
      if (!*it)
      {
        return false;
      }
    }
    const auto   radius = kernel.GetRadius();
    const auto & lines = kernel.GetLines();
    unsigned int expected = 0;
    bool         seen[ImageDimension] = {};
    for (unsigned int a = 0; a < ImageDimension; ++a)
    {
      expected += radius[a] != 0 ? 1 : 0;
    }
    if (lines.size() != expected)
    {
      return false;
    }
    for (const auto & line : lines)
    {
      int axis = -1;
      for (unsigned int a = 0; a < ImageDimension; ++a)
      {
        if (line[a] != 0)
        {
          if (axis >= 0)
          {
            return false; // not axis-aligned
          }
          axis = static_cast<int>(a);
        }
      }
      if (axis < 0 || seen[axis] || radius[axis] == 0 ||
          std::fabs(static_cast<double>(line[axis])) != 2.0 * static_cast<double>(radius[axis]) + 1.0)
      {
        return false;
      }
      seen[axis] = true;
    }
    return true;
  }
  else
  {
    (void)kernel;
    return false;
  }
}

template <typename TInputImage, typename TOutputImage, typename TKernel>
std::string
CudaGrayscaleErodeImageFilter<TInputImage, TOutputImage, TKernel>::GetBoxUnsupportedReason() const
{
  using Algorithm = typename Superclass::AlgorithmEnum;
  if (ImageDimension > 3)
  {
    return "the box passes handle 1 to 3 dimensions";
  }
  if (!std::is_same<InputPixelType, OutputPixelType>::value || !CudaBoxFilterDetail::IsCorePixel<InputPixelType>)
  {
    return std::string("the box passes erode unsigned char, short, unsigned short or float pixels into the same "
                       "type (here ") +
           CudaPixelTypeName<InputPixelType>() + " to " + CudaPixelTypeName<OutputPixelType>() + ")";
  }
  if (!IsFlatBox(this->GetKernel()))
  {
    return "the structuring element is not a flat box (FlatStructuringElement::Box)";
  }
  const Algorithm algorithm = this->GetAlgorithm();
  if (algorithm != Algorithm::ANCHOR && algorithm != Algorithm::BASIC && algorithm != Algorithm::VHGW)
  {
    return "the histogram algorithm was chosen (the box passes replicate the anchor, basic and van Herk-Gil-Werman "
           "algorithms)";
  }
  if (!CudaBoxFilterDetail::RadiusFitsCore<ImageDimension>(this->GetKernel().GetRadius()))
  {
    return "the radius is too large for the box passes";
  }
  return {};
}

template <typename TInputImage, typename TOutputImage, typename TKernel>
std::string
CudaGrayscaleErodeImageFilter<TInputImage, TOutputImage, TKernel>::GetGPUUnsupportedReason() const
{
  const std::string why = this->GetBoxUnsupportedReason();
  if (!why.empty())
  {
    return why;
  }
  return CudaBoxFilterDetail::GPUProblem<ImageDimension>(this->GetKernel().GetRadius());
}

template <typename TInputImage, typename TOutputImage, typename TKernel>
void
CudaGrayscaleErodeImageFilter<TInputImage, TOutputImage, TKernel>::GenerateData()
{
  this->CheckInputNotEmpty(this->GetInput());
  this->RunOnGPUOrCPU(
    this->GetGPUUnsupportedReason(),
    [this] { this->GPUGenerateData(); },
    [this] { this->CPUGenerateData(); },
    [this](CudaExecutionReport & report)
    {
      if (report.Device == CudaExecutedOn::CPU)
      {
        const std::string box = this->GetBoxUnsupportedReason();
        report.AddNote(box.empty() ? std::string("the module's box passes") : "ITK's implementation, because " + box);
      }
    });
}

template <typename TInputImage, typename TOutputImage, typename TKernel>
void
CudaGrayscaleErodeImageFilter<TInputImage, TOutputImage, TKernel>::GPUGenerateData()
{
  if constexpr (std::is_same<InputPixelType, OutputPixelType>::value &&
                CudaBoxFilterDetail::IsCorePixel<InputPixelType> && ImageDimension <= 3)
  {
    this->AllocateOutputs();
    const cif::BoxGeometry g = CudaBoxFilterDetail::MakeBoxGeometry(this, this->GetKernel().GetRadius());
    this->CheckCoreJob(cif::ValidateBoxJob(g));
    // the separable passes' two temporaries are the work
    const auto boundary = static_cast<InputPixelType>(this->GetBoundary());
    this->SetLastSlabs(CudaRunNeighbourhoodJob(
      this->GetInput(),
      this->GetOutput(),
      g,
      { g.radius[0], g.radius[1], g.radius[2] },
      false,
      2 * sizeof(InputPixelType),
      [&](const InputPixelType * in, OutputPixelType * out, const cif::BoxGeometry & job)
      { cif::BoxMinCUDA(in, out, job, boundary); },
      [this](double f) { this->UpdateProgress(static_cast<float>(f)); }));
  }
  else
  {
    itkExceptionMacro(<< "GPU path called for an unsupported request");
  }
}

template <typename TInputImage, typename TOutputImage, typename TKernel>
void
CudaGrayscaleErodeImageFilter<TInputImage, TOutputImage, TKernel>::CPUGenerateData()
{
  if constexpr (std::is_same<InputPixelType, OutputPixelType>::value &&
                CudaBoxFilterDetail::IsCorePixel<InputPixelType> && ImageDimension <= 3)
  {
    if (this->GetBoxUnsupportedReason().empty())
    {
      this->AllocateOutputs();
      const cif::BoxGeometry g = CudaBoxFilterDetail::MakeBoxGeometry(this, this->GetKernel().GetRadius());
      this->CheckCoreJob(cif::ValidateBoxJob(g));
      const int threads = static_cast<int>(this->GetMultiThreader()->GetMaximumNumberOfThreads());
      cif::BoxMinCPU(this->GetInput()->GetBufferPointer(),
                     this->GetOutput()->GetBufferPointer(),
                     g,
                     static_cast<InputPixelType>(this->GetBoundary()),
                     threads);
      return;
    }
  }
  Superclass::GenerateData(); // other kernels, algorithms or pixel types: ITK's implementation
}

template <typename TInputImage, typename TOutputImage, typename TKernel>
void
CudaGrayscaleErodeImageFilter<TInputImage, TOutputImage, TKernel>::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  this->PrintExecution(os, indent);
}

} // namespace itk

#endif
