/*=========================================================================
 *  CudaImageFilters: helpers shared by the threshold and packed-mask
 *  filters' ITK layer.
 *=========================================================================*/
#ifndef itkCudaMaskFilterDetail_h
#define itkCudaMaskFilterDetail_h

#include "cifPackedMask.h"
#include "itkImageRegion.h"
#include <type_traits>

namespace itk
{
namespace CudaMaskFilterDetail
{

template <typename T, typename... U>
constexpr bool IsOneOf = (std::is_same<T, U>::value || ...);

/** Pixel types the cores are instantiated for (src/PackedMask*.c*). */
template <typename T>
constexpr bool IsCorePixel = IsOneOf<T, unsigned char, short, unsigned short, float>;

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
