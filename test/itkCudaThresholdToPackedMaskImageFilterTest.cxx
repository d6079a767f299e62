/*=========================================================================
 *  Tests of CudaThresholdToPackedMaskImageFilter (CPU and GPU paths) and
 *  the fused threshold + pack core.
 *
 *  References: the words an independent packer (PackReference in
 *  CudaSegmentationTestUtilities.h) makes from the voxel flags (lower <= v
 *  && v <= upper), and the flags of ITK's itk::BinaryThresholdImageFilter
 *  with the same settings (defaults included). Exact: every word must be
 *  equal, padding bits included.
 *=========================================================================*/
#include "CudaSegmentationTestUtilities.h"
#include "cif/PackedMask.h"
#include "itkBinaryThresholdImageFilter.h"
#include "itkCudaThresholdToPackedMaskImageFilter.h"

#include <gtest/gtest.h>
#include <optional>
#include <vector>

namespace
{
using namespace cif_test;
using Mode = itk::CudaExecutionMode;

template <typename TImage>
using PackFilter = itk::CudaThresholdToPackedMaskImageFilter<TImage>;
template <typename TImage>
using MaskOf = itk::CudaPackedMask<TImage::ImageDimension>;

template <typename TImage>
typename MaskOf<TImage>::Pointer
Pack(const TImage *                            input,
     std::optional<typename TImage::PixelType> lower,
     std::optional<typename TImage::PixelType> upper,
     Mode                                      mode,
     itk::CudaExecutedOn *                     ranOn = nullptr)
{
  auto filter = PackFilter<TImage>::New();
  filter->SetInput(input);
  filter->SetExecutionMode(mode);
  if (lower)
  {
    filter->SetLowerThreshold(*lower);
  }
  if (upper)
  {
    filter->SetUpperThreshold(*upper);
  }
  filter->Update();
  if (ranOn)
  {
    *ranOn = filter->GetLastExecutedOn();
  }
  return TakeOutput(filter.GetPointer());
}

/** The inside flags ITK's BinaryThresholdImageFilter gives with the same settings (defaults where unset). */
template <typename TImage>
std::vector<bool>
ItkFlags(const TImage *                            input,
         std::optional<typename TImage::PixelType> lower,
         std::optional<typename TImage::PixelType> upper)
{
  using Labels = itk::Image<unsigned char, TImage::ImageDimension>;
  auto filter = itk::BinaryThresholdImageFilter<TImage, Labels>::New();
  filter->SetInput(input);
  filter->SetInsideValue(1);
  filter->SetOutsideValue(0);
  if (lower)
  {
    filter->SetLowerThreshold(*lower);
  }
  if (upper)
  {
    filter->SetUpperThreshold(*upper);
  }
  filter->Update();
  std::vector<bool> flags;
  for (itk::ImageRegionConstIterator<Labels> it(filter->GetOutput(), filter->GetOutput()->GetBufferedRegion());
       !it.IsAtEnd();
       ++it)
  {
    flags.push_back(it.Get() != 0);
  }
  return flags;
}

template <typename TImage>
void
ExpectPacksAsReference(const TImage *                            input,
                       std::optional<typename TImage::PixelType> lower,
                       std::optional<typename TImage::PixelType> upper,
                       Mode                                      mode)
{
  itk::CudaExecutedOn ranOn = itk::CudaExecutedOn::None;
  auto                mask = Pack<TImage>(input, lower, upper, mode, &ranOn);
  EXPECT_EQ(ranOn, mode == Mode::GPU ? itk::CudaExecutedOn::GPU : itk::CudaExecutedOn::CPU);
  const auto expected = PackReference(ItkFlags(input, lower, upper), SizeOf(input));
  EXPECT_EQ(WordsOf(mask.GetPointer()), expected)
    << itk::CudaPixelTypeName<typename TImage::PixelType>() << ", size " << input->GetBufferedRegion().GetSize();
  // the true grid travels with the mask
  EXPECT_EQ(mask->GetMaskRegion(), input->GetLargestPossibleRegion());
  EXPECT_TRUE(SameGeometry(mask.GetPointer(), input));
  // and the explicit rule agrees with ITK's flags (same reference twice, from two sources)
  if (lower && upper)
  {
    EXPECT_EQ(PackReference(ThresholdFlags(input, *lower, *upper), SizeOf(input)), expected);
  }
}

template <typename T>
void
ExpectEveryCaseMatches(Mode mode, unsigned seed)
{
  using I2 = itk::Image<T, 2>;
  using I3 = itk::Image<T, 3>;
  const double lo = std::is_floating_point<T>::value ? -1000.0 : static_cast<double>(std::numeric_limits<T>::lowest());
  const double hi = std::is_floating_point<T>::value ? 1000.0 : static_cast<double>(std::numeric_limits<T>::max());
  const T      a = static_cast<T>(lo + 0.3 * (hi - lo)), b = static_cast<T>(lo + 0.7 * (hi - lo));
  for (itk::SizeValueType nx : { 1, 31, 32, 33, 100, 300 })
  {
    auto image2 = RandomPixels<I2>({ nx, 7 }, seed + nx);
    GiveGeometry(image2.GetPointer());
    ExpectPacksAsReference<I2>(image2.GetPointer(), a, b, mode);
    auto image3 = RandomPixels<I3>({ nx, 5, 3 }, seed + 2 * nx);
    GiveGeometry(image3.GetPointer());
    ExpectPacksAsReference<I3>(image3.GetPointer(), a, b, mode);
    ExpectPacksAsReference<I3>(image3.GetPointer(), {}, {}, mode);
    ExpectPacksAsReference<I3>(image3.GetPointer(), a, {}, mode);
    ExpectPacksAsReference<I3>(image3.GetPointer(), {}, b, mode);
    ExpectPacksAsReference<I3>(image3.GetPointer(), b, b, mode);
  }
}

using F2 = itk::Image<float, 2>;
using F3 = itk::Image<float, 3>;
using UC2 = itk::Image<unsigned char, 2>;
using UC3 = itk::Image<unsigned char, 3>;
using S3 = itk::Image<short, 3>;
using US3 = itk::Image<unsigned short, 3>;

F3::Pointer
NonFiniteImage()
{
  auto                image = RandomPixels<F3>({ 40, 3, 2 }, 41);
  const float         values[] = { NAN,
                                   std::numeric_limits<float>::infinity(),
                                   -std::numeric_limits<float>::infinity(),
                                   std::numeric_limits<float>::max(),
                                   std::numeric_limits<float>::lowest(),
                                   -0.0f };
  itk::IndexValueType x = 30; // across the first word boundary
  for (float v : values)
  {
    image->SetPixel({ { x++, 1, 1 } }, v);
  }
  return image;
}

void
ExpectNonFiniteRules(Mode mode)
{
  auto image = NonFiniteImage();
  ExpectPacksAsReference<F3>(image.GetPointer(), {}, {}, mode);
  ExpectPacksAsReference<F3>(image.GetPointer(), -5.0f, 5.0f, mode);
  ExpectPacksAsReference<F3>(image.GetPointer(), 0.0f, {}, mode);
  ExpectPacksAsReference<F3>(image.GetPointer(), {}, -0.0f, mode);
  auto mask = Pack<F3>(image.GetPointer(), {}, {}, mode);
  EXPECT_FALSE(mask->GetMaskValue({ { 30, 1, 1 } })); // NaN
  EXPECT_FALSE(mask->GetMaskValue({ { 31, 1, 1 } })); // +Inf (above FLT_MAX)
  EXPECT_FALSE(mask->GetMaskValue({ { 32, 1, 1 } })); // -Inf
  EXPECT_TRUE(mask->GetMaskValue({ { 33, 1, 1 } }));
  EXPECT_TRUE(mask->GetMaskValue({ { 34, 1, 1 } }));
  // a NaN threshold: nothing inside, no exception (as ITK)
  EXPECT_EQ(Pack<F3>(image.GetPointer(), NAN, 1.0f, mode)->CountInside(), 0u);
  EXPECT_EQ(ItkFlags<F3>(image.GetPointer(), NAN, 1.0f), std::vector<bool>(40 * 3 * 2, false));
}

// ===========================================================================
// CPU
// ===========================================================================

TEST(ThresholdToPackedMaskCpu, MatchesTheReferenceForEveryPixelType)
{
  ExpectEveryCaseMatches<unsigned char>(Mode::CPU, 1);
  ExpectEveryCaseMatches<short>(Mode::CPU, 2);
  ExpectEveryCaseMatches<unsigned short>(Mode::CPU, 3);
  ExpectEveryCaseMatches<float>(Mode::CPU, 4);
}

TEST(ThresholdToPackedMaskCpu, NonFiniteValues)
{
  ExpectNonFiniteRules(Mode::CPU);
}

TEST(ThresholdToPackedMaskCpu, DefaultsAndChecksAreItks)
{
  auto ours = PackFilter<S3>::New();
  auto itk = itk::BinaryThresholdImageFilter<S3, UC3>::New();
  EXPECT_EQ(ours->GetLowerThreshold(), itk->GetLowerThreshold());
  EXPECT_EQ(ours->GetUpperThreshold(), itk->GetUpperThreshold());
  auto image = RandomPixels<S3>({ 6, 5, 4 }, 51);
  ours->SetInput(image);
  ours->SetLowerThreshold(10);
  ours->SetUpperThreshold(9);
  EXPECT_THROW(ours->Update(), itk::ExceptionObject);
  ours->SetUpperThreshold(10);
  EXPECT_NO_THROW(ours->Update());
  // empty input
  auto empty = S3::New();
  empty->SetRegions(S3::SizeType{ { 0, 3, 3 } });
  empty->Allocate();
  auto filter = PackFilter<S3>::New();
  filter->SetInput(empty);
  EXPECT_THROW(filter->Update(), itk::ExceptionObject);
  if (!cif::Runtime::IsDeviceAvailable())
  {
    auto gpu = PackFilter<S3>::New();
    gpu->SetInput(image);
    gpu->SetExecutionMode(Mode::GPU);
    EXPECT_THROW(gpu->Update(), itk::ExceptionObject);
  }
}

TEST(ThresholdToPackedMaskCpu, RealImages)
{
  auto slice = ReadImage<UC2>(ExampleData("BrainProtonDensitySlice.png"));
  ExpectPacksAsReference<UC2>(slice.GetPointer(), 90, 200, Mode::CPU);
  auto volume = ReadImage<UC3>(ExampleData("KmeansTest_T1UCharRaw.nii.gz"));
  ExpectPacksAsReference<UC3>(volume.GetPointer(), 50, {}, Mode::CPU);
}

TEST(ThresholdToPackedMaskCpu, PipelineUpdatesFollowChanges)
{
  auto image = RandomPixels<US3>({ 70, 9, 4 }, 61);
  auto filter = PackFilter<US3>::New();
  filter->SetInput(image);
  filter->SetExecutionMode(Mode::CPU);
  filter->SetLowerThreshold(30000);
  filter->Update();
  const auto first = WordsOf(filter->GetOutput());
  filter->SetLowerThreshold(10000);
  filter->Update();
  EXPECT_EQ(WordsOf(filter->GetOutput()),
            PackReference(ThresholdFlags<US3>(image, 10000, 65535), SizeOf(image.GetPointer())));
  EXPECT_NE(WordsOf(filter->GetOutput()), first);
}

// ===========================================================================
// GPU (CTest label "gpu")
// ===========================================================================

TEST(ThresholdToPackedMaskGpu, MatchesTheReferenceForEveryPixelType)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  ExpectEveryCaseMatches<unsigned char>(Mode::GPU, 101);
  ExpectEveryCaseMatches<short>(Mode::GPU, 102);
  ExpectEveryCaseMatches<unsigned short>(Mode::GPU, 103);
  ExpectEveryCaseMatches<float>(Mode::GPU, 104);
  auto wide = RandomPixels<UC2>({ 5000, 3 }, 105); // more than 8 words per row: several warp units per row
  ExpectPacksAsReference<UC2>(wide.GetPointer(), 10, 100, Mode::GPU);
}

TEST(ThresholdToPackedMaskGpu, NonFiniteValues)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  ExpectNonFiniteRules(Mode::GPU);
}

TEST(ThresholdToPackedMaskGpu, RealImages)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto slice = ReadImage<UC2>(ExampleData("BrainProtonDensitySlice.png"));
  ExpectPacksAsReference<UC2>(slice.GetPointer(), 90, 200, Mode::GPU);
  auto volume = ReadImage<UC3>(ExampleData("KmeansTest_T1UCharRaw.nii.gz"));
  ExpectPacksAsReference<UC3>(volume.GetPointer(), 50, {}, Mode::GPU);
  EXPECT_EQ(WordsOf(Pack<UC3>(volume.GetPointer(), 50, 120, Mode::GPU).GetPointer()),
            WordsOf(Pack<UC3>(volume.GetPointer(), 50, 120, Mode::CPU).GetPointer()));
}

TEST(ThresholdToPackedMaskGpu, DownloadMovesOnlyThePackedBytes)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  using CudaUS3 = itk::CudaFilterImage<unsigned short, 3>;
  auto plain = RandomPixels<US3>({ 256, 64, 12 }, 111);
  auto input = ToCudaImage<CudaUS3>(plain.GetPointer());
  input->GetDeviceBufferPointer(); // the image is on the device before the filter runs
  auto filter = PackFilter<CudaUS3>::New();
  filter->SetInput(input);
  filter->SetExecutionMode(Mode::GPU);
  filter->SetLowerThreshold(20000);
  filter->SetUpperThreshold(50000);
  cif::Runtime::ResetTransferCounters();
  filter->Update();
  auto counters = cif::Runtime::GetTransferCounters();
  EXPECT_EQ(counters.HostToDeviceCount, 0u); // the image was not uploaded again
  EXPECT_EQ(counters.DeviceToHostCount, 0u); // the words stay on the device
  const auto * mask = filter->GetOutput();
  EXPECT_FALSE(mask->IsHostBufferCurrent());
  const auto words = WordsOf(mask); // host access downloads the words, only they
  counters = cif::Runtime::GetTransferCounters();
  EXPECT_EQ(counters.HostToDeviceCount, 0u);
  EXPECT_EQ(counters.DeviceToHostCount, 1u);
  EXPECT_EQ(counters.DeviceToHostBytes, mask->GetPackedSizeInBytes());
  EXPECT_EQ(counters.DeviceToHostBytes * 8, plain->GetBufferedRegion().GetNumberOfPixels()); // vs 1 byte per voxel
  EXPECT_EQ(words, PackReference(ThresholdFlags<US3>(plain, 20000, 50000), SizeOf(plain.GetPointer())));
}

TEST(ThresholdToPackedMaskGpu, CoreWritesEveryWord)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  for (std::int64_t nx : { 1, 33, 257, 1000 })
  {
    auto            image = RandomPixels<F3>({ static_cast<itk::SizeValueType>(nx), 13, 7 }, 121 + nx);
    cif::MaskExtent extent;
    extent.size[0] = nx;
    extent.size[1] = 13;
    extent.size[2] = 7;
    const std::size_t     voxels = static_cast<std::size_t>(extent.Voxels());
    const std::size_t     words = static_cast<std::size_t>(extent.Words());
    cif::DeviceBuffer in(voxels * 4), out(words * 4);
    in.CopyFromHost(image->GetBufferPointer(), voxels * 4);
    out.FillBytes(0xA5); // padding bits set: a word left unwritten, or written without clearing them, shows
    cif::ThresholdPackCUDA(static_cast<const float *>(in.GetPointer()),
                           static_cast<std::uint32_t *>(out.GetPointer()),
                           extent,
                           -200.0f,
                           300.0f);
    std::vector<std::uint32_t> gpu(words), cpu(words);
    out.CopyToHost(gpu.data(), words * 4);
    cif::ThresholdPackCPU(image->GetBufferPointer(), cpu.data(), extent, -200.0f, 300.0f, 2);
    EXPECT_EQ(gpu, cpu) << "nx " << nx;
    EXPECT_EQ(cpu, PackReference(ThresholdFlags<F3>(image, -200.0f, 300.0f), SizeOf(image.GetPointer())));
  }
}

} // namespace
