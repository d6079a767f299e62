/*=========================================================================
 *  CudaImageFilters: CPU core of the rotating-mask (Nagao-Matsuyama) filter.
 *
 *  Rows of the output are shared among threads; every sample is evaluated
 *  by the arithmetic that the CUDA kernel uses (cifRotatingMaskMath.h).
 *=========================================================================*/
#include "cif/RotatingMask.h"
#include "cifPixelLists.h"
#include "cifClampedNeighborhoodCPU.h"
#include "cifRotatingMaskMath.h"

#include <sstream>
#include <stdexcept>
#include <vector>

namespace cif
{

std::string
ValidateRotatingMaskJob(const ClampedNeighborhoodGeometry & g, const RotatingMaskParameters & p)
{
  const std::string why = ValidateClampedNeighborhoodGeometry(g);
  if (!why.empty())
  {
    return why;
  }
  if (p.dimension != 2 && p.dimension != 3)
  {
    return "the rotating mask is defined for 2 or 3 dimensions, not " + std::to_string(p.dimension);
  }
  if (p.iterations < 1)
  {
    return "the number of iterations must be at least 1, not " + std::to_string(p.iterations);
  }
  if (p.iterations > 1 && !g.OutputIsWholeInput())
  {
    return "more than one iteration needs the whole image as input and output";
  }
  return {};
}

namespace
{

/** One pass: dst (the output box) from src (the input box). */
template <typename TSrc, typename TDst>
void
Pass(const TSrc * src, TDst * dst, const ClampedNeighborhoodGeometry & g, int dimension, int threads)
{
  using A = rotating_mask::Arithmetic<TSrc>;
  constexpr int      r = RotatingMaskRadius;
  const int          rz = dimension == 3 ? r : 0;
  const std::int64_t nx = g.inputSize[0], ny = g.inputSize[1], nz = g.inputSize[2];
  const auto         xi = clamped::ClampedIndices(g.outputStart[0], g.outputSize[0], r, nx);
  const auto         yi = clamped::ClampedIndices(g.outputStart[1], g.outputSize[1], r, ny);
  const auto         zi = clamped::ClampedIndices(g.outputStart[2], g.outputSize[2], rz, nz);
  const std::int64_t rows = g.outputSize[1] * g.outputSize[2];
  clamped::ParallelFor(rows,
                       threads,
                       [&](std::int64_t first, std::int64_t last)
                       {
                         const TSrc * row[5][5]; // [dz + 2][dy + 2]
                         for (std::int64_t k = first; k < last; ++k)
                         {
                           const std::int64_t y = k % g.outputSize[1], z = k / g.outputSize[1];
                           for (int dz = -rz; dz <= rz; ++dz)
                           {
                             for (int dy = -r; dy <= r; ++dy)
                             {
                               row[dz + 2][dy + 2] = src + (zi[z + rz + dz] * ny + yi[y + r + dy]) * nx;
                             }
                           }
                           TDst * out = dst + k * g.outputSize[0];
                           for (std::int64_t x = 0; x < g.outputSize[0]; ++x)
                           {
                             const std::int64_t * xc = xi.data() + x + r;
                             const auto           fetch = [&](int dx, int dy, int dz)
                             { return A::Load(row[dz + 2][dy + 2][xc[dx]]); };
                             out[x] = dimension == 3 ? rotating_mask::Evaluate3D<TSrc, TDst>(fetch)
                                                     : rotating_mask::Evaluate2D<TSrc, TDst>(fetch);
                           }
                         }
                       });
}

} // namespace

template <typename TIn, typename TOut>
void
RotatingMaskCPU(const TIn *                         input,
                TOut *                              output,
                const ClampedNeighborhoodGeometry & g,
                const RotatingMaskParameters &      p,
                int                                 threads,
                const RotatingMaskProgress &        progress)
{
  const std::string why = ValidateRotatingMaskJob(g, p);
  if (!why.empty())
  {
    throw std::invalid_argument("RotatingMaskCPU: " + why);
  }
  clamped::IteratePasses(
    input,
    output,
    g.OutputCount(),
    p.iterations,
    [&](const auto * source, TOut * target) { Pass(source, target, g, p.dimension, threads); },
    progress);
}

#define CIF_INSTANTIATE_ROTATING_MASK_CPU(TIn, TOut)                                                                   \
  template void RotatingMaskCPU<TIn, TOut>(const TIn *,                                                                \
                                           TOut *,                                                                     \
                                           const ClampedNeighborhoodGeometry &,                                        \
                                           const RotatingMaskParameters &,                                             \
                                           int,                                                                        \
                                           const RotatingMaskProgress &);
#define CIF_INSTANTIATE_ROTATING_MASK_CPU_IN(TIn)                                                                      \
  CIF_INSTANTIATE_ROTATING_MASK_CPU(TIn, TIn)                                                                          \
  CIF_INSTANTIATE_ROTATING_MASK_CPU(TIn, float)                                                                        \
  CIF_INSTANTIATE_ROTATING_MASK_CPU(TIn, double)

CIF_INTEGER_PIXELS(CIF_INSTANTIATE_ROTATING_MASK_CPU_IN)
CIF_EXTRA_CPU_PIXELS(CIF_INSTANTIATE_ROTATING_MASK_CPU_IN)
CIF_INSTANTIATE_ROTATING_MASK_CPU(float, float)
CIF_INSTANTIATE_ROTATING_MASK_CPU(float, double)
CIF_INSTANTIATE_ROTATING_MASK_CPU(double, float)
CIF_INSTANTIATE_ROTATING_MASK_CPU(double, double)

} // namespace cif
