/*=========================================================================
 *  CudaImageFilters: bin shrink on the GPU (cif/BinShrink.h). One thread
 *  per output pixel; each reads its bin once. Memory-bound: the input is
 *  read once and the output written once (bins are disjoint).
 *=========================================================================*/
#include "cifBinShrinkMath.h"
#include "cifPixelLists.h"
#include "cifCudaStream.h"
#include "cifLineGrid.h"

#include <cstdint>

namespace cif
{
namespace
{
template <typename T>
__global__ void
BinShrinkKernel(const T * __restrict__ input, T * __restrict__ output, BinShrinkGeometry g, double reciprocal)
{
  std::int64_t i, line;
  if (!LineGridPixel(g.outputSize[0], g.outputSize[1] * g.outputSize[2], i, line))
  {
    return;
  }
  const std::int64_t j = line % g.outputSize[1], k = line / g.outputSize[1];
  output[line * g.outputSize[0] + i] = bin_shrink::Bin(input, g, reciprocal, i, j, k);
}
} // namespace

template <typename T>
void
BinShrinkCUDA(const T * input, T * output, const BinShrinkGeometry & g)
{
  const unsigned threads = 128;
  const dim3     grid = LineGrid(g.outputSize[0], g.outputSize[1] * g.outputSize[2], threads, "BinShrinkCUDA");
  BinShrinkKernel<T><<<grid, threads, 0, Stream()>>>(input, output, g, bin_shrink::Reciprocal(g));
  CIF_CUDA_CHECK_LAUNCH("BinShrinkKernel");
  CIF_CUDA_SYNCHRONIZE_STREAM();
}

bool
BinShrinkCUDAIsCompiled()
{
  return true;
}

#define CIF_INSTANTIATE(T) template void BinShrinkCUDA<T>(const T *, T *, const BinShrinkGeometry &);
CIF_BIN_SHRINK_PIXELS(CIF_INSTANTIATE)
#undef CIF_INSTANTIATE

} // namespace cif
