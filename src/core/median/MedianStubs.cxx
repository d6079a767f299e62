/*=========================================================================
 *  CudaImageFilters: the median core's GPU entry points in a build without
 *  nvcc (the ITK filter refers to them; they say there is no GPU code).
 *=========================================================================*/
#include "cif/CudaError.h"
#include "cif/Median.h"
#include "cifPixelLists.h"

#ifndef CUDAIMAGEFILTERS_WITH_CUDA
namespace cif
{
bool
MedianCUDAIsCompiled()
{
  return false;
}

template <typename T>
MedianPlan
MedianCUDA(const T *, T *, const MedianGeometry &, MedianKernel)
{
  throw CudaFailure(-1, "CudaImageFilters was built without CUDA", "MedianCUDA");
}

#  define CIF_INSTANTIATE_MEDIAN_STUB(T)                                                                               \
    template MedianPlan MedianCUDA<T>(const T *, T *, const MedianGeometry &, MedianKernel);
CIF_MEDIAN_PIXELS(CIF_INSTANTIATE_MEDIAN_STUB)
} // namespace cif
#endif
