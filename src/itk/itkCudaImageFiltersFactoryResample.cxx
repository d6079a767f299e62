/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
// The factory's overrides of the resampling twins: the resample filter, the
// B-spline interpolator and its decomposition (prefilter).
#include "itkCudaBSplineDecompositionImageFilter.h"
#include "itkCudaBSplineInterpolateImageFunction.h"
#include "itkCudaImageFiltersFactoryOverrides.h"
#include "itkCudaResampleImageFilter.h"

namespace itk
{
namespace CudaFactoryDetail
{
namespace
{
template <typename T>
struct Resampling
{
  template <unsigned int D>
  static void
  Add(CudaImageFiltersFactory & factory)
  {
    using I = Image<T, D>;
    // ITK's default template arguments, which the typeid names spell out
    Override<ResampleImageFilter<I, I, double, double>, CudaResampleImageFilter<I, I, double, double>>(
      factory, "CUDA resample");
    Override<BSplineInterpolateImageFunction<I, double, double>, CudaBSplineInterpolateImageFunction<I, double, double>>(
      factory, "CUDA B-spline interpolator");
    OverrideDescribed<BSplineDecompositionImageFilter<I, Image<float, D>>,
                      CudaBSplineDecompositionImageFilter<I, Image<float, D>>>(factory, "CUDA B-spline decomposition");
    OverrideDescribed<BSplineDecompositionImageFilter<I, Image<double, D>>,
                      CudaBSplineDecompositionImageFilter<I, Image<double, D>>>(factory, "CUDA B-spline decomposition");
  }
};
} // namespace

void
AddResampleOverrides(CudaImageFiltersFactory & factory)
{
  ForCoreImages<Resampling>(factory);
}

} // namespace CudaFactoryDetail
} // namespace itk
