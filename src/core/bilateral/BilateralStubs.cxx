/*=========================================================================
 *  CudaImageFilters: the bilateral core's GPU entry points in a build
 *  without nvcc (the ITK filter refers to them; they say there is no GPU
 *  code).
 *=========================================================================*/
#include "cif/Bilateral.h"
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
CIF_INSTANTIATE_BILATERAL_STUB(unsigned char, unsigned char)
CIF_INSTANTIATE_BILATERAL_STUB(short, short)
CIF_INSTANTIATE_BILATERAL_STUB(unsigned short, unsigned short)
CIF_INSTANTIATE_BILATERAL_STUB(float, float)
CIF_INSTANTIATE_BILATERAL_STUB(unsigned char, float)
CIF_INSTANTIATE_BILATERAL_STUB(short, float)
CIF_INSTANTIATE_BILATERAL_STUB(unsigned short, float)
} // namespace cif
#endif
