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

/** The GPU job of a neighbourhood filter (cif::RunNeighbourhoodJobCUDA) on
 * ITK images: slabs only for host images, the one-piece job through the
 * images' device buffers. */
template <typename TInputImage, typename TOutputImage, typename TGeometry, typename TCore>
std::string
CudaRunNeighbourhoodJob(const TInputImage *                 input,
                        TOutputImage *                      output,
                        const TGeometry &                   geometry,
                        const std::array<std::int64_t, 3> & halo,
                        bool                                wholeSlabs,
                        std::size_t                         workBytesPerInputPixel,
                        TCore &&                            core,
                        const cif::SlabProgress &           progress)
{
  using InPixel = typename TInputImage::PixelType;
  using OutPixel = typename TOutputImage::PixelType;
  return cif::RunNeighbourhoodJobCUDA<InPixel, OutPixel>(
    CudaHostImages(input, output),
    [input] { return input->GetBufferPointer(); },
    [output] { return output->GetBufferPointer(); },
    geometry,
    halo,
    wholeSlabs,
    workBytesPerInputPixel,
    core,
    [&]
    {
      CudaInputBuffer<TInputImage>   in(input);
      CudaOutputBuffer<TOutputImage> out(output);
      core(in.Get(), out.Get(), geometry);
      out.Commit();
    },
    progress);
}

} // namespace itk

#endif
