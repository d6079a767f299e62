/*=========================================================================
 *  CudaImageFilters: CPU core of the box filters (mean, flat-box erosion).
 *
 *  Separable passes over lines (integer means, erosion) and, for
 *  floating-point means, a direct sum in ITK's offset order. Strided axes
 *  are processed a whole row of x at a time, so every cache line is used.
 *=========================================================================*/
#include "cif/BoxFilters.h"
#include "cifPixelLists.h"
#include "cifBoxPlan.h"
#include "cifParallelFor.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <type_traits>
#include <vector>

namespace cif
{

std::string
ValidateBoxJob(const BoxGeometry & g)
{
  std::ostringstream why;
  for (int a = 0; a < 3; ++a)
  {
    if (g.inputSize[a] < 1 || g.outputSize[a] < 1)
    {
      why << "empty extent on axis " << a << " (input " << g.inputSize[a] << ", output " << g.outputSize[a] << ")";
      break;
    }
    if (g.outputStart[a] < 0 || g.outputStart[a] + g.outputSize[a] > g.inputSize[a])
    {
      why << "the output [" << g.outputStart[a] << ", " << g.outputStart[a] + g.outputSize[a]
          << ") does not lie inside the input [0, " << g.inputSize[a] << ") on axis " << a;
      break;
    }
    if (g.radius[a] < 0)
    {
      why << "negative radius " << g.radius[a] << " on axis " << a;
      break;
    }
  }
  return why.str();
}

std::int64_t
BoxVolume(const BoxGeometry & g)
{
  return (2 * std::int64_t{ g.radius[0] } + 1) * (2 * std::int64_t{ g.radius[1] } + 1) *
         (2 * std::int64_t{ g.radius[2] } + 1);
}

namespace
{

inline std::int64_t
Clamp(std::int64_t i, std::int64_t n)
{
  return i < 0 ? 0 : (i >= n ? n - 1 : i);
}

/** Sum along one axis; the last pass divides by the box volume and converts. */
template <typename TAcc, typename TDst, bool VFinal>
struct SumOp
{
  using Acc = TAcc;
  double volume{ 1.0 };
  Acc
  Identity() const
  {
    return Acc{ 0 };
  }
  template <typename V>
  Acc
  Combine(Acc acc, V v) const
  {
    return acc + static_cast<Acc>(v);
  }
  TDst
  Finish(Acc acc, bool) const
  {
    if constexpr (VFinal)
    {
      return static_cast<TDst>(static_cast<double>(acc) / volume);
    }
    else
    {
      return static_cast<TDst>(acc);
    }
  }
};

/** NaN-ignoring minimum ("NaN" is the empty minimum of floating-point data). */
template <typename T>
inline T
MinCombine(T m, T v)
{
  if constexpr (std::is_floating_point<T>::value)
  {
    return (v < m || m != m) ? v : m;
  }
  else
  {
    return v < m ? v : m;
  }
}

template <typename T>
struct MinOp
{
  using Acc = T;
  T boundary{};
  Acc
  Identity() const
  {
    if constexpr (std::is_floating_point<T>::value)
    {
      return std::numeric_limits<T>::quiet_NaN();
    }
    else
    {
      return std::numeric_limits<T>::max();
    }
  }
  Acc
  Combine(Acc m, T v) const
  {
    return MinCombine(m, v);
  }
  T
  Finish(Acc m, bool crossesEdge) const
  {
    return crossesEdge ? MinCombine(m, boundary) : m;
  }
};

/** One separable pass (see BoxPass) with the reduction `op`. */
template <typename TSrc, typename TDst, typename TOp>
void
RunPass(const TSrc * src, TDst * dst, const BoxPass & p, const TOp & op, int threads)
{
  using Acc = typename TOp::Acc;
  const std::int64_t S0 = p.srcSize[0], S1 = p.srcSize[1], S2 = p.srcSize[2];
  const std::int64_t n = p.srcSize[p.axis];
  const int          r = p.radius;
  if (p.axis == 0)
  {
    ParallelFor(S1 * S2,
                threads,
                [&](std::int64_t first, std::int64_t last)
                {
                  for (std::int64_t row = first; row < last; ++row)
                  {
                    const TSrc * in = src + row * S0;
                    TDst *       out = dst + row * p.count;
                    for (std::int64_t i = 0; i < p.count; ++i)
                    {
                      const std::int64_t c = p.start + i;
                      Acc                acc = op.Identity();
                      if (c - r >= 0 && c + r < n)
                      {
                        for (std::int64_t j = c - r; j <= c + r; ++j)
                        {
                          acc = op.Combine(acc, in[j]);
                        }
                      }
                      else
                      {
                        for (std::int64_t j = c - r; j <= c + r; ++j)
                        {
                          acc = op.Combine(acc, in[Clamp(j, n)]);
                        }
                      }
                      out[i] = op.Finish(acc, c - r < 0 || c + r > n - 1);
                    }
                  }
                });
    return;
  }
  // y or z: whole rows of x at a time. A "line" is (other index, output index along the axis).
  const std::int64_t other = p.axis == 1 ? S2 : S1;
  const std::int64_t srcAxisStride = p.axis == 1 ? S0 : S0 * S1;
  const std::int64_t srcOtherStride = p.axis == 1 ? S0 * S1 : S0;
  const std::int64_t dstAxisStride = p.axis == 1 ? S0 : S0 * S1;
  const std::int64_t dstOtherStride = p.axis == 1 ? S0 * p.count : S0;
  ParallelFor(other * p.count,
              threads,
              [&](std::int64_t first, std::int64_t last)
              {
                std::vector<Acc> acc(static_cast<std::size_t>(S0));
                for (std::int64_t line = first; line < last; ++line)
                {
                  const std::int64_t o = line / p.count;
                  const std::int64_t i = line - o * p.count;
                  const std::int64_t c = p.start + i;
                  std::fill(acc.begin(), acc.end(), op.Identity());
                  for (std::int64_t j = c - r; j <= c + r; ++j)
                  {
                    const TSrc * in = src + o * srcOtherStride + Clamp(j, n) * srcAxisStride;
                    for (std::int64_t x = 0; x < S0; ++x)
                    {
                      acc[x] = op.Combine(acc[x], in[x]);
                    }
                  }
                  const bool crosses = c - r < 0 || c + r > n - 1;
                  TDst *     out = dst + o * dstOtherStride + i * dstAxisStride;
                  for (std::int64_t x = 0; x < S0; ++x)
                  {
                    out[x] = op.Finish(acc[x], crosses);
                  }
                }
              });
}

/** Runs the planned passes: TIn -> TAcc ... TAcc -> TOut. `makeOp<TDst, final>()` gives each pass's reduction. */
template <typename TIn, typename TAcc, typename TOut, typename TMakeOp>
void
RunSeparable(const TIn * input, TOut * output, const BoxGeometry & g, int threads, TMakeOp makeOp)
{
  const auto        passes = PlanBoxPasses(g);
  std::vector<TAcc> a, b;
  const TAcc *      src = nullptr;
  for (std::size_t k = 0; k < passes.size(); ++k)
  {
    const BoxPass &     p = passes[k];
    const bool          first = k == 0;
    const bool          last = k + 1 == passes.size();
    std::vector<TAcc> & target = (k % 2 == 0) ? a : b;
    if (!last)
    {
      target.resize(static_cast<std::size_t>(p.DstCount()));
    }
    if (first && last)
    {
      RunPass(input, output, p, makeOp(static_cast<TOut *>(nullptr), std::true_type{}), threads);
    }
    else if (first)
    {
      RunPass(input, target.data(), p, makeOp(static_cast<TAcc *>(nullptr), std::false_type{}), threads);
    }
    else if (last)
    {
      RunPass(src, output, p, makeOp(static_cast<TOut *>(nullptr), std::true_type{}), threads);
    }
    else
    {
      RunPass(src, target.data(), p, makeOp(static_cast<TAcc *>(nullptr), std::false_type{}), threads);
    }
    if (!last)
    {
      src = target.data();
    }
  }
}

/** Floating-point mean: for each output, sum += double(sample) over the box
 * in ITK's order (x fastest, then y, then z), from 0. Each output keeps its
 * own chain of additions, so the sums are ITK's bit for bit; a row of
 * outputs is advanced together, one box offset at a time. */
template <typename TIn, typename TOut>
void
DirectMean(const TIn * input, TOut * output, const BoxGeometry & g, int threads)
{
  const std::int64_t Sx = g.inputSize[0], Sy = g.inputSize[1], Sz = g.inputSize[2];
  const std::int64_t Ox = g.outputSize[0], Oy = g.outputSize[1], Oz = g.outputSize[2];
  const int          rx = g.radius[0], ry = g.radius[1], rz = g.radius[2];
  const double       volume = static_cast<double>(BoxVolume(g));
  ParallelFor(Oy * Oz,
              threads,
              [&](std::int64_t first, std::int64_t last)
              {
                std::vector<double> acc(static_cast<std::size_t>(Ox));
                for (std::int64_t row = first; row < last; ++row)
                {
                  const std::int64_t oz = row / Oy;
                  const std::int64_t oy = row - oz * Oy;
                  std::fill(acc.begin(), acc.end(), 0.0);
                  for (int dz = -rz; dz <= rz; ++dz)
                  {
                    const std::int64_t zs = Clamp(g.outputStart[2] + oz + dz, Sz);
                    for (int dy = -ry; dy <= ry; ++dy)
                    {
                      const std::int64_t ys = Clamp(g.outputStart[1] + oy + dy, Sy);
                      const TIn *        in = input + (zs * Sy + ys) * Sx;
                      for (int dx = -rx; dx <= rx; ++dx)
                      {
                        // outputs whose sample x0 + i + dx lies inside [0, Sx): i in [lo, hi)
                        const std::int64_t shift = g.outputStart[0] + dx;
                        const std::int64_t lo = std::min(Ox, std::max<std::int64_t>(0, -shift));
                        const std::int64_t hi = std::max(lo, std::min(Ox, Sx - shift));
                        for (std::int64_t i = 0; i < lo; ++i)
                        {
                          acc[i] += static_cast<double>(in[0]);
                        }
                        const TIn * shifted = in + shift;
                        for (std::int64_t i = lo; i < hi; ++i)
                        {
                          acc[i] += static_cast<double>(shifted[i]);
                        }
                        for (std::int64_t i = hi; i < Ox; ++i)
                        {
                          acc[i] += static_cast<double>(in[Sx - 1]);
                        }
                      }
                    }
                  }
                  TOut * out = output + row * Ox;
                  for (std::int64_t i = 0; i < Ox; ++i)
                  {
                    out[i] = static_cast<TOut>(acc[i] / volume);
                  }
                }
              });
}

} // namespace

template <typename TIn, typename TOut>
void
BoxMeanCPU(const TIn * input, TOut * output, const BoxGeometry & g, int numberOfThreads)
{
  if constexpr (std::is_floating_point<TIn>::value)
  {
    DirectMean(input, output, g, numberOfThreads);
  }
  else
  {
    // 32-bit sums when the box cannot overflow them (they vectorise twice as wide), else 64-bit: exact either way
    const double volume = static_cast<double>(BoxVolume(g));
    const double largest = std::max(std::fabs(static_cast<double>(std::numeric_limits<TIn>::lowest())),
                                    static_cast<double>(std::numeric_limits<TIn>::max()));
    auto         run = [&](auto accumulatorTag)
    {
      using TAcc = decltype(accumulatorTag);
      RunSeparable<TIn, TAcc, TOut>(input,
                                    output,
                                    g,
                                    numberOfThreads,
                                    [volume](auto * dstTag, auto finalTag)
                                    {
                                      using TDst = std::remove_pointer_t<decltype(dstTag)>;
                                      SumOp<TAcc, TDst, decltype(finalTag)::value> op;
                                      op.volume = volume;
                                      return op;
                                    });
    };
    if (largest * volume < 2147483647.0)
    {
      run(std::int32_t{});
    }
    else
    {
      run(std::int64_t{});
    }
  }
}

template <typename T>
void
BoxMinCPU(const T * input, T * output, const BoxGeometry & g, T boundary, int numberOfThreads)
{
  RunSeparable<T, T, T>(input,
                        output,
                        g,
                        numberOfThreads,
                        [boundary](auto *, auto)
                        {
                          MinOp<T> op;
                          op.boundary = boundary;
                          return op;
                        });
}

#define CIF_INSTANTIATE_BOX_MEAN_CPU(TIn, TOut)                                                                        \
  template void BoxMeanCPU<TIn, TOut>(const TIn *, TOut *, const BoxGeometry &, int);
#define CIF_BOX_MEAN_SAME(T) CIF_INSTANTIATE_BOX_MEAN_CPU(T, T)
#define CIF_BOX_MEAN_TO_FLOAT(T) CIF_INSTANTIATE_BOX_MEAN_CPU(T, float)
CIF_BOX_PIXELS(CIF_BOX_MEAN_SAME)
CIF_FLOAT_OUTPUT_PIXELS(CIF_BOX_MEAN_TO_FLOAT)

#define CIF_INSTANTIATE_BOX_MIN_CPU(T) template void BoxMinCPU<T>(const T *, T *, const BoxGeometry &, T, int);
CIF_BOX_PIXELS(CIF_INSTANTIATE_BOX_MIN_CPU)

} // namespace cif
