/*=========================================================================
 *  CudaImageFilters: the recursive Gaussian's GPU entry points in a build
 *  without nvcc (they say there is no GPU code).
 *=========================================================================*/
#include "cif/CudaError.h"
#include "cif/RecursiveGaussian.h"

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
#define CIF_INSTANTIATE_GRADIENT(T)                                                                                  \
  template void GradientRecursiveGaussianCUDA<T, float>(const T *, float *, const GradientRecursiveGaussianJob &);   \
  template void GradientRecursiveGaussianCUDA<T, double>(const T *, double *, const GradientRecursiveGaussianJob &);
CIF_INSTANTIATE_GRADIENT(std::uint8_t)
CIF_INSTANTIATE_GRADIENT(std::int16_t)
CIF_INSTANTIATE_GRADIENT(std::uint16_t)
CIF_INSTANTIATE_GRADIENT(float)
CIF_INSTANTIATE_GRADIENT(double)
#undef CIF_INSTANTIATE_GRADIENT

// the axis passes the smoothing uses (integers into float, float and
// double in place) and the integer and float images into double
#define CIF_INSTANTIATE_AXIS(TIN, TOUT) template void RecursiveGaussianAxisCUDA<TIN, TOUT>(const TIN *, TOUT *, const RecursiveGaussianAxisJob &);
#define CIF_INSTANTIATE(T) template void SmoothingRecursiveGaussianCUDA<T>(const T *, T *, const SmoothingRecursiveGaussianJob &);
CIF_INSTANTIATE(std::uint8_t)
CIF_INSTANTIATE(std::int16_t)
CIF_INSTANTIATE(std::uint16_t)
CIF_INSTANTIATE(float)
CIF_INSTANTIATE(double)
CIF_INSTANTIATE_AXIS(std::uint8_t, std::uint8_t)
CIF_INSTANTIATE_AXIS(std::uint8_t, float)
CIF_INSTANTIATE_AXIS(std::uint8_t, double)
CIF_INSTANTIATE_AXIS(std::int16_t, std::int16_t)
CIF_INSTANTIATE_AXIS(std::int16_t, float)
CIF_INSTANTIATE_AXIS(std::int16_t, double)
CIF_INSTANTIATE_AXIS(std::uint16_t, std::uint16_t)
CIF_INSTANTIATE_AXIS(std::uint16_t, float)
CIF_INSTANTIATE_AXIS(std::uint16_t, double)
CIF_INSTANTIATE_AXIS(float, float)
CIF_INSTANTIATE_AXIS(float, double)
CIF_INSTANTIATE_AXIS(double, double)
#undef CIF_INSTANTIATE
#undef CIF_INSTANTIATE_AXIS
} // namespace cif
#endif
