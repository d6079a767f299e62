/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
// The factory's overrides of the smoothing twins: median, mean, bilateral,
// the smoothing recursive Gaussian, and the recursive Gaussian gradient (the
// v4 metrics' default gradient filter: its CovariantVector<double, D> output).
#include "itkCudaBilateralImageFilter.h"
#include "itkCudaImageFiltersFactoryOverrides.h"
#include "itkCudaMeanImageFilter.h"
#include "itkCudaGradientRecursiveGaussianImageFilter.h"
#include "itkCudaMedianImageFilter.h"
#include "itkCudaSmoothingRecursiveGaussianImageFilter.h"

namespace itk
{
namespace CudaFactoryDetail
{
namespace
{
template <typename T>
struct Smoothing
{
  template <unsigned int D>
  static void
  Add(CudaImageFiltersFactory & factory)
  {
    using I = Image<T, D>;
    OverrideDescribed<MedianImageFilter<I, I>, CudaMedianImageFilter<I, I>>(factory, "CUDA median");
    OverrideDescribed<MeanImageFilter<I, I>, CudaMeanImageFilter<I, I>>(factory, "CUDA mean");
    OverrideDescribed<BilateralImageFilter<I, I>, CudaBilateralImageFilter<I, I>>(factory, "CUDA bilateral");
    OverrideDescribed<SmoothingRecursiveGaussianImageFilter<I, I>, CudaSmoothingRecursiveGaussianImageFilter<I, I>>(
      factory, "CUDA smoothing recursive Gaussian");
    using Gradient = Image<CovariantVector<double, D>, D>;
    Override<GradientRecursiveGaussianImageFilter<I, Gradient>, CudaGradientRecursiveGaussianImageFilter<I, Gradient>>(
      factory, "CUDA recursive Gaussian gradient");
  }
};
} // namespace

void
AddSmoothingOverrides(CudaImageFiltersFactory & factory)
{
  ForCoreImages<Smoothing>(factory);
}

} // namespace CudaFactoryDetail
} // namespace itk
