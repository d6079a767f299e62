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
  if (bytes != m_Bytes)
  {
    m_Device.Release();
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
    m_Device.Allocate(m_Bytes); // (the caller overwrites it: nothing to move)
  }
  m_DeviceCurrent = true;
  m_HostCurrent = false;
  return m_Device.GetPointer();
}

void
CudaFilterDataManager::FollowCurrentDeviceLocked()
{
  const int current = cif::Runtime::GetCurrentDevice();
  if (m_Device.GetPointer() == nullptr || m_Device.GetDevice() == current)
  {
    return;
  }
  if (m_DeviceCurrent && !m_HostCurrent)
  {
    // the only current copy is on the other device: device to device, not through the host
    cif::DeviceBuffer moved(m_Bytes);
    moved.CopyFromPeer(m_Device, m_Bytes);
    m_Device = std::move(moved);
  }
  else
  {
    m_Device.Release();
    m_DeviceCurrent = false;
  }
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
  m_Device.Release();
  m_DeviceCurrent = false;
}

void
CudaFilterDataManager::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  std::lock_guard<std::mutex> lock(m_Mutex);
  os << indent << "BufferSize: " << m_Bytes << '\n';
  os << indent << "DeviceBytesHeld: " << m_Device.GetSize() << '\n';
  os << indent << "HostCurrent: " << m_HostCurrent << '\n';
  os << indent << "DeviceCurrent: " << m_DeviceCurrent << '\n';
}

} // namespace itk
