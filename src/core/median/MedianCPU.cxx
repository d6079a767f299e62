/*=========================================================================
 *  CudaImageFilters: CPU core of the median filter.
 *
 *  Small windows, and float: each output pixel gathers the keys of its
 *  window (indices clamped to the input buffer) and takes the middle one
 *  with std::nth_element, as itk::MedianImageFilter does on pixel values.
 *  Windows of 64 pixels or more with 8- or 16-bit pixels: a histogram that
 *  slides along each row. Rows of the output are shared among threads.
 *=========================================================================*/
#include "cif/Median.h"
#include "cifPixelLists.h"
#include "cifParallelFor.h"
#include "cifMedianKernels.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <type_traits>
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

std::int64_t
ClampIndex(std::int64_t i, std::int64_t size)
{
  return i < 0 ? 0 : (i >= size ? size - 1 : i);
}

/** The input rows that the windows of output row (o1, o2) read, clamped
 * along y and z. */
template <typename T>
void
WindowRows(const T * input, const MedianGeometry & g, std::int64_t o1, std::int64_t o2, std::vector<const T *> & rows)
{
  rows.clear();
  for (std::int64_t dz = -g.radius[2]; dz <= g.radius[2]; ++dz)
  {
    const std::int64_t z = ClampIndex(g.outputStart[2] + o2 + dz, g.inputSize[2]);
    for (std::int64_t dy = -g.radius[1]; dy <= g.radius[1]; ++dy)
    {
      const std::int64_t y = ClampIndex(g.outputStart[1] + o1 + dy, g.inputSize[1]);
      rows.push_back(input + (y + z * g.inputSize[1]) * g.inputSize[0]);
    }
  }
}

/** Medians of the output rows [first, last) (row = o1 + outSize1 * o2): each
 * window's keys gathered and partially sorted with std::nth_element. */
template <typename T>
void
SelectRows(const T * input, T * output, const MedianGeometry & g, std::int64_t first, std::int64_t last)
{
  using Keys = median::Keys<T>;
  using Key = std::conditional_t<Keys::Bits <= 16, std::uint16_t, std::uint32_t>;
  const std::int64_t     nx = g.inputSize[0], rx = g.radius[0];
  const std::int64_t     width = 2 * rx + 1;
  const std::size_t      window = static_cast<std::size_t>(MedianWindowSize(g));
  std::vector<Key>       keys(window);
  std::vector<const T *> rows;
  for (std::int64_t row = first; row < last; ++row)
  {
    const std::int64_t o1 = row % g.outputSize[1], o2 = row / g.outputSize[1];
    WindowRows(input, g, o1, o2, rows);
    T * out = output + (o1 + o2 * g.outputSize[1]) * g.outputSize[0];
    for (std::int64_t o0 = 0; o0 < g.outputSize[0]; ++o0)
    {
      const std::int64_t x0 = g.outputStart[0] + o0 - rx;
      const bool         inside = x0 >= 0 && x0 + width <= nx;
      Key *              k = keys.data();
      for (const T * r : rows)
      {
        for (std::int64_t i = 0; i < width; ++i)
        {
          *k++ = static_cast<Key>(Keys::ToKey(r[inside ? x0 + i : ClampIndex(x0 + i, nx)]));
        }
      }
      std::nth_element(keys.begin(), keys.begin() + window / 2, keys.end());
      out[o0] = Keys::FromKey(keys[window / 2]);
    }
  }
}

/** The same for 8- and 16-bit keys with a sliding histogram along x (Huang
 * et al.): moving one pixel removes one column of the window and adds the
 * next, and the median is found by walking a two-level histogram (coarse
 * bins of the high half of the key bits, then the fine bins of one coarse
 * bin). Cost per output: 2 (2 ry + 1)(2 rz + 1) updates plus the walk,
 * instead of the whole window. */
template <typename T>
void
HistogramRows(const T * input, T * output, const MedianGeometry & g, std::int64_t first, std::int64_t last)
{
  using Keys = median::Keys<T>;
  constexpr int              half = Keys::Bits / 2;
  const std::int64_t         nx = g.inputSize[0], rx = g.radius[0];
  const std::uint32_t        middle = static_cast<std::uint32_t>(MedianWindowSize(g) / 2);
  std::vector<std::uint32_t> coarse(std::size_t{ 1 } << half, 0), fine(std::size_t{ 1 } << Keys::Bits, 0);
  std::vector<const T *>     rows;
  const auto                 column = [&](std::int64_t x, int change)
  {
    const std::int64_t c = ClampIndex(x, nx);
    for (const T * r : rows)
    {
      const std::uint32_t key = Keys::ToKey(r[c]);
      coarse[key >> half] += change;
      fine[key] += change;
    }
  };
  for (std::int64_t row = first; row < last; ++row)
  {
    const std::int64_t o1 = row % g.outputSize[1], o2 = row / g.outputSize[1];
    WindowRows(input, g, o1, o2, rows);
    T *                out = output + (o1 + o2 * g.outputSize[1]) * g.outputSize[0];
    const std::int64_t x0 = g.outputStart[0] - rx; // first column of the first window
    for (std::int64_t i = 0; i <= 2 * rx; ++i)
    {
      column(x0 + i, +1);
    }
    for (std::int64_t o0 = 0; o0 < g.outputSize[0]; ++o0)
    {
      if (o0 > 0)
      {
        column(x0 + o0 - 1, -1);
        column(x0 + o0 + 2 * rx, +1);
      }
      std::uint32_t below = 0, bin = 0;
      while (below + coarse[bin] <= middle)
      {
        below += coarse[bin++];
      }
      std::uint32_t key = bin << half;
      while (below + fine[key] <= middle)
      {
        below += fine[key++];
      }
      out[o0] = Keys::FromKey(key);
    }
    for (std::int64_t i = 0; i <= 2 * rx; ++i) // back to an empty histogram
    {
      column(x0 + g.outputSize[0] - 1 + i, -1);
    }
  }
}

/** Windows from this size on use the sliding histogram (8- and 16-bit keys). */
constexpr std::int64_t kHistogramFrom = 64;

template <typename T>
void
MedianRows(const T * input, T * output, const MedianGeometry & g, std::int64_t first, std::int64_t last)
{
  if constexpr (median::Keys<T>::Bits <= 16)
  {
    if (MedianWindowSize(g) >= kHistogramFrom)
    {
      HistogramRows(input, output, g, first, last);
      return;
    }
  }
  SelectRows(input, output, g, first, last);
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
CIF_MEDIAN_PIXELS(CIF_INSTANTIATE_MEDIAN_CPU)

} // namespace cif
