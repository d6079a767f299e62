/*=========================================================================
 *  CudaImageFilters: the bilateral core's GPU entry points in a build
 *  without nvcc (the ITK filter refers to them; they say there is no GPU
 *  code).
 *=========================================================================*/
#include "cif/Bilateral.h"
#include "cifPixelLists.h"
#include "cif/CudaError.h"

#ifndef CUDAIMAGEFILTERS_WITH_CUDA
namespace cif
{
bool
BilateralCUDAIsCompiled()
{
  return false;
}

template <typename TIn, typename TOut>
std::string
BilateralCUDA(const TIn *, TOut *, const ClampedNeighborhoodGeometry &, const BilateralParameters &)
{
  throw CudaFailure(-1, "CudaImageFilters was built without CUDA", "BilateralCUDA");
}

#  define CIF_INSTANTIATE_BILATERAL_STUB(TIn, TOut)                                                                    \
    template std::string BilateralCUDA<TIn, TOut>(                                                                     \
      const TIn *, TOut *, const ClampedNeighborhoodGeometry &, const BilateralParameters &);
#  define CIF_BILATERAL_SAME(T) CIF_INSTANTIATE_BILATERAL_STUB(T, T)
#  define CIF_BILATERAL_TO_FLOAT(T) CIF_INSTANTIATE_BILATERAL_STUB(T, float)
CIF_BILATERAL_GPU_PIXELS(CIF_BILATERAL_SAME)
CIF_FLOAT_OUTPUT_PIXELS(CIF_BILATERAL_TO_FLOAT)
} // namespace cif
#endif
