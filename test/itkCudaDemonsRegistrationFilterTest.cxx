/*=========================================================================
 *  Tests of CudaDemonsRegistrationFilter and
 *  CudaDiffeomorphicDemonsRegistrationFilter against ITK's own
 *  DemonsRegistrationFilter and DiffeomorphicDemonsRegistrationFilter
 *  (created without the factory), on ITK's example
 *  images: the rat lung slices of ITK's DeformableRegistration2 (2D) and
 *  KmeansTest_T1 (3D, spacing 2 x 2 x 3 mm and a rotated direction) against
 *  a copy moved by a known rigid transform. The module's cores run ITK's
 *  arithmetic (the smoothing in float in ITK's order, the update in double),
 *  so the fields must agree to 1e-4 of a pixel RMS (the issue asks 0.01)
 *  and the metric of every iteration to 1e-9 relative (only the order of
 *  the double sums differs). Also: ITK's options (update smoothing, initial
 *  field, thresholds, MaximumRMSError, StopRegistration; the diffeomorphic
 *  filter's four gradient types, step lengths and exponentials), the requests the
 *  cores do not take (ITK's code runs and the report says so), the factory,
 *  and bad input (empty, NaN).
 *=========================================================================*/
#include "CudaImageFiltersTestUtilities.h"
#include "cif/Demons.h"
#include "itkCudaDemonsRegistrationFilter.h"
#include "itkCudaDiffeomorphicDemonsRegistrationFilter.h"
#include "itkCudaFactorylessTwin.h"
#include "itkCudaImageFiltersFactory.h"
#include "itkDemonsRegistrationFilter.h"
#include "itkDiffeomorphicDemonsRegistrationFilter.h"
#include "itkEuler3DTransform.h"
#include "itkResampleImageFilter.h"
#include "itkVector.h"

#include <gtest/gtest.h>
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace
{
using namespace cif_test;
using Mode = itk::CudaExecutionMode;

template <typename TImage>
using FieldOf = itk::Image<itk::Vector<float, TImage::ImageDimension>, TImage::ImageDimension>;
template <typename TImage>
using ItkDemons = itk::CudaFactorylessTwin<itk::DemonsRegistrationFilter<TImage, TImage, FieldOf<TImage>>>;
template <typename TImage>
using OurDemons = itk::CudaDemonsRegistrationFilter<TImage, TImage, FieldOf<TImage>>;
template <typename TImage>
using ItkDiffeomorphic = itk::DiffeomorphicDemonsRegistrationFilter<TImage, TImage, FieldOf<TImage>>;
template <typename TImage>
using OurDiffeomorphic = itk::CudaDiffeomorphicDemonsRegistrationFilter<TImage, TImage, FieldOf<TImage>>;

/** ITK's filter and ours: Thirion's, or with Diffeomorphic the
 * diffeomorphic ones. */
template <bool Diffeomorphic, typename TImage>
struct Filters
{
  using Itk = ItkDemons<TImage>;
  using Ours = OurDemons<TImage>;
};
template <typename TImage>
struct Filters<true, TImage>
{
  using Itk = itk::CudaFactorylessTwin<ItkDiffeomorphic<TImage>>;
  using Ours = OurDiffeomorphic<TImage>;
};

using Image2 = itk::Image<float, 2>;
using Image3 = itk::Image<float, 3>;

/** ITK's settings of one registration. */
template <typename TImage>
struct Settings
{
  unsigned int                          iterations{ 50 };
  double                                sd{ 1.0 };
  bool                                  smoothField{ true };
  bool                                  smoothUpdate{ false };
  double                                updateSd{ 1.0 };
  double                                maximumRMSError{ 0.0 };
  double                                intensityThreshold{ 0.001 };
  bool                                  movingGradient{ false };
  /** The diffeomorphic filters': ESMDemonsRegistrationFunction's gradient
   * type (0 symmetric, 1 fixed, 2 warped moving, 3 mapped moving), the
   * maximum update step length, the first-order exponential. */
  int                                   gradient{ 0 };
  double                                maximumStep{ 0.5 };
  bool                                  firstOrderExp{ false };
  unsigned int                          stopAt{ 0 };
  typename FieldOf<TImage>::Pointer     initial;
};

/** What a run gives: the field and the metric and RMS change of every
 * iteration as the observers saw them. */
template <typename TImage>
struct Run
{
  typename FieldOf<TImage>::Pointer field;
  std::vector<double>               metrics;
  std::vector<double>               rms;
  unsigned int                      iterations{ 0 };
};

template <typename TFilter, typename TImage>
Run<TImage>
Register(TFilter * filter, const TImage * fixed, const TImage * moving, const Settings<TImage> & s)
{
  filter->SetFixedImage(fixed);
  filter->SetMovingImage(moving);
  filter->SetNumberOfIterations(s.iterations);
  filter->SetStandardDeviations(s.sd);
  filter->SetSmoothDisplacementField(s.smoothField);
  filter->SetSmoothUpdateField(s.smoothUpdate);
  filter->SetUpdateFieldStandardDeviations(s.updateSd);
  filter->SetMaximumRMSError(s.maximumRMSError);
  filter->SetIntensityDifferenceThreshold(s.intensityThreshold);
  if constexpr (std::is_base_of<ItkDiffeomorphic<TImage>, TFilter>::value)
  {
    filter->SetUseGradientType(static_cast<typename TFilter::GradientType>(s.gradient));
    filter->SetMaximumUpdateStepLength(s.maximumStep);
    filter->SetUseFirstOrderExp(s.firstOrderExp);
  }
  else
  {
    filter->SetUseMovingImageGradient(s.movingGradient);
  }
  if (s.initial)
  {
    filter->SetInitialDisplacementField(s.initial);
  }
  Run<TImage> run;
  filter->AddObserver(itk::IterationEvent(),
                      [&](const itk::EventObject &)
                      {
                        run.metrics.push_back(filter->GetMetric());
                        run.rms.push_back(filter->GetRMSChange());
                        if (s.stopAt != 0 && filter->GetElapsedIterations() == s.stopAt)
                        {
                          filter->StopRegistration();
                        }
                      });
  filter->Update();
  run.iterations = static_cast<unsigned int>(filter->GetElapsedIterations());
  run.field = filter->GetOutput();
  run.field->DisconnectPipeline();
  return run;
}

/** The RMS and the largest length of the difference of two fields. */
template <typename TField>
std::pair<double, double>
FieldDifference(const TField * a, const TField * b)
{
  itk::ImageRegionConstIterator<TField> ia(a, a->GetBufferedRegion());
  itk::ImageRegionConstIterator<TField> ib(b, b->GetBufferedRegion());
  double                                sum = 0.0;
  double                                largest = 0.0;
  std::size_t                           n = 0;
  for (; !ia.IsAtEnd(); ++ia, ++ib, ++n)
  {
    double squared = 0.0;
    for (unsigned int c = 0; c < TField::ImageDimension; ++c)
    {
      const double d = static_cast<double>(ia.Get()[c]) - static_cast<double>(ib.Get()[c]);
      squared += d * d;
    }
    sum += squared;
    largest = std::max(largest, std::sqrt(squared));
  }
  return { std::sqrt(sum / static_cast<double>(n)), largest };
}

/** The RMS length of a field (how far the registration moved). */
template <typename TField>
double
FieldRms(const TField * f)
{
  double      sum = 0.0;
  std::size_t n = 0;
  for (itk::ImageRegionConstIterator<TField> it(f, f->GetBufferedRegion()); !it.IsAtEnd(); ++it, ++n)
  {
    sum += it.Get().GetSquaredNorm();
  }
  return std::sqrt(sum / static_cast<double>(n));
}

/** Ours in `mode` against ITK's with settings `s` (Thirion's, or with
 * Diffeomorphic the diffeomorphic filters); returns our run. */
template <bool Diffeomorphic = false, typename TImage>
Run<TImage>
ExpectItksDemons(const TImage *           fixed,
                 const TImage *           moving,
                 const Settings<TImage> & s,
                 Mode                     mode,
                 double                   fieldTolerance = 1e-4)
{
  auto        itkFilter = Filters<Diffeomorphic, TImage>::Itk::New();
  Run<TImage> expected = Register(itkFilter.GetPointer(), fixed, moving, s);
  auto        ours = Filters<Diffeomorphic, TImage>::Ours::New();
  ours->SetExecutionMode(mode);
  Run<TImage> got = Register(ours.GetPointer(), fixed, moving, s);
  EXPECT_EQ(ours->GetLastExecutedOn(), mode == Mode::GPU ? itk::CudaExecutedOn::GPU : itk::CudaExecutedOn::CPU);
  EXPECT_EQ(ours->GetLastExecutionReport().Message.find("ITK's own"), std::string::npos)
    << ours->GetLastExecutionReport().Message;
  EXPECT_EQ(got.iterations, expected.iterations);
  EXPECT_EQ(got.metrics.size(), expected.metrics.size());
  for (std::size_t i = 0; i < std::min(got.metrics.size(), expected.metrics.size()); ++i)
  {
    EXPECT_NEAR(got.metrics[i], expected.metrics[i], 1e-9 * std::abs(expected.metrics[i])) << "iteration " << i;
    EXPECT_NEAR(got.rms[i], expected.rms[i], 1e-9 * std::abs(expected.rms[i]) + 1e-15) << "iteration " << i;
  }
  EXPECT_EQ(got.field->GetBufferedRegion(), expected.field->GetBufferedRegion());
  EXPECT_EQ(got.field->GetOrigin(), expected.field->GetOrigin());
  EXPECT_EQ(got.field->GetSpacing(), expected.field->GetSpacing());
  EXPECT_EQ(got.field->GetDirection(), expected.field->GetDirection());
  const auto   difference = FieldDifference(got.field.GetPointer(), expected.field.GetPointer());
  const double spacing = fixed->GetSpacing()[0];
  // in pixels of the first axis (the field is in physical units)
  EXPECT_LE(difference.first / spacing, fieldTolerance)
    << "field RMS difference " << difference.first << ", largest " << difference.second << " (ITK's field RMS "
    << FieldRms(expected.field.GetPointer()) << ")";
  std::cout << "  " << (Diffeomorphic ? "diffeomorphic, " : "") << TImage::ImageDimension << "D, " << got.iterations
            << " iterations: field RMS difference " << difference.first << ", largest " << difference.second
            << ", field RMS " << FieldRms(expected.field.GetPointer()) << ", last metric " << got.metrics.back()
            << " (ITK " << expected.metrics.back() << ")\n";
  return got;
}

Image2::Pointer
Lung(int which)
{
  using UChar = itk::Image<unsigned char, 2>;
  const auto image = ReadImage<UChar>(ExampleData("RatLungSlice" + std::to_string(which) + ".mha"));
  return CastImage<Image2>(image.GetPointer());
}

/** KmeansTest_T1 as float, and a copy moved by a known rigid transform
 * (3 degrees about each axis, (2, -1.5, 1) mm), resampled linearly. */
struct Pair3
{
  Image3::Pointer fixed;
  Image3::Pointer moving;
};

const Pair3 &
T1Pair()
{
  static const Pair3 pair = []
  {
    using UChar = itk::Image<unsigned char, 3>;
    Pair3 p;
    p.fixed = CastImage<Image3>(ReadImage<UChar>(ExampleData("KmeansTest_T1UCharRaw.nii.gz")).GetPointer());
    auto transform = itk::Euler3DTransform<double>::New();
    const double degree = std::acos(-1.0) / 180.0;
    transform->SetRotation(3 * degree, -3 * degree, 3 * degree);
    itk::Euler3DTransform<double>::OutputVectorType t;
    t[0] = 2.0;
    t[1] = -1.5;
    t[2] = 1.0;
    transform->SetTranslation(t);
    // the centre of the image
    const auto &                                   region = p.fixed->GetLargestPossibleRegion();
    itk::ContinuousIndex<double, 3>                middle;
    for (unsigned a = 0; a < 3; ++a)
    {
      middle[a] = (static_cast<double>(region.GetSize(a)) - 1.0) / 2.0;
    }
    itk::Point<double, 3> centre;
    p.fixed->TransformContinuousIndexToPhysicalPoint(middle, centre);
    transform->SetCenter(centre);
    auto resample = itk::ResampleImageFilter<Image3, Image3>::New();
    resample->SetInput(p.fixed);
    resample->SetTransform(transform);
    resample->SetReferenceImage(p.fixed);
    resample->UseReferenceImageOn();
    resample->Update();
    p.moving = resample->GetOutput();
    p.moving->DisconnectPipeline();
    return p;
  }();
  return pair;
}

void
RunCases(Mode mode)
{
  // ITK's DeformableRegistration2: the rat lung slices, 50 iterations, sd 1
  const auto fixed = Lung(1);
  const auto moving = Lung(2);
  Settings<Image2> s;
  ExpectItksDemons(fixed.GetPointer(), moving.GetPointer(), s, mode);
  // a wider field kernel, the update smoothed, a threshold
  s.sd = 2.5;
  s.smoothUpdate = true;
  s.updateSd = 0.8;
  s.intensityThreshold = 2.0;
  s.iterations = 20;
  ExpectItksDemons(fixed.GetPointer(), moving.GetPointer(), s, mode);
  // the update alone smoothed (a viscous registration)
  s = Settings<Image2>();
  s.smoothField = false;
  s.smoothUpdate = true;
  s.iterations = 20;
  ExpectItksDemons(fixed.GetPointer(), moving.GetPointer(), s, mode);
  // an initial field (ITK's result after 10 iterations), continued
  s = Settings<Image2>();
  s.iterations = 10;
  auto first = ItkDemons<Image2>::New();
  s.initial = Register(first.GetPointer(), fixed.GetPointer(), moving.GetPointer(), s).field;
  ExpectItksDemons(fixed.GetPointer(), moving.GetPointer(), s, mode);
  // ITK's halting: the RMS change under MaximumRMSError, StopRegistration
  // (the threshold a little above ITK's smallest RMS change of iterations
  // 5 to 50, so that ITK halts at or before that iteration)
  s = Settings<Image2>();
  auto       probe = ItkDemons<Image2>::New();
  const auto trace = Register(probe.GetPointer(), fixed.GetPointer(), moving.GetPointer(), s);
  s.maximumRMSError = *std::min_element(trace.rms.begin() + 5, trace.rms.end()) * (1.0 + 1e-6);
  const auto halted = ExpectItksDemons(fixed.GetPointer(), moving.GetPointer(), s, mode);
  EXPECT_LT(halted.iterations, 50u);
  s.maximumRMSError = 0.0;
  s.stopAt = 7;
  EXPECT_EQ(ExpectItksDemons(fixed.GetPointer(), moving.GetPointer(), s, mode).iterations, 7u);

  // 3D, anisotropic spacing and a rotated direction
  const Pair3 &    t1 = T1Pair();
  Settings<Image3> s3;
  s3.iterations = 20;
  s3.sd = 1.5;
  ExpectItksDemons(t1.fixed.GetPointer(), t1.moving.GetPointer(), s3, mode);
}

/** The diffeomorphic filters' cases: ITK's defaults on
 * DeformableRegistration2's images, each gradient type, the first-order
 * and the automatic exponential, a long step with update smoothing, an
 * initial field, StopRegistration, and 3D with a rotated direction. */
void
RunDiffeomorphicCases(Mode mode)
{
  const auto       fixed = Lung(1);
  const auto       moving = Lung(2);
  Settings<Image2> s;
  ExpectItksDemons<true>(fixed.GetPointer(), moving.GetPointer(), s, mode);
  for (int gradient = 1; gradient <= 3; ++gradient)
  {
    s = Settings<Image2>();
    s.iterations = 20;
    s.gradient = gradient;
    ExpectItksDemons<true>(fixed.GetPointer(), moving.GetPointer(), s, mode);
  }
  s = Settings<Image2>();
  s.iterations = 20;
  s.firstOrderExp = true;
  ExpectItksDemons<true>(fixed.GetPointer(), moving.GetPointer(), s, mode);
  // ITK's automatic number of squarings (step length 0)
  s.firstOrderExp = false;
  s.maximumStep = 0.0;
  ExpectItksDemons<true>(fixed.GetPointer(), moving.GetPointer(), s, mode);
  // three squarings, the update smoothed, a wider field kernel
  s.maximumStep = 2.0;
  s.smoothUpdate = true;
  s.updateSd = 1.5;
  s.sd = 2.0;
  ExpectItksDemons<true>(fixed.GetPointer(), moving.GetPointer(), s, mode);
  // an initial field (ITK's after 10 iterations), and StopRegistration
  s = Settings<Image2>();
  s.iterations = 10;
  auto first = Filters<true, Image2>::Itk::New();
  s.initial = Register(first.GetPointer(), fixed.GetPointer(), moving.GetPointer(), s).field;
  s.iterations = 20;
  s.stopAt = 7;
  EXPECT_EQ(ExpectItksDemons<true>(fixed.GetPointer(), moving.GetPointer(), s, mode).iterations, 7u);

  const Pair3 &    t1 = T1Pair();
  Settings<Image3> s3;
  s3.iterations = 10;
  ExpectItksDemons<true>(t1.fixed.GetPointer(), t1.moving.GetPointer(), s3, mode);
  s3.iterations = 5;
  s3.gradient = 3;
  s3.maximumStep = 0.0;
  ExpectItksDemons<true>(t1.fixed.GetPointer(), t1.moving.GetPointer(), s3, mode);
}

TEST(DiffeomorphicDemonsCpu, CoreGivesItksFieldAndMetric)
{
  RunDiffeomorphicCases(Mode::CPU);
}

TEST(DiffeomorphicDemonsGpu, GivesItksFieldAndMetric)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  RunDiffeomorphicCases(Mode::GPU);
}

TEST(DiffeomorphicDemonsCpu, UnsignedCharImagesGiveItksField)
{
  // the moving pixel's maximum, 255, marks outside pixels; the warped
  // image is truncated to unsigned char
  using UChar = itk::Image<unsigned char, 2>;
  const auto      fixed = ReadImage<UChar>(ExampleData("RatLungSlice1.mha"));
  const auto      moving = ReadImage<UChar>(ExampleData("RatLungSlice2.mha"));
  Settings<UChar> s;
  s.iterations = 20;
  for (Mode mode : { Mode::CPU, Mode::GPU })
  {
    if (mode == Mode::GPU && !cif::Runtime::IsDeviceAvailable())
    {
      continue;
    }
    ExpectItksDemons<true>(fixed.GetPointer(), moving.GetPointer(), s, mode);
  }
}

TEST(DemonsCpu, CoreGivesItksFieldAndMetric)
{
  RunCases(Mode::CPU);
}

TEST(DemonsGpu, GivesItksFieldAndMetric)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  RunCases(Mode::GPU);
}

template <bool Diffeomorphic>
void
ExpectTheGpuEqualsTheCpuCore(const Settings<Image3> & s)
{
  const Pair3 & t1 = T1Pair();
  auto          cpu = Filters<Diffeomorphic, Image3>::Ours::New();
  cpu->SetExecutionMode(Mode::CPU);
  const auto a = Register(cpu.GetPointer(), t1.fixed.GetPointer(), t1.moving.GetPointer(), s);
  auto       gpu = Filters<Diffeomorphic, Image3>::Ours::New();
  gpu->SetExecutionMode(Mode::GPU);
  const auto b = Register(gpu.GetPointer(), t1.fixed.GetPointer(), t1.moving.GetPointer(), s);
  ASSERT_EQ(gpu->GetLastExecutedOn(), itk::CudaExecutedOn::GPU);
  const auto difference = FieldDifference(a.field.GetPointer(), b.field.GetPointer());
  // the same operations in the same order (no fused multiply-adds): equal
  EXPECT_EQ(difference.second, 0.0) << "RMS " << difference.first;
}

TEST(DemonsGpu, EqualsTheCpuCore)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  Settings<Image3> s;
  s.iterations = 30;
  ExpectTheGpuEqualsTheCpuCore<false>(s);
}

TEST(DiffeomorphicDemonsGpu, EqualsTheCpuCore)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  Settings<Image3> s;
  s.iterations = 30;
  ExpectTheGpuEqualsTheCpuCore<true>(s);
  // the automatic exponential and the mapped moving gradient
  s.iterations = 10;
  s.maximumStep = 0.0;
  s.gradient = 3;
  ExpectTheGpuEqualsTheCpuCore<true>(s);
}

TEST(DemonsGpu, OutOfMemoryFallsBackToTheCpuOrThrowsAndMemoryIsReturned)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  const Pair3 &    t1 = T1Pair();
  Settings<Image3> s;
  s.iterations = 5;
  auto       cpu = OurDemons<Image3>::New();
  cpu->SetExecutionMode(Mode::CPU);
  const auto expected = Register(cpu.GetPointer(), t1.fixed.GetPointer(), t1.moving.GetPointer(), s);

  // no room for the images and fields: automatic mode runs the CPU core and says why
  const std::size_t before = cif::Runtime::GetBytesAllocated();
  cif::Runtime::SetAllocationLimit(before + 64);
  auto       ours = OurDemons<Image3>::New();
  const auto fellBack = Register(ours.GetPointer(), t1.fixed.GetPointer(), t1.moving.GetPointer(), s);
  EXPECT_EQ(ours->GetLastExecutedOn(), itk::CudaExecutedOn::CPU);
  EXPECT_TRUE(ours->GetLastExecutionReport().FellBackAfterOutOfMemory);
  EXPECT_NE(ours->GetLastExecutionReport().Message.find("out of memory"), std::string::npos);
  EXPECT_EQ(FieldDifference(fellBack.field.GetPointer(), expected.field.GetPointer()).second, 0.0);
  EXPECT_EQ(fellBack.metrics.size(), 5u);
  // GPU mode throws instead
  auto gpu = OurDemons<Image3>::New();
  gpu->SetExecutionMode(Mode::GPU);
  EXPECT_THROW(Register(gpu.GetPointer(), t1.fixed.GetPointer(), t1.moving.GetPointer(), s), itk::ExceptionObject);
  cif::Runtime::SetAllocationLimit(0);

  // the device memory is flat over registrations: all of it returned after each
  for (int run = 0; run < 3; ++run)
  {
    auto again = OurDemons<Image3>::New();
    again->SetExecutionMode(Mode::GPU);
    const auto r = Register(again.GetPointer(), t1.fixed.GetPointer(), t1.moving.GetPointer(), s);
    EXPECT_EQ(FieldDifference(r.field.GetPointer(), expected.field.GetPointer()).second, 0.0);
    EXPECT_EQ(cif::Runtime::GetBytesAllocated(), before) << "after registration " << run;
  }
}

TEST(DemonsCpu, UnsupportedRequestsRunItksCodeAndSayWhy)
{
  const auto       fixed = Lung(1);
  const auto       moving = Lung(2);
  Settings<Image2> s;
  s.iterations = 5;
  s.movingGradient = true;
  auto       itkFilter = ItkDemons<Image2>::New();
  const auto expected = Register(itkFilter.GetPointer(), fixed.GetPointer(), moving.GetPointer(), s);
  auto       ours = OurDemons<Image2>::New();
  EXPECT_EQ(ours->GetCoreUnsupportedReason(), "");
  const auto got = Register(ours.GetPointer(), fixed.GetPointer(), moving.GetPointer(), s);
  EXPECT_NE(ours->GetCoreUnsupportedReason().find("UseMovingImageGradient"), std::string::npos);
  EXPECT_EQ(ours->GetLastExecutedOn(), itk::CudaExecutedOn::CPU);
  const std::string message = ours->GetLastExecutionReport().Message;
  EXPECT_NE(message.find("UseMovingImageGradient"), std::string::npos) << message;
  EXPECT_NE(message.find("ITK's own"), std::string::npos) << message;
  EXPECT_EQ(FieldDifference(got.field.GetPointer(), expected.field.GetPointer()).second, 0.0);
  // (ITK's per-thread sums: two runs of ITK's code may differ in the last bits)
  ASSERT_EQ(got.metrics.size(), expected.metrics.size());
  for (std::size_t i = 0; i < got.metrics.size(); ++i)
  {
    EXPECT_NEAR(got.metrics[i], expected.metrics[i], 1e-12 * expected.metrics[i]);
  }

  // GPU mode cannot run it: a clear exception
  auto gpu = OurDemons<Image2>::New();
  gpu->SetExecutionMode(Mode::GPU);
  try
  {
    Register(gpu.GetPointer(), fixed.GetPointer(), moving.GetPointer(), s);
    ADD_FAILURE() << "GPU mode ran a request the GPU core does not take";
  }
  catch (const itk::ExceptionObject & e)
  {
    // (without a device the exception says that instead)
    if (cif::Runtime::IsDeviceAvailable())
    {
      EXPECT_NE(std::string(e.GetDescription()).find("UseMovingImageGradient"), std::string::npos)
        << e.GetDescription();
    }
  }

  // a double field: ITK's code (the module's cores take float fields)
  using DoubleField = itk::Image<itk::Vector<double, 2>, 2>;
  auto doubles = itk::CudaDemonsRegistrationFilter<Image2, Image2, DoubleField>::New();
  EXPECT_NE(doubles->GetCoreUnsupportedReason().find("double"), std::string::npos);
  auto diffeomorphicDoubles = itk::CudaDiffeomorphicDemonsRegistrationFilter<Image2, Image2, DoubleField>::New();
  EXPECT_NE(diffeomorphicDoubles->GetCoreUnsupportedReason().find("double"), std::string::npos);
}

TEST(DiffeomorphicDemonsCpu, ADoubleFieldRunsItksCodeAndSaysWhy)
{
  using DoubleField = itk::Image<itk::Vector<double, 2>, 2>;
  const auto fixed = Lung(1);
  const auto moving = Lung(2);
  auto       reference =
    itk::CudaFactorylessTwin<itk::DiffeomorphicDemonsRegistrationFilter<Image2, Image2, DoubleField>>::New();
  auto ours = itk::CudaDiffeomorphicDemonsRegistrationFilter<Image2, Image2, DoubleField>::New();
  for (auto * filter :
       { static_cast<itk::DiffeomorphicDemonsRegistrationFilter<Image2, Image2, DoubleField> *>(reference.GetPointer()),
         static_cast<itk::DiffeomorphicDemonsRegistrationFilter<Image2, Image2, DoubleField> *>(ours.GetPointer()) })
  {
    filter->SetFixedImage(fixed);
    filter->SetMovingImage(moving);
    filter->SetNumberOfIterations(5);
    filter->Update();
  }
  const std::string message = ours->GetLastExecutionReport().Message;
  EXPECT_NE(message.find("ITK's own DiffeomorphicDemonsRegistrationFilter"), std::string::npos) << message;
  EXPECT_EQ(FieldDifference(ours->GetOutput(), reference->GetOutput()).second, 0.0);
}

TEST(DemonsCpu, TheFactoryOverridesItksFilterForTheTypesTheCoresTake)
{
  itk::CudaImageFiltersFactory::RegisterOneFactory();
  using UChar = itk::Image<unsigned char, 3>;
  using Filter = itk::DemonsRegistrationFilter<Image2, Image2, FieldOf<Image2>>;
  using UCharFilter = itk::DemonsRegistrationFilter<UChar, UChar, FieldOf<UChar>>;
  using DoubleImage = itk::Image<double, 2>;
  using DoubleFilter = itk::DemonsRegistrationFilter<DoubleImage, DoubleImage, FieldOf<DoubleImage>>;
  EXPECT_NE(dynamic_cast<OurDemons<Image2> *>(Filter::New().GetPointer()), nullptr);
  EXPECT_NE(dynamic_cast<OurDemons<UChar> *>(UCharFilter::New().GetPointer()), nullptr);
  EXPECT_EQ(std::string(DoubleFilter::New()->GetNameOfClass()), "DemonsRegistrationFilter");
  EXPECT_NE(dynamic_cast<OurDiffeomorphic<Image2> *>(ItkDiffeomorphic<Image2>::New().GetPointer()), nullptr);
  EXPECT_NE(dynamic_cast<OurDiffeomorphic<UChar> *>(ItkDiffeomorphic<UChar>::New().GetPointer()), nullptr);
  EXPECT_EQ(std::string(ItkDiffeomorphic<DoubleImage>::New()->GetNameOfClass()),
            "DiffeomorphicDemonsRegistrationFilter");
  itk::CudaImageFiltersFactory::UnRegisterAllFactories();
}

TEST(DemonsCpu, UnsignedCharImagesGiveItksField)
{
  using UChar = itk::Image<unsigned char, 2>;
  const auto       fixed = ReadImage<UChar>(ExampleData("RatLungSlice1.mha"));
  const auto       moving = ReadImage<UChar>(ExampleData("RatLungSlice2.mha"));
  Settings<UChar>  s;
  s.iterations = 20;
  ExpectItksDemons(fixed.GetPointer(), moving.GetPointer(), s, Mode::CPU);
}

TEST(DemonsCpu, BadInputThrowsClearly)
{
  const auto fixed = Lung(1);
  auto       moving = Lung(2);
  // NaN in the moving image
  moving->GetPixelContainer()->GetBufferPointer()[128 * 64 + 64] = std::numeric_limits<float>::quiet_NaN();
  for (Mode mode : { Mode::CPU, Mode::GPU })
  {
    if (mode == Mode::GPU && !cif::Runtime::IsDeviceAvailable())
    {
      continue;
    }
    auto filter = OurDemons<Image2>::New();
    filter->SetExecutionMode(mode);
    filter->SetFixedImage(fixed);
    filter->SetMovingImage(moving);
    filter->SetNumberOfIterations(3);
    try
    {
      filter->Update();
      ADD_FAILURE() << "NaN in the moving image passed silently";
    }
    catch (const itk::ExceptionObject & e)
    {
      EXPECT_NE(std::string(e.GetDescription()).find("NaN"), std::string::npos) << e.GetDescription();
    }
  }
  // an empty fixed image
  auto empty = Image2::New();
  empty->SetRegions(MakeSize<Image2>({ 0, 0 }));
  empty->Allocate();
  auto filter = OurDemons<Image2>::New();
  filter->SetFixedImage(empty);
  filter->SetMovingImage(Lung(2));
  EXPECT_THROW(filter->Update(), itk::ExceptionObject);
}

TEST(DiffeomorphicDemonsCpu, BadInputThrowsClearly)
{
  const auto fixed = Lung(1);
  auto       moving = Lung(2);
  moving->GetPixelContainer()->GetBufferPointer()[128 * 64 + 64] = std::numeric_limits<float>::quiet_NaN();
  // a single row: ITK's warped-image differences would read outside it
  auto row = Image2::New();
  row->SetRegions(MakeSize<Image2>({ 64, 1 }));
  row->Allocate();
  row->FillBuffer(1.0f);
  for (Mode mode : { Mode::CPU, Mode::GPU })
  {
    if (mode == Mode::GPU && !cif::Runtime::IsDeviceAvailable())
    {
      continue;
    }
    const std::pair<Image2::Pointer, const char *> cases[] = { { moving, "NaN" }, { row, "2 pixels" } };
    for (const auto & c : cases)
    {
      auto filter = OurDiffeomorphic<Image2>::New();
      filter->SetExecutionMode(mode);
      filter->SetFixedImage(c.first == row ? row : fixed);
      filter->SetMovingImage(c.first);
      filter->SetNumberOfIterations(3);
      try
      {
        filter->Update();
        ADD_FAILURE() << "bad input passed silently: " << c.second;
      }
      catch (const itk::ExceptionObject & e)
      {
        EXPECT_NE(std::string(e.GetDescription()).find(c.second), std::string::npos) << e.GetDescription();
      }
    }
  }
  auto empty = Image2::New();
  empty->SetRegions(MakeSize<Image2>({ 0, 0 }));
  empty->Allocate();
  auto filter = OurDiffeomorphic<Image2>::New();
  filter->SetFixedImage(empty);
  filter->SetMovingImage(Lung(2));
  EXPECT_THROW(filter->Update(), itk::ExceptionObject);
}

} // namespace
