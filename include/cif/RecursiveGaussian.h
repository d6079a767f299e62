/*=========================================================================
 *  CudaImageFilters: the recursive Gaussian (Deriche's fourth-order IIR
 *  approximation of a Gaussian and of its first and second derivatives,
 *  with the constants of Farnebäck and Westin that ITK uses), along one
 *  axis, and the smoothing that applies it along every axis: the cores of
 *  itk::RecursiveGaussianImageFilter and
 *  itk::SmoothingRecursiveGaussianImageFilter, for registration's
 *  pyramids and gradients.
 *
 *  Arithmetic as ITK's: the coefficients from sigma / spacing in double
 *  (RecursiveGaussianSetUp); each line read into double, a causal and an
 *  anticausal pass of four feed-forward and four feedback terms each, the
 *  borders continued by the edge value through the boundary coefficients,
 *  the two passes added and converted to the output type. The CUDA source
 *  is compiled without fused multiply-adds, so both devices round as ITK's
 *  x86-64 build does; integer outputs truncate as x86-64's conversion
 *  through int does (ITK's static_cast).
 *
 *  Plain types only (no ITK, no CUDA types).
 *=========================================================================*/
#ifndef cif_RecursiveGaussian_h
#define cif_RecursiveGaussian_h

#include <cstdint>
#include <string>

namespace cif
{

/** The coefficients of one axis's recursion: out_causal[i] = sum_k n[k]
 * in[i - k] - sum_k d[k] out_causal[i - 1 - k], out_anticausal[i] = sum_k
 * m[k] in[i + 1 + k] - sum_k d[k] out_anticausal[i + 1 + k]; bn and bm
 * multiply the edge value in place of the feedback terms before the
 * line's start and after its end. */
struct RecursiveGaussianCoefficients
{
  double n[4]{};
  double d[4]{};
  double m[4]{};
  double bn[4]{};
  double bm[4]{};
};

/** The coefficients of ITK's RecursiveGaussianImageFilter::SetUp for a
 * sigma in physical units along an axis of this spacing (negative spacing
 * negates the first derivative), `order` 0, 1 or 2, and ITK's
 * NormalizeAcrossScale (sigma^order times the derivative; none for order
 * 0). Throws std::invalid_argument for a sigma that is not positive, a
 * spacing below 1e-8 in magnitude or another order. */
RecursiveGaussianCoefficients
RecursiveGaussianSetUp(double sigma, double spacing, int order, bool normalizeAcrossScale);

/** One axis of a D-dimensional buffer (x fastest; unused axes size 1). */
struct RecursiveGaussianAxisJob
{
  std::int64_t                  size[3]{ 1, 1, 1 };
  int                           axis{ 0 };
  RecursiveGaussianCoefficients coefficients;
};

/** Empty when the job is valid (sizes at least 1, at least 4 samples
 * along the axis: ITK's requirement), else why not. */
std::string
ValidateRecursiveGaussianAxisJob(const RecursiveGaussianAxisJob & job);

/** ITK's RecursiveGaussianImageFilter<TIn, TOut> along job.axis on the
 * CPU, multi-threaded over lines; `input` and `output` may be the same
 * buffer. TIn, TOut: uint8, int16, uint16, float, double. */
template <typename TIn, typename TOut>
void
RecursiveGaussianAxisCPU(const TIn * input, TOut * output, const RecursiveGaussianAxisJob & job, int numberOfThreads);

/** The same on the GPU (device pointers; `input` may equal `output`),
 * one thread per line on the current stream; returns after the device
 * finished. Throws cif::CudaFailure (cif::CudaOutOfMemory for its scratch,
 * one double per sample). */
template <typename TIn, typename TOut>
void
RecursiveGaussianAxisCUDA(const TIn * input, TOut * output, const RecursiveGaussianAxisJob & job);

/** itk::SmoothingRecursiveGaussianImageFilter<T, T>: order 0 along every
 * axis, the last axis first (input to the internal type, float: ITK's
 * NumericTraits<T>::FloatType, float for double too), then axes 0, 1, ...
 * (internal to internal, in place), then converted to T. `sigma` per axis in physical units, `spacing` the
 * image's. */
struct SmoothingRecursiveGaussianJob
{
  int          dimension{ 3 };
  std::int64_t size[3]{ 1, 1, 1 };
  double       sigma[3]{ 1, 1, 1 };
  double       spacing[3]{ 1, 1, 1 };
  bool         normalizeAcrossScale{ false };
};

/** CPU core, multi-threaded over lines (its internal image in host
 * memory). */
template <typename T>
void
SmoothingRecursiveGaussianCPU(const T * input, T * output, const SmoothingRecursiveGaussianJob & job,
                              int numberOfThreads);

/** GPU core: device pointers; allocates its internal buffer and scratch
 * (pooled). */
template <typename T>
void
SmoothingRecursiveGaussianCUDA(const T * input, T * output, const SmoothingRecursiveGaussianJob & job);

/** itk::GradientRecursiveGaussianImageFilter<T, Image<CovariantVector<TOut,
 * D>>>: per axis d, the first derivative along d (order 1, ITK's sigma of
 * its derivative filter: sigma[D - 1]) from the input into float (ITK's
 * internal type), then order 0 along the other axes in increasing order,
 * the i-th of them with sigma[i] (ITK's smoothing filter i keeps its sigma
 * whichever axis it runs along), in place; component d of the output is
 * that image divided by spacing[d], rounded to float (ITK stores it
 * through an NthElementImageAdaptor of float). With useImageDirection, each pixel's
 * gradient is then multiplied by `direction` (ITK's
 * TransformLocalVectorToPhysicalVector, in double). The output holds D
 * values per pixel (x fastest). */
struct GradientRecursiveGaussianJob
{
  int          dimension{ 3 };
  std::int64_t size[3]{ 1, 1, 1 };
  double       sigma[3]{ 1, 1, 1 };
  double       spacing[3]{ 1, 1, 1 };
  double       direction[3][3]{ { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } };
  bool         useImageDirection{ true };
  bool         normalizeAcrossScale{ false };
};

/** Empty when the job is valid, else why not (sizes, at least 4 pixels
 * along every axis, sigmas and spacings). */
std::string
ValidateGradientRecursiveGaussianJob(const GradientRecursiveGaussianJob & job);

/** CPU core (T: the five pixel types; TOut: float or double). */
template <typename T, typename TOut>
void
GradientRecursiveGaussianCPU(const T * input, TOut * output, const GradientRecursiveGaussianJob & job,
                             int numberOfThreads);

/** GPU core: device pointers; its internal image and scratch pooled. */
template <typename T, typename TOut>
void
GradientRecursiveGaussianCUDA(const T * input, TOut * output, const GradientRecursiveGaussianJob & job);

/** Whether this build has the GPU cores. */
bool
RecursiveGaussianCUDAIsCompiled();

} // namespace cif

#endif
