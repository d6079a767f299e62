/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaPackedMask_h
#define itkCudaPackedMask_h

#include "itkCudaFilterImage.h"
#include <cstdint>

namespace itk
{

/** \class CudaPackedMask
 * \brief A binary mask with one bit per voxel, 32 voxels along x per
 * 32-bit word, that lives on the GPU like a CudaFilterImage.
 *
 * Representation. A CudaPackedMask is a CudaFilterImage<std::uint32_t, D> of
 * words (its pixel buffer, host and device copies managed by the module's
 * CudaFilterDataManager, so a GPU filter writes the words on the device and they
 * reach the host only when host code reads them, as
 * GetNumberOfWords() * 4 bytes: 8 times fewer than a uint8 mask). The
 * layout (see cifPackedMask.h):
 * - word (w, y, z) holds the voxels x = m0 + 32 w + i, i = 0..31, of row
 *   (y, z), where m0 is the first x index of the mask region; voxel x is
 *   bit i, value 1u << i (least significant bit first); a set bit means
 *   inside;
 * - each row starts a new word: ceil(nx / 32) words per row; bits past the
 *   last voxel of a row are 0, so equal masks have equal words.
 *
 * Geometry. The mask keeps the true voxel grid it describes:
 * - GetMaskRegion(): the voxel region (start index and size, any size, not
 *   only multiples of 32);
 * - GetSpacing(), GetOrigin(), GetDirection(): those of the voxel grid
 *   (the word image shares them, unchanged, so that filters that check
 *   that their inputs occupy the same physical space compare a mask with
 *   its image correctly).
 * The word image's own regions (GetLargestPossibleRegion() etc.) are the
 * word grid: size (ceil(nx / 32), ny, nz), start index (0, y0, z0). They
 * follow the mask region; do not set them directly. Because the word grid
 * has the voxel grid's spacing, a CudaPackedMask is not an image for
 * ordinary ITK filters: unpack it (CudaUnpackMaskImageFilter) or apply it
 * (CudaApplyPackedMaskImageFilter); write and read it with
 * WritePackedMask / ReadPackedMask (itkCudaPackedMaskIO.h).
 *
 * CopyInformation() from another CudaPackedMask copies everything; from
 * any other image of dimension D it takes that image's largest possible
 * region, spacing, origin and direction as the voxel grid (so a filter
 * whose output is a mask gets its geometry from its input image by ITK's
 * default pipeline step). Graft() takes only another CudaPackedMask.
 *
 * \ingroup CudaImageFilters
 */
template <unsigned int VDimension>
class ITK_TEMPLATE_EXPORT CudaPackedMask : public CudaFilterImage<std::uint32_t, VDimension>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaPackedMask);

  using Self = CudaPackedMask;
  using Superclass = CudaFilterImage<std::uint32_t, VDimension>;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;
  using ConstWeakPointer = WeakPointer<const Self>;

  itkNewMacro(Self);
  itkTypeMacro(CudaPackedMask, CudaFilterImage);

  static constexpr unsigned int ImageDimension = VDimension;
  using WordType = std::uint32_t;
  static constexpr unsigned int BitsPerWord = 32;
  using RegionType = typename Superclass::RegionType;
  using SizeType = typename Superclass::SizeType;
  using IndexType = typename Superclass::IndexType;
  using SizeValueType = typename Superclass::SizeValueType;
  using ImageBaseType = ImageBase<VDimension>;

  /** ceil(nx / 32). */
  static SizeValueType
  WordsPerRow(SizeValueType nx)
  {
    return (nx + BitsPerWord - 1) / BitsPerWord;
  }

  /** The voxel region the mask describes (its true size). */
  const RegionType &
  GetMaskRegion() const
  {
    return m_MaskRegion;
  }
  const SizeType &
  GetMaskSize() const
  {
    return m_MaskRegion.GetSize();
  }
  /** Sets the voxel region; the word grid's largest possible, buffered and
   * requested regions follow it. Does not allocate. */
  void
  SetMaskRegion(const RegionType & region);

  /** The word grid region of a voxel region. */
  static RegionType
  WordRegionOf(const RegionType & maskRegion);

  /** Takes `image`'s largest possible region, spacing, origin and direction
   * as the voxel grid and allocates the words, all 0 (every voxel outside). */
  void
  AllocateLike(const ImageBaseType * image);
  /** Allocates the words for the current mask region, all 0. */
  void
  AllocateMask();

  SizeValueType
  GetWordsPerRow() const
  {
    return WordsPerRow(m_MaskRegion.GetSize(0));
  }
  SizeValueType
  GetNumberOfWords() const
  {
    return WordRegionOf(m_MaskRegion).GetNumberOfPixels();
  }
  /** Bytes of the packed words (what a download moves). */
  std::size_t
  GetPackedSizeInBytes() const
  {
    return static_cast<std::size_t>(this->GetNumberOfWords()) * sizeof(WordType);
  }

  /** Host access to one voxel (synchronises the host copy first). Throws
   * when the index lies outside the mask region. */
  bool
  GetMaskValue(const IndexType & voxel) const;
  void
  SetMaskValue(const IndexType & voxel, bool inside);
  /** Number of inside voxels (host; synchronises). */
  std::size_t
  CountInside() const;

  /** Where voxel `voxel` lives: the word's index in the word grid and the bit. */
  void
  ComputeWordIndex(const IndexType & voxel, IndexType & word, unsigned int & bit) const;

  void
  CopyInformation(const DataObject * data) override;
  void
  Graft(const typename Superclass::Superclass * image) override;
  using Superclass::Graft;

protected:
  CudaPackedMask();
  ~CudaPackedMask() override = default;
  void
  PrintSelf(std::ostream & os, Indent indent) const override;

private:
  RegionType m_MaskRegion;
};

} // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#  include "itkCudaPackedMask.hxx"
#endif

#endif
