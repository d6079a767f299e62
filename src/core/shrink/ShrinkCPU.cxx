/*=========================================================================
 *  CudaImageFilters: shrink by subsampling on the CPU cores
 *  (cif/Shrink.h).
 *=========================================================================*/
#include "cif/Shrink.h"
#include "cifPixelLists.h"
#include "cifParallelFor.h"

#include <cstdint>
#include <sstream>

namespace cif
{

std::string
ValidateShrinkJob(const ShrinkGeometry & g)
{
  for (int a = 0; a < 3; ++a)
  {
    if (g.factor[a] < 1)
    {
      return "the shrink factors must be at least 1";
    }
    if (g.inputSize[a] < 1 || g.outputSize[a] < 1 || g.inputOffset[a] < 0 ||
        g.inputOffset[a] + (g.outputSize[a] - 1) * g.factor[a] >= g.inputSize[a])
    {
      std::ostringstream why;
      why << "the " << g.outputSize[a] << " output pixels of factor " << g.factor[a] << " from offset "
          << g.inputOffset[a] << " leave the input's " << g.inputSize[a] << " pixels along axis " << a;
      return why.str();
    }
  }
  return {};
}

std::int64_t
ShrinkFirstIndex(std::int64_t n, std::int64_t f)
{
  const std::int64_t m = n / f < 1 ? 1 : n / f;
  return (n - f * (m - 1)) / 2;
}

template <typename T>
void
ShrinkCPU(const T * input, T * output, const ShrinkGeometry & g, int numberOfThreads)
{
  const std::int64_t lines = g.outputSize[1] * g.outputSize[2];
  ParallelFor(lines,
              numberOfThreads,
              [&](std::int64_t first, std::int64_t last)
              {
                for (std::int64_t line = first; line < last; ++line)
                {
                  const std::int64_t j = line % g.outputSize[1], k = line / g.outputSize[1];
                  const T * in = input + ((g.inputOffset[2] + k * g.factor[2]) * g.inputSize[1] +
                                          g.inputOffset[1] + j * g.factor[1]) *
                                           g.inputSize[0] +
                                 g.inputOffset[0];
                  T * out = output + line * g.outputSize[0];
                  for (std::int64_t i = 0; i < g.outputSize[0]; ++i)
                  {
                    out[i] = in[i * g.factor[0]];
                  }
                }
              });
}

#define CIF_INSTANTIATE(T) template void ShrinkCPU<T>(const T *, T *, const ShrinkGeometry &, int);
CIF_CORE_PIXELS(CIF_INSTANTIATE)
#undef CIF_INSTANTIATE

} // namespace cif
