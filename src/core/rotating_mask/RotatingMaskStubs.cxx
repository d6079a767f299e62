/*=========================================================================
 *  CudaImageFilters: the rotating-mask core's GPU entry points in a build
 *  without nvcc (the ITK filter refers to them; they say there is no GPU
 *  code).
 *=========================================================================*/
#include "cif/RotatingMask.h"
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
CIF_INSTANTIATE_ROTATING_MASK_STUB(unsigned char, unsigned char)
CIF_INSTANTIATE_ROTATING_MASK_STUB(short, short)
CIF_INSTANTIATE_ROTATING_MASK_STUB(unsigned short, unsigned short)
CIF_INSTANTIATE_ROTATING_MASK_STUB(float, float)
CIF_INSTANTIATE_ROTATING_MASK_STUB(unsigned char, float)
CIF_INSTANTIATE_ROTATING_MASK_STUB(short, float)
CIF_INSTANTIATE_ROTATING_MASK_STUB(unsigned short, float)
} // namespace cif
#endif
