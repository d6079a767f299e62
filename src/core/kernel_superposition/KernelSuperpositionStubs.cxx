/*=========================================================================
 *  CudaImageFilters: the kernel superposition core's GPU entry points in a
 *  build without nvcc (they say there is no GPU code).
 *=========================================================================*/
#include "cif/CudaError.h"
#include "cif/KernelSuperposition.h"
#include "cifPixelLists.h"

#ifndef CUDAIMAGEFILTERS_WITH_CUDA
namespace cif
{
bool
KernelSuperpositionCUDAIsCompiled()
{
  return false;
}

KernelSuperpositionRadius
KernelSuperpositionLargestRadiusCUDA(const SigmaMaps<float> &,
                                     const KernelSuperpositionGeometry &,
                                     const KernelSuperpositionParameters &)
{
  throw CudaFailure(-1, "CudaImageFilters was built without CUDA", "KernelSuperpositionLargestRadiusCUDA");
}

template <typename TIn>
std::string
KernelSuperpositionCUDA(const TIn *,
                        const SigmaMaps<float> &,
                        float *,
                        const KernelSuperpositionGeometry &,
                        const KernelSuperpositionParameters &)
{
  throw CudaFailure(-1, "CudaImageFilters was built without CUDA", "KernelSuperpositionCUDA");
}

#  define CIF_INSTANTIATE_KS_STUB(TIn)                                                                                 \
    template std::string KernelSuperpositionCUDA<TIn>(const TIn *,                                                     \
                                                      const SigmaMaps<float> &,                                        \
                                                      float *,                                                         \
                                                      const KernelSuperpositionGeometry &,                             \
                                                      const KernelSuperpositionParameters &);
CIF_KERNEL_SUPERPOSITION_GPU_PIXELS(CIF_INSTANTIATE_KS_STUB)
} // namespace cif
#endif
