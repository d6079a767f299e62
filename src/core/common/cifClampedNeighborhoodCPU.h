/*=========================================================================
 *  CudaImageFilters: helpers of the CPU cores of the clamp-to-edge
 *  neighbourhood filters (bilateral, rotating mask).
 *=========================================================================*/
#ifndef cifClampedNeighborhoodCPU_h
#define cifClampedNeighborhoodCPU_h

#include "cifParallelFor.h"
#include "cif/ClampedNeighborhood.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace cif
{
namespace clamped
{

/** The module's work-sharing loop (cifParallelFor.h). */
using ::cif::ParallelFor;

/** Clamped positions start - radius ... start + size - 1 + radius on an axis of n samples. */
inline std::vector<std::int64_t>
ClampedIndices(std::int64_t start, std::int64_t size, int radius, std::int64_t n)
{
  std::vector<std::int64_t> index(static_cast<std::size_t>(size + 2 * radius));
  for (std::int64_t i = 0; i < size + 2 * radius; ++i)
  {
    index[static_cast<std::size_t>(i)] = std::min(std::max<std::int64_t>(start - radius + i, 0), n - 1);
  }
  return index;
}

/** Applies a filter `iterations` times: pass(source, target) with `input`
 * as the first source and the previous result after that, ping-ponging
 * between `output` and one temporary of `count` values so that the last
 * pass writes `output` (no temporary for one iteration). `progress`, when
 * set, gets the fraction done after each pass. */
template <typename TIn, typename TOut, typename TPass, typename TProgress>
void
IteratePasses(const TIn *       input,
              TOut *            output,
              std::int64_t      count,
              int               iterations,
              TPass &&          pass,
              const TProgress & progress)
{
  if (iterations == 1)
  {
    pass(input, output);
    if (progress)
    {
      progress(1.0);
    }
    return;
  }
  std::vector<TOut> temporary(static_cast<std::size_t>(count));
  const TOut *      previous = nullptr;
  for (int i = 0; i < iterations; ++i)
  {
    TOut * target = ((iterations - 1 - i) % 2 == 0) ? output : temporary.data();
    if (i == 0)
    {
      pass(input, target);
    }
    else
    {
      pass(previous, target);
    }
    previous = target;
    if (progress)
    {
      progress((i + 1.0) / iterations);
    }
  }
}

} // namespace clamped
} // namespace cif

#endif
