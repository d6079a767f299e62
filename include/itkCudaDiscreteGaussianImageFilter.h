/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaDiscreteGaussianImageFilter_h
#define itkCudaDiscreteGaussianImageFilter_h

#include "cif/DiscreteGaussian.h"
#include "itkCudaDescribedImageFilter.h"
#include "itkCudaFilterImage.h"
#include "itkDiscreteGaussianImageFilter.h"
#include "itkZeroFluxNeumannBoundaryCondition.h"

#include <algorithm>
#include <string>

namespace itk
{

/** \class CudaDiscreteGaussianImageFilter
 * \brief Gaussian smoothing by separable convolution with ITK's discrete
 * Gaussian kernel, on the GPU (CUDA) or the CPU: a drop-in for
 * itk::DiscreteGaussianImageFilter.
 *
 * Computed: along each of the first FilterDimensionality axes, the last
 * first, the convolution with ITK's GaussianOperator kernel for that axis's
 * variance (in physical units with UseImageSpacing, ITK's default; the
 * kernel grows until its sum reaches 1 - MaximumError, at most
 * MaximumKernelWidth samples on each side, and is normalised), indices
 * clamped to the image (ITK's default zero-flux Neumann boundary), each
 * sample's sum in double in the kernel's order, every pass cast to the
 * output pixel (ITK 5.2's intermediate images are of the output's type;
 * integers truncated, as ITK's cast). Both devices use
 * ITK's arithmetic (the GPU without fused multiply-adds), so the result is
 * ITK's up to the order of identical operations (the tests: within 1e-6 of
 * the range, integer outputs equal, on ITK's example images in 2D and 3D).
 *
 * ITK's API, output grid and regions (the twin's requested region, padded
 * by the kernels' radii): it streams, and host images too large for the
 * device run in slabs. GPU and module CPU core: uint8, int16, uint16,
 * float and double pixels into the same type, or the integers into float,
 * 1 to 3 dimensions. Other requests, and boundary conditions other than
 * ITK's default, run ITK's own filter (the execution report says so). A
 * kernel truncated at MaximumKernelWidth draws ITK's warning. The GPU runs
 * one thread per output sample and pass, two intermediate images of the
 * output's type on the device.
 *
 * \ingroup CudaImageFilters
 */
template <typename TInputImage, typename TOutputImage = TInputImage>
class ITK_TEMPLATE_EXPORT CudaDiscreteGaussianImageFilter
  : public CudaDescribedImageFilter<CudaDiscreteGaussianImageFilter<TInputImage, TOutputImage>,
                                    DiscreteGaussianImageFilter<TInputImage, TOutputImage>>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaDiscreteGaussianImageFilter);

  using Self = CudaDiscreteGaussianImageFilter;
  using Twin = DiscreteGaussianImageFilter<TInputImage, TOutputImage>;
  using Superclass = CudaDescribedImageFilter<Self, Twin>;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  itkNewMacro(Self);
  itkTypeMacro(CudaDiscreteGaussianImageFilter, DiscreteGaussianImageFilter);

  /** The core's description of the filter (cif/Filter.h). */
  static const cif::FilterDescriptor &
  Description()
  {
    return cif::FindFilter("discrete-gaussian");
  }
  /** The filter's settings as the description's parameters, with the
   * input's spacing when it is set. */
  static cif::Parameters
  DescribedParameters(const Self * filter)
  {
    constexpr unsigned int D = TInputImage::ImageDimension;
    // ITK's GaussianOperator takes the width as unsigned (a negative int wraps)
    const auto      width = static_cast<unsigned int>(filter->GetMaximumKernelWidth());
    cif::Parameters p{ { "variance", CudaPerAxisValues<D>(filter->GetVariance()) },
                       { "maximum_error", CudaPerAxisValues<D>(filter->GetMaximumError()) },
                       { "maximum_kernel_width", { static_cast<double>(width) } },
                       { "use_image_spacing", { filter->GetUseImageSpacing() ? 1.0 : 0.0 } },
                       { "filter_dimensionality", { static_cast<double>(std::min(filter->GetFilterDimensionality(), D)) } } };
    if (const TInputImage * input = filter->GetInput())
    {
      p["spacing"] = CudaPerAxisValues<D>(input->GetSpacing());
    }
    return p;
  }
  /** The cores clamp indices to the image: ITK's default boundary
   * conditions only. */
  static std::string
  CoreProblem(const Self * filter)
  {
    using InputDefault = typename Twin::InputDefaultBoundaryConditionType;
    using RealDefault = typename Twin::RealDefaultBoundaryConditionType;
    if (dynamic_cast<const InputDefault *>(filter->GetInputBoundaryCondition()) == nullptr ||
        dynamic_cast<const RealDefault *>(filter->GetRealBoundaryCondition()) == nullptr)
    {
      return "the module's cores take ITK's default zero-flux Neumann boundary conditions only";
    }
    return {};
  }

protected:
  CudaDiscreteGaussianImageFilter() = default;
  ~CudaDiscreteGaussianImageFilter() override = default;
};

} // namespace itk

#endif
