/*=========================================================================
 *  Tests of CudaSmoothingRecursiveGaussianImageFilter: a drop-in for
 *  itk::SmoothingRecursiveGaussianImageFilter, against ITK's own filter on
 *  ITK's example images (BrainProtonDensitySlice in 2D, KmeansTest_T1UCharRaw
 *  in 3D) for every pixel type of the cores, sigmas per axis in physical
 *  units with a spacing that is not 1, on both devices: within 1e-6 of the
 *  range of ITK's output (the filter's documented tolerance; integer
 *  outputs equal). Bad input throws before any work; the factory gives
 *  the module's class.
 *=========================================================================*/
#include "CudaImageFiltersTestUtilities.h"
#include "itkCudaFactorylessTwin.h"
#include "itkCudaImageFiltersFactory.h"
#include "itkCudaSmoothingRecursiveGaussianImageFilter.h"
#include "itkSmoothingRecursiveGaussianImageFilter.h"

#include <gtest/gtest.h>
#include <cmath>
#include <iostream>
#include <string>
#include <type_traits>

namespace
{
using namespace cif_test;
using Mode = itk::CudaExecutionMode;

template <typename TImage>
using ItkSmoothing = itk::CudaFactorylessTwin<itk::SmoothingRecursiveGaussianImageFilter<TImage, TImage>>;
template <typename TImage>
using OurSmoothing = itk::CudaSmoothingRecursiveGaussianImageFilter<TImage, TImage>;

template <typename TFilter, typename TImage>
typename TImage::Pointer
Smooth(TFilter * filter, const TImage * input, const typename TFilter::SigmaArrayType & sigma, bool normalize)
{
  filter->SetInput(input);
  filter->SetSigmaArray(sigma);
  filter->SetNormalizeAcrossScale(normalize);
  filter->Update();
  typename TImage::Pointer out = filter->GetOutput();
  out->DisconnectPipeline();
  return out;
}

/** Ours (in `mode`) against ITK's on `input`. */
template <typename TImage>
void
ExpectItksSmoothing(const TImage * input, std::initializer_list<double> sigmas, bool normalize, Mode mode)
{
  typename OurSmoothing<TImage>::SigmaArrayType sigma;
  auto                                          it = sigmas.begin();
  for (unsigned int a = 0; a < TImage::ImageDimension; ++a)
  {
    sigma[a] = *it;
    if (it + 1 != sigmas.end())
    {
      ++it;
    }
  }
  auto       itkFilter = ItkSmoothing<TImage>::New();
  const auto expected = Smooth(itkFilter.GetPointer(), input, sigma, normalize);
  auto       ours = OurSmoothing<TImage>::New();
  ours->SetExecutionMode(mode);
  const auto got = Smooth(ours.GetPointer(), input, sigma, normalize);
  const auto & report = ours->GetLastExecutionReport();
  EXPECT_EQ(report.Device, mode == Mode::GPU ? itk::CudaExecutedOn::GPU : itk::CudaExecutedOn::CPU) << report.Message;
  EXPECT_EQ(report.Message.find("ITK's implementation"), std::string::npos) << report.Message;
  ASSERT_EQ(got->GetLargestPossibleRegion(), expected->GetLargestPossibleRegion());
  EXPECT_EQ(got->GetSpacing(), expected->GetSpacing());
  EXPECT_EQ(got->GetOrigin(), expected->GetOrigin());
  const double range = DynamicRange(expected.GetPointer());
  ASSERT_GT(range, 0.0);
  using Pixel = typename TImage::PixelType;
  const double difference = ExpectItkExactOrWithin(got.GetPointer(), expected.GetPointer(), range, 1e-6);
  // the smoothing changed the image (a core that copied would fail)
  EXPECT_GT(MaxAbsDifference(got.GetPointer(), CastImage<TImage>(input).GetPointer()), 1e-3 * range);
  std::cout << TImage::ImageDimension << "D " << typeid(Pixel).name() << " sigma " << sigma << ": largest difference "
            << difference << " (" << difference / range << " of the range); " << report.Message << "\n";
}

template <typename TPixel>
void
Brain2D(Mode mode)
{
  using Image = itk::Image<TPixel, 2>;
  // physical units: a spacing that is not 1
  const auto image = AnisotropicBrainSlice<Image>();
  ExpectItksSmoothing(image.GetPointer(), { 2.0 }, false, mode);
  ExpectItksSmoothing(image.GetPointer(), { 1.2, 4.5 }, true, mode);
  ExpectItksSmoothing(image.GetPointer(), { 0.3 }, false, mode);
}

template <typename TPixel>
void
Kmeans3D(Mode mode)
{
  using Image = itk::Image<TPixel, 3>;
  using Source = itk::Image<unsigned char, 3>;
  const auto source = ReadImage<Source>(ExampleData("KmeansTest_T1UCharRaw.nii.gz"));
  const auto image = CastImage<Image>(source.GetPointer());
  ExpectItksSmoothing(image.GetPointer(), { 2.5 }, false, mode);
  ExpectItksSmoothing(image.GetPointer(), { 1.0, 2.0, 3.5 }, false, mode);
}

} // namespace

TEST(SmoothingRecursiveGaussian, CpuCoreGivesItksAnswerIn2D)
{
  Brain2D<unsigned char>(Mode::CPU);
  Brain2D<short>(Mode::CPU);
  Brain2D<unsigned short>(Mode::CPU);
  Brain2D<float>(Mode::CPU);
  Brain2D<double>(Mode::CPU);
}

TEST(SmoothingRecursiveGaussian, CpuCoreGivesItksAnswerIn3D)
{
  Kmeans3D<unsigned char>(Mode::CPU);
  Kmeans3D<float>(Mode::CPU);
  Kmeans3D<double>(Mode::CPU);
}

TEST(SmoothingRecursiveGaussianGpu, GivesItksAnswerIn2D)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  Brain2D<unsigned char>(Mode::GPU);
  Brain2D<short>(Mode::GPU);
  Brain2D<unsigned short>(Mode::GPU);
  Brain2D<float>(Mode::GPU);
  Brain2D<double>(Mode::GPU);
}

TEST(SmoothingRecursiveGaussianGpu, GivesItksAnswerIn3D)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  Kmeans3D<unsigned char>(Mode::GPU);
  Kmeans3D<short>(Mode::GPU);
  Kmeans3D<float>(Mode::GPU);
  Kmeans3D<double>(Mode::GPU);
}

TEST(SmoothingRecursiveGaussian, BadInputThrowsBeforeAnyWork)
{
  using Image = itk::Image<float, 2>;
  // fewer than 4 pixels along an axis: ITK's requirement, a clear exception
  auto thin = RandomImage<Image>(MakeSize<Image>({ 40, 3 }), 0.0, 100.0, 7);
  auto filter = OurSmoothing<Image>::New();
  filter->SetInput(thin);
  filter->SetSigma(2.0);
  try
  {
    filter->Update();
    ADD_FAILURE() << "a 40 x 3 image did not throw";
  }
  catch (const itk::ExceptionObject & e)
  {
    EXPECT_NE(std::string(e.GetDescription()).find("4 pixels"), std::string::npos) << e.GetDescription();
  }
  // sigma 0
  auto image = RandomImage<Image>(MakeSize<Image>({ 40, 30 }), 0.0, 100.0, 8);
  auto zero = OurSmoothing<Image>::New();
  zero->SetInput(image);
  zero->SetSigma(0.0);
  EXPECT_THROW(zero->Update(), itk::ExceptionObject);
  // an empty image
  auto empty = Image::New();
  empty->SetRegions(MakeSize<Image>({ 0, 0 }));
  empty->Allocate();
  auto none = OurSmoothing<Image>::New();
  none->SetInput(empty);
  EXPECT_THROW(none->Update(), itk::ExceptionObject);
}

TEST(SmoothingRecursiveGaussian, InputIsNotModified)
{
  using Image = itk::Image<float, 3>;
  auto       image = RandomImage<Image>(MakeSize<Image>({ 20, 17, 9 }), -50.0, 50.0, 9);
  const auto before = ToVector(image.GetPointer());
  auto       filter = OurSmoothing<Image>::New();
  filter->SetInput(image);
  filter->SetSigma(1.5);
  filter->Update();
  EXPECT_EQ(ToVector(image.GetPointer()), before);
}

TEST(SmoothingRecursiveGaussian, FactoryGivesTheModulesFilter)
{
  itk::CudaImageFiltersFactory::RegisterOneFactory();
  using Image = itk::Image<float, 3>;
  auto filter = itk::SmoothingRecursiveGaussianImageFilter<Image, Image>::New();
  EXPECT_NE(dynamic_cast<OurSmoothing<Image> *>(filter.GetPointer()), nullptr) << filter->GetNameOfClass();
}
