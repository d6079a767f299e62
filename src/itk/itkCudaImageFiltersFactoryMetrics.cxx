/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
// The factory's overrides of ITK's v4 image metrics (float and double
// images, 2 and 3 dimensions, ITK's default template arguments).
#include "itkCudaCorrelationImageToImageMetricv4.h"
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
} // namespace

void
AddMetricOverrides(CudaImageFiltersFactory & factory)
{
  ForImagesOf<Metrics, float, double>(factory);
}

} // namespace CudaFactoryDetail
} // namespace itk
