/*=========================================================================
 *  CudaImageFilters: anisotropic diffusion on the CPU (ITK's arithmetic),
 *  the checks and ITK's stability warnings.
 *=========================================================================*/
#include "cifAnisotropicDiffusionMath.h"
#include "cifParallelFor.h"
#include "cifPixelLists.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

namespace cif
{

double
AnisotropicDiffusionDefaultTimeStep(int dimension)
{
  return 0.5 / std::pow(2.0, static_cast<double>(dimension));
}

std::string
AnisotropicDiffusionWarning(const AnisotropicDiffusionParameters & p, const double spacing[3])
{
  std::ostringstream text;
  double             minSpacing = spacing[0];
  for (int a = 1; a < p.dimension && a < 3; ++a)
  {
    minSpacing = std::min(minSpacing, spacing[a]);
  }
  const double limit = minSpacing / std::pow(2.0, static_cast<double>(p.dimension) + 1);
  if (p.timeStep > limit)
  {
    text << "Anisotropic diffusion unstable time step: " << p.timeStep
         << "\nStable time step for this image must be smaller than " << limit;
  }
  if (p.kind == DiffusionKind::Curvature && p.timeStep > AnisotropicDiffusionDefaultTimeStep(p.dimension))
  {
    text << (text.tellp() > 0 ? "\n" : "")
         << "Anisotropic diffusion is using a time step which may introduce instability into the solution.";
  }
  return text.str();
}

std::string
ValidateAnisotropicDiffusionJob(const ClampedNeighborhoodGeometry & g, const AnisotropicDiffusionParameters & p)
{
  const std::string geometry = ValidateClampedNeighborhoodGeometry(g);
  if (!geometry.empty())
  {
    return geometry;
  }
  if (p.dimension < 1 || p.dimension > 3)
  {
    return "the dimension must be 1, 2 or 3";
  }
  if (p.iterations < 0 || p.interval < 1)
  {
    return "the iterations must not be negative and the conductance scaling update interval must be at least 1";
  }
  if (!std::isfinite(p.timeStep) || !std::isfinite(p.conductance) || !std::isfinite(p.fixedAverageGradientMagnitude))
  {
    return "the time step, the conductance and the fixed average gradient magnitude must be finite";
  }
  if (!p.fixedAverage && !g.OutputIsWholeInput())
  {
    return "the conductance is scaled by the average gradient magnitude of the whole image, so the output must "
           "be the whole input (or give a fixed average gradient magnitude)";
  }
  return {};
}

namespace
{
/** The diffusion of a whole buffer of T in place of ITK's dense finite
 * differences: `first` holds the image, `second` is work memory; returns
 * the buffer with the result. */
template <int D, typename T>
T *
Diffuse(T * first, T * second, const std::int64_t size[3], const AnisotropicDiffusionParameters & p, int threads,
        const Progress & progress)
{
  const std::int64_t lines = size[1] * size[2];
  const double       count = static_cast<double>(lines * size[0]);
  const double       scale[3] = { p.scale[0], p.scale[1], p.scale[2] };
  double             averageSquared = p.fixedAverage ? p.fixedAverageGradientMagnitude * p.fixedAverageGradientMagnitude : 0.0;
  std::vector<double> lineSums;
  T *                 current = first;
  T *                 next = second;
  for (int it = 0; it < p.iterations; ++it)
  {
    if (!p.fixedAverage && it % p.interval == 0)
    {
      lineSums.assign(static_cast<std::size_t>(lines), 0.0);
      ParallelFor(lines, threads, [&](std::int64_t l0, std::int64_t l1) {
        for (std::int64_t l = l0; l < l1; ++l)
        {
          double sum = 0.0;
          for (std::int64_t x = 0; x < size[0]; ++x)
          {
            const std::int64_t c[3] = { x, l % size[1], l / size[1] };
            const auto         s = diffusion::LoadStencil<T, D, false>(current + l * size[0] + x, diffusion::OffsetsAt(size, c));
            sum += diffusion::GradientMagnitudeSquared<D>(s, scale);
          }
          lineSums[static_cast<std::size_t>(l)] = sum;
        }
      });
      double total = 0.0;
      for (double s : lineSums)
      {
        total += s;
      }
      averageSquared = total / count;
    }
    const T k = diffusion::Conductance<T>(averageSquared, p.conductance);
    ParallelFor(lines, threads, [&](std::int64_t l0, std::int64_t l1) {
      for (std::int64_t l = l0; l < l1; ++l)
      {
        for (std::int64_t x = 0; x < size[0]; ++x)
        {
          const std::int64_t c[3] = { x, l % size[1], l / size[1] };
          const std::int64_t index = l * size[0] + x;
          const auto         s = diffusion::LoadStencil<T, D>(current + index, diffusion::OffsetsAt(size, c));
          const T            update = p.kind == DiffusionKind::Gradient ? diffusion::GradientUpdate<D, T, double>(s, scale, k)
                                                                        : diffusion::CurvatureUpdate<D, T, double>(s, scale, k);
          next[index] = diffusion::Apply(s.center, update, p.timeStep);
        }
      }
    });
    std::swap(current, next);
    if (progress)
    {
      progress(static_cast<double>(it + 1) / p.iterations);
    }
  }
  return current;
}
} // namespace

template <typename TIn, typename TOut>
void
AnisotropicDiffusionCPU(const TIn *                            input,
                        TOut *                                 output,
                        const ClampedNeighborhoodGeometry &    g,
                        const AnisotropicDiffusionParameters & p,
                        int                                    threads,
                        const Progress &                       progress)
{
  const std::string why = ValidateAnisotropicDiffusionJob(g, p);
  if (!why.empty())
  {
    throw std::invalid_argument("AnisotropicDiffusionCPU: " + why);
  }
  const bool         whole = g.OutputIsWholeInput();
  const std::int64_t n = g.InputCount();
  // the result lands in the output when it is the whole input
  std::vector<TOut> work(static_cast<std::size_t>(whole ? n : 2 * n));
  TOut *            a = whole ? output : work.data();
  TOut *            b = whole ? work.data() : work.data() + n;
  if (whole && p.iterations % 2 == 1)
  {
    std::swap(a, b); // the odd iteration writes `output`
  }
  ParallelFor(n, threads, [&](std::int64_t i0, std::int64_t i1) {
    for (std::int64_t i = i0; i < i1; ++i)
    {
      a[i] = static_cast<TOut>(input[i]);
    }
  });
  TOut * result = a;
  switch (p.dimension)
  {
    case 1:
      result = Diffuse<1>(a, b, g.inputSize, p, threads, progress);
      break;
    case 2:
      result = Diffuse<2>(a, b, g.inputSize, p, threads, progress);
      break;
    default:
      result = Diffuse<3>(a, b, g.inputSize, p, threads, progress);
      break;
  }
  if (!whole)
  {
    const std::int64_t lines = g.outputSize[1] * g.outputSize[2];
    ParallelFor(lines, threads, [&](std::int64_t l0, std::int64_t l1) {
      for (std::int64_t l = l0; l < l1; ++l)
      {
        const std::int64_t y = l % g.outputSize[1] + g.outputStart[1], z = l / g.outputSize[1] + g.outputStart[2];
        std::copy_n(result + (z * g.inputSize[1] + y) * g.inputSize[0] + g.outputStart[0], g.outputSize[0],
                    output + l * g.outputSize[0]);
      }
    });
  }
}

#define CIF_INSTANTIATE_DIFFUSION_CPU(TIn, TOut)                                                                       \
  template void AnisotropicDiffusionCPU<TIn, TOut>(                                                                    \
    const TIn *, TOut *, const ClampedNeighborhoodGeometry &, const AnisotropicDiffusionParameters &, int, const Progress &);
#define CIF_DIFFUSION_TO_FLOAT(T) CIF_INSTANTIATE_DIFFUSION_CPU(T, float)
CIF_INSTANTIATE_DIFFUSION_CPU(float, float)
CIF_INSTANTIATE_DIFFUSION_CPU(double, double)
CIF_FLOAT_OUTPUT_PIXELS(CIF_DIFFUSION_TO_FLOAT)

} // namespace cif
