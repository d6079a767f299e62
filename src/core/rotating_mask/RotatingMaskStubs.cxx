/*=========================================================================
 *  CudaImageFilters: the rotating-mask core's GPU entry points in a build
 *  without nvcc (the ITK filter refers to them; they say there is no GPU
 *  code).
 *=========================================================================*/
#include "cif/RotatingMask.h"
#include "cifPixelLists.h"
#include "cif/CudaError.h"

#ifndef CUDAIMAGEFILTERS_WITH_CUDA
namespace cif
{
bool
RotatingMaskCUDAIsCompiled()
{
  return false;
}

template <typename TIn, typename TOut>
std::string
RotatingMaskCUDA(const TIn *, TOut *, const ClampedNeighborhoodGeometry &, const RotatingMaskParameters &)
{
  throw CudaFailure(-1, "CudaImageFilters was built without CUDA", "RotatingMaskCUDA");
}

#  define CIF_INSTANTIATE_ROTATING_MASK_STUB(TIn, TOut)                                                                \
    template std::string RotatingMaskCUDA<TIn, TOut>(                                                                  \
      const TIn *, TOut *, const ClampedNeighborhoodGeometry &, const RotatingMaskParameters &);
#  define CIF_ROTATING_MASK_SAME(T) CIF_INSTANTIATE_ROTATING_MASK_STUB(T, T)
#  define CIF_ROTATING_MASK_TO_FLOAT(T) CIF_INSTANTIATE_ROTATING_MASK_STUB(T, float)
CIF_ROTATING_MASK_PIXELS(CIF_ROTATING_MASK_SAME)
CIF_FLOAT_OUTPUT_PIXELS(CIF_ROTATING_MASK_TO_FLOAT)
} // namespace cif
#endif
