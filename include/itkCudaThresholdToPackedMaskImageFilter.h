/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaThresholdToPackedMaskImageFilter_h
#define itkCudaThresholdToPackedMaskImageFilter_h

#include "itkCudaExecution.h"
#include "itkCudaPackedMask.h"
#include "itkImageToImageFilter.h"
#include "itkNumericTraits.h"
#include <ostream>

namespace itk
{

/** \class CudaThresholdToPackedMaskImageFilter
 * \brief Thresholds an image straight into a bit-packed mask (one bit per
 * voxel), on the GPU (CUDA) or the CPU.
 *
 * Bit of voxel v = (lower <= v && v <= upper): the rule, the defaults and
 * the checks of itk::BinaryThresholdImageFilter, so that unpacking the mask
 * with inside/outside values gives that filter's output exactly. Lower
 * defaults to NumericTraits<InputPixelType>::NonpositiveMin(), upper to
 * NumericTraits<InputPixelType>::max() (for float -FLT_MAX and FLT_MAX: -Inf
 * and +Inf are outside); lower > upper throws at update; NaN voxels are
 * outside, and a NaN threshold makes every voxel outside.
 *
 * The output is a CudaPackedMask of the input's whole grid (size, start
 * index, spacing, origin and direction; see that class for the layout).
 * On the GPU one fused kernel reads the image once and writes the packed
 * words (each warp ballots 32 x-neighbours into one word); with a CudaFilterImage
 * input already on the device nothing is uploaded, and the words stay on
 * the device until host code reads them, which then moves only the packed
 * bytes (1/8 of a uint8 mask). The filter processes the whole image (no
 * streaming).
 *
 * Where it runs (SetExecutionMode): automatic (default), GPU only or CPU
 * only (the module's multi-threaded core); GetLastExecutionReport() says
 * where the last update ran and why. Input pixels: unsigned char, short,
 * unsigned short or float; 1 to 3 dimensions. Results are identical on the
 * two devices.
 *
 * \ingroup CudaImageFilters
 */
template <typename TInputImage>
class ITK_TEMPLATE_EXPORT CudaThresholdToPackedMaskImageFilter
  : public ImageToImageFilter<TInputImage, CudaPackedMask<TInputImage::ImageDimension>>
  , public CudaExecutionControl
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaThresholdToPackedMaskImageFilter);

  static constexpr unsigned int ImageDimension = TInputImage::ImageDimension;
  using MaskType = CudaPackedMask<ImageDimension>;
  using Self = CudaThresholdToPackedMaskImageFilter;
  using Superclass = ImageToImageFilter<TInputImage, MaskType>;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  itkNewMacro(Self);
  itkTypeMacro(CudaThresholdToPackedMaskImageFilter, ImageToImageFilter);

  using InputImageType = TInputImage;
  using InputPixelType = typename TInputImage::PixelType;

  itkSetMacro(LowerThreshold, InputPixelType);
  itkGetConstMacro(LowerThreshold, InputPixelType);
  itkSetMacro(UpperThreshold, InputPixelType);
  itkGetConstMacro(UpperThreshold, InputPixelType);

  /** Why the GPU cannot run the current request (empty if it can). */
  std::string
  GetGPUUnsupportedReason() const;

protected:
  CudaThresholdToPackedMaskImageFilter() = default;
  ~CudaThresholdToPackedMaskImageFilter() override = default;

  void
  PrintSelf(std::ostream & os, Indent indent) const override;
  void
  GenerateInputRequestedRegion() override;
  void
  EnlargeOutputRequestedRegion(DataObject * output) override;
  void
  GenerateData() override;

private:
  InputPixelType m_LowerThreshold{ NumericTraits<InputPixelType>::NonpositiveMin() };
  InputPixelType m_UpperThreshold{ NumericTraits<InputPixelType>::max() };
};

} // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#  include "itkCudaThresholdToPackedMaskImageFilter.hxx"
#endif

#endif
