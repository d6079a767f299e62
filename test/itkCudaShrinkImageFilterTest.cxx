/*=========================================================================
 *  Tests of CudaShrinkImageFilter: a drop-in for itk::ShrinkImageFilter
 *  (the virtual domain ImageRegistrationMethodv4 shrinks per level). Each
 *  output pixel is a copy, so the result must be ITK's bit for bit, with
 *  ITK's grid: sizes the factors do not divide (the centred offset's two
 *  roundings), factors past the image, start indices, a rotated
 *  direction, streaming, on ITK's example images and on both devices.
 *=========================================================================*/
#include "CudaImageFiltersTestUtilities.h"
#include "cif/Shrink.h"
#include "itkCudaFactorylessTwin.h"
#include "itkCudaImageFiltersFactory.h"
#include "itkCudaShrinkImageFilter.h"
#include "itkShrinkImageFilter.h"
#include "itkStreamingImageFilter.h"
#include "itkVector.h"

#include <gtest/gtest.h>
#include <cmath>
#include <cstring>
#include <sstream>
#include <string>

namespace
{
using namespace cif_test;
using Mode = itk::CudaExecutionMode;

template <typename TImage>
using ItkShrink = itk::CudaFactorylessTwin<itk::ShrinkImageFilter<TImage, TImage>>;
template <typename TImage>
using OurShrink = itk::CudaShrinkImageFilter<TImage, TImage>;
template <typename TImage>
using Factors = typename itk::ShrinkImageFilter<TImage, TImage>::ShrinkFactorsType;

template <typename TImage>
Factors<TImage>
FactorsOf(std::initializer_list<unsigned int> values)
{
  Factors<TImage> f;
  auto            it = values.begin();
  for (unsigned int d = 0; d < TImage::ImageDimension; ++d, ++it)
  {
    f[d] = *it;
  }
  return f;
}

/** `filter` run on `input` with factors `f` (streamed in `pieces`). */
template <typename TFilter, typename TImage>
typename TImage::Pointer
Shrunk(TFilter * filter, const TImage * input, const Factors<TImage> & f, unsigned int pieces = 1)
{
  filter->SetInput(input);
  filter->SetShrinkFactors(f);
  auto streamer = itk::StreamingImageFilter<TImage, TImage>::New();
  streamer->SetInput(filter->GetOutput());
  streamer->SetNumberOfStreamDivisions(pieces);
  streamer->Update();
  typename TImage::Pointer out = streamer->GetOutput();
  out->DisconnectPipeline();
  return out;
}

/** Ours in `mode` against ITK's: the same grid and the same bytes. */
template <typename TImage>
void
ExpectItksShrink(const TImage * input, const Factors<TImage> & f, Mode mode, unsigned int pieces = 1)
{
  std::ostringstream what;
  what << TImage::ImageDimension << "D " << input->GetLargestPossibleRegion() << " by " << f << " in " << pieces
       << " pieces";
  auto                     itkFilter = ItkShrink<TImage>::New();
  typename TImage::Pointer expected, got;
  try
  {
    expected = Shrunk(itkFilter.GetPointer(), input, f);
  }
  catch (const itk::ExceptionObject & e)
  {
    FAIL() << "ITK's filter threw on " << what.str() << ": " << e.GetDescription();
  }
  auto ours = OurShrink<TImage>::New();
  ours->SetExecutionMode(mode);
  try
  {
    got = Shrunk(ours.GetPointer(), input, f, pieces);
  }
  catch (const itk::ExceptionObject & e)
  {
    FAIL() << "ours threw on " << what.str() << ": " << e.GetDescription();
  }
  const auto & report = ours->GetLastExecutionReport();
  EXPECT_EQ(report.Device, mode == Mode::GPU ? itk::CudaExecutedOn::GPU : itk::CudaExecutedOn::CPU)
    << what.str() << ": " << report.Message;
  EXPECT_EQ(report.Message.find("ITK's implementation"), std::string::npos) << report.Message;
  ASSERT_EQ(got->GetLargestPossibleRegion(), expected->GetLargestPossibleRegion()) << what.str();
  EXPECT_EQ(got->GetSpacing(), expected->GetSpacing()) << what.str();
  EXPECT_EQ(got->GetOrigin(), expected->GetOrigin()) << what.str();
  EXPECT_EQ(got->GetDirection(), expected->GetDirection()) << what.str();
  const std::size_t n = expected->GetBufferedRegion().GetNumberOfPixels();
  ASSERT_EQ(got->GetBufferedRegion().GetNumberOfPixels(), n) << what.str();
  EXPECT_EQ(std::memcmp(got->GetBufferPointer(), expected->GetBufferPointer(), n * sizeof(typename TImage::PixelType)), 0)
    << what.str() << ": largest difference " << MaxAbsDifference(got.GetPointer(), expected.GetPointer());
}

/** Random pixels on a grid with a spacing, an origin, a rotated direction
 * and a start index that the factors do not divide. */
template <typename TImage>
typename TImage::Pointer
Input(std::initializer_list<unsigned int> size, unsigned seed, bool startIndex)
{
  typename TImage::SizeType s;
  auto                      it = size.begin();
  for (unsigned int d = 0; d < TImage::ImageDimension; ++d, ++it)
  {
    s[d] = *it;
  }
  auto image = RandomImage<TImage>(s, 0.0, 200.0, seed);
  typename TImage::SpacingType   spacing;
  typename TImage::PointType     origin;
  typename TImage::DirectionType direction;
  direction.SetIdentity();
  typename TImage::RegionType region = image->GetLargestPossibleRegion();
  for (unsigned int d = 0; d < TImage::ImageDimension; ++d)
  {
    spacing[d] = 0.6 + 0.35 * d;
    origin[d] = -7.25 + 2.5 * d;
    region.SetIndex(d, startIndex ? static_cast<itk::IndexValueType>(3 * d + 5) - 4 : 0);
  }
  if (TImage::ImageDimension >= 2)
  {
    direction[0][0] = direction[1][1] = std::cos(0.4);
    direction[0][1] = -std::sin(0.4);
    direction[1][0] = std::sin(0.4);
  }
  image->SetRegions(region);
  image->SetSpacing(spacing);
  image->SetOrigin(origin);
  image->SetDirection(direction);
  return image;
}

template <typename TPixel>
void
EveryCase(Mode mode)
{
  using I2 = itk::Image<TPixel, 2>;
  using I3 = itk::Image<TPixel, 3>;
  for (bool start : { false, true })
  {
    const auto a = Input<I2>({ 37, 23 }, 3, start);
    ExpectItksShrink(a.GetPointer(), FactorsOf<I2>({ 2, 3 }), mode);
    ExpectItksShrink(a.GetPointer(), FactorsOf<I2>({ 4, 4 }), mode);
    ExpectItksShrink(a.GetPointer(), FactorsOf<I2>({ 1, 5 }), mode, 3);
    if (!start)
    {
      ExpectItksShrink(a.GetPointer(), FactorsOf<I2>({ 40, 2 }), mode); // past the image: one pixel, its centre
    }
    else
    {
      // ITK's own grid asks for input past the image here (start index 1 times 40): both throw
      auto itkFilter = ItkShrink<I2>::New();
      EXPECT_THROW(Shrunk(itkFilter.GetPointer(), a.GetPointer(), FactorsOf<I2>({ 40, 2 })), itk::ExceptionObject);
      auto ours = OurShrink<I2>::New();
      ours->SetExecutionMode(mode);
      EXPECT_THROW(Shrunk(ours.GetPointer(), a.GetPointer(), FactorsOf<I2>({ 40, 2 })), itk::ExceptionObject);
    }
    const auto b = Input<I3>({ 19, 14, 11 }, 4, start);
    ExpectItksShrink(b.GetPointer(), FactorsOf<I3>({ 2, 2, 2 }), mode);
    ExpectItksShrink(b.GetPointer(), FactorsOf<I3>({ 3, 1, 4 }), mode, 2);
    ExpectItksShrink(b.GetPointer(), FactorsOf<I3>({ 5, 3, 2 }), mode);
  }
}

/** ITK's example images at the shrink factors of a registration pyramid. */
void
RealImages(Mode mode)
{
  using B3 = itk::Image<unsigned char, 3>;
  const auto brain = ReadImage<B3>(ExampleData("KmeansTest_T1UCharRaw.nii.gz"));
  for (unsigned int f : { 2u, 3u, 4u })
  {
    ExpectItksShrink(brain.GetPointer(), FactorsOf<B3>({ f, f, f }), mode);
  }
  ExpectItksShrink(brain.GetPointer(), FactorsOf<B3>({ 4, 2, 1 }), mode, 5);
  using F2 = itk::Image<float, 2>;
  const auto slice = ReadImage<F2>(ExampleData("BrainProtonDensitySlice.png"));
  ExpectItksShrink(slice.GetPointer(), FactorsOf<F2>({ 3, 2 }), mode);
  ExpectItksShrink(slice.GetPointer(), FactorsOf<F2>({ 4, 4 }), mode);
}

} // namespace

TEST(Shrink, CpuCoreIsItksForEveryPixelType)
{
  EveryCase<unsigned char>(Mode::CPU);
  EveryCase<short>(Mode::CPU);
  EveryCase<unsigned short>(Mode::CPU);
  EveryCase<float>(Mode::CPU);
  EveryCase<double>(Mode::CPU);
  using F1 = itk::Image<float, 1>;
  ExpectItksShrink(Input<F1>({ 61 }, 5, true).GetPointer(), FactorsOf<F1>({ 4 }), Mode::CPU);
}

TEST(Shrink, CpuCoreOnRealImages)
{
  RealImages(Mode::CPU);
}

TEST(Shrink, OtherPixelTypesRunItksImplementationAndSaySo)
{
  using Image = itk::Image<itk::Vector<float, 2>, 2>;
  auto input = Image::New();
  input->SetRegions(MakeSize<Image>({ 9, 7 }));
  input->Allocate();
  for (itk::IndexValueType j = 0; j < 7; ++j)
  {
    for (itk::IndexValueType i = 0; i < 9; ++i)
    {
      itk::Vector<float, 2> v;
      v[0] = static_cast<float>(i);
      v[1] = static_cast<float>(j);
      input->SetPixel({ { i, j } }, v);
    }
  }
  auto filter = OurShrink<Image>::New();
  filter->SetInput(input);
  filter->SetShrinkFactors(FactorsOf<Image>({ 2, 3 }));
  filter->Update();
  EXPECT_EQ(filter->GetLastExecutedOn(), itk::CudaExecutedOn::CPU);
  EXPECT_NE(filter->GetLastExecutionReport().Message.find("ITK's implementation"), std::string::npos)
    << filter->GetLastExecutionReport().Message;
  // centred: 9 / 2 = 4 pixels from x = (9 - 2 * 3) / 2 = 1, 7 / 3 = 2 rows from y = (7 - 3) / 2 = 2
  EXPECT_EQ(filter->GetOutput()->GetPixel({ { 0, 0 } })[0], 1.0f);
  EXPECT_EQ(filter->GetOutput()->GetPixel({ { 3, 0 } })[0], 7.0f);
  EXPECT_EQ(filter->GetOutput()->GetPixel({ { 1, 1 } })[1], 5.0f);
  filter->SetExecutionMode(Mode::GPU);
  EXPECT_THROW(filter->Update(), itk::ExceptionObject);
}

TEST(Shrink, EmptyImagesThrowAndInputsStayUnchanged)
{
  using Image = itk::Image<float, 2>;
  auto empty = Image::New();
  empty->SetRegions(MakeSize<Image>({ 0, 4 }));
  empty->Allocate();
  auto filter = OurShrink<Image>::New();
  filter->SetInput(empty);
  filter->SetShrinkFactors(2u);
  EXPECT_THROW(filter->Update(), itk::ExceptionObject);
  auto       image = RandomImage<Image>(MakeSize<Image>({ 20, 17 }), -50.0, 50.0, 9);
  const auto before = ToVector(image.GetPointer());
  auto       ours = OurShrink<Image>::New();
  ours->SetInput(image);
  ours->SetShrinkFactors(3u);
  ours->Update();
  EXPECT_EQ(ToVector(image.GetPointer()), before);
}

TEST(Shrink, IsADropInAndTheFactoryGivesIt)
{
  using Image = itk::Image<float, 3>;
  auto                                    ours = OurShrink<Image>::New();
  itk::ShrinkImageFilter<Image, Image> *  asItk = ours.GetPointer();
  ExpectExecutionModeIsAnItkSetting(ours.GetPointer());
  asItk->SetShrinkFactor(1, 3);
  EXPECT_EQ(ours->GetShrinkFactors()[1], 3u);
  EXPECT_STREQ(ours->GetNameOfClass(), "CudaShrinkImageFilter");
  itk::CudaImageFiltersFactory::RegisterOneFactory();
  auto made = itk::ShrinkImageFilter<Image, Image>::New();
  EXPECT_NE(dynamic_cast<OurShrink<Image> *>(made.GetPointer()), nullptr) << made->GetNameOfClass();
}

TEST(ShrinkGpu, AutomaticModeKeepsHostImagesOnTheCpuAndSaysWhy)
{
  // (without a device, the missing device is the reason given)
  CIF_REQUIRE_GPU_OR_SKIP();
  using Image = itk::Image<float, 3>;
  const auto input = Input<Image>({ 30, 20, 10 }, 6, false);
  auto       ours = OurShrink<Image>::New();
  ours->SetInput(input);
  ours->SetShrinkFactors(2u);
  ours->Update();
  EXPECT_EQ(ours->GetLastExecutedOn(), itk::CudaExecutedOn::CPU);
  EXPECT_NE(ours->GetLastExecutionReport().Message.find("faster for host images"), std::string::npos)
    << ours->GetLastExecutionReport().Message;
}

TEST(Shrink, TheDescriptionsFirstIndexIsItksCentring)
{
  // (n - 1) / 2 - f (m - 1) / 2 rounded half up, for every n and f up to 12
  for (std::int64_t n = 1; n <= 12; ++n)
  {
    for (std::int64_t f = 1; f <= 12; ++f)
    {
      const std::int64_t m = std::max<std::int64_t>(1, n / f);
      const double       centred = (n - 1) / 2.0 - f * (m - 1) / 2.0;
      EXPECT_EQ(cif::ShrinkFirstIndex(n, f), static_cast<std::int64_t>(std::floor(centred + 0.5))) << n << " / " << f;
    }
  }
}

TEST(ShrinkGpu, GivesItksAnswerForEveryPixelType)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  EveryCase<unsigned char>(Mode::GPU);
  EveryCase<short>(Mode::GPU);
  EveryCase<unsigned short>(Mode::GPU);
  EveryCase<float>(Mode::GPU);
  EveryCase<double>(Mode::GPU);
}

TEST(ShrinkGpu, RealImages)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  RealImages(Mode::GPU);
}
