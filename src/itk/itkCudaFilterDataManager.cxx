/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#include "itkCudaFilterDataManager.h"
#include "cif/CudaError.h"
#include "cif/Runtime.h"

#include <utility>

namespace itk
{

void
CudaFilterDataManager::Bind(const void * owner, void * hostPointer, std::size_t bytes)
{
  std::lock_guard<std::mutex> lock(m_Mutex);
  m_Owner = owner;
  m_HostPointer = hostPointer;
  if (bytes != m_Bytes || !m_Device.IsOwned() || m_DeviceLent)
  {
    this->RetireDeviceBufferLocked(); // (a borrowed buffer is only forgotten, a lent one kept)
    m_DeviceOwner = nullptr;
  }
  m_Bytes = bytes;
  m_HostCurrent = true;
  m_DeviceCurrent = false;
}

bool
CudaFilterDataManager::IsBoundTo(const void * owner, const void * hostPointer, std::size_t bytes) const
{
  std::lock_guard<std::mutex> lock(m_Mutex);
  return owner == m_Owner && hostPointer == m_HostPointer && bytes == m_Bytes;
}

const void *
CudaFilterDataManager::GetDeviceReadPointer()
{
  std::lock_guard<std::mutex> lock(m_Mutex);
  return this->GetDeviceReadPointerLocked();
}

const void *
CudaFilterDataManager::GetDeviceReadPointerLocked()
{
  if (m_Bytes == 0)
  {
    return nullptr;
  }
  this->FollowCurrentDeviceLocked();
  if (!m_DeviceCurrent)
  {
    if (m_Device.GetSize() != m_Bytes)
    {
      m_Device.Allocate(m_Bytes);
    }
    m_Device.CopyFromHost(m_HostPointer, m_Bytes);
    m_DeviceCurrent = true;
  }
  return m_Device.GetPointer();
}

void *
CudaFilterDataManager::GetDeviceWritePointer()
{
  std::lock_guard<std::mutex> lock(m_Mutex);
  if (m_Bytes == 0)
  {
    return nullptr;
  }
  if (m_Device.GetSize() != m_Bytes || m_Device.GetDevice() != cif::Runtime::GetCurrentDevice())
  {
    this->RetireDeviceBufferLocked();
    m_Device.Allocate(m_Bytes); // (the caller overwrites it: nothing to move)
  }
  m_DeviceCurrent = true;
  m_HostCurrent = false;
  return m_Device.GetPointer();
}

void *
CudaFilterDataManager::GetDeviceReadWritePointer()
{
  std::lock_guard<std::mutex> lock(m_Mutex);
  const void *                device = this->GetDeviceReadPointerLocked();
  m_HostCurrent = m_Bytes == 0;
  return const_cast<void *>(device);
}

void *
CudaFilterDataManager::LendDeviceBuffer()
{
  std::lock_guard<std::mutex> lock(m_Mutex);
  const void *                device = this->GetDeviceReadPointerLocked();
  m_HostCurrent = m_Bytes == 0;
  m_DeviceLent = device != nullptr;
  return const_cast<void *>(device);
}

void
CudaFilterDataManager::RetireDeviceBufferLocked()
{
  if (m_Device.GetPointer() != nullptr)
  {
    if (m_DeviceLent || !m_Device.IsOwned())
    {
      m_Retired.push_back(RetiredBuffer{ std::move(m_Device), m_DeviceLent });
    }
    else
    {
      m_Device.Release();
    }
  }
  m_Device = cif::DeviceBuffer();
  m_DeviceLent = false;
}

void
CudaFilterDataManager::AdoptDeviceBuffer(void * devicePointer, int device, const LightObject * owner)
{
  std::lock_guard<std::mutex> lock(m_Mutex);
  if (devicePointer == nullptr || m_Bytes == 0)
  {
    itkExceptionMacro("AdoptDeviceBuffer: " << (devicePointer == nullptr ? "the device pointer is null"
                                                                          : "the manager is bound to no host buffer"));
  }
  this->RetireDeviceBufferLocked();
  m_Device = cif::DeviceBuffer::Borrow(devicePointer, m_Bytes, device);
  m_DeviceOwner = owner;
  m_DeviceCurrent = true;
  m_HostCurrent = false;
}

bool
CudaFilterDataManager::IsDeviceBufferBorrowed() const
{
  std::lock_guard<std::mutex> lock(m_Mutex);
  return m_Device.GetPointer() != nullptr && !m_Device.IsOwned();
}

void
CudaFilterDataManager::FollowCurrentDeviceLocked()
{
  const int current = cif::Runtime::GetCurrentDevice();
  if (m_Device.GetPointer() == nullptr || m_Device.GetDevice() == current)
  {
    return;
  }
  // the copy on the other device stays allocated (a filter there may still
  // be reading it): set aside, and reused if the image comes back there
  RetiredBuffer left{ std::move(m_Device), m_DeviceLent };
  m_Device = cif::DeviceBuffer();
  m_DeviceLent = false;
  for (auto it = m_Retired.begin(); it != m_Retired.end(); ++it)
  {
    if (!it->lent && it->buffer.IsOwned() && it->buffer.GetDevice() == current && it->buffer.GetSize() == m_Bytes)
    {
      m_Device = std::move(it->buffer);
      m_Retired.erase(it);
      break;
    }
  }
  if (m_DeviceCurrent && !m_HostCurrent)
  {
    // the only current copy is on the other device: device to device, not through the host
    if (m_Device.GetPointer() == nullptr)
    {
      m_Device.Allocate(m_Bytes);
    }
    m_Device.CopyFromPeer(left.buffer, m_Bytes);
  }
  else
  {
    m_DeviceCurrent = false; // the host copy is current: uploaded again here
  }
  m_Retired.push_back(std::move(left));
}

void
CudaFilterDataManager::UpdateHostLocked()
{
  if (!m_HostCurrent)
  {
    m_Device.CopyToHost(m_HostPointer, m_Bytes);
    m_HostCurrent = true;
  }
}

void
CudaFilterDataManager::UpdateHost()
{
  std::lock_guard<std::mutex> lock(m_Mutex);
  this->UpdateHostLocked();
}

void
CudaFilterDataManager::MarkHostModified()
{
  std::lock_guard<std::mutex> lock(m_Mutex);
  this->UpdateHostLocked();
  m_DeviceCurrent = false;
}

bool
CudaFilterDataManager::IsHostCurrent() const
{
  std::lock_guard<std::mutex> lock(m_Mutex);
  return m_HostCurrent;
}

bool
CudaFilterDataManager::IsDeviceCurrent() const
{
  std::lock_guard<std::mutex> lock(m_Mutex);
  return m_DeviceCurrent;
}

void
CudaFilterDataManager::ReleaseDeviceMemory()
{
  std::lock_guard<std::mutex> lock(m_Mutex);
  this->UpdateHostLocked();
  this->RetireDeviceBufferLocked();
  // what is set aside is freed too, but lent buffers: their borrowers still use them
  std::vector<RetiredBuffer> kept;
  for (auto & r : m_Retired)
  {
    if (r.lent)
    {
      kept.push_back(std::move(r));
    }
  }
  m_Retired = std::move(kept);
  m_DeviceOwner = nullptr;
  m_DeviceCurrent = false;
}

void
CudaFilterDataManager::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  std::lock_guard<std::mutex> lock(m_Mutex);
  os << indent << "BufferSize: " << m_Bytes << '\n';
  os << indent << "DeviceBytesHeld: " << m_Device.GetSize() << (m_Device.IsOwned() ? "" : " (borrowed)")
     << (m_DeviceLent ? " (lent)" : "") << '\n';
  os << indent << "DeviceBuffersSetAside: " << m_Retired.size() << '\n';
  os << indent << "HostCurrent: " << m_HostCurrent << '\n';
  os << indent << "DeviceCurrent: " << m_DeviceCurrent << '\n';
}

} // namespace itk
