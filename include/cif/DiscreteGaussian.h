/*=========================================================================
 *  CudaImageFilters: the discrete Gaussian (itk::DiscreteGaussianImageFilter):
 *  a separable convolution with ITK's GaussianOperator kernels (the
 *  sampled Bessel-function kernel of Lindeberg's discrete scale space,
 *  truncated where its sum reaches 1 - maximum error and normalised), the
 *  smoothing of registration's pyramids and of the Demons' fields.
 *
 *  Arithmetic as ITK's: the kernel computed in double as ITK's
 *  GaussianOperator computes it; the axes filtered last first (axis
 *  filterDimensionality - 1 down to 0), each pass summing coefficient times
 *  sample in double in the kernel's order, indices clamped to the image
 *  (ITK's default ZeroFluxNeumannBoundaryCondition), every pass cast to
 *  the output pixel (integers truncated, as ITK's static_cast): ITK 5.2's
 *  intermediate images are of the output's type (its RealOutputImageType
 *  is Image<OutputPixelType>), so integer outputs are truncated between
 *  the passes too.
 *  The GPU is compiled without fused multiply-adds, so both devices give
 *  ITK's values up to the order of identical operations.
 *
 *  Plain types only (no ITK, no CUDA types).
 *=========================================================================*/
#ifndef cif_DiscreteGaussian_h
#define cif_DiscreteGaussian_h

#include <cstdint>
#include <string>
#include <vector>

namespace cif
{

/** ITK's GaussianOperator<double>::GenerateCoefficients for a variance in
 * pixels squared: e^-t I_k(t) for k = 0, 1, ... (modified Bessel functions
 * of the first kind, by the polynomial approximations and the downward
 * recurrence ITK uses) until twice the tail's sum reaches 1 -
 * maximumError, or the half kernel exceeds maximumKernelWidth samples
 * (then `truncated` is set: ITK's warning), normalised to sum 1 and
 * mirrored: 2 r + 1 coefficients, r >= 1. Throws std::invalid_argument for
 * a negative or non-finite variance or a maximum error outside (0, 1). */
std::vector<double>
GaussianOperatorCoefficients(double variance, double maximumError, unsigned maximumKernelWidth,
                             bool * truncated = nullptr);

/** A discrete Gaussian job in up to three dimensions (x fastest; unused
 * axes size 1): the input is a dense buffer of inputSize samples (the
 * image's edges are its edges), the output the dense region [outputStart,
 * outputStart + outputSize) of it. Axes below filterDimensionality are
 * filtered with kernel[axis] (odd length), the others copied. */
struct DiscreteGaussianJob
{
  std::int64_t        inputSize[3]{ 1, 1, 1 };
  std::int64_t        outputStart[3]{ 0, 0, 0 };
  std::int64_t        outputSize[3]{ 1, 1, 1 };
  int                 filterDimensionality{ 0 };
  std::vector<double> kernel[3];
};

/** Empty when the job is valid (sizes, the output inside the input, an
 * odd kernel on every filtered axis), else why not. */
std::string
ValidateDiscreteGaussianJob(const DiscreteGaussianJob & job);

/** CPU core, multi-threaded over lines (its intermediate images, of
 * TOut, in host memory). TIn: uint8, int16, uint16, float, double; TOut: TIn,
 * or float for the integers. */
template <typename TIn, typename TOut>
void
DiscreteGaussianCPU(const TIn * input, TOut * output, const DiscreteGaussianJob & job, int numberOfThreads);

/** GPU core: device pointers, one thread per output sample of each pass
 * on the current stream; the intermediate images (two of TOut) and the
 * kernels pooled; returns after the device finished. Throws
 * cif::CudaFailure (cif::CudaOutOfMemory for its work memory). */
template <typename TIn, typename TOut>
void
DiscreteGaussianCUDA(const TIn * input, TOut * output, const DiscreteGaussianJob & job);

/** Whether this build has the GPU core. */
bool
DiscreteGaussianCUDAIsCompiled();

} // namespace cif

#endif
