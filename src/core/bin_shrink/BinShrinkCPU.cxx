/*=========================================================================
 *  CudaImageFilters: bin shrink on the CPU cores (cif/BinShrink.h).
 *=========================================================================*/
#include "cifBinShrinkMath.h"
#include "cifPixelLists.h"
#include "cifParallelFor.h"

#include <cstdint>
#include <sstream>

namespace cif
{

std::string
ValidateBinShrinkJob(const BinShrinkGeometry & g)
{
  for (int a = 0; a < 3; ++a)
  {
    if (g.factor[a] < 1)
    {
      return "the shrink factors must be at least 1";
    }
    if (g.inputSize[a] < 1 || g.outputSize[a] < 1 || g.inputOffset[a] < 0 ||
        g.inputOffset[a] + g.outputSize[a] * g.factor[a] > g.inputSize[a])
    {
      std::ostringstream why;
      why << "the bins of " << g.outputSize[a] << " output pixels of factor " << g.factor[a] << " from offset "
          << g.inputOffset[a] << " leave the input's " << g.inputSize[a] << " pixels along axis " << a;
      return why.str();
    }
  }
  return {};
}

template <typename T>
void
BinShrinkCPU(const T * input, T * output, const BinShrinkGeometry & g, int numberOfThreads)
{
  const double       reciprocal = bin_shrink::Reciprocal(g);
  const std::int64_t lines = g.outputSize[1] * g.outputSize[2];
  ParallelFor(lines,
              numberOfThreads,
              [&](std::int64_t first, std::int64_t last)
              {
                for (std::int64_t line = first; line < last; ++line)
                {
                  const std::int64_t j = line % g.outputSize[1], k = line / g.outputSize[1];
                  T *                out = output + line * g.outputSize[0];
                  for (std::int64_t i = 0; i < g.outputSize[0]; ++i)
                  {
                    out[i] = bin_shrink::Bin(input, g, reciprocal, i, j, k);
                  }
                }
              });
}

#define CIF_INSTANTIATE(T) template void BinShrinkCPU<T>(const T *, T *, const BinShrinkGeometry &, int);
CIF_BIN_SHRINK_PIXELS(CIF_INSTANTIATE)
#undef CIF_INSTANTIATE

} // namespace cif
