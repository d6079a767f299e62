/*=========================================================================
 *  CudaImageFilters: the box filters' core (mean and flat-box erosion).
 *
 *  Plain types only (no ITK, no CUDA headers): the ITK filters
 *  (itkCudaMeanImageFilter.h, itkCudaGrayscaleErodeImageFilter.h) and the
 *  benchmarks call these functions.
 *=========================================================================*/
#ifndef cifBoxFilters_h
#define cifBoxFilters_h

#include <cstdint>
#include <string>

namespace cif
{

/** A box-filter job in up to three dimensions (x fastest; unused axes have
 * size 1, start 0 and radius 0). The input is a dense buffer of inputSize
 * samples; the output is a dense buffer covering the input indices
 * [outputStart, outputStart + outputSize) on every axis. The input's extent
 * is the domain: indices outside it are handled by each filter's boundary
 * rule. */
struct BoxGeometry
{
  std::int64_t inputSize[3]{ 1, 1, 1 };
  std::int64_t outputStart[3]{ 0, 0, 0 };
  std::int64_t outputSize[3]{ 1, 1, 1 };
  int          radius[3]{ 0, 0, 0 }; ///< the box is (2 radius + 1) samples long on each axis
};

/** Checks a job; returns an empty string when it is valid, else why not. */
std::string
ValidateBoxJob(const BoxGeometry & geometry);

/** Number of samples in the box, prod (2 r + 1). */
std::int64_t
BoxVolume(const BoxGeometry & geometry);

/** Largest radius per axis the GPU kernels take (their shared-memory tiles
 * hold 2 r + 32 samples along the filtered axis). */
constexpr int MaxGPUBoxRadius = 64;

/** How the GPU computed a mean (BoxMeanCUDA's answer). */
enum class BoxMeanMethod
{
  /** Integer sums (integer input) in one kernel: each block marches through
   * the planes of its tile, summing rows, columns and the last 2 rz + 1
   * planes from shared memory; exact, so identical to ITK's double sum. */
  FusedInteger,
  /** Separable integer sums, one pass per axis (integer input whose box is
   * too large for the fused tile): exact, so identical to ITK's double sum. */
  SeparableInteger,
  /** Direct double-precision sum over the box in ITK's offset order (x
   * fastest, then y, then z) from a shared-memory tile: bit-identical to
   * itk::MeanImageFilter for floating-point input. */
  DirectITKOrder,
  /** Separable double-precision sums (floating-point input whose box is too
   * large for the direct tile): identical to ITK whenever the double partial
   * sums are exact (for example integer-valued data, or box values within
   * 2^20 of each other in magnitude); otherwise the two sums may round
   * differently and the output may differ from ITK's in its last bit. */
  SeparableDouble
};

/** The mean of itk::MeanImageFilter: each output is the sum of the (2r+1)^D
 * input samples of its box, indices clamped to the input's extent on each
 * axis (zero-flux Neumann), divided by the box volume in double precision,
 * then converted with static_cast. TIn is unsigned char, short, unsigned
 * short or float; TOut is TIn or float.
 *
 * CPU: integer input is summed separably in 32-bit integers, or 64-bit when
 * the box could overflow them (exact, so the same as ITK's double sum); floating-point input is summed directly in
 * double precision in ITK's order, so the result is ITK's bit for bit.
 * Multi-threaded over lines. */
template <typename TIn, typename TOut>
void
BoxMeanCPU(const TIn * input, TOut * output, const BoxGeometry & geometry, int numberOfThreads);

/** GPU core of the mean (device pointers); see BoxMeanMethod for the
 * arithmetic. Needs radius <= MaxGPUBoxRadius on every axis. Throws
 * cif::CudaFailure on CUDA errors and cif::CudaOutOfMemory when a temporary
 * cannot be allocated; returns after the device finished. */
template <typename TIn, typename TOut>
BoxMeanMethod
BoxMeanCUDA(const TIn * input, TOut * output, const BoxGeometry & geometry);

/** The flat-box erosion of itk::GrayscaleErodeImageFilter with
 * itk::FlatStructuringElement::Box (the anchor and basic algorithms): each
 * output is the minimum of the input samples of its box that lie inside the
 * input's extent, and of `boundary` when the box reaches past the extent on
 * an axis whose radius is not 0 (ITK pads each line with one boundary
 * sample; its default is the pixel type's maximum, which never wins except
 * against +Inf). NaN samples are ignored (the minimum of the other values;
 * NaN only when every sample of an interior box is NaN): ITK's result with
 * NaN depends on the order its algorithm visits the samples and is not
 * reproduced. T is unsigned char, short, unsigned short or float.
 * Separable (one pass per axis), multi-threaded. */
template <typename T>
void
BoxMinCPU(const T * input, T * output, const BoxGeometry & geometry, T boundary, int numberOfThreads);

/** GPU core of the erosion (device pointers): one pass when the box's
 * tile fits in shared memory (one read and one write of the image), else
 * separable passes through shared-memory tiles; the same result as
 * BoxMinCPU. Needs radius <=
 * MaxGPUBoxRadius on every axis. Throws as BoxMeanCUDA. */
template <typename T>
void
BoxMinCUDA(const T * input, T * output, const BoxGeometry & geometry, T boundary);

/** Whether this build has the GPU code (compiled with nvcc). */
bool
BoxFiltersCUDAIsCompiled();

} // namespace cif

#endif
