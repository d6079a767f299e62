/*=========================================================================
 *  CudaImageFilters: Thirion's demons registration (plain types only), as
 *  itk::DemonsRegistrationFilter computes it.
 *
 *  The field u (D floats per pixel, on the fixed image's grid) starts from
 *  an initial field or zero. One iteration, ITK's order
 *  (FiniteDifferenceImageFilter::GenerateData with
 *  DemonsRegistrationFilter::InitializeIteration and ApplyUpdate):
 *  1. when smoothField: u is smoothed with ITK's GaussianOperator<float>
 *     (variance standardDeviations[a]^2 in pixels, maximumError,
 *     maximumKernelWidth; coefficients rounded to float) along x, then y,
 *     then z, each output sample a float sum over the kernel in its order
 *     with edge samples repeated (VectorNeighborhoodOperatorImageFilter,
 *     ZeroFluxNeumann);
 *  2. per pixel (DemonsRegistrationFunction::ComputeUpdate, in double): the
 *     point p = origin + indexToPoint i + u(i); when p is outside the
 *     moving buffer (ITK's IsInsideBuffer) the update is zero and the pixel
 *     is not counted; else m = linear interpolation of the moving image at
 *     p, the fixed gradient g by central differences (zero on the buffer's
 *     first and last index of an axis, else (f(i+1) - f(i-1)) (0.5 /
 *     spacing), turned by the direction), s = f(i) - m, and with
 *     K = mean squared spacing, d = s^2 / K + |g|^2: the update is zero when
 *     |s| < intensityDifferenceThreshold or d < denominatorThreshold, else
 *     s g / d, rounded to float. Sums: s^2 and the count over the counted
 *     pixels, the squares of the (float) update components;
 *  3. when smoothUpdate: the update is smoothed as in 1. with
 *     updateStandardDeviations;
 *  4. u += update (float).
 *  ITK's metric is then sumOfSquaredDifference / pixelsProcessed and its
 *  RMS change sqrt(sumOfSquaredChange / pixelsProcessed).
 *
 *  Vercauteren's diffeomorphic demons (variant Diffeomorphic), as
 *  itk::DiffeomorphicDemonsRegistrationFilter with its
 *  ESMDemonsRegistrationFunction computes them (the full account, with
 *  ITK 5.2.1's file:line for each step: docs/design/diffeomorphic-demons/
 *  ITK52-update.md). One iteration:
 *  1. W = the moving image warped by u onto the fixed grid (linear
 *     interpolation, stored in the moving pixel type: integer types
 *     truncated; `movingOutside`, the pixel type's maximum, where the point
 *     lies more than half a pixel outside the moving buffer);
 *  2. per pixel where W is not `movingOutside`: s = f - W, the gradient g
 *     (Symmetric: fixed central differences, zero on the first and last
 *     index, plus W's differences, one-sided at the edges and beside
 *     outside pixels; Fixed, WarpedMoving: twice one of them;
 *     MappedMoving: twice the moving image's half-pixel central differences
 *     at x + u(x)), turned by the fixed direction, and with
 *     K = sum spacing^2 L^2 / D (L = maximumUpdateStepLength; L <= 0: no
 *     s^2/K term) the update 2 s g / (|g|^2 + s^2/K), zero below the
 *     thresholds. Sums as Thirion's, of the pixels where W is inside;
 *  3. when smoothUpdate: the update smoothed as Thirion's;
 *  4. E = exp(update) by scaling and squaring (useFirstOrderExp: E =
 *     update): n = ceil(2 + log2 L) squarings (none for L <= 0.25), or for
 *     L <= 0 ITK's automatic count from the largest update; E = update /
 *     2^n, then n times E = E + E o (Id + E);
 *  5. u = u o (Id + E) + E, the vector warps by ITK's
 *     VectorLinearInterpolateNearestNeighborExtrapolateImageFunction
 *     (edge values beyond the buffer, weights in corner order, stopping
 *     once they sum to 1);
 *  6. when smoothField: u smoothed as Thirion's (after the update here).
 *  The metric and RMS change are those of the field before the update.
 *
 *  The CPU core and the GPU core run the same per-pixel code (the GPU's
 *  compiled without fused multiply-adds), so both are ITK's arithmetic;
 *  only the order of the double sums differs from ITK's per-thread sums.
 *=========================================================================*/
#ifndef cif_Demons_h
#define cif_Demons_h

#include "cif/RegistrationMetric.h"

#include <cstdint>
#include <memory>
#include <string>

namespace cif
{

/** Which demons: Thirion's (itk::DemonsRegistrationFilter) or the
 * diffeomorphic ones (itk::DiffeomorphicDemonsRegistrationFilter). */
enum class DemonsVariant
{
  Thirion,
  Diffeomorphic
};

/** ESMDemonsRegistrationFunction's image forces, ITK's numbering. */
enum class DemonsGradient
{
  Symmetric = 0,
  Fixed = 1,
  WarpedMoving = 2,
  MappedMoving = 3
};

/** One demons registration: the fixed grid (which is the field's) and the
 * moving image's geometry (MetricImage: its buffer's size and first index,
 * origin and physical-point-to-index matrix; `values` is not read), and
 * ITK's parameters. Unused axes: size 1. */
struct DemonsJob
{
  int          dimension{ 3 };
  std::int64_t size[3]{ 1, 1, 1 };
  /** The fixed buffer's first index (ITK's index of sample 0). */
  std::int64_t start[3]{ 0, 0, 0 };
  double       origin[3]{ 0, 0, 0 };
  double       spacing[3]{ 1, 1, 1 };
  /** ITK's index-to-physical-point matrix (direction times spacing). */
  double       indexToPoint[3][3]{ { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } };
  double       direction[3][3]{ { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } };
  /** The inverse of indexToPoint (ITK's physical-point-to-index matrix of
   * the fixed image; the diffeomorphic vector warps use it). */
  double       pointToIndex[3][3]{ { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } };
  MetricImage  moving;
  /** The moving image's spacing and inverse direction (MappedMoving). */
  double movingSpacing[3]{ 1, 1, 1 };
  double movingInverseDirection[3][3]{ { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } };

  DemonsVariant variant{ DemonsVariant::Thirion };
  /** Diffeomorphic: ESMDemonsRegistrationFunction's settings. */
  DemonsGradient gradient{ DemonsGradient::Symmetric };
  double         maximumUpdateStepLength{ 0.5 };
  bool           useFirstOrderExp{ false };
  /** Diffeomorphic: NumericTraits<moving pixel>::max(), which marks warped
   * pixels outside the moving image (a moving pixel of that value counts
   * as outside too, as in ITK), and whether the moving pixel type is an
   * integer type (the warped image truncated toward zero). */
  float movingOutside{ 3.402823466e+38f };
  bool  movingIntegral{ false };

  bool     smoothField{ true };
  double   standardDeviations[3]{ 1, 1, 1 };
  bool     smoothUpdate{ false };
  double   updateStandardDeviations[3]{ 1, 1, 1 };
  double   maximumError{ 0.1 };
  unsigned maximumKernelWidth{ 30 };
  double   intensityDifferenceThreshold{ 0.001 };
  double   denominatorThreshold{ 1e-9 };
};

/** Empty when the job is valid (dimension 2 or 3, sizes, a moving image,
 * finite parameters, positive spacings, smoothing kernels ITK can make;
 * diffeomorphic: at least 2 pixels along each fixed axis, where ITK's
 * warped-image differences would read outside the buffer), else why not. */
std::string
ValidateDemonsJob(const DemonsJob & job);

/** The sums of one iteration (ITK's DemonsRegistrationFunction global
 * data). */
struct DemonsSums
{
  double       sumOfSquaredDifference{ 0 };
  std::int64_t pixelsProcessed{ 0 };
  double       sumOfSquaredChange{ 0 };
};

/** A registration in progress: the images and the field stay where the
 * solver put them (host memory, or the current CUDA device) from
 * construction to destruction; each Iterate() runs one iteration. */
class DemonsSolver
{
public:
  virtual ~DemonsSolver() = default;
  /** One iteration (steps 1 to 4, diffeomorphic 1 to 6). Throws std::runtime_error when its sums
   * are not finite (NaN or infinite values in the images or the field). */
  virtual DemonsSums
  Iterate() = 0;
  /** Copies the field (D floats per pixel, x fastest) into `field`: host
   * memory, or for the GPU solver with `onDevice` device memory of the
   * current device. */
  virtual void
  ReadField(float * field, bool onDevice = false) const = 0;
};

/** CPU core (multi-threaded over lines): fixed and moving as float in host
 * memory (they must outlive the solver), the initial field (D floats per
 * pixel) or null for zero. */
std::unique_ptr<DemonsSolver>
MakeDemonsSolverCPU(const DemonsJob & job, const float * fixed, const float * moving, const float * initialField,
                    int numberOfThreads);

/** GPU core on the current device: copies the images and the field once
 * (from host memory, or with `onDevice` from device memory of the current
 * device, without a host round trip), then per iteration launches the
 * passes on the current stream and reads back only the three sums. Throws
 * cif::CudaFailure (cif::CudaOutOfMemory when the images and the fields do
 * not fit). */
std::unique_ptr<DemonsSolver>
MakeDemonsSolverCUDA(const DemonsJob & job, const float * fixed, const float * moving, const float * initialField,
                     bool onDevice = false);

/** Whether this build has the GPU core. */
bool
DemonsCUDAIsCompiled();

} // namespace cif

#endif
