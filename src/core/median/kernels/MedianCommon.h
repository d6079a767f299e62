/*=========================================================================
 *  CudaImageFilters: what the median kernels share (private to
 *  src/core/median): integral floats, the branch-free comparison, clamping.
 *=========================================================================*/
#ifndef cif_median_MedianCommon_h
#define cif_median_MedianCommon_h

#include "cif/Median.h"
#include "cif/MedianKeys.h"

namespace cif
{
namespace median
{

/** Whether a float is an integer that a 16-bit key carries exactly after
 * subtracting the image's smallest one: finite, integral, not -0.0 (whose
 * sign would be lost), below 2^24 in magnitude. Float images holding only
 * such values within a span of 2^16 (CT and MR read as float) run the
 * median on 16-bit keys (MedianCUDA, MedianEmulateCUDA). */
CIF_HD bool
IntegralFloat(float v)
{
  const Word bits = FloatBits(v);
  return (bits & 0x7FFFFFFFu) < 0x4B800000u /* |v| < 2^24, not NaN */ && bits != 0x80000000u &&
         v == static_cast<float>(static_cast<int>(v));
}

/** key < candidate, as 0 or 1. For keys below 2^31 the borrow of the
 * difference is the answer (two instructions on the GPU). */
template <int Bits>
CIF_HD Word
Less(Word key, Word candidate)
{
  if constexpr (Bits < 32)
  {
    return (key - candidate) >> 31;
  }
  else
  {
    return key < candidate ? 1u : 0u;
  }
}

/** Coordinates along one axis are 32-bit: ValidateMedianJob keeps every
 * index a kernel forms (output start and size, radius, tile) below 2^31. */
CIF_HD int
Clamp(int i, int size)
{
  return i < 0 ? 0 : (i >= size ? size - 1 : i);
}

} // namespace median
} // namespace cif

#endif
