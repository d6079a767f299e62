/*=========================================================================
 *  CudaImageFilters: arithmetic shared by the CPU and GPU cores of GRBF
 *  interpolation (private to src/).
 *=========================================================================*/
#ifndef cifGaussianRBFDetail_h
#define cifGaussianRBFDetail_h

#include "cifGaussianRBF.h"

#include <type_traits>

#ifdef __CUDACC__
#  define CIF_GRBF_HD __host__ __device__
#else
#  define CIF_GRBF_HD
#endif

namespace cif
{

/** The type of the intermediate images between axis passes: float, double
 * for double images. */
template <typename T>
using GrbfIntermediate = typename std::conditional<std::is_same<T, double>::value, double, float>::type;

/** The output conversion: clamp to [lo, hi] and static_cast (ITK's
 * resampler); NaN stays NaN for floating-point types and becomes
 * `defaultValue` for integer types. */
template <typename T>
CIF_GRBF_HD inline T
GrbfConvertValue(double v, double lo, double hi, double defaultValue)
{
  if (v != v)
  {
    return std::is_floating_point<T>::value ? static_cast<T>(v) : static_cast<T>(defaultValue);
  }
  v = v < lo ? lo : (v > hi ? hi : v);
  return static_cast<T>(v);
}

template <typename T>
inline T
GrbfConvert(double v, const GrbfSeparableJob & job)
{
  return GrbfConvertValue<T>(v, job.outputMin, job.outputMax, job.defaultValue);
}

} // namespace cif

#endif
