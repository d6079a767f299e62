/*=========================================================================
 *  Tests of CudaUnpackMaskImageFilter (CPU and GPU paths) and the unpack
 *  core.
 *
 *  References: the voxel flags a mask was built from (set voxel by voxel
 *  through CudaPackedMask::SetMaskValue), and ITK's
 *  itk::BinaryThresholdImageFilter: unpacking a thresholded mask with the
 *  same inside/outside values must give that filter's output. Exact.
 *=========================================================================*/
#include "CudaSegmentationTestUtilities.h"
#include "cif/PackedMask.h"
#include "itkBinaryThresholdImageFilter.h"
#include "itkCudaThresholdToPackedMaskImageFilter.h"
#include "itkCudaUnpackMaskImageFilter.h"

#include <gtest/gtest.h>
#include <optional>
#include <vector>

namespace
{
using namespace cif_test;
using Mode = itk::CudaExecutionMode;

template <typename TOut>
typename TOut::Pointer
Unpack(const itk::CudaPackedMask<TOut::ImageDimension> * mask,
       Mode                                              mode,
       std::optional<typename TOut::PixelType>           inside = {},
       std::optional<typename TOut::PixelType>           outside = {},
       itk::CudaExecutedOn *                             ranOn = nullptr)
{
  auto filter = itk::CudaUnpackMaskImageFilter<TOut>::New();
  filter->SetInput(mask);
  filter->SetExecutionMode(mode);
  if (inside)
  {
    filter->SetInsideValue(*inside);
  }
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

/** A mask with the test geometry, random flags (1 in 3 inside), set voxel by voxel. */
template <unsigned D>
typename itk::CudaPackedMask<D>::Pointer
RandomMask(const typename itk::Image<char, D>::SizeType & size, unsigned seed, std::vector<bool> & flags)
{
  using Plain = itk::Image<char, D>;
  auto grid = Plain::New();
  grid->SetRegions(size);
  GiveGeometry(grid.GetPointer());
  auto mask = itk::CudaPackedMask<D>::New();
  mask->AllocateLike(grid);
  std::mt19937 rng(seed);
  flags.clear();
  for (itk::ImageRegionConstIteratorWithIndex<Plain> it(grid, grid->GetLargestPossibleRegion()); !it.IsAtEnd(); ++it)
  {
    flags.push_back(rng() % 3 == 0);
    mask->SetMaskValue(it.GetIndex(), flags.back());
  }
  return mask;
}

template <typename TOut>
void
ExpectUnpacksTheFlags(const itk::CudaPackedMask<TOut::ImageDimension> * mask,
                      const std::vector<bool> &                         flags,
                      Mode                                              mode)
{
  using P = typename TOut::PixelType;
  for (auto values : { std::pair<std::optional<P>, std::optional<P>>{},
                       std::pair<std::optional<P>, std::optional<P>>{ P(1), P(0) },
                       std::pair<std::optional<P>, std::optional<P>>{ P(3), P(100) } })
  {
    itk::CudaExecutedOn ranOn = itk::CudaExecutedOn::None;
    auto                out = Unpack<TOut>(mask, mode, values.first, values.second, &ranOn);
    EXPECT_EQ(ranOn, mode == Mode::GPU ? itk::CudaExecutedOn::GPU : itk::CudaExecutedOn::CPU);
    const P     inside = values.first.value_or(itk::NumericTraits<P>::max());
    const P     outside = values.second.value_or(P(0));
    std::size_t i = 0, differ = 0;
    for (itk::ImageRegionConstIterator<TOut> it(out, out->GetBufferedRegion()); !it.IsAtEnd(); ++it, ++i)
    {
      differ += it.Get() == (flags[i] ? inside : outside) ? 0 : 1;
    }
    EXPECT_EQ(i, flags.size());
    EXPECT_EQ(differ, 0u) << itk::CudaPixelTypeName<P>() << ", mask " << mask->GetMaskRegion();
    EXPECT_EQ(out->GetLargestPossibleRegion(), mask->GetMaskRegion()); // the true grid, start index included
    EXPECT_TRUE(SameGeometry(out.GetPointer(), mask));
  }
}

template <unsigned D>
void
ExpectEveryCaseUnpacks(Mode mode, unsigned seed)
{
  std::vector<bool> flags;
  for (itk::SizeValueType nx : { 1, 31, 32, 33, 100 })
  {
    typename itk::Image<char, D>::SizeType size;
    for (unsigned a = 0; a < D; ++a)
    {
      size[a] = a == 0 ? nx : 6 - a;
    }
    auto mask = RandomMask<D>(size, seed + nx, flags);
    ExpectUnpacksTheFlags<itk::Image<unsigned char, D>>(mask.GetPointer(), flags, mode);
    ExpectUnpacksTheFlags<itk::Image<short, D>>(mask.GetPointer(), flags, mode);
    ExpectUnpacksTheFlags<itk::Image<unsigned short, D>>(mask.GetPointer(), flags, mode);
    ExpectUnpacksTheFlags<itk::Image<float, D>>(mask.GetPointer(), flags, mode);
  }
}

using F3 = itk::Image<float, 3>;
using UC2 = itk::Image<unsigned char, 2>;
using UC3 = itk::Image<unsigned char, 3>;
using S3 = itk::Image<short, 3>;
using US3 = itk::Image<unsigned short, 3>;

/** threshold -> pack -> unpack is ITK's BinaryThresholdImageFilter. */
template <typename TIn, typename TOut>
void
ExpectRoundTripIsItksThreshold(const TIn *              input,
                               typename TIn::PixelType  lower,
                               typename TIn::PixelType  upper,
                               typename TOut::PixelType inside,
                               typename TOut::PixelType outside,
                               Mode                     mode)
{
  auto pack = itk::CudaThresholdToPackedMaskImageFilter<TIn>::New();
  pack->SetInput(input);
  pack->SetLowerThreshold(lower);
  pack->SetUpperThreshold(upper);
  pack->SetExecutionMode(mode);
  auto unpack = itk::CudaUnpackMaskImageFilter<TOut>::New();
  unpack->SetInput(pack->GetOutput());
  unpack->SetInsideValue(inside);
  unpack->SetOutsideValue(outside);
  unpack->SetExecutionMode(mode);
  unpack->Update();
  auto itk = itk::BinaryThresholdImageFilter<TIn, TOut>::New();
  itk->SetInput(input);
  itk->SetLowerThreshold(lower);
  itk->SetUpperThreshold(upper);
  itk->SetInsideValue(inside);
  itk->SetOutsideValue(outside);
  itk->Update();
  EXPECT_EQ(CountDiffering(unpack->GetOutput(), itk->GetOutput()), 0u);
  EXPECT_EQ(unpack->GetOutput()->GetLargestPossibleRegion(), itk->GetOutput()->GetLargestPossibleRegion());
  EXPECT_TRUE(SameGeometry(unpack->GetOutput(), itk->GetOutput()));
}

// ===========================================================================
// CPU
// ===========================================================================

TEST(UnpackMaskCpu, UnpacksTheFlagsForEveryPixelType)
{
  ExpectEveryCaseUnpacks<2>(Mode::CPU, 1);
  ExpectEveryCaseUnpacks<3>(Mode::CPU, 2);
}

TEST(UnpackMaskCpu, ThresholdPackUnpackIsItksThreshold)
{
  auto image = RandomPixels<F3>({ 45, 13, 7 }, 11);
  GiveGeometry(image.GetPointer());
  ExpectRoundTripIsItksThreshold<F3, UC3>(image.GetPointer(), -100.0f, 400.0f, 255, 0, Mode::CPU);
  ExpectRoundTripIsItksThreshold<F3, S3>(image.GetPointer(), 0.0f, 1000.0f, -7, 9, Mode::CPU);
  auto slice = ReadImage<UC2>(ExampleData("BrainProtonDensitySlice.png"));
  ExpectRoundTripIsItksThreshold<UC2, UC2>(slice.GetPointer(), 90, 200, 1, 0, Mode::CPU);
  auto volume = ReadImage<UC3>(ExampleData("KmeansTest_T1UCharRaw.nii.gz"));
  ExpectRoundTripIsItksThreshold<UC3, US3>(volume.GetPointer(), 50, 255, 1000, 1, Mode::CPU);
}

TEST(UnpackMaskCpu, DefaultsAndBadInput)
{
  auto filter = itk::CudaUnpackMaskImageFilter<US3>::New();
  EXPECT_EQ(filter->GetInsideValue(), 65535); // as itk::BinaryThresholdImageFilter
  EXPECT_EQ(filter->GetOutsideValue(), 0);
  auto empty = itk::CudaPackedMask<3>::New();
  empty->SetMaskRegion(itk::CudaPackedMask<3>::RegionType(itk::CudaPackedMask<3>::SizeType{ { 0, 4, 4 } }));
  empty->AllocateMask();
  filter->SetInput(empty);
  EXPECT_THROW(filter->Update(), itk::ExceptionObject);
  auto noInput = itk::CudaUnpackMaskImageFilter<US3>::New();
  EXPECT_THROW(noInput->Update(), itk::ExceptionObject);
  if (!cif::Runtime::IsDeviceAvailable())
  {
    std::vector<bool> flags;
    auto              mask = RandomMask<3>({ { 5, 4, 3 } }, 21, flags);
    EXPECT_THROW(Unpack<US3>(mask.GetPointer(), Mode::GPU), itk::ExceptionObject);
  }
}

// ===========================================================================
// GPU (CTest label "gpu")
// ===========================================================================

TEST(UnpackMaskGpu, UnpacksTheFlagsForEveryPixelType)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  ExpectEveryCaseUnpacks<2>(Mode::GPU, 101);
  ExpectEveryCaseUnpacks<3>(Mode::GPU, 102);
  std::vector<bool> flags;
  auto              wide = RandomMask<2>({ { 3000, 3 } }, 103, flags); // rows longer than a block's 1024 voxels
  ExpectUnpacksTheFlags<UC2>(wide.GetPointer(), flags, Mode::GPU);
}

TEST(UnpackMaskGpu, ThresholdPackUnpackStaysOnTheDevice)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto image = RandomPixels<F3>({ 45, 13, 7 }, 111);
  GiveGeometry(image.GetPointer());
  ExpectRoundTripIsItksThreshold<F3, UC3>(image.GetPointer(), -100.0f, 400.0f, 255, 0, Mode::GPU);
  auto volume = ReadImage<UC3>(ExampleData("KmeansTest_T1UCharRaw.nii.gz"));
  ExpectRoundTripIsItksThreshold<UC3, US3>(volume.GetPointer(), 50, 255, 1000, 1, Mode::GPU);

  using CudaUS3 = itk::CudaFilterImage<unsigned short, 3>;
  using CudaUC3 = itk::CudaFilterImage<unsigned char, 3>;
  auto plain = RandomPixels<US3>({ 200, 30, 10 }, 112);
  auto input = ToCudaImage<CudaUS3>(plain.GetPointer());
  auto pack = itk::CudaThresholdToPackedMaskImageFilter<CudaUS3>::New();
  pack->SetInput(input);
  pack->SetLowerThreshold(10000);
  pack->SetExecutionMode(Mode::GPU);
  auto unpack = itk::CudaUnpackMaskImageFilter<CudaUC3>::New();
  unpack->SetInput(pack->GetOutput());
  unpack->SetInsideValue(1);
  unpack->SetExecutionMode(Mode::GPU);
  cif::Runtime::ResetTransferCounters();
  unpack->Update();
  const auto counters = cif::Runtime::GetTransferCounters();
  EXPECT_EQ(counters.HostToDeviceCount, 1u); // the image, once
  EXPECT_EQ(counters.DeviceToHostCount, 0u);
  auto itk = itk::BinaryThresholdImageFilter<US3, UC3>::New();
  itk->SetInput(plain);
  itk->SetLowerThreshold(10000);
  itk->SetInsideValue(1);
  itk->Update();
  EXPECT_EQ(CountDiffering(static_cast<const CudaUC3 *>(unpack->GetOutput()), itk->GetOutput()), 0u);
}

TEST(UnpackMaskGpu, CoreWritesEveryVoxel)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  std::vector<bool> flags;
  auto              mask = RandomMask<3>({ { 1100, 5, 3 } }, 121, flags);
  cif::MaskExtent   extent;
  extent.size[0] = 1100;
  extent.size[1] = 5;
  extent.size[2] = 3;
  const std::size_t     voxels = static_cast<std::size_t>(extent.Voxels());
  const std::size_t     words = static_cast<std::size_t>(extent.Words());
  cif::DeviceBuffer in(words * 4), out(voxels * 2);
  in.CopyFromHost(WordsOf(mask.GetPointer()).data(), words * 4);
  out.FillBytes(0xA5);
  cif::UnpackMaskCUDA<short>(
    static_cast<const std::uint32_t *>(in.GetPointer()), static_cast<short *>(out.GetPointer()), extent, 7, -3);
  std::vector<short> gpu(voxels), expected(voxels);
  out.CopyToHost(gpu.data(), voxels * 2);
  for (std::size_t i = 0; i < voxels; ++i)
  {
    expected[i] = flags[i] ? 7 : -3;
  }
  EXPECT_EQ(gpu, expected);
}

} // namespace
