/*=========================================================================
 *  CudaImageFilters: helpers shared by the threshold and packed-mask
 *  filters' ITK layer.
 *=========================================================================*/
#ifndef itkCudaMaskFilterDetail_h
#define itkCudaMaskFilterDetail_h

#include "cif/PackedMask.h"
#include "cif/Slabs.h"
#include <vector>
#include "itkCudaExecution.h"
#include "itkImageRegion.h"
#include "itkProcessObject.h"
#include <string>

namespace itk
{
namespace CudaMaskFilterDetail
{

/** Pixel types the cores are instantiated for (src/PackedMask*.c*). */
template <typename T>
constexpr bool IsCorePixel = CudaIsOneOf<T, unsigned char, short, unsigned short, float>;

/** Why the packed-mask filters cannot run on the GPU (empty if they can). */
inline std::string
GPUUnsupportedReason()
{
  return cif::PackedMaskCUDAIsCompiled() ? std::string() : std::string("this build has no CUDA code");
}

/** The packed-mask filters process whole grids: every input, image or mask,
 * is requested whole (not the superclass's copy of the output region: a
 * mask's buffered region is a word grid). */
inline void
RequestWholeInputs(ProcessObject & filter)
{
  for (const auto & input : filter.GetIndexedInputs())
  {
    if (input)
    {
      input->SetRequestedRegionToLargestPossibleRegion();
    }
  }
}

/** The extent of a region (x fastest, unused axes 1). */
template <unsigned int D>
cif::MaskExtent
ExtentOf(const ImageRegion<D> & region)
{
  cif::MaskExtent extent;
  for (unsigned int a = 0; a < D && a < 3; ++a)
  {
    extent.size[a] = static_cast<std::int64_t>(region.GetSize(a));
  }
  return extent;
}

} // namespace CudaMaskFilterDetail
} // namespace itk

#endif
