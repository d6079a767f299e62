/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaShrinkImageFilter_h
#define itkCudaShrinkImageFilter_h

#include "itkCudaDescribedImageFilter.h"
#include "itkCudaFilterImage.h"
#include "itkShrinkImageFilter.h"

namespace itk
{

/** \class CudaShrinkImageFilter
 * \brief Shrinks an image by an integer factor per axis, keeping every
 * f-th pixel, on the GPU (CUDA) or the CPU: a drop-in for
 * itk::ShrinkImageFilter, the filter ImageRegistrationMethodv4 shrinks its
 * virtual domain with at every level.
 *
 * Computed: ITK's output grid and regions (ShrinkImageFilter's own
 * GenerateOutputInformation and GenerateInputRequestedRegion: size
 * floor(n / f) per axis, at least 1; spacing times f; the output's centre
 * on the input's), each output pixel a copy of the input pixel at output
 * index times f plus ITK's offset (found as ITK finds it, through the
 * physical point of the output's first index). No arithmetic, so the
 * result is ITK's bit for bit on both devices; streaming included.
 *
 * GPU and module CPU core: uint8, int16, uint16, float and double pixels,
 * 1 to 3 dimensions, input and output of one type; other requests (vector
 * pixels, say) run ITK's own implementation (the execution report says
 * so). The GPU reads one input pixel per output pixel and writes each
 * output once.
 *
 * \ingroup CudaImageFilters
 */
template <typename TInputImage, typename TOutputImage = TInputImage>
class ITK_TEMPLATE_EXPORT CudaShrinkImageFilter
  : public CudaDescribedImageFilter<CudaShrinkImageFilter<TInputImage, TOutputImage>,
                                    ShrinkImageFilter<TInputImage, TOutputImage>>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaShrinkImageFilter);

  using Self = CudaShrinkImageFilter;
  using Superclass = CudaDescribedImageFilter<Self, ShrinkImageFilter<TInputImage, TOutputImage>>;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  itkNewMacro(Self);
  itkTypeMacro(CudaShrinkImageFilter, ShrinkImageFilter);

  /** The core's description of the filter (cif/Filter.h). */
  static const cif::FilterDescriptor &
  Description()
  {
    return cif::FindFilter("shrink");
  }
  /** The filter's settings as the description's parameters. */
  static cif::Parameters
  DescribedParameters(const Self * filter)
  {
    return { { "shrink_factors", CudaPerAxisValues<TInputImage::ImageDimension>(filter->GetShrinkFactors()) } };
  }

protected:
  CudaShrinkImageFilter() = default;
  ~CudaShrinkImageFilter() override = default;
};

} // namespace itk

#endif
