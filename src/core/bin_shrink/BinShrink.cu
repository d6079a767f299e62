/*=========================================================================
 *  CudaImageFilters: bin shrink on the GPU (cif/BinShrink.h). One thread
 *  per output pixel; each reads its bin once. Memory-bound: the input is
 *  read once and the output written once (bins are disjoint).
 *=========================================================================*/
#include "cifBinShrinkMath.h"
#include "cifPixelLists.h"
#include "cifCudaStream.h"

#include <cstdint>

namespace cif
{
namespace
{
template <typename T>
__global__ void
BinShrinkKernel(const T * __restrict__ input, T * __restrict__ output, BinShrinkGeometry g, double reciprocal)
{
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  const std::int64_t line = blockIdx.y + static_cast<std::int64_t>(gridDim.y) * blockIdx.z;
  if (i >= g.outputSize[0] || line >= g.outputSize[1] * g.outputSize[2])
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
  const std::int64_t lines = g.outputSize[1] * g.outputSize[2];
  const unsigned     threads = 128;
  // lines over y and z of the grid (each at most 65535)
  const std::int64_t gridY = lines < 65535 ? lines : 65535;
  const std::int64_t gridZ = (lines + gridY - 1) / gridY;
  if (gridZ > 65535)
  {
    throw CudaFailure(-1, "the output has more lines than the kernel's grid covers", "BinShrinkCUDA");
  }
  const dim3 grid(static_cast<unsigned>((g.outputSize[0] + threads - 1) / threads),
                  static_cast<unsigned>(gridY),
                  static_cast<unsigned>(gridZ));
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
