/*=========================================================================
 *  CudaImageFilters: the module's GPU filters on images larger than the
 *  device (see cifSlabs.h for the slab runner).
 *=========================================================================*/
#ifndef itkCudaSlabs_h
#define itkCudaSlabs_h

#include "cif/Slabs.h"
#include "itkCudaFilterImage.h"

#include <array>
#include <cstdint>
#include <string>

namespace itk
{

/** True when `image` is not an itk::CudaFilterImage: its pixels live in host
 * memory, so a GPU filter may stream them through the device in slabs. (A
 * CudaFilterImage hands its whole buffer to the device, which is how a GPU
 * pipeline keeps its data there.) */
template <typename TImage>
bool
CudaIsHostImage(const TImage * image)
{
  using CudaType = CudaFilterImage<typename TImage::PixelType, TImage::ImageDimension>;
  return dynamic_cast<const CudaType *>(image) == nullptr;
}

/** True when neither image is an itk::CudaFilterImage (CudaIsHostImage). */
template <typename TInputImage, typename TOutputImage>
bool
CudaHostImages(const TInputImage * input, const TOutputImage * output)
{
  return CudaIsHostImage(input) && CudaIsHostImage(output);
}

} // namespace itk

#endif
