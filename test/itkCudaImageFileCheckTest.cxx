/*=========================================================================
 *  Tests of itk::CudaCheckImageFile: files that do not hold the pixel data
 *  their header promises are rejected before they are read. The files are
 *  written by apps/testdata/make_file_check_data.py (standard library
 *  only, not ITK): a 20 x 16 int16 image in each layout, valid, truncated,
 *  corrupt, or with sizes that overflow 64 bits. The valid ones are read
 *  by ITK here and compared with the generator's formula, so the tests
 *  know the files are what they claim.
 *=========================================================================*/
#include "itkCudaImageFileCheck.h"
#include "itkImageFileReader.h"

#include <gtest/gtest.h>

#include <string>

namespace
{
std::string
Data(const std::string & name)
{
  return std::string(CIF_FILECHECK_DATA) + "/" + name;
}

/** The check's message for a file ("no exception" when it passes). */
std::string
CheckMessage(const std::string & name)
{
  try
  {
    itk::CudaCheckImageFile(Data(name));
  }
  catch (const itk::ExceptionObject & e)
  {
    return e.GetDescription();
  }
  return "no exception";
}

using ShortImage = itk::Image<short, 2>;

ShortImage::Pointer
Read(const std::string & name)
{
  auto reader = itk::ImageFileReader<ShortImage>::New();
  reader->SetFileName(Data(name));
  reader->Update();
  return reader->GetOutput();
}
} // namespace

TEST(CudaImageFileCheck, ValidFilesPassAndReadAsWritten)
{
  for (const char * name :
       { "ok.nii", "ok.nii.gz", "ok.mha", "ok_compressed.mha", "ok.mhd", "ok_z.mhd", "ok.nrrd", "ok_gzip.nrrd" })
  {
    const auto report = itk::CudaCheckImageFile(Data(name));
    EXPECT_EQ(report.DataBytes, 20u * 16u * 2u) << name;
    EXPECT_FALSE(report.Format.empty()) << name;
    // ITK reads them, and the pixels are the generator's (x 37 + y 101) % 2000 - 500
    auto image = Read(name);
    ASSERT_EQ(image->GetLargestPossibleRegion().GetSize(0), 20u) << name;
    ASSERT_EQ(image->GetLargestPossibleRegion().GetSize(1), 16u) << name;
    for (int y = 0; y < 16; ++y)
    {
      for (int x = 0; x < 20; ++x)
      {
        ASSERT_EQ(image->GetPixel({ { x, y } }), (x * 37 + y * 101) % 2000 - 500) << name << " at " << x << ", " << y;
      }
    }
  }
  EXPECT_TRUE(itk::CudaCheckImageFile(Data("ok.nii.gz")).Compressed);
  EXPECT_TRUE(itk::CudaCheckImageFile(Data("ok_z.mhd")).Compressed);
  EXPECT_FALSE(itk::CudaCheckImageFile(Data("ok.mhd")).Compressed);
}

TEST(CudaImageFileCheck, ShortTruncatedAndCorruptFilesAreRejected)
{
  const std::pair<const char *, const char *> cases[] = {
    { "truncated.nii", "is truncated: its header promises 640 bytes of pixel data from byte 352, the file holds 892" },
    { "header_only.nii", "the file holds 352" },
    { "truncated.nii.gz", "is truncated or corrupt" },
    { "corrupt.nii.gz", "corrupt" },
    { "truncated.mha", "is truncated: its header promises 640 bytes" },
    { "truncated_compressed.mha", "promises 541 bytes of compressed data from byte 210, the file holds 270" },
    { "truncated_nosize.mha", "is truncated: its compressed stream ends early" },
    { "corrupt_compressed.mha", "corrupt compressed stream" },
    { "truncated.mhd",
      "truncated.raw' is truncated: its header promises 640 bytes of pixel data from byte 0, the file "
      "holds 213" },
    { "truncated_z.mhd", "is truncated" },
  };
  for (const auto & c : cases)
  {
    const std::string message = CheckMessage(c.first);
    EXPECT_NE(message.find(c.second), std::string::npos) << c.first << ": " << message;
  }
}

TEST(CudaImageFileCheck, SizesThatOverflowAreRejected)
{
  EXPECT_NE(CheckMessage("overflow.mha").find("overflow 64 bits"), std::string::npos) << CheckMessage("overflow.mha");
  EXPECT_NE(CheckMessage("overflow.nii").find("overflow 64 bits"), std::string::npos) << CheckMessage("overflow.nii");
}

TEST(CudaImageFileCheck, ItkRejectsShortNrrdItself)
{
  // The check reads NRRD sizes only: ITK's NRRD reader rejects short and
  // corrupt data (these are the cases that prove it).
  for (const char * name : { "truncated.nrrd", "truncated_gzip.nrrd", "corrupt_gzip.nrrd" })
  {
    EXPECT_EQ(CheckMessage(name), "no exception") << name;
    EXPECT_THROW(Read(name), itk::ExceptionObject) << name;
  }
}

TEST(CudaImageFileCheck, MissingAndUncheckedFiles)
{
  EXPECT_NE(CheckMessage("does-not-exist.nii").find("does not exist"), std::string::npos);
  // formats the check does not know (PNG: its decoder reports errors) pass unchecked
  const auto png = itk::CudaCheckImageFile(std::string(CIF_EXAMPLES_DATA) + "/BrainProtonDensitySlice.png");
  EXPECT_TRUE(png.Format.empty());
}
