/*=========================================================================
 *  CudaImageFilters: the median by radix select (RadixTile from a shared
 *  tile, RadixGlobal from global memory), per thread; host and device code.
 *=========================================================================*/
#ifndef cif_median_MedianRadix_h
#define cif_median_MedianRadix_h

#include "MedianCommon.h"

namespace cif
{
namespace median
{

// ===========================================================================
// Radix select
// ===========================================================================

/** Host and device view of a radix launch (physical axes, x fastest). */
struct RadixParams
{
  int  inSize[3];
  int  outStart[3]; ///< output origin relative to the input buffer
  int  outSize[3];
  int  blocks[3];
  int  radius[3];
  int  threads[3]; ///< block shape = outputs per block
  int  tile[3];    ///< RadixTile: tile shape in keys
  Word middle;     ///< N / 2: the rank of the median (N < 2^31)
};

/** The key of rank `middle` (0-based) among keys in [lowest, highest]:
 * bisection over the bits below the common prefix of the two bounds;
 * countLess(c) returns how many window keys are below c. */
template <class CountLess>
CIF_HD Word
RadixSelect(Word lowest, Word highest, Word middle, const CountLess & countLess)
{
  if (lowest == highest)
  {
    return lowest;
  }
  Word differing = lowest ^ highest;
  int  bits = 0; // bits below the common prefix
  while (differing != 0)
  {
    ++bits;
    differing >>= 1;
  }
  Word prefix = bits == 32 ? 0u : (lowest >> bits) << bits;
  for (int bit = bits - 1; bit >= 0; --bit)
  {
    const Word candidate = prefix | (1u << bit);
    if (countLess(candidate) <= middle)
    {
      prefix = candidate; // the median is at least the candidate
    }
  }
  return prefix;
}

/** RadixTile, first half: the keys of the block's tile, clamped. */
template <typename T>
CIF_HD void
RadixLoadTile(const RadixParams &         p,
              const T *                   input,
              typename Keys<T>::Storage * tile,
              const int                   origin[3],
              int                         warp,
              int                         lane,
              int                         warps)
{
  const int A = p.tile[0], rows = p.tile[1] * p.tile[2];
  for (int row = warp; row < rows; row += warps)
  {
    const int j = Clamp(origin[1] + row % p.tile[1], p.inSize[1]);
    const int k = Clamp(origin[2] + row / p.tile[1], p.inSize[2]);
    const T * line = input + (j + static_cast<std::int64_t>(k) * p.inSize[1]) * p.inSize[0];
    for (int i = lane; i < A; i += 32)
    {
      tile[i + row * A] =
        static_cast<typename Keys<T>::Storage>(Keys<T>::ToKey(line[Clamp(origin[0] + i, p.inSize[0])]));
    }
  }
}

/** RadixTile, second half: thread (t0, t1, t2) computes one output. */
template <typename T>
CIF_HD void
RadixTileThread(const RadixParams &               p,
                const typename Keys<T>::Storage * tile,
                T *                               output,
                const int                         firstOutput[3],
                int                               t0,
                int                               t1,
                int                               t2)
{
  const int o0 = firstOutput[0] + t0, o1 = firstOutput[1] + t1, o2 = firstOutput[2] + t2;
  if (o0 >= p.outSize[0] || o1 >= p.outSize[1] || o2 >= p.outSize[2])
  {
    return;
  }
  const int rowStride = p.tile[0], planeStride = p.tile[0] * p.tile[1];
  const int width = 2 * p.radius[0] + 1, height = 2 * p.radius[1] + 1, depth = 2 * p.radius[2] + 1;
  const typename Keys<T>::Storage * corner = tile + t0 + t1 * rowStride + t2 * planeStride;

  Word lowest = 0xFFFFFFFFu, highest = 0u;
  for (int k = 0; k < depth; ++k)
  {
    for (int j = 0; j < height; ++j)
    {
      const typename Keys<T>::Storage * row = corner + k * planeStride + j * rowStride;
      for (int i = 0; i < width; ++i)
      {
        const Word key = row[i];
        lowest = key < lowest ? key : lowest;
        highest = key > highest ? key : highest;
      }
    }
  }
  const auto countLess = [&](Word candidate)
  {
    Word count = 0;
    for (int k = 0; k < depth; ++k)
    {
      for (int j = 0; j < height; ++j)
      {
        const typename Keys<T>::Storage * row = corner + k * planeStride + j * rowStride;
        for (int i = 0; i < width; ++i)
        {
          count += Less<Keys<T>::Bits>(row[i], candidate);
        }
      }
    }
    return count;
  };
  const Word median = RadixSelect(lowest, highest, p.middle, countLess);
  output[o0 + p.outSize[0] * (o1 + static_cast<std::int64_t>(p.outSize[1]) * o2)] = Keys<T>::FromKey(median);
}

/** The window along one axis clamped to [0, size - 1]: indices first..last,
 * each standing for one window position except the two ends, which stand
 * for every position clamped onto them. */
struct ClampedSpan
{
  int first, last, firstWeight, lastWeight;
};

CIF_HD ClampedSpan
Span(int centre, int radius, int size)
{
  const int   from = centre - radius, to = centre + radius;
  ClampedSpan s;
  s.first = Clamp(from, size);
  s.last = Clamp(to, size);
  if (s.first == s.last)
  {
    s.firstWeight = 2 * radius + 1;
    s.lastWeight = 0;
  }
  else
  {
    s.firstWeight = s.first - from + 1;
    s.lastWeight = to - s.last + 1;
  }
  return s;
}

CIF_HD int
Weight(const ClampedSpan & s, int i)
{
  return i == s.first ? s.firstWeight : (i == s.last ? s.lastWeight : 1);
}

/** RadixGlobal: one output per thread, keys read from global memory over
 * the clamped window, each pixel counted with the product of its weights. */
template <typename T>
CIF_HD void
RadixGlobalThread(const RadixParams & p, const T * input, T * output, int o0, int o1, int o2)
{
  if (o0 >= p.outSize[0] || o1 >= p.outSize[1] || o2 >= p.outSize[2])
  {
    return;
  }
  const ClampedSpan sx = Span(p.outStart[0] + o0, p.radius[0], p.inSize[0]);
  const ClampedSpan sy = Span(p.outStart[1] + o1, p.radius[1], p.inSize[1]);
  const ClampedSpan sz = Span(p.outStart[2] + o2, p.radius[2], p.inSize[2]);

  Word lowest = 0xFFFFFFFFu, highest = 0u;
  for (int k = sz.first; k <= sz.last; ++k)
  {
    for (int j = sy.first; j <= sy.last; ++j)
    {
      const T * row = input + (j + static_cast<std::int64_t>(k) * p.inSize[1]) * p.inSize[0];
      for (int i = sx.first; i <= sx.last; ++i)
      {
        const Word key = Keys<T>::ToKey(row[i]);
        lowest = key < lowest ? key : lowest;
        highest = key > highest ? key : highest;
      }
    }
  }
  // Counts stay below the window size, under 2^31 (ValidateMedianJob).
  const auto countLess = [&](Word candidate)
  {
    Word count = 0;
    for (int k = sz.first; k <= sz.last; ++k)
    {
      for (int j = sy.first; j <= sy.last; ++j)
      {
        const T * row = input + (j + static_cast<std::int64_t>(k) * p.inSize[1]) * p.inSize[0];
        Word      inRow = 0;
        for (int i = sx.first + 1; i < sx.last; ++i)
        {
          inRow += Less<Keys<T>::Bits>(Keys<T>::ToKey(row[i]), candidate);
        }
        inRow += sx.firstWeight * Less<Keys<T>::Bits>(Keys<T>::ToKey(row[sx.first]), candidate);
        if (sx.last > sx.first)
        {
          inRow += sx.lastWeight * Less<Keys<T>::Bits>(Keys<T>::ToKey(row[sx.last]), candidate);
        }
        count += static_cast<Word>(Weight(sz, k) * Weight(sy, j)) * inRow;
      }
    }
    return count;
  };
  const Word median = RadixSelect(lowest, highest, p.middle, countLess);
  output[o0 + p.outSize[0] * (o1 + static_cast<std::int64_t>(p.outSize[1]) * o2)] = Keys<T>::FromKey(median);
}

} // namespace median
} // namespace cif

#endif
