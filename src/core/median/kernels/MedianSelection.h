/*=========================================================================
 *  CudaImageFilters: the median by forgetful selection in registers (small
 *  windows, compiled buckets), per thread; host and device code.
 *=========================================================================*/
#ifndef cif_median_MedianSelection_h
#define cif_median_MedianSelection_h

#include "MedianCommon.h"

namespace cif
{
namespace median
{

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

/** The first word of a selection tile's table of row pointers: after the
 * tile (tile[0] x tile[1] x tile[2] words) and its two padding regions of
 * `span` words, rounded up to 8 bytes. The table has tile[1] x tile[2]
 * pointers. */
CIF_HD constexpr int
SelectionLinesWord(const int tile[3], int span)
{
  return (tile[0] * tile[1] * tile[2] + 2 * span + 1) / 2 * 2;
}

/** Selection, first step: the input line of each tile row, clamped (row
 * j + tile[1] k starts at input (o0, o1 + j, o2 + k)), one row per thread
 * in turn. The tile's loads then cost no 64-bit index arithmetic. */
template <typename T>
CIF_HD void
SelectionLines(const SelectionParams & p,
               const T *               input,
               const T **              lines,
               const int               origin[3],
               int                     thread,
               int                     threads)
{
  const int B = p.tile[1], rows = B * p.tile[2];
  for (int row = thread; row < rows; row += threads)
  {
    lines[row] = input + Clamp(origin[1] + row % B, p.inSize[1]) * p.inStride[1] +
                 Clamp(origin[2] + row / B, p.inSize[2]) * p.inStride[2];
  }
}

/** Selection, second step: the block's tile of key words. Word (i, j, k)
 * holds the key of input (o0 + i, o1 + j, o2 + k), clamped, and for 16x2
 * words also the key of its x neighbour in the high half. Two padding
 * regions of `span` words (lowest and highest word) follow the tile.
 * The tile's first 32 columns go row by row, lane i of warp w taking
 * column i of rows w, w + warps, ...: its clamped column is the same in
 * every row. The remaining columns (2 x radius, narrow) go all rows at
 * once, a word per thread. */
template <typename T>
CIF_HD void
SelectionLoadTile(const SelectionParams & p,
                  const T * const *       lines,
                  Word *                  tile,
                  const int               origin[3],
                  int                     warp,
                  int                     lane,
                  int                     warps)
{
  const int A = p.tile[0], rows = p.tile[1] * p.tile[2]; // A = 32 + 2 x radius
  // the word of tile column i, from its clamped input column and, for 16x2
  // words, its clamped neighbour's
  const auto column = [&](int i) { return Clamp(origin[0] + i, p.inSize[0]); };
  const auto wordOf = [](const T * line, int x, int xNext)
  {
    Word word = Keys<T>::ToKey(line[x]);
    if constexpr (Keys<T>::Packed)
    {
      word |= Keys<T>::ToKey(line[xNext]) << 16;
    }
    return word;
  };
  const int x = column(lane), xNext = column(lane + 1);
  for (int row = warp; row < rows; row += warps)
  {
    tile[row * A + lane] = wordOf(lines[row], x, xNext);
  }
  const int extra = A - 32, thread = warp * 32 + lane, threads = warps * 32;
  for (int e = thread; e < extra * rows; e += threads)
  {
    const int row = e / extra, i = 32 + e % extra;
    tile[row * A + i] = wordOf(lines[row], column(i), column(i + 1));
  }
  const int words = A * rows;
  for (int i = thread; i < p.span; i += threads)
  {
    tile[words + i] = kLowWord;
    tile[words + p.span + i] = kHighWord;
  }
}

/** Outputs of a selection block along x (32 lanes of 32-bit keys or 16
 * threads of 16x2 keys), and its threads along logical axis 1 unless the
 * output is flat there (then along the pair axis): SelectionLayout. */
constexpr int kSelectionBlockX = 32;
constexpr int kSelectionThreadsY = 8;

/** The window's word offsets from a thread's base as the launch parameters
 * list them (p.common, p.own): any window of bucket B, padded. */
template <int B>
struct ListedWindow
{
  static constexpr int Common = kBuckets[B].common;
  static constexpr int Own = kBuckets[B].own;
  CIF_HD static int
  CommonOffset(const SelectionParams & p, int i)
  {
    return p.common[i];
  }
  CIF_HD static int
  OwnOffset(const SelectionParams & p, int window, int i)
  {
    return p.own[window][i];
  }
  CIF_HD static int
  Base(const SelectionParams & p, int t0, int t1, int t2, int lanes)
  {
    return t0 * lanes + t1 * p.tile[0] + 2 * t2 * p.tile[0] * p.tile[1];
  }
};

/** A window of radii (R0, R1, R2) along the logical axes that fills its
 * bucket exactly, in a block that is flat along axis 1 or not: the tile's
 * row and plane lengths are then constants, and so is every offset, so each
 * element is one shared-memory load at a constant offset from the thread's
 * base (the listed offsets cost an address computation each). Offsets in
 * MakeSelectionParams's order: planes across the pair axis, rows, columns. */
template <int R0, int R1, int R2, bool Flat>
struct CompiledWindow
{
  static constexpr int Row = kSelectionBlockX + 2 * R0;                          // p.tile[0]
  static constexpr int Plane = Row * ((Flat ? 1 : kSelectionThreadsY) + 2 * R1); // p.tile[0] * p.tile[1]
  static constexpr int Own = (2 * R0 + 1) * (2 * R1 + 1);
  static constexpr int Common = 2 * R2 * Own;
  CIF_HD static constexpr int
  Offset(int plane, int i)
  {
    return i % (2 * R0 + 1) + (i / (2 * R0 + 1)) * Row + plane * Plane;
  }
  CIF_HD static constexpr int
  CommonOffset(const SelectionParams &, int i)
  {
    return Offset(1 + i / Own, i % Own);
  }
  CIF_HD static constexpr int
  OwnOffset(const SelectionParams &, int window, int i)
  {
    return Offset(window == 0 ? 0 : 2 * R2 + 1, i);
  }
  CIF_HD static int
  Base(const SelectionParams &, int t0, int t1, int t2, int lanes)
  {
    return t0 * lanes + t1 * Row + 2 * t2 * Plane;
  }
  /** Whether launch parameters `p` of bucket `bucket` describe this window. */
  static bool
  Describes(const SelectionParams & p, int bucket)
  {
    return kBuckets[bucket].common == Common && kBuckets[bucket].own == Own && p.radius[0] == R0 && p.radius[1] == R1 &&
           p.radius[2] == R2 && p.tile[0] == Row && p.tile[0] * p.tile[1] == Plane;
  }
};

/** The compiled windows: 3x3x3 (3D) and 3x3 (2D, flat along axis 1). */
using Window3x3x3 = CompiledWindow<1, 1, 1, false>;
using Window3x3 = CompiledWindow<1, 0, 1, true>;

/** Selection, second half: thread (t0, t1, t2) computes outputs
 * (first0 + lanes t0 + {0, lanes - 1}, first1 + t1, first2 + 2 t2 + {0, 1}). */
template <typename T, class Window>
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
  const Word * base = tile + Window::Base(p, t0, t1, t2, lanes);
  const auto   loadC = [&](int i) { return base[Window::CommonOffset(p, i)]; };
  const auto   load0 = [&](int i) { return base[Window::OwnOffset(p, 0, i)]; };
  const auto   load1 = [&](int i) { return base[Window::OwnOffset(p, 1, i)]; };
  Word         median[2];
  TwoMedians<Ops, Window::Common, Window::Own>(loadC, load0, load1, median[0], median[1]);

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

} // namespace median
} // namespace cif

#endif
