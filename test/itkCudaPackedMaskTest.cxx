/*=========================================================================
 *  Tests of CudaPackedMask (the bit-packed mask data object) and its
 *  lossless files (WritePackedMask / ReadPackedMask).
 *
 *  Reference: an independent packer (CudaSegmentationTestUtilities.h)
 *  that writes the documented layout from one flag per voxel. Every
 *  comparison is exact: words, regions, spacing, origin and direction.
 *=========================================================================*/
#include "CudaSegmentationTestUtilities.h"
#include "itkCudaPackedMask.h"
#include "itkCudaPackedMaskIO.h"
#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <vector>

namespace
{
using namespace cif_test;
using Mask2 = itk::CudaPackedMask<2>;
using Mask3 = itk::CudaPackedMask<3>;

std::string
TempFile(const std::string & name)
{
  return ::testing::TempDir() + "/CudaPackedMaskTest_" + name;
}

/** A mask of the given size and start index, with the test geometry and random bits (1 in 3 inside). */
template <typename TMask>
typename TMask::Pointer
RandomMask(const std::vector<itk::SizeValueType> & size, unsigned seed, std::vector<bool> * flags = nullptr)
{
  constexpr unsigned D = TMask::ImageDimension;
  using Plain = itk::Image<unsigned char, D>;
  auto                     grid = Plain::New();
  typename Plain::SizeType s;
  for (unsigned a = 0; a < D; ++a)
  {
    s[a] = size[a];
  }
  grid->SetRegions(s);
  GiveGeometry(grid.GetPointer()); // start index, spacing, origin, oblique direction
  auto mask = TMask::New();
  mask->AllocateLike(grid);
  std::mt19937      rng(seed);
  std::vector<bool> inside;
  for (itk::ImageRegionConstIteratorWithIndex<Plain> it(grid, grid->GetLargestPossibleRegion()); !it.IsAtEnd(); ++it)
  {
    const bool in = rng() % 3 == 0;
    inside.push_back(in);
    mask->SetMaskValue(it.GetIndex(), in);
  }
  if (flags)
  {
    *flags = inside;
  }
  return mask;
}

template <typename TMask>
void
ExpectSameMask(const TMask * a, const TMask * b)
{
  EXPECT_EQ(a->GetMaskRegion(), b->GetMaskRegion());
  EXPECT_EQ(a->GetLargestPossibleRegion(), b->GetLargestPossibleRegion());
  EXPECT_TRUE(SameGeometry(a, b)) << a->GetSpacing() << " " << b->GetSpacing() << " " << a->GetOrigin() << " "
                                  << b->GetOrigin();
  EXPECT_EQ(WordsOf(a), WordsOf(b));
}

// ===========================================================================
// CPU
// ===========================================================================

TEST(PackedMaskCpu, WordGridFollowsTheMaskRegion)
{
  for (itk::SizeValueType nx : { 1, 31, 32, 33, 64, 65, 100 })
  {
    Mask3::RegionType region;
    region.SetIndex({ { -3, 2, 5 } });
    region.SetSize({ { nx, 4, 3 } });
    auto mask = Mask3::New();
    mask->SetMaskRegion(region);
    const itk::SizeValueType words = (nx + 31) / 32;
    EXPECT_EQ(mask->GetMaskRegion(), region);
    EXPECT_EQ(mask->GetMaskSize(), region.GetSize());
    EXPECT_EQ(mask->GetLargestPossibleRegion().GetSize(), (Mask3::SizeType{ { words, 4, 3 } }));
    EXPECT_EQ(mask->GetLargestPossibleRegion().GetIndex(), (Mask3::IndexType{ { 0, 2, 5 } }));
    EXPECT_EQ(mask->GetWordsPerRow(), words);
    EXPECT_EQ(mask->GetNumberOfWords(), words * 12);
    EXPECT_EQ(mask->GetPackedSizeInBytes(), words * 12 * 4);
    mask->AllocateMask();
    EXPECT_EQ(mask->GetBufferedRegion().GetNumberOfPixels(), words * 12);
    EXPECT_EQ(mask->CountInside(), 0u);
  }
  // 8 times fewer bytes than a uint8 mask when nx is a multiple of 32
  auto mask = Mask3::New();
  mask->SetMaskRegion(Mask3::RegionType(Mask3::SizeType{ { 512, 512, 72 } }));
  EXPECT_EQ(mask->GetPackedSizeInBytes() * 8, 512u * 512u * 72u);
}

TEST(PackedMaskCpu, ValuesFollowTheDocumentedLayout)
{
  for (itk::SizeValueType nx : { 1, 33, 70 })
  {
    std::vector<bool> flags;
    auto              mask = RandomMask<Mask3>({ nx, 5, 3 }, 7 + nx, &flags);
    EXPECT_EQ(WordsOf(mask.GetPointer()), PackReference(flags, { nx, 5, 3 })) << "nx " << nx;
    std::size_t i = 0, count = 0;
    const auto  r = mask->GetMaskRegion();
    for (itk::IndexValueType z = 0; z < 3; ++z)
      for (itk::IndexValueType y = 0; y < 5; ++y)
        for (itk::IndexValueType x = 0; x < static_cast<itk::IndexValueType>(nx); ++x, ++i)
        {
          const Mask3::IndexType voxel{ { r.GetIndex(0) + x, r.GetIndex(1) + y, r.GetIndex(2) + z } };
          EXPECT_EQ(mask->GetMaskValue(voxel), flags[i]);
          count += flags[i] ? 1 : 0;
        }
    EXPECT_EQ(mask->CountInside(), count);
    // clearing a bit
    const Mask3::IndexType first = r.GetIndex();
    mask->SetMaskValue(first, true);
    EXPECT_TRUE(mask->GetMaskValue(first));
    mask->SetMaskValue(first, false);
    EXPECT_FALSE(mask->GetMaskValue(first));
    // outside the region
    Mask3::IndexType outside = r.GetIndex();
    outside[0] += static_cast<itk::IndexValueType>(nx);
    EXPECT_THROW(mask->GetMaskValue(outside), itk::ExceptionObject);
    EXPECT_THROW(mask->SetMaskValue(outside, true), itk::ExceptionObject);
  }
}

TEST(PackedMaskCpu, InformationAndGrafting)
{
  using Plain = itk::Image<float, 3>;
  auto image = Plain::New();
  image->SetRegions(Plain::SizeType{ { 45, 7, 3 } });
  GiveGeometry(image.GetPointer());
  // CopyInformation from an image: its grid becomes the voxel grid
  auto mask = Mask3::New();
  mask->CopyInformation(image);
  EXPECT_EQ(mask->GetMaskRegion(), image->GetLargestPossibleRegion());
  EXPECT_EQ(mask->GetLargestPossibleRegion().GetSize(0), 2u);
  EXPECT_TRUE(SameGeometry(mask.GetPointer(), image.GetPointer()));
  // AllocateLike: the same, allocated and all outside
  auto allocated = Mask3::New();
  allocated->AllocateLike(image);
  EXPECT_EQ(allocated->GetMaskRegion(), image->GetLargestPossibleRegion());
  EXPECT_TRUE(SameGeometry(allocated.GetPointer(), image.GetPointer()));
  EXPECT_EQ(allocated->CountInside(), 0u);
  // CopyInformation and Graft from a mask
  auto source = RandomMask<Mask3>({ 33, 4, 2 }, 3);
  auto copy = Mask3::New();
  copy->CopyInformation(source);
  EXPECT_EQ(copy->GetMaskRegion(), source->GetMaskRegion());
  EXPECT_EQ(copy->GetLargestPossibleRegion(), source->GetLargestPossibleRegion());
  auto grafted = Mask3::New();
  grafted->Graft(source);
  EXPECT_EQ(grafted->GetMaskRegion(), source->GetMaskRegion());
  EXPECT_EQ(grafted->GetCudaFilterDataManager(), source->GetCudaFilterDataManager());
  EXPECT_EQ(WordsOf(grafted.GetPointer()), WordsOf(source.GetPointer()));
  // Graft from a plain word image: refused
  auto words = itk::Image<std::uint32_t, 3>::New();
  words->SetRegions(source->GetBufferedRegion());
  words->Allocate();
  EXPECT_THROW(grafted->Graft(words.GetPointer()), itk::ExceptionObject);
}

template <typename TMask>
void
ExpectRoundTrip(const std::vector<itk::SizeValueType> & size, const std::string & name, bool compress, unsigned seed)
{
  auto              mask = RandomMask<TMask>(size, seed);
  const std::string file = TempFile(name);
  itk::WritePackedMask(mask.GetPointer(), file, compress);
  auto back = itk::ReadPackedMask<TMask::ImageDimension>(file);
  ExpectSameMask(mask.GetPointer(), back.GetPointer());
  // the file holds the words: ceil(nx / 32) along x, x spacing times 32
  using WordImage = itk::Image<std::uint32_t, TMask::ImageDimension>;
  auto raw = ReadImage<WordImage>(file);
  EXPECT_EQ(raw->GetLargestPossibleRegion().GetSize(0), (size[0] + 31) / 32);
  EXPECT_NEAR(raw->GetSpacing()[0], 32.0 * mask->GetSpacing()[0], 1e-9);
  std::remove(file.c_str());
}

TEST(PackedMaskCpu, FilesRoundTripExactly)
{
  for (itk::SizeValueType nx : { 1, 31, 32, 33, 65, 100 })
  {
    ExpectRoundTrip<Mask2>({ nx, 7 }, "2d.nrrd", true, 10 + nx);
    ExpectRoundTrip<Mask3>({ nx, 5, 3 }, "3d.nrrd", true, 20 + nx);
  }
  ExpectRoundTrip<Mask3>({ 33, 6, 4 }, "raw.nrrd", false, 31);
  ExpectRoundTrip<Mask3>({ 33, 6, 4 }, "meta.mha", true, 32);
  ExpectRoundTrip<Mask2>({ 1, 9 }, "meta.mha", false, 33);
}

TEST(PackedMaskCpu, BadFilesThrowClearly)
{
  auto expectThrowMentioning = [](auto read, const std::string & words)
  {
    try
    {
      read();
      ADD_FAILURE() << "no exception (expected one mentioning \"" << words << "\")";
    }
    catch (const itk::ExceptionObject & e)
    {
      EXPECT_NE(std::string(e.GetDescription()).find(words), std::string::npos) << e.GetDescription();
    }
  };
  // a plain uint32 image: no keys
  using W3 = itk::Image<std::uint32_t, 3>;
  auto plain = W3::New();
  plain->SetRegions(W3::SizeType{ { 2, 3, 4 } });
  plain->Allocate(true);
  const std::string plainFile = TempFile("plain.nrrd");
  itk::WriteImage(plain, plainFile);
  expectThrowMentioning([&] { itk::ReadPackedMask<3>(plainFile); }, "CudaPackedMask_Version");
  // bytes, not words
  using U3 = itk::Image<unsigned char, 3>;
  auto bytes = U3::New();
  bytes->SetRegions(U3::SizeType{ { 2, 3, 4 } });
  bytes->Allocate(true);
  const std::string bytesFile = TempFile("bytes.nrrd");
  itk::WriteImage(bytes, bytesFile);
  expectThrowMentioning([&] { itk::ReadPackedMask<3>(bytesFile); }, "not a packed mask");
  // a 3D mask read as 2D
  auto              mask = RandomMask<Mask3>({ 40, 3, 2 }, 41);
  const std::string maskFile = TempFile("mask.nrrd");
  itk::WritePackedMask(mask.GetPointer(), maskFile);
  expectThrowMentioning([&] { itk::ReadPackedMask<2>(maskFile); }, "dimensions");
  // a padding bit set (nx = 40: bits 8..31 of each row's second word are padding)
  auto raw = ReadImage<W3>(maskFile);
  raw->GetBufferPointer()[1] |= 1u << 20;
  const std::string paddedFile = TempFile("padded.nrrd");
  itk::WriteImage(raw, paddedFile);
  expectThrowMentioning([&] { itk::ReadPackedMask<3>(paddedFile); }, "padding");
  // a size that does not fit the words
  auto wrong = ReadImage<W3>(maskFile);
  itk::EncapsulateMetaData<std::string>(wrong->GetMetaDataDictionary(), "CudaPackedMask_Size", "70 3 2");
  const std::string wrongFile = TempFile("wrong.nrrd");
  itk::WriteImage(wrong, wrongFile);
  expectThrowMentioning([&] { itk::ReadPackedMask<3>(wrongFile); }, "needs");
  // no file
  EXPECT_THROW(itk::ReadPackedMask<3>(TempFile("missing.nrrd")), itk::ExceptionObject);
  // an empty mask is not written
  auto empty = Mask3::New();
  EXPECT_THROW(itk::WritePackedMask(empty.GetPointer(), TempFile("empty.nrrd")), itk::ExceptionObject);
  for (const auto & f : { plainFile, bytesFile, maskFile, paddedFile, wrongFile })
  {
    std::remove(f.c_str());
  }
}

// ===========================================================================
// GPU (CTest label "gpu")
// ===========================================================================

TEST(PackedMaskGpu, DeviceWordsComeToTheHostCompact)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  std::vector<bool> flags;
  auto              source = RandomMask<Mask3>({ 512, 64, 9 }, 51, &flags);
  const auto        expected = WordsOf(source.GetPointer());
  // a mask whose current copy is on the device only
  auto mask = Mask3::New();
  mask->CopyInformation(source);
  mask->AllocateMask();
  cif::DeviceBuffer staging(expected.size() * 4);
  staging.CopyFromHost(expected.data(), expected.size() * 4);
  staging.CopyToDevice(mask->GetDeviceBufferPointerForWrite(), expected.size() * 4);
  EXPECT_FALSE(mask->IsHostBufferCurrent());
  cif::Runtime::ResetTransferCounters();
  EXPECT_EQ(WordsOf(mask.GetPointer()), expected);
  const auto counters = cif::Runtime::GetTransferCounters();
  EXPECT_EQ(counters.DeviceToHostCount, 1u);
  EXPECT_EQ(counters.DeviceToHostBytes, mask->GetPackedSizeInBytes());
  EXPECT_EQ(counters.DeviceToHostBytes * 8, 512u * 64u * 9u); // 1/8 of a uint8 mask
  EXPECT_EQ(mask->CountInside(), static_cast<std::size_t>(std::count(flags.begin(), flags.end(), true)));
}

} // namespace

TEST(PackedMaskCpu, TruncatedFilesAreRejected)
{
  // ReadPackedMask checks that the file holds the words its header promises
  // (itkCudaImageFileCheck.h); ITK's MetaImage reader alone would go on.
  auto mask = RandomMask<Mask3>({ 70, 9, 5 }, 51);
  for (const auto & file : { TempFile("cut.mha"), TempFile("cutz.mha"), TempFile("cut.nrrd") })
  {
    const bool compress = file.find("cutz") != std::string::npos;
    itk::WritePackedMask(mask.GetPointer(), file, compress);
    const auto size = std::filesystem::file_size(file);
    std::filesystem::resize_file(file, size - 16);
    try
    {
      itk::ReadPackedMask<3>(file);
      ADD_FAILURE() << file << ": a truncated mask file was read";
    }
    catch (const itk::ExceptionObject & e)
    {
      const std::string message = e.GetDescription();
      if (file.find(".mha") != std::string::npos)
      {
        EXPECT_NE(message.find("truncated"), std::string::npos) << message;
      }
    }
    std::remove(file.c_str());
  }
}
