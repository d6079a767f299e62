/*=========================================================================
 *  CudaImageFilters: the mask filter on the CPU cores (cif/Mask.h).
 *=========================================================================*/
#include "cifMaskMath.h"
#include "cifParallelFor.h"
#include "cifPixelLists.h"

namespace cif
{

template <typename T, typename TMask>
void
MaskCPU(const T *            input,
        const TMask *        mask,
        T *                  output,
        const MaskGeometry & g,
        TMask                maskingValue,
        T                    outsideValue,
        int                  numberOfThreads)
{
  const std::int64_t lines = g.outputSize[1] * g.outputSize[2];
  ParallelFor(lines,
              numberOfThreads,
              [&](std::int64_t first, std::int64_t last)
              {
                for (std::int64_t line = first; line < last; ++line)
                {
                  const std::int64_t offset = mask::InputLineOffset(g, line);
                  const T *          in = input + offset;
                  const TMask *      m = mask + offset;
                  T *                out = output + line * g.outputSize[0];
                  for (std::int64_t i = 0; i < g.outputSize[0]; ++i)
                  {
                    out[i] = mask::Masked(in[i], m[i], maskingValue, outsideValue);
                  }
                }
              });
}

#define CIF_INSTANTIATE(T, TMask)                                                                                      \
  template void MaskCPU<T, TMask>(const T *, const TMask *, T *, const MaskGeometry &, TMask, T, int);
#define CIF_INSTANTIATE_IMAGE(T) CIF_MASK_IMAGE_MASK_PIXELS_WITH(CIF_INSTANTIATE, T)
CIF_MASK_IMAGE_PIXELS(CIF_INSTANTIATE_IMAGE)
#undef CIF_INSTANTIATE_IMAGE
#undef CIF_INSTANTIATE

} // namespace cif
