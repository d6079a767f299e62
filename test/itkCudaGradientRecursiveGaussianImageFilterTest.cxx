/*=========================================================================
 *  Tests of CudaGradientRecursiveGaussianImageFilter: a drop-in for
 *  itk::GradientRecursiveGaussianImageFilter (the v4 metrics' gradient
 *  filter), against ITK's own filter on ITK's example images
 *  (BrainProtonDensitySlice in 2D with a spacing that is not 1 and a
 *  rotated direction, KmeansTest_T1UCharRaw in 3D), isotropic and per-axis
 *  sigmas, NormalizeAcrossScale on and off, image direction on and off, on
 *  both devices: within 1e-6 of the largest gradient component (the
 *  documented tolerance). The factory gives the module's filter, and ITK's
 *  metrics then compute their gradient images with it.
 *=========================================================================*/
#include "CudaImageFiltersTestUtilities.h"
#include "cif/Runtime.h"
#include "itkCudaFactorylessTwin.h"
#include "itkCudaFilterImage.h"
#include "itkCudaSmoothingRecursiveGaussianImageFilter.h"
#include "itkCudaGradientRecursiveGaussianImageFilter.h"
#include "itkCudaImageFiltersFactory.h"
#include "itkGradientRecursiveGaussianImageFilter.h"
#include "itkMeanSquaresImageToImageMetricv4.h"
#include "itkTranslationTransform.h"

#include <gtest/gtest.h>
#include <cmath>
#include <cstring>
#include <iostream>
#include <string>

namespace
{
using namespace cif_test;
using Mode = itk::CudaExecutionMode;

template <typename TImage>
using Gradient = itk::Image<itk::CovariantVector<double, TImage::ImageDimension>, TImage::ImageDimension>;
template <typename TImage>
using ItkGradient = itk::CudaFactorylessTwin<itk::GradientRecursiveGaussianImageFilter<TImage, Gradient<TImage>>>;
template <typename TImage>
using OurGradient = itk::CudaGradientRecursiveGaussianImageFilter<TImage, Gradient<TImage>>;

struct Settings
{
  std::vector<double> sigma;
  bool                normalize{ false };
  bool                direction{ true };
};

template <typename TFilter, typename TImage>
typename Gradient<TImage>::Pointer
Run(TFilter * filter, const TImage * input, const Settings & s)
{
  typename TFilter::SigmaArrayType sigma;
  for (unsigned int a = 0; a < TImage::ImageDimension; ++a)
  {
    sigma[a] = s.sigma[std::min<std::size_t>(a, s.sigma.size() - 1)];
  }
  filter->SetInput(input);
  filter->SetSigmaArray(sigma);
  filter->SetNormalizeAcrossScale(s.normalize);
  filter->SetUseImageDirection(s.direction);
  filter->Update();
  typename Gradient<TImage>::Pointer out = filter->GetOutput();
  out->DisconnectPipeline();
  return out;
}

template <typename TImage>
void
ExpectItksGradient(const TImage * input, const Settings & s, Mode mode)
{
  constexpr unsigned int D = TImage::ImageDimension;
  auto                   itkFilter = ItkGradient<TImage>::New();
  const auto             expected = Run(itkFilter.GetPointer(), input, s);
  auto                   ours = OurGradient<TImage>::New();
  ours->SetExecutionMode(mode);
  const auto   got = Run(ours.GetPointer(), input, s);
  const auto & report = ours->GetLastExecutionReport();
  EXPECT_EQ(report.Device, mode == Mode::GPU ? itk::CudaExecutedOn::GPU : itk::CudaExecutedOn::CPU) << report.Message;
  EXPECT_EQ(report.Message.find("ITK's implementation"), std::string::npos) << report.Message;
  ASSERT_EQ(got->GetBufferedRegion(), expected->GetBufferedRegion());
  EXPECT_EQ(got->GetSpacing(), expected->GetSpacing());
  EXPECT_EQ(got->GetDirection(), expected->GetDirection());
  const auto [largest, difference] = LargestComponentAndDifference(got.GetPointer(), expected.GetPointer());
  ASSERT_GT(largest, 0.0);
  EXPECT_LE(difference, 1e-6 * largest) << "largest component " << largest;
  std::cout << D << "D " << typeid(typename TImage::PixelType).name() << " sigma " << s.sigma[0]
            << (s.sigma.size() > 1 ? " (per axis)" : "") << (s.normalize ? ", normalized" : "")
            << (s.direction ? "" : ", no direction") << ": largest difference " << difference << " ("
            << difference / largest << " of the largest component); " << report.Message << "\n";
}

template <typename TPixel>
void
Brain2D(Mode mode)
{
  using Image = itk::Image<TPixel, 2>;
  auto image = AnisotropicBrainSlice<Image>();
  typename Image::DirectionType direction;
  const double                  angle = 0.3;
  direction[0][0] = std::cos(angle);
  direction[0][1] = -std::sin(angle);
  direction[1][0] = std::sin(angle);
  direction[1][1] = std::cos(angle);
  image->SetDirection(direction);
  ExpectItksGradient(image.GetPointer(), { { 1.5 }, false, true }, mode);
  ExpectItksGradient(image.GetPointer(), { { 1.0, 2.5 }, true, true }, mode);
  ExpectItksGradient(image.GetPointer(), { { 2.0 }, true, false }, mode);
}

template <typename TPixel>
void
Kmeans3D(Mode mode)
{
  using Image = itk::Image<TPixel, 3>;
  const auto source = ReadImage<itk::Image<unsigned char, 3>>(ExampleData("KmeansTest_T1UCharRaw.nii.gz"));
  const auto image = CastImage<Image>(source.GetPointer());
  double     largest = 0;
  for (unsigned int a = 0; a < 3; ++a)
  {
    largest = std::max(largest, image->GetSpacing()[a]);
  }
  // the metrics' setting: sigma the largest spacing, normalized across scale
  ExpectItksGradient(image.GetPointer(), { { largest }, true, true }, mode);
  ExpectItksGradient(image.GetPointer(), { { 1.0, 2.0, 3.0 }, false, true }, mode);
}

} // namespace

TEST(GradientRecursiveGaussian, CpuCoreGivesItksAnswer)
{
  Brain2D<unsigned char>(Mode::CPU);
  Brain2D<float>(Mode::CPU);
  Brain2D<double>(Mode::CPU);
  Kmeans3D<short>(Mode::CPU);
  Kmeans3D<float>(Mode::CPU);
}

TEST(GradientRecursiveGaussianGpu, GivesItksAnswer)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  Brain2D<unsigned char>(Mode::GPU);
  Brain2D<unsigned short>(Mode::GPU);
  Brain2D<float>(Mode::GPU);
  Brain2D<double>(Mode::GPU);
  Kmeans3D<unsigned char>(Mode::GPU);
  Kmeans3D<float>(Mode::GPU);
  Kmeans3D<double>(Mode::GPU);
}

TEST(GradientRecursiveGaussianGpu, DeviceImagesStayOnTheDevice)
{
  // a smoothing then the gradient on itk::CudaFilterImage: one upload, no
  // download until the gradient is read; the same values as the classes on
  // plain itk::Image (the same kernels)
  CIF_REQUIRE_GPU_OR_SKIP();
  using Plain = itk::Image<float, 3>;
  using OnDevice = itk::CudaFilterImage<float, 3>;
  using PlainGradient = itk::Image<itk::CovariantVector<float, 3>, 3>;
  using DeviceGradient = itk::CudaFilterImage<itk::CovariantVector<float, 3>, 3>;
  const auto plain =
    CastImage<Plain>(ReadImage<itk::Image<unsigned char, 3>>(ExampleData("KmeansTest_T1UCharRaw.nii.gz")).GetPointer());
  auto input = OnDevice::New();
  input->CopyInformation(plain);
  input->SetRegions(plain->GetLargestPossibleRegion());
  input->Allocate();
  const std::size_t n = plain->GetBufferedRegion().GetNumberOfPixels();
  std::memcpy(input->GetBufferPointer(), plain->GetBufferPointer(), n * sizeof(float));
  auto smooth = itk::CudaSmoothingRecursiveGaussianImageFilter<OnDevice>::New();
  smooth->SetInput(input);
  smooth->SetSigma(2.0);
  smooth->SetExecutionMode(Mode::GPU);
  auto gradient = itk::CudaGradientRecursiveGaussianImageFilter<OnDevice, DeviceGradient>::New();
  gradient->SetInput(smooth->GetOutput());
  gradient->SetSigma(1.5);
  gradient->SetExecutionMode(Mode::GPU);
  cif::Runtime::ResetTransferCounters();
  gradient->Update();
  const auto counters = cif::Runtime::GetTransferCounters();
  EXPECT_EQ(counters.HostToDeviceCount, 1u); // the input, once
  EXPECT_EQ(counters.DeviceToHostCount, 0u); // the gradient stays on the device
  EXPECT_EQ(gradient->GetLastExecutionReport().Device, itk::CudaExecutedOn::GPU);
  auto plainSmooth = itk::CudaSmoothingRecursiveGaussianImageFilter<Plain>::New();
  plainSmooth->SetInput(plain);
  plainSmooth->SetSigma(2.0);
  plainSmooth->SetExecutionMode(Mode::GPU);
  auto plainGradient = itk::CudaGradientRecursiveGaussianImageFilter<Plain, PlainGradient>::New();
  plainGradient->SetInput(plainSmooth->GetOutput());
  plainGradient->SetSigma(1.5);
  plainGradient->SetExecutionMode(Mode::GPU);
  plainGradient->Update();
  const auto * got = gradient->GetOutput()->GetBufferPointer(); // downloads
  EXPECT_EQ(std::memcmp(got, plainGradient->GetOutput()->GetBufferPointer(), n * 3 * sizeof(float)), 0);
}

TEST(GradientRecursiveGaussian, BadInputThrowsAndOtherTypesRunItksFilter)
{
  using Image = itk::Image<float, 2>;
  auto thin = RandomImage<Image>(MakeSize<Image>({ 40, 3 }), 0.0, 100.0, 7);
  auto filter = OurGradient<Image>::New();
  filter->SetInput(thin);
  try
  {
    filter->Update();
    ADD_FAILURE() << "a 40 x 3 image did not throw";
  }
  catch (const itk::ExceptionObject & e)
  {
    EXPECT_NE(std::string(e.GetDescription()).find("4 pixels"), std::string::npos) << e.GetDescription();
  }
  auto empty = Image::New();
  empty->SetRegions(MakeSize<Image>({ 0, 0 }));
  empty->Allocate();
  auto none = OurGradient<Image>::New();
  none->SetInput(empty);
  EXPECT_THROW(none->Update(), itk::ExceptionObject);
  // an int input: ITK's own filter, and the report says so
  using IntImage = itk::Image<int, 2>;
  auto ints = RandomImage<IntImage>(MakeSize<IntImage>({ 30, 20 }), 0.0, 100.0, 9);
  auto other = itk::CudaGradientRecursiveGaussianImageFilter<IntImage>::New();
  other->SetInput(ints);
  other->Update();
  EXPECT_NE(other->GetLastExecutionReport().Message.find("ITK's implementation"), std::string::npos)
    << other->GetLastExecutionReport().Message;
}

TEST(GradientRecursiveGaussian, TheMetricsComputeTheirGradientsWithItThroughTheFactory)
{
  itk::CudaImageFiltersFactory::RegisterOneFactory();
  using Image = itk::Image<float, 3>;
  auto filter = itk::GradientRecursiveGaussianImageFilter<Image, Gradient<Image>>::New();
  EXPECT_NE(dynamic_cast<OurGradient<Image> *>(filter.GetPointer()), nullptr) << filter->GetNameOfClass();
  // ITK's own metric (its factory override aside): its default gradient filter is the module's
  using Metric = itk::CudaFactorylessTwin<itk::MeanSquaresImageToImageMetricv4<Image, Image>>;
  auto       metric = Metric::New();
  const auto volume = CastImage<Image>(ReadImage<itk::Image<unsigned char, 3>>(ExampleData("KmeansTest_T1UCharRaw.nii.gz")).GetPointer());
  metric->SetFixedImage(volume);
  metric->SetMovingImage(volume);
  metric->SetMovingTransform(itk::TranslationTransform<double, 3>::New());
  metric->Initialize();
  const auto * used = dynamic_cast<const OurGradient<Image> *>(metric->GetMovingImageGradientFilter());
  ASSERT_NE(used, nullptr) << metric->GetMovingImageGradientFilter()->GetNameOfClass();
  std::cout << "the metric's moving gradient filter: " << used->GetNameOfClass() << "; "
            << used->GetLastExecutionReport().Message << "\n";
}
