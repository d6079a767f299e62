/*=========================================================================
 *  CudaImageFilters: helpers shared by the threshold and packed-mask
 *  filters' ITK layer.
 *=========================================================================*/
#ifndef itkCudaMaskFilterDetail_h
#define itkCudaMaskFilterDetail_h

#include "cifPackedMask.h"
#include "cifSlabs.h"
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

/** The slab axis of a mask job (its slowest axis of more than one voxel,
 * never x, along which the words pack). */
inline int
SlabAxis(const cif::MaskExtent & extent)
{
  return extent.size[2] > 1 ? 2 : 1;
}

/** Bytes of one plane (all axes faster than `axis`) of an image of
 * `pixelBytes` per voxel, or of the mask's words (pixelBytes 0). */
inline std::size_t
PlaneBytes(const cif::MaskExtent & extent, int axis, std::size_t pixelBytes)
{
  std::size_t bytes = pixelBytes == 0
                        ? sizeof(std::uint32_t) * static_cast<std::size_t>(cif::MaskWordsPerRow(extent.size[0]))
                        : pixelBytes * static_cast<std::size_t>(extent.size[0]);
  for (int a = 1; a < axis; ++a)
  {
    bytes *= static_cast<std::size_t>(extent.size[a]);
  }
  return bytes;
}

/** The layout of a mask job in slabs (no halo): the inputs' and the
 * output's plane bytes (0 for words, else the pixel size). */
inline cif::SlabLayout
SlabLayoutOf(const cif::MaskExtent &          extent,
             const std::vector<std::size_t> & inputPixelBytes,
             std::size_t                      outputPixelBytes)
{
  const int       axis = SlabAxis(extent);
  cif::SlabLayout layout;
  layout.inputPlanes = layout.outputPlanes = extent.size[axis];
  for (const std::size_t bytes : inputPixelBytes)
  {
    layout.inputPlaneBytes.push_back(PlaneBytes(extent, axis, bytes));
  }
  layout.outputPlaneBytes = PlaneBytes(extent, axis, outputPixelBytes);
  return layout;
}

/** The extent of one slab's job. */
inline cif::MaskExtent
SlabExtent(cif::MaskExtent extent, const cif::Slab & slab)
{
  extent.size[SlabAxis(extent)] = slab.outputCount;
  return extent;
}

} // namespace CudaMaskFilterDetail
} // namespace itk

#endif
