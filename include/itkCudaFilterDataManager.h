/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaFilterDataManager_h
#define itkCudaFilterDataManager_h

#include "cif/Runtime.h"
#include "itkObject.h"
#include "itkObjectFactory.h"
#include <mutex>
#include <vector>

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
 * device (cudaMemcpyPeer, no host round trip); a stale one is uploaded there
 * again. The copy left on the first device is kept (a filter there may still
 * be reading it) and reused if the image comes back; ReleaseDeviceMemory
 * frees it.
 *
 * The device copy may also be borrowed (AdoptDeviceBuffer): another
 * library's device buffer, used in place and never freed here.
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

  /** Device access for in-place work: uploads when the device copy is
   * stale, then makes the host copy stale (the caller may write). */
  void *
  GetDeviceReadWritePointer();

  /** GetDeviceReadWritePointer for another library that keeps using the
   * pointer (itkCudaCommonInterop.h's MakeCudaImageView): the buffer is lent,
   * and from then on the manager never frees or reuses it. A move to another
   * device, a new allocation or ReleaseDeviceMemory sets it aside (so the
   * borrower's pointer stays valid, though no longer this image's current
   * copy); it is freed with the manager. */
  void *
  LendDeviceBuffer();

  /** Makes `devicePointer` (GetBufferSize() bytes on CUDA device `device`,
   * allocated and freed by someone else) the device copy, without copying:
   * the device copy becomes the current one and the host copy stale. `owner`
   * is kept alive for as long as the manager uses the pointer (until the
   * buffer is re-bound, released, or moved to another device). Used by
   * itkCudaCommonInterop.h to view another library's device image. */
  void
  AdoptDeviceBuffer(void * devicePointer, int device, const LightObject * owner);
  /** True while the device copy is a borrowed one (AdoptDeviceBuffer). */
  bool
  IsDeviceBufferBorrowed() const;

  bool
  IsHostCurrent() const;
  bool
  IsDeviceCurrent() const;
  std::size_t
  GetBufferSize() const
  {
    return m_Bytes;
  }

  /** Downloads if the device holds the only current copy, then frees the
   * device memory (a lent buffer is set aside, not freed). */
  void
  ReleaseDeviceMemory();

protected:
  CudaFilterDataManager() = default;
  ~CudaFilterDataManager() override = default;
  void
  PrintSelf(std::ostream & os, Indent indent) const override;

private:
  const void *
  GetDeviceReadPointerLocked();
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
  /** Puts m_Device aside instead of freeing it (it is empty afterwards). */
  void
  RetireDeviceBufferLocked();

  struct RetiredBuffer
  {
    cif::DeviceBuffer buffer;
    bool              lent;
  };
  cif::DeviceBuffer   m_Device;
  bool                m_DeviceLent{ false };
  LightObject::ConstPointer m_DeviceOwner; // keeps a borrowed device buffer's owner alive
  // Device copies that may still be in use elsewhere: lent ones (until the
  // manager dies), and ones left behind on another device when a filter on a
  // second device read the image (a filter on the first may still be reading
  // them; one is reused when the image comes back to that device).
  std::vector<RetiredBuffer> m_Retired;
  bool               m_HostCurrent{ true };
  bool               m_DeviceCurrent{ false };
};

} // namespace itk

#endif
