/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaBinaryThresholdImageFilter_h
#define itkCudaBinaryThresholdImageFilter_h

#include "itkBinaryThresholdImageFilter.h"
#include "itkCudaDescribedImageFilter.h"
#include "itkCudaFilterImage.h"

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
 * The settings are checked by the core's description ("threshold",
 * cif/Filter.h), as the Python function and the command line check them.
 *
 * Where it runs (SetExecutionMode): automatic (default), GPU only or CPU
 * only; GetLastExecutionReport() says where the last update ran and why.
 * The GPU and the module's CPU core handle 1 to 3 dimensions with input and
 * output pixels each among unsigned char, short, unsigned short and float;
 * other requests run ITK's own implementation on the CPU. Host images too
 * large for the device run in slabs. With CudaFilterImage input and output
 * the data stays on the device between GPU filters.
 *
 * \ingroup CudaImageFilters
 */
template <typename TInputImage, typename TOutputImage>
class ITK_TEMPLATE_EXPORT CudaBinaryThresholdImageFilter
  : public CudaDescribedImageFilter<CudaBinaryThresholdImageFilter<TInputImage, TOutputImage>,
                                    BinaryThresholdImageFilter<TInputImage, TOutputImage>>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaBinaryThresholdImageFilter);

  using Self = CudaBinaryThresholdImageFilter;
  using Superclass = CudaDescribedImageFilter<Self, BinaryThresholdImageFilter<TInputImage, TOutputImage>>;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  itkNewMacro(Self);
  itkTypeMacro(CudaBinaryThresholdImageFilter, BinaryThresholdImageFilter);

  /** The core's description of the filter (cif/Filter.h). */
  static const cif::FilterDescriptor &
  Description()
  {
    return cif::FindFilter("threshold");
  }
  /** The filter's settings as the description's parameters (the
   * thresholds as GetLowerThreshold() gives them: set, decorated or ITK's
   * defaults). */
  static cif::Parameters
  DescribedParameters(const Self * filter)
  {
    return { { "lower_threshold", { static_cast<double>(filter->GetLowerThreshold()) } },
             { "upper_threshold", { static_cast<double>(filter->GetUpperThreshold()) } },
             { "inside_value", { static_cast<double>(filter->GetInsideValue()) } },
             { "outside_value", { static_cast<double>(filter->GetOutsideValue()) } } };
  }

protected:
  CudaBinaryThresholdImageFilter() = default;
  ~CudaBinaryThresholdImageFilter() override = default;
};

} // namespace itk

#endif
