/*=========================================================================
 *  CudaImageFilters: the recursive Gaussian's GPU entry points in a build
 *  without nvcc (they say there is no GPU code).
 *=========================================================================*/
#include "cif/CudaError.h"
#include "cif/RecursiveGaussian.h"
#include "cifRecursiveGaussianLine.h"

#include <cstdint>

#ifndef CUDAIMAGEFILTERS_WITH_CUDA
namespace cif
{
bool
RecursiveGaussianCUDAIsCompiled()
{
  return false;
}

template <typename TIn, typename TOut>
void
RecursiveGaussianAxisCUDA(const TIn *, TOut *, const RecursiveGaussianAxisJob &)
{
  throw CudaFailure(-1, "CudaImageFilters was built without CUDA", "RecursiveGaussianAxisCUDA");
}

template <typename T>
void
SmoothingRecursiveGaussianCUDA(const T *, T *, const SmoothingRecursiveGaussianJob &)
{
  throw CudaFailure(-1, "CudaImageFilters was built without CUDA", "SmoothingRecursiveGaussianCUDA");
}

template <typename T, typename TOut>
void
GradientRecursiveGaussianCUDA(const T *, TOut *, const GradientRecursiveGaussianJob &)
{
  throw CudaFailure(-1, "CudaImageFilters was built without CUDA", "GradientRecursiveGaussianCUDA");
}
CIF_RECURSIVE_GAUSSIAN_CUDA_INSTANTIATIONS
} // namespace cif
#endif
