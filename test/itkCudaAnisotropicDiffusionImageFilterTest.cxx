/*=========================================================================
 *  Tests of CudaGradientAnisotropicDiffusionImageFilter and
 *  CudaCurvatureAnisotropicDiffusionImageFilter: drop-ins for ITK's
 *  filters, compared with ITK's own filters (the reference) on ITK's example
 *  images, 5 iterations, in 2D and 3D:
 *  - CPU core: within 1e-6 of the range (ITK's arithmetic in double; the
 *    average gradient magnitude summed in another order);
 *  - GPU core: within 1e-5 of the range (the update in float); the
 *    curvature filter on an integer-valued image within ITK's own
 *    movement when one pixel in ten changes by one ulp (measured here,
 *    about 3e-5), where that is larger;
 *  and ITK's semantics: spacing, UseImageSpacing, the update interval, a
 *  fixed average gradient magnitude (exact pieces), zero iterations,
 *  integer input into float, NaN, an unstable time step (ITK's warning and
 *  ITK's result), MaximumRMSError, ElapsedIterations, the whole image.
 *=========================================================================*/
#include "CudaImageFiltersTestUtilities.h"
#include "itkCudaCurvatureAnisotropicDiffusionImageFilter.h"
#include "itkCudaGradientAnisotropicDiffusionImageFilter.h"
#include "itkCastImageFilter.h"
#include "itkOutputWindow.h"
#include "itkStreamingImageFilter.h"

#include <gtest/gtest.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

namespace
{
using namespace cif_test;
using Mode = itk::CudaExecutionMode;

/** The settings a test varies; the rest keep ITK's defaults. */
struct Settings
{
  unsigned int iterations{ 5 };
  double       timeStep{ -1.0 }; // < 0: ITK's default
  double       conductance{ 1.0 };
  unsigned int interval{ 1 };
  double       fixed{ -1.0 }; // < 0: not set
  bool         useSpacing{ true };
  double       maximumRMSError{ 0.0 };
};

template <typename TFilter>
void
Configure(TFilter * f, const Settings & s)
{
  f->SetNumberOfIterations(s.iterations);
  if (s.timeStep >= 0.0)
  {
    f->SetTimeStep(s.timeStep);
  }
  f->SetConductanceParameter(s.conductance);
  f->SetConductanceScalingUpdateInterval(s.interval);
  if (s.fixed >= 0.0)
  {
    f->SetFixedAverageGradientMagnitude(s.fixed);
  }
  f->SetUseImageSpacing(s.useSpacing);
  f->SetMaximumRMSError(s.maximumRMSError);
}

template <bool Curvature, typename TIn, typename TOut>
using ItkFilter = std::conditional_t<Curvature,
                                     itk::CurvatureAnisotropicDiffusionImageFilter<TIn, TOut>,
                                     itk::GradientAnisotropicDiffusionImageFilter<TIn, TOut>>;
template <bool Curvature, typename TIn, typename TOut>
using OurFilter = std::conditional_t<Curvature,
                                     itk::CudaCurvatureAnisotropicDiffusionImageFilter<TIn, TOut>,
                                     itk::CudaGradientAnisotropicDiffusionImageFilter<TIn, TOut>>;

template <bool Curvature, typename TIn, typename TOut>
typename TOut::Pointer
Itk(const TIn * input, const Settings & s)
{
  auto f = ItkFilter<Curvature, TIn, TOut>::New();
  f->SetInput(input);
  Configure(f.GetPointer(), s);
  f->Update();
  return TakeOutput(f.GetPointer());
}

template <bool Curvature, typename TIn, typename TOut>
typename TOut::Pointer
Ours(const TIn * input, const Settings & s, Mode mode, itk::CudaExecutedOn * ranOn = nullptr,
     itk::IdentifierType * elapsed = nullptr)
{
  auto f = OurFilter<Curvature, TIn, TOut>::New();
  f->SetInput(input);
  Configure(f.GetPointer(), s);
  f->SetExecutionMode(mode);
  f->Update();
  if (ranOn)
  {
    *ranOn = f->GetLastExecutedOn();
  }
  if (elapsed)
  {
    *elapsed = f->GetElapsedIterations();
  }
  return TakeOutput(f.GetPointer());
}

/** ITK's example image, cast to float (as the examples read it). */
template <typename TImage>
typename TImage::Pointer
RealImage(const std::string & name)
{
  using UChar = itk::Image<unsigned char, TImage::ImageDimension>;
  auto cast = itk::CastImageFilter<UChar, TImage>::New();
  auto in = ReadImage<UChar>(ExampleData(name));
  cast->SetInput(in);
  cast->Update();
  return TakeOutput(cast.GetPointer());
}

using Float2 = itk::Image<float, 2>;
using Float3 = itk::Image<float, 3>;
using Double2 = itk::Image<double, 2>;
using UChar2 = itk::Image<unsigned char, 2>;

/** Compare ours with ITK's, relative to the range of ITK's result. */
template <bool Curvature, typename TIn, typename TOut>
void
ExpectLikeItk(const TIn * input, const Settings & s, Mode mode, double tolerance, const std::string & what)
{
  const auto   reference = Itk<Curvature, TIn, TOut>(input, s);
  itk::CudaExecutedOn ranOn{};
  itk::IdentifierType elapsed = 0;
  const auto   ours = Ours<Curvature, TIn, TOut>(input, s, mode, &ranOn, &elapsed);
  const double range = std::max(DynamicRange(reference.GetPointer()), 1e-30);
  const double difference = MaxAbsDifference(ours.GetPointer(), reference.GetPointer());
  std::printf("  %s (%s, %s): max |ours - ITK| = %.3g of the range\n", what.c_str(), Curvature ? "curvature" : "gradient",
              mode == Mode::GPU ? "GPU" : "CPU", difference / range);
  EXPECT_LE(difference, tolerance * range) << what << (Curvature ? " (curvature)" : " (gradient)") << ": range " << range;
  EXPECT_EQ(ranOn, mode == Mode::GPU ? itk::CudaExecutedOn::GPU : itk::CudaExecutedOn::CPU) << what;
  EXPECT_EQ(ours->GetSpacing(), reference->GetSpacing());
  EXPECT_EQ(ours->GetOrigin(), reference->GetOrigin());
  EXPECT_EQ(ours->GetLargestPossibleRegion(), reference->GetLargestPossibleRegion());
  EXPECT_EQ(elapsed, s.maximumRMSError > 0.0 && s.iterations > 1 ? 1u : s.iterations) << what;
  // the result moved: the comparison is not between two copies of the input
  if (s.iterations > 0 && s.conductance != 0.0)
  {
    auto cast = itk::CastImageFilter<TIn, TOut>::New();
    cast->SetInput(input);
    cast->Update();
    EXPECT_GT(MaxAbsDifference(cast->GetOutput(), reference.GetPointer()), 100 * tolerance * range) << what;
  }
}

/** How far ITK's own 5-iteration curvature result moves (relative to its
 * range) when every tenth pixel of its first iteration's output is one ulp
 * higher. On integer-valued images, a face that is flat to the last bit has
 * ITK's normalised flux g / sqrt(1e-10 + |grad|^2) = 0, and one ulp on
 * either side turns it into a number of order one, which the upwind
 * gradient carries into the pixel. The GPU's float arithmetic differs from
 * ITK's double arithmetic by one ulp in about one pixel in ten after the
 * first iteration, so this is the scale of the differences that no float
 * implementation can avoid there. */
template <typename TIn>
double
ItkOneUlpSensitivity(const TIn * input)
{
  Settings one;
  one.iterations = 1;
  Settings rest;
  rest.iterations = 4;
  const auto first = Itk<true, TIn, Float2>(input, one);
  auto       moved = Float2::New();
  moved->CopyInformation(first);
  moved->SetRegions(first->GetLargestPossibleRegion());
  moved->Allocate();
  const auto n = first->GetLargestPossibleRegion().GetNumberOfPixels();
  for (itk::SizeValueType i = 0; i < n; ++i)
  {
    const float v = first->GetBufferPointer()[i];
    moved->GetBufferPointer()[i] = i % 10 == 3 ? std::nextafter(v, std::numeric_limits<float>::infinity()) : v;
  }
  const auto a = Itk<true, Float2, Float2>(first.GetPointer(), rest);
  const auto b = Itk<true, Float2, Float2>(moved.GetPointer(), rest);
  return MaxAbsDifference(a.GetPointer(), b.GetPointer()) / std::max(DynamicRange(a.GetPointer()), 1e-30);
}

/** The settings of the cases every device runs. */
std::vector<std::pair<std::string, Settings>>
Cases()
{
  std::vector<std::pair<std::string, Settings>> cases;
  cases.push_back({ "defaults, 5 iterations", Settings{} });
  Settings s;
  s.conductance = 3.0;
  s.interval = 2;
  cases.push_back({ "conductance 3, interval 2", s });
  s = Settings{};
  s.fixed = 4.0;
  cases.push_back({ "fixed average gradient magnitude 4", s });
  s = Settings{};
  s.useSpacing = false;
  s.timeStep = 0.05;
  cases.push_back({ "no image spacing, time step 0.05", s });
  s = Settings{};
  s.maximumRMSError = 0.01;
  cases.push_back({ "MaximumRMSError 0.01 (ITK stops after one iteration)", s });
  return cases;
}

template <bool Curvature>
void
RunCases(Mode mode, double tolerance)
{
  auto slice = RealImage<Float2>("BrainProtonDensitySlice.png");
  // anisotropic spacing, so UseImageSpacing matters
  Float2::SpacingType spacing;
  spacing[0] = 1.0;
  spacing[1] = 1.6;
  slice->SetSpacing(spacing);
  auto volume = RealImage<Float3>("KmeansTest_T1UCharRaw.nii.gz");
  for (const auto & c : Cases())
  {
    ExpectLikeItk<Curvature, Float2, Float2>(slice.GetPointer(), c.second, mode, tolerance, "2D, " + c.first);
  }
  ExpectLikeItk<Curvature, Float3, Float3>(volume.GetPointer(), Settings{}, mode, tolerance, "3D, defaults");
  Settings fixed;
  fixed.fixed = 2.0;
  fixed.iterations = 3;
  ExpectLikeItk<Curvature, Float3, Float3>(volume.GetPointer(), fixed, mode, tolerance, "3D, fixed");
  // integers into float, as ITK computes them; the curvature filter on the GPU is held to ITK's own
  // sensitivity to one-ulp differences where that is larger than the tolerance (see ItkOneUlpSensitivity)
  auto   uchar = ReadImage<UChar2>(ExampleData("BrainProtonDensitySlice.png"));
  double integerTolerance = tolerance;
  if (Curvature && mode == Mode::GPU)
  {
    const double sensitivity = ItkOneUlpSensitivity(uchar.GetPointer());
    std::printf("  2D uchar -> float: ITK's own result moves by %.3g of the range with one ulp in every tenth pixel\n",
                sensitivity);
    EXPECT_GT(sensitivity, 0.0);
    integerTolerance = std::max(tolerance, sensitivity);
  }
  ExpectLikeItk<Curvature, UChar2, Float2>(uchar.GetPointer(), Settings{}, mode, integerTolerance, "2D uchar -> float");
}

TEST(AnisotropicDiffusion, GradientMatchesItkOnTheCpu)
{
  RunCases<false>(Mode::CPU, 0.0); // ITK-exact on these images
}
TEST(AnisotropicDiffusion, CurvatureMatchesItkOnTheCpu)
{
  RunCases<true>(Mode::CPU, 0.0);
}
TEST(AnisotropicDiffusionGpu, GradientMatchesItkOnTheGpu)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  RunCases<false>(Mode::GPU, 1e-5);
}
TEST(AnisotropicDiffusionGpu, CurvatureMatchesItkOnTheGpu)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  RunCases<true>(Mode::GPU, 1e-5);
}

/** Double images: ITK's arithmetic in double on the CPU, closer still. */
TEST(AnisotropicDiffusion, DoubleImagesMatchItkOnTheCpu)
{
  auto slice = RandomImage<Double2>(MakeSize<Double2>({ 61, 47 }), -50.0, 200.0, 7);
  ExpectLikeItk<false, Double2, Double2>(slice.GetPointer(), Settings{}, Mode::CPU, 1e-12, "double gradient");
  ExpectLikeItk<true, Double2, Double2>(slice.GetPointer(), Settings{}, Mode::CPU, 1e-12, "double curvature");
}
TEST(AnisotropicDiffusionGpu, DoubleImagesMatchItkOnTheGpu)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto slice = RandomImage<Double2>(MakeSize<Double2>({ 61, 47 }), -50.0, 200.0, 7);
  ExpectLikeItk<false, Double2, Double2>(slice.GetPointer(), Settings{}, Mode::GPU, 1e-12, "double gradient");
  ExpectLikeItk<true, Double2, Double2>(slice.GetPointer(), Settings{}, Mode::GPU, 1e-12, "double curvature");
}

/** Zero iterations: the input cast; conductance 0: no change either. */
TEST(AnisotropicDiffusion, ZeroIterationsAndZeroConductanceKeepTheInput)
{
  auto uchar = ReadImage<UChar2>(ExampleData("BrainProtonDensitySlice.png"));
  for (Mode mode : { Mode::CPU, Mode::Automatic })
  {
    Settings none;
    none.iterations = 0;
    auto out = Ours<false, UChar2, Float2>(uchar.GetPointer(), none, mode);
    EXPECT_EQ(MaxAbsDifference(uchar.GetPointer(), out.GetPointer()), 0.0);
    Settings zero;
    zero.conductance = 0.0;
    out = Ours<true, UChar2, Float2>(uchar.GetPointer(), zero, mode);
    EXPECT_EQ(MaxAbsDifference(uchar.GetPointer(), out.GetPointer()), 0.0);
    EXPECT_EQ(MaxAbsDifference(out.GetPointer(), Itk<true, UChar2, Float2>(uchar.GetPointer(), zero).GetPointer()), 0.0);
  }
}

/** NaN: ITK's average gradient becomes NaN and with it every pixel. */
TEST(AnisotropicDiffusion, NaNSpreadsAsInItk)
{
  auto slice = RealImage<Float2>("BrainProtonDensitySlice.png");
  Float2::IndexType at{ { 100, 120 } };
  slice->SetPixel(at, std::numeric_limits<float>::quiet_NaN());
  for (Mode mode : { Mode::CPU, Mode::Automatic })
  {
    const auto reference = Itk<false, Float2, Float2>(slice.GetPointer(), Settings{});
    const auto ours = Ours<false, Float2, Float2>(slice.GetPointer(), Settings{}, mode);
    EXPECT_EQ(CountNonFinite(reference.GetPointer()), CountNonFinite(ours.GetPointer()));
    EXPECT_EQ(CountNonFinite(ours.GetPointer()), slice->GetLargestPossibleRegion().GetNumberOfPixels());
    // with a fixed average, NaN reaches as far as the iterations do, as in ITK
    Settings fixed;
    fixed.fixed = 5.0;
    const auto referenceFixed = Itk<true, Float2, Float2>(slice.GetPointer(), fixed);
    const auto oursFixed = Ours<true, Float2, Float2>(slice.GetPointer(), fixed, mode);
    EXPECT_GT(CountNonFinite(referenceFixed.GetPointer()), 1u);
    EXPECT_LT(CountNonFinite(referenceFixed.GetPointer()), 200u);
    EXPECT_FALSE(std::isnan(MaxAbsDifference(oursFixed.GetPointer(), referenceFixed.GetPointer())))
      << "NaN at other pixels than ITK's";
  }
}

/** Collects ITK's warnings. */
class WarningCollector : public itk::OutputWindow
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(WarningCollector);
  using Self = WarningCollector;
  using Pointer = itk::SmartPointer<Self>;
  itkNewMacro(Self);
  void
  DisplayText(const char * text) override
  {
    m_Text += text;
  }
  void
  DisplayWarningText(const char * text) override
  {
    m_Text += text;
  }
  std::string m_Text;

protected:
  WarningCollector() = default;
};

/** An unstable time step: ITK's warning, and ITK's (unstable) result. */
TEST(AnisotropicDiffusion, UnstableTimeStepWarnsAndGivesItksResult)
{
  auto slice = RealImage<Float2>("BrainProtonDensitySlice.png");
  Settings s;
  s.timeStep = 0.3; // above 1 / 2^3
  auto previous = itk::OutputWindow::GetInstance();
  auto collector = WarningCollector::New();
  itk::OutputWindow::SetInstance(collector);
  const bool display = itk::Object::GetGlobalWarningDisplay();
  itk::Object::GlobalWarningDisplayOn();
  const auto reference = Itk<false, Float2, Float2>(slice.GetPointer(), s);
  collector->m_Text.clear();
  const auto ours = Ours<false, Float2, Float2>(slice.GetPointer(), s, Mode::CPU);
  const std::string warned = collector->m_Text;
  collector->m_Text.clear();
  Settings stable;
  stable.timeStep = 0.1;
  Ours<false, Float2, Float2>(slice.GetPointer(), stable, Mode::CPU);
  const std::string quiet = collector->m_Text;
  itk::OutputWindow::SetInstance(previous);
  itk::Object::SetGlobalWarningDisplay(display);
  EXPECT_NE(warned.find("unstable time step"), std::string::npos) << warned;
  EXPECT_NE(warned.find("0.125"), std::string::npos) << "the stable limit 1/8 is named: " << warned;
  EXPECT_EQ(quiet, "");
  const double range = DynamicRange(reference.GetPointer());
  EXPECT_LE(MaxAbsDifference(ours.GetPointer(), reference.GetPointer()), 1e-6 * range);
}

/** With a fixed average gradient magnitude a streamed output equals the
 * whole one (the input requested region is padded by the iterations);
 * without one the filter asks for the whole image. */
TEST(AnisotropicDiffusion, StreamingIsExactWithAFixedAverage)
{
  auto volume = RealImage<Float3>("KmeansTest_T1UCharRaw.nii.gz");
  for (Mode mode : { Mode::CPU, Mode::Automatic })
  {
    for (bool fixedAverage : { true, false })
    {
      Settings s;
      s.iterations = 3;
      if (fixedAverage)
      {
        s.fixed = 3.0;
      }
      const auto whole = Ours<false, Float3, Float3>(volume.GetPointer(), s, mode);
      auto       f = itk::CudaGradientAnisotropicDiffusionImageFilter<Float3, Float3>::New();
      f->SetInput(volume);
      Configure(f.GetPointer(), s);
      f->SetExecutionMode(mode);
      auto streamer = itk::StreamingImageFilter<Float3, Float3>::New();
      streamer->SetInput(f->GetOutput());
      streamer->SetNumberOfStreamDivisions(4);
      streamer->Update();
      EXPECT_EQ(MaxAbsDifference(streamer->GetOutput(), whole.GetPointer()), 0.0) << "fixed " << fixedAverage;
    }
  }
}

/** Invalid settings: an itk::ExceptionObject, no crash. */
TEST(AnisotropicDiffusion, InvalidSettingsThrow)
{
  auto slice = RealImage<Float2>("BrainProtonDensitySlice.png");
  auto f = itk::CudaGradientAnisotropicDiffusionImageFilter<Float2, Float2>::New();
  f->SetInput(slice);
  f->SetExecutionMode(Mode::CPU);
  f->SetConductanceScalingUpdateInterval(0); // ITK divides by it
  EXPECT_THROW(f->Update(), itk::ExceptionObject);
  f->SetConductanceScalingUpdateInterval(1);
  f->SetTimeStep(std::numeric_limits<double>::quiet_NaN());
  EXPECT_THROW(f->Update(), itk::ExceptionObject);
  f->SetTimeStep(0.1);
  auto empty = Float2::New();
  Float2::RegionType none;
  empty->SetRegions(none);
  empty->Allocate();
  f->SetInput(empty);
  EXPECT_THROW(f->Update(), itk::ExceptionObject);
}

/** Other instantiations run ITK's filter, and the report says so. */
TEST(AnisotropicDiffusion, OtherTypesRunItksFilter)
{
  using Double3 = itk::Image<double, 3>;
  using FloatIn = itk::Image<float, 2>;
  auto f = itk::CudaGradientAnisotropicDiffusionImageFilter<FloatIn, Double2>::New();
  EXPECT_NE(f->GetCoreUnsupportedReason(), "");
  auto slice = RealImage<Float2>("BrainProtonDensitySlice.png");
  f->SetInput(slice);
  f->SetNumberOfIterations(2);
  f->Update();
  const auto reference = Itk<false, Float2, Double2>(slice.GetPointer(), [] { Settings s; s.iterations = 2; return s; }());
  EXPECT_EQ(MaxAbsDifference(f->GetOutput(), reference.GetPointer()), 0.0);
  (void)sizeof(Double3);
}

} // namespace
