/*=========================================================================
 *  CudaImageFilters: the median kernels' per-thread code.
 *
 *  Written once for nvcc (device) and the host compiler: src/Median.cu
 *  wraps these functions in kernels, and src/MedianPlan.cxx runs the same
 *  functions block by block on the CPU (cif::MedianEmulateCUDA), so that
 *  the GPU algorithms, tile indexing included, are tested on machines
 *  without a GPU. A kernel is "load the tile (all threads), synchronise,
 *  compute (each thread)"; the two halves are separate functions here.
 *
 *  Keys: every pixel is mapped to an unsigned key whose order is the
 *  median's order (cif::MedianKey): 8- and 16-bit pixels to 16-bit keys,
 *  float to 32-bit keys. The median is taken on keys and mapped back.
 *=========================================================================*/
#ifndef cifMedianKernels_h
#define cifMedianKernels_h

#include "cifMedian.h"

#include <cstdint>
#include <cstring>
#include <type_traits>

#ifdef __CUDACC__
#  define CIF_HD __host__ __device__ __forceinline__
#  define CIF_UNROLL _Pragma("unroll")
#else
#  define CIF_HD inline
#  define CIF_UNROLL
#endif

namespace cif
{
namespace median
{

/** A key in a register: a 32-bit key, or two 16-bit keys in a 16x2 word. */
using Word = std::uint32_t;

// ===========================================================================
// Keys
// ===========================================================================

CIF_HD Word
FloatBits(float v)
{
#ifdef __CUDA_ARCH__
  return __float_as_uint(v);
#else
  Word bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
#endif
}

CIF_HD float
BitsFloat(Word bits)
{
#ifdef __CUDA_ARCH__
  return __uint_as_float(bits);
#else
  float v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
#endif
}

/** Per pixel type: the key mapping (see cif::MedianKey), the key width, and
 * how keys are stored in a radix tile. 8- and 16-bit keys travel two to a
 * 32-bit word through the selection kernel (Packed). */
template <typename T>
struct Keys;

template <>
struct Keys<unsigned char>
{
  using Storage = std::uint8_t;
  static constexpr int  Bits = 8;
  static constexpr bool Packed = true;
  CIF_HD static Word
  ToKey(unsigned char v)
  {
    return v;
  }
  CIF_HD static unsigned char
  FromKey(Word k)
  {
    return static_cast<unsigned char>(k);
  }
};

template <>
struct Keys<unsigned short>
{
  using Storage = std::uint16_t;
  static constexpr int  Bits = 16;
  static constexpr bool Packed = true;
  CIF_HD static Word
  ToKey(unsigned short v)
  {
    return v;
  }
  CIF_HD static unsigned short
  FromKey(Word k)
  {
    return static_cast<unsigned short>(k);
  }
};

template <>
struct Keys<short>
{
  using Storage = std::uint16_t;
  static constexpr int  Bits = 16;
  static constexpr bool Packed = true;
  CIF_HD static Word
  ToKey(short v)
  {
    return static_cast<std::uint16_t>(v) ^ 0x8000u;
  }
  CIF_HD static short
  FromKey(Word k)
  {
    return static_cast<short>(static_cast<std::uint16_t>(k ^ 0x8000u));
  }
};

template <>
struct Keys<float>
{
  using Storage = Word;
  static constexpr int  Bits = 32;
  static constexpr bool Packed = false;
  CIF_HD static Word
  ToKey(float v)
  {
    const Word bits = FloatBits(v);
    if ((bits & 0x7FFFFFFFu) > 0x7F800000u)
    {
      return 0xFFFFFFFFu; // every NaN: above +Inf
    }
    return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
  }
  CIF_HD static float
  FromKey(Word k)
  {
    // the NaN key 0xFFFFFFFF comes back as the quiet NaN 0x7FFFFFFF
    return BitsFloat((k & 0x80000000u) ? (k & 0x7FFFFFFFu) : ~k);
  }
};

/** key < candidate, as 0 or 1. For keys below 2^31 the borrow of the
 * difference is the answer (two instructions on the GPU). */
template <int Bits>
CIF_HD Word
Less(Word key, Word candidate)
{
  if constexpr (Bits < 32)
  {
    return (key - candidate) >> 31;
  }
  else
  {
    return key < candidate ? 1u : 0u;
  }
}

/** Coordinates along one axis are 32-bit: ValidateMedianJob keeps every
 * index a kernel forms (output start and size, radius, tile) below 2^31. */
CIF_HD int
Clamp(int i, int size)
{
  return i < 0 ? 0 : (i >= size ? size - 1 : i);
}

// ===========================================================================
// Selection: forgetful selection in registers
// ===========================================================================

/** Min and max of 32-bit keys. */
struct WordOps
{
  CIF_HD static Word
  Min(Word a, Word b)
  {
    return a < b ? a : b;
  }
  CIF_HD static Word
  Max(Word a, Word b)
  {
    return a < b ? b : a;
  }
};

/** Lane-wise min and max of two 16-bit keys per word (one VIMNMX.U16x2
 * each on sm_90). */
struct PackedOps
{
  CIF_HD static Word
  Min(Word a, Word b)
  {
#ifdef __CUDA_ARCH__
    return __vminu2(a, b);
#else
    const Word lo = (a & 0xFFFFu) < (b & 0xFFFFu) ? (a & 0xFFFFu) : (b & 0xFFFFu);
    const Word hi = (a >> 16) < (b >> 16) ? (a >> 16) : (b >> 16);
    return lo | (hi << 16);
#endif
  }
  CIF_HD static Word
  Max(Word a, Word b)
  {
#ifdef __CUDA_ARCH__
    return __vmaxu2(a, b);
#else
    const Word lo = (a & 0xFFFFu) < (b & 0xFFFFu) ? (b & 0xFFFFu) : (a & 0xFFFFu);
    const Word hi = (a >> 16) < (b >> 16) ? (b >> 16) : (a >> 16);
    return lo | (hi << 16);
#endif
  }
};

/** The smallest and largest key word: padding pairs (one of each) leave a
 * median unchanged, so a window smaller than its bucket is padded with them. */
constexpr Word kLowWord = 0u;
constexpr Word kHighWord = 0xFFFFFFFFu;

template <class Ops>
CIF_HD void
CompareExchange(Word & a, Word & b)
{
  const Word lo = Ops::Min(a, b);
  b = Ops::Max(a, b);
  a = lo;
}

/** Moves the minimum of w[0..S) to w[0] and the maximum to w[S-1], keeping
 * the multiset: pairs across the halves, then a min sweep over the lower
 * half and a max sweep over the upper half (about 1.5 S compare-exchanges). */
template <class Ops, int S>
CIF_HD void
MinMaxToEnds(Word * w)
{
  constexpr int H = S / 2;
  CIF_UNROLL
  for (int i = 0; i < H; ++i)
  {
    CompareExchange<Ops>(w[i], w[S - 1 - i]);
  }
  CIF_UNROLL
  for (int i = 1; i < H; ++i)
  {
    CompareExchange<Ops>(w[0], w[i]);
  }
  if constexpr (S % 2 == 1)
  {
    CompareExchange<Ops>(w[0], w[H]);
    CompareExchange<Ops>(w[H], w[S - 1]);
  }
  CIF_UNROLL
  for (int i = S - H; i < S - 1; ++i)
  {
    CompareExchange<Ops>(w[i], w[S - 1]);
  }
}

/** Forgetful selection steps for the elements First..Last-1 of a sequence:
 * with a working set of S elements in w, each step drops the set's minimum
 * and maximum and puts element `First` in the minimum's place. Dropping
 * them is safe while the set is larger than half of what remains (the
 * invariant of the caller), so the median of the rest is unchanged. */
template <class Ops, int S, int First, int Last, class Load>
CIF_HD void
ForgetfulSteps(Word * w, const Load & load)
{
  if constexpr (First < Last)
  {
    MinMaxToEnds<Ops, S>(w);
    w[0] = load(First);
    ForgetfulSteps<Ops, S - 1, First + 1, Last>(w, load);
  }
}

template <class Ops>
CIF_HD Word
Median3(Word a, Word b, Word c)
{
  return Ops::Max(Ops::Min(a, b), Ops::Min(Ops::Max(a, b), c));
}

/** Median of N = Nc + No elements: Nc common ones (loadC) followed by No own
 * ones (load0 or load1), for two windows that share the common part.
 *
 * Forgetful selection: start with M = N / 2 + 2 elements, then repeatedly
 * drop the minimum and maximum and add the next element; after N - M steps
 * three elements remain and their median is the answer. While the steps only
 * see common elements they are the same for both windows, so they run once;
 * from the first own element on, each window continues on its own copy.
 * Every compiled bucket has Nc >= M, so the common steps are never empty. */
template <class Ops, int Nc, int No, class LoadC, class Load0, class Load1>
CIF_HD void
TwoMedians(const LoadC & loadC, const Load0 & load0, const Load1 & load1, Word & median0, Word & median1)
{
  constexpr int N = Nc + No;
  constexpr int M = N / 2 + 2;
  static_assert(N % 2 == 1 && N >= 3, "odd windows of at least 3 elements");
  static_assert(Nc >= M, "the common part must fill the first working set");
  Word w[M];
  CIF_UNROLL
  for (int i = 0; i < M; ++i)
  {
    w[i] = loadC(i);
  }
  ForgetfulSteps<Ops, M, M, Nc>(w, loadC);
  constexpr int S = 2 * M - Nc; // set size after the common steps
  MinMaxToEnds<Ops, S>(w);      // the next step's drop, still common
  // Each window goes on with the S - 2 survivors w[1..S-2] and its first own
  // element in w[0]; window 0 works on a copy.
  Word v[S - 1];
  CIF_UNROLL
  for (int i = 1; i < S - 1; ++i)
  {
    v[i] = w[i];
  }
  v[0] = load0(0);
  ForgetfulSteps<Ops, S - 1, 1, No>(v, load0);
  median0 = Median3<Ops>(v[0], v[1], v[2]);
  w[0] = load1(0);
  ForgetfulSteps<Ops, S - 1, 1, No>(w, load1);
  median1 = Median3<Ops>(w[0], w[1], w[2]);
}

/** The compiled selection buckets: windows of Nc common + No own elements.
 * A window fits a bucket when its own part (one plane across the pair axis)
 * and its common part are not larger; the difference is padded with
 * (lowest, highest) pairs. */
struct Bucket
{
  int common;
  int own;
};
constexpr int    kBucketCount = 8;
constexpr Bucket kBuckets[kBucketCount] = {
  { 6, 3 },   // 3x3 (2D)
  { 20, 5 },  // 5x5 (2D)
  { 18, 9 },  // 3x3x3
  { 42, 7 },  // 7x7 (2D)
  { 36, 9 },  // 3x3x5
  { 30, 15 }, // 5x3x3
  { 60, 15 }, // 5x5x3, 5x3x5, 3x5x5
  { 100, 25 } // 5x5x5
};
constexpr int kMaxCommon = 100;
constexpr int kMaxOwn = 25;

/** Host and device view of a selection launch. Axes are logical: 0 is x
 * (the axis of the 16x2 lanes), 2 is the axis along which each thread
 * computes two outputs (the pair axis), 1 the remaining one. */
struct SelectionParams
{
  int          inSize[3];
  std::int64_t inStride[3];
  int          outStart[3]; ///< output origin relative to the input buffer
  int          outSize[3];
  std::int64_t outStride[3];
  int          blocks[3]; ///< blocks along each axis
  int          radius[3];
  int          threads[3];         ///< block shape in threads
  int          tile[3];            ///< tile shape in words (block outputs + 2 radius)
  int          span;               ///< words in each padding region (largest thread base + 1)
  int          common[kMaxCommon]; ///< word offsets from a thread's base
  int          own[2][kMaxOwn];
};

/** Outputs per thread along x: 2 for 16x2 words, 1 for 32-bit keys. */
template <typename T>
constexpr int kLanes = Keys<T>::Packed ? 2 : 1;

/** The block's first output and the input position of its tile's first
 * element, from the linear block number (fewer than 2^31 blocks). */
CIF_HD void
BlockOrigins(const int blocks[3],
             unsigned  linearBlock,
             const int blockOutputs[3],
             const int outStart[3],
             const int radius[3],
             int       firstOutput[3],
             int       tileOrigin[3])
{
  const unsigned plane = static_cast<unsigned>(blocks[0]) * static_cast<unsigned>(blocks[1]);
  const unsigned inPlane = linearBlock % plane;
  int            b[3];
  b[0] = static_cast<int>(inPlane % static_cast<unsigned>(blocks[0]));
  b[1] = static_cast<int>(inPlane / static_cast<unsigned>(blocks[0]));
  b[2] = static_cast<int>(linearBlock / plane);
  for (int a = 0; a < 3; ++a)
  {
    firstOutput[a] = b[a] * blockOutputs[a];
    tileOrigin[a] = outStart[a] + firstOutput[a] - radius[a];
  }
}

/** Selection, first half: the block's tile of key words. Word (i, j, k)
 * holds the key of input (o0 + i, o1 + j, o2 + k), clamped, and for 16x2
 * words also the key of its x neighbour in the high half. Two padding
 * regions of `span` words (lowest and highest word) follow the tile.
 * Threads cover rows of the tile, a warp per row. */
template <typename T>
CIF_HD void
SelectionLoadTile(const SelectionParams & p,
                  const T *               input,
                  Word *                  tile,
                  const int               origin[3],
                  int                     warp,
                  int                     lane,
                  int                     warps)
{
  const int A = p.tile[0], rows = p.tile[1] * p.tile[2];
  for (int row = warp; row < rows; row += warps)
  {
    const int j = Clamp(origin[1] + row % p.tile[1], p.inSize[1]);
    const int k = Clamp(origin[2] + row / p.tile[1], p.inSize[2]);
    const T * line = input + j * p.inStride[1] + k * p.inStride[2];
    for (int i = lane; i < A; i += 32)
    {
      Word word = Keys<T>::ToKey(line[Clamp(origin[0] + i, p.inSize[0])]);
      if constexpr (Keys<T>::Packed)
      {
        word |= Keys<T>::ToKey(line[Clamp(origin[0] + i + 1, p.inSize[0])]) << 16;
      }
      tile[i + row * A] = word;
    }
  }
  const int words = A * rows;
  for (int i = warp * 32 + lane; i < p.span; i += warps * 32)
  {
    tile[words + i] = kLowWord;
    tile[words + p.span + i] = kHighWord;
  }
}

/** Selection, second half: thread (t0, t1, t2) computes outputs
 * (first0 + lanes t0 + {0, lanes - 1}, first1 + t1, first2 + 2 t2 + {0, 1}). */
template <typename T, int Nc, int No>
CIF_HD void
SelectionThread(const SelectionParams & p,
                const Word *            tile,
                T *                     output,
                const int               firstOutput[3],
                int                     t0,
                int                     t1,
                int                     t2)
{
  constexpr int lanes = kLanes<T>;
  using Ops = typename std::conditional<Keys<T>::Packed, PackedOps, WordOps>::type;
  const Word * base = tile + t0 * lanes + t1 * p.tile[0] + 2 * t2 * p.tile[0] * p.tile[1];
  const auto   loadC = [&](int i) { return base[p.common[i]]; };
  const auto   load0 = [&](int i) { return base[p.own[0][i]]; };
  const auto   load1 = [&](int i) { return base[p.own[1][i]]; };
  Word         median[2];
  TwoMedians<Ops, Nc, No>(loadC, load0, load1, median[0], median[1]);

  const int o1 = firstOutput[1] + t1;
  if (o1 >= p.outSize[1])
  {
    return;
  }
  for (int j = 0; j < 2; ++j)
  {
    const int o2 = firstOutput[2] + 2 * t2 + j;
    if (o2 >= p.outSize[2])
    {
      continue;
    }
    for (int lane = 0; lane < lanes; ++lane)
    {
      const int o0 = firstOutput[0] + t0 * lanes + lane;
      if (o0 < p.outSize[0])
      {
        const Word key = lanes == 2 ? (median[j] >> (16 * lane)) & 0xFFFFu : median[j];
        output[o0 * p.outStride[0] + o1 * p.outStride[1] + o2 * p.outStride[2]] = Keys<T>::FromKey(key);
      }
    }
  }
}

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

// ===========================================================================
// Sliding histogram
// ===========================================================================

/** Host and device view of one level of a sliding-histogram launch. The
 * axes are logical: 0 is x, 2 the axis the windows slide along, 1 the
 * remaining one. One warp serves one segment of one line along axis 2;
 * a block's warps serve neighbouring x, so they read the same planes. */
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
  int          shift;    ///< this level's digit: (key >> shift) & 255
  int          keyBits;  ///< Keys<T>::Bits
};

/** One warp's counters in shared memory: `counts[d]` counts the window's
 * pixels whose key has the current prefix and digit d, `below` those whose
 * prefix is smaller. */
struct SlidingWarp
{
  Word counts[256];
  Word below;
  Word prefix;
  Word digit; ///< the median's digit at the last step
  Word pad;
};

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
 * the key bits the earlier levels found, and whether the counts must be
 * rebuilt (first output of the segment, or a new prefix). */
struct SlidingStep
{
  std::int64_t out;
  Word         partial;
  Word         wanted;
  bool         rebuild;
};

template <typename T>
CIF_HD SlidingStep
SlidingBegin(const SlidingParams & p, const T * output, const SlidingWarp & w, int o0, int o1, int z, int zBegin)
{
  using Storage = typename Keys<T>::Storage;
  static_assert(sizeof(Storage) == sizeof(T), "levels keep their keys in the output buffer");
  const bool  firstLevel = p.shift + 8 >= p.keyBits; // every key shares the empty prefix
  SlidingStep s;
  s.out = o0 * p.outStride[0] + o1 * p.outStride[1] + z * p.outStride[2];
  s.partial = firstLevel ? 0u : LoadKey<Storage>(output + s.out);
  s.wanted = firstLevel ? 0u : s.partial >> (p.shift + 8);
  s.rebuild = z == zBegin || s.wanted != w.prefix;
  return s;
}

/** Phase 1, every lane: on a rebuild, zero the counters (lane 0 the scalars). */
CIF_HD void
SlidingClear(SlidingWarp & w, const SlidingStep & s, int lane)
{
  if (!s.rebuild)
  {
    return;
  }
  for (int d = lane; d < 256; d += 32)
  {
    w.counts[d] = 0;
  }
  if (lane == 0)
  {
    w.below = 0;
  }
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

/** Phase 2, every lane: counts its share (every 32nd pixel) of the planes
 * that enter and leave the window, or of the whole window on a rebuild;
 * kSlidingBatch loads are issued before their counts, to overlap them. */
constexpr int kSlidingBatch = 4;

template <typename T>
CIF_HD void
SlidingCount(const SlidingParams & p, const T * input, SlidingWarp & w, const SlidingStep & s, int o0, int o1, int z, int lane)
{
  const int  x = p.outStart[0] + o0, y = p.outStart[1] + o1, zc = p.outStart[2] + z;
  const int  rx = p.radius[0], ry = p.radius[1], rz = p.radius[2];
  const int  width = 2 * rx + 1, height = 2 * ry + 1;
  const bool firstLevel = p.shift + 8 >= p.keyBits;
  const int  leaving = Clamp(zc - rz - 1, p.inSize[2]), entering = Clamp(zc + rz, p.inSize[2]);
  const int  planes = s.rebuild ? 2 * rz + 1 : (leaving != entering ? 2 : 0);
  const int  rows = planes * height;
  // Pixels with the median's last digit are the most common (in smooth
  // regions nearly all of them share it at the first level): each lane sums
  // them in a register instead of contending for one counter.
  const Word hint = s.rebuild ? 256u : w.digit;
  Word       below = 0, atHint = 0;
  // Lane layout: `across` lanes cover a row (columns c, c + 32, ...), and
  // the warp takes `together` rows at a time, so a lane's x offset is fixed.
  const int across = width < 32 ? width : 32, together = 32 / across;
  const int group = lane / across;
  for (int c = lane % across; group < together && c < width; c += 32)
  {
    const std::int64_t column = Clamp(x - rx + c, p.inSize[0]);
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
          const int plane = s.rebuild ? Clamp(zc - rz + q, p.inSize[2]) : (q == 0 ? leaving : entering);
          key[b] = Keys<T>::ToKey(
            input[plane * p.inStride[2] + Clamp(y - ry + j, p.inSize[1]) * p.inStride[1] + column]);
          delta[b] = s.rebuild || q == 1 ? 1u : ~0u; // +1 or -1
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
        const Word high = firstLevel ? 0u : key[b] >> (p.shift + 8);
        const Word digit = (key[b] >> p.shift) & 0xFFu;
        if (delta[b] != 0 && high == s.wanted && digit == hint)
        {
          atHint += delta[b];
        }
        else if (delta[b] != 0 && high == s.wanted)
        {
          AtomicAddWord(&w.counts[digit], delta[b]);
        }
        else if (delta[b] != 0 && high < s.wanted)
        {
          below += delta[b];
        }
      }
    }
  }
  if (below != 0)
  {
    AtomicAddWord(&w.below, below);
  }
  if (atHint != 0)
  {
    AtomicAddWord(&w.counts[hint], atHint);
  }
}

/** The digit d with counts[0] + ... + counts[d - 1] <= rank < counts[0] +
 * ... + counts[d]. On the GPU the warp searches together: lane l sums
 * digits 8 l ... 8 l + 7, a scan over the lanes finds the lane that holds
 * the rank, and that lane walks its 8 digits. */
CIF_HD Word
SlidingDigit(const Word * counts, Word rank, int lane)
{
#ifdef __CUDA_ARCH__
  const uint4 lo = reinterpret_cast<const uint4 *>(counts)[2 * lane];
  const uint4 hi = reinterpret_cast<const uint4 *>(counts)[2 * lane + 1];
  const Word  own[8] = { lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w };
  Word        sum = 0;
  CIF_UNROLL
  for (int k = 0; k < 8; ++k)
  {
    sum += own[k];
  }
  Word inclusive = sum;
  CIF_UNROLL
  for (int d = 1; d < 32; d *= 2)
  {
    const Word other = __shfl_up_sync(0xFFFFFFFFu, inclusive, d);
    inclusive += lane >= d ? other : 0u;
  }
  const unsigned holder = __ffs(__ballot_sync(0xFFFFFFFFu, inclusive > rank)) - 1;
  Word           digit = 8 * lane, seen = inclusive - sum;
  bool           searching = true;
  CIF_UNROLL
  for (int k = 0; k < 7; ++k)
  {
    searching = searching && seen + own[k] <= rank;
    seen += searching ? own[k] : 0u;
    digit += searching ? 1u : 0u;
  }
  return __shfl_sync(0xFFFFFFFFu, digit, holder);
#else
  (void)lane;
  Word digit = 0, seen = 0;
  while (digit < 255 && seen + counts[digit] <= rank)
  {
    seen += counts[digit];
    ++digit;
  }
  return digit;
#endif
}

/** Phase 3, every lane: finds the median's digit among the pixels with
 * this prefix (which hold it: the earlier levels chose the prefix so);
 * lane 0 stores the result: a pixel at the last level, else the key found
 * so far. */
template <typename T>
CIF_HD void
SlidingFind(const SlidingParams & p, T * output, SlidingWarp & w, const SlidingStep & s, int lane)
{
  using Storage = typename Keys<T>::Storage;
  const Word digit = SlidingDigit(w.counts, p.middle - w.below, lane);
  if (lane != 0)
  {
    return;
  }
  w.prefix = s.wanted;
  w.digit = digit;
  const Word key = s.partial | (digit << p.shift);
  if (p.shift == 0)
  {
    output[s.out] = Keys<T>::FromKey(key);
  }
  else
  {
    StoreKey<Storage>(output + s.out, key);
  }
}

// ===========================================================================
// Host side: launch parameters (src/MedianPlan.cxx)
// ===========================================================================

/** Selection parameters for a plan with pixels of type T. */
template <typename T>
SelectionParams
MakeSelectionParams(const MedianGeometry & geometry, const MedianPlan & plan);

/** Radix parameters (RadixTile or RadixGlobal) for a plan. */
RadixParams
MakeRadixParams(const MedianGeometry & geometry, const MedianPlan & plan, int keyBytes);

/** Sliding-histogram parameters for a plan with pixels of type T, for the
 * level whose digit starts at bit `shift` (levels run from shift
 * Keys<T>::Bits - 8 down to 0). */
template <typename T>
SlidingParams
MakeSlidingParams(const MedianGeometry & geometry, const MedianPlan & plan, int shift);

/** Blocks of a sliding-histogram launch (see SlidingPlace). */
inline std::int64_t
SlidingBlockCount(const SlidingParams & p)
{
  return static_cast<std::int64_t>(p.blocksX) * p.outSize[1] * p.segments;
}

inline std::int64_t
BlockCount(const int blocks[3])
{
  return static_cast<std::int64_t>(blocks[0]) * blocks[1] * blocks[2];
}

/** Calls f(std::integral_constant<int, B>) for a bucket index known at run time. */
template <class F>
void
WithBucket(int bucket, F && f)
{
  switch (bucket)
  {
    case 0:
      f(std::integral_constant<int, 0>{});
      break;
    case 1:
      f(std::integral_constant<int, 1>{});
      break;
    case 2:
      f(std::integral_constant<int, 2>{});
      break;
    case 3:
      f(std::integral_constant<int, 3>{});
      break;
    case 4:
      f(std::integral_constant<int, 4>{});
      break;
    case 5:
      f(std::integral_constant<int, 5>{});
      break;
    case 6:
      f(std::integral_constant<int, 6>{});
      break;
    case 7:
      f(std::integral_constant<int, 7>{});
      break;
    default:
      break;
  }
}
static_assert(kBucketCount == 8, "WithBucket lists every bucket");

} // namespace median
} // namespace cif

#endif
