/*=========================================================================
 *  CudaImageFilters: the median filter core (plain types only).
 *
 *  The median of the (2 rx + 1) x (2 ry + 1) x (2 rz + 1) box around each
 *  output pixel, with ITK's zero-flux Neumann boundary: window indices are
 *  clamped to the input buffer, as itk::MedianImageFilter does. Every path
 *  is exact: it returns the (N / 2)-th smallest of the N window values
 *  (0-based) in the order of cif::MedianKey.
 *
 *  Pixel types: unsigned char, short, unsigned short, float (input and
 *  output of the same type). No ITK and no CUDA header is needed here.
 *=========================================================================*/
#ifndef cifMedian_h
#define cifMedian_h

#include <cstddef>
#include <ostream>
#include <cstdint>
#include <functional>
#include <string>

namespace cif
{

/** Extents of a median job in up to three dimensions (x fastest; unused
 * axes have size 1 and radius 0). The output buffer holds outputSize pixels;
 * its first pixel sits at outputStart relative to the input buffer's first
 * pixel (any integers: window indices are clamped to [0, inputSize - 1]). */
struct MedianGeometry
{
  std::int64_t inputSize[3]{ 1, 1, 1 };
  std::int64_t outputStart[3]{ 0, 0, 0 };
  std::int64_t outputSize[3]{ 1, 1, 1 };
  std::int64_t radius[3]{ 0, 0, 0 };
};

/** The GPU algorithms (the ITK class's itk::CudaMedianKernel is this
 * enum; the Python keyword and the CLI option take the names of the median's
 * description: auto, selection, radix_tile, radix_global, sliding_histogram). */
enum class MedianKernel : std::uint8_t
{
  /** Choose per request (the cheapest that fits, see PlanMedian). */
  Automatic,
  /** Forgetful selection in registers on a shared-memory tile, each thread
   * computing 2 outputs along the window's longest y/z axis (they share the
   * work on the common part of their windows) and, for 8- and 16-bit
   * pixels, 2 along x as the two halves of 16x2 words. Windows of at most
   * 125 pixels whose shape fits one of the compiled buckets. */
  Selection,
  /** Radix select (bisection over the key bits, seed 002's histogram
   * bisection generalised) on a shared-memory tile of keys: one output per
   * thread, a min/max pass and then one counting pass per key bit that the
   * window's smallest and largest keys do not share. */
  RadixTile,
  /** The same radix select reading the input from global memory, over the
   * window clamped to the image, each clamped pixel weighted by the number
   * of window positions it stands for: any radius, and a cost that stops
   * growing once the window covers the image. */
  RadixGlobal,
  /** Sliding histograms (Huang's running histogram, on the GPU): one warp
   * walks a segment of a line along y or z with the window's key counts in
   * shared memory; each step removes the plane that leaves the window and
   * adds the one that enters, so the work per output grows with a plane of
   * the window, not with the window. Keys are counted relative to the
   * input's smallest key, in digits of at most 12 bits: one level (one
   * launch) when the keys span fewer than 4096 values, else one launch per
   * level from the top digit down, each lower level counting only the
   * pixels that share the digits found above and rebuilding its counts
   * where those change along the line. 16-bit counters and 32-bit offsets:
   * windows of fewer than 2^16 pixels, inputs of fewer than 2^31. */
  SlidingHistogram
};

const char *
MedianKernelName(MedianKernel kernel);

/** "Automatic", "Selection", "RadixTile", "RadixGlobal", "SlidingHistogram". */
inline std::ostream &
operator<<(std::ostream & os, MedianKernel kernel)
{
  switch (kernel)
  {
    case MedianKernel::Selection:
      return os << "Selection";
    case MedianKernel::RadixTile:
      return os << "RadixTile";
    case MedianKernel::RadixGlobal:
      return os << "RadixGlobal";
    case MedianKernel::SlidingHistogram:
      return os << "SlidingHistogram";
    default:
      return os << "Automatic";
  }
}

/* The order the median is taken in: each pixel value maps to an unsigned
 * key (src/core/median/cifMedianKernels.h, Keys<T>::ToKey). Integers keep their order.
 * For float, the key is the IEEE bit pattern made order-preserving (negative
 * values bit-inverted, the sign bit set on the others), so -Inf < ... < -0.0
 * < +0.0 < ... < +Inf, and every NaN (any sign, any payload) maps to the
 * largest key, above +Inf. So NaNs count as values above every number, and
 * the median of a window is NaN exactly when more than half of its pixels
 * are NaN; it is then the quiet NaN with bit pattern 0x7FFFFFFF. Without
 * NaNs the result equals ITK's (whose std::nth_element with operator< is
 * unspecified with NaNs); with both -0.0 and +0.0 in a window the two
 * compare equal, and the key order picks -0.0 first. */

/** Checks a job; returns an empty string when it is valid, else why not
 * (empty extents, a negative radius, a window of more than 2^31 - 1 pixels). */
std::string
ValidateMedianJob(const MedianGeometry & geometry);

/** Number of pixels in the window, (2 rx + 1)(2 ry + 1)(2 rz + 1). */
std::int64_t
MedianWindowSize(const MedianGeometry & geometry);

/** Which GPU kernel runs a job, and why. */
struct MedianPlan
{
  MedianKernel kernel{ MedianKernel::RadixGlobal };
  /** Selection: index into the compiled buckets (see src/core/median/cifMedianKernels.h). */
  int bucket{ -1 };
  /** Selection: the axis (1 = y, 2 = z) along which a thread's two outputs lie. */
  int pairAxis{ 2 };
  /** Dynamic shared memory of one block, bytes. */
  std::size_t sharedBytes{ 0 };
  /** One line for people: the algorithm, and why it was chosen. */
  std::string description;
};

/** Chooses the GPU kernel for a job with pixels of type T (the request, or
 * the cheapest that fits with `request` Automatic), given the device's
 * shared memory per block and, when known, the span of the input's keys
 * (largest minus smallest): the sliding histogram counts keys that span
 * fewer than 4096 values in one level, which makes it the cheapest kernel
 * for smaller windows (MedianCUDA measures the span on the device). A Selection request whose window fits no bucket,
 * or a RadixTile request whose tile exceeds the shared memory, falls back to
 * the next kernel and the description says so. */
template <typename T>
MedianPlan
PlanMedian(const MedianGeometry & geometry,
           MedianKernel           request,
           std::size_t            sharedMemoryPerBlock,
           std::uint32_t          keySpan = 0xFFFFFFFFu);

/** Progress callback, called with a fraction in [0, 1]. May be empty. */
using ProgressCallback = std::function<void(double)>;

/** CPU core: gathers each window (clamped indices) and takes its middle
 * element with std::nth_element on the keys; for 8- and 16-bit pixels and
 * windows of 64 pixels or more, a two-level histogram slides along each row
 * instead (Huang et al.). Multi-threaded over rows. */
template <typename T>
void
MedianCPU(const T *                input,
          T *                      output,
          const MedianGeometry &   geometry,
          int                      numberOfThreads,
          const ProgressCallback & progress = {});

/** GPU core: `input` and `output` are device memory. Throws
 * std::invalid_argument for an invalid job, cif::CudaFailure on CUDA errors.
 * Returns the plan that ran, after the device finished. */
template <typename T>
MedianPlan
MedianCUDA(const T *              input,
           T *                    output,
           const MedianGeometry & geometry,
           MedianKernel           request = MedianKernel::Automatic);

/** Whether this build has the GPU core. */
bool
MedianCUDAIsCompiled();

/** For tests on machines without a GPU: runs the GPU kernels' per-thread
 * code (src/core/median/cifMedianKernels.h: tile loads, selection, radix select, stores)
 * on the CPU, block by block, with host memory and the given shared memory
 * per block. Slow; the kernels' code is the same text the GPU compiles,
 * except the 16x2 min/max intrinsics, which are emulated. */
template <typename T>
MedianPlan
MedianEmulateCUDA(const T *              input,
                  T *                    output,
                  const MedianGeometry & geometry,
                  MedianKernel           request,
                  std::size_t            sharedMemoryPerBlock);

} // namespace cif

#endif
