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
#include <string>
#include <type_traits>
#include <vector>

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

/** Whether a float is an integer that a 16-bit key carries exactly after
 * subtracting the image's smallest one: finite, integral, not -0.0 (whose
 * sign would be lost), below 2^24 in magnitude. Float images holding only
 * such values within a span of 2^16 (CT and MR read as float) run the
 * median on 16-bit keys (MedianCUDA, MedianEmulateCUDA). */
CIF_HD bool
IntegralFloat(float v)
{
  const Word bits = FloatBits(v);
  return (bits & 0x7FFFFFFFu) < 0x4B800000u /* |v| < 2^24, not NaN */ && bits != 0x80000000u &&
         v == static_cast<float>(static_cast<int>(v));
}

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

/** Sliding-histogram launches for pixels of type T whose keys span
 * [lowest, highest], one per level of digits (see SlidingParams). `what`
 * says how the keys are counted, for the plan's description. */
template <typename T>
std::vector<SlidingParams>
SlidingLaunches(const MedianGeometry & geometry,
                Word                   lowest,
                Word                   highest,
                std::size_t            sharedMemoryPerBlock,
                std::string &          what);

/** The plan's note for float pixels that all hold integers in [lowest,
 * highest] (see IntegralFloat). */
std::string
IntegralFloatsNote(int lowest, int highest);

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
