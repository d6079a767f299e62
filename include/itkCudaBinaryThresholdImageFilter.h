/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaBinaryThresholdImageFilter_h
#define itkCudaBinaryThresholdImageFilter_h

#include "itkBinaryThresholdImageFilter.h"
#include "itkCudaExecution.h"
#include "itkCudaFilterImage.h"
#include <ostream>

namespace itk
{

/** \class CudaBinaryThresholdImageFilter
 * \brief Binary thresholding, on the GPU (CUDA) or the CPU: a drop-in for
 * itk::BinaryThresholdImageFilter with the same output, bit for bit.
 *
 * out = (lower <= in && in <= upper) ? inside : outside, both thresholds
 * inclusive and compared in the input pixel type, exactly as ITK. The API
 * and the defaults are ITK's, since this class only replaces how the
 * output is computed: lower = NumericTraits<InputPixelType>::NonpositiveMin()
 * and upper = NumericTraits<InputPixelType>::max() until set (so with only
 * one threshold set the other stays at its default; for float input the
 * defaults are -FLT_MAX and FLT_MAX, so -Inf and +Inf are outside), inside
 * = NumericTraits<OutputPixelType>::max(), outside = 0; thresholds may also
 * come from decorated inputs (SetLowerThresholdInput). Lower > upper throws
 * ITK's exception at update. NaN pixels are outside (every comparison with
 * NaN is false); a NaN threshold makes every pixel outside, again as ITK.
 * In-place operation (InPlaceImageFilter, on by default when the pixel
 * types match) works on both devices.
 *
 * Where it runs (SetExecutionMode): automatic (default), GPU only or CPU
 * only; GetLastExecutionReport() says where the last update ran and why.
 * The GPU and the module's CPU core handle 1 to 3 dimensions with input and
 * output pixels each among unsigned char, short, unsigned short and float;
 * other requests run ITK's own implementation on the CPU. With CudaFilterImage
 * input and output the data stays on the device between GPU filters.
 *
 * \ingroup CudaImageFilters
 */
template <typename TInputImage, typename TOutputImage>
class ITK_TEMPLATE_EXPORT CudaBinaryThresholdImageFilter
  : public BinaryThresholdImageFilter<TInputImage, TOutputImage>
  , public CudaExecutionControl
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaBinaryThresholdImageFilter);

  using Self = CudaBinaryThresholdImageFilter;
  using Superclass = BinaryThresholdImageFilter<TInputImage, TOutputImage>;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  itkNewMacro(Self);
  itkTypeMacro(CudaBinaryThresholdImageFilter, BinaryThresholdImageFilter);

  static constexpr unsigned int ImageDimension = TInputImage::ImageDimension;
  using InputPixelType = typename TInputImage::PixelType;
  using OutputPixelType = typename TOutputImage::PixelType;

  /** Why the GPU cannot run the current request (empty if it can). */
  std::string
  GetGPUUnsupportedReason() const;

protected:
  CudaBinaryThresholdImageFilter() = default;
  ~CudaBinaryThresholdImageFilter() override = default;

  void
  PrintSelf(std::ostream & os, Indent indent) const override;
  void
  GenerateData() override;
  void
  GPUGenerateData();
  void
  CPUGenerateData();

private:
};

} // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#  include "itkCudaBinaryThresholdImageFilter.hxx"
#endif

#endif
