/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaCommonInterop_h
#define itkCudaCommonInterop_h

// Only for programs that use ITKCudaCommon (RTK's CUDA base) beside this
// module: this header includes ITKCudaCommon's itkCudaImage.h and CUDA's
// runtime header. Nothing of the module's libraries depends on it, and it
// lives in include/interop/ so that a build without ITKCudaCommon (ITK's
// header tests compile every include/*.h) never sees it:
//   #include "interop/itkCudaCommonInterop.h"
#include "itkCudaImage.h"
#include "itkCudaFilterImage.h"
#include "itkCommand.h"
#include "itkMacro.h"

#include <cuda_runtime_api.h>

namespace itk
{
namespace CudaCommonInteropDetail
{
/** Holds an object alive for as long as the object it observes lives (an
 * observer is released with its subject). */
class KeepAliveCommand : public Command
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(KeepAliveCommand);
  using Self = KeepAliveCommand;
  using Pointer = SmartPointer<Self>;
  itkNewMacro(Self);
  itkTypeMacro(KeepAliveCommand, Command);
  void
  Execute(Object *, const EventObject &) override
  {}
  void
  Execute(const Object *, const EventObject &) override
  {}
  LightObject::ConstPointer m_Kept;

protected:
  KeepAliveCommand() = default;
  ~KeepAliveCommand() override = default;
};

inline int
DeviceOf(const void * devicePointer)
{
  cudaPointerAttributes attributes{};
  const cudaError_t     status = cudaPointerGetAttributes(&attributes, devicePointer);
  if (status != cudaSuccess || attributes.type != cudaMemoryTypeDevice)
  {
    cudaGetLastError();
    itkGenericExceptionMacro("CudaCommonInterop: " << devicePointer << " is not device memory ("
                                                   << (status != cudaSuccess ? cudaGetErrorName(status)
                                                                             : "another kind of memory")
                                                   << ")");
  }
  return attributes.device;
}

/** Restores the calling thread's current CUDA device when it goes out of
 * scope (ITKCudaCommon switches it when it creates an image or copies). */
class CurrentDeviceGuard
{
public:
  CurrentDeviceGuard()
  {
    if (cudaGetDevice(&m_Device) != cudaSuccess)
    {
      cudaGetLastError();
      m_Device = -1;
    }
  }
  ~CurrentDeviceGuard()
  {
    if (m_Device >= 0)
    {
      cudaSetDevice(m_Device);
    }
  }
  CurrentDeviceGuard(const CurrentDeviceGuard &) = delete;
  CurrentDeviceGuard &
  operator=(const CurrentDeviceGuard &) = delete;

private:
  int m_Device{ -1 };
};

inline void
Synchronize(int device)
{
  int current = -1;
  if (cudaGetDevice(&current) != cudaSuccess)
  {
    current = device;
  }
  cudaError_t status = cudaSetDevice(device);
  if (status == cudaSuccess)
  {
    status = cudaDeviceSynchronize();
  }
  cudaSetDevice(current);
  if (status != cudaSuccess)
  {
    cudaGetLastError();
    itkGenericExceptionMacro("CudaCommonInterop: waiting for device " << device << " failed: "
                                                                      << cudaGetErrorName(status) << ": "
                                                                      << cudaGetErrorString(status));
  }
}
/** A new image of type TView with `image`'s geometry (largest possible,
 * buffered and requested regions, spacing, origin, direction) and its own
 * host buffer, allocated, not filled. */
template <typename TView, typename TImage>
typename TView::Pointer
AllocatedLike(const TImage * image)
{
  auto view = TView::New();
  view->CopyInformation(image);
  view->SetBufferedRegion(image->GetBufferedRegion());
  view->SetRequestedRegion(image->GetRequestedRegion());
  view->Allocate();
  return view;
}
} // namespace CudaCommonInteropDetail

/** \brief Views an ITKCudaCommon (RTK) itk::CudaImage as this module's
 * itk::CudaFilterImage, on the GPU, without a copy.
 *
 * The returned image has `image`'s geometry (regions, spacing, origin,
 * direction) and its own host buffer (allocated, not filled). Its device copy
 * is `image`'s device buffer itself: this module's filters read it in place,
 * with no upload. Host access to the view downloads once, as for any
 * device-resident CudaFilterImage.
 *
 * What the call does to `image`: its device copy is brought up to date (an
 * upload only when its host copy was the current one, ITKCudaCommon's own
 * transfer) and its host copy is marked stale, as ITKCudaCommon does whenever
 * its device pointer is taken; its ReleaseDirtyGPUBuffer is turned off, so
 * that the device buffer the view uses is not freed if `image` is later
 * written on the host. The view keeps `image`'s data manager alive.
 *
 * The device is synchronised before the view is returned, and the calling
 * thread's current device is left as it was. Write `image` again on the GPU
 * (a new RTK update) only while no filter of this module is reading the
 * view; after such a write, take a new view if the old one's host copy was
 * read. Do not re-allocate `image` with another size while the view is used
 * (ITKCudaCommon would then free the buffer the view reads).
 *
 * The view writes through: a filter of this module that writes the view in
 * place, or a host edit of the view followed by a GPU read, changes
 * `image`'s device buffer.
 */
template <typename TPixel, unsigned int VDimension>
typename CudaFilterImage<TPixel, VDimension>::Pointer
MakeCudaFilterImageView(CudaImage<TPixel, VDimension> * image)
{
  if (image == nullptr)
  {
    itkGenericExceptionMacro("MakeCudaFilterImageView: the image is null");
  }
  CudaDataManager::Pointer theirs = image->GetCudaDataManager();
  if (theirs.IsNull() || theirs->GetBufferSize() == 0)
  {
    itkGenericExceptionMacro("MakeCudaFilterImageView: the CudaImage has no buffer (allocate or update it first)");
  }
  if (theirs->GetBufferSize() != image->GetBufferedRegion().GetNumberOfPixels() * sizeof(TPixel))
  {
    itkGenericExceptionMacro("MakeCudaFilterImageView: the CudaImage's buffer holds "
                             << theirs->GetBufferSize() << " bytes, its buffered region "
                             << image->GetBufferedRegion().GetNumberOfPixels() * sizeof(TPixel));
  }
  const CudaCommonInteropDetail::CurrentDeviceGuard keepDevice; // (an upload there switches it)
  theirs->SetReleaseDirtyGPUBuffer(false);
  void * device = theirs->GetGPUBufferPointer(); // up to date on the GPU; their host copy marked stale
  const int deviceIndex = CudaCommonInteropDetail::DeviceOf(device);
  CudaCommonInteropDetail::Synchronize(deviceIndex);

  auto view = CudaCommonInteropDetail::AllocatedLike<CudaFilterImage<TPixel, VDimension>>(image);
  CudaFilterDataManager * ours = view->GetCudaFilterDataManager();
  if (ours->GetBufferSize() != theirs->GetBufferSize())
  {
    itkGenericExceptionMacro("MakeCudaFilterImageView: the CudaImage's device buffer holds "
                             << theirs->GetBufferSize() << " bytes, its buffered region " << ours->GetBufferSize());
  }
  ours->AdoptDeviceBuffer(device, deviceIndex, theirs.GetPointer());
  return view;
}

/** \brief Views this module's itk::CudaFilterImage as an ITKCudaCommon (RTK)
 * itk::CudaImage, on the GPU, without a copy.
 *
 * The returned CudaImage has `image`'s geometry and its own host buffer
 * (allocated, not filled). Its device buffer is `image`'s device copy
 * itself, marked as ITKCudaCommon's current copy (its host copy stale): RTK
 * and ITKCudaCommon filters read it with no upload, and host access to it
 * downloads once, through ITKCudaCommon.
 *
 * What the call does to `image`: its device copy is brought up to date (an
 * upload only when the host copy was the current one) and its host copy is
 * marked stale, since the CudaImage may write the buffer in place. The
 * buffer is lent (CudaFilterDataManager::LendDeviceBuffer): `image` never
 * frees or reuses it, and the CudaImage keeps `image`'s data manager, which
 * holds it, alive. The two share storage until `image` gets another device
 * copy (a filter on another device reads it, or `image` is re-allocated):
 * from then on the CudaImage keeps the old buffer and values.
 * The device is synchronised first (this module's filters run on their own
 * stream), and the calling thread's current device is left as it was
 * (ITKCudaCommon switches it when it creates an image).
 */
template <typename TPixel, unsigned int VDimension>
typename CudaImage<TPixel, VDimension>::Pointer
MakeCudaImageView(CudaFilterImage<TPixel, VDimension> * image)
{
  if (image == nullptr)
  {
    itkGenericExceptionMacro("MakeCudaImageView: the image is null");
  }
  CudaFilterDataManager * ours = image->GetCudaFilterDataManager();
  if (ours == nullptr || ours->GetBufferSize() == 0)
  {
    itkGenericExceptionMacro("MakeCudaImageView: the CudaFilterImage has no buffer (allocate or update it first)");
  }
  const CudaCommonInteropDetail::CurrentDeviceGuard keepDevice; // (ITKCudaCommon switches it in New())
  void *    device = ours->LendDeviceBuffer(); // never freed or reused by us from now on
  const int deviceIndex = CudaCommonInteropDetail::DeviceOf(device);
  CudaCommonInteropDetail::Synchronize(deviceIndex);

  auto view = CudaCommonInteropDetail::AllocatedLike<CudaImage<TPixel, VDimension>>(image);
  CudaDataManager::Pointer theirs = view->GetCudaDataManager();
  // ITKCudaCommon frees the pointer it holds when it re-allocates a buffer of
  // another size, even one it does not own, unless a dirty buffer is first
  // released (only forgotten, for a pointer it does not own): keep that on
  theirs->SetReleaseDirtyGPUBuffer(true);
  if (theirs->GetBufferSize() != ours->GetBufferSize())
  {
    itkGenericExceptionMacro("MakeCudaImageView: the CudaImage's buffer holds " << theirs->GetBufferSize()
                                                                                << " bytes, the image's "
                                                                                << ours->GetBufferSize());
  }
  theirs->SetGPUBufferPointer(device); // not theirs to free
  theirs->SetGPUDirtyFlag(false);
  theirs->SetCPUDirtyFlag(true);
  auto keep = CudaCommonInteropDetail::KeepAliveCommand::New();
  keep->m_Kept = ours;
  theirs->AddObserver(DeleteEvent(), keep);
  return view;
}

} // namespace itk

#endif
