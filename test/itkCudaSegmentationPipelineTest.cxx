/*=========================================================================
 *  The segmentation pipeline of seed paper 002 kept on the GPU: an
 *  edge-preserving filter (bilateral x3, median or rotating mask), then the
 *  threshold straight into a bit-packed mask, then the host. Only the input
 *  goes up and only the packed mask comes down: the transfer counters of
 *  the runtime layer prove it. The mask must equal the one the CPU chain
 *  makes (exactly for median and rotating mask, whose GPU and CPU outputs
 *  are identical; for bilateral within the few voxels where the GPU's float
 *  arithmetic can move a value across an integer, see the class docs).
 *=========================================================================*/
#include "CudaImageFiltersTestUtilities.h"
#include "CudaSegmentationTestUtilities.h"
#include "itkCudaBilateralImageFilter.h"
#include "itkCudaMedianImageFilter.h"
#include "itkCudaRotatingMaskImageFilter.h"
#include "itkCudaThresholdToPackedMaskImageFilter.h"
#include "itkCudaUnpackMaskImageFilter.h"

#include <gtest/gtest.h>
#include <bitset>

namespace
{
using namespace cif_test;
using Mode = itk::CudaExecutionMode;
using US3 = itk::Image<unsigned short, 3>;
using CudaUS3 = itk::CudaFilterImage<unsigned short, 3>;

enum class Stage
{
  Bilateral3,
  Median,
  RotatingMask
};

const char *
NameOf(Stage stage)
{
  return stage == Stage::Bilateral3 ? "bilateral x3" : (stage == Stage::Median ? "median" : "rotating mask");
}

/** The first stage on `input`, in `mode`, not yet updated. */
template <typename TImage>
typename itk::ImageToImageFilter<TImage, TImage>::Pointer
FirstStage(Stage stage, const TImage * input, Mode mode)
{
  if (stage == Stage::Bilateral3)
  {
    auto filter = itk::CudaBilateralImageFilter<TImage, TImage>::New();
    filter->SetInput(input);
    filter->SetDomainSigma(1.0);
    filter->SetRangeSigma(400.0);
    filter->SetNumberOfIterations(3);
    filter->SetExecutionMode(mode);
    return filter.GetPointer();
  }
  if (stage == Stage::Median)
  {
    auto filter = itk::CudaMedianImageFilter<TImage, TImage>::New();
    filter->SetInput(input);
    filter->SetRadius(1);
    filter->SetExecutionMode(mode);
    return filter.GetPointer();
  }
  auto filter = itk::CudaRotatingMaskImageFilter<TImage, TImage>::New();
  filter->SetInput(input);
  filter->SetExecutionMode(mode);
  return filter.GetPointer();
}

/** Filter -> threshold and pack, in one mode; returns the mask (not yet read on the host). */
template <typename TImage>
typename itk::CudaPackedMask<3>::Pointer
Segment(Stage stage, const TImage * input, Mode mode)
{
  auto first = FirstStage<TImage>(stage, input, mode);
  auto pack = itk::CudaThresholdToPackedMaskImageFilter<TImage>::New();
  pack->SetInput(first->GetOutput());
  pack->SetLowerThreshold(20000);
  pack->SetUpperThreshold(45000);
  pack->SetExecutionMode(mode);
  pack->Update();
  return TakeOutput(pack.GetPointer());
}

/** A piecewise-constant volume with noise: blobs to segment, edges to keep. */
US3::Pointer
TestVolume()
{
  auto image = RandomPixels<US3>({ 70, 52, 24 }, 2024);
  for (itk::ImageRegionIteratorWithIndex<US3> it(image, image->GetBufferedRegion()); !it.IsAtEnd(); ++it)
  {
    const auto   i = it.GetIndex();
    const double inside = ((i[0] / 9 + i[1] / 7 + i[2] / 5) % 3 == 0) ? 32000.0 : 8000.0;
    it.Set(static_cast<unsigned short>(inside + (it.Get() % 6000) - 3000));
  }
  return image;
}

std::size_t
DifferingBits(const std::vector<std::uint32_t> & a, const std::vector<std::uint32_t> & b)
{
  std::size_t count = 0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i)
  {
    count += std::bitset<32>(a[i] ^ b[i]).count();
  }
  return count + 32 * (a.size() > b.size() ? a.size() - b.size() : b.size() - a.size());
}

TEST(SegmentationPipelineGpu, OnlyTheInputGoesUpAndOnlyThePackedMaskComesDown)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto plain = TestVolume();
  for (Stage stage : { Stage::Bilateral3, Stage::Median, Stage::RotatingMask })
  {
    auto input = ToCudaImage<CudaUS3>(plain.GetPointer()); // host copy current: the pipeline uploads it
    cif::Runtime::ResetTransferCounters();
    auto mask = Segment<CudaUS3>(stage, input.GetPointer(), Mode::GPU);
    auto counters = cif::Runtime::GetTransferCounters();
    EXPECT_EQ(counters.HostToDeviceCount, 1u) << NameOf(stage);
    EXPECT_EQ(counters.HostToDeviceBytes, plain->GetBufferedRegion().GetNumberOfPixels() * sizeof(unsigned short))
      << NameOf(stage);
    EXPECT_EQ(counters.DeviceToHostCount, 0u) << NameOf(stage) << ": nothing comes down before the host asks";

    const auto words = WordsOf(mask.GetPointer()); // the host reads the mask: one download, of the packed words
    counters = cif::Runtime::GetTransferCounters();
    EXPECT_EQ(counters.HostToDeviceCount, 1u) << NameOf(stage);
    EXPECT_EQ(counters.DeviceToHostCount, 1u) << NameOf(stage);
    EXPECT_EQ(counters.DeviceToHostBytes, mask->GetPackedSizeInBytes()) << NameOf(stage);
    EXPECT_LE(8 * counters.DeviceToHostBytes, plain->GetBufferedRegion().GetNumberOfPixels() + 8 * 32 * 52 * 24)
      << NameOf(stage) << ": one bit per voxel (rows padded to whole words)";

    // the same chain on the CPU
    const auto   cpuWords = WordsOf(Segment<US3>(stage, plain.GetPointer(), Mode::CPU).GetPointer());
    const auto   differing = DifferingBits(words, cpuWords);
    const double voxels = static_cast<double>(plain->GetBufferedRegion().GetNumberOfPixels());
    if (stage == Stage::Bilateral3)
    {
      EXPECT_LE(differing / voxels, 1e-4) << NameOf(stage) << ": " << differing << " voxels differ";
    }
    else
    {
      EXPECT_EQ(differing, 0u) << NameOf(stage);
    }
    EXPECT_GT(std::count_if(cpuWords.begin(), cpuWords.end(), [](std::uint32_t w) { return w != 0; }), 0)
      << NameOf(stage) << ": the threshold selects something";
  }
}

TEST(SegmentationPipelineGpu, UnpackingOnTheDeviceAddsOneDownloadOfTheLabels)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto plain = TestVolume();
  auto input = ToCudaImage<CudaUS3>(plain.GetPointer());
  auto first = FirstStage<CudaUS3>(Stage::Median, input.GetPointer(), Mode::GPU);
  auto pack = itk::CudaThresholdToPackedMaskImageFilter<CudaUS3>::New();
  pack->SetInput(first->GetOutput());
  pack->SetLowerThreshold(20000);
  pack->SetUpperThreshold(45000);
  pack->SetExecutionMode(Mode::GPU);
  using Labels = itk::CudaFilterImage<unsigned char, 3>;
  auto unpack = itk::CudaUnpackMaskImageFilter<Labels>::New();
  unpack->SetInput(pack->GetOutput());
  unpack->SetExecutionMode(Mode::GPU);
  cif::Runtime::ResetTransferCounters();
  unpack->Update();
  EXPECT_EQ(cif::Runtime::GetTransferCounters().DeviceToHostCount, 0u);
  // the labels equal the thresholded CPU median
  auto reference = FirstStage<US3>(Stage::Median, plain.GetPointer(), Mode::CPU);
  reference->Update();
  std::size_t                        mismatches = 0;
  itk::ImageRegionConstIterator<US3> rt(reference->GetOutput(), reference->GetOutput()->GetBufferedRegion());
  for (itk::ImageRegionConstIterator<Labels> it(unpack->GetOutput(), unpack->GetOutput()->GetBufferedRegion());
       !it.IsAtEnd();
       ++it, ++rt)
  {
    const bool inside = rt.Get() >= 20000 && rt.Get() <= 45000;
    mismatches += (it.Get() != 0) != inside ? 1 : 0;
  }
  EXPECT_EQ(mismatches, 0u);
  const auto counters = cif::Runtime::GetTransferCounters();
  EXPECT_EQ(counters.DeviceToHostCount, 1u);
  EXPECT_EQ(counters.DeviceToHostBytes, plain->GetBufferedRegion().GetNumberOfPixels());
}

TEST(SegmentationPipelineCpu, TheCpuChainMatchesItsStages)
{
  // The chain in CPU mode equals its stages run one by one with ITK's
  // threshold semantics (lower <= v <= upper), so the GPU comparison above
  // compares with something meaningful.
  auto plain = TestVolume();
  for (Stage stage : { Stage::Bilateral3, Stage::Median, Stage::RotatingMask })
  {
    auto first = FirstStage<US3>(stage, plain.GetPointer(), Mode::CPU);
    first->Update();
    const auto words = WordsOf(Segment<US3>(stage, plain.GetPointer(), Mode::CPU).GetPointer());
    EXPECT_EQ(words, PackReference(ThresholdFlags<US3>(first->GetOutput(), 20000, 45000), SizeOf(plain.GetPointer())))
      << NameOf(stage);
  }
}

} // namespace
