/*=========================================================================
 *  Tests of CudaApplyPackedMaskImageFilter (CPU and GPU paths) and the
 *  apply core.
 *
 *  Reference: ITK's itk::MaskImageFilter with the same mask unpacked to a
 *  uint8 label image (voxel by voxel from the flags the packed mask was
 *  built from). Exact.
 *=========================================================================*/
#include "CudaSegmentationTestUtilities.h"
#include "cif/PackedMask.h"
#include "itkCudaApplyPackedMaskImageFilter.h"
#include "itkCudaThresholdToPackedMaskImageFilter.h"
#include "itkImageRegionIteratorWithIndex.h"
#include "itkMaskImageFilter.h"

#include <gtest/gtest.h>
#include <functional>
#include <optional>
#include <vector>

namespace
{
using namespace cif_test;
using Mode = itk::CudaExecutionMode;

template <unsigned D>
using Mask = itk::CudaPackedMask<D>;

/** A packed mask over `image`'s grid with random flags (1 in 3 inside), and the same flags as a uint8 label image. */
template <typename TImage>
typename Mask<TImage::ImageDimension>::Pointer
RandomMaskFor(const TImage *                                                        image,
              unsigned                                                              seed,
              typename itk::Image<unsigned char, TImage::ImageDimension>::Pointer & labels)
{
  constexpr unsigned D = TImage::ImageDimension;
  auto               mask = Mask<D>::New();
  mask->AllocateLike(image);
  labels = itk::Image<unsigned char, D>::New();
  labels->CopyInformation(image);
  labels->SetRegions(image->GetLargestPossibleRegion());
  labels->Allocate();
  std::mt19937 rng(seed);
  for (itk::ImageRegionIteratorWithIndex<itk::Image<unsigned char, D>> it(labels, labels->GetBufferedRegion());
       !it.IsAtEnd();
       ++it)
  {
    const bool inside = rng() % 3 == 0;
    it.Set(inside ? 1 : 0);
    mask->SetMaskValue(it.GetIndex(), inside);
  }
  return mask;
}

template <typename TImage>
typename TImage::Pointer
ApplyOurs(const TImage *                            image,
          const Mask<TImage::ImageDimension> *      mask,
          Mode                                      mode,
          std::optional<typename TImage::PixelType> outside = {},
          itk::CudaExecutedOn *                     ranOn = nullptr)
{
  auto filter = itk::CudaApplyPackedMaskImageFilter<TImage>::New();
  filter->SetInput(image);
  filter->SetMaskImage(mask);
  filter->SetExecutionMode(mode);
  if (outside)
  {
    filter->SetOutsideValue(*outside);
  }
  filter->Update();
  if (ranOn)
  {
    *ranOn = filter->GetLastExecutedOn();
  }
  return TakeOutput(filter.GetPointer());
}

template <typename TImage>
typename TImage::Pointer
ApplyITK(const TImage *                                            image,
         const itk::Image<unsigned char, TImage::ImageDimension> * labels,
         std::optional<typename TImage::PixelType>                 outside = {})
{
  auto filter = itk::MaskImageFilter<TImage, itk::Image<unsigned char, TImage::ImageDimension>, TImage>::New();
  filter->SetInput(image);
  filter->SetMaskImage(labels);
  if (outside)
  {
    filter->SetOutsideValue(*outside);
  }
  filter->Update();
  return TakeOutput(filter.GetPointer());
}

template <typename TImage>
void
ExpectMatchesItk(const TImage * image, unsigned seed, Mode mode)
{
  typename itk::Image<unsigned char, TImage::ImageDimension>::Pointer labels;
  auto                                                                mask = RandomMaskFor(image, seed, labels);
  using P = typename TImage::PixelType;
  for (std::optional<P> outside : { std::optional<P>{}, std::optional<P>{ P(17) } })
  {
    itk::CudaExecutedOn ranOn = itk::CudaExecutedOn::None;
    auto                ours = ApplyOurs<TImage>(image, mask.GetPointer(), mode, outside, &ranOn);
    auto                itk = ApplyITK<TImage>(image, labels.GetPointer(), outside);
    EXPECT_EQ(ranOn, mode == Mode::GPU ? itk::CudaExecutedOn::GPU : itk::CudaExecutedOn::CPU);
    EXPECT_EQ(CountDiffering(ours.GetPointer(), itk.GetPointer()), 0u)
      << itk::CudaPixelTypeName<P>() << ", size " << image->GetLargestPossibleRegion().GetSize();
    EXPECT_EQ(ours->GetLargestPossibleRegion(), image->GetLargestPossibleRegion());
    EXPECT_TRUE(SameGeometry(ours.GetPointer(), image));
  }
}

template <typename T>
void
ExpectEveryCaseMatches(Mode mode, unsigned seed)
{
  for (itk::SizeValueType nx : { 1, 33, 100 })
  {
    auto image2 = RandomPixels<itk::Image<T, 2>>({ nx, 9 }, seed + nx);
    GiveGeometry(image2.GetPointer());
    ExpectMatchesItk(image2.GetPointer(), seed + 2 * nx, mode);
    auto image3 = RandomPixels<itk::Image<T, 3>>({ nx, 5, 4 }, seed + 3 * nx);
    GiveGeometry(image3.GetPointer());
    ExpectMatchesItk(image3.GetPointer(), seed + 4 * nx, mode);
  }
}

using F3 = itk::Image<float, 3>;
using UC2 = itk::Image<unsigned char, 2>;
using UC3 = itk::Image<unsigned char, 3>;
using S3 = itk::Image<short, 3>;

void
ExpectThrowMentioning(const std::function<void()> & run, const std::string & words)
{
  try
  {
    run();
    ADD_FAILURE() << "no exception (expected one mentioning \"" << words << "\")";
  }
  catch (const itk::ExceptionObject & e)
  {
    EXPECT_NE(std::string(e.GetDescription()).find(words), std::string::npos) << e.GetDescription();
  }
}

// ===========================================================================
// CPU
// ===========================================================================

TEST(ApplyPackedMaskCpu, MatchesItksMaskImageFilter)
{
  ExpectEveryCaseMatches<unsigned char>(Mode::CPU, 1);
  ExpectEveryCaseMatches<short>(Mode::CPU, 2);
  ExpectEveryCaseMatches<unsigned short>(Mode::CPU, 3);
  ExpectEveryCaseMatches<float>(Mode::CPU, 4);
  // non-finite pixels pass through unchanged where inside
  auto image = RandomPixels<F3>({ 40, 3, 2 }, 5);
  image->SetPixel({ { 1, 1, 1 } }, NAN);
  image->SetPixel({ { 2, 1, 1 } }, std::numeric_limits<float>::infinity());
  ExpectMatchesItk(image.GetPointer(), 6, Mode::CPU);
}

TEST(ApplyPackedMaskCpu, RealImages)
{
  auto volume = ReadImage<UC3>(ExampleData("KmeansTest_T1UCharRaw.nii.gz"));
  ExpectMatchesItk(volume.GetPointer(), 11, Mode::CPU);
  // the segmentation pipeline: threshold + pack, then apply the mask to the image
  auto pack = itk::CudaThresholdToPackedMaskImageFilter<UC3>::New();
  pack->SetInput(volume);
  pack->SetLowerThreshold(60);
  pack->SetExecutionMode(Mode::CPU);
  pack->Update();
  auto        applied = ApplyOurs<UC3>(volume.GetPointer(), pack->GetOutput(), Mode::CPU);
  std::size_t differ = 0;
  for (itk::ImageRegionConstIterator<UC3> it(volume, volume->GetBufferedRegion()),
       jt(applied, volume->GetBufferedRegion());
       !it.IsAtEnd();
       ++it, ++jt)
  {
    differ += jt.Get() == (it.Get() >= 60 ? it.Get() : 0) ? 0 : 1;
  }
  EXPECT_EQ(differ, 0u);
}

TEST(ApplyPackedMaskCpu, AMaskOfAnotherGridThrows)
{
  auto image = RandomPixels<S3>({ 40, 9, 5 }, 21);
  GiveGeometry(image.GetPointer());
  UC3::Pointer labels;
  auto         good = RandomMaskFor(image.GetPointer(), 22, labels);
  EXPECT_NO_THROW(ApplyOurs<S3>(image.GetPointer(), good.GetPointer(), Mode::CPU));
  // wrong size (one voxel shorter along x), same physical placement
  auto shorter = Mask<3>::New();
  auto region = good->GetMaskRegion();
  region.SetSize(0, 39);
  shorter->CopyInformation(good);
  shorter->SetMaskRegion(region);
  shorter->AllocateMask();
  ExpectThrowMentioning([&] { ApplyOurs<S3>(image.GetPointer(), shorter.GetPointer(), Mode::CPU); },
                        "does not describe the image's grid");
  // wrong start index
  auto shifted = Mask<3>::New();
  region = good->GetMaskRegion();
  region.SetIndex(1, region.GetIndex(1) + 1);
  shifted->CopyInformation(good);
  shifted->SetMaskRegion(region);
  shifted->AllocateMask();
  ExpectThrowMentioning([&] { ApplyOurs<S3>(image.GetPointer(), shifted.GetPointer(), Mode::CPU); },
                        "does not describe the image's grid");
  // other spacing: ITK's physical-space check
  auto spaced = Mask<3>::New();
  spaced->CopyInformation(good);
  auto spacing = good->GetSpacing();
  spacing[2] *= 2.0;
  spaced->SetSpacing(spacing);
  spaced->AllocateMask();
  EXPECT_THROW(ApplyOurs<S3>(image.GetPointer(), spaced.GetPointer(), Mode::CPU), itk::ExceptionObject);
  // no mask
  auto noMask = itk::CudaApplyPackedMaskImageFilter<S3>::New();
  noMask->SetInput(image);
  ExpectThrowMentioning([&] { noMask->Update(); }, "MaskImage");
  // empty image
  auto empty = S3::New();
  empty->SetRegions(S3::SizeType{ { 0, 2, 2 } });
  empty->Allocate();
  auto emptyMask = Mask<3>::New();
  emptyMask->AllocateLike(empty);
  EXPECT_THROW(ApplyOurs<S3>(empty.GetPointer(), emptyMask.GetPointer(), Mode::CPU), itk::ExceptionObject);
  if (!cif::Runtime::IsDeviceAvailable())
  {
    EXPECT_THROW(ApplyOurs<S3>(image.GetPointer(), good.GetPointer(), Mode::GPU), itk::ExceptionObject);
  }
}

// ===========================================================================
// GPU (CTest label "gpu")
// ===========================================================================

TEST(ApplyPackedMaskGpu, MatchesItksMaskImageFilter)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  ExpectEveryCaseMatches<unsigned char>(Mode::GPU, 101);
  ExpectEveryCaseMatches<short>(Mode::GPU, 102);
  ExpectEveryCaseMatches<unsigned short>(Mode::GPU, 103);
  ExpectEveryCaseMatches<float>(Mode::GPU, 104);
  auto wide = RandomPixels<UC2>({ 3000, 4 }, 105);
  ExpectMatchesItk(wide.GetPointer(), 106, Mode::GPU);
  auto volume = ReadImage<UC3>(ExampleData("KmeansTest_T1UCharRaw.nii.gz"));
  ExpectMatchesItk(volume.GetPointer(), 107, Mode::GPU);
}

TEST(ApplyPackedMaskGpu, SegmentationPipelineStaysOnTheDevice)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  using CudaS3 = itk::CudaFilterImage<short, 3>;
  auto plain = RandomPixels<S3>({ 200, 40, 12 }, 111);
  auto input = ToCudaImage<CudaS3>(plain.GetPointer());
  auto pack = itk::CudaThresholdToPackedMaskImageFilter<CudaS3>::New();
  pack->SetInput(input);
  pack->SetLowerThreshold(-5000);
  pack->SetUpperThreshold(12000);
  pack->SetExecutionMode(Mode::GPU);
  auto apply = itk::CudaApplyPackedMaskImageFilter<CudaS3>::New();
  apply->SetInput(input);
  apply->SetMaskImage(pack->GetOutput());
  apply->SetOutsideValue(-1);
  apply->SetExecutionMode(Mode::GPU);
  cif::Runtime::ResetTransferCounters();
  apply->Update();
  const auto counters = cif::Runtime::GetTransferCounters();
  EXPECT_EQ(counters.HostToDeviceCount, 1u); // the image, once
  EXPECT_EQ(counters.DeviceToHostCount, 0u);
  std::size_t                           differ = 0;
  const CudaS3 *                        out = apply->GetOutput();
  itk::ImageRegionConstIterator<CudaS3> jt(out, out->GetBufferedRegion());
  for (itk::ImageRegionConstIterator<S3> it(plain, plain->GetBufferedRegion()); !it.IsAtEnd(); ++it, ++jt)
  {
    const short v = it.Get();
    differ += jt.Get() == ((v >= -5000 && v <= 12000) ? v : short(-1)) ? 0 : 1;
  }
  EXPECT_EQ(differ, 0u);
}

TEST(ApplyPackedMaskGpu, CoreWritesEveryVoxel)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto            image = RandomPixels<F3>({ 1100, 5, 3 }, 121);
  UC3::Pointer    labels;
  auto            mask = RandomMaskFor(image.GetPointer(), 122, labels);
  cif::MaskExtent extent;
  extent.size[0] = 1100;
  extent.size[1] = 5;
  extent.size[2] = 3;
  const std::size_t     voxels = static_cast<std::size_t>(extent.Voxels());
  const std::size_t     words = static_cast<std::size_t>(extent.Words());
  cif::DeviceBuffer in(voxels * 4), bits(words * 4), out(voxels * 4);
  in.CopyFromHost(image->GetBufferPointer(), voxels * 4);
  bits.CopyFromHost(WordsOf(mask.GetPointer()).data(), words * 4);
  out.FillBytes(0xFF); // NaN
  cif::ApplyPackedMaskCUDA<float>(static_cast<const float *>(in.GetPointer()),
                                  static_cast<const std::uint32_t *>(bits.GetPointer()),
                                  static_cast<float *>(out.GetPointer()),
                                  extent,
                                  -2.5f);
  std::vector<float> gpu(voxels), cpu(voxels);
  out.CopyToHost(gpu.data(), voxels * 4);
  cif::ApplyPackedMaskCPU<float>(
    image->GetBufferPointer(), WordsOf(mask.GetPointer()).data(), cpu.data(), extent, -2.5f, 2);
  EXPECT_EQ(gpu, cpu);
}

} // namespace
