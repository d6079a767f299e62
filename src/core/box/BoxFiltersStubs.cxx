/*=========================================================================
 *  CudaImageFilters: the box filters' GPU entry points in a build without
 *  nvcc (the ITK filters refer to them; they say there is no GPU code).
 *=========================================================================*/
#include "cif/BoxFilters.h"
#include "cifPixelLists.h"
#include "cif/CudaError.h"

#ifndef CUDAIMAGEFILTERS_WITH_CUDA
namespace cif
{
bool
BoxFiltersCUDAIsCompiled()
{
  return false;
}

template <typename TIn, typename TOut>
BoxMeanMethod
BoxMeanCUDA(const TIn *, TOut *, const BoxGeometry &)
{
  throw CudaFailure(-1, "CudaImageFilters was built without CUDA", "BoxMeanCUDA");
}

template <typename T>
void
BoxMinCUDA(const T *, T *, const BoxGeometry &, T)
{
  throw CudaFailure(-1, "CudaImageFilters was built without CUDA", "BoxMinCUDA");
}

#  define CIF_INSTANTIATE_BOX_MEAN_STUB(TIn, TOut)                                                                     \
    template BoxMeanMethod BoxMeanCUDA<TIn, TOut>(const TIn *, TOut *, const BoxGeometry &);
#  define CIF_BOX_MEAN_SAME(T) CIF_INSTANTIATE_BOX_MEAN_STUB(T, T)
#  define CIF_BOX_MEAN_TO_FLOAT(T) CIF_INSTANTIATE_BOX_MEAN_STUB(T, float)
CIF_BOX_PIXELS(CIF_BOX_MEAN_SAME)
CIF_FLOAT_OUTPUT_PIXELS(CIF_BOX_MEAN_TO_FLOAT)

#  define CIF_INSTANTIATE_BOX_MIN_STUB(T) template void BoxMinCUDA<T>(const T *, T *, const BoxGeometry &, T);
CIF_BOX_PIXELS(CIF_INSTANTIATE_BOX_MIN_STUB)
} // namespace cif
#endif
