/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaRecursiveGaussianImageFilter_h
#define itkCudaRecursiveGaussianImageFilter_h

#include "cif/RecursiveGaussian.h"
#include "itkCudaDescribedImageFilter.h"
#include "itkCudaFilterImage.h"
#include "itkRecursiveGaussianImageFilter.h"

namespace itk
{

/** \class CudaRecursiveGaussianImageFilter
 * \brief The Gaussian, or its first or second derivative, along one axis
 * by the recursive (IIR) approximation, on the GPU (CUDA) or the CPU: a
 * drop-in for itk::RecursiveGaussianImageFilter.
 *
 * Computed: along SetDirection's axis, Deriche's fourth-order recursion
 * with the Farnebäck-Westin constants for SetSigma (physical units: the
 * coefficients come from sigma / spacing of the axis), SetOrder
 * (ZeroOrder, FirstOrder, SecondOrder) and SetNormalizeAcrossScale, each
 * line in double (causal and anticausal passes, the edge values continued
 * beyond the ends), then converted to the output pixel (integers
 * truncated, as ITK's cast). ITK's arithmetic on both devices (the GPU
 * without fused multiply-adds; cif/RecursiveGaussian.h), so the result is
 * ITK's up to the order of identical operations (the tests: within 1e-6
 * of the range, on ITK's example images, 2D and 3D, every order).
 *
 * ITK's API, output grid and regions (the whole image is requested and
 * produced); at least 4 pixels along the direction (ITK's requirement,
 * checked before any work); in place where ITK's InPlace is on and the
 * types agree. GPU and module CPU core: uint8, int16, uint16, float and
 * double pixels into the same type, or the integers into float, 1 to 3
 * dimensions; other requests run ITK's own filter (the execution report
 * says so). The GPU runs one thread per line with one double per pixel of
 * scratch.
 *
 * \ingroup CudaImageFilters
 */
template <typename TInputImage, typename TOutputImage = TInputImage>
class ITK_TEMPLATE_EXPORT CudaRecursiveGaussianImageFilter
  : public CudaDescribedImageFilter<CudaRecursiveGaussianImageFilter<TInputImage, TOutputImage>,
                                    RecursiveGaussianImageFilter<TInputImage, TOutputImage>>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaRecursiveGaussianImageFilter);

  using Self = CudaRecursiveGaussianImageFilter;
  using Superclass = CudaDescribedImageFilter<Self, RecursiveGaussianImageFilter<TInputImage, TOutputImage>>;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  itkNewMacro(Self);
  itkTypeMacro(CudaRecursiveGaussianImageFilter, RecursiveGaussianImageFilter);

  /** The core's description of the filter (cif/Filter.h). */
  static const cif::FilterDescriptor &
  Description()
  {
    return cif::FindFilter("recursive-gaussian");
  }
  /** The filter's settings as the description's parameters, with the
   * input's spacing when it is set. */
  static cif::Parameters
  DescribedParameters(const Self * filter)
  {
    constexpr unsigned int D = TInputImage::ImageDimension;
    cif::Parameters        p{ { "sigma", { static_cast<double>(filter->GetSigma()) } },
                              { "direction", { static_cast<double>(filter->GetDirection()) } },
                              { "order", { static_cast<double>(static_cast<int>(filter->GetOrder())) } },
                              { "normalize_across_scale", { filter->GetNormalizeAcrossScale() ? 1.0 : 0.0 } } };
    if (const TInputImage * input = filter->GetInput())
    {
      p["spacing"] = CudaPerAxisValues<D>(input->GetSpacing());
    }
    return p;
  }

protected:
  CudaRecursiveGaussianImageFilter() = default;
  ~CudaRecursiveGaussianImageFilter() override = default;
};

} // namespace itk

#endif
