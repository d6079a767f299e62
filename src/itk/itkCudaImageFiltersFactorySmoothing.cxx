/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
// The factory's overrides of the smoothing twins: median, mean, bilateral,
// the smoothing recursive and the discrete Gaussian (the latter integers
// into float too), and the recursive Gaussian gradient (the
// v4 metrics' default gradient filter: its CovariantVector<double, D> output).
// RecursiveGaussianImageFilter is not overridden: it is the building block
// inside ITK's own composite filters (the smoothing's and the gradient's
// fallbacks, Hessians, edge detectors), whose answers must stay ITK's and
// which would pay a device round trip per axis; the module's
// CudaRecursiveGaussianImageFilter is used by name (or by accelerate_itk).
#include "itkCudaBilateralImageFilter.h"
#include "itkCudaDiscreteGaussianImageFilter.h"
#include "itkCudaImageFiltersFactoryOverrides.h"
#include "itkCudaMeanImageFilter.h"
#include "itkCudaGradientRecursiveGaussianImageFilter.h"
#include "itkCudaMedianImageFilter.h"
#include "itkCudaSmoothingRecursiveGaussianImageFilter.h"

#include <type_traits>

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
    OverrideDescribed<DiscreteGaussianImageFilter<I, I>, CudaDiscreteGaussianImageFilter<I, I>>(
      factory, "CUDA discrete Gaussian");
    if constexpr (std::is_integral<T>::value)
    {
      using F = Image<float, D>;
      OverrideDescribed<DiscreteGaussianImageFilter<I, F>, CudaDiscreteGaussianImageFilter<I, F>>(
        factory, "CUDA discrete Gaussian");
    }
    // the v4 metrics' gradient images (double components) and float ones
    using Gradient = Image<CovariantVector<double, D>, D>;
    OverrideDescribed<GradientRecursiveGaussianImageFilter<I, Gradient>,
                      CudaGradientRecursiveGaussianImageFilter<I, Gradient>>(factory,
                                                                             "CUDA recursive Gaussian gradient");
    using FloatGradient = Image<CovariantVector<float, D>, D>;
    OverrideDescribed<GradientRecursiveGaussianImageFilter<I, FloatGradient>,
                      CudaGradientRecursiveGaussianImageFilter<I, FloatGradient>>(factory,
                                                                                  "CUDA recursive Gaussian gradient");
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
