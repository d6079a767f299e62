/*=========================================================================
 *  CudaImageFilters: the cubic B-spline prefilter core.
 *
 *  Plain types only (no ITK, no CUDA headers): the ITK filter, the
 *  command-line tool and the benchmarks call these functions.
 *=========================================================================*/
#ifndef cifBSplinePrefilter_h
#define cifBSplinePrefilter_h

#include "cif/Filter.h"
#include "cif/Slabs.h"

#include <cstddef>
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

/** The core geometry of a job of the prefilter's description: the input
 * buffer stands for the whole image (the recursion takes the whole image;
 * the FIR's input covers the output grown by its half-width, ITK's
 * requested region), the output is the job's output region. */
PrefilterGeometry
PrefilterGeometryOf(const Job & job);

/** The core settings of the description's checked parameters
 * (spline_order, method, fir_half_width or fir_tolerance). */
PrefilterParameters
PrefilterParametersOf(const Parameters & parameters);

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

/** The prefilter's GPU job on host buffers: `whole()` runs it in one piece
 * (PrefilterCUDA on device buffers the caller provides); when `mayCut`
 * (host buffers) and the job does not fit the device, it runs in slabs from
 * `hostInput()` into `hostOutput()`, bit for bit equal to one piece:
 * - FIR: slabs along the slowest axis with a halo of K planes;
 * - Recursive (whole lines on every axis): two exact slab passes, the faster
 *   axes on slabs along the slowest axis, then the slowest axis on slabs
 *   along the next one, in place in the output (the input and the output
 *   must then both cover the whole image, and the image have two axes).
 * Returns how it cut the job (empty for one piece). `progress` gets the
 * fraction done of the slabbed job. */
template <typename TIn, typename TOut, typename TWhole>
std::string
RunPrefilterJobCUDA(bool                                 mayCut,
                    const std::function<const TIn *()> & hostInput,
                    const std::function<TOut *()> &      hostOutput,
                    const PrefilterGeometry &            geometry,
                    const PrefilterParameters &          parameters,
                    TWhole &&                            whole,
                    const ProgressCallback &             progress = {})
{
  int axis = 0; // the slowest axis of more than one sample
  for (int a = 1; a < 3; ++a)
  {
    axis = geometry.imageSize[a] > 1 ? a : axis;
  }
  if (parameters.method == PrefilterMethod::FIR)
  {
    SlabLayout layout = SlabLayoutOf(geometry, axis, sizeof(TIn), sizeof(TOut), parameters.firHalfWidth);
    layout.outputStart = geometry.outputStart[axis] - geometry.inputStart[axis]; // in the input buffer
    layout.workBytesPerPlane = 2 * sizeof(TOut) * (layout.inputPlaneBytes[0] / sizeof(TIn));
    return RunWholeOrInSlabsCUDA(
      mayCut,
      layout,
      [&]() -> std::vector<const void *> { return { hostInput() }; },
      [&]() -> void * { return hostOutput(); },
      SlabAxisName(axis),
      [&](const void * const * in, void * out, const Slab & slab)
      {
        PrefilterGeometry g = geometry;
        g.inputStart[axis] = geometry.inputStart[axis] + slab.inputFirst;
        g.inputSize[axis] = slab.inputCount;
        g.outputStart[axis] = geometry.outputStart[axis] + slab.outputFirst;
        g.outputSize[axis] = slab.outputCount;
        PrefilterCUDA(static_cast<const TIn *>(in[0]), static_cast<TOut *>(out), g, parameters);
      },
      whole,
      progress);
  }
  // Recursive: the first pass's layout is the whole image along `axis`
  auto planeBytes = [&](std::size_t pixel, int below)
  {
    for (int a = 0; a < below; ++a)
    {
      pixel *= static_cast<std::size_t>(geometry.imageSize[a]);
    }
    return pixel;
  };
  SlabLayout first;
  first.inputPlaneBytes = { planeBytes(sizeof(TIn), axis) };
  first.outputPlaneBytes = planeBytes(sizeof(TOut), axis);
  first.inputPlanes = first.outputPlanes = geometry.imageSize[axis];
  return RunWholeOr(
    mayCut && axis > 0,
    WholeJobDeviceBytes(first),
    whole,
    [&]
    {
      TOut * out = hostOutput();
      auto   along = [&](int filtered, int cut)
      {
        return [&, filtered, cut](const void * const * in, void * o, const Slab & slab)
        {
          PrefilterGeometry g = geometry;
          g.imageSize[cut] = g.inputSize[cut] = g.outputSize[cut] = slab.inputCount;
          PrefilterParameters p = parameters;
          for (int a = 0; a < 3; ++a)
          {
            p.filterAxis[a] = filtered < 0 ? a != axis : a == filtered;
          }
          if (filtered < 0)
          {
            PrefilterCUDA(static_cast<const TIn *>(in[0]), static_cast<TOut *>(o), g, p);
          }
          else
          {
            PrefilterCUDA(static_cast<const TOut *>(in[0]), static_cast<TOut *>(o), g, p);
          }
        };
      };
      auto half = [&](double offset)
      {
        return [&, offset](double f)
        {
          if (progress)
          {
            progress(offset + 0.5 * f);
          }
        };
      };
      const SlabReport a =
        RunInSlabsCUDA({ hostInput() }, out, first, 0, along(-1, axis), DefaultMaxSlabBufferBytes, half(0.0));
      // the slowest axis, on slabs along the next one: [axis planes][slab][faster axes]
      SlabLayout second;
      second.outer = geometry.imageSize[axis];
      second.inputPlanes = second.outputPlanes = geometry.imageSize[axis - 1];
      second.inputPlaneBytes = { planeBytes(sizeof(TOut), axis - 1) };
      second.outputPlaneBytes = second.inputPlaneBytes[0];
      const SlabReport b =
        RunInSlabsCUDA({ out }, out, second, 0, along(axis, axis - 1), DefaultMaxSlabBufferBytes, half(0.5));
      return "two slab passes, exact: the axes before " + std::string(SlabAxisName(axis)) + ' ' +
             a.Describe(SlabAxisName(axis)) + ", then " + SlabAxisName(axis) + ' ' + b.Describe(SlabAxisName(axis - 1));
    });
}

} // namespace cif

#endif
