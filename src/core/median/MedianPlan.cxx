/*=========================================================================
 *  CudaImageFilters: choice of the median GPU kernel, its launch
 *  parameters, and the CPU emulation of the kernels (for tests).
 *
 *  Cost model (per output pixel, in GPU instructions, worst case):
 *  - Selection: 2 instructions per compare-exchange of the forgetful
 *    selection plus one load per element, shared by the 2 (32-bit keys) or
 *    4 (16x2 keys) outputs of a thread;
 *  - RadixTile: about 3 instructions (one shared-memory load, two integer
 *    operations) per window element and pass, with one min/max pass plus
 *    one pass per key bit.
 *  Selection runs where it fits (windows of at most 125 pixels) and costs
 *  less than the radix select. Windows of 256 pixels per 8-bit key level
 *  or more take the sliding histogram, whose work per output grows with
 *  one plane of the window, not with the window, unless the window is more
 *  than twice the image it covers (then the global radix kernel, which
 *  weighs clamped pixels, counts less). The radix tile takes the rest.
 *=========================================================================*/
#include "cif/Median.h"
#include "cifMedianKernels.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace cif
{

const char *
MedianKernelName(MedianKernel kernel)
{
  switch (kernel)
  {
    case MedianKernel::Automatic:
      return "automatic";
    case MedianKernel::Selection:
      return "selection";
    case MedianKernel::RadixTile:
      return "radix select on a shared-memory tile";
    case MedianKernel::RadixGlobal:
      return "radix select from global memory";
    case MedianKernel::SlidingHistogram:
      return "sliding histogram";
  }
  return "?";
}

namespace median
{
namespace
{

/** Compare-exchanges of MinMaxToEnds<S>. */
int
MinMaxCompareExchanges(int s)
{
  const int h = s / 2;
  return h + 2 * (h - 1) + (s % 2 ? 2 : 0);
}

/** Compare-exchanges of TwoMedians<Nc, No> (both windows). */
int
SelectionCompareExchanges(const Bucket & b)
{
  const int n = b.common + b.own, m = n / 2 + 2;
  int       s = m, count = 0;
  for (int next = m; next < b.common; ++next)
  {
    count += MinMaxCompareExchanges(s--);
  }
  count += MinMaxCompareExchanges(s);
  int perWindow = 2; // the final median of three
  for (int next = 1, t = s - 1; next < b.own; ++next)
  {
    perWindow += MinMaxCompareExchanges(t--);
  }
  return count + 2 * perWindow;
}

struct SelectionShape
{
  int          pairAxis;  ///< 1 (y) or 2 (z): the window's longer y/z axis
  int          otherAxis; ///< the remaining one of y and z
  std::int64_t own;       ///< one plane of the window across the pair axis
  std::int64_t common;    ///< the planes that two neighbours along the pair axis share
};

SelectionShape
ShapeOf(const MedianGeometry & g)
{
  SelectionShape s;
  s.pairAxis = g.radius[1] > g.radius[2] ? 1 : 2;
  s.otherAxis = 3 - s.pairAxis;
  s.own = (2 * g.radius[0] + 1) * (2 * g.radius[s.otherAxis] + 1);
  s.common = 2 * g.radius[s.pairAxis] * s.own;
  return s;
}

/** Radix block shape (outputs per block) for the output's extents. */
void
RadixBlock(const MedianGeometry & g, int threads[3])
{
  const bool volume = g.outputSize[2] > 1, plane = g.outputSize[1] > 1;
  threads[0] = volume || plane ? 32 : 128;
  threads[1] = volume ? 4 : (plane ? 8 : 1);
  threads[2] = volume ? 2 : 1;
}

std::size_t
RadixTileBytes(const MedianGeometry & g, int keyBytes)
{
  int threads[3];
  RadixBlock(g, threads);
  double elements = 1.0; // double: radii may be huge
  for (int a = 0; a < 3; ++a)
  {
    elements *= threads[a] + 2.0 * static_cast<double>(g.radius[a]);
  }
  const double bytes = elements * keyBytes;
  return bytes > 1e15 ? static_cast<std::size_t>(1e15) : static_cast<std::size_t>(bytes);
}

/** Block and tile shape of a selection launch, in logical axes (x, the
 * other axis, the pair axis): 32 outputs along x, and 8 threads along the
 * other axis (or, when the output is flat there, along the pair axis). */
struct SelectionLayout
{
  int threads[3];
  int blockOutputs[3];
  int tile[3];
  int span;
  std::size_t
  Bytes() const
  {
    return static_cast<std::size_t>(SelectionLinesWord(tile, span)) * 4 +
           static_cast<std::size_t>(tile[1]) * tile[2] * sizeof(void *);
  }
};

SelectionLayout
LayoutOf(const MedianGeometry & g, int pairAxis, int lanes)
{
  const int       phys[3] = { 0, 3 - pairAxis, pairAxis };
  const bool      flat = g.outputSize[phys[1]] == 1;
  SelectionLayout l;
  l.threads[0] = kSelectionBlockX / lanes;
  l.threads[1] = flat ? 1 : kSelectionThreadsY;
  l.threads[2] = flat ? kSelectionThreadsY : 1;
  l.blockOutputs[0] = l.threads[0] * lanes;
  l.blockOutputs[1] = l.threads[1];
  l.blockOutputs[2] = 2 * l.threads[2];
  for (int a = 0; a < 3; ++a)
  {
    l.tile[a] = l.blockOutputs[a] + 2 * static_cast<int>(g.radius[phys[a]]);
  }
  // one past the largest thread base (SelectionThread)
  l.span =
    (l.threads[0] - 1) * lanes + (l.threads[1] - 1) * l.tile[0] + (l.threads[2] - 1) * 2 * l.tile[0] * l.tile[1] + 1;
  return l;
}

constexpr int          kSlidingWarps = 8;
constexpr std::int64_t kSlidingTargetWarps = std::int64_t{ 1 } << 14;
constexpr std::int64_t kSlidingMinPixelsPerLevel = 256;

/** Bits of a key span (0 for a span of 0). */
int
SpanBits(Word span)
{
  int bits = 0;
  while (bits < 32 && (span >> bits) != 0)
  {
    ++bits;
  }
  return bits;
}

/** Levels of the sliding histogram for keys spanning `span` + 1 values:
 * digits of at most 12 bits (SlidingParams). */
int
SlidingLevelCount(Word span)
{
  const int bits = SpanBits(span);
  return bits <= 12 ? 1 : (bits + 11) / 12;
}

/** The largest shared memory a sliding launch needs: 4096 counters. */
constexpr std::size_t kSlidingMaxBytes = kSlidingWarps * (kSlidingHeaderWords + 4096 / 2) * sizeof(Word);

/** The axis the sliding histogram slides along: of y and z, the one with
 * the larger radius (fewer pixels per step), else the longer output. */
int
SlideAxis(const MedianGeometry & g)
{
  if (g.radius[1] != g.radius[2])
  {
    return g.radius[2] > g.radius[1] ? 2 : 1;
  }
  return g.outputSize[2] >= g.outputSize[1] ? 2 : 1;
}

std::string
RadiusText(const MedianGeometry & g)
{
  std::ostringstream os;
  os << g.radius[0] << "," << g.radius[1] << "," << g.radius[2];
  return os.str();
}

} // namespace
} // namespace median

template <typename T>
MedianPlan
PlanMedian(const MedianGeometry & g, MedianKernel request, std::size_t sharedMemoryPerBlock, std::uint32_t keySpan)
{
  using namespace median;
  const std::int64_t n = MedianWindowSize(g);
  MedianPlan         plan;
  std::ostringstream note; // why a requested or cheaper kernel was not used

  // Selection: the cheapest bucket that holds the window.
  const SelectionShape shape = ShapeOf(g);
  int                  bucket = -1;
  double               selectionCost = 0.0;
  for (int b = 0; b < kBucketCount; ++b)
  {
    if (shape.own <= kBuckets[b].own && shape.common <= kBuckets[b].common)
    {
      const double cost =
        (2.0 * SelectionCompareExchanges(kBuckets[b]) + kBuckets[b].common + 2.0 * kBuckets[b].own) / (2.0 * kLanes<T>);
      if (bucket < 0 || cost < selectionCost)
      {
        bucket = b;
        selectionCost = cost;
      }
    }
  }
  const double radixCost = 3.0 * (Keys<T>::Bits + 1) * static_cast<double>(n);
  const bool   selectionFits =
    bucket >= 0 && n > 1 && LayoutOf(g, shape.pairAxis, kLanes<T>).Bytes() <= sharedMemoryPerBlock;

  if (request == MedianKernel::Selection && !selectionFits)
  {
    note << "selection was asked for, but the " << n << "-pixel window (radius " << RadiusText(g)
         << ") fits none of its buckets (at most 125 pixels: 3x3, 5x5, 7x7 in 2D; 3x3x3, 3x3x5, 5x3x3, 5x5x3, 5x5x5 "
            "in 3D, in any orientation); ";
  }
  if (selectionFits &&
      (request == MedianKernel::Selection || (request == MedianKernel::Automatic && selectionCost <= radixCost)))
  {
    plan.kernel = MedianKernel::Selection;
    plan.bucket = bucket;
    plan.pairAxis = shape.pairAxis;
    plan.sharedBytes = LayoutOf(g, shape.pairAxis, kLanes<T>).Bytes();
    std::ostringstream os;
    os << "forgetful selection in registers: " << n << "-pixel window in the " << kBuckets[bucket].common << "+"
       << kBuckets[bucket].own << " bucket (common + own part of two outputs along "
       << (shape.pairAxis == 1 ? "y" : "z") << "), " << 2 * kLanes<T> << " outputs per thread"
       << (kLanes<T> == 2 ? " (16x2 keys)" : "");
    plan.description = note.str() + os.str();
    return plan;
  }

  double clampedBox = 1.0;
  for (int a = 0; a < 3; ++a)
  {
    clampedBox *= static_cast<double>(std::min<std::int64_t>(2 * g.radius[a] + 1, g.inputSize[a]));
  }
  const bool windowOverImage = 2.0 * clampedBox <= static_cast<double>(n);

  // Sliding histogram: larger windows, unless the radix kernels were asked
  // for or the window is much larger than the image. Its counters are 16
  // bits wide (windows of fewer than 2^16 pixels), its offsets 32 bits
  // (inputs of fewer than 2^31 pixels).
  const bool slidingFits = n > 1 && n < 65536 && kSlidingMaxBytes <= sharedMemoryPerBlock &&
                           g.inputSize[0] * g.inputSize[1] * g.inputSize[2] < (std::int64_t{ 1 } << 31);
  if (request == MedianKernel::SlidingHistogram && !slidingFits && n > 1)
  {
    note << "the sliding histogram was asked for, but "
         << (n >= 65536
               ? "the " + std::to_string(n) + "-pixel window overflows its 16-bit counters"
               : (kSlidingMaxBytes > sharedMemoryPerBlock ? std::string("its counters do not fit the shared memory")
                                                          : std::string("the input has 2^31 pixels or more")))
         << "; ";
  }
  // Automatic: from 256 pixels per level of counting on, where it overtook
  // the radix tile on an H100 (512x512x72 uint16, 12-bit keys, one level:
  // radius 3, 343 pixels, 15.1 ms against 22.8). Not for 3 or more levels
  // (wide float spans): the lower levels rebuild their counters wherever
  // the prefix above them changes, which random floats do at every step
  // (512^3 float, radius 5: 1962 ms against 1394 for the radix tile).
  const Word keyLimit = Keys<T>::Bits == 32 ? 0xFFFFFFFFu : (1u << Keys<T>::Bits) - 1u;
  const int  levels = SlidingLevelCount(std::min(keySpan, keyLimit));
  const bool slidingPays = levels <= 2 && n >= kSlidingMinPixelsPerLevel * levels;
  if (slidingFits &&
      (request == MedianKernel::SlidingHistogram ||
       ((request == MedianKernel::Automatic || request == MedianKernel::Selection) && slidingPays && !windowOverImage)))
  {
    plan.kernel = MedianKernel::SlidingHistogram;
    plan.sharedBytes = kSlidingMaxBytes;
    const int          slide = SlideAxis(g);
    std::ostringstream os;
    os << "sliding histogram along " << (slide == 1 ? "y" : "z") << ": " << n
       << "-pixel window, each step counts the plane entering and the plane leaving the window ("
       << 2 * n / (2 * g.radius[slide] + 1) << " pixels)";
    plan.description = note.str() + os.str();
    return plan;
  }

  // Radix select on a tile, unless the tile is too large or the window is
  // much larger than the image (the global kernel then counts less).
  const std::size_t tileBytes = RadixTileBytes(g, static_cast<int>(sizeof(typename Keys<T>::Storage)));
  const bool        tileFits = tileBytes <= sharedMemoryPerBlock;
  if (n > 1 && tileFits &&
      (request == MedianKernel::RadixTile || (request != MedianKernel::RadixGlobal && !windowOverImage)))
  {
    plan.kernel = MedianKernel::RadixTile;
    plan.sharedBytes = tileBytes;
    std::ostringstream os;
    os << "radix select on a shared-memory tile: " << n << "-pixel window, " << Keys<T>::Bits
       << "-bit keys, passes only over the bits where the window's extremes differ";
    plan.description = note.str() + os.str();
    return plan;
  }
  if (n > 1 && request != MedianKernel::RadixGlobal)
  {
    if (!tileFits)
    {
      note << "the radius " << RadiusText(g) << " needs a shared-memory tile of " << tileBytes / 1024
           << " KiB, more than the " << sharedMemoryPerBlock / 1024 << " KiB a block may use; ";
    }
    else
    {
      note << "the window (" << n << " pixels) is more than twice the image it covers (" << clampedBox << " pixels); ";
    }
  }
  plan.kernel = MedianKernel::RadixGlobal;
  std::ostringstream os;
  if (n == 1)
  {
    os << "radius 0: a copy (global-memory kernel)";
  }
  else
  {
    os << "radix select from global memory over the window clamped to the image (" << n << "-pixel window, "
       << Keys<T>::Bits << "-bit keys)";
  }
  plan.description = note.str() + os.str();
  return plan;
}

namespace median
{

/** Fills the extents of launch parameters (inSize, inStride, outStart,
 * outSize, outStride, radius) in a logical axis order: logical axis a is
 * physical axis phys[a]. */
template <class TParams>
void
SetLogicalAxes(const MedianGeometry & g, const int phys[3], TParams & p)
{
  const std::int64_t inStride[3] = { 1, g.inputSize[0], g.inputSize[0] * g.inputSize[1] };
  const std::int64_t outStride[3] = { 1, g.outputSize[0], g.outputSize[0] * g.outputSize[1] };
  for (int a = 0; a < 3; ++a)
  {
    p.inSize[a] = static_cast<int>(g.inputSize[phys[a]]);
    p.inStride[a] = inStride[phys[a]];
    p.outStart[a] = static_cast<int>(g.outputStart[phys[a]]);
    p.outSize[a] = static_cast<int>(g.outputSize[phys[a]]);
    p.outStride[a] = outStride[phys[a]];
    p.radius[a] = static_cast<int>(g.radius[phys[a]]);
  }
}

template <typename T>
SelectionParams
MakeSelectionParams(const MedianGeometry & g, const MedianPlan & plan)
{
  const int       lanes = kLanes<T>;
  const int       phys[3] = { 0, 3 - plan.pairAxis, plan.pairAxis };
  SelectionParams p{};
  SetLogicalAxes(g, phys, p);
  const SelectionLayout layout = LayoutOf(g, plan.pairAxis, lanes);
  for (int a = 0; a < 3; ++a)
  {
    p.threads[a] = layout.threads[a];
    p.tile[a] = layout.tile[a];
    p.blocks[a] = (p.outSize[a] + layout.blockOutputs[a] - 1) / layout.blockOutputs[a];
  }
  p.span = layout.span;
  const int plane = p.tile[0] * p.tile[1];
  const int low = plane * p.tile[2], high = low + p.span; // the padding regions

  const Bucket & bucket = kBuckets[plan.bucket];
  const int      own = (2 * p.radius[0] + 1) * (2 * p.radius[1] + 1);
  const int      common = 2 * p.radius[2] * own;
  if (common > bucket.common || own > bucket.own)
  {
    throw std::logic_error("MakeSelectionParams: the window does not fit its bucket");
  }
  // Offsets of the union of the two windows, plane by plane across the pair
  // axis: plane 0 belongs to window 0 only, plane 2 r + 1 to window 1 only.
  const auto planeOffsets = [&](int u, int * offsets)
  {
    for (int j = 0; j <= 2 * p.radius[1]; ++j)
    {
      for (int i = 0; i <= 2 * p.radius[0]; ++i)
      {
        *offsets++ = i + j * p.tile[0] + u * plane;
      }
    }
  };
  for (int u = 1; u <= 2 * p.radius[2]; ++u)
  {
    planeOffsets(u, p.common + (u - 1) * own);
  }
  planeOffsets(0, p.own[0]);
  planeOffsets(2 * p.radius[2] + 1, p.own[1]);
  // Padding pairs: common parts are even and own parts odd, in windows and
  // buckets alike, so the counts are even.
  for (int i = common; i < bucket.common; ++i)
  {
    p.common[i] = (i - common) % 2 ? high : low;
  }
  for (int i = own; i < bucket.own; ++i)
  {
    p.own[0][i] = p.own[1][i] = (i - own) % 2 ? high : low;
  }
  return p;
}

RadixParams
MakeRadixParams(const MedianGeometry & g, const MedianPlan & plan, int)
{
  RadixParams p{};
  RadixBlock(g, p.threads);
  for (int a = 0; a < 3; ++a)
  {
    p.inSize[a] = static_cast<int>(g.inputSize[a]);
    p.outStart[a] = static_cast<int>(g.outputStart[a]);
    p.outSize[a] = static_cast<int>(g.outputSize[a]);
    p.radius[a] = static_cast<int>(g.radius[a]);
    p.blocks[a] = static_cast<int>((g.outputSize[a] + p.threads[a] - 1) / p.threads[a]);
    p.tile[a] = plan.kernel == MedianKernel::RadixTile ? static_cast<int>(p.threads[a] + 2 * g.radius[a]) : 0;
  }
  p.middle = static_cast<std::uint32_t>(MedianWindowSize(g) / 2);
  return p;
}

template <typename T>
SlidingParams
MakeSlidingParams(const MedianGeometry & g)
{
  const int     slide = SlideAxis(g);
  const int     phys[3] = { 0, 3 - slide, slide };
  SlidingParams p{};
  SetLogicalAxes(g, phys, p);
  // Enough warps to fill the device; segments no shorter than the window
  // along the slide axis, so the build at a segment's start stays a
  // fraction of the segment's work.
  const std::int64_t lines = static_cast<std::int64_t>(p.outSize[0]) * p.outSize[1];
  const std::int64_t wanted = (kSlidingTargetWarps + lines - 1) / lines;
  const std::int64_t longest = (p.outSize[2] + 2 * p.radius[2]) / (2 * p.radius[2] + 1);
  const std::int64_t segments = std::max<std::int64_t>(1, std::min(wanted, longest));
  p.segment = static_cast<int>((p.outSize[2] + segments - 1) / segments);
  p.segments = (p.outSize[2] + p.segment - 1) / p.segment;
  p.warps = kSlidingWarps;
  p.blocksX = (p.outSize[0] + p.warps - 1) / p.warps;
  p.middle = static_cast<Word>(MedianWindowSize(g) / 2);
  return p;
}

template <typename T>
std::vector<SlidingParams>
SlidingLaunches(const MedianGeometry & g, Word lowest, Word highest, std::size_t, std::string & what)
{
  SlidingParams p = MakeSlidingParams<T>(g);
  const Word    span = highest - lowest;
  const int     levels = SlidingLevelCount(span);
  p.base = lowest;
  p.spanBits = SpanBits(span);
  std::vector<SlidingParams> launches;
  std::ostringstream         os;
  os << "; the input's keys span " << static_cast<std::uint64_t>(span) + 1 << " values, counted in ";
  for (int level = 0; level < levels; ++level)
  {
    p.shift = 12 * (levels - 1 - level);
    p.bits = level == 0 ? p.spanBits - p.shift : 12;
    const Word largestDigit = level == 0 ? span >> p.shift : 4095u;
    p.counters = static_cast<int>(largestDigit / 64 + 1) * 64;
    launches.push_back(p);
    os << (level == 0 ? "" : " + ") << p.bits;
  }
  os << (levels == 1 ? " bits (one level" : " bits (levels") << " of 16-bit counters)";
  what = os.str();
  return launches;
}

std::string
IntegralFloatsNote(int lowest, int highest)
{
  std::ostringstream os;
  os << "float pixels, all integers in [" << lowest << ", " << highest << "]: the median of their 16-bit offsets from "
     << lowest << " (the same order, so the same median); ";
  return os.str();
}

template <typename T>
void
KeyRangeOnHost(const T * input, const MedianGeometry & g, Word & lowest, Word & highest)
{
  const std::int64_t count = g.inputSize[0] * g.inputSize[1] * g.inputSize[2];
  lowest = 0xFFFFFFFFu;
  highest = 0;
  for (std::int64_t i = 0; i < count; ++i)
  {
    const Word key = Keys<T>::ToKey(input[i]);
    lowest = std::min(lowest, key);
    highest = std::max(highest, key);
  }
}

} // namespace median

// ---------------------------------------------------------------------------
// The kernels' code on the CPU, block by block.

template <typename T>
MedianPlan
MedianEmulateCUDA(const T *              input,
                  T *                    output,
                  const MedianGeometry & g,
                  MedianKernel           request,
                  std::size_t            sharedMemoryPerBlock)
{
  using namespace median;
  const std::string why = ValidateMedianJob(g);
  if (!why.empty())
  {
    throw std::invalid_argument("MedianEmulateCUDA: " + why);
  }
  MedianPlan plan = PlanMedian<T>(g, request, sharedMemoryPerBlock);
  if constexpr (std::is_same<T, float>::value)
  {
    // as MedianCUDA: float pixels that all hold integers spanning fewer
    // than 2^16 values run on 16-bit offsets from the smallest
    const std::int64_t inCount = g.inputSize[0] * g.inputSize[1] * g.inputSize[2];
    const std::int64_t outCount = g.outputSize[0] * g.outputSize[1] * g.outputSize[2];
    int                lo = 0, hi = -1;
    bool               integral = plan.kernel != MedianKernel::Selection && MedianWindowSize(g) > 1;
    for (std::int64_t i = 0; integral && i < inCount; ++i)
    {
      integral = IntegralFloat(input[i]);
      lo = i == 0 ? static_cast<int>(input[i]) : std::min(lo, static_cast<int>(input[i]));
      hi = i == 0 ? static_cast<int>(input[i]) : std::max(hi, static_cast<int>(input[i]));
    }
    if (integral && hi - lo < 65536)
    {
      std::vector<unsigned short> in(static_cast<std::size_t>(inCount)), out(static_cast<std::size_t>(outCount));
      for (std::int64_t i = 0; i < inCount; ++i)
      {
        in[i] = static_cast<unsigned short>(static_cast<int>(input[i]) - lo);
      }
      plan = MedianEmulateCUDA(in.data(), out.data(), g, request, sharedMemoryPerBlock);
      for (std::int64_t i = 0; i < outCount; ++i)
      {
        output[i] = static_cast<float>(lo + out[i]);
      }
      plan.description = IntegralFloatsNote(lo, hi) + plan.description;
      return plan;
    }
  }
  Word lowest = 0, highest = 0xFFFFFFFFu;
  if (plan.kernel != MedianKernel::Selection && MedianWindowSize(g) > 1)
  {
    // as MedianCUDA: the keys' span can make the sliding histogram cheaper
    KeyRangeOnHost(input, g, lowest, highest);
    plan = PlanMedian<T>(g, request, sharedMemoryPerBlock, highest - lowest);
  }
  if (plan.kernel == MedianKernel::Selection)
  {
    const SelectionParams p = MakeSelectionParams<T>(g, plan);
    const int             blockOutputs[3] = { p.threads[0] * kLanes<T>, p.threads[1], 2 * p.threads[2] }; // LayoutOf
    const int             threads = p.threads[0] * p.threads[1] * p.threads[2];
    std::vector<std::uint64_t> shared((plan.sharedBytes + 7) / 8); // 8-byte aligned, as the row pointers need
    std::uint32_t *            tile = reinterpret_cast<std::uint32_t *>(shared.data());
    WithSelectionWindow(
      plan.bucket,
      p,
      [&](auto window)
      {
        for (std::int64_t block = 0; block < BlockCount(p.blocks); ++block)
        {
          int first[3], origin[3];
          BlockOrigins(p.blocks, static_cast<unsigned>(block), blockOutputs, p.outStart, p.radius, first, origin);
          const auto lines = reinterpret_cast<const T **>(tile + SelectionLinesWord(p.tile, p.span));
          SelectionLines<T>(p, input, lines, origin, 0, 1);
          for (int t = 0; t < threads; ++t)
          {
            SelectionLoadTile<T>(p, lines, tile, origin, t / 32, t % 32, threads / 32);
          }
          for (int t2 = 0; t2 < p.threads[2]; ++t2)
            for (int t1 = 0; t1 < p.threads[1]; ++t1)
              for (int t0 = 0; t0 < p.threads[0]; ++t0)
              {
                SelectionThread<T, decltype(window)>(p, tile, output, first, t0, t1, t2);
              }
        }
      });
    return plan;
  }
  if (plan.kernel == MedianKernel::SlidingHistogram)
  {
    std::string what;
    for (const SlidingParams & p : SlidingLaunches<T>(g, lowest, highest, sharedMemoryPerBlock, what))
    {
      std::vector<Word> shared(static_cast<std::size_t>(SlidingWarpWords(p)));
      auto &            header = *reinterpret_cast<SlidingHeader *>(shared.data());
      Word *            counts = shared.data() + kSlidingHeaderWords;
      for (std::int64_t block = 0; block < SlidingBlockCount(p); ++block)
      {
        for (int warp = 0; warp < p.warps; ++warp)
        {
          int o0, o1, zBegin, zEnd;
          SlidingPlace(p, static_cast<unsigned>(block), warp, o0, o1, zBegin, zEnd);
          for (int z = zBegin; o0 < p.outSize[0] && z < zEnd; ++z)
          {
            const SlidingStep s = SlidingBegin<T>(p, output, header, o0, o1, z, zBegin);
            for (int lane = 0; lane < 32; ++lane)
            {
              SlidingClear(p, header, counts, s, lane);
            }
            for (int lane = 0; lane < 32; ++lane)
            {
              SlidingCount<T>(p, input, header, counts, s, o0, o1, z, lane);
            }
            SlidingFind<T>(p, output, header, counts, s, 0);
          }
        }
      }
    }
    MedianPlan ran = plan;
    ran.description += what;
    return ran;
  }
  const RadixParams p = MakeRadixParams(g, plan, static_cast<int>(sizeof(typename Keys<T>::Storage)));
  const int         threads = p.threads[0] * p.threads[1] * p.threads[2];
  std::vector<typename Keys<T>::Storage> tile(
    plan.kernel == MedianKernel::RadixTile ? static_cast<std::size_t>(p.tile[0]) * p.tile[1] * p.tile[2] : 0);
  for (std::int64_t block = 0; block < BlockCount(p.blocks); ++block)
  {
    int first[3], origin[3];
    BlockOrigins(p.blocks, static_cast<unsigned>(block), p.threads, p.outStart, p.radius, first, origin);
    if (plan.kernel == MedianKernel::RadixTile)
    {
      for (int t = 0; t < threads; ++t)
      {
        RadixLoadTile<T>(p, input, tile.data(), origin, t / 32, t % 32, threads / 32);
      }
    }
    for (int t2 = 0; t2 < p.threads[2]; ++t2)
      for (int t1 = 0; t1 < p.threads[1]; ++t1)
        for (int t0 = 0; t0 < p.threads[0]; ++t0)
        {
          if (plan.kernel == MedianKernel::RadixTile)
          {
            RadixTileThread<T>(p, tile.data(), output, first, t0, t1, t2);
          }
          else
          {
            RadixGlobalThread<T>(p, input, output, first[0] + t0, first[1] + t1, first[2] + t2);
          }
        }
  }
  return plan;
}

#define CIF_INSTANTIATE_MEDIAN_PLAN(T)                                                                                 \
  template MedianPlan              PlanMedian<T>(const MedianGeometry &, MedianKernel, std::size_t, std::uint32_t);    \
  template median::SelectionParams median::MakeSelectionParams<T>(const MedianGeometry &, const MedianPlan &);         \
  template std::vector<median::SlidingParams> median::SlidingLaunches<T>(                                              \
    const MedianGeometry &, median::Word, median::Word, std::size_t, std::string &);                                   \
  template MedianPlan MedianEmulateCUDA<T>(const T *, T *, const MedianGeometry &, MedianKernel, std::size_t);
CIF_INSTANTIATE_MEDIAN_PLAN(unsigned char)
CIF_INSTANTIATE_MEDIAN_PLAN(short)
CIF_INSTANTIATE_MEDIAN_PLAN(unsigned short)
CIF_INSTANTIATE_MEDIAN_PLAN(float)

} // namespace cif
