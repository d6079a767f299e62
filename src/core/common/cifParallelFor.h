/*=========================================================================
 *  CudaImageFilters: a small work-sharing loop for the CPU cores (private
 *  to src/).
 *=========================================================================*/
#ifndef cifParallelFor_h
#define cifParallelFor_h

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace cif
{

/** Runs body(first, last) over [0, count) on up to `threads` threads, in
 * chunks taken from a shared counter (so uneven chunks balance). */
template <typename TBody>
void
ParallelFor(std::int64_t count, int threads, TBody body)
{
  if (count <= 0)
  {
    return;
  }
  threads = std::max(1, std::min<int>(threads, static_cast<int>(std::min<std::int64_t>(count, 256))));
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

} // namespace cif

#endif
