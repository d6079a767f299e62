/*=========================================================================
 *  CudaImageFilters: the box filters' GPU entry points in a build without
 *  nvcc (the ITK filters refer to them; they say there is no GPU code).
 *=========================================================================*/
#include "cif/BoxFilters.h"
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
CIF_INSTANTIATE_BOX_MEAN_STUB(unsigned char, unsigned char)
CIF_INSTANTIATE_BOX_MEAN_STUB(short, short)
CIF_INSTANTIATE_BOX_MEAN_STUB(unsigned short, unsigned short)
CIF_INSTANTIATE_BOX_MEAN_STUB(float, float)
CIF_INSTANTIATE_BOX_MEAN_STUB(unsigned char, float)
CIF_INSTANTIATE_BOX_MEAN_STUB(short, float)
CIF_INSTANTIATE_BOX_MEAN_STUB(unsigned short, float)

#  define CIF_INSTANTIATE_BOX_MIN_STUB(T) template void BoxMinCUDA<T>(const T *, T *, const BoxGeometry &, T);
CIF_INSTANTIATE_BOX_MIN_STUB(unsigned char)
CIF_INSTANTIATE_BOX_MIN_STUB(short)
CIF_INSTANTIATE_BOX_MIN_STUB(unsigned short)
CIF_INSTANTIATE_BOX_MIN_STUB(float)
} // namespace cif
#endif
