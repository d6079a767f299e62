/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
// The factory's overrides of ITK's v4 image metrics (float and double
// images, 2 and 3 dimensions, ITK's default template arguments) and of the
// demons registration filters, Thirion's and the diffeomorphic ones (images
// of the types their cores take, a float vector field).
#include "itkCudaCorrelationImageToImageMetricv4.h"
#include "itkCudaDemonsRegistrationFilter.h"
#include "itkCudaDiffeomorphicDemonsRegistrationFilter.h"
#include "itkCudaImageFiltersFactoryOverrides.h"
#include "itkCudaMattesMutualInformationImageToImageMetricv4.h"
#include "itkCudaMeanSquaresImageToImageMetricv4.h"

namespace itk
{
namespace CudaFactoryDetail
{
namespace
{
template <typename T>
struct Metrics
{
  template <unsigned int D>
  static void
  Add(CudaImageFiltersFactory & factory)
  {
    using I = Image<T, D>;
    Override<MeanSquaresImageToImageMetricv4<I, I>, CudaMeanSquaresImageToImageMetricv4<I, I>>(
      factory, "CUDA mean squares metric");
    Override<CorrelationImageToImageMetricv4<I, I>, CudaCorrelationImageToImageMetricv4<I, I>>(
      factory, "CUDA correlation metric");
    Override<MattesMutualInformationImageToImageMetricv4<I, I>, CudaMattesMutualInformationImageToImageMetricv4<I, I>>(
      factory, "CUDA Mattes mutual information metric");
  }
};

template <typename T>
struct Demons
{
  template <unsigned int D>
  static void
  Add(CudaImageFiltersFactory & factory)
  {
    using I = Image<T, D>;
    using F = Image<Vector<float, D>, D>;
    Override<DemonsRegistrationFilter<I, I, F>, CudaDemonsRegistrationFilter<I, I, F>>(
      factory, "CUDA demons registration filter");
    Override<DiffeomorphicDemonsRegistrationFilter<I, I, F>, CudaDiffeomorphicDemonsRegistrationFilter<I, I, F>>(
      factory, "CUDA diffeomorphic demons registration filter");
  }
};
} // namespace

void
AddMetricOverrides(CudaImageFiltersFactory & factory)
{
  ForImagesOf<Metrics, float, double>(factory);
  ForImagesOf<Demons, unsigned char, short, unsigned short, float>(factory);
}

} // namespace CudaFactoryDetail
} // namespace itk
