/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaFilterImage_hxx
#define itkCudaFilterImage_hxx

#include "itkCudaFilterImage.h"

namespace itk
{

template <typename TPixel, unsigned int VImageDimension>
CudaFilterDataManager *
CudaFilterImage<TPixel, VImageDimension>::GetCudaFilterDataManager() const
{
  const PixelContainer *      container = Superclass::GetPixelContainer();
  const void *                host = container ? const_cast<PixelContainer *>(container)->GetBufferPointer() : nullptr;
  const std::size_t           bytes = container ? container->Size() * sizeof(TPixel) : 0;
  std::lock_guard<std::mutex> lock(m_ManagerMutex);
  if (m_DataManager.IsNull() || !m_DataManager->IsBoundTo(container, host, bytes))
  {
    // A new or replaced pixel container: the host copy is the current one.
    m_DataManager = CudaFilterDataManager::New();
    m_DataManager->Bind(container, const_cast<void *>(host), bytes);
  }
  return m_DataManager.GetPointer();
}

template <typename TPixel, unsigned int VImageDimension>
void
CudaFilterImage<TPixel, VImageDimension>::Allocate(bool initializePixels)
{
  Superclass::Allocate(initializePixels);
  std::lock_guard<std::mutex> lock(m_ManagerMutex);
  m_DataManager = nullptr;
}

template <typename TPixel, unsigned int VImageDimension>
void
CudaFilterImage<TPixel, VImageDimension>::Initialize()
{
  Superclass::Initialize();
  std::lock_guard<std::mutex> lock(m_ManagerMutex);
  m_DataManager = nullptr; // the old device copy goes with the old container
}

template <typename TPixel, unsigned int VImageDimension>
void
CudaFilterImage<TPixel, VImageDimension>::Graft(const Superclass * image)
{
  Superclass::Graft(image);
  const auto *                source = dynamic_cast<const Self *>(image);
  CudaFilterDataManager::Pointer    shared = source ? source->GetCudaFilterDataManager() : nullptr;
  std::lock_guard<std::mutex> lock(m_ManagerMutex);
  // Share the residency state with the image we now share the buffer with.
  m_DataManager = shared;
}

template <typename TPixel, unsigned int VImageDimension>
TPixel *
CudaFilterImage<TPixel, VImageDimension>::GetBufferPointer()
{
  if (Superclass::GetPixelContainer() != nullptr)
  {
    this->GetCudaFilterDataManager()->MarkHostModified();
  }
  return Superclass::GetBufferPointer();
}

template <typename TPixel, unsigned int VImageDimension>
const TPixel *
CudaFilterImage<TPixel, VImageDimension>::GetBufferPointer() const
{
  this->UpdateHostBuffer();
  return Superclass::GetBufferPointer();
}

template <typename TPixel, unsigned int VImageDimension>
auto
CudaFilterImage<TPixel, VImageDimension>::GetPixelContainer() -> PixelContainer *
{
  if (Superclass::GetPixelContainer() != nullptr)
  {
    this->GetCudaFilterDataManager()->MarkHostModified();
  }
  return Superclass::GetPixelContainer();
}

template <typename TPixel, unsigned int VImageDimension>
auto
CudaFilterImage<TPixel, VImageDimension>::GetPixelContainer() const -> const PixelContainer *
{
  this->UpdateHostBuffer();
  return Superclass::GetPixelContainer();
}

template <typename TPixel, unsigned int VImageDimension>
void
CudaFilterImage<TPixel, VImageDimension>::SetPixelContainer(PixelContainer * container)
{
  Superclass::SetPixelContainer(container);
  std::lock_guard<std::mutex> lock(m_ManagerMutex);
  m_DataManager = nullptr;
}

template <typename TPixel, unsigned int VImageDimension>
void
CudaFilterImage<TPixel, VImageDimension>::FillBuffer(const TPixel & value)
{
  this->GetBufferPointer(); // host becomes the current copy
  Superclass::FillBuffer(value);
}

template <typename TPixel, unsigned int VImageDimension>
void
CudaFilterImage<TPixel, VImageDimension>::SetPixel(const IndexType & index, const TPixel & value)
{
  this->GetBufferPointer();
  Superclass::SetPixel(index, value);
}

template <typename TPixel, unsigned int VImageDimension>
const TPixel &
CudaFilterImage<TPixel, VImageDimension>::GetPixel(const IndexType & index) const
{
  this->UpdateHostBuffer();
  return Superclass::GetPixel(index);
}

template <typename TPixel, unsigned int VImageDimension>
TPixel &
CudaFilterImage<TPixel, VImageDimension>::GetPixel(const IndexType & index)
{
  this->GetBufferPointer();
  return Superclass::GetPixel(index);
}

template <typename TPixel, unsigned int VImageDimension>
const TPixel *
CudaFilterImage<TPixel, VImageDimension>::GetDeviceBufferPointer() const
{
  return static_cast<const TPixel *>(this->GetCudaFilterDataManager()->GetDeviceReadPointer());
}

template <typename TPixel, unsigned int VImageDimension>
TPixel *
CudaFilterImage<TPixel, VImageDimension>::GetDeviceBufferPointerForWrite()
{
  return static_cast<TPixel *>(this->GetCudaFilterDataManager()->GetDeviceWritePointer());
}

template <typename TPixel, unsigned int VImageDimension>
void
CudaFilterImage<TPixel, VImageDimension>::UpdateHostBuffer() const
{
  if (Superclass::GetPixelContainer() != nullptr)
  {
    this->GetCudaFilterDataManager()->UpdateHost();
  }
}

template <typename TPixel, unsigned int VImageDimension>
void
CudaFilterImage<TPixel, VImageDimension>::ReleaseDeviceMemory()
{
  CudaFilterDataManager::Pointer manager;
  {
    std::lock_guard<std::mutex> lock(m_ManagerMutex);
    manager = m_DataManager;
  }
  if (manager.IsNotNull())
  {
    manager->ReleaseDeviceMemory();
  }
}

template <typename TPixel, unsigned int VImageDimension>
bool
CudaFilterImage<TPixel, VImageDimension>::IsHostBufferCurrent() const
{
  return this->GetCudaFilterDataManager()->IsHostCurrent();
}

template <typename TPixel, unsigned int VImageDimension>
bool
CudaFilterImage<TPixel, VImageDimension>::IsDeviceBufferCurrent() const
{
  return this->GetCudaFilterDataManager()->IsDeviceCurrent();
}

template <typename TPixel, unsigned int VImageDimension>
void
CudaFilterImage<TPixel, VImageDimension>::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "CudaFilterDataManager: ";
  if (m_DataManager.IsNull())
  {
    os << "(none yet)\n";
  }
  else
  {
    os << '\n';
    m_DataManager->Print(os, indent.GetNextIndent());
  }
}

// ---------------------------------------------------------------------------
template <typename TImage>
CudaInputBuffer<TImage>::CudaInputBuffer(const TImage * image)
{
  using CudaType = CudaFilterImage<PixelType, TImage::ImageDimension>;
  if (const auto * onDevice = dynamic_cast<const CudaType *>(image))
  {
    m_Pointer = onDevice->GetDeviceBufferPointer();
    return;
  }
  const std::size_t bytes = image->GetBufferedRegion().GetNumberOfPixels() * sizeof(PixelType);
  m_Temporary = cif::PooledBuffer(bytes, cif::CurrentStream());
  cif::Runtime::CopyHostToDevice(m_Temporary.GetPointer(), image->GetBufferPointer(), bytes);
  m_Pointer = static_cast<const PixelType *>(m_Temporary.GetPointer());
}

template <typename TImage>
CudaOutputBuffer<TImage>::CudaOutputBuffer(TImage * image)
  : m_Image(image)
{
  if (image == nullptr)
  {
    itkGenericExceptionMacro(<< "CudaOutputBuffer: no output image");
  }
  using CudaType = CudaFilterImage<PixelType, TImage::ImageDimension>;
  if (auto * onDevice = dynamic_cast<CudaType *>(image))
  {
    m_Pointer = onDevice->GetDeviceBufferPointerForWrite();
    return;
  }
  m_Temporary =
    cif::PooledBuffer(image->GetBufferedRegion().GetNumberOfPixels() * sizeof(PixelType), cif::CurrentStream());
  m_Pointer = static_cast<PixelType *>(m_Temporary.GetPointer());
}

template <typename TImage>
void
CudaOutputBuffer<TImage>::Commit()
{
  if (m_Temporary.GetPointer() != nullptr)
  {
    cif::Runtime::CopyDeviceToHost(m_Image->GetBufferPointer(), m_Temporary.GetPointer(), m_Temporary.GetSize());
  }
}

} // namespace itk

#endif
