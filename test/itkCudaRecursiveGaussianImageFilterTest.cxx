/*=========================================================================
 *  Tests of CudaRecursiveGaussianImageFilter: a drop-in for
 *  itk::RecursiveGaussianImageFilter, against ITK's own filter on ITK's
 *  example images (BrainProtonDensitySlice in 2D, KmeansTest_T1UCharRaw in
 *  3D): orders 0, 1 and 2 along every axis, NormalizeAcrossScale, a spacing
 *  that is not 1, every pixel type of the cores and the integers into
 *  float, on both devices: within 1e-6 of the range of ITK's output
 *  (integer outputs equal). Fewer than 4 pixels along the direction
 *  throws; the input is not modified (unless ITK's InPlace asks for it).
 *=========================================================================*/
#include "CudaImageFiltersTestUtilities.h"
#include "itkCudaFactorylessTwin.h"
#include "itkCudaRecursiveGaussianImageFilter.h"
#include "itkRecursiveGaussianImageFilter.h"

#include <gtest/gtest.h>
#include <iostream>
#include <string>
#include <type_traits>

namespace
{
using namespace cif_test;
using Mode = itk::CudaExecutionMode;
using Order = itk::RecursiveGaussianImageFilterEnums::GaussianOrder;

template <typename TIn, typename TOut>
using ItkRecursive = itk::CudaFactorylessTwin<itk::RecursiveGaussianImageFilter<TIn, TOut>>;
template <typename TIn, typename TOut>
using OurRecursive = itk::CudaRecursiveGaussianImageFilter<TIn, TOut>;

template <typename TFilter, typename TIn>
typename TFilter::OutputImageType::Pointer
Filtered(TFilter * filter, const TIn * input, double sigma, unsigned int direction, Order order, bool normalize)
{
  filter->SetInput(input);
  filter->SetSigma(sigma);
  filter->SetDirection(direction);
  filter->SetOrder(order);
  filter->SetNormalizeAcrossScale(normalize);
  filter->Update();
  typename TFilter::OutputImageType::Pointer out = filter->GetOutput();
  out->DisconnectPipeline();
  return out;
}

template <typename TIn, typename TOut>
void
ExpectItks(const TIn * input, double sigma, unsigned int direction, Order order, bool normalize, Mode mode)
{
  auto       itkFilter = ItkRecursive<TIn, TOut>::New();
  const auto expected = Filtered(itkFilter.GetPointer(), input, sigma, direction, order, normalize);
  auto       ours = OurRecursive<TIn, TOut>::New();
  ours->SetExecutionMode(mode);
  const auto   got = Filtered(ours.GetPointer(), input, sigma, direction, order, normalize);
  const auto & report = ours->GetLastExecutionReport();
  EXPECT_EQ(report.Device, mode == Mode::GPU ? itk::CudaExecutedOn::GPU : itk::CudaExecutedOn::CPU) << report.Message;
  EXPECT_EQ(report.Message.find("ITK's implementation"), std::string::npos) << report.Message;
  EXPECT_EQ(got->GetLargestPossibleRegion(), expected->GetLargestPossibleRegion());
  const double range = std::max(DynamicRange(expected.GetPointer()), 1.0);
  const double difference = ExpectItkExactOrWithin(
    got.GetPointer(), expected.GetPointer(), range, 1e-6, "order " + std::to_string(static_cast<int>(order)));
  std::cout << TIn::ImageDimension << "D " << itk::CudaPixelTypeName<typename TIn::PixelType>() << " to "
            << itk::CudaPixelTypeName<typename TOut::PixelType>() << " axis " << direction << " order "
            << static_cast<int>(order) << ": largest difference " << difference << " (" << difference / range
            << " of the range)\n";
}

template <typename TPixel, typename TOutPixel = TPixel>
void
Brain2D(Mode mode)
{
  using In = itk::Image<TPixel, 2>;
  using Out = itk::Image<TOutPixel, 2>;
  auto image = AnisotropicBrainSlice<In>();
  for (Order order : { Order::ZeroOrder, Order::FirstOrder, Order::SecondOrder })
  {
    ExpectItks<In, Out>(image.GetPointer(), 2.0, 0, order, false, mode);
    ExpectItks<In, Out>(image.GetPointer(), 3.5, 1, order, true, mode);
  }
}

template <typename TPixel, typename TOutPixel = TPixel>
void
Kmeans3D(Mode mode)
{
  using In = itk::Image<TPixel, 3>;
  using Out = itk::Image<TOutPixel, 3>;
  const auto source = ReadImage<itk::Image<unsigned char, 3>>(ExampleData("KmeansTest_T1UCharRaw.nii.gz"));
  const auto image = CastImage<In>(source.GetPointer());
  ExpectItks<In, Out>(image.GetPointer(), 1.5, 2, Order::ZeroOrder, false, mode);
  ExpectItks<In, Out>(image.GetPointer(), 2.5, 1, Order::FirstOrder, false, mode);
  ExpectItks<In, Out>(image.GetPointer(), 1.2, 0, Order::SecondOrder, true, mode);
}
} // namespace

TEST(RecursiveGaussian, CpuCoreGivesItksAnswer)
{
  Brain2D<unsigned char>(Mode::CPU);
  Brain2D<short>(Mode::CPU);
  Brain2D<float>(Mode::CPU);
  Brain2D<double>(Mode::CPU);
  Brain2D<unsigned char, float>(Mode::CPU);
  Kmeans3D<unsigned short>(Mode::CPU);
  Kmeans3D<float>(Mode::CPU);
  Kmeans3D<short, float>(Mode::CPU);
}

TEST(RecursiveGaussian, BadInputThrowsAndTheInputStaysUnchanged)
{
  using Image = itk::Image<float, 2>;
  auto thin = RandomImage<Image>(MakeSize<Image>({ 40, 3 }), 0.0, 100.0, 7);
  auto filter = OurRecursive<Image, Image>::New();
  filter->SetInput(thin);
  filter->SetDirection(1);
  try
  {
    filter->Update();
    ADD_FAILURE() << "3 pixels along the direction did not throw";
  }
  catch (const itk::ExceptionObject & e)
  {
    EXPECT_NE(std::string(e.GetDescription()).find("4 pixels"), std::string::npos) << e.GetDescription();
  }
  // along x it is fine
  filter->SetDirection(0);
  EXPECT_NO_THROW(filter->Update());
  auto beyond = OurRecursive<Image, Image>::New();
  beyond->SetInput(thin);
  beyond->SetDirection(2);
  EXPECT_THROW(beyond->Update(), itk::ExceptionObject);
  auto       image = RandomImage<Image>(MakeSize<Image>({ 20, 17 }), -50.0, 50.0, 9);
  const auto before = ToVector(image.GetPointer());
  auto       ours = OurRecursive<Image, Image>::New();
  ours->SetInput(image);
  ours->SetSigma(1.5);
  ours->SetFirstOrder();
  ours->Update();
  EXPECT_EQ(ToVector(image.GetPointer()), before);
}

TEST(RecursiveGaussianGpu, GivesItksAnswer)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  Brain2D<unsigned char>(Mode::GPU);
  Brain2D<short>(Mode::GPU);
  Brain2D<float>(Mode::GPU);
  Brain2D<double>(Mode::GPU);
  Brain2D<unsigned char, float>(Mode::GPU);
  Kmeans3D<unsigned short>(Mode::GPU);
  Kmeans3D<float>(Mode::GPU);
  Kmeans3D<short, float>(Mode::GPU);
}
