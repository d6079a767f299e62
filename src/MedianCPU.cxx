/*=========================================================================
 *  CudaImageFilters: CPU core of the median filter.
 *
 *  Each output pixel gathers the keys of its window (indices clamped to the
 *  input buffer) and takes the middle one with std::nth_element, as
 *  itk::MedianImageFilter does on pixel values. Rows of the output are
 *  shared among threads.
 *=========================================================================*/
#include "cifMedian.h"
#include "cifMedianKernels.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

namespace cif
{

std::int64_t
MedianWindowSize(const MedianGeometry & g)
{
  std::int64_t n = 1;
  for (int a = 0; a < 3; ++a)
  {
    n *= 2 * g.radius[a] + 1;
  }
  return n;
}

std::string
ValidateMedianJob(const MedianGeometry & g)
{
  std::ostringstream why;
  for (int a = 0; a < 3; ++a)
  {
    if (g.inputSize[a] < 1 || g.outputSize[a] < 1)
    {
      why << "empty extent on axis " << a << " (input " << g.inputSize[a] << ", output " << g.outputSize[a] << ")";
      return why.str();
    }
    if (g.radius[a] < 0)
    {
      why << "negative radius " << g.radius[a] << " on axis " << a;
      return why.str();
    }
    // The kernels index along an axis with 32-bit integers.
    const double reach = std::fabs(static_cast<double>(g.outputStart[a])) + static_cast<double>(g.outputSize[a]) +
                         static_cast<double>(g.inputSize[a]) + 2.0 * static_cast<double>(g.radius[a]) + 4096.0;
    if (reach >= 2147483648.0)
    {
      why << "extents or radius beyond 2^31 pixels along axis " << a;
      return why.str();
    }
  }
  double window = 1.0;
  for (int a = 0; a < 3; ++a)
  {
    window *= 2.0 * static_cast<double>(g.radius[a]) + 1.0;
  }
  if (window > static_cast<double>(std::numeric_limits<std::int32_t>::max()))
  {
    why << "the window of radius " << g.radius[0] << "," << g.radius[1] << "," << g.radius[2] << " has " << window
        << " pixels, more than the supported 2^31 - 1";
    return why.str();
  }
  return {};
}

namespace
{

/** Runs body(first, last) over [0, count) split among threads. */
template <typename TBody>
void
ParallelFor(std::int64_t count, int threads, TBody body)
{
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

/** Medians of the output rows [first, last) (row = o1 + outSize1 * o2). */
template <typename T>
void
MedianRows(const T * input, T * output, const MedianGeometry & g, std::int64_t first, std::int64_t last)
{
  using Keys = median::Keys<T>;
  const std::int64_t         nx = g.inputSize[0], rx = g.radius[0];
  const std::int64_t         width = 2 * rx + 1;
  const std::int64_t         window = MedianWindowSize(g);
  std::vector<std::uint32_t> keys(static_cast<std::size_t>(window));
  std::vector<const T *>     rows;
  for (std::int64_t row = first; row < last; ++row)
  {
    const std::int64_t o1 = row % g.outputSize[1], o2 = row / g.outputSize[1];
    // the input rows of the window, clamped along y and z
    rows.clear();
    for (std::int64_t dz = -g.radius[2]; dz <= g.radius[2]; ++dz)
    {
      const std::int64_t z = median::Clamp(g.outputStart[2] + o2 + dz, g.inputSize[2]);
      for (std::int64_t dy = -g.radius[1]; dy <= g.radius[1]; ++dy)
      {
        const std::int64_t y = median::Clamp(g.outputStart[1] + o1 + dy, g.inputSize[1]);
        rows.push_back(input + (y + z * g.inputSize[1]) * nx);
      }
    }
    T * out = output + (o1 + o2 * g.outputSize[1]) * g.outputSize[0];
    for (std::int64_t o0 = 0; o0 < g.outputSize[0]; ++o0)
    {
      const std::int64_t x0 = g.outputStart[0] + o0 - rx;
      const bool         inside = x0 >= 0 && x0 + width <= nx;
      std::uint32_t *    k = keys.data();
      for (const T * r : rows)
      {
        if (inside)
        {
          for (std::int64_t i = 0; i < width; ++i)
          {
            *k++ = Keys::ToKey(r[x0 + i]);
          }
        }
        else
        {
          for (std::int64_t i = 0; i < width; ++i)
          {
            *k++ = Keys::ToKey(r[median::Clamp(x0 + i, nx)]);
          }
        }
      }
      std::nth_element(keys.begin(), keys.begin() + window / 2, keys.end());
      out[o0] = Keys::FromKey(keys[static_cast<std::size_t>(window / 2)]);
    }
  }
}

} // namespace

template <typename T>
void
MedianCPU(const T * input, T * output, const MedianGeometry & g, int numberOfThreads, const ProgressCallback & progress)
{
  const std::string why = ValidateMedianJob(g);
  if (!why.empty())
  {
    throw std::invalid_argument("MedianCPU: " + why);
  }
  // Ten stages, so that progress is reported from the calling thread.
  const std::int64_t rows = g.outputSize[1] * g.outputSize[2];
  const int          stages = static_cast<int>(std::min<std::int64_t>(rows, 10));
  for (int s = 0; s < stages; ++s)
  {
    const std::int64_t first = rows * s / stages, last = rows * (s + 1) / stages;
    ParallelFor(last - first,
                numberOfThreads,
                [&](std::int64_t a, std::int64_t b) { MedianRows(input, output, g, first + a, first + b); });
    if (progress)
    {
      progress((s + 1.0) / stages);
    }
  }
}

#define CIF_INSTANTIATE_MEDIAN_CPU(T)                                                                                  \
  template void MedianCPU<T>(const T *, T *, const MedianGeometry &, int, const ProgressCallback &);
CIF_INSTANTIATE_MEDIAN_CPU(unsigned char)
CIF_INSTANTIATE_MEDIAN_CPU(short)
CIF_INSTANTIATE_MEDIAN_CPU(unsigned short)
CIF_INSTANTIATE_MEDIAN_CPU(float)

} // namespace cif
