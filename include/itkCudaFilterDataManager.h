/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaFilterDataManager_h
#define itkCudaFilterDataManager_h

#include "cif/Runtime.h"
#include "itkObject.h"
#include "itkObjectFactory.h"
#include <mutex>

namespace itk
{

/** \class CudaFilterDataManager
 * \brief Keeps a device copy of one host pixel buffer and knows which copy is current.
 *
 * The manager is bound to one host buffer (a pixel container of an image).
 * Each side, host and device, is either current or stale:
 * - GetDeviceReadPointer() uploads only when the device copy is stale and
 *   leaves the host copy current (the GPU only reads).
 * - GetDeviceWritePointer() returns device memory the caller overwrites
 *   completely; the host copy becomes stale, nothing is uploaded.
 * - UpdateHost() downloads only when the host copy is stale.
 * - MarkHostModified() makes the device copy stale (the host was written).
 *
 * The device copy lives on one CUDA device. When a filter on another device
 * (SetCudaDevice) asks for it, a current-only copy moves there device to
 * device (cudaMemcpyPeer, no host round trip); a stale one is dropped.
 *
 * Several images may share one manager (grafted outputs, see CudaFilterImage), so
 * the state follows the buffer, not the image. Device memory is freed when
 * the last owner lets go. All methods are thread-safe: multi-threaded CPU
 * filters read images from several threads at once.
 * \ingroup CudaImageFilters
 */
class CudaFilterDataManager : public Object
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaFilterDataManager);
  using Self = CudaFilterDataManager;
  using Superclass = Object;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;
  itkNewMacro(Self);
  itkTypeMacro(CudaFilterDataManager, Object);

  /** Binds to a host buffer; the host copy is current, the device copy stale. */
  void
  Bind(const void * owner, void * hostPointer, std::size_t bytes);
  /** True when bound to exactly this owner and host buffer. */
  bool
  IsBoundTo(const void * owner, const void * hostPointer, std::size_t bytes) const;

  const void *
  GetDeviceReadPointer();
  void *
  GetDeviceWritePointer();
  void
  UpdateHost();
  void
  MarkHostModified();

  bool
  IsHostCurrent() const;
  bool
  IsDeviceCurrent() const;
  std::size_t
  GetBufferSize() const
  {
    return m_Bytes;
  }

  /** Downloads if the device holds the only current copy, then frees the device memory. */
  void
  ReleaseDeviceMemory();

protected:
  CudaFilterDataManager() = default;
  ~CudaFilterDataManager() override = default;
  void
  PrintSelf(std::ostream & os, Indent indent) const override;

private:
  void
  UpdateHostLocked();
  /** When the device copy is on another CUDA device than the current one:
   * moves it here device to device if it is the only current copy, or drops
   * it if the host's is current. */
  void
  FollowCurrentDeviceLocked();

  mutable std::mutex m_Mutex;
  const void *       m_Owner{ nullptr };
  void *             m_HostPointer{ nullptr };
  std::size_t        m_Bytes{ 0 };
  cif::DeviceBuffer   m_Device;
  bool               m_HostCurrent{ true };
  bool               m_DeviceCurrent{ false };
};

} // namespace itk

#endif
