/*=========================================================================
 *  CudaImageFilters: shrink by subsampling, every f-th pixel per axis
 *  (itk::ShrinkImageFilter: the virtual domain of each level of
 *  ImageRegistrationMethodv4). No arithmetic: each output pixel is a copy
 *  of one input pixel, so the result is ITK's bit for bit.
 *
 *  Pixel types: uint8, int16, uint16, float, double (input and output of
 *  one type), 1 to 3 dimensions. Plain types only (no ITK, no CUDA).
 *=========================================================================*/
#ifndef cif_Shrink_h
#define cif_Shrink_h

#include <cstdint>
#include <string>

namespace cif
{

/** A shrink job: output pixel (i, j, k) is input pixel inputOffset + (i f0,
 * j f1, k f2) of the input buffer (x fastest; unused axes size 1, factor
 * 1). */
struct ShrinkGeometry
{
  std::int64_t inputSize[3]{ 1, 1, 1 };
  std::int64_t inputOffset[3]{ 0, 0, 0 };
  std::int64_t outputSize[3]{ 1, 1, 1 };
  std::int64_t factor[3]{ 1, 1, 1 };
};

/** Empty when the job is valid (factors at least 1, every sampled pixel
 * inside the input buffer), else why not. */
std::string
ValidateShrinkJob(const ShrinkGeometry & geometry);

/** The input index that output pixel 0 samples when a whole image of n
 * pixels (index from 0) shrinks by f to m = max(1, floor(n / f)) pixels:
 * ITK's grid puts the output's centre on the input's, so output pixel 0
 * lies at input index (n - 1) / 2 - f (m - 1) / 2, rounded half up (ITK's
 * TransformPhysicalPointToIndex), which is floor((n - f (m - 1)) / 2). */
std::int64_t
ShrinkFirstIndex(std::int64_t n, std::int64_t f);

/** CPU core, multi-threaded over output lines. */
template <typename T>
void
ShrinkCPU(const T * input, T * output, const ShrinkGeometry & geometry, int numberOfThreads);

/** GPU core: device pointers, one thread per output pixel on the current
 * stream; returns after the device finished. Throws cif::CudaFailure. */
template <typename T>
void
ShrinkCUDA(const T * input, T * output, const ShrinkGeometry & geometry);

/** Whether this build has the GPU core. */
bool
ShrinkCUDAIsCompiled();

} // namespace cif

#endif
