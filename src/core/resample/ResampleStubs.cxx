/*=========================================================================
 *  CudaImageFilters: the resampling core's entry points in a build without
 *  nvcc (the ITK filter refers to them; they say there is no GPU code).
 *=========================================================================*/
#include "cif/CudaError.h"
#include "cif/Resample.h"
#include "cifPixelLists.h"

#ifndef CUDAIMAGEFILTERS_WITH_CUDA
namespace cif
{
bool
ResampleCUDAIsCompiled()
{
  return false;
}

template <typename TSample, typename TOut>
void
ResampleCUDA(const TSample *, TOut *, const ResampleGeometry &, const ResampleParameters &)
{
  throw CudaFailure(-1, "CudaImageFilters was built without CUDA", "ResampleCUDA");
}

#  define CIF_INSTANTIATE_RESAMPLE_STUB(TSample, TOut)                                                                 \
    template void ResampleCUDA<TSample, TOut>(                                                                         \
      const TSample *, TOut *, const ResampleGeometry &, const ResampleParameters &);
CIF_RESAMPLE_PAIRS(CIF_INSTANTIATE_RESAMPLE_STUB)
} // namespace cif
#endif
