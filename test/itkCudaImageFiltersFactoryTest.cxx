/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
// The object factory: this test links CudaImageFiltersFactoryRegistration,
// so ITK's New() of the twins returns the module's classes from the start,
// with no call of its own (as in a user's unmodified program).
#include "CudaImageFiltersTestUtilities.h"

#include "itkBinaryBallStructuringElement.h"
#include "itkCudaBSplineDecompositionImageFilter.h"
#include "itkCudaBSplineInterpolateImageFunction.h"
#include "itkCudaBilateralImageFilter.h"
#include "itkCudaBinShrinkImageFilter.h"
#include "itkCudaBinaryThresholdImageFilter.h"
#include "itkCudaGrayscaleErodeImageFilter.h"
#include "itkCudaImageFiltersFactory.h"
#include "itkCudaMaskImageFilter.h"
#include "itkCudaMeanImageFilter.h"
#include "itkCudaMedianImageFilter.h"
#include "itkCudaResampleImageFilter.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>

namespace
{
template <unsigned int D>
using Flat = itk::FlatStructuringElement<D>;

// Whether TTwin::New() gives an object of class TCuda.
template <typename TTwin, typename TCuda>
bool
NewGives()
{
  auto object = TTwin::New();
  return dynamic_cast<TCuda *>(object.GetPointer()) != nullptr;
}

template <typename T, unsigned int D>
using Img = itk::Image<T, D>;
} // namespace

TEST(Factory, IsRegisteredByLinkingTheRegistrationLibrary)
{
  ASSERT_NE(itk::CudaImageFiltersFactory::GetRegisteredFactory(), nullptr);
  // ahead of ITK's own factories (IO and the rest)
  EXPECT_EQ(dynamic_cast<itk::CudaImageFiltersFactory *>(itk::ObjectFactoryBase::GetRegisteredFactories().front()),
            itk::CudaImageFiltersFactory::GetRegisteredFactory());
}

TEST(Factory, TwinsNewGivesTheCudaClasses)
{
  using U2 = Img<unsigned char, 2>;
  using S3 = Img<short, 3>;
  using US3 = Img<unsigned short, 3>;
  using F2 = Img<float, 2>;
  using F3 = Img<float, 3>;
  using D2 = Img<double, 2>;
  EXPECT_TRUE((NewGives<itk::MedianImageFilter<U2, U2>, itk::CudaMedianImageFilter<U2, U2>>()));
  EXPECT_TRUE((NewGives<itk::MedianImageFilter<F3, F3>, itk::CudaMedianImageFilter<F3, F3>>()));
  EXPECT_TRUE((NewGives<itk::MeanImageFilter<S3, S3>, itk::CudaMeanImageFilter<S3, S3>>()));
  EXPECT_TRUE((NewGives<itk::BilateralImageFilter<F2, F2>, itk::CudaBilateralImageFilter<F2, F2>>()));
  EXPECT_TRUE((NewGives<itk::GrayscaleErodeImageFilter<US3, US3, Flat<3>>,
                        itk::CudaGrayscaleErodeImageFilter<US3, US3, Flat<3>>>()));
  EXPECT_TRUE((NewGives<itk::BinaryThresholdImageFilter<F3, Img<unsigned char, 3>>,
                        itk::CudaBinaryThresholdImageFilter<F3, Img<unsigned char, 3>>>()));
  EXPECT_TRUE((NewGives<itk::BinaryThresholdImageFilter<U2, U2>, itk::CudaBinaryThresholdImageFilter<U2, U2>>()));
  EXPECT_TRUE((NewGives<itk::BinShrinkImageFilter<D2, D2>, itk::CudaBinShrinkImageFilter<D2, D2>>()));
  EXPECT_TRUE((NewGives<itk::MaskImageFilter<F3, Img<unsigned char, 3>>,
                        itk::CudaMaskImageFilter<F3, Img<unsigned char, 3>>>()));
  EXPECT_TRUE((NewGives<itk::MaskImageFilter<Img<short, 2>, D2>, itk::CudaMaskImageFilter<Img<short, 2>, D2>>()));
  EXPECT_TRUE((NewGives<itk::ResampleImageFilter<U2, U2>, itk::CudaResampleImageFilter<U2, U2>>()));
  EXPECT_TRUE((NewGives<itk::ResampleImageFilter<F3, F3>, itk::CudaResampleImageFilter<F3, F3>>()));
  EXPECT_TRUE(
    (NewGives<itk::BSplineInterpolateImageFunction<F3>, itk::CudaBSplineInterpolateImageFunction<F3>>()));
  EXPECT_TRUE((NewGives<itk::BSplineDecompositionImageFilter<S3, F3>,
                        itk::CudaBSplineDecompositionImageFilter<S3, F3>>()));
  // ITK's interpolator builds its decomposition through New() too
  auto interpolator = itk::BSplineInterpolateImageFunction<F2>::New();
  EXPECT_NE(interpolator.GetPointer(), nullptr);
}

TEST(Factory, OtherInstantiationsKeepItks)
{
  using F4 = Img<float, 4>;
  using I2 = Img<int, 2>;
  using U2 = Img<unsigned char, 2>;
  using F2 = Img<float, 2>;
  EXPECT_EQ(dynamic_cast<itk::CudaExecutionControl *>(itk::MedianImageFilter<F4, F4>::New().GetPointer()), nullptr);
  EXPECT_EQ(dynamic_cast<itk::CudaExecutionControl *>(itk::MeanImageFilter<I2, I2>::New().GetPointer()), nullptr);
  // the module overrides mixed pixel types only where its classes take them
  EXPECT_EQ(dynamic_cast<itk::CudaExecutionControl *>(itk::MedianImageFilter<U2, F2>::New().GetPointer()), nullptr);
  // a mask of a type the cores lack, an output type unlike the image's
  EXPECT_EQ(dynamic_cast<itk::CudaExecutionControl *>(itk::MaskImageFilter<F2, I2>::New().GetPointer()), nullptr);
  EXPECT_EQ(dynamic_cast<itk::CudaExecutionControl *>(itk::MaskImageFilter<U2, U2, F2>::New().GetPointer()), nullptr);
  // a structuring element other than ITK's flat default
  using Ball = itk::BinaryBallStructuringElement<unsigned char, 2>;
  EXPECT_EQ(
    dynamic_cast<itk::CudaExecutionControl *>(itk::GrayscaleErodeImageFilter<U2, U2, Ball>::New().GetPointer()),
    nullptr);
}

TEST(Factory, OverridesTurnOffAndOnAgain)
{
  using F3 = Img<float, 3>;
  using Twin = itk::MedianImageFilter<F3, F3>;
  using Cuda = itk::CudaMedianImageFilter<F3, F3>;
  ASSERT_TRUE((NewGives<Twin, Cuda>()));
  itk::CudaImageFiltersFactory::SetOverridesEnabled(false);
  EXPECT_FALSE((NewGives<Twin, Cuda>()));
  EXPECT_FALSE((NewGives<itk::ResampleImageFilter<F3, F3>, itk::CudaResampleImageFilter<F3, F3>>()));
  itk::CudaImageFiltersFactory::SetOverridesEnabled(true);
  EXPECT_TRUE((NewGives<Twin, Cuda>()));
}

TEST(Factory, TheEnvironmentVariableOptsOut)
{
  using U2 = Img<unsigned char, 2>;
  using Twin = itk::MedianImageFilter<U2, U2>;
  using Cuda = itk::CudaMedianImageFilter<U2, U2>;
  itk::CudaImageFiltersFactory::UnRegisterOneFactory();
  EXPECT_EQ(itk::CudaImageFiltersFactory::GetRegisteredFactory(), nullptr);
  EXPECT_FALSE((NewGives<Twin, Cuda>()));
  ::setenv("CUDAIMAGEFILTERS_NO_ITK_OVERRIDES", "1", 1);
  EXPECT_FALSE(itk::CudaImageFiltersFactory::RegisterOneFactory());
  EXPECT_FALSE((NewGives<Twin, Cuda>()));
  ::setenv("CUDAIMAGEFILTERS_NO_ITK_OVERRIDES", "0", 1);
  EXPECT_TRUE(itk::CudaImageFiltersFactory::RegisterOneFactory());
  ::unsetenv("CUDAIMAGEFILTERS_NO_ITK_OVERRIDES");
  EXPECT_TRUE((NewGives<Twin, Cuda>()));
  // once only
  const auto count = itk::ObjectFactoryBase::GetRegisteredFactories().size();
  EXPECT_TRUE(itk::CudaImageFiltersFactory::RegisterOneFactory());
  EXPECT_EQ(itk::ObjectFactoryBase::GetRegisteredFactories().size(), count);
}

// The override computes what ITK's filter computes: the same example image
// through New() with the overrides on and off (ITK's own class).
template <typename TTwin>
void
ExpectSameAsItk(const std::function<void(TTwin *)> & configure, double tolerance, bool requireGpu)
{
  using ImageType = typename TTwin::InputImageType;
  const auto input = cif_test::ReadImage<ImageType>(cif_test::ExampleData("BrainProtonDensitySlice.png"));
  itk::CudaImageFiltersFactory::SetOverridesEnabled(false);
  auto itkFilter = TTwin::New();
  itk::CudaImageFiltersFactory::SetOverridesEnabled(true);
  auto ours = TTwin::New();
  ASSERT_EQ(dynamic_cast<itk::CudaExecutionControl *>(itkFilter.GetPointer()), nullptr);
  auto * control = dynamic_cast<itk::CudaExecutionControl *>(ours.GetPointer());
  ASSERT_NE(control, nullptr);
  if (!requireGpu)
  {
    control->SetExecutionMode(itk::CudaExecutionMode::CPU);
  }
  for (TTwin * f : { itkFilter.GetPointer(), ours.GetPointer() })
  {
    f->SetInput(input);
    configure(f);
    f->Update();
  }
  EXPECT_EQ(control->GetLastExecutedOn(), requireGpu ? itk::CudaExecutedOn::GPU : itk::CudaExecutedOn::CPU)
    << control->GetLastExecutionReport().Message;
  EXPECT_LE(cif_test::MaxAbsDifference(itkFilter->GetOutput(), ours->GetOutput()), tolerance);
}

namespace
{
using F2 = Img<float, 2>;
using U2 = Img<unsigned char, 2>;

void
TwinsSameAsItk(bool gpu)
{
  ExpectSameAsItk<itk::MedianImageFilter<F2, F2>>(
    [](itk::MedianImageFilter<F2, F2> * f)
    {
      f->SetRadius(2);
    },
    0.0,
    gpu);
  ExpectSameAsItk<itk::BinaryThresholdImageFilter<U2, U2>>(
    [](itk::BinaryThresholdImageFilter<U2, U2> * f)
    {
      f->SetLowerThreshold(100);
      f->SetUpperThreshold(180);
      f->SetInsideValue(255);
    },
    0.0,
    gpu);
  // the mask: the example image masked by a threshold of itself
  auto labels = itk::BinaryThresholdImageFilter<U2, U2>::New();
  labels->SetInput(cif_test::ReadImage<U2>(cif_test::ExampleData("BrainProtonDensitySlice.png")));
  labels->SetLowerThreshold(60);
  labels->Update();
  const U2::Pointer mask = labels->GetOutput();
  ExpectSameAsItk<itk::MaskImageFilter<U2, U2>>(
    [mask](itk::MaskImageFilter<U2, U2> * f)
    {
      f->SetMaskImage(mask);
      f->SetOutsideValue(9);
    },
    0.0,
    gpu);
}
} // namespace

TEST(Factory, ResultsEqualItksOnTheCpu)
{
  TwinsSameAsItk(false);
}

TEST(FactoryGpu, ResultsEqualItksOnTheGpu)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  TwinsSameAsItk(true);
}
