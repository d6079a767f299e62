/*=========================================================================
 *  CudaImageFilters: the core of Gaussian radial basis function (GRBF)
 *  interpolation (seed 003: Chen, Chen, Yu, 2014), plain types only.
 *
 *  The interpolant of samples f_i on the pixel grid is
 *      S(x) = sum_i a_i exp(-|x - x_i|^2 / (2 sigma^2)),  with S(x_j) = f_j,
 *  i.e. Phi a = f with Phi_ij = exp(-|x_i - x_j|^2 / (2 sigma^2)). On a
 *  rectangular grid with a per-axis sigma (in index units) the Gaussian
 *  factorises, Phi is the Kronecker product of per-axis Gram matrices G_a,
 *  and S on another axis-aligned grid is F multiplied along each axis by
 *  M_a = E_a G_a^-1 (E_a: Gaussians between the axis's output positions and
 *  its input nodes). The rows of M_a are the cardinal functions; they decay
 *  exponentially, so each row is truncated to the taps whose dropped weight
 *  (L1) stays below a tolerance.
 *
 *  Building M_a: the nodes are uniform, so every window of W consecutive
 *  nodes has the same Gram matrix (Toeplitz). One Cholesky factorisation of
 *  that W x W matrix in double precision (Eigen's LLT); an output at
 *  position p takes the window of W nodes centred on it (clamped to the
 *  axis) and its weights solve G w = e(p), e(p) the Gaussians between p and
 *  the window's nodes (two triangular solves: backward stable, so the
 *  weights' error stays near kappa * eps where multiplying by the explicit
 *  inverse loses another factor of its entries' size). W = min(n, 2 H + 1)
 *  with H = 60 sigma^2 (at least 32): the nodes beyond H change the weights
 *  by less than the conditioning allows one to see (tested against the full
 *  solve). Rows at the same offset in the same window are solved once, so
 *  building costs O(H^3 + distinct rows x H^2), whatever the axis length.
 *=========================================================================*/
#ifndef cifGaussianRBF_h
#define cifGaussianRBF_h

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace cif
{

/** Options of the exact (separable) GRBF method. */
struct GrbfOptions
{
  /** Bound on the error against the exact interpolant, relative to the
   * largest input magnitude: the truncation of each axis's cardinal
   * functions drops at most tolerance / 8 of weight (L1) per output, and
   * the Gram matrices must be well enough conditioned for double precision
   * to reach it (else ValidateGrbf... throws). In (0, 0.01]. */
  double tolerance{ 1e-6 };
  /** lambda >= 0 added to the diagonal of every Gram matrix (Tikhonov). 0
   * interpolates (S(x_i) = f_i); lambda > 0 smooths instead and bounds the
   * condition number by about (sum of a Gram row + lambda) / lambda, which
   * extends the usable sigma. */
  double ridge{ 0.0 };
};

/** The truncated operator of one axis: output k = sum over t < taps of
 * weights[k * taps + t] * input[first[k] + t]. Positions are continuous
 * indices along the axis (node i at i). */
struct GrbfAxisOperator
{
  std::int64_t inputSize{ 0 };
  std::int64_t outputSize{ 0 };
  double       sigma{ 1.0 }; ///< in index units
  /** Output node k equals input node k (k < n = outputSize): M is the identity. */
  bool                      identity{ false };
  int                       taps{ 0 };
  std::vector<std::int64_t> first;
  std::vector<double>       weights;
  /** 1 where the position lies outside [-0.5, n - 0.5), the extent of
   * itk::ResampleImageFilter's IsInsideBuffer: such outputs get the default
   * value (their weights are 0). */
  std::vector<std::uint8_t> outside;
  /** The 1-norm condition number of the (ridged) window Gram matrix. */
  double conditionNumber{ 1.0 };
  /** Largest L1 norm of a row (the operator's infinity norm: how much it can
   * amplify errors in its input). */
  double largestRowL1{ 1.0 };
  /** Largest weight (L1) dropped from a row by the truncation. */
  double truncatedL1{ 0.0 };
  /** Window size W used for the factorisation. */
  std::int64_t window{ 0 };
};

/** Builds the operator of one axis for the output positions
 * firstPosition + k * step, k < outputSize (step may be negative), with
 * Gaussian sigma (index units). Throws std::invalid_argument for sizes < 1,
 * sigma <= 0, non-finite positions or parameters, a tolerance outside
 * (0, 0.01] or a negative ridge, and std::domain_error when the Gram matrix
 * is too ill-conditioned for double precision to reach the tolerance (it
 * names sigma, the condition number and the largest usable sigma). */
GrbfAxisOperator
BuildGrbfAxisOperator(std::int64_t        inputSize,
                      double              sigma,
                      std::int64_t        outputSize,
                      double              firstPosition,
                      double              step,
                      const GrbfOptions & options);

/** Condition number of the Gaussian Gram matrix of a long uniform axis at
 * sigma (index units), about exp(pi^2 sigma^2 / 2) / 2, and the largest
 * sigma whose condition number keeps double precision within `tolerance`
 * (the limit BuildGrbfAxisOperator enforces, with ridge 0). */
double
GrbfLargestSigma(double tolerance);

/** An axis-aligned output grid in the input's continuous indices: along
 * axis a, output k sits at first[a] + k step[a]; sigma in pixels (x fastest,
 * unused axes left at their defaults). */
struct GrbfGrid
{
  int          dimension{ 2 };
  std::int64_t inputSize[3]{ 1, 1, 1 };
  std::int64_t outputSize[3]{ 1, 1, 1 };
  double       first[3]{ 0, 0, 0 };
  double       step[3]{ 1, 1, 1 };
  double       sigma[3]{ 1, 1, 1 };
  GrbfOptions  options;

  /** Same dimension, options and, on every used axis, sizes, positions and
   * sigma (exactly): the same operators. */
  bool
  operator==(const GrbfGrid & other) const;
};

/** A separable GRBF job: D = 1, 2 or 3 axes (x fastest, dense buffers), one
 * operator per axis (shared pointers so that plans can share them). */
struct GrbfSeparableJob
{
  int                                     dimension{ 2 };
  std::shared_ptr<const GrbfAxisOperator> axis[3];
  /** Written where some axis's position is outside the input's extent. */
  double defaultValue{ 0.0 };
  /** Results are clamped to [outputMin, outputMax], then converted with
   * static_cast (itk::ResampleImageFilter's rule); NaN stays NaN for
   * floating-point outputs and becomes the default value for integers. */
  double outputMin{ -1e308 };
  double outputMax{ 1e308 };
};

/** The separable job of a grid: one operator per axis
 * (BuildGrbfAxisOperator), shared by axes with the same sizes, positions
 * and sigma. Throws as BuildGrbfAxisOperator, and std::invalid_argument for
 * a dimension outside 1 to 3. */
GrbfSeparableJob
MakeGrbfSeparableJob(const GrbfGrid & grid);

/** Checks a job; returns an empty string when it is valid, else why not. */
std::string
ValidateGrbfJob(const GrbfSeparableJob & job);

/** The order in which the axes are applied: identity axes skipped, then
 * shrinking axes before growing ones (the intermediate images stay small). */
std::vector<int>
GrbfPassOrder(const GrbfSeparableJob & job);

/** CPU core: T is unsigned char, short, unsigned short, float or double.
 * Each axis pass accumulates in double and stores float (double for double
 * images) intermediates. Multi-threaded. */
template <typename T>
void
GrbfSeparableCPU(const T * input, T * output, const GrbfSeparableJob & job, int numberOfThreads);

/** The device-side form of a job's operators (banded blocks for cuBLAS),
 * built once and reused by GrbfSeparableCUDA; opaque. */
class GrbfDevicePlan;

/** Uploads a job's operators to the current device (float weights, double
 * for double images). The plan also keeps its executions' work buffers
 * (intermediate images, pointer arrays) when they total at most 64 MiB, so
 * that small jobs do not pay cudaMalloc on every call; concurrent
 * executions with one plan allocate their own. Throws cif::CudaFailure /
 * cif::CudaOutOfMemory. */
std::shared_ptr<GrbfDevicePlan>
MakeGrbfDevicePlan(const GrbfSeparableJob & job, bool doublePrecision);

/** GPU core (device pointers): each axis pass is a banded matrix product,
 * blocks of output rows times the band of input rows they reach, through
 * cuBLAS (SGEMM in float32 without TF32, DGEMM for double images), on the
 * current stream; then the default value outside and the cast. `plan` comes
 * from MakeGrbfDevicePlan for this job (nullptr: built here). Returns after
 * the device finished. */
template <typename T>
void
GrbfSeparableCUDA(const T * input, T * output, const GrbfSeparableJob & job, const GrbfDevicePlan * plan = nullptr);

/** The seed's block mode (Chen, Chen, Yu 2014), for fidelity and
 * comparison: the input is cut into blocks of blockSize nodes per axis that
 * share `overlap` nodes with their neighbours (the last block of an axis is
 * moved back to end at the last node); each block solves its own dense
 * system Phi_B a = f_B (Phi_B of order prod(blockSize), LU with partial
 * pivoting, i.e. Gaussian elimination, in float32 like the seed or in
 * double); an output is evaluated from every block whose extent
 * [start - 0.5, start + size - 0.5) holds it, blended linearly across the
 * overlap of two blocks per axis (the seed's "natural stitching"). Without
 * overlap the blocks meet at seams. Output positions are an axis-aligned
 * grid as in the exact method; outside the input's extent the default
 * value. */
struct GrbfBlockJob
{
  int          dimension{ 2 };
  std::int64_t inputSize[3]{ 1, 1, 1 };
  std::int64_t outputSize[3]{ 1, 1, 1 };
  double       first[3]{ 0, 0, 0 }; ///< output position of index 0, in input continuous index
  double       step[3]{ 1, 1, 1 };
  double       sigma[3]{ 1, 1, 1 }; ///< in pixels
  int          blockSize[3]{ 16, 16, 8 };
  int          overlap[3]{ 1, 1, 1 };
  bool         doublePrecision{ false }; ///< false: float32 solve and sums (the seed)
  double       defaultValue{ 0.0 };
  double       outputMin{ -1e308 };
  double       outputMax{ 1e308 };
};

/** Checks a block job (sizes, sigma > 0, 0 <= overlap <= blockSize / 2,
 * blocks of at most 8192 nodes); empty when valid. */
std::string
ValidateGrbfBlockJob(const GrbfBlockJob & job);

/** Block mode on the CPU (Eigen's LU), multi-threaded evaluation. */
template <typename T>
void
GrbfBlockCPU(const T * input, T * output, const GrbfBlockJob & job, int numberOfThreads);

/** Block mode on the GPU (device pointers): cuSOLVER getrf/getrs on the
 * block system with every block's pixels as right-hand sides, then one
 * thread per output. */
template <typename T>
void
GrbfBlockCUDA(const T * input, T * output, const GrbfBlockJob & job);

/* GRBF at arbitrary points (transforms, point sets): not separable, so
 * each point sums over a tensor of taps. Coefficients a = Phi^-1 f are
 * computed along the axes where that is numerically safe ("coefficient
 * axes"), and each point sums a times the Gaussians there; along the other
 * axes ("cardinal axes") the point's cardinal weights are computed from the
 * window's inverse Gram matrix and applied to the samples directly:
 *   S(p) = sum_j A_j prod_{coefficient a} exp(-(p_a - j_a)^2 / (2 s_a^2))
 *                    prod_{cardinal a} L_a(p_a; j_a),
 * A = f multiplied along the coefficient axes by the (windowed, truncated)
 * rows of G_a^-1, and L_a(p; j) = sum_i C_a(j, i) exp(-(p - i)^2 / (2 s_a^2))
 * (C_a the inverse of the window's Gram matrix, the window placed as in
 * BuildGrbfAxisOperator). Why not coefficients everywhere: the coefficients
 * grow like the product of the axes' condition numbers (1.8e8 per axis at
 * sigma = 2 pixels) and the sum at a point cancels them, so double
 * precision keeps tolerance only while eps * prod(condition numbers) <=
 * tolerance / 4; axes are made coefficient axes, best conditioned first,
 * while that holds (all of them at sigma = 1, one at sigma >= 1.3 in 2D).
 * Cost per point: prod over axes of its taps (2 radius + 1 Gaussians or
 * 2 cardinalRadius + 1 cardinal weights), plus the cardinal weights
 * themselves. */

/** The most taps per axis the point evaluation takes. */
constexpr int kGrbfMaxPointTaps = 512;

/** One axis of the point evaluation. */
struct GrbfPointsAxis
{
  std::int64_t inputSize{ 1 };
  double       sigma{ 1.0 }; ///< in index units
  bool         cardinal{ false };
  /** Gaussian taps: nodes within `radius` of the point (coefficient axes;
   * on cardinal axes, the nodes L_a sums over). */
  int radius{ 0 };
  /** Cardinal axes: the largest half-width of the cardinal weights around
   * the point's nearest node m (the table below has it per distance). */
  int cardinalRadius{ 0 };
  /** The window (W nodes, half-width H); cardinal axes: its inverse Gram
   * matrix C (W x W, row-major) followed by `radii` half-widths, the one for
   * each distance d = min(m, n - 1 - m) of m from the axis's ends (beyond
   * the table: its last entry, the interior's). */
  std::int64_t        window{ 1 };
  std::int64_t        halfWindow{ 0 };
  int                 radii{ 0 };
  std::vector<double> inverse;
  double              conditionNumber{ 1.0 };
};

/** Everything the point evaluation of an image's interpolant needs, built
 * once per input size, sigma and options: the axes, and the separable job
 * that turns samples into the coefficient image A (rows of G_a^-1 along the
 * coefficient axes, identity along the cardinal ones; double precision). */
struct GrbfPointsPlan
{
  int              dimension{ 2 };
  GrbfPointsAxis   axis[3];
  GrbfOptions      options;
  GrbfSeparableJob coefficientJob;
};

/** Builds the plan; throws as BuildGrbfAxisOperator (std::invalid_argument,
 * std::domain_error for ill-conditioned axes) and std::domain_error when an
 * axis would need more than kGrbfMaxPointTaps taps. */
GrbfPointsPlan
MakeGrbfPointsPlan(int dimension, const std::int64_t inputSize[3], const double sigma[3], const GrbfOptions & options);

/** The evaluation rule of a plan in plain form, for the CPU (host pointers)
 * or a kernel (device pointers to the cardinal axes' inverse matrices).
 * Axes at or past `dimension` are trivial (weight 1 at index 0). */
struct GrbfPointsRule
{
  int          dimension{ 0 };
  std::int64_t size[3]{ 1, 1, 1 };
  double       inv2s2[3]{ 0.5, 0.5, 0.5 }; ///< 1 / (2 sigma^2)
  int          radius[3]{ 0, 0, 0 };
  int          cardinal[3]{ 0, 0, 0 };
  int          cardinalRadius[3]{ 0, 0, 0 };
  int          radii[3]{ 0, 0, 0 };
  std::int64_t window[3]{ 1, 1, 1 };
  std::int64_t halfWindow[3]{ 0, 0, 0 };
  /** Cardinal axes: GrbfPointsAxis::inverse (C, then the radius table). */
  const double * inverse[3]{ nullptr, nullptr, nullptr };
  /** How far (in nodes) from a point its taps reach, per axis. */
  int
  Reach(int a) const
  {
    return cardinal[a] ? cardinalRadius[a] + 1 : radius[a] + 1;
  }
};

/** The rule of a plan with host pointers (valid while the plan lives). */
GrbfPointsRule
GrbfHostRule(const GrbfPointsPlan & plan);

/** A plan's rule on the current device: the cardinal axes' inverse
 * matrices uploaded and `rule` pointing at them (valid while `storage`
 * lives). Throws cif::CudaFailure / cif::CudaOutOfMemory. */
struct GrbfDeviceRule
{
  GrbfPointsRule        rule;
  std::shared_ptr<void> storage;
};
GrbfDeviceRule
MakeGrbfDeviceRule(const GrbfPointsPlan & plan);

/** The coefficient image A of `input` (dense, x fastest, the plan's input
 * size), in double: CPU, multi-threaded. T is any of the separable core's
 * types. */
template <typename T>
void
GrbfCoefficientsCPU(const T * input, double * coefficients, const GrbfPointsPlan & plan, int numberOfThreads);

/** The same on the GPU (device pointers). */
template <typename T>
void
GrbfCoefficientsCUDA(const T * input, double * coefficients, const GrbfPointsPlan & plan);

/** S at one point c (continuous index relative to the first sample, x
 * fastest; unused axes 0) from the coefficient image (host memory). No
 * inside test: the Gaussian sum continues past the nodes. */
double
GrbfEvaluateCPU(const double * coefficients, const GrbfPointsRule & rule, const double c[3]);

/** S at `count` points (`dimension` continuous indices per point, x
 * first), written to `values`; points outside [-0.5, size - 0.5) on some
 * axis or non-finite get `defaultValue`. CPU: multi-threaded; CUDA: device
 * pointers (the rule's inverse pointers too), on the current stream,
 * returns when done. */
void
GrbfEvaluatePointsCPU(const double *         coefficients,
                      const GrbfPointsRule & rule,
                      const double *         points,
                      std::int64_t           count,
                      double                 defaultValue,
                      double *               values,
                      int                    numberOfThreads);
/** S at every pixel of an output grid whose input continuous index is the
 * affine map c = matrix o + offset of the output index o (x fastest), into
 * `output` (dense, outputSize) with ITK's inside rule, the clamp to
 * [outputMin, outputMax] and static_cast (NaN: NaN for floating point, the
 * default value for integers). CPU, multi-threaded; the GPU does the same
 * through ResampleCUDA's GaussianRBF rule. */
template <typename T>
void
GrbfEvaluateAffineCPU(const double *         coefficients,
                      const GrbfPointsRule & rule,
                      const std::int64_t     outputSize[3],
                      const double           matrix[3][3],
                      const double           offset[3],
                      double                 defaultValue,
                      double                 outputMin,
                      double                 outputMax,
                      T *                    output,
                      int                    numberOfThreads);

void
GrbfEvaluatePointsCUDA(const double *         coefficients,
                       const GrbfPointsRule & rule,
                       const double *         points,
                       std::int64_t           count,
                       double                 defaultValue,
                       double *               values);

/** Whether this build has the GPU core. */
bool
GrbfCUDAIsCompiled();

} // namespace cif

#endif
