/*=========================================================================
 *  CudaImageFilters: the mask filter on the GPU (cif/Mask.h). One thread
 *  per output pixel: memory-bound, each image and mask pixel read once and
 *  each output pixel written once.
 *=========================================================================*/
#include "cifCudaStream.h"
#include "cifLineGrid.h"
#include "cifMaskMath.h"
#include "cifPixelLists.h"

#include <cstdint>

namespace cif
{
namespace
{
template <typename T, typename TMask>
__global__ void
MaskKernel(const T * __restrict__ input,
           const TMask * __restrict__ mask,
           T * __restrict__ output,
           MaskGeometry g,
           TMask        maskingValue,
           T            outsideValue)
{
  std::int64_t i, line;
  if (!LineGridPixel(g.outputSize[0], g.outputSize[1] * g.outputSize[2], i, line))
  {
    return;
  }
  const std::int64_t at = mask::InputLineOffset(g, line) + i;
  output[line * g.outputSize[0] + i] = mask::Masked(input[at], mask[at], maskingValue, outsideValue);
}
} // namespace

template <typename T, typename TMask>
void
MaskCUDA(const T * input, const TMask * mask, T * output, const MaskGeometry & g, TMask maskingValue, T outsideValue)
{
  const unsigned threads = 256;
  const dim3     grid = LineGrid(g.outputSize[0], g.outputSize[1] * g.outputSize[2], threads, "MaskCUDA");
  MaskKernel<T, TMask><<<grid, threads, 0, Stream()>>>(input, mask, output, g, maskingValue, outsideValue);
  CIF_CUDA_CHECK_LAUNCH("MaskKernel");
  CIF_CUDA_SYNCHRONIZE_STREAM();
}

bool
MaskCUDAIsCompiled()
{
  return true;
}

#define CIF_INSTANTIATE(T, TMask)                                                                                      \
  template void MaskCUDA<T, TMask>(const T *, const TMask *, T *, const MaskGeometry &, TMask, T);
#define CIF_INSTANTIATE_IMAGE(T) CIF_MASK_IMAGE_MASK_PIXELS_WITH(CIF_INSTANTIATE, T)
CIF_MASK_IMAGE_PIXELS(CIF_INSTANTIATE_IMAGE)
#undef CIF_INSTANTIATE_IMAGE
#undef CIF_INSTANTIATE

} // namespace cif
