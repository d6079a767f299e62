/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaBinShrinkImageFilter_h
#define itkCudaBinShrinkImageFilter_h

#include "itkBinShrinkImageFilter.h"
#include "itkCudaDescribedImageFilter.h"
#include "itkCudaFilterImage.h"

namespace itk
{

/** \class CudaBinShrinkImageFilter
 * \brief Shrinks an image by an integer factor per axis, each output pixel
 * the average of its bin, on the GPU (CUDA) or the CPU: a drop-in for
 * itk::BinShrinkImageFilter.
 *
 * ITK's API and output grid (SetShrinkFactors, SetShrinkFactor; output
 * size floor(n / f) per axis, spacing times f, origin at the centre of the
 * first bin, start index ceil(start / f)), streaming included. The result
 * is ITK's bit for bit on both devices: each bin is summed in double in
 * raster order, multiplied by the reciprocal of its size and rounded half
 * up for integer pixels (cif/BinShrink.h). A shrink factor larger than the
 * image throws (ITK would read past its input).
 *
 * GPU and module CPU core: uint8, int16, uint16, float and double pixels,
 * 1 to 3 dimensions, input and output of one type; other requests run
 * ITK's own implementation (the execution report says so). The GPU reads
 * each input pixel once and writes each output once: memory-bound.
 *
 * \ingroup CudaImageFilters
 */
template <typename TInputImage, typename TOutputImage = TInputImage>
class ITK_TEMPLATE_EXPORT CudaBinShrinkImageFilter
  : public CudaDescribedImageFilter<CudaBinShrinkImageFilter<TInputImage, TOutputImage>,
                                    BinShrinkImageFilter<TInputImage, TOutputImage>>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaBinShrinkImageFilter);

  using Self = CudaBinShrinkImageFilter;
  using Superclass = CudaDescribedImageFilter<Self, BinShrinkImageFilter<TInputImage, TOutputImage>>;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  itkNewMacro(Self);
  itkTypeMacro(CudaBinShrinkImageFilter, BinShrinkImageFilter);

  /** The core's description of the filter (cif/Filter.h). */
  static const cif::FilterDescriptor &
  Description()
  {
    return cif::FindFilter("bin-shrink");
  }
  /** The filter's settings as the description's parameters. */
  static cif::Parameters
  DescribedParameters(const Self * filter)
  {
    return { { "shrink_factors", CudaPerAxisValues<TInputImage::ImageDimension>(filter->GetShrinkFactors()) } };
  }

protected:
  CudaBinShrinkImageFilter() = default;
  ~CudaBinShrinkImageFilter() override = default;
};

} // namespace itk

#endif
