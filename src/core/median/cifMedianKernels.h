/*=========================================================================
 *  CudaImageFilters: the median kernels' per-thread code.
 *
 *  Written once for nvcc (device) and the host compiler: src/core/median/Median.cu
 *  wraps these functions in kernels, and src/core/median/MedianPlan.cxx runs the same
 *  functions block by block on the CPU (cif::MedianEmulateCUDA), so that
 *  the GPU algorithms, tile indexing included, are tested on machines
 *  without a GPU. A kernel is "load the tile (all threads), synchronise,
 *  compute (each thread)"; the two halves are separate functions here.
 *
 *  The algorithms, one header each under kernels/: MedianSelection.h
 *  (forgetful selection), MedianRadix.h (radix select, tile and global),
 *  MedianSlidingHistogram.h; the keys are public (cif/MedianKeys.h). This
 *  header adds the host side: launch parameters for MedianPlan.cxx.
 *=========================================================================*/
#ifndef cifMedianKernels_h
#define cifMedianKernels_h

#include "kernels/MedianRadix.h"
#include "kernels/MedianSelection.h"
#include "kernels/MedianSlidingHistogram.h"

#include <string>
#include <type_traits>
#include <vector>

namespace cif
{
namespace median
{

// ===========================================================================
// Host side: launch parameters (src/core/median/MedianPlan.cxx)
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

/** Calls f(Window{}) with the window type of selection parameters `p` of
 * bucket `bucket`: a CompiledWindow where one describes them, else the
 * bucket's ListedWindow. */
template <class F>
void
WithSelectionWindow(int bucket, const SelectionParams & p, F && f)
{
  if (Window3x3x3::Describes(p, bucket))
  {
    f(Window3x3x3{});
  }
  else if (Window3x3::Describes(p, bucket))
  {
    f(Window3x3{});
  }
  else
  {
    WithBucket(bucket, [&](auto b) { f(ListedWindow<decltype(b)::value>{}); });
  }
}

} // namespace median
} // namespace cif

#endif
