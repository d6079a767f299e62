/*=========================================================================
 *  CudaImageFilters: one bin's average, written once for both devices
 *  (private to src/core/bin_shrink).
 *=========================================================================*/
#ifndef cifBinShrinkMath_h
#define cifBinShrinkMath_h

#include "cif/BinShrink.h"

#include <cmath>
#include <type_traits>

#ifdef __CUDACC__
#  define CIF_BIN_HD __host__ __device__ __forceinline__
#else
#  define CIF_BIN_HD inline
#endif

namespace cif
{
namespace bin_shrink
{
/** Output pixel (i, j, k): the bin summed in double in raster order (as
 * ITK's BinShrinkImageFilter adds it), times the reciprocal of its size,
 * rounded half up for integer pixels (ITK's RoundIfInteger). */
template <typename T>
CIF_BIN_HD T
Bin(const T * input, const BinShrinkGeometry & g, double reciprocal, std::int64_t i, std::int64_t j, std::int64_t k)
{
  const std::int64_t x0 = g.inputOffset[0] + i * g.factor[0];
  const std::int64_t y0 = g.inputOffset[1] + j * g.factor[1];
  const std::int64_t z0 = g.inputOffset[2] + k * g.factor[2];
  double             sum = 0.0;
  for (int dz = 0; dz < g.factor[2]; ++dz)
  {
    for (int dy = 0; dy < g.factor[1]; ++dy)
    {
      const T * row = input + ((z0 + dz) * g.inputSize[1] + (y0 + dy)) * g.inputSize[0] + x0;
      for (int dx = 0; dx < g.factor[0]; ++dx)
      {
        sum += static_cast<double>(row[dx]);
      }
    }
  }
  const double mean = sum * reciprocal;
  if constexpr (std::is_integral<T>::value)
  {
    return static_cast<T>(floor(mean + 0.5));
  }
  else
  {
    return static_cast<T>(mean);
  }
}

/** 1 / (f0 f1 f2), as ITK computes it. */
CIF_BIN_HD double
Reciprocal(const BinShrinkGeometry & g)
{
  return 1.0 / static_cast<double>(static_cast<std::size_t>(g.factor[0]) * g.factor[1] * g.factor[2]);
}
} // namespace bin_shrink
} // namespace cif

#endif
