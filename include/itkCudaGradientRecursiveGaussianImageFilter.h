/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaGradientRecursiveGaussianImageFilter_h
#define itkCudaGradientRecursiveGaussianImageFilter_h

#include "cif/RecursiveGaussian.h"
#include "itkCudaDescribedImageFilter.h"
#include "itkCudaFilterImage.h"
#include "itkGradientRecursiveGaussianImageFilter.h"

namespace itk
{

/** \class CudaGradientRecursiveGaussianImageFilter
 * \brief The gradient of the image smoothed by a Gaussian, by the recursive
 * (IIR) approximation, on the GPU (CUDA) or the CPU: a drop-in for
 * itk::GradientRecursiveGaussianImageFilter, the filter ITK's v4 metrics
 * run in Initialize for their moving (and fixed) image gradients.
 *
 * Computed, as ITK's filter: for each axis d, ITK's RecursiveGaussianImageFilter
 * of order 1 along d (with ITK's sigma of its derivative filter, the last
 * axis's) from the input into float, then order 0 along each other axis in
 * increasing order (the i-th of them with sigma[i], as ITK's smoothing
 * filter i keeps its sigma whichever axis it runs along; the same for the
 * isotropic sigmas the metrics set), in place; component d of the output is
 * that image divided by the spacing along d, rounded to float (as ITK
 * stores it, through a float NthElementImageAdaptor); with UseImageDirection (ITK's
 * default) each gradient is then multiplied by the image's direction
 * matrix, in double. Each line is filtered with ITK's arithmetic in double
 * (cif/RecursiveGaussian.h) on both devices, the GPU without fused
 * multiply-adds, so the result is ITK's up to the order of identical
 * operations (the tests: within 1e-6 of the largest component, on ITK's
 * example images, 2D and 3D).
 *
 * ITK's API, output grid and regions (the whole image is requested and
 * produced); at least 4 pixels along every axis. GPU and module CPU core:
 * uint8, int16, uint16, float and double inputs of 1 to 3 dimensions, and
 * itk::Image outputs of CovariantVector or Vector pixels of D float or
 * double components; other requests (multi-component inputs, VectorImage
 * outputs) run ITK's own filter, and the execution report says so. On the
 * GPU the input goes up, the D passes per component run on the device
 * (one thread per line; one float and one double per pixel of scratch) and
 * the gradient image comes down; itk::CudaFilterImage input and output stay
 * on the device. The core is described once (cif::FindFilter
 * ("gradient-recursive-gaussian")), as the command-line subcommand and the
 * Python function gradient_recursive_gaussian_image_filter are.
 *
 * \ingroup CudaImageFilters
 */
template <
  typename TInputImage,
  typename TOutputImage = Image<
    CovariantVector<typename NumericTraits<typename TInputImage::PixelType>::RealType, TInputImage::ImageDimension>,
    TInputImage::ImageDimension>>
class ITK_TEMPLATE_EXPORT CudaGradientRecursiveGaussianImageFilter
  : public CudaDescribedImageFilter<CudaGradientRecursiveGaussianImageFilter<TInputImage, TOutputImage>,
                                    GradientRecursiveGaussianImageFilter<TInputImage, TOutputImage>>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaGradientRecursiveGaussianImageFilter);

  using Self = CudaGradientRecursiveGaussianImageFilter;
  using Superclass = CudaDescribedImageFilter<Self, GradientRecursiveGaussianImageFilter<TInputImage, TOutputImage>>;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  itkNewMacro(Self);
  itkTypeMacro(CudaGradientRecursiveGaussianImageFilter, GradientRecursiveGaussianImageFilter);

  /** The core's description of the filter (cif/Filter.h). */
  static const cif::FilterDescriptor &
  Description()
  {
    return cif::FindFilter("gradient-recursive-gaussian");
  }
  /** The filter's settings as the description's parameters, with the
   * input's spacing and direction when it is set. */
  static cif::Parameters
  DescribedParameters(const Self * filter)
  {
    constexpr unsigned int D = TInputImage::ImageDimension;
    cif::Parameters        p{ { "sigma", CudaPerAxisValues<D>(filter->GetSigmaArray()) },
                       { "normalize_across_scale", { filter->GetNormalizeAcrossScale() ? 1.0 : 0.0 } },
                       { "use_image_direction", { filter->GetUseImageDirection() ? 1.0 : 0.0 } } };
    if (const TInputImage * input = filter->GetInput())
    {
      p["spacing"] = CudaPerAxisValues<D>(input->GetSpacing());
      p["direction"] = CudaMatrixValues<D>(input->GetDirection());
    }
    return p;
  }

protected:
  CudaGradientRecursiveGaussianImageFilter() = default;
  ~CudaGradientRecursiveGaussianImageFilter() override = default;
};

} // namespace itk

#endif
