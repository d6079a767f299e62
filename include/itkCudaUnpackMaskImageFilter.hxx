/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaUnpackMaskImageFilter_hxx
#define itkCudaUnpackMaskImageFilter_hxx

#include "itkCudaUnpackMaskImageFilter.h"
#include "itkCudaMaskFilterDetail.h"
#include "itkMultiThreaderBase.h"

namespace itk
{

template <typename TOutputImage>
std::string
CudaUnpackMaskImageFilter<TOutputImage>::GetGPUUnsupportedReason() const
{
  return CudaMaskFilterDetail::GPUUnsupportedReason();
}

template <typename TOutputImage>
void
CudaUnpackMaskImageFilter<TOutputImage>::GenerateOutputInformation()
{
  Superclass::GenerateOutputInformation(); // spacing, origin, direction of the mask
  const MaskType * mask = this->GetInput();
  if (mask != nullptr)
  {
    this->GetOutput()->SetLargestPossibleRegion(mask->GetMaskRegion()); // the voxel grid, not the word grid
  }
}

template <typename TOutputImage>
void
CudaUnpackMaskImageFilter<TOutputImage>::GenerateInputRequestedRegion()
{
  CudaMaskFilterDetail::RequestWholeInputs(*this);
}

template <typename TOutputImage>
void
CudaUnpackMaskImageFilter<TOutputImage>::EnlargeOutputRequestedRegion(DataObject * output)
{
  Superclass::EnlargeOutputRequestedRegion(output);
  output->SetRequestedRegionToLargestPossibleRegion();
}

template <typename TOutputImage>
void
CudaUnpackMaskImageFilter<TOutputImage>::GenerateData()
{
  static_assert(CudaMaskFilterDetail::IsCorePixel<OutputPixelType>,
                "CudaUnpackMaskImageFilter handles unsigned char, short, unsigned short and float pixels");
  static_assert(ImageDimension >= 1 && ImageDimension <= 3, "CudaUnpackMaskImageFilter handles 1 to 3 dimensions");
  const MaskType * mask = this->GetInput();
  if (mask->GetMaskRegion().GetNumberOfPixels() == 0)
  {
    itkExceptionMacro(<< "The mask is empty (mask region size " << mask->GetMaskRegion().GetSize() << ")");
  }
  if (mask->GetBufferedRegion() != MaskType::WordRegionOf(mask->GetMaskRegion()))
  {
    itkExceptionMacro(<< "The mask's words (buffered region " << mask->GetBufferedRegion()
                      << ") do not cover its voxel region " << mask->GetMaskRegion());
  }
  this->AllocateOutputs();
  TOutputImage * output = this->GetOutput();
  if (output->GetBufferedRegion() != mask->GetMaskRegion())
  {
    itkExceptionMacro(<< "Internal error: the output region does not match the mask region");
  }
  const CudaMaskFilterDetail::MaskOperationRun run(
    "unpack_mask",
    cif::PixelTypeOf<OutputPixelType>(),
    CudaMaskFilterDetail::ExtentOf<ImageDimension>(mask->GetMaskRegion()),
    { static_cast<double>(m_InsideValue), static_cast<double>(m_OutsideValue) },
    output,
    mask);
  // an output larger than the device streams through it in slabs, reading
  // the words from the mask's host buffer
  this->RunOnGPUOrCPU(
    this->GetGPUUnsupportedReason(),
    [&] { this->SetLastSlabs(run.OnGPU()); },
    [&] { run.OnCPU(static_cast<int>(this->GetMultiThreader()->GetMaximumNumberOfThreads())); });
}

template <typename TOutputImage>
void
CudaUnpackMaskImageFilter<TOutputImage>::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "InsideValue: " << static_cast<typename NumericTraits<OutputPixelType>::PrintType>(m_InsideValue)
     << '\n';
  os << indent << "OutsideValue: " << static_cast<typename NumericTraits<OutputPixelType>::PrintType>(m_OutsideValue)
     << '\n';
  this->PrintExecution(os, indent);
}

} // namespace itk

#endif
