/*=========================================================================
 *  CudaImageFilters: helpers of the CPU cores of the clamp-to-edge
 *  neighbourhood filters (bilateral, rotating mask).
 *=========================================================================*/
#ifndef cifClampedNeighborhoodCPU_h
#define cifClampedNeighborhoodCPU_h

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

/** Runs body(first, last) over [0, count) in chunks shared among threads. */
template <typename TBody>
void
ParallelFor(std::int64_t count, int threads, TBody body)
{
  threads = std::max(1, std::min<int>(threads, static_cast<int>(std::min<std::int64_t>(count, 1024))));
  if (threads == 1)
  {
    body(std::int64_t{ 0 }, count);
    return;
  }
  std::vector<std::thread>  pool;
  std::atomic<std::int64_t> next{ 0 };
  const std::int64_t        chunk = std::max<std::int64_t>(1, count / (threads * 8));
  for (int t = 0; t < threads; ++t)
  {
    pool.emplace_back(
      [&]
      {
        for (;;)
        {
          const std::int64_t first = next.fetch_add(chunk);
          if (first >= count)
          {
            return;
          }
          body(first, std::min(count, first + chunk));
        }
      });
  }
  for (auto & th : pool)
  {
    th.join();
  }
}

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
