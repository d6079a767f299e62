/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaPackedMask_hxx
#define itkCudaPackedMask_hxx

#include "itkCudaPackedMask.h"
#include <bitset>

namespace itk
{

template <unsigned int VDimension>
CudaPackedMask<VDimension>::CudaPackedMask()
{
  m_MaskRegion = RegionType();
}

template <unsigned int VDimension>
auto
CudaPackedMask<VDimension>::WordRegionOf(const RegionType & maskRegion) -> RegionType
{
  RegionType words = maskRegion;
  words.SetIndex(0, 0);
  words.SetSize(0, WordsPerRow(maskRegion.GetSize(0)));
  return words;
}

template <unsigned int VDimension>
void
CudaPackedMask<VDimension>::SetMaskRegion(const RegionType & region)
{
  m_MaskRegion = region;
  const RegionType words = WordRegionOf(region);
  this->SetLargestPossibleRegion(words);
  this->SetBufferedRegion(words);
  this->SetRequestedRegion(words);
  this->Modified();
}

template <unsigned int VDimension>
void
CudaPackedMask<VDimension>::AllocateLike(const ImageBaseType * image)
{
  if (image == nullptr)
  {
    itkExceptionMacro(<< "AllocateLike: no image given");
  }
  this->SetMaskRegion(image->GetLargestPossibleRegion());
  this->SetSpacing(image->GetSpacing());
  this->SetOrigin(image->GetOrigin());
  this->SetDirection(image->GetDirection());
  this->AllocateMask();
}

template <unsigned int VDimension>
void
CudaPackedMask<VDimension>::AllocateMask()
{
  const RegionType words = WordRegionOf(m_MaskRegion);
  this->SetLargestPossibleRegion(words);
  this->SetBufferedRegion(words);
  this->SetRequestedRegion(words);
  this->Allocate(true); // all bits 0
}

template <unsigned int VDimension>
void
CudaPackedMask<VDimension>::ComputeWordIndex(const IndexType & voxel, IndexType & word, unsigned int & bit) const
{
  const auto x = static_cast<SizeValueType>(voxel[0] - m_MaskRegion.GetIndex(0));
  word = voxel;
  word[0] = static_cast<IndexValueType>(x / BitsPerWord);
  bit = static_cast<unsigned int>(x % BitsPerWord);
}

template <unsigned int VDimension>
bool
CudaPackedMask<VDimension>::GetMaskValue(const IndexType & voxel) const
{
  if (!m_MaskRegion.IsInside(voxel))
  {
    itkExceptionMacro(<< "Voxel " << voxel << " lies outside the mask region " << m_MaskRegion);
  }
  IndexType    word;
  unsigned int bit;
  this->ComputeWordIndex(voxel, word, bit);
  return ((static_cast<const Superclass *>(this)->GetPixel(word) >> bit) & 1u) != 0;
}

template <unsigned int VDimension>
void
CudaPackedMask<VDimension>::SetMaskValue(const IndexType & voxel, bool inside)
{
  if (!m_MaskRegion.IsInside(voxel))
  {
    itkExceptionMacro(<< "Voxel " << voxel << " lies outside the mask region " << m_MaskRegion);
  }
  IndexType    word;
  unsigned int bit;
  this->ComputeWordIndex(voxel, word, bit);
  WordType & w = Superclass::GetPixel(word); // non-const: the host copy becomes the current one
  w = inside ? (w | (WordType{ 1 } << bit)) : (w & ~(WordType{ 1 } << bit));
}

template <unsigned int VDimension>
std::size_t
CudaPackedMask<VDimension>::CountInside() const
{
  const std::size_t nx = m_MaskRegion.GetSize(0);
  const std::size_t wordsPerRow = WordsPerRow(nx);
  if (wordsPerRow == 0 || this->GetBufferedRegion().GetNumberOfPixels() == 0)
  {
    return 0;
  }
  const std::size_t rows = this->GetBufferedRegion().GetNumberOfPixels() / wordsPerRow;
  const WordType *  words = static_cast<const Superclass *>(this)->GetBufferPointer(); // synchronises
  const unsigned    tail = static_cast<unsigned>(nx % BitsPerWord);
  const WordType    lastMask = tail == 0 ? ~WordType{ 0 } : ((WordType{ 1 } << tail) - 1);
  std::size_t       count = 0;
  for (std::size_t r = 0; r < rows; ++r)
  {
    for (std::size_t w = 0; w < wordsPerRow; ++w)
    {
      const WordType word = words[r * wordsPerRow + w] & (w + 1 == wordsPerRow ? lastMask : ~WordType{ 0 });
      count += std::bitset<32>(word).count();
    }
  }
  return count;
}

template <unsigned int VDimension>
void
CudaPackedMask<VDimension>::CopyInformation(const DataObject * data)
{
  if (const auto * mask = dynamic_cast<const Self *>(data))
  {
    Superclass::CopyInformation(data);
    m_MaskRegion = mask->m_MaskRegion;
    return;
  }
  Superclass::CopyInformation(data); // spacing, origin, direction; throws for a non-image
  if (const auto * image = dynamic_cast<const ImageBaseType *>(data))
  {
    // another image: its grid is the voxel grid the mask describes
    m_MaskRegion = image->GetLargestPossibleRegion();
    this->SetLargestPossibleRegion(WordRegionOf(m_MaskRegion));
  }
}

template <unsigned int VDimension>
void
CudaPackedMask<VDimension>::Graft(const typename Superclass::Superclass * image)
{
  if (image != nullptr && dynamic_cast<const Self *>(image) == nullptr)
  {
    itkExceptionMacro(<< "A CudaPackedMask can only be grafted from another CudaPackedMask, not from a "
                      << image->GetNameOfClass());
  }
  Superclass::Graft(image); // calls CopyInformation, which copies the mask region
}

template <unsigned int VDimension>
void
CudaPackedMask<VDimension>::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "MaskRegion: " << m_MaskRegion << '\n';
  os << indent << "WordsPerRow: " << this->GetWordsPerRow() << '\n';
  os << indent << "PackedSizeInBytes: " << this->GetPackedSizeInBytes() << '\n';
}

} // namespace itk

#endif
