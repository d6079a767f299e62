/*=========================================================================
 *  CudaImageFilters: the packed-mask GPU entry points in a build without
 *  nvcc (the ITK filters refer to them; they say there is no GPU code).
 *=========================================================================*/
#include "cif/CudaError.h"
#include "cif/PackedMask.h"
#include "cifPixelLists.h"

#ifndef CUDAIMAGEFILTERS_WITH_CUDA
namespace cif
{
namespace
{
[[noreturn]] void
NoCuda(const char * where)
{
  throw CudaFailure(-1, "CudaImageFilters was built without CUDA", where);
}
} // namespace

bool
PackedMaskCUDAIsCompiled()
{
  return false;
}

template <typename TIn, typename TOut>
void
ThresholdCUDA(const TIn *, TOut *, const ElementwiseGeometry &, TIn, TIn, TOut, TOut)
{
  NoCuda("ThresholdCUDA");
}

template <typename TIn>
void
ThresholdPackCUDA(const TIn *, std::uint32_t *, const MaskExtent &, TIn, TIn)
{
  NoCuda("ThresholdPackCUDA");
}

template <typename TOut>
void
UnpackMaskCUDA(const std::uint32_t *, TOut *, const MaskExtent &, TOut, TOut)
{
  NoCuda("UnpackMaskCUDA");
}

template <typename T>
void
ApplyPackedMaskCUDA(const T *, const std::uint32_t *, T *, const MaskExtent &, T)
{
  NoCuda("ApplyPackedMaskCUDA");
}

#  define CIF_INSTANTIATE_THRESHOLD_STUB(TIn, TOut)                                                                    \
    template void ThresholdCUDA<TIn, TOut>(const TIn *, TOut *, const ElementwiseGeometry &, TIn, TIn, TOut, TOut);
#  define CIF_INSTANTIATE_MASK_STUB(T)                                                                                 \
    CIF_THRESHOLD_OUTPUT_PIXELS_WITH(CIF_INSTANTIATE_THRESHOLD_STUB, T)                                                \
    template void ThresholdPackCUDA<T>(const T *, std::uint32_t *, const MaskExtent &, T, T);                          \
    template void UnpackMaskCUDA<T>(const std::uint32_t *, T *, const MaskExtent &, T, T);                             \
    template void ApplyPackedMaskCUDA<T>(const T *, const std::uint32_t *, T *, const MaskExtent &, T);
CIF_MASK_PIXELS(CIF_INSTANTIATE_MASK_STUB)
} // namespace cif
#endif
