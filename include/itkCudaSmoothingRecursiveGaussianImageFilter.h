/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaSmoothingRecursiveGaussianImageFilter_h
#define itkCudaSmoothingRecursiveGaussianImageFilter_h

#include "cif/RecursiveGaussian.h"
#include "itkCudaDescribedImageFilter.h"
#include "itkCudaFilterImage.h"
#include "itkSmoothingRecursiveGaussianImageFilter.h"

namespace itk
{

/** \class CudaSmoothingRecursiveGaussianImageFilter
 * \brief Gaussian smoothing by the recursive (IIR) approximation, on the
 * GPU (CUDA) or the CPU: a drop-in for
 * itk::SmoothingRecursiveGaussianImageFilter, the smoothing
 * ImageRegistrationMethodv4 applies per level.
 *
 * Computed: ITK's RecursiveGaussianImageFilter of order 0 along every axis
 * (sigma per axis in physical units, SetSigma or SetSigmaArray; ITK's
 * NormalizeAcrossScale), the last axis first from the input into the
 * internal type (float: ITK's NumericTraits::FloatType, float for double
 * images too), then axes 0, 1, ...
 * in place, then converted to the output pixel (integers truncated, as
 * ITK's cast). Each line is filtered with ITK's arithmetic in double
 * (Deriche's fourth-order recursion with the Farnebäck-Westin constants,
 * its coefficients from sigma / spacing, the edge values continued beyond
 * the ends; cif/RecursiveGaussian.h) on both devices, the GPU without fused
 * multiply-adds, so the result is ITK's up to the order of identical
 * operations (the tests: within 1e-6 of the range, on ITK's example
 * images, 2D and 3D, every pixel type).
 *
 * ITK's API, output grid and regions (the whole image is requested and
 * produced); at least 4 pixels along every axis (ITK's requirement,
 * checked before any work). GPU and module CPU core: uint8, int16,
 * uint16, float and double pixels, input and output of one type, 1 to 3
 * dimensions; other requests run ITK's own filter (the execution report
 * says so). The GPU runs one thread per line, with one double per pixel of
 * scratch and the internal image on the device.
 *
 * \ingroup CudaImageFilters
 */
template <typename TInputImage, typename TOutputImage = TInputImage>
class ITK_TEMPLATE_EXPORT CudaSmoothingRecursiveGaussianImageFilter
  : public CudaDescribedImageFilter<CudaSmoothingRecursiveGaussianImageFilter<TInputImage, TOutputImage>,
                                    SmoothingRecursiveGaussianImageFilter<TInputImage, TOutputImage>>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaSmoothingRecursiveGaussianImageFilter);

  using Self = CudaSmoothingRecursiveGaussianImageFilter;
  using Superclass = CudaDescribedImageFilter<Self, SmoothingRecursiveGaussianImageFilter<TInputImage, TOutputImage>>;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  itkNewMacro(Self);
  itkTypeMacro(CudaSmoothingRecursiveGaussianImageFilter, SmoothingRecursiveGaussianImageFilter);

  /** The core's description of the filter (cif/Filter.h). */
  static const cif::FilterDescriptor &
  Description()
  {
    return cif::FindFilter("smoothing-recursive-gaussian");
  }
  /** The filter's settings as the description's parameters, with the
   * input's spacing when it is set. */
  static cif::Parameters
  DescribedParameters(const Self * filter)
  {
    constexpr unsigned int D = TInputImage::ImageDimension;
    cif::Parameters        p{ { "sigma", CudaPerAxisValues<D>(filter->GetSigmaArray()) },
                              { "normalize_across_scale", { filter->GetNormalizeAcrossScale() ? 1.0 : 0.0 } } };
    if (const TInputImage * input = filter->GetInput())
    {
      p["spacing"] = CudaPerAxisValues<D>(input->GetSpacing());
    }
    return p;
  }

protected:
  CudaSmoothingRecursiveGaussianImageFilter() = default;
  ~CudaSmoothingRecursiveGaussianImageFilter() override = default;
};

} // namespace itk

#endif
