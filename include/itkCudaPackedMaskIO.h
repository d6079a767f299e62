/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaPackedMaskIO_h
#define itkCudaPackedMaskIO_h

#include "itkCudaImageFileCheck.h"
#include "itkCudaPackedMask.h"
#include "itkImage.h"
#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"
#include "itkMetaDataObject.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

namespace itk
{

/** \file
 * Lossless files of packed masks.
 *
 * WritePackedMask stores the words as an unsigned 32-bit scalar image
 * through ITK's ImageIO (NRRD, .nrrd or .nhdr, is the format the module
 * tests; MetaImage, .mha or .mhd, is tested too), so the file holds
 * ceil(nx / 32) x ny x nz words, 1/8 of the bytes of a uint8 mask before
 * compression. The true grid travels in string key/value fields of the
 * header, which are what ReadPackedMask uses:
 *   CudaPackedMask_Version   "1"
 *   CudaPackedMask_Layout    a sentence describing the bit layout
 *   CudaPackedMask_Size      "nx ny nz"   (D numbers)
 *   CudaPackedMask_Index     "x0 y0 z0"   (start index of the mask region)
 *   CudaPackedMask_Spacing, CudaPackedMask_Origin   (D numbers, 17 digits: exact)
 *   CudaPackedMask_Direction (D x D numbers, row by row, 17 digits)
 * The file's own geometry fields describe the word grid for viewers that
 * ignore the keys: origin at the first voxel, the direction of the mask,
 * and the x spacing multiplied by 32 (one word per 32 voxels).
 *
 * ReadPackedMask checks the file: an unsigned 32-bit scalar image of
 * dimension D, the keys present and consistent with the word grid, and
 * every padding bit 0; anything else throws an itk::ExceptionObject naming
 * the file and the problem.
 */

namespace CudaPackedMaskIODetail
{
inline std::string
Key(const char * name)
{
  return std::string("CudaPackedMask_") + name;
}

template <typename T>
std::string
Join(const T * values, unsigned int count)
{
  std::ostringstream text;
  for (unsigned int i = 0; i < count; ++i)
  {
    char buffer[40];
    std::snprintf(buffer, sizeof(buffer), "%.17g", static_cast<double>(values[i]));
    text << (i ? " " : "") << buffer;
  }
  return text.str();
}

template <typename T>
std::string
JoinIntegers(const T * values, unsigned int count)
{
  std::ostringstream text;
  for (unsigned int i = 0; i < count; ++i)
  {
    text << (i ? " " : "") << values[i];
  }
  return text.str();
}

/** Parses exactly `count` numbers; false otherwise. */
template <typename T>
bool
Parse(const std::string & text, unsigned int count, std::vector<T> & values)
{
  std::istringstream in(text);
  values.clear();
  T v;
  while (in >> v)
  {
    values.push_back(v);
  }
  return in.eof() && values.size() == count;
}

inline bool
ParseDoubles(const std::string & text, unsigned int count, std::vector<double> & values)
{
  std::istringstream in(text);
  std::string        token;
  values.clear();
  while (in >> token)
  {
    char *       end = nullptr;
    const double v = std::strtod(token.c_str(), &end);
    if (end == token.c_str() || *end != '\0')
    {
      return false;
    }
    values.push_back(v);
  }
  return values.size() == count;
}
} // namespace CudaPackedMaskIODetail

/** Writes a packed mask losslessly (see above). Throws for an empty mask or
 * a writer failure. The words are read from the host copy (downloaded if
 * the device holds the current one: GetPackedSizeInBytes() bytes). */
template <unsigned int VDimension>
void
WritePackedMask(const CudaPackedMask<VDimension> * mask, const std::string & fileName, bool useCompression = true)
{
  using namespace CudaPackedMaskIODetail;
  using MaskType = CudaPackedMask<VDimension>;
  using WordImage = Image<std::uint32_t, VDimension>;
  if (mask == nullptr || mask->GetMaskRegion().GetNumberOfPixels() == 0)
  {
    ExceptionObject e(__FILE__, __LINE__, "WritePackedMask: the mask is empty", ITK_LOCATION);
    throw e;
  }
  const auto & region = mask->GetMaskRegion();
  if (mask->GetBufferedRegion() != MaskType::WordRegionOf(region))
  {
    ExceptionObject e(
      __FILE__, __LINE__, "WritePackedMask: the mask's words do not cover its voxel region", ITK_LOCATION);
    throw e;
  }
  auto                           words = WordImage::New();
  typename WordImage::RegionType wordRegion;
  wordRegion.SetSize(MaskType::WordRegionOf(region).GetSize());
  words->SetRegions(wordRegion);
  typename WordImage::SpacingType spacing = mask->GetSpacing();
  spacing[0] *= MaskType::BitsPerWord;
  words->SetSpacing(spacing);
  typename WordImage::PointType firstVoxel;
  mask->TransformIndexToPhysicalPoint(region.GetIndex(), firstVoxel);
  words->SetOrigin(firstVoxel);
  words->SetDirection(mask->GetDirection());
  words->Allocate();
  const std::uint32_t * source = mask->GetBufferPointer(); // const: synchronises the host copy
  std::copy(source, source + wordRegion.GetNumberOfPixels(), words->GetBufferPointer());

  MetaDataDictionary & dictionary = words->GetMetaDataDictionary();
  EncapsulateMetaData<std::string>(dictionary, Key("Version"), "1");
  EncapsulateMetaData<std::string>(dictionary,
                                   Key("Layout"),
                                   "uint32 words; word w of row (y, z) holds voxels x = x0 + 32 w + i at bit i (least "
                                   "significant first); rows padded to whole words with 0 bits");
  std::vector<SizeValueType>  size(VDimension);
  std::vector<IndexValueType> index(VDimension);
  std::vector<double>         direction;
  for (unsigned int a = 0; a < VDimension; ++a)
  {
    size[a] = region.GetSize(a);
    index[a] = region.GetIndex(a);
    for (unsigned int b = 0; b < VDimension; ++b)
    {
      direction.push_back(mask->GetDirection()[a][b]);
    }
  }
  EncapsulateMetaData<std::string>(dictionary, Key("Size"), JoinIntegers(size.data(), VDimension));
  EncapsulateMetaData<std::string>(dictionary, Key("Index"), JoinIntegers(index.data(), VDimension));
  EncapsulateMetaData<std::string>(dictionary, Key("Spacing"), Join(mask->GetSpacing().GetDataPointer(), VDimension));
  EncapsulateMetaData<std::string>(dictionary, Key("Origin"), Join(mask->GetOrigin().GetDataPointer(), VDimension));
  EncapsulateMetaData<std::string>(dictionary, Key("Direction"), Join(direction.data(), VDimension * VDimension));

  auto writer = ImageFileWriter<WordImage>::New();
  writer->SetInput(words);
  writer->SetFileName(fileName);
  writer->SetUseCompression(useCompression);
  writer->Update();
}

/** Reads a file written by WritePackedMask (see above). */
template <unsigned int VDimension>
typename CudaPackedMask<VDimension>::Pointer
ReadPackedMask(const std::string & fileName)
{
  using namespace CudaPackedMaskIODetail;
  using MaskType = CudaPackedMask<VDimension>;
  using WordImage = Image<std::uint32_t, VDimension>;
  auto fail = [&fileName](const std::string & why)
  {
    ExceptionObject e(__FILE__, __LINE__, "ReadPackedMask(" + fileName + "): " + why, ITK_LOCATION);
    throw e;
  };

  // the file must hold the words its header promises (a short or corrupt
  // MetaImage would otherwise be read with garbage)
  try
  {
    CudaCheckImageFile(fileName);
  }
  catch (const ExceptionObject & e)
  {
    fail(e.GetDescription());
  }
  auto reader = ImageFileReader<WordImage>::New();
  reader->SetFileName(fileName);
  reader->UpdateOutputInformation();
  const ImageIOBase * io = reader->GetImageIO();
  if (io->GetComponentType() != IOComponentEnum::UINT || io->GetPixelType() != IOPixelEnum::SCALAR ||
      io->GetNumberOfComponents() != 1)
  {
    fail(std::string("not a packed mask: the pixels are ") + ImageIOBase::GetPixelTypeAsString(io->GetPixelType()) +
         " of " + ImageIOBase::GetComponentTypeAsString(io->GetComponentType()) + ", not scalar unsigned 32-bit words");
  }
  if (io->GetNumberOfDimensions() != VDimension)
  {
    fail("the file has " + std::to_string(io->GetNumberOfDimensions()) + " dimensions, the mask type " +
         std::to_string(VDimension));
  }
  reader->Update();
  typename WordImage::Pointer words = reader->GetOutput();
  const MetaDataDictionary &  dictionary = words->GetMetaDataDictionary();
  auto                        field = [&](const char * name)
  {
    std::string value;
    if (!ExposeMetaData<std::string>(dictionary, Key(name), value))
    {
      fail("not a packed mask: the header has no " + Key(name) + " field");
    }
    return value;
  };
  if (field("Version") != "1")
  {
    fail("unknown packed mask version " + field("Version"));
  }
  std::vector<long long> size, index;
  std::vector<double>    spacing, origin, direction;
  if (!Parse(field("Size"), VDimension, size) || !Parse(field("Index"), VDimension, index) ||
      !ParseDoubles(field("Spacing"), VDimension, spacing) || !ParseDoubles(field("Origin"), VDimension, origin) ||
      !ParseDoubles(field("Direction"), VDimension * VDimension, direction))
  {
    fail("malformed CudaPackedMask_ geometry fields");
  }
  typename MaskType::RegionType region;
  for (unsigned int a = 0; a < VDimension; ++a)
  {
    if (size[a] <= 0)
    {
      fail("the mask size " + field("Size") + " is empty");
    }
    region.SetSize(a, static_cast<SizeValueType>(size[a]));
    region.SetIndex(a, static_cast<IndexValueType>(index[a]));
  }
  const auto expected = MaskType::WordRegionOf(region).GetSize();
  if (words->GetLargestPossibleRegion().GetSize() != expected)
  {
    std::ostringstream why;
    why << "the file holds " << words->GetLargestPossibleRegion().GetSize() << " words, a mask of size "
        << region.GetSize() << " needs " << expected;
    fail(why.str());
  }

  auto mask = MaskType::New();
  mask->SetMaskRegion(region);
  typename MaskType::SpacingType   maskSpacing;
  typename MaskType::PointType     maskOrigin;
  typename MaskType::DirectionType maskDirection;
  for (unsigned int a = 0; a < VDimension; ++a)
  {
    maskSpacing[a] = spacing[a];
    maskOrigin[a] = origin[a];
    for (unsigned int b = 0; b < VDimension; ++b)
    {
      maskDirection[a][b] = direction[a * VDimension + b];
    }
  }
  mask->SetSpacing(maskSpacing);
  mask->SetOrigin(maskOrigin);
  mask->SetDirection(maskDirection);
  mask->AllocateMask();

  // copy, checking that the padding bits of each row's last word are 0
  const std::size_t     wordsPerRow = expected[0];
  const std::size_t     count = MaskType::WordRegionOf(region).GetNumberOfPixels();
  const unsigned        tail = static_cast<unsigned>(region.GetSize(0) % MaskType::BitsPerWord);
  const std::uint32_t   padding = tail == 0 ? 0u : ~((std::uint32_t{ 1 } << tail) - 1u);
  const std::uint32_t * source = words->GetBufferPointer();
  for (std::size_t i = wordsPerRow - 1; i < count; i += wordsPerRow)
  {
    if ((source[i] & padding) != 0)
    {
      fail("padding bits past the end of a row are set: the file is corrupt");
    }
  }
  std::copy(source, source + count, mask->GetBufferPointer());
  return mask;
}

} // namespace itk

#endif
