/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaApplyPackedMaskImageFilter_h
#define itkCudaApplyPackedMaskImageFilter_h

#include "itkCudaExecution.h"
#include "itkCudaPackedMask.h"
#include "itkImageToImageFilter.h"
#include "itkNumericTraits.h"
#include <ostream>

namespace itk
{

/** \class CudaApplyPackedMaskImageFilter
 * \brief Masks an image with a CudaPackedMask, on the GPU (CUDA) or the
 * CPU: out = bit ? in : OutsideValue.
 *
 * The packed counterpart of itk::MaskImageFilter with a binary mask: the
 * voxels whose bit is set keep their value, the others get OutsideValue
 * (default 0). Exact, the same on both devices. The output has the input
 * image's grid.
 *
 * Inputs: the image (SetInput) and the mask (SetMaskImage, required). The
 * mask must describe the image's grid: its mask region (start index and
 * size) must equal the image's largest possible region, and its spacing,
 * origin and direction must match within ITK's usual tolerances (the
 * check of itk::ImageToImageFilter); otherwise the update throws an
 * itk::ExceptionObject that gives both grids. The filter processes the
 * whole image (no streaming).
 *
 * Where it runs (SetExecutionMode): automatic (default), GPU only or CPU
 * only; GetLastExecutionReport() says where and why. Pixels: unsigned char,
 * short, unsigned short or float; 1 to 3 dimensions. Device-resident
 * inputs (CudaFilterImage, CudaPackedMask) are read in place; a CudaFilterImage output
 * stays on the device.
 *
 * \ingroup CudaImageFilters
 */
template <typename TImage>
class ITK_TEMPLATE_EXPORT CudaApplyPackedMaskImageFilter
  : public ImageToImageFilter<TImage, TImage>
  , public CudaExecutionControl
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaApplyPackedMaskImageFilter);

  static constexpr unsigned int ImageDimension = TImage::ImageDimension;
  using MaskType = CudaPackedMask<ImageDimension>;
  using Self = CudaApplyPackedMaskImageFilter;
  using Superclass = ImageToImageFilter<TImage, TImage>;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  itkNewMacro(Self);
  itkTypeMacro(CudaApplyPackedMaskImageFilter, ImageToImageFilter);

  using ImageType = TImage;
  using PixelType = typename TImage::PixelType;

  /** The packed mask (required). */
  void
  SetMaskImage(const MaskType * mask);
  const MaskType *
  GetMaskImage() const;

  itkSetMacro(OutsideValue, PixelType);
  itkGetConstMacro(OutsideValue, PixelType);

  std::string
  GetGPUUnsupportedReason() const;

protected:
  CudaApplyPackedMaskImageFilter();
  ~CudaApplyPackedMaskImageFilter() override = default;

  void
  PrintSelf(std::ostream & os, Indent indent) const override;
  /** ITK's physical-space check, then: the mask's voxel region must be the image's grid. */
  void
  VerifyInputInformation() ITKv5_CONST override;
  void
  GenerateInputRequestedRegion() override;
  void
  EnlargeOutputRequestedRegion(DataObject * output) override;
  void
  GenerateData() override;

private:
  PixelType m_OutsideValue{ NumericTraits<PixelType>::ZeroValue() };
};

} // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#  include "itkCudaApplyPackedMaskImageFilter.hxx"
#endif

#endif
