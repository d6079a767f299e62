/*=========================================================================
 *  CudaImageFilters: the median by sliding histograms (one warp per line
 *  segment, counters in shared memory, levels of digits), per warp; host
 *  and device code.
 *=========================================================================*/
#ifndef cif_median_MedianSlidingHistogram_h
#define cif_median_MedianSlidingHistogram_h

#include "MedianCommon.h"

namespace cif
{
namespace median
{

// ===========================================================================
// Sliding histogram
// ===========================================================================

/** Host and device view of a sliding-histogram launch. The axes are
 * logical: 0 is x, 2 the axis the windows slide along, 1 the remaining one.
 * One warp serves one segment of one line along axis 2; a block's warps
 * serve neighbouring x, so they read the same planes.
 *
 * Keys are counted relative to `base`, the input's smallest key, by
 * digits of at most 12 bits: one level when the keys span fewer than 4096
 * values, else one launch per level from the top digit down (a 16-bit span:
 * 4 + 12 bits; a 32-bit one: 8 + 12 + 12). Counters are 16 bits, two to a
 * word, so windows have fewer than 2^16 pixels. */
struct SlidingParams
{
  int          inSize[3];
  std::int64_t inStride[3]; ///< inStride[0] is 1: x stays the contiguous axis
  int          outStart[3]; ///< output origin relative to the input buffer
  int          outSize[3];
  std::int64_t outStride[3];
  int          radius[3];
  int          segment;  ///< outputs per warp along axis 2
  int          segments; ///< segments per line, ceil(outSize[2] / segment)
  int          warps;    ///< warps per block, along x
  int          blocksX;  ///< ceil(outSize[0] / warps)
  Word         middle;   ///< N / 2: the rank of the median
  Word         base;     ///< the smallest key of the input
  int          shift;    ///< this level's digit: ((key - base) >> shift) & (2^bits - 1)
  int          bits;     ///< this level's digit width, 0 (all keys equal) to 12
  int          spanBits; ///< bits of the largest key - base: no prefix above them
  int          counters; ///< counters per warp (a multiple of 64, at least the digits)
};

/** The warp's scalars in shared memory, followed by its counters. `median`
 * is the median's digit at the last step, `under` the counted pixels with a
 * smaller digit (Huang's running count); below the first level, `matched`
 * counts all counted pixels and `below` counts the pixels whose prefix is below
 * the current `prefix` (not counted by digit). */
struct SlidingHeader
{
  Word median;
  Word under;
  Word matched;
  Word below;
  Word prefix;
  Word pad[3];
};
constexpr int kSlidingHeaderWords = sizeof(SlidingHeader) / sizeof(Word);

/** Shared memory of one warp, in 32-bit words. */
CIF_HD int
SlidingWarpWords(const SlidingParams & p)
{
  return kSlidingHeaderWords + p.counters / 2;
}

/** Counter of digit d (16-bit halves). */
CIF_HD Word
SlidingCountOf(const Word * counts, int d)
{
  return (counts[d >> 1] >> (16 * (d & 1))) & 0xFFFFu;
}

/** Whether this level counts only the keys under a prefix (the digits the
 * earlier levels found), and that prefix of a key. */
CIF_HD bool
SlidingPrefixed(const SlidingParams & p)
{
  return p.shift + p.bits < p.spanBits;
}
CIF_HD Word
SlidingPrefix(const SlidingParams & p, Word key)
{
  return SlidingPrefixed(p) ? (key - p.base) >> (p.shift + p.bits) : 0u;
}

CIF_HD void
AtomicAddWord(Word * target, Word value)
{
#ifdef __CUDA_ARCH__
  atomicAdd(target, value);
#else
  *target += value;
#endif
}

/** A key of the output buffer's width at p; memcpy keeps the host
 * emulation free of type punning on the output buffer. */
template <typename S>
CIF_HD Word
LoadKey(const void * p)
{
#ifdef __CUDA_ARCH__
  return *static_cast<const S *>(p);
#else
  S s;
  std::memcpy(&s, p, sizeof s);
  return s;
#endif
}
template <typename S>
CIF_HD void
StoreKey(void * p, Word key)
{
#ifdef __CUDA_ARCH__
  *static_cast<S *>(p) = static_cast<S>(key);
#else
  const S s = static_cast<S>(key);
  std::memcpy(p, &s, sizeof s);
#endif
}

/** The warp's line and segment: block b serves x block b % blocksX, line
 * (b / blocksX) % outSize[1], segment b / (blocksX outSize[1]). */
CIF_HD void
SlidingPlace(const SlidingParams & p, unsigned block, int warp, int & o0, int & o1, int & zBegin, int & zEnd)
{
  const int bx = static_cast<int>(block % static_cast<unsigned>(p.blocksX));
  const int rest = static_cast<int>(block / static_cast<unsigned>(p.blocksX));
  o0 = bx * p.warps + warp;
  o1 = rest % p.outSize[1];
  zBegin = rest / p.outSize[1] * p.segment;
  zEnd = zBegin + p.segment < p.outSize[2] ? zBegin + p.segment : p.outSize[2];
}

/** Where the warp stands at output z of its segment: the output's offset,
 * (below the first level) the digits the earlier levels found, relative to
 * the base, and their prefix, and whether the
 * counters must be rebuilt: at the segment's first output, or where the
 * prefix changes. */
struct SlidingStep
{
  std::int64_t out;
  Word         partial;
  Word         wanted;
  bool         rebuild;
};

template <typename T>
CIF_HD SlidingStep
SlidingBegin(const SlidingParams & p, const T * output, const SlidingHeader & h, int o0, int o1, int z, int zBegin)
{
  using Storage = typename Keys<T>::Storage;
  static_assert(sizeof(Storage) == sizeof(T), "levels keep their keys in the output buffer");
  const bool  prefixed = SlidingPrefixed(p);
  SlidingStep s;
  s.out = o0 * p.outStride[0] + o1 * p.outStride[1] + z * p.outStride[2];
  s.partial = prefixed ? LoadKey<Storage>(output + s.out) : 0u; // key - base, digits found so far
  s.wanted = prefixed ? s.partial >> (p.shift + p.bits) : 0u;
  s.rebuild = z == zBegin || s.wanted != h.prefix;
  return s;
}

/** Phase 1, every lane: on a rebuild, zero the counters (lane 0 the scalars). */
CIF_HD void
SlidingClear(const SlidingParams & p, SlidingHeader & h, Word * counts, const SlidingStep & s, int lane)
{
  if (!s.rebuild)
  {
    return;
  }
  const int words = p.counters / 2;
  for (int d = lane; d < words; d += 32)
  {
    counts[d] = 0;
  }
  if (lane == 0)
  {
    h.median = h.under = h.matched = h.below = 0;
  }
}

/** Calls visit(key, delta) for this lane's share (every 32nd pixel) of the
 * planes that enter (+1) and leave (-1) the window at output z, or of the
 * whole window (+1) on a rebuild. `across` lanes cover a row (columns c,
 * c + 32, ...) and the warp takes `together` rows at a time, so a lane's x
 * offset stays fixed; kSlidingBatch loads are issued before their visits,
 * to overlap them. */
constexpr int kSlidingBatch = 4;

template <typename T, class Visit>
CIF_HD void
SlidingVisit(const SlidingParams & p, const T * input, bool rebuild, int o0, int o1, int z, int lane, Visit && visit)
{
  const int x = p.outStart[0] + o0, y = p.outStart[1] + o1, zc = p.outStart[2] + z;
  const int rx = p.radius[0], ry = p.radius[1], rz = p.radius[2];
  const int width = 2 * rx + 1, height = 2 * ry + 1;
  const int leaving = Clamp(zc - rz - 1, p.inSize[2]), entering = Clamp(zc + rz, p.inSize[2]);
  const int planes = rebuild ? 2 * rz + 1 : (leaving != entering ? 2 : 0);
  const int rows = planes * height;
  const int across = width < 32 ? width : 32, together = 32 / across;
  const int group = lane / across;
  for (int c = lane % across; group < together && c < width; c += 32)
  {
    // 32-bit offsets: the plan keeps inputs of 2^31 pixels or more off
    // this kernel
    const int column = Clamp(x - rx + c, p.inSize[0]);
    const int planeStride = static_cast<int>(p.inStride[2]), rowStride = static_cast<int>(p.inStride[1]);
    // (j, q) of row k = group, group + together, ...: y offset, plane.
    int       j = group % height, q = group / height;
    const int dj = together % height, dq = together / height;
    for (int k = group; k < rows; k += together * kSlidingBatch)
    {
      Word key[kSlidingBatch], delta[kSlidingBatch];
      CIF_UNROLL
      for (int b = 0; b < kSlidingBatch; ++b)
      {
        delta[b] = 0;
        if (k + together * b < rows)
        {
          const int plane = rebuild ? Clamp(zc - rz + q, p.inSize[2]) : (q == 0 ? leaving : entering);
          key[b] = Keys<T>::ToKey(input[plane * planeStride + Clamp(y - ry + j, p.inSize[1]) * rowStride + column]);
          delta[b] = rebuild || q == 1 ? 1u : ~0u; // +1 or -1
        }
        j += dj;
        if (j >= height)
        {
          j -= height;
          ++q;
        }
        q += dq;
      }
      CIF_UNROLL
      for (int b = 0; b < kSlidingBatch; ++b)
      {
        if (delta[b] != 0)
        {
          visit(key[b], delta[b]);
        }
      }
    }
  }
}

/** Phase 2, every lane: counts its share of the pixels. */
template <typename T>
CIF_HD void
SlidingCount(const SlidingParams & p,
             const T *             input,
             SlidingHeader &       h,
             Word *                counts,
             const SlidingStep &   s,
             int                   o0,
             int                   o1,
             int                   z,
             int                   lane)
{
  const Word median = h.median; // zero after a rebuild
  const Word mask = (1u << p.bits) - 1u;
  // With few digits (a first level of up to 8 bits) most pixels share the
  // median's: each lane sums those in a register instead of contending for
  // one counter.
  const bool hinted = !s.rebuild && p.bits <= 8;
  Word       under = 0, matched = 0, below = 0, atMedian = 0;
  if (!SlidingPrefixed(p) && !hinted)
  {
    // one level (the common case): every pixel is counted by its digit
    SlidingVisit(p,
                 input,
                 s.rebuild,
                 o0,
                 o1,
                 z,
                 lane,
                 [&](Word key, Word delta)
                 {
                   const Word d = (key - p.base) >> p.shift;
                   AtomicAddWord(&counts[d >> 1], delta << (16 * (d & 1u)));
                   under += d < median ? delta : 0u;
                 });
  }
  else
  {
    SlidingVisit(p,
                 input,
                 s.rebuild,
                 o0,
                 o1,
                 z,
                 lane,
                 [&](Word key, Word delta)
                 {
                   const Word high = SlidingPrefix(p, key);
                   const Word d = ((key - p.base) >> p.shift) & mask;
                   if (high == s.wanted)
                   {
                     under += d < median ? delta : 0u;
                     matched += delta;
                     if (hinted && d == median)
                     {
                       atMedian += delta;
                     }
                     else
                     {
                       AtomicAddWord(&counts[d >> 1], delta << (16 * (d & 1u)));
                     }
                   }
                   else if (high < s.wanted)
                   {
                     below += delta;
                   }
                 });
  }
  if (atMedian != 0)
  {
    AtomicAddWord(&counts[median >> 1], atMedian << (16 * (median & 1u)));
  }
  if (below != 0)
  {
    AtomicAddWord(&h.below, below);
  }
  if (under != 0)
  {
    AtomicAddWord(&h.under, under);
  }
  if (matched != 0)
  {
    AtomicAddWord(&h.matched, matched);
  }
}

/** Moves `digit` to the median's: the digit with under <= rank < under +
 * counts[digit], where `under` counts the pixels with smaller digits (a
 * pixel with a larger key always exists: the rank is below the count).
 * On the GPU the warp checks 32 digits per step. */
CIF_HD void
SlidingWalk(const SlidingParams & p, const Word * counts, Word rank, Word & digit, Word & under, int lane)
{
  const int last = p.counters - 1;
#ifdef __CUDA_ARCH__
  while (under > rank) // down: digits digit - 1 - lane
  {
    const int  d = static_cast<int>(digit) - 1 - lane;
    const Word n = d >= 0 ? SlidingCountOf(counts, d) : 0u;
    Word       sum = n;
    CIF_UNROLL
    for (int k = 1; k < 32; k *= 2)
    {
      const Word other = __shfl_up_sync(0xFFFFFFFFu, sum, k);
      sum += lane >= k ? other : 0u;
    }
    const unsigned found = __ballot_sync(0xFFFFFFFFu, under - sum <= rank);
    const int      l = found ? __ffs(found) - 1 : 31;
    under -= __shfl_sync(0xFFFFFFFFu, sum, l);
    digit -= l + 1;
  }
  for (;;) // up: digits digit + lane
  {
    const int  d = static_cast<int>(digit) + lane;
    const Word n = d <= last ? SlidingCountOf(counts, d) : 0u;
    Word       sum = n;
    CIF_UNROLL
    for (int k = 1; k < 32; k *= 2)
    {
      const Word other = __shfl_up_sync(0xFFFFFFFFu, sum, k);
      sum += lane >= k ? other : 0u;
    }
    const unsigned found = __ballot_sync(0xFFFFFFFFu, under + sum > rank);
    if (found || static_cast<int>(digit) + 31 >= last)
    {
      const int l = found ? __ffs(found) - 1 : last - static_cast<int>(digit);
      under += __shfl_sync(0xFFFFFFFFu, sum - n, l);
      digit += l;
      return;
    }
    under += __shfl_sync(0xFFFFFFFFu, sum, 31);
    digit += 32;
  }
#else
  (void)lane;
  while (digit > 0 && under > rank)
  {
    --digit;
    under -= SlidingCountOf(counts, static_cast<int>(digit));
  }
  while (static_cast<int>(digit) < last && under + SlidingCountOf(counts, static_cast<int>(digit)) <= rank)
  {
    under += SlidingCountOf(counts, static_cast<int>(digit));
    ++digit;
  }
#endif
}

/** Phase 3, every lane: finds the median's digit among the counted pixels
 * (which hold it: at 8-bit levels the earlier levels chose the prefix so);
 * lane 0 stores the result: a pixel at the last level, else the key found
 * so far. */
template <typename T>
CIF_HD void
SlidingFind(const SlidingParams & p,
            T *                   output,
            SlidingHeader &       h,
            const Word *          counts,
            const SlidingStep &   s,
            int                   lane)
{
  using Storage = typename Keys<T>::Storage;
  Word digit = h.median, under = h.under;
  if (SlidingPrefixed(p) && s.rebuild && s.wanted < h.prefix)
  {
    // a smaller prefix than at the last step: the median is likely among
    // the top digits, so the walk starts from the top
    digit = static_cast<Word>(p.counters);
    under = h.matched;
  }
  SlidingWalk(p, counts, p.middle - h.below, digit, under, lane);
#ifdef __CUDA_ARCH__
  // every lane has read the header above before lane 0 rewrites it (the
  // walk's shuffles order the lanes' execution, not their memory accesses:
  // compute-sanitizer's racecheck reported the read-write hazard)
  __syncwarp();
#endif
  if (lane != 0)
  {
    return;
  }
  h.median = digit;
  h.under = under;
  h.prefix = s.wanted;
  const Word found = s.partial | (digit << p.shift);
  if (p.shift == 0)
  {
    output[s.out] = Keys<T>::FromKey(p.base + found);
  }
  else
  {
    StoreKey<Storage>(output + s.out, found);
  }
}

} // namespace median
} // namespace cif

#endif
