/*=========================================================================
 *  Tests of CudaDiscreteGaussianImageFilter: a drop-in for
 *  itk::DiscreteGaussianImageFilter. The kernel must be ITK's
 *  GaussianOperator's coefficient for coefficient (bit for bit); the
 *  filter must give ITK's result on ITK's example images
 *  (BrainProtonDensitySlice in 2D, KmeansTest_T1UCharRaw in 3D) for every
 *  pixel type and the integers into float, variances per axis in physical
 *  units and in pixels, fewer filtered axes, truncated kernels, streamed
 *  and in slabs, on both devices: within 1e-6 of the range of ITK's output
 *  (integer outputs equal). Bad input throws; other boundary conditions run
 *  ITK's filter; the factory gives the module's class.
 *=========================================================================*/
#include "CudaImageFiltersTestUtilities.h"
#include "cif/DiscreteGaussian.h"
#include "cif/Runtime.h"
#include "itkCudaDiscreteGaussianImageFilter.h"
#include "itkCudaFactorylessTwin.h"
#include "itkCudaImageFiltersFactory.h"
#include "itkDiscreteGaussianImageFilter.h"
#include "itkGaussianOperator.h"
#include "itkPeriodicBoundaryCondition.h"
#include "itkStreamingImageFilter.h"

#include <gtest/gtest.h>
#include <iostream>
#include <string>
#include <type_traits>

namespace
{
using namespace cif_test;
using Mode = itk::CudaExecutionMode;

template <typename TIn, typename TOut>
using ItkGaussian = itk::CudaFactorylessTwin<itk::DiscreteGaussianImageFilter<TIn, TOut>>;
template <typename TIn, typename TOut>
using OurGaussian = itk::CudaDiscreteGaussianImageFilter<TIn, TOut>;

/** A filter's settings. */
struct Settings
{
  std::vector<double> variance{ 2.0 };
  double              maximumError{ 0.01 };
  int                 maximumKernelWidth{ 32 };
  bool                useImageSpacing{ true };
  unsigned int        filterDimensionality{ 3 };
  unsigned int        pieces{ 1 };
};

template <typename TFilter, typename TIn>
typename TFilter::OutputImageType::Pointer
Smooth(TFilter * filter, const TIn * input, const Settings & s)
{
  using TOut = typename TFilter::OutputImageType;
  typename TFilter::ArrayType variance, error;
  for (unsigned int a = 0; a < TIn::ImageDimension; ++a)
  {
    variance[a] = s.variance[std::min<std::size_t>(a, s.variance.size() - 1)];
    error[a] = s.maximumError;
  }
  filter->SetInput(input);
  filter->SetVariance(variance);
  filter->SetMaximumError(error);
  filter->SetMaximumKernelWidth(s.maximumKernelWidth);
  filter->SetUseImageSpacing(s.useImageSpacing);
  filter->SetFilterDimensionality(s.filterDimensionality);
  auto streamer = itk::StreamingImageFilter<TOut, TOut>::New();
  streamer->SetInput(filter->GetOutput());
  streamer->SetNumberOfStreamDivisions(s.pieces);
  streamer->Update();
  typename TOut::Pointer out = streamer->GetOutput();
  out->DisconnectPipeline();
  return out;
}

/** Ours (in `mode`) against ITK's on `input`; returns our report. */
template <typename TIn, typename TOut>
std::string
ExpectItksGaussian(const TIn * input, const Settings & s, Mode mode)
{
  auto       itkFilter = ItkGaussian<TIn, TOut>::New();
  const auto expected = Smooth(itkFilter.GetPointer(), input, Settings{ s.variance, s.maximumError, s.maximumKernelWidth,
                                                                        s.useImageSpacing, s.filterDimensionality, 1 });
  auto       ours = OurGaussian<TIn, TOut>::New();
  ours->SetExecutionMode(mode);
  const auto   got = Smooth(ours.GetPointer(), input, s);
  const auto & report = ours->GetLastExecutionReport();
  EXPECT_EQ(report.Device, mode == Mode::GPU ? itk::CudaExecutedOn::GPU : itk::CudaExecutedOn::CPU) << report.Message;
  EXPECT_EQ(report.Message.find("ITK's implementation"), std::string::npos) << report.Message;
  EXPECT_EQ(got->GetLargestPossibleRegion(), expected->GetLargestPossibleRegion());
  EXPECT_EQ(got->GetSpacing(), expected->GetSpacing());
  EXPECT_EQ(got->GetOrigin(), expected->GetOrigin());
  const double range = DynamicRange(expected.GetPointer());
  EXPECT_GT(range, 0.0);
  const double difference = ExpectItkExactOrWithin(got.GetPointer(), expected.GetPointer(), range, 1e-6);
  // the smoothing changed the image (a core that copied would fail)
  EXPECT_GT(MaxAbsDifference(got.GetPointer(), CastImage<TOut>(input).GetPointer()), 1e-3 * range);
  std::cout << TIn::ImageDimension << "D " << itk::CudaPixelTypeName<typename TIn::PixelType>() << " to "
            << itk::CudaPixelTypeName<typename TOut::PixelType>() << " variance " << s.variance[0] << ", "
            << s.pieces << " pieces: largest difference " << difference << " (" << difference / range
            << " of the range); " << report.Message << "\n";
  return report.Message;
}

template <typename TPixel, typename TOutPixel = TPixel>
void
Brain2D(Mode mode)
{
  using In = itk::Image<TPixel, 2>;
  using Out = itk::Image<TOutPixel, 2>;
  auto image = AnisotropicBrainSlice<In>();
  ExpectItksGaussian<In, Out>(image.GetPointer(), Settings{ { 4.0 } }, mode);
  ExpectItksGaussian<In, Out>(image.GetPointer(), Settings{ { 1.5, 9.0 }, 0.001, 32, true, 2, 3 }, mode);
  ExpectItksGaussian<In, Out>(image.GetPointer(), Settings{ { 2.0 }, 0.05, 32, false }, mode);
  // a kernel ITK truncates (its warning) and one axis filtered
  ExpectItksGaussian<In, Out>(image.GetPointer(), Settings{ { 25.0 }, 0.01, 4, true, 1 }, mode);
}

template <typename TPixel, typename TOutPixel = TPixel>
void
Kmeans3D(Mode mode)
{
  using In = itk::Image<TPixel, 3>;
  using Out = itk::Image<TOutPixel, 3>;
  const auto source = ReadImage<itk::Image<unsigned char, 3>>(ExampleData("KmeansTest_T1UCharRaw.nii.gz"));
  const auto image = CastImage<In>(source.GetPointer());
  ExpectItksGaussian<In, Out>(image.GetPointer(), Settings{ { 3.0 } }, mode);
  ExpectItksGaussian<In, Out>(image.GetPointer(), Settings{ { 1.0, 4.0, 0.5 }, 0.01, 32, true, 3, 4 }, mode);
  // two of three axes
  ExpectItksGaussian<In, Out>(image.GetPointer(), Settings{ { 2.0 }, 0.01, 32, true, 2 }, mode);
}

} // namespace

TEST(DiscreteGaussian, TheKernelIsItksGaussianOperator)
{
  for (double variance : { 0.0, 0.04, 0.3, 1.0, 2.5, 3.75, 4.0, 10.0, 14.0625, 30.0, 100.0 })
  {
    for (double error : { 0.1, 0.01, 0.001, 1e-6 })
    {
      for (unsigned int width : { 32u, 5u, 300u })
      {
        itk::GaussianOperator<double, 1> op;
        op.SetVariance(variance);
        op.SetMaximumError(error);
        op.SetMaximumKernelWidth(width);
        op.CreateDirectional();
        const std::vector<double> ours = cif::GaussianOperatorCoefficients(variance, error, width);
        ASSERT_EQ(ours.size(), op.Size()) << variance << " " << error << " " << width;
        for (std::size_t k = 0; k < ours.size(); ++k)
        {
          EXPECT_EQ(ours[k], op[k]) << "variance " << variance << " error " << error << " tap " << k;
        }
      }
    }
  }
  EXPECT_THROW(cif::GaussianOperatorCoefficients(-1.0, 0.01, 32), std::invalid_argument);
  EXPECT_THROW(cif::GaussianOperatorCoefficients(1.0, 1.0, 32), std::invalid_argument);
  bool truncated = false;
  cif::GaussianOperatorCoefficients(50.0, 0.01, 4, &truncated);
  EXPECT_TRUE(truncated);
}

TEST(DiscreteGaussian, CpuCoreGivesItksAnswerIn2D)
{
  Brain2D<unsigned char>(Mode::CPU);
  Brain2D<short>(Mode::CPU);
  Brain2D<unsigned short>(Mode::CPU);
  Brain2D<float>(Mode::CPU);
  Brain2D<double>(Mode::CPU);
  Brain2D<unsigned char, float>(Mode::CPU);
}

TEST(DiscreteGaussian, CpuCoreGivesItksAnswerIn3D)
{
  Kmeans3D<unsigned char>(Mode::CPU);
  Kmeans3D<short, float>(Mode::CPU);
  Kmeans3D<float>(Mode::CPU);
  Kmeans3D<double>(Mode::CPU);
}

TEST(DiscreteGaussian, BadInputThrowsAndOtherBoundariesRunItks)
{
  using Image = itk::Image<float, 2>;
  auto image = RandomImage<Image>(MakeSize<Image>({ 40, 30 }), 0.0, 100.0, 8);
  auto bad = OurGaussian<Image, Image>::New();
  bad->SetInput(image);
  bad->SetVariance(2.0);
  bad->SetMaximumError(1.0);
  EXPECT_THROW(bad->Update(), itk::ExceptionObject);
  auto negative = OurGaussian<Image, Image>::New();
  negative->SetInput(image);
  negative->SetVariance(-1.0);
  EXPECT_THROW(negative->Update(), itk::ExceptionObject);
  auto empty = Image::New();
  empty->SetRegions(MakeSize<Image>({ 0, 0 }));
  empty->Allocate();
  auto none = OurGaussian<Image, Image>::New();
  none->SetInput(empty);
  none->SetVariance(1.0);
  EXPECT_THROW(none->Update(), itk::ExceptionObject);
  // a periodic boundary: ITK's filter runs, and the report says why
  itk::PeriodicBoundaryCondition<Image> periodic;
  auto                                  wrapped = OurGaussian<Image, Image>::New();
  wrapped->SetInput(image);
  wrapped->SetVariance(3.0);
  wrapped->SetInputBoundaryCondition(&periodic);
  wrapped->Update();
  EXPECT_NE(wrapped->GetLastExecutionReport().Message.find("zero-flux Neumann"), std::string::npos)
    << wrapped->GetLastExecutionReport().Message;
  auto reference = ItkGaussian<Image, Image>::New();
  reference->SetInput(image);
  reference->SetVariance(3.0);
  reference->SetInputBoundaryCondition(&periodic);
  reference->Update();
  EXPECT_EQ(MaxAbsDifference(wrapped->GetOutput(), reference->GetOutput()), 0.0);
}

TEST(DiscreteGaussian, InputIsNotModifiedAndTheFactoryGivesTheModulesFilter)
{
  using Image = itk::Image<float, 3>;
  auto       image = RandomImage<Image>(MakeSize<Image>({ 20, 17, 9 }), -50.0, 50.0, 9);
  const auto before = ToVector(image.GetPointer());
  auto       filter = OurGaussian<Image, Image>::New();
  filter->SetInput(image);
  filter->SetVariance(2.0);
  filter->Update();
  EXPECT_EQ(ToVector(image.GetPointer()), before);
  itk::CudaImageFiltersFactory::RegisterOneFactory();
  auto made = itk::DiscreteGaussianImageFilter<Image, Image>::New();
  EXPECT_NE((dynamic_cast<OurGaussian<Image, Image> *>(made.GetPointer())), nullptr) << made->GetNameOfClass();
  using U = itk::Image<unsigned char, 3>;
  auto toFloat = itk::DiscreteGaussianImageFilter<U, Image>::New();
  EXPECT_NE((dynamic_cast<OurGaussian<U, Image> *>(toFloat.GetPointer())), nullptr) << toFloat->GetNameOfClass();
}

TEST(DiscreteGaussianGpu, GivesItksAnswerIn2D)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  Brain2D<unsigned char>(Mode::GPU);
  Brain2D<short>(Mode::GPU);
  Brain2D<unsigned short>(Mode::GPU);
  Brain2D<float>(Mode::GPU);
  Brain2D<double>(Mode::GPU);
  Brain2D<unsigned char, float>(Mode::GPU);
}

TEST(DiscreteGaussianGpu, GivesItksAnswerIn3D)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  Kmeans3D<unsigned char>(Mode::GPU);
  Kmeans3D<short, float>(Mode::GPU);
  Kmeans3D<float>(Mode::GPU);
  Kmeans3D<double>(Mode::GPU);
}

TEST(DiscreteGaussianGpu, SlabsUnderAnAllocationCap)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  using Image = itk::Image<float, 3>;
  const auto source = ReadImage<itk::Image<unsigned char, 3>>(ExampleData("KmeansTest_T1UCharRaw.nii.gz"));
  const auto image = CastImage<Image>(source.GetPointer());
  // room for a quarter of the one-piece job (input, output, two intermediate images)
  const std::size_t whole = image->GetBufferedRegion().GetNumberOfPixels() * (4 + 4 + 8);
  cif::Runtime::SetAllocationLimit(cif::Runtime::GetBytesAllocated() + whole / 4);
  std::string report;
  try
  {
    report = ExpectItksGaussian<Image, Image>(image.GetPointer(), Settings{ { 2.0, 3.0, 4.0 } }, Mode::GPU);
  }
  catch (...)
  {
    cif::Runtime::SetAllocationLimit(0);
    throw;
  }
  cif::Runtime::SetAllocationLimit(0);
  EXPECT_NE(report.find("slabs"), std::string::npos) << report;
}
