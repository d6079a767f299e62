/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaFilterImage_h
#define itkCudaFilterImage_h

#include "cif/Execution.h"
#include "cif/PooledBuffer.h"
#include "itkCudaFilterDataManager.h"
#include "itkImage.h"
#include "itkNeighborhoodAccessorFunctor.h"
#include <mutex>

namespace itk
{

/** \class CudaFilterImage
 * \brief An itk::Image whose pixel buffer can also live on the GPU.
 *
 * CudaFilterImage is an ordinary itk::Image for every CPU filter, iterator and
 * writer. Its pixels have a host copy (the pixel container) and, once a GPU
 * filter touches them, a device copy; a CudaFilterDataManager records which copy is
 * current and copies lazily:
 * - a GPU filter reading a CudaFilterImage uploads only when the device copy is stale;
 * - a GPU filter writing a CudaFilterImage writes the device copy only; the host
 *   copy is fetched the first time CPU code asks for the buffer
 *   (GetBufferPointer, GetPixel, iterators, writers).
 * So consecutive GPU filters whose output type is a CudaFilterImage hand device
 * buffers to each other without a host round trip.
 *
 * Access that may write (non-const GetBufferPointer, SetPixel, the
 * non-const GetPixelContainer, FillBuffer) makes the device copy stale.
 * Access through the const interface leaves it current.
 *
 * Grafting a CudaFilterImage shares its manager with the graft target, so
 * composite filters and metadata-only filters that pass a buffer through by
 * Graft stay in sync. Replacing the pixel container (SetPixelContainer,
 * Initialize, Allocate) starts a new manager, and device memory is freed
 * when the last image using it lets go, or at ReleaseDeviceMemory().
 *
 * Note: GetPixel/SetPixel/operator[] of itk::Image are not virtual; the
 * synchronising versions here are used when the static type is CudaFilterImage.
 * Code that reaches a device-current CudaFilterImage only through an itk::Image
 * pointer should read it through GetBufferPointer() or an iterator (both
 * synchronise), or call UpdateHostBuffer() first.
 *
 * \ingroup CudaImageFilters
 */
template <typename TPixel, unsigned int VImageDimension = 2>
class ITK_TEMPLATE_EXPORT CudaFilterImage : public Image<TPixel, VImageDimension>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaFilterImage);

  using Self = CudaFilterImage;
  using Superclass = Image<TPixel, VImageDimension>;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;
  using ConstWeakPointer = WeakPointer<const Self>;

  itkNewMacro(Self);
  itkTypeMacro(CudaFilterImage, Image);

  using PixelType = typename Superclass::PixelType;
  using IndexType = typename Superclass::IndexType;
  using PixelContainer = typename Superclass::PixelContainer;
  using PixelContainerPointer = typename Superclass::PixelContainerPointer;
  using PixelContainerConstPointer = typename Superclass::PixelContainerConstPointer;
  static constexpr unsigned int ImageDimension = VImageDimension;
  /** Accessor functors typed on this class, so that neighbourhood iterators work on it. */
  using AccessorType = typename Superclass::AccessorType;
  using AccessorFunctorType = DefaultPixelAccessorFunctor<Self>;
  using NeighborhoodAccessorFunctorType = NeighborhoodAccessorFunctor<Self>;
  NeighborhoodAccessorFunctorType
  GetNeighborhoodAccessor()
  {
    return NeighborhoodAccessorFunctorType();
  }
  const NeighborhoodAccessorFunctorType
  GetNeighborhoodAccessor() const
  {
    return NeighborhoodAccessorFunctorType();
  }

  template <typename UPixelType, unsigned int NUImageDimension = VImageDimension>
  struct Rebind
  {
    using Type = CudaFilterImage<UPixelType, NUImageDimension>;
  };

  void
  Allocate(bool initializePixels = false) override;
  void
  Initialize() override;
  /** Shares the buffer and, for a CudaFilterImage source, its residency state. */
  void
  Graft(const Superclass * image) override;
  using Superclass::Graft;

  /** Host access; synchronises first. The non-const form makes the device copy stale. */
  TPixel *
  GetBufferPointer() override;
  const TPixel *
  GetBufferPointer() const override;

  PixelContainer *
  GetPixelContainer();
  const PixelContainer *
  GetPixelContainer() const;
  void
  SetPixelContainer(PixelContainer * container);

  void
  FillBuffer(const TPixel & value);
  void
  SetPixel(const IndexType & index, const TPixel & value);
  const TPixel &
  GetPixel(const IndexType & index) const;
  TPixel &
  GetPixel(const IndexType & index);
  TPixel &
  operator[](const IndexType & index)
  {
    return this->GetPixel(index);
  }
  const TPixel &
  operator[](const IndexType & index) const
  {
    return this->GetPixel(index);
  }

  /** Device access to the buffered region (row-major, x fastest).
   * The read pointer uploads if needed and keeps the host copy current; the
   * write pointer is for output that will be overwritten entirely and makes
   * the host copy stale. */
  const TPixel *
  GetDeviceBufferPointer() const;
  TPixel *
  GetDeviceBufferPointerForWrite();

  /** Copies the device data to the host if the host copy is stale. */
  void
  UpdateHostBuffer() const;
  /** Frees the device copy (downloading it first if it is the only current one). */
  void
  ReleaseDeviceMemory();

  bool
  IsHostBufferCurrent() const;
  bool
  IsDeviceBufferCurrent() const;

  /** The manager of the current pixel container (created on demand). */
  CudaFilterDataManager *
  GetCudaFilterDataManager() const;

protected:
  CudaFilterImage() = default;
  ~CudaFilterImage() override = default;
  void
  PrintSelf(std::ostream & os, Indent indent) const override;

private:
  mutable std::mutex               m_ManagerMutex; // threads of a CPU filter may ask at once
  mutable CudaFilterDataManager::Pointer m_DataManager;
};

/** \class CudaInputBuffer
 * \brief The device copy of an input image's buffered region, for GPU filters.
 *
 * A CudaFilterImage hands over its device copy (uploading only if stale); a plain
 * itk::Image is uploaded (staged through pinned chunks) into a block of the
 * module's stream-ordered pool (cif::PooledBuffer) that lives as long as this
 * object, so a call pays no cudaMalloc or cudaFree after the first of its size.
 * \ingroup CudaImageFilters
 */
template <typename TImage>
class CudaInputBuffer
{
public:
  using PixelType = typename TImage::PixelType;
  explicit CudaInputBuffer(const TImage * image);
  const PixelType *
  Get() const
  {
    return m_Pointer;
  }

private:
  const PixelType * m_Pointer{ nullptr };
  cif::PooledBuffer m_Temporary;
};

/** \class CudaOutputBuffer
 * \brief Device memory for an output image's buffered region, for GPU filters.
 *
 * A CudaFilterImage output is written on the device and stays there; for a plain
 * itk::Image a block of the module's stream-ordered pool is used and Commit()
 * downloads it into the image (staged through pinned chunks).
 * \ingroup CudaImageFilters
 */
template <typename TImage>
class CudaOutputBuffer
{
public:
  using PixelType = typename TImage::PixelType;
  explicit CudaOutputBuffer(TImage * image);
  PixelType *
  Get() const
  {
    return m_Pointer;
  }
  /** Moves the result into the image (a download only for a plain image). */
  void
  Commit();

private:
  TImage *          m_Image;
  PixelType *       m_Pointer{ nullptr };
  cif::PooledBuffer m_Temporary;
};

} // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#  include "itkCudaFilterImage.hxx"
#endif

#endif
