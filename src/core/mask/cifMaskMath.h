/*=========================================================================
 *  CudaImageFilters: the mask filter's rule, written once for both devices
 *  (private to src/core/mask).
 *=========================================================================*/
#ifndef cifMaskMath_h
#define cifMaskMath_h

#include "cif/Mask.h"

#ifdef __CUDACC__
#  define CIF_MASK_HD __host__ __device__ __forceinline__
#else
#  define CIF_MASK_HD inline
#endif

namespace cif
{
namespace mask
{
/** itk::Functor::MaskInput for an output of the input's type: the image's
 * pixel where the mask differs from the masking value (compared in the
 * mask's type, as ITK: NaN differs from everything), else the outside value. */
template <typename T, typename TMask>
CIF_MASK_HD T
Masked(T value, TMask mask, TMask maskingValue, T outsideValue)
{
  return mask != maskingValue ? value : outsideValue;
}

/** The input buffer's offset of output line `line` (y + ny z of the
 * output region). */
CIF_MASK_HD std::int64_t
InputLineOffset(const MaskGeometry & g, std::int64_t line)
{
  const std::int64_t j = line % g.outputSize[1], k = line / g.outputSize[1];
  return ((k + g.outputStart[2]) * g.inputSize[1] + (j + g.outputStart[1])) * g.inputSize[0] + g.outputStart[0];
}
} // namespace mask
} // namespace cif

#endif
