/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaApplyPackedMaskImageFilter_hxx
#define itkCudaApplyPackedMaskImageFilter_hxx

#include "itkCudaApplyPackedMaskImageFilter.h"
#include "itkCudaMaskFilterDetail.h"
#include "itkMultiThreaderBase.h"

namespace itk
{

template <typename TImage>
CudaApplyPackedMaskImageFilter<TImage>::CudaApplyPackedMaskImageFilter()
{
  this->AddRequiredInputName("MaskImage", 1);
}

template <typename TImage>
void
CudaApplyPackedMaskImageFilter<TImage>::SetMaskImage(const MaskType * mask)
{
  this->ProcessObject::SetInput("MaskImage", const_cast<MaskType *>(mask));
}

template <typename TImage>
auto
CudaApplyPackedMaskImageFilter<TImage>::GetMaskImage() const -> const MaskType *
{
  return dynamic_cast<const MaskType *>(this->ProcessObject::GetInput("MaskImage"));
}

template <typename TImage>
std::string
CudaApplyPackedMaskImageFilter<TImage>::GetGPUUnsupportedReason() const
{
  return CudaMaskFilterDetail::GPUUnsupportedReason();
}

template <typename TImage>
void
CudaApplyPackedMaskImageFilter<TImage>::VerifyInputInformation() ITKv5_CONST
{
  Superclass::VerifyInputInformation(); // spacing, origin and direction within ITK's tolerances
  const TImage *   image = this->GetInput();
  const MaskType * mask = this->GetMaskImage();
  if (mask == nullptr)
  {
    itkExceptionMacro(<< "The mask input is not a CudaPackedMask of dimension " << ImageDimension);
  }
  if (mask->GetMaskRegion() != image->GetLargestPossibleRegion())
  {
    itkExceptionMacro(<< "The packed mask does not describe the image's grid: the mask covers "
                      << mask->GetMaskRegion().GetSize() << " voxels from index " << mask->GetMaskRegion().GetIndex()
                      << ", the image " << image->GetLargestPossibleRegion().GetSize() << " pixels from index "
                      << image->GetLargestPossibleRegion().GetIndex());
  }
}

template <typename TImage>
void
CudaApplyPackedMaskImageFilter<TImage>::GenerateInputRequestedRegion()
{
  CudaMaskFilterDetail::RequestWholeInputs(*this); // the whole image and the whole mask
}

template <typename TImage>
void
CudaApplyPackedMaskImageFilter<TImage>::EnlargeOutputRequestedRegion(DataObject * output)
{
  Superclass::EnlargeOutputRequestedRegion(output);
  output->SetRequestedRegionToLargestPossibleRegion();
}

template <typename TImage>
void
CudaApplyPackedMaskImageFilter<TImage>::GenerateData()
{
  static_assert(CudaMaskFilterDetail::IsCorePixel<PixelType>,
                "CudaApplyPackedMaskImageFilter handles unsigned char, short, unsigned short and float pixels");
  static_assert(ImageDimension >= 1 && ImageDimension <= 3, "CudaApplyPackedMaskImageFilter handles 1 to 3 dimensions");
  const TImage *   image = this->GetInput();
  const MaskType * mask = this->GetMaskImage();
  this->CheckInputNotEmpty(image);
  if (image->GetBufferedRegion() != image->GetLargestPossibleRegion())
  {
    itkExceptionMacro(<< "The input's buffered region " << image->GetBufferedRegion()
                      << " is not its largest possible region " << image->GetLargestPossibleRegion());
  }
  if (mask->GetBufferedRegion() != MaskType::WordRegionOf(mask->GetMaskRegion()))
  {
    itkExceptionMacro(<< "The mask's words (buffered region " << mask->GetBufferedRegion()
                      << ") do not cover its voxel region " << mask->GetMaskRegion());
  }
  const CudaMaskFilterDetail::MaskOperationRun run(
    "apply_packed_mask",
    cif::PixelTypeOf<PixelType>(),
    CudaMaskFilterDetail::ExtentOf<ImageDimension>(image->GetBufferedRegion()),
    { static_cast<double>(m_OutsideValue) },
    this->GetOutput(),
    image,
    mask);
  this->AllocateOutputs();
  // images larger than the device stream through it in slabs, with the
  // words from the mask's host buffer
  this->RunOnGPUOrCPU(
    this->GetGPUUnsupportedReason(),
    [&] { this->SetLastSlabs(run.OnGPU()); },
    [&] { run.OnCPU(static_cast<int>(this->GetMultiThreader()->GetMaximumNumberOfThreads())); });
}

template <typename TImage>
void
CudaApplyPackedMaskImageFilter<TImage>::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "OutsideValue: " << static_cast<typename NumericTraits<PixelType>::PrintType>(m_OutsideValue) << '\n';
  this->PrintExecution(os, indent);
}

} // namespace itk

#endif
