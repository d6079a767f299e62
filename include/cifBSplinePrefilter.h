/*=========================================================================
 *  CudaImageFilters: the cubic B-spline prefilter core.
 *
 *  Plain types only (no ITK, no CUDA headers): the ITK filter, the
 *  command-line tool and the benchmarks call these functions.
 *=========================================================================*/
#ifndef cifBSplinePrefilter_h
#define cifBSplinePrefilter_h

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace cif
{

/** Extents of a prefilter job in up to three dimensions (x fastest). Unused
 * axes have size 1 and start 0. Indices are relative to the first index of
 * the whole image, whose mirror boundaries lie at 0 and imageSize - 1. */
struct PrefilterGeometry
{
  std::int64_t imageSize[3]{ 1, 1, 1 };
  std::int64_t inputStart[3]{ 0, 0, 0 }; ///< first index of the (contiguous) input buffer
  std::int64_t inputSize[3]{ 1, 1, 1 };
  std::int64_t outputStart[3]{ 0, 0, 0 }; ///< first index of the (contiguous) output buffer
  std::int64_t outputSize[3]{ 1, 1, 1 };
};

enum class PrefilterMethod
{
  Recursive, ///< exact causal/anticausal recursion (Unser), whole lines
  FIR        ///< truncated direct convolution (Champagnat & Le Sant), local
};

struct PrefilterParameters
{
  PrefilterMethod method{ PrefilterMethod::Recursive };
  /** Poles of the recursive filter (cubic: one pole, sqrt(3) - 2). */
  std::vector<double> poles{ -0.26794919243112270 };
  /** Horizon of the mirror-boundary causal initialisation, as ITK: the sum
   * stops after ceil(log(tolerance) / log|z|) terms when the line is longer. */
  double tolerance{ 1e-10 };
  /** FIR half-width K: 2K + 1 taps. */
  int firHalfWidth{ 13 };
  /** The axes to filter (default all; axes of length 1 are never filtered).
   * The slab runner filters x and y of z slabs, then z of y slabs; at least
   * one axis of length > 1 must be on unless the image is one pixel. */
  bool filterAxis[3]{ true, true, true };
};

/** Largest FIR half-width the module accepts. */
constexpr int MaxFIRHalfWidth = 32;

/** The poles of the B-spline prefilter of order 0 to 5, as
 * itk::BSplineDecompositionImageFilter sets them (none for orders 0 and 1).
 * Throws std::invalid_argument for other orders. */
std::vector<double>
BSplinePoles(int splineOrder);

/** The cubic prefilter's pole, sqrt(3) - 2. */
double
CubicPole();

/** Taps b(0..K) of the truncated cubic prefilter b(k) = sqrt(3) z^|k|,
 * z = sqrt(3) - 2, renormalised so that b(0) + 2 (b(1) + ... + b(K)) = 1. */
std::vector<double>
CubicFIRTaps(int halfWidth);

/** Mass of the discarded tails, 2 sqrt(3) |z|^(K+1) / (1 - |z|): a bound on
 * the per-axis deviation of the FIR from the exact filter, relative to the
 * input's maximum magnitude. */
double
CubicFIRTruncationBound(int halfWidth);

/** Smallest K whose truncation bound is at most `tolerance`
 * (1e-7 gives K = 13, float32-level agreement; 7 is the paper's FIR15). */
int
CubicFIRHalfWidthForTolerance(double tolerance);

/** Checks a job; returns an empty string when it is valid, else why not. */
std::string
ValidatePrefilterJob(const PrefilterGeometry & geometry, const PrefilterParameters & parameters);

/** Progress callback, called with a fraction in [0, 1]. May be empty. */
using ProgressCallback = std::function<void(double)>;

/** CPU core (multi-threaded, double-precision line arithmetic).
 * Recursive: input and output must both cover the whole image.
 * FIR: the input must cover the output grown by K on every axis (clipped to
 * the image); the output may be any sub-region. */
template <typename TIn, typename TOut>
void
PrefilterCPU(const TIn *                 input,
             TOut *                      output,
             const PrefilterGeometry &   geometry,
             const PrefilterParameters & parameters,
             int                         numberOfThreads,
             const ProgressCallback &    progress = {});

/** GPU core: the same contract with device pointers, double-precision
 * arithmetic with TOut between axis passes; cubic (one pole) only. Throws cif::CudaFailure on CUDA errors
 * and cif::CudaOutOfMemory when a temporary cannot be allocated. Returns
 * after the device finished. */
template <typename TIn, typename TOut>
void
PrefilterCUDA(const TIn *                 input,
              TOut *                      output,
              const PrefilterGeometry &   geometry,
              const PrefilterParameters & parameters,
              const ProgressCallback &    progress = {});

/** Whether this build has the GPU core (compiled with nvcc). */
bool
PrefilterCUDAIsCompiled();

} // namespace cif

#endif
