/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaGrayscaleErodeImageFilter_h
#define itkCudaGrayscaleErodeImageFilter_h

#include "itkCudaDescribedImageFilter.h"
#include "itkCudaFilterImage.h"
#include "itkFlatStructuringElement.h"
#include "itkGrayscaleErodeImageFilter.h"

namespace itk
{

/** \class CudaGrayscaleErodeImageFilter
 * \brief Grey-scale erosion by a flat box, on the GPU (CUDA) or the CPU: a
 * drop-in for itk::GrayscaleErodeImageFilter with the same output.
 *
 * With the structuring element itk::FlatStructuringElement<D>::Box(radius)
 * (also what SetRadius makes), each output pixel is the minimum of the
 * input pixels in the (2 r + 1)^D box centred on it. Boundary, as ITK's
 * anchor and basic algorithms (the anchor one is ITK's choice for a box):
 * pixels outside the image do not take part, but when the box reaches past
 * the image on an axis whose radius is not 0, the boundary value
 * (SetBoundary; ITK's default, kept here, is the pixel type's maximum)
 * takes part too. So the default boundary changes nothing except for float
 * images whose in-image box holds only +Inf: the result is then the float
 * maximum, as in ITK.
 *
 * Exactness: the output equals ITK's exactly for finite data and infinities
 * (a minimum is order-independent); tested against ITK's anchor, basic and
 * van Herk-Gil-Werman algorithms and an independent brute-force minimum.
 * Two defects of ITK 5.2's anchor algorithm are not reproduced (there the
 * output is the box minimum, which ITK's basic algorithm also gives):
 * where the region one thread processes is one pixel thick along an axis
 * (an image axis of size 1, or thin slabs with many work units) ITK warns
 * "Line ... doesn't correspond to a face" and leaves pixels unwritten; and
 * for a radius r >= n + 2 on an axis of n pixels ITK returns the boundary
 * value (its short-line branch keeps the largest sample). NaN: ITK's
 * result depends on the order in which its algorithm compares samples (a
 * NaN compares false both ways); this filter ignores NaN samples (the
 * minimum of the other samples and the boundary; NaN only where every
 * sample of an interior box is NaN), the same on the CPU and the GPU, and
 * does not reproduce ITK there.
 *
 * Where it runs (SetExecutionMode): the module's box minima (GPU: one pass
 * through shared-memory tiles for boxes up to radius 16 along x and 8 along
 * y whose depth fits the shared memory, separable passes for larger ones;
 * CPU: separable passes, multi-threaded) serve flat
 * box kernels with the anchor, basic or van Herk-Gil-Werman algorithm, 1 to
 * 3 dimensions, input and output pixels of the same type among unsigned
 * char, short, unsigned short and float; the GPU takes radii up to 64 per
 * axis. Everything else (other kernels, the histogram algorithm, other
 * pixel types) runs ITK's own implementation on the CPU, and
 * GetLastExecutionReport() says why. A device out-of-memory falls back to
 * the CPU in automatic mode. With CudaFilterImage input and output the data
 * stays on the device between GPU filters.
 *
 * \ingroup CudaImageFilters
 */
template <typename TInputImage,
          typename TOutputImage = TInputImage,
          typename TKernel = FlatStructuringElement<TInputImage::ImageDimension>>
class ITK_TEMPLATE_EXPORT CudaGrayscaleErodeImageFilter
  : public CudaDescribedImageFilter<CudaGrayscaleErodeImageFilter<TInputImage, TOutputImage, TKernel>,
                                    GrayscaleErodeImageFilter<TInputImage, TOutputImage, TKernel>>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaGrayscaleErodeImageFilter);

  using Self = CudaGrayscaleErodeImageFilter;
  using Superclass = CudaDescribedImageFilter<Self, GrayscaleErodeImageFilter<TInputImage, TOutputImage, TKernel>>;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  itkNewMacro(Self);
  itkTypeMacro(CudaGrayscaleErodeImageFilter, GrayscaleErodeImageFilter);

  static constexpr unsigned int ImageDimension = TInputImage::ImageDimension;
  using KernelType = TKernel;
  using RadiusType = typename GrayscaleErodeImageFilter<TInputImage, TOutputImage, TKernel>::RadiusType;

  /** Why the module's box passes cannot serve the request (empty if they
   * can): kernel, algorithm, pixel types or dimension. */
  std::string
  GetBoxUnsupportedReason() const
  {
    return this->GetCoreUnsupportedReason();
  }

  /** True when `kernel` is FlatStructuringElement::Box(kernel.GetRadius()):
   * decomposable, every element set, one axis-aligned line of 2 r + 1
   * pixels per axis whose radius is not 0. */
  static bool
  IsFlatBox(const KernelType & kernel);

  /** The core's description of the filter (cif/Filter.h). */
  static const cif::FilterDescriptor &
  Description()
  {
    return cif::FindFilter("erode");
  }
  /** The filter's settings as the description's parameters. */
  static cif::Parameters
  DescribedParameters(const Self * filter)
  {
    return { { "radius", CudaRadiusValues(filter->GetKernel().GetRadius()) },
             { "boundary", { static_cast<double>(filter->GetBoundary()) } } };
  }
  /** The box passes take flat boxes with the anchor, basic or van
   * Herk-Gil-Werman algorithm (the histogram one runs ITK's). */
  static std::string
  CoreProblem(const Self * filter);

protected:
  CudaGrayscaleErodeImageFilter() = default;
  ~CudaGrayscaleErodeImageFilter() override = default;
};

} // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#  include "itkCudaGrayscaleErodeImageFilter.hxx"
#endif

#endif
