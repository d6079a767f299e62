/*=========================================================================
 *  Tests of CudaBinShrinkImageFilter: a drop-in for itk::BinShrinkImageFilter,
 *  bit for bit on both devices (the same double sums in raster order and the
 *  same rounding), with ITK's output grid, streaming and requested regions.
 *  The first filter added through the core's description (cif/Filter.h).
 *=========================================================================*/
#include "CudaImageFiltersTestUtilities.h"
#include "cif/Filter.h"
#include "itkBinShrinkImageFilter.h"
#include "itkCudaBinShrinkImageFilter.h"
#include "itkStreamingImageFilter.h"

#include <gtest/gtest.h>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

namespace
{
using namespace cif_test;
using Mode = itk::CudaExecutionMode;

/** ITK's own filter on `input`. */
template <typename TImage>
typename TImage::Pointer
ItkBinShrink(const TImage * input, const typename itk::BinShrinkImageFilter<TImage, TImage>::ShrinkFactorsType & f)
{
  auto filter = itk::BinShrinkImageFilter<TImage, TImage>::New();
  filter->SetInput(input);
  filter->SetShrinkFactors(f);
  filter->Update();
  typename TImage::Pointer out = filter->GetOutput();
  out->DisconnectPipeline();
  return out;
}

/** Ours in `mode`. */
template <typename TImage>
typename TImage::Pointer
OurBinShrink(const TImage *                                                                  input,
             const typename itk::BinShrinkImageFilter<TImage, TImage>::ShrinkFactorsType & f,
             Mode                                                                            mode,
             itk::CudaExecutedOn * ranOn = nullptr)
{
  auto filter = itk::CudaBinShrinkImageFilter<TImage, TImage>::New();
  filter->SetInput(input);
  filter->SetShrinkFactors(f);
  filter->SetExecutionMode(mode);
  filter->Update();
  if (ranOn)
  {
    *ranOn = filter->GetLastExecutedOn();
  }
  typename TImage::Pointer out = filter->GetOutput();
  out->DisconnectPipeline();
  return out;
}

/** Equal geometry and bit-identical pixels (NaN equal to NaN). */
template <typename TImage>
void
ExpectIdentical(const TImage * a, const TImage * b, const std::string & what)
{
  ASSERT_EQ(a->GetLargestPossibleRegion(), b->GetLargestPossibleRegion()) << what;
  EXPECT_EQ(a->GetSpacing(), b->GetSpacing()) << what;
  EXPECT_EQ(a->GetOrigin(), b->GetOrigin()) << what;
  EXPECT_EQ(a->GetDirection(), b->GetDirection()) << what;
  const std::size_t n = a->GetBufferedRegion().GetNumberOfPixels();
  ASSERT_EQ(n, b->GetBufferedRegion().GetNumberOfPixels()) << what;
  EXPECT_EQ(std::memcmp(a->GetBufferPointer(), b->GetBufferPointer(), n * sizeof(typename TImage::PixelType)), 0)
    << what << ": largest difference " << MaxAbsDifference(a, b);
}

/** Random pixels over the type's range (integers) or [-1000, 1000) with
 * an origin, spacing and rotated direction, so that the output grid is
 * checked too. */
template <typename TImage>
typename TImage::Pointer
TestInput(const typename TImage::SizeType & size, unsigned seed)
{
  using P = typename TImage::PixelType;
  const double lo = std::is_integral<P>::value ? static_cast<double>(std::numeric_limits<P>::lowest()) : -1000.0;
  const double hi = std::is_integral<P>::value ? static_cast<double>(std::numeric_limits<P>::max()) : 1000.0;
  auto         image = RandomImage<TImage>(size, lo, hi, seed);
  typename TImage::SpacingType   spacing;
  typename TImage::PointType     origin;
  typename TImage::DirectionType direction;
  direction.SetIdentity();
  for (unsigned int d = 0; d < TImage::ImageDimension; ++d)
  {
    spacing[d] = 0.7 + 0.3 * d;
    origin[d] = -3.5 + 1.25 * d;
  }
  if (TImage::ImageDimension >= 2)
  {
    direction[0][0] = direction[1][1] = std::cos(0.3);
    direction[0][1] = -std::sin(0.3);
    direction[1][0] = std::sin(0.3);
  }
  image->SetSpacing(spacing);
  image->SetOrigin(origin);
  image->SetDirection(direction);
  return image;
}

template <typename TImage>
typename itk::BinShrinkImageFilter<TImage, TImage>::ShrinkFactorsType
Factors(std::initializer_list<unsigned int> values)
{
  typename itk::BinShrinkImageFilter<TImage, TImage>::ShrinkFactorsType f;
  unsigned int                                                          d = 0;
  for (unsigned int v : values)
  {
    if (d < TImage::ImageDimension)
    {
      f[d++] = v;
    }
  }
  return f;
}

template <typename TImage>
void
ExpectEqualsItk(Mode mode)
{
  constexpr unsigned int D = TImage::ImageDimension;
  // sizes that the factors do not divide, and factors of 1
  const auto sizes = D == 1 ? std::vector<typename TImage::SizeType>{ MakeSize<TImage>({ 61 }) }
                     : D == 2 ? std::vector<typename TImage::SizeType>{ MakeSize<TImage>({ 37, 23 }) }
                              : std::vector<typename TImage::SizeType>{ MakeSize<TImage>({ 19, 14, 11 }) };
  const std::vector<std::array<unsigned int, 3>> factorSets = { { 1, 1, 1 }, { 2, 2, 2 }, { 3, 1, 4 }, { 5, 3, 2 } };
  unsigned seed = 3;
  for (const auto & size : sizes)
  {
    const auto input = TestInput<TImage>(size, seed++);
    for (const auto & factors : factorSets)
    {
      auto                f = Factors<TImage>({ factors[0], factors[1], factors[2] });
      itk::CudaExecutedOn ranOn = itk::CudaExecutedOn::None;
      const auto          ours = OurBinShrink<TImage>(input, f, mode, &ranOn);
      EXPECT_EQ(ranOn, mode == Mode::GPU ? itk::CudaExecutedOn::GPU : itk::CudaExecutedOn::CPU);
      std::ostringstream what;
      what << itk::CudaPixelTypeName<typename TImage::PixelType>() << ' ' << D << "D " << size << " / " << f;
      ExpectIdentical(ours.GetPointer(), ItkBinShrink<TImage>(input, f).GetPointer(), what.str());
    }
  }
}

// ===========================================================================
// CPU (CTest label "cpu")
// ===========================================================================

TEST(BinShrinkCpu, EqualsItkBitForBitForEveryPixelTypeAndDimension)
{
  ExpectEqualsItk<itk::Image<unsigned char, 2>>(Mode::CPU);
  ExpectEqualsItk<itk::Image<short, 3>>(Mode::CPU);
  ExpectEqualsItk<itk::Image<unsigned short, 2>>(Mode::CPU);
  ExpectEqualsItk<itk::Image<float, 1>>(Mode::CPU);
  ExpectEqualsItk<itk::Image<float, 3>>(Mode::CPU);
  ExpectEqualsItk<itk::Image<double, 3>>(Mode::CPU);
}

TEST(BinShrinkCpu, RealImagesEqualItk)
{
  const auto brain = ReadImage<itk::Image<unsigned char, 3>>(ExampleData("KmeansTest_T1UCharRaw.nii.gz"));
  for (auto f : { Factors<itk::Image<unsigned char, 3>>({ 2, 2, 2 }), Factors<itk::Image<unsigned char, 3>>({ 4, 4, 1 }) })
  {
    ExpectIdentical(OurBinShrink(brain.GetPointer(), f, Mode::CPU).GetPointer(),
                    ItkBinShrink(brain.GetPointer(), f).GetPointer(),
                    "KmeansTest_T1UCharRaw");
  }
  const auto slice = ReadImage<itk::Image<float, 2>>(ExampleData("BrainProtonDensitySlice.png"));
  const auto f = Factors<itk::Image<float, 2>>({ 3, 2 });
  ExpectIdentical(OurBinShrink(slice.GetPointer(), f, Mode::CPU).GetPointer(),
                  ItkBinShrink(slice.GetPointer(), f).GetPointer(),
                  "BrainProtonDensitySlice");
}

TEST(BinShrinkCpu, StreamsAndHonoursStartIndices)
{
  using Image = itk::Image<float, 3>;
  auto input = TestInput<Image>(MakeSize<Image>({ 23, 17, 29 }), 9);
  // a start index that the factors do not divide (ITK's output starts at ceil(start / f))
  Image::IndexType start;
  start[0] = 5;
  start[1] = -3;
  start[2] = 7;
  Image::RegionType region = input->GetLargestPossibleRegion();
  region.SetIndex(start);
  input->SetRegions(region);
  const auto f = Factors<Image>({ 2, 3, 4 });
  auto       ours = itk::CudaBinShrinkImageFilter<Image>::New();
  ours->SetInput(input);
  ours->SetShrinkFactors(f);
  ours->SetExecutionMode(Mode::CPU);
  auto streamer = itk::StreamingImageFilter<Image, Image>::New();
  streamer->SetInput(ours->GetOutput());
  streamer->SetNumberOfStreamDivisions(4);
  streamer->Update();
  ExpectIdentical(streamer->GetOutput(), ItkBinShrink(input.GetPointer(), f).GetPointer(), "streamed in 4 pieces");
}

TEST(BinShrinkCpu, NaNPropagatesIntoItsBin)
{
  using Image = itk::Image<float, 2>;
  auto input = TestInput<Image>(MakeSize<Image>({ 8, 6 }), 4);
  input->SetPixel({ { 3, 2 } }, std::numeric_limits<float>::quiet_NaN());
  const auto f = Factors<Image>({ 2, 2 });
  const auto ours = OurBinShrink(input.GetPointer(), f, Mode::CPU);
  EXPECT_TRUE(std::isnan(ours->GetPixel({ { 1, 1 } })));
  EXPECT_EQ(CountNonFinite(ours.GetPointer()), 1u);
  ExpectIdentical(ours.GetPointer(), ItkBinShrink(input.GetPointer(), f).GetPointer(), "NaN");
}

TEST(BinShrinkCpu, BadInputThrows)
{
  using Image = itk::Image<float, 2>;
  auto input = TestInput<Image>(MakeSize<Image>({ 8, 6 }), 5);
  // a factor larger than the image: ITK would read past its input
  EXPECT_THROW(OurBinShrink(input.GetPointer(), Factors<Image>({ 9, 1 }), Mode::CPU), itk::ExceptionObject);
  auto empty = Image::New();
  empty->SetRegions(MakeSize<Image>({ 0, 4 }));
  empty->Allocate();
  EXPECT_THROW(OurBinShrink(empty.GetPointer(), Factors<Image>({ 1, 1 }), Mode::CPU), itk::ExceptionObject);
  // a factor of 0 is raised to 1 by ITK's SetShrinkFactors(unsigned int): the identity
  auto zero = itk::CudaBinShrinkImageFilter<Image>::New();
  zero->SetInput(input);
  zero->SetShrinkFactors(0u);
  zero->SetExecutionMode(Mode::CPU);
  zero->Update();
  ExpectIdentical(zero->GetOutput(), ItkBinShrink(input.GetPointer(), Factors<Image>({ 1, 1 })).GetPointer(), "factor 0");
}

TEST(BinShrinkCpu, OtherPixelTypesRunItksImplementationAndSaySo)
{
  using Image = itk::Image<int, 2>;
  auto input = RandomImage<Image>(MakeSize<Image>({ 10, 9 }), -1000, 1000, 6);
  auto filter = itk::CudaBinShrinkImageFilter<Image>::New();
  filter->SetInput(input);
  filter->SetShrinkFactors(Factors<Image>({ 2, 3 }));
  filter->Update();
  EXPECT_EQ(filter->GetLastExecutedOn(), itk::CudaExecutedOn::CPU);
  EXPECT_NE(filter->GetLastExecutionReport().Message.find("ITK's implementation"), std::string::npos)
    << filter->GetLastExecutionReport().Message;
  EXPECT_EQ(MaxAbsDifference(filter->GetOutput(), ItkBinShrink(input.GetPointer(), Factors<Image>({ 2, 3 })).GetPointer()),
            0.0);
  filter->SetExecutionMode(Mode::GPU);
  EXPECT_THROW(filter->Update(), itk::ExceptionObject);
}

TEST(BinShrinkCpu, IsADropInForItksClass)
{
  using Image = itk::Image<float, 3>;
  auto                                                    ours = itk::CudaBinShrinkImageFilter<Image>::New();
  itk::BinShrinkImageFilter<Image, Image> *               asItk = ours.GetPointer();
  ExpectExecutionModeIsAnItkSetting(ours.GetPointer());
  asItk->SetShrinkFactor(1, 3);
  EXPECT_EQ(ours->GetShrinkFactors()[1], 3u);
  EXPECT_STREQ(ours->GetNameOfClass(), "CudaBinShrinkImageFilter");
}

TEST(BinShrinkCpu, TheDescriptionIsTheOneTheFacesUse)
{
  const cif::FilterDescriptor & d = cif::FindFilter("bin_shrink_image_filter");
  EXPECT_EQ(d.command, "bin-shrink");
  EXPECT_EQ(d.itkTwin, "itk::BinShrinkImageFilter");
  cif::Parameters p{ { "shrink_factors", { 2 } } };
  cif::Extent     image;
  image.dimension = 3;
  image.size[0] = 10;
  image.size[1] = 7;
  image.size[2] = 3;
  cif::CheckParameters(d, p, image, cif::Pixel::Float32);
  EXPECT_EQ(p.at("shrink_factors").size(), 3u); // one value for every axis
  const cif::Extent out = cif::OutputExtent(d, p, image);
  EXPECT_EQ(out.size[0], 5);
  EXPECT_EQ(out.size[1], 3);
  EXPECT_EQ(out.size[2], 1);
  cif::Parameters bad{ { "shrink_factors", { 2, 0, 1 } } };
  EXPECT_THROW(cif::CheckParameters(d, bad, image, cif::Pixel::Float32), std::invalid_argument);
  cif::Parameters unknown{ { "radius", { 1 } } };
  EXPECT_THROW(cif::CheckParameters(d, unknown, image, cif::Pixel::Float32), std::invalid_argument);
}

// ===========================================================================
// GPU (CTest label "gpu")
// ===========================================================================

TEST(BinShrinkGpu, EqualsItkBitForBitForEveryPixelTypeAndDimension)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  ExpectEqualsItk<itk::Image<unsigned char, 2>>(Mode::GPU);
  ExpectEqualsItk<itk::Image<short, 3>>(Mode::GPU);
  ExpectEqualsItk<itk::Image<unsigned short, 2>>(Mode::GPU);
  ExpectEqualsItk<itk::Image<float, 1>>(Mode::GPU);
  ExpectEqualsItk<itk::Image<float, 3>>(Mode::GPU);
  ExpectEqualsItk<itk::Image<double, 3>>(Mode::GPU);
}

TEST(BinShrinkGpu, RealImagesAndStreaming)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  using Image = itk::Image<unsigned char, 3>;
  const auto brain = ReadImage<Image>(ExampleData("KmeansTest_T1UCharRaw.nii.gz"));
  const auto f = Factors<Image>({ 2, 3, 2 });
  ExpectIdentical(
    OurBinShrink(brain.GetPointer(), f, Mode::GPU).GetPointer(), ItkBinShrink(brain.GetPointer(), f).GetPointer(), "brain");
  auto ours = itk::CudaBinShrinkImageFilter<Image>::New();
  ours->SetInput(brain);
  ours->SetShrinkFactors(f);
  ours->SetExecutionMode(Mode::GPU);
  auto streamer = itk::StreamingImageFilter<Image, Image>::New();
  streamer->SetInput(ours->GetOutput());
  streamer->SetNumberOfStreamDivisions(3);
  streamer->Update();
  ExpectIdentical(streamer->GetOutput(), ItkBinShrink(brain.GetPointer(), f).GetPointer(), "brain, 3 pieces");
}

TEST(BinShrinkGpu, CudaImagesStayOnTheDevice)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  using Plain = itk::Image<float, 3>;
  using OnDevice = itk::CudaFilterImage<float, 3>;
  const auto plain = TestInput<Plain>(MakeSize<Plain>({ 40, 31, 22 }), 12);
  auto       input = OnDevice::New();
  input->CopyInformation(plain);
  input->SetRegions(plain->GetLargestPossibleRegion());
  input->Allocate();
  std::memcpy(input->GetBufferPointer(), plain->GetBufferPointer(), plain->GetBufferedRegion().GetNumberOfPixels() * 4);
  auto first = itk::CudaBinShrinkImageFilter<OnDevice>::New();
  first->SetInput(input);
  first->SetShrinkFactors(Factors<OnDevice>({ 2, 2, 2 }));
  first->SetExecutionMode(Mode::GPU);
  auto second = itk::CudaBinShrinkImageFilter<OnDevice>::New();
  second->SetInput(first->GetOutput());
  second->SetShrinkFactors(Factors<OnDevice>({ 2, 1, 2 }));
  second->SetExecutionMode(Mode::GPU);
  cif::Runtime::ResetTransferCounters();
  second->Update();
  const auto counters = cif::Runtime::GetTransferCounters();
  EXPECT_EQ(counters.HostToDeviceCount, 1u); // the input, once
  EXPECT_EQ(counters.DeviceToHostCount, 0u); // the pyramid stays on the device
  const auto expected = ItkBinShrink(ItkBinShrink(plain.GetPointer(), Factors<Plain>({ 2, 2, 2 })).GetPointer(),
                                     Factors<Plain>({ 2, 1, 2 }));
  const float * p = second->GetOutput()->GetBufferPointer(); // downloads
  EXPECT_EQ(std::memcmp(p, expected->GetBufferPointer(), expected->GetBufferedRegion().GetNumberOfPixels() * 4), 0);
}

} // namespace
