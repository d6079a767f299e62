/*=========================================================================
 *  CudaImageFilters: the bilateral filter core (Tomasi & Manduchi; seed
 *  paper 002, eq. 1-3).
 *
 *    g(x) = sum_q h(q) f(q) / sum_q h(q),
 *    h(q) = w_domain(q - x) * exp(-(f(q) - f(x))^2 / (2 rangeSigma^2))
 *           for |f(q) - f(x)| < rangeCutoff, 0 otherwise,
 *
 *  over the box of radius (r0, r1, r2) around x, with clamp-to-edge
 *  boundaries. The domain weights come from the caller (the ITK filter
 *  builds ITK's normalised Gaussian kernel with BilateralDomainWeights).
 *  It is evaluated as f(x) + sum h (f(q) - f(x)) / sum h, so that flat
 *  regions come out exactly.
 *
 *  Plain types only (no ITK, no CUDA headers).
 *=========================================================================*/
#ifndef cifBilateral_h
#define cifBilateral_h

#include "cif/ClampedNeighborhood.h"
#include "cif/Filter.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace cif
{

struct BilateralParameters
{
  /** Radius in samples per axis (0 on unused axes). */
  int radius[3]{ 1, 1, 1 };
  /** (2 r0 + 1)(2 r1 + 1)(2 r2 + 1) domain weights, x fastest, positive. */
  std::vector<double> domainWeights;
  /** Standard deviation of the range Gaussian, in intensity units; > 0, finite. */
  double rangeSigma{ 50.0 };
  /** A neighbour contributes only when |f(q) - f(x)| < rangeCutoff (ITK: 4 rangeSigma). */
  double rangeCutoff{ 200.0 };
  /** How often the filter is applied; iteration k > 1 filters the result of
   * iteration k - 1 (in the output pixel type). Needs the whole image
   * (ClampedNeighborhoodGeometry::OutputIsWholeInput) when > 1. */
  int iterations{ 1 };
};

/** ITK's fixed support of the range Gaussian, in range sigmas. */
constexpr double BilateralRangeCutoffInSigmas = 4.0;

/** The kernel radius of the description's parameters (cif::FindFilter
 * ("bilateral"), after CompleteParameters) on `dimension` axes (any
 * number; the ITK class asks for 4 or more too): "radius" when given, else
 * ITK's automatic ceil(domain_mu domain_sigma_i / spacing_i). Returns the
 * problem, or empty: a sigma, mu or spacing that is not positive, an
 * automatic radius past 2^20, more taps than BilateralMaxTaps. The one
 * check of these settings, for every face. */
std::string
BilateralKernelRadius(const Parameters & parameters, int dimension, std::vector<std::int64_t> & radius);

/** The cores' parameters of the description's (after CompleteParameters
 * and the description's check) on `dimension` axes, 1 to 3: the radius of
 * BilateralKernelRadius, ITK's domain weights, the range sigma and cutoff,
 * the iterations. What every face runs, and what the ITK class runs for
 * the pixel types the description does not list. */
BilateralParameters
BilateralParametersOf(const Parameters & parameters, int dimension);
/** Largest number of domain taps the cores accept (a kernel of 2^22 taps
 * would take hours per volume; larger requests are refused). */
constexpr std::int64_t BilateralMaxTaps = std::int64_t{ 1 } << 22;

/** ITK's domain kernel (itk::BilateralImageFilter: a GaussianImageSource
 * sampled at the physical offsets k_i * spacing_i, then divided by its sum):
 * w(k) = exp(-1/2 sum_i (k_i spacing_i / sigma_i)^2) / sum_k w(k).
 * Axes beyond `dimension` have radius 0. */
std::vector<double>
BilateralDomainWeights(const int radius[3], const double sigma[3], const double spacing[3]);

/** Empty when the job is valid, else why not. */
std::string
ValidateBilateralJob(const ClampedNeighborhoodGeometry & geometry, const BilateralParameters & parameters);

/** Progress callback, called with a fraction in [0, 1]. May be empty. */
using BilateralProgress = std::function<void(double)>;

/** CPU core: multi-threaded, double-precision arithmetic with the exact
 * range Gaussian (std::exp; for integer inputs a table of std::exp at every
 * integer difference, which is the same values). Integer outputs are the
 * value truncated toward zero, as ITK's static_cast, after clamping to the
 * output type's range. Throws std::invalid_argument for an invalid job. */
template <typename TIn, typename TOut>
void
BilateralCPU(const TIn *                         input,
             TOut *                              output,
             const ClampedNeighborhoodGeometry & geometry,
             const BilateralParameters &         parameters,
             int                                 numberOfThreads,
             const BilateralProgress &           progress = {});

/** GPU core: the same contract with device pointers; single-precision
 * arithmetic, each weight one 2^t (ex2.approx) of the log domain weight and
 * the range term. Iterations stay on the device
 * (one temporary of the output type). Returns one line that says which
 * kernel ran: the shared-memory tile kernel (domain weights in constant
 * memory) or, for radii whose tile does not fit in shared memory or whose
 * kernel has more taps than the constant buffer holds, the global-memory
 * kernel. Throws cif::CudaFailure on CUDA errors, cif::CudaOutOfMemory when
 * the temporary cannot be allocated, std::invalid_argument for an invalid
 * job. Returns after the device finished. */
template <typename TIn, typename TOut>
std::string
BilateralCUDA(const TIn *                         input,
              TOut *                              output,
              const ClampedNeighborhoodGeometry & geometry,
              const BilateralParameters &         parameters);

/** Whether this build has the GPU core (compiled with nvcc). */
bool
BilateralCUDAIsCompiled();

} // namespace cif

#endif
