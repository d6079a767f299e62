/*=========================================================================
 *  CudaImageFilters: spatially varying Gaussian kernel superposition
 *  (seed paper 004, da Silva, Ansorge and Jena: "Efficient scatter-based
 *  kernel superposition on GPU").
 *
 *  Every input pixel x spreads its intensity over its neighbours with its
 *  own, axis-aligned, pixel-integrated Gaussian (the seed's eq. 4):
 *
 *    out(y) = sum_x I(x) prod_a w_a(y_a - x_a; s_a(x)),
 *    w(d; s) = 1/2 [erf((d + 1/2) / (sqrt(2) s)) - erf((d - 1/2) / (sqrt(2) s))]
 *
 *  for |d| <= r = ceil(cutoff s), and 0 beyond; s is the pixel's sigma along
 *  axis a in pixels (its sigma in physical units times pixelsPerUnit[a],
 *  i.e. divided by the spacing). w(d; s) is the integral of the Gaussian
 *  over the output pixel [d - 1/2, d + 1/2], so over all d it sums to
 *  exactly 1. s = 0 gives w(0) = 1 (the identity).
 *
 *  The cut-off mass, the part of the Gaussian beyond r + 1/2 (at most
 *  erfc(cutoff / sqrt 2) per axis: 0.27% at 3 sigma), is either
 *  - CutoffMass::Renormalize (default): each axis's weights are divided by
 *    their sum within the cut-off, erf((r + 1/2) / (sqrt(2) s)), so every
 *    pixel keeps its mass exactly (a truncated, renormalised Gaussian); or
 *  - CutoffMass::Discard: the weights are the exact integrals and the tail
 *    is lost.
 *
 *  Output pixels are a box of the same grid (x fastest), possibly larger
 *  than the input (padded by the largest radius: nothing leaves the grid, so
 *  with Renormalize the output's sum equals the input's) or smaller.
 *  Contributions that land outside the output box are dropped.
 *
 *  Plain types only (no ITK, no CUDA headers).
 *=========================================================================*/
#ifndef cifKernelSuperposition_h
#define cifKernelSuperposition_h

#include <cstdint>
#include <functional>
#include <string>

namespace cif
{

/** What happens to the Gaussian's mass beyond the cut-off (see above). */
enum class CutoffMass : std::uint8_t
{
  Renormalize,
  Discard
};

/** How the GPU computes the superposition. The CPU core always scatters (by
 * output slabs, race-free); it ignores this choice.
 * - Automatic: ScatterWarpSynchronous (measured fastest on an H200, see
 *   docs/KernelSuperposition.md) where the tile fits the device's shared
 *   memory, ScatterGlobalAtomics beyond (the report says so).
 * - Scatter: the seed's scatter, taken to 3D: a block owns a tile of input
 *   pixels, accumulates one output plane of the tile plus its halo in
 *   shared memory with shared-memory atomics, then adds it to the output
 *   with global atomics, plane by plane (so 3D needs only a 2D plane of
 *   shared memory). The radius is the largest inside the tile; tiles whose
 *   intensities are all zero are skipped.
 * - ScatterWarpSynchronous: the same tile with the seed's warp-synchronous
 *   accumulation (no atomics inside the tile: __syncthreads per row offset,
 *   __syncwarp per column offset), measured against Scatter on Hopper.
 * - ScatterGlobalAtomics: each thread adds its pixel's contributions to the
 *   output with global atomics (no tile; any radius).
 * - Gather: the exact gather baseline: each output pixel sums, over the box
 *   of the largest radius, every neighbour's own kernel (2 D erf per
 *   neighbour), with the neighbours' parameters precomputed once. */
enum class KernelSuperpositionMethod : std::uint8_t
{
  Automatic,
  Scatter,
  ScatterWarpSynchronous,
  ScatterGlobalAtomics,
  Gather
};

/** "automatic", "scatter", "scatter-warp-synchronous", "scatter-global-atomics", "gather". */
const char *
ToString(KernelSuperpositionMethod method);
/** Parses the names above; false for anything else. */
bool
KernelSuperpositionMethodFromString(const std::string & text, KernelSuperpositionMethod & method);

/** The grid of a job in up to three dimensions (x fastest; unused axes size
 * 1). The output box starts at outputStart (in input indices: negative when
 * the output is padded) and has outputSize samples per axis. */
struct KernelSuperpositionGeometry
{
  int          dimension{ 2 };
  std::int64_t inputSize[3]{ 1, 1, 1 };
  std::int64_t outputStart[3]{ 0, 0, 0 };
  std::int64_t outputSize[3]{ 1, 1, 1 };

  std::int64_t
  InputCount() const
  {
    return inputSize[0] * inputSize[1] * inputSize[2];
  }
  std::int64_t
  OutputCount() const
  {
    return outputSize[0] * outputSize[1] * outputSize[2];
  }
};

struct KernelSuperpositionParameters
{
  /** Kernel radius in sigmas (the seed's n_sigma, r = ceil(cutoff s)); > 0, finite, <= 100. */
  double cutoff{ 3.0 };
  /** Samples per physical unit along each axis (1 / spacing): s = sigma * pixelsPerUnit[a]. */
  double     pixelsPerUnit[3]{ 1.0, 1.0, 1.0 };
  CutoffMass cutoffMass{ CutoffMass::Renormalize };
  /** GPU only. */
  KernelSuperpositionMethod method{ KernelSuperpositionMethod::Automatic };
};

/** Largest radius, in samples, the cores accept per axis (a sigma beyond
 * cutoff s = 4096 samples is refused with an exception). */
constexpr int KernelSuperpositionMaxRadius = 4096;

/** The sigma maps of a job: one map per axis, or one map for all axes
 * (axis[1] and axis[2] null: the same physical sigma along every axis). */
template <typename TSigma>
struct SigmaMaps
{
  const TSigma * axis[3]{ nullptr, nullptr, nullptr };

  const TSigma *
  Get(int a) const
  {
    return axis[a] != nullptr ? axis[a] : axis[0];
  }
};

/** The largest kernel radius over the sigma maps, per axis (0 on unused axes). */
struct KernelSuperpositionRadius
{
  int radius[3]{ 0, 0, 0 };
};

/** Radius r = ceil(cutoff s) of a sigma s in samples (0 for s = 0), computed
 * in double on both devices so that the CPU and the GPU agree; -1 when s is
 * negative or not finite, or the radius exceeds KernelSuperpositionMaxRadius. */
int
KernelSuperpositionRadiusOf(double sigmaInSamples, double cutoff);

/** Empty when the geometry and parameters are valid, else why not. */
std::string
ValidateKernelSuperpositionJob(const KernelSuperpositionGeometry & geometry, const KernelSuperpositionParameters & p);

/** The geometry whose output is the input's grid padded by `radius` on both
 * sides of every used axis (outputStart = -radius). */
KernelSuperpositionGeometry
PaddedKernelSuperpositionGeometry(int dimension, const std::int64_t inputSize[3], const KernelSuperpositionRadius & r);

/** Checks every sigma (host pointers) and returns the largest radius per
 * axis. Throws std::invalid_argument naming the first bad sample (its index
 * and value): negative, NaN or infinite, or a radius beyond
 * KernelSuperpositionMaxRadius. Multi-threaded. */
template <typename TSigma>
KernelSuperpositionRadius
KernelSuperpositionLargestRadiusCPU(const SigmaMaps<TSigma> &             sigma,
                                    const KernelSuperpositionGeometry &   geometry,
                                    const KernelSuperpositionParameters & p,
                                    int                                   numberOfThreads);

/** Throws the std::invalid_argument both devices give for a bad sigma: the
 * pixel, the map's axis (-1 for an isotropic map), the sigma as stored and
 * in samples, and why (negative or not finite, or too large a radius). */
[[noreturn]] void
ThrowBadKernelSuperpositionSigma(std::int64_t                          pixel,
                                 int                                   axis,
                                 double                                sigma,
                                 double                                samples,
                                 const KernelSuperpositionParameters & p);

/** Progress callback, called with a fraction in [0, 1]. May be empty. */
using KernelSuperpositionProgress = std::function<void(double)>;

/** CPU core: double precision with std::erf / std::erfc (no tables),
 * multi-threaded and race-free (each thread owns a slab of output planes and
 * scatters every input pixel that reaches it). Validates the sigmas first
 * (as KernelSuperpositionLargestRadiusCPU). Outputs are written in full
 * (pixels no input reaches are 0). Throws std::invalid_argument for an
 * invalid job. Non-finite intensities spread as in a convolution: a NaN
 * input makes every output within its radius NaN. */
template <typename TIn, typename TSigma, typename TOut>
void
KernelSuperpositionCPU(const TIn *                           input,
                       const SigmaMaps<TSigma> &             sigma,
                       TOut *                                output,
                       const KernelSuperpositionGeometry &   geometry,
                       const KernelSuperpositionParameters & p,
                       int                                   numberOfThreads,
                       const KernelSuperpositionProgress &   progress = {});

/** GPU: checks the sigma maps (device pointers) and returns the largest
 * radius per axis; throws std::invalid_argument for a bad sigma, as the CPU
 * version. Returns after the device finished. */
KernelSuperpositionRadius
KernelSuperpositionLargestRadiusCUDA(const SigmaMaps<float> &              sigma,
                                     const KernelSuperpositionGeometry &   geometry,
                                     const KernelSuperpositionParameters & p);

/** GPU core: the same contract as the CPU core with device pointers, single
 * precision (erff / erfcf, float accumulation; the scatter methods add with
 * atomics, so the order of the sums, and the last bits, vary from run to
 * run). Returns one line saying which method ran, the largest radius, and
 * how many tiles were skipped as all-zero. Throws cif::CudaFailure on CUDA
 * errors, cif::CudaOutOfMemory when a work buffer cannot be allocated,
 * std::invalid_argument for an invalid job or sigma. Returns after the
 * device finished. */
template <typename TIn>
std::string
KernelSuperpositionCUDA(const TIn *                           input,
                        const SigmaMaps<float> &              sigma,
                        float *                               output,
                        const KernelSuperpositionGeometry &   geometry,
                        const KernelSuperpositionParameters & p);

/** Whether this build has the GPU core (compiled with nvcc). */
bool
KernelSuperpositionCUDAIsCompiled();

} // namespace cif

#endif
