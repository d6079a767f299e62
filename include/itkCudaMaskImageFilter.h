/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaMaskImageFilter_h
#define itkCudaMaskImageFilter_h

#include "itkCudaDescribedImageFilter.h"
#include "itkCudaFilterImage.h"
#include "itkMaskImageFilter.h"

namespace itk
{

/** \class CudaMaskImageFilter
 * \brief Masking, on the GPU (CUDA) or the CPU: a drop-in for
 * itk::MaskImageFilter with the same output, bit for bit.
 *
 * out = (mask != MaskingValue) ? in : OutsideValue, pixel by pixel, the
 * mask compared in its own pixel type, exactly as ITK's functor
 * (Functor::MaskInput): a NaN mask pixel keeps the image's pixel, a NaN
 * masking value keeps every pixel, NaN image pixels pass through. The API
 * and the defaults are ITK's (SetMaskImage, SetOutsideValue and
 * SetMaskingValue, both 0 until set), and so are the output information,
 * the requested regions and the check of the inputs' grids (ITK's
 * VerifyInputInformation); this class only replaces how the output is
 * computed.
 *
 * The settings are checked by the core's description ("mask",
 * cif/Filter.h), as the Python function and the command line check them;
 * the mask is the description's companion image.
 *
 * Where it runs (SetExecutionMode): automatic (default), GPU only or CPU
 * only; GetLastExecutionReport() says where the last update ran and why.
 * The GPU and the module's CPU core take 1 to 3 dimensions, an image of
 * unsigned char, short, unsigned short, float or double pixels into the
 * same type, and a mask of any of those types, buffered over the image's
 * buffered region. Other requests run ITK's own implementation on the CPU,
 * and the report says why: other pixel types, an output type unlike the
 * input's, a constant in place of the mask (SetConstant2), a mask buffered
 * over more than the image. Host images too large for the device run in
 * slabs, the mask cut with the image. With CudaFilterImage inputs and
 * output the data stays on the device between GPU filters.
 *
 * \ingroup CudaImageFilters
 */
template <typename TInputImage, typename TMaskImage, typename TOutputImage = TInputImage>
class ITK_TEMPLATE_EXPORT CudaMaskImageFilter
  : public CudaDescribedImageFilter<CudaMaskImageFilter<TInputImage, TMaskImage, TOutputImage>,
                                    MaskImageFilter<TInputImage, TMaskImage, TOutputImage>>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaMaskImageFilter);

  using Self = CudaMaskImageFilter;
  using Superclass = CudaDescribedImageFilter<Self, MaskImageFilter<TInputImage, TMaskImage, TOutputImage>>;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  itkNewMacro(Self);
  itkTypeMacro(CudaMaskImageFilter, MaskImageFilter);

  /** The core's description of the filter (cif/Filter.h). */
  static const cif::FilterDescriptor &
  Description()
  {
    return cif::FindFilter("mask");
  }
  using MaskPixelType = typename TMaskImage::PixelType;

  /** Why the cores cannot take this class's image and mask pixel types and
   * dimension (empty if they can): what the object factory asks. */
  static std::string
  CoreTypesReason(const cif::FilterDescriptor & description)
  {
    const std::string images = Superclass::CoreTypesReason(description);
    if (!images.empty())
    {
      return images;
    }
    if (!CudaIsOneOf<MaskPixelType, unsigned char, short, unsigned short, float, double> ||
        !cif::HasPixel(description.companion.pixels, cif::PixelTypeOf<MaskPixelType>()))
    {
      return std::string("the module's cores take masks of unsigned char, short, unsigned short, float or double "
                         "pixels (here ") +
             CudaPixelTypeName<MaskPixelType>() + ")";
    }
    return {};
  }

  /** The filter's settings as the description's parameters. */
  static cif::Parameters
  DescribedParameters(const Self * filter)
  {
    return { { "outside_value", { static_cast<double>(filter->GetOutsideValue()) } },
             { "masking_value", { static_cast<double>(filter->GetMaskingValue()) } } };
  }

protected:
  CudaMaskImageFilter() = default;
  ~CudaMaskImageFilter() override = default;
};

} // namespace itk

#endif
