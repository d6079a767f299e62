/*=========================================================================
 *  CudaImageFilters: ITK's static_cast of a double result into an output
 *  pixel as ITK's x86-64 build performs it (private to src/, host and
 *  device): a cast for real outputs; for integer outputs the truncation
 *  through a 32-bit int that x86-64 code does (so both devices give ITK's
 *  value, wrap-around included). The recursive and the discrete Gaussian
 *  cores write their outputs through it.
 *=========================================================================*/
#ifndef cifItkCast_h
#define cifItkCast_h

#include <cstdint>
#include <type_traits>

#ifdef __CUDACC__
#  define CIF_ITK_CAST_HD __host__ __device__ __forceinline__
#else
#  define CIF_ITK_CAST_HD inline
#endif

namespace cif
{
template <typename TOut>
CIF_ITK_CAST_HD TOut
ItkCast(double v)
{
  if constexpr (std::is_floating_point<TOut>::value)
  {
    return static_cast<TOut>(v);
  }
  else
  {
    return static_cast<TOut>(static_cast<std::int32_t>(v));
  }
}
} // namespace cif

#endif
