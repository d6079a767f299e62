/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaCurvatureAnisotropicDiffusionImageFilter_h
#define itkCudaCurvatureAnisotropicDiffusionImageFilter_h

#include "itkCudaAnisotropicDiffusionImageFilter.h"
#include "itkCurvatureAnisotropicDiffusionImageFilter.h"

namespace itk
{

/** \class CudaCurvatureAnisotropicDiffusionImageFilter
 * \brief Modified curvature anisotropic diffusion (Whitaker and Xue) on the
 * GPU (CUDA) or the CPU: a drop-in for
 * itk::CurvatureAnisotropicDiffusionImageFilter, with every iteration on
 * the device.
 *
 * Computes NumberOfIterations steps of f <- f + TimeStep u(f), where u is
 * ITK's CurvatureNDAnisotropicDiffusionFunction update,
 * \f[ u = |\nabla f|_{\mathrm{upwind}} \sum_i \left( \frac{\partial^+_i f}{|\nabla f|_{i+}} e^{-|\nabla f|^2_{i+} / K} - \frac{\partial^-_i f}{|\nabla f|_{i-}} e^{-|\nabla f|^2_{i-} / K} \right), \f]
 * with the gradient magnitudes at the half-pixels approximated as ITK does
 * (plus 1e-10 under the root), the upwind gradient magnitude chosen by the
 * sign of the sum, K = 2 ConductanceParameter^2 <|grad f|^2>, and
 * <|grad f|^2> the average squared central-difference gradient of the whole
 * current image, computed again every ConductanceScalingUpdateInterval
 * iterations (or FixedAverageGradientMagnitude^2 when that is set).
 * Derivatives are divided by the spacing with UseImageSpacing (ITK's
 * default). Boundary: zero-flux Neumann.
 *
 * Accuracy (tested against ITK's filter on real images, 5 iterations, 2D
 * and 3D): the CPU core computes in double as ITK does, within 1e-9 of the
 * range (float images: within float rounding); the GPU computes the update
 * in the image's precision (float for float images) with the average
 * gradient magnitude in double, within 1e-5 of the range; on integer-valued
 * images, where one ulp on a flat face turns ITK's normalised flux from 0
 * to order one, within ITK's own change when a tenth of the pixels move by
 * one ulp (3.2e-5 of the range on ITK's brain slice; 1.0e-5 measured). A NaN pixel makes
 * the average gradient NaN and the whole output NaN, as in ITK. Integer
 * inputs are written as float, as ITK computes them.
 *
 * ITK's stability warnings (TimeStep above min(spacing) / 2^(D+1), and above
 * 0.5 / 2^D) are given as ITK gives them, and the result is ITK's (unstable) result.
 *
 * Where it runs (SetExecutionMode): automatic (default), GPU or CPU;
 * GetLastExecutionReport() says where. float -> float, double -> double and
 * uchar/short/ushort -> float in 1 to 3 dimensions run the module's cores;
 * anything else runs ITK's own filter, and the report says so. Images too
 * large for the device run on the CPU unless the average gradient magnitude
 * is fixed (then in slabs).
 *
 * Performance: benchmarks/AnisotropicDiffusionBenchmark.cxx.
 *
 * \ingroup CudaImageFilters
 */
template <typename TInputImage, typename TOutputImage>
class ITK_TEMPLATE_EXPORT CudaCurvatureAnisotropicDiffusionImageFilter
  : public CudaDescribedImageFilter<CudaCurvatureAnisotropicDiffusionImageFilter<TInputImage, TOutputImage>,
                                    CurvatureAnisotropicDiffusionImageFilter<TInputImage, TOutputImage>>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaCurvatureAnisotropicDiffusionImageFilter);

  using Self = CudaCurvatureAnisotropicDiffusionImageFilter;
  using Twin = CurvatureAnisotropicDiffusionImageFilter<TInputImage, TOutputImage>;
  using Superclass = CudaDescribedImageFilter<Self, Twin>;
  using Shared = CudaAnisotropicDiffusion<Self>;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  itkNewMacro(Self);
  itkTypeMacro(CudaCurvatureAnisotropicDiffusionImageFilter, CurvatureAnisotropicDiffusionImageFilter);

  /** The core's description of the filter (cif/Filter.h). */
  static const cif::FilterDescriptor &
  Description()
  {
    return cif::FindFilter("curvature-anisotropic-diffusion");
  }

  /** The settings as the description's parameters (CudaAnisotropicDiffusion). */
  static cif::Parameters
  DescribedParameters(const Self * filter)
  {
    return Shared::Parameters(filter, filter->m_GradientMagnitudeIsFixed);
  }

protected:
  CudaCurvatureAnisotropicDiffusionImageFilter() = default;
  ~CudaCurvatureAnisotropicDiffusionImageFilter() override = default;

  void
  GenerateInputRequestedRegion() override
  {
    Twin::GenerateInputRequestedRegion();
    Shared::RequestInput(this, this->m_GradientMagnitudeIsFixed);
  }
  void
  EnlargeOutputRequestedRegion(DataObject * output) override
  {
    Twin::EnlargeOutputRequestedRegion(output);
    Shared::EnlargeOutput(output, this->m_GradientMagnitudeIsFixed);
  }
  void
  GenerateData() override
  {
    Superclass::GenerateData();
    this->SetElapsedIterations(Shared::ElapsedIterations(this, this->m_GradientMagnitudeIsFixed));
  }
};

} // namespace itk

#endif
