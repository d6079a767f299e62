/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaThresholdToPackedMaskImageFilter_hxx
#define itkCudaThresholdToPackedMaskImageFilter_hxx

#include "itkCudaThresholdToPackedMaskImageFilter.h"
#include "itkCudaSlabs.h"
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
  if (m_LowerThreshold > m_UpperThreshold) // as itk::BinaryThresholdImageFilter (false for NaN)
  {
    itkExceptionMacro(<< "Lower threshold cannot be greater than upper threshold.");
  }
  this->AllocateOutputs();
  MaskType * mask = this->GetOutput();
  if (mask->GetMaskRegion() != input->GetLargestPossibleRegion() ||
      mask->GetBufferedRegion() != MaskType::WordRegionOf(mask->GetMaskRegion()))
  {
    itkExceptionMacro(<< "Internal error: the mask's regions do not match the input's grid");
  }
  const cif::MaskExtent extent = CudaMaskFilterDetail::ExtentOf<ImageDimension>(input->GetBufferedRegion());
  const InputPixelType  lower = m_LowerThreshold, upper = m_UpperThreshold;
  this->RunOnGPUOrCPU(
    this->GetGPUUnsupportedReason(),
    [&]
    {
      // an input larger than the device streams through it in slabs; the
      // words (1 bit per voxel) are written through the mask's host buffer
      this->SetLastSlabs(cif::RunMaskJobCUDA(
        CudaIsHostImage(input),
        extent,
        { sizeof(InputPixelType) },
        0,
        [&]() -> std::vector<const void *> { return { input->GetBufferPointer() }; },
        [&]() -> void * { return mask->GetBufferPointer(); },
        [&](const void * const * in, void * out, const cif::MaskExtent & slabExtent)
        {
          cif::ThresholdPackCUDA(
            static_cast<const InputPixelType *>(in[0]), static_cast<std::uint32_t *>(out), slabExtent, lower, upper);
        },
        [&]
        {
          CudaInputBuffer<TInputImage> in(input);
          CudaOutputBuffer<MaskType>   out(mask);
          cif::ThresholdPackCUDA(in.Get(), out.Get(), extent, lower, upper);
          out.Commit();
        }));
    },
    [&]
    {
      cif::ThresholdPackCPU(input->GetBufferPointer(),
                            mask->GetBufferPointer(),
                            extent,
                            lower,
                            upper,
                            static_cast<int>(this->GetMultiThreader()->GetMaximumNumberOfThreads()));
    });
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
