/*=========================================================================
 *  CudaImageFilters: the median core's GPU entry points in a build without
 *  nvcc (the ITK filter refers to them; they say there is no GPU code).
 *=========================================================================*/
#include "cif/CudaError.h"
#include "cif/Median.h"

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

template MedianPlan
MedianCUDA<unsigned char>(const unsigned char *, unsigned char *, const MedianGeometry &, MedianKernel);
template MedianPlan
MedianCUDA<short>(const short *, short *, const MedianGeometry &, MedianKernel);
template MedianPlan
MedianCUDA<unsigned short>(const unsigned short *, unsigned short *, const MedianGeometry &, MedianKernel);
template MedianPlan
MedianCUDA<float>(const float *, float *, const MedianGeometry &, MedianKernel);
} // namespace cif
#endif
