/*=========================================================================
 *  CudaImageFilters: bin shrink, the average over each bin of f0 x f1 x f2
 *  pixels (itk::BinShrinkImageFilter), for the multi-resolution pyramids
 *  of registration.
 *
 *  Arithmetic as ITK's: each bin is summed in double in raster order (x
 *  fastest), multiplied by 1/(f0 f1 f2), and rounded half up for integer
 *  pixels (ITK's Math::Round), cast for float ones: the result is ITK's,
 *  bit for bit, on both devices. NaN propagates into its bin's output.
 *
 *  Pixel types: uint8, int16, uint16, float, double (input and output of
 *  one type), 1 to 3 dimensions. Plain types only (no ITK, no CUDA).
 *=========================================================================*/
#ifndef cif_BinShrink_h
#define cif_BinShrink_h

#include <cstdint>
#include <string>

namespace cif
{

/** A bin-shrink job: output pixel (i, j, k) averages input pixels
 * inputOffset + (i f0 .. i f0 + f0 - 1, j f1 .., k f2 ..) of the input buffer. */
struct BinShrinkGeometry
{
  std::int64_t inputSize[3]{ 1, 1, 1 };
  std::int64_t inputOffset[3]{ 0, 0, 0 };
  std::int64_t outputSize[3]{ 1, 1, 1 };
  int          factor[3]{ 1, 1, 1 };
};

/** Empty when the job is valid (factors at least 1, every bin inside the
 * input buffer), else why not. */
std::string
ValidateBinShrinkJob(const BinShrinkGeometry & geometry);

/** CPU core, multi-threaded over output lines. */
template <typename T>
void
BinShrinkCPU(const T * input, T * output, const BinShrinkGeometry & geometry, int numberOfThreads);

/** GPU core: device pointers, one thread per output pixel on the current
 * stream; returns after the device finished. Throws cif::CudaFailure. */
template <typename T>
void
BinShrinkCUDA(const T * input, T * output, const BinShrinkGeometry & geometry);

/** Whether this build has the GPU core. */
bool
BinShrinkCUDAIsCompiled();

} // namespace cif

#endif
