/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
// The factory's overrides of the anisotropic diffusion twins (gradient and
// curvature): float or double in and out, or integers into float.
#include "itkCudaCurvatureAnisotropicDiffusionImageFilter.h"
#include "itkCudaGradientAnisotropicDiffusionImageFilter.h"
#include "itkCudaImageFiltersFactoryOverrides.h"

namespace itk
{
namespace CudaFactoryDetail
{
namespace
{
template <typename TIn, typename TOut, unsigned int D>
void
AddDiffusion(CudaImageFiltersFactory & factory)
{
  using I = Image<TIn, D>;
  using O = Image<TOut, D>;
  OverrideDescribed<GradientAnisotropicDiffusionImageFilter<I, O>, CudaGradientAnisotropicDiffusionImageFilter<I, O>>(
    factory, "CUDA gradient anisotropic diffusion");
  OverrideDescribed<CurvatureAnisotropicDiffusionImageFilter<I, O>, CudaCurvatureAnisotropicDiffusionImageFilter<I, O>>(
    factory, "CUDA curvature anisotropic diffusion");
}

template <typename T>
struct Diffusion
{
  template <unsigned int D>
  static void
  Add(CudaImageFiltersFactory & factory)
  {
    // ITK's filters write real pixels only (its concept check)
    if constexpr (std::is_floating_point<T>::value)
    {
      AddDiffusion<T, T, D>(factory);
    }
    else
    {
      AddDiffusion<T, float, D>(factory);
    }
  }
};
} // namespace

void
AddDiffusionOverrides(CudaImageFiltersFactory & factory)
{
  ForCoreImages<Diffusion>(factory);
}

} // namespace CudaFactoryDetail
} // namespace itk
