/*=========================================================================
 *  CudaImageFilters: helpers of the CPU cores of the clamp-to-edge
 *  neighbourhood filters (bilateral, rotating mask).
 *=========================================================================*/
#ifndef cifClampedNeighborhoodCPU_h
#define cifClampedNeighborhoodCPU_h

#include "cifParallelFor.h"
#include "cifClampedNeighborhood.h"

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

} // namespace clamped
} // namespace cif

#endif
