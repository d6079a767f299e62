/*=========================================================================
 *  CudaImageFilters: the registration metric core's GPU entry points in a
 *  build without nvcc (they say there is no GPU code).
 *=========================================================================*/
#include "cif/CudaError.h"
#include "cif/RegistrationMetric.h"

#ifndef CUDAIMAGEFILTERS_WITH_CUDA
namespace cif
{
bool
DenseMetricCUDAIsCompiled()
{
  return false;
}

template <typename TPixel>
void
DenseMetricMomentsCUDA(const DenseMetricJob &, MetricMoments &)
{
  throw CudaFailure(-1, "CudaImageFilters was built without CUDA", "DenseMetricMomentsCUDA");
}

template void
DenseMetricMomentsCUDA<float>(const DenseMetricJob &, MetricMoments &);
template void
DenseMetricMomentsCUDA<double>(const DenseMetricJob &, MetricMoments &);
} // namespace cif
#endif
