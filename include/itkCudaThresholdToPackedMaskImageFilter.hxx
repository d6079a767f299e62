/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaThresholdToPackedMaskImageFilter_hxx
#define itkCudaThresholdToPackedMaskImageFilter_hxx

#include "itkCudaThresholdToPackedMaskImageFilter.h"
#include "itkCudaMaskFilterDetail.h"
#include "itkMultiThreaderBase.h"

namespace itk
{

template <typename TInputImage>
std::string
CudaThresholdToPackedMaskImageFilter<TInputImage>::GetGPUUnsupportedReason() const
{
  return CudaMaskFilterDetail::GPUUnsupportedReason();
}

template <typename TInputImage>
void
CudaThresholdToPackedMaskImageFilter<TInputImage>::GenerateInputRequestedRegion()
{
  CudaMaskFilterDetail::RequestWholeInputs(*this); // the mask covers the whole grid
}

template <typename TInputImage>
void
CudaThresholdToPackedMaskImageFilter<TInputImage>::EnlargeOutputRequestedRegion(DataObject * output)
{
  Superclass::EnlargeOutputRequestedRegion(output);
  output->SetRequestedRegionToLargestPossibleRegion();
}

template <typename TInputImage>
void
CudaThresholdToPackedMaskImageFilter<TInputImage>::GenerateData()
{
  static_assert(CudaMaskFilterDetail::IsCorePixel<InputPixelType>,
                "CudaThresholdToPackedMaskImageFilter handles unsigned char, short, unsigned short and float pixels");
  static_assert(ImageDimension >= 1 && ImageDimension <= 3,
                "CudaThresholdToPackedMaskImageFilter handles 1 to 3 dimensions");
  const TInputImage * input = this->GetInput();
  this->CheckInputNotEmpty(input);
  if (input->GetBufferedRegion() != input->GetLargestPossibleRegion())
  {
    itkExceptionMacro(<< "The input's buffered region " << input->GetBufferedRegion()
                      << " is not its largest possible region " << input->GetLargestPossibleRegion()
                      << ": the mask covers the whole grid");
  }
  // the description's one check (cif/PackedMask.h): lower <= upper, as ITK checks
  const CudaMaskFilterDetail::MaskOperationRun run(
    "threshold_to_packed_mask",
    cif::PixelTypeOf<InputPixelType>(),
    CudaMaskFilterDetail::ExtentOf<ImageDimension>(input->GetBufferedRegion()),
    { static_cast<double>(m_LowerThreshold), static_cast<double>(m_UpperThreshold) },
    this->GetOutput(),
    input);
  this->AllocateOutputs();
  const MaskType * mask = this->GetOutput();
  if (mask->GetMaskRegion() != input->GetLargestPossibleRegion() ||
      mask->GetBufferedRegion() != MaskType::WordRegionOf(mask->GetMaskRegion()))
  {
    itkExceptionMacro(<< "Internal error: the mask's regions do not match the input's grid");
  }
  // an input larger than the device streams through it in slabs; the words
  // (1 bit per voxel) are written through the mask's host buffer
  this->RunOnGPUOrCPU(
    this->GetGPUUnsupportedReason(),
    [&] { this->SetLastSlabs(run.OnGPU()); },
    [&] { run.OnCPU(static_cast<int>(this->GetMultiThreader()->GetMaximumNumberOfThreads())); });
}

template <typename TInputImage>
void
CudaThresholdToPackedMaskImageFilter<TInputImage>::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "LowerThreshold: " << static_cast<typename NumericTraits<InputPixelType>::PrintType>(m_LowerThreshold)
     << '\n';
  os << indent << "UpperThreshold: " << static_cast<typename NumericTraits<InputPixelType>::PrintType>(m_UpperThreshold)
     << '\n';
  this->PrintExecution(os, indent);
}

} // namespace itk

#endif
