/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaCompanionImage_h
#define itkCudaCompanionImage_h

#include "cif/Filter.h"
#include "itkCudaFilterImage.h"
#include "itkCudaSlabs.h"
#include "itkImage.h"

#include <functional>
#include <memory>
#include <string>

namespace itk
{

/** \class CudaCompanionImage
 * \brief A described filter's companion image (the mask of
 * CudaMaskImageFilter: the filter's input 1), whatever its pixel type.
 *
 * The companion's pixel type is its own (a float image masked by an
 * unsigned char mask), so the described filters' shared GenerateData sees
 * it through this class: its cif::Pixel, its host buffer, its device copy
 * (an itk::CudaFilterImage hands over its own, as CudaInputBuffer does),
 * for an itk::Image of the cores' pixel types in VDimension dimensions.
 * Anything else (a decorated constant, another pixel type) is no image
 * here, and the filter runs its twin's implementation. Not copyable: the
 * device copy lives as long as this object.
 *
 * \ingroup CudaImageFilters
 */
template <unsigned int VDimension>
class CudaCompanionImage
{
public:
  explicit CudaCompanionImage(const DataObject * object)
  {
    (void)(Take<unsigned char>(object) || Take<short>(object) || Take<unsigned short>(object) ||
           Take<float>(object) || Take<double>(object));
  }
  CudaCompanionImage(const CudaCompanionImage &) = delete;
  CudaCompanionImage &
  operator=(const CudaCompanionImage &) = delete;

  /** Whether the companion is an itk::Image of one of the cores' types. */
  bool
  IsImage() const
  {
    return m_Image != nullptr;
  }
  const ImageBase<VDimension> *
  GetImage() const
  {
    return m_Image;
  }
  cif::Pixel
  GetPixel() const
  {
    return m_Pixel;
  }
  /** False for an itk::CudaFilterImage (its data may live on the device). */
  bool
  IsHost() const
  {
    return m_IsHost;
  }
  /** The buffered region's pixels in host memory. */
  const void *
  GetHostBuffer() const
  {
    return m_HostBuffer();
  }
  /** The buffered region's pixels on the device: a CudaFilterImage's own
   * copy, else an upload kept while this object lives. */
  const void *
  GetDeviceBuffer()
  {
    return m_Upload();
  }

private:
  template <typename T>
  bool
  Take(const DataObject * object)
  {
    using ImageType = Image<T, VDimension>;
    const auto * image = dynamic_cast<const ImageType *>(object);
    if (image == nullptr)
    {
      return false;
    }
    m_Image = image;
    m_Pixel = cif::PixelTypeOf<T>();
    m_IsHost = CudaIsHostImage(image);
    m_HostBuffer = [image] { return static_cast<const void *>(image->GetBufferPointer()); };
    m_Upload = [this, image]
    {
      auto buffer = std::make_shared<CudaInputBuffer<ImageType>>(image);
      m_Device = buffer;
      return static_cast<const void *>(buffer->Get());
    };
    return true;
  }

  const ImageBase<VDimension> *       m_Image{ nullptr };
  cif::Pixel                          m_Pixel{ cif::Pixel::UInt8 };
  bool                                m_IsHost{ true };
  std::function<const void *()>       m_HostBuffer;
  std::function<const void *()>       m_Upload;
  std::shared_ptr<void>               m_Device;
};

} // namespace itk

#endif
