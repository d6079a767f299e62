/*=========================================================================
 *  CudaImageFilters: the mask filter's cores (itk::MaskImageFilter's rule).
 *
 *  out = (mask != maskingValue) ? in : outsideValue, pixel by pixel, the
 *  mask compared in its own pixel type and the image copied in its own:
 *  exactly ITK's MaskImageFilter (Functor::MaskInput) for an output of the
 *  input's type. NaN mask pixels differ from every masking value, so they
 *  keep the image's pixel; a NaN masking value keeps every pixel; NaN
 *  image pixels pass through. Plain types only (no ITK, no CUDA headers).
 *=========================================================================*/
#ifndef cif_Mask_h
#define cif_Mask_h

#include <cstdint>

namespace cif
{

/** The job: the image and the mask buffers have the input's size; the
 * output is the region of outputSize pixels from outputStart inside it. */
struct MaskGeometry
{
  std::int64_t inputSize[3]{ 1, 1, 1 };
  std::int64_t outputStart[3]{ 0, 0, 0 };
  std::int64_t outputSize[3]{ 1, 1, 1 };
};

/** The rule on the CPU, with `numberOfThreads` threads. */
template <typename T, typename TMask>
void
MaskCPU(const T *            input,
        const TMask *        mask,
        T *                  output,
        const MaskGeometry & geometry,
        TMask                maskingValue,
        T                    outsideValue,
        int                  numberOfThreads);

/** The same on the current CUDA stream (device buffers). */
template <typename T, typename TMask>
void
MaskCUDA(const T * input, const TMask * mask, T * output, const MaskGeometry & geometry, TMask maskingValue, T outsideValue);

/** Whether the CUDA core is compiled in. */
bool
MaskCUDAIsCompiled();

} // namespace cif

#endif
