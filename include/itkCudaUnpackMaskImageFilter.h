/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaUnpackMaskImageFilter_h
#define itkCudaUnpackMaskImageFilter_h

#include "itkCudaExecution.h"
#include "itkCudaPackedMask.h"
#include "itkImageToImageFilter.h"
#include "itkNumericTraits.h"
#include <ostream>

namespace itk
{

/** \class CudaUnpackMaskImageFilter
 * \brief Unpacks a CudaPackedMask into a label image, on the GPU (CUDA) or
 * the CPU.
 *
 * out = bit ? inside : outside for every voxel of the mask region. The
 * defaults are those of itk::BinaryThresholdImageFilter (inside =
 * NumericTraits<OutputPixelType>::max(), outside = 0), so that unpacking
 * the output of CudaThresholdToPackedMaskImageFilter reproduces
 * itk::BinaryThresholdImageFilter's output with the same settings. The
 * output has the mask's true grid: region (start index and size), spacing,
 * origin and direction. Exact (no arithmetic), the same on both devices.
 * The filter processes the whole mask (no streaming).
 *
 * Where it runs (SetExecutionMode): automatic (default), GPU only or CPU
 * only; GetLastExecutionReport() says where and why. Output pixels:
 * unsigned char, short, unsigned short or float; 1 to 3 dimensions. A mask
 * on the device is read there (no transfer); with a CudaFilterImage output the
 * result stays on the device.
 *
 * \ingroup CudaImageFilters
 */
template <typename TOutputImage>
class ITK_TEMPLATE_EXPORT CudaUnpackMaskImageFilter
  : public ImageToImageFilter<CudaPackedMask<TOutputImage::ImageDimension>, TOutputImage>
  , public CudaExecutionControl
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaUnpackMaskImageFilter);

  static constexpr unsigned int ImageDimension = TOutputImage::ImageDimension;
  using MaskType = CudaPackedMask<ImageDimension>;
  using Self = CudaUnpackMaskImageFilter;
  using Superclass = ImageToImageFilter<MaskType, TOutputImage>;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  itkNewMacro(Self);
  itkTypeMacro(CudaUnpackMaskImageFilter, ImageToImageFilter);

  using OutputImageType = TOutputImage;
  using OutputPixelType = typename TOutputImage::PixelType;

  itkSetMacro(InsideValue, OutputPixelType);
  itkGetConstMacro(InsideValue, OutputPixelType);
  itkSetMacro(OutsideValue, OutputPixelType);
  itkGetConstMacro(OutsideValue, OutputPixelType);

  std::string
  GetGPUUnsupportedReason() const;

protected:
  CudaUnpackMaskImageFilter() = default;
  ~CudaUnpackMaskImageFilter() override = default;

  void
  PrintSelf(std::ostream & os, Indent indent) const override;
  void
  GenerateOutputInformation() override;
  void
  GenerateInputRequestedRegion() override;
  void
  EnlargeOutputRequestedRegion(DataObject * output) override;
  void
  GenerateData() override;

private:
  OutputPixelType m_InsideValue{ NumericTraits<OutputPixelType>::max() };
  OutputPixelType m_OutsideValue{ NumericTraits<OutputPixelType>::ZeroValue() };
};

} // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#  include "itkCudaUnpackMaskImageFilter.hxx"
#endif

#endif
