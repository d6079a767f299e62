/*=========================================================================
 *  Tests of CudaBSplineDecompositionImageFilter (CPU and GPU paths).
 *
 *  References: ITK's own itk::BSplineDecompositionImageFilter, and an
 *  independent float64 solution of the interpolation condition
 *  (c[i-1] + 4 c[i] + c[i+1]) / 6 = s[i] with mirror ends, solved per line by
 *  tridiagonal elimination (no recursion, no poles).
 *
 *  Tolerances (stated in the class documentation and docs/BSplinePrefilter.md):
 *  - float output, recursive, CPU or GPU vs ITK: max |diff| <= 1e-6 x input range;
 *  - float output, FIR, GPU vs CPU: <= 1e-6 x input range;
 *  - double output vs the float64 reference: <= 1e-9 x input range
 *    (ITK's causal initialisation truncates at 1e-10);
 *  - FIR with half-width K vs the exact coefficients: <= D 3^(D-1) 4 B(K) max|s|,
 *    B(K) = 2 sqrt(3) |z|^(K+1) / (1 - |z|) (see cifBSplinePrefilter.h).
 *=========================================================================*/
#include "CudaImageFiltersTestUtilities.h"
#include "cif/BSplinePrefilter.h"
#include "itkBSplineDecompositionImageFilter.h"
#include "itkBSplineInterpolateImageFunction.h"
#include "itkCudaBSplineDecompositionImageFilter.h"
#include "itkCudaBSplineDecompositionImageFilterFactory.h"
#include "itkCudaFilterImage.h"
#include "itkStreamingImageFilter.h"

#include <gtest/gtest.h>
#include <vector>

namespace
{
using namespace cif_test;
using Method = itk::CudaBSplinePrefilterMethod;
using Mode = itk::CudaExecutionMode;

using F2 = itk::Image<float, 2>;
using F3 = itk::Image<float, 3>;
using D2 = itk::Image<double, 2>;
using D3 = itk::Image<double, 3>;
using UC2 = itk::Image<unsigned char, 2>;
using UC3 = itk::Image<unsigned char, 3>;

template <typename TIn, typename TOut = itk::Image<float, TIn::ImageDimension>>
typename TOut::Pointer
RunOurs(const TIn *           input,
        Mode                  mode,
        Method                method = Method::Recursive,
        int                   firHalfWidth = -1,
        unsigned int          order = 3,
        itk::CudaExecutedOn * ranOn = nullptr)
{
  auto filter = itk::CudaBSplineDecompositionImageFilter<TIn, TOut>::New();
  filter->SetInput(input);
  filter->SetExecutionMode(mode);
  filter->SetMethod(method);
  filter->SetSplineOrder(order);
  if (firHalfWidth >= 0)
  {
    filter->SetFIRHalfWidth(static_cast<unsigned>(firHalfWidth));
  }
  filter->Update();
  if (ranOn)
  {
    *ranOn = filter->GetLastExecutedOn();
  }
  return TakeOutput(filter.GetPointer());
}

template <typename TIn, typename TOut = itk::Image<float, TIn::ImageDimension>>
typename TOut::Pointer
RunITK(const TIn * input, unsigned int order = 3)
{
  auto filter = itk::BSplineDecompositionImageFilter<TIn, TOut>::New();
  filter->SetInput(input);
  filter->SetSplineOrder(order);
  filter->Update();
  return TakeOutput(filter.GetPointer());
}

// ---------------------------------------------------------------------------
// Independent float64 reference.
/** Applies `lineOp` to every line along every axis of a row-major volume. */
template <typename TLineOp>
void
ForEachLine(std::vector<double> & data, const std::vector<std::size_t> & size, TLineOp lineOp)
{
  std::size_t stride = 1;
  for (std::size_t axis = 0; axis < size.size(); ++axis)
  {
    const std::size_t   n = size[axis];
    const std::size_t   total = data.size();
    std::vector<double> line(n);
    for (std::size_t start = 0; start < total; ++start)
    {
      if ((start / stride) % n != 0)
      {
        continue; // not the first sample of a line along this axis
      }
      for (std::size_t i = 0; i < n; ++i)
      {
        line[i] = data[start + i * stride];
      }
      lineOp(line);
      for (std::size_t i = 0; i < n; ++i)
      {
        data[start + i * stride] = line[i];
      }
    }
    stride *= n;
  }
}

/** Solves (c[i-1] + 4 c[i] + c[i+1]) / 6 = s[i], c[-1] = c[1], c[n] = c[n-2]. */
void
SolveInterpolationCondition(std::vector<double> & s)
{
  const std::size_t n = s.size();
  if (n < 2)
  {
    return; // ITK leaves length-1 lines unchanged
  }
  std::vector<double> a(n, 1.0), b(n, 4.0), c(n, 1.0);
  c[0] = 2.0;
  a[n - 1] = 2.0;
  std::vector<double> rhs(n);
  for (std::size_t i = 0; i < n; ++i)
  {
    rhs[i] = 6.0 * s[i];
  }
  for (std::size_t i = 1; i < n; ++i) // forward elimination
  {
    const double m = a[i] / b[i - 1];
    b[i] -= m * c[i - 1];
    rhs[i] -= m * rhs[i - 1];
  }
  s[n - 1] = rhs[n - 1] / b[n - 1];
  for (std::size_t i = n - 1; i-- > 0;)
  {
    s[i] = (rhs[i] - c[i] * s[i + 1]) / b[i];
  }
}

/** Evaluates the cubic spline at the samples: (c[i-1] + 4 c[i] + c[i+1]) / 6, mirror ends. */
void
EvaluateAtSamples(std::vector<double> & c)
{
  const std::size_t n = c.size();
  if (n < 2)
  {
    return;
  }
  std::vector<double> s(n);
  for (std::size_t i = 0; i < n; ++i)
  {
    const double left = c[i == 0 ? 1 : i - 1];
    const double right = c[i + 1 == n ? n - 2 : i + 1];
    s[i] = (left + 4.0 * c[i] + right) / 6.0;
  }
  c = s;
}

template <typename TImage>
std::vector<std::size_t>
SizeOf(const TImage * image)
{
  std::vector<std::size_t> size;
  for (unsigned d = 0; d < TImage::ImageDimension; ++d)
  {
    size.push_back(image->GetBufferedRegion().GetSize(d));
  }
  return size;
}

template <typename TIn>
std::vector<double>
ReferenceCoefficients(const TIn * input)
{
  auto data = ToVector(input);
  ForEachLine(data, SizeOf(input), SolveInterpolationCondition);
  return data;
}

template <typename TImage>
double
MaxAbsDifferenceTo(const TImage * image, const std::vector<double> & reference)
{
  double      worst = 0.0;
  std::size_t i = 0;
  for (itk::ImageRegionConstIterator<TImage> it(image, image->GetBufferedRegion()); !it.IsAtEnd(); ++it, ++i)
  {
    const double d = std::fabs(static_cast<double>(it.Get()) - reference[i]);
    worst = std::isnan(d) ? INFINITY : std::max(worst, d);
  }
  return worst;
}

double
MaxMagnitude(const std::vector<double> & v)
{
  double m = 0.0;
  for (double x : v)
  {
    m = std::max(m, std::fabs(x));
  }
  return m;
}

constexpr double kFloatTolerance = 1e-6; // x dynamic range, documented

// ===========================================================================
// CPU path (runs everywhere, CI included)
// ===========================================================================

TEST(BSplinePrefilterCpu, ReferenceSolverIsConsistent)
{
  // The reference must itself satisfy the interpolation condition.
  auto input = RandomImage<D3>(MakeSize<D3>({ 9, 4, 6 }), -50.0, 80.0, 1);
  auto coefficients = ReferenceCoefficients(input.GetPointer());
  ForEachLine(coefficients, SizeOf(input.GetPointer()), EvaluateAtSamples);
  EXPECT_LE(MaxAbsDifferenceTo(input.GetPointer(), coefficients), 1e-11);
}

TEST(BSplinePrefilterCpu, DoubleMatchesFloat64Reference)
{
  for (auto size : { MakeSize<D3>({ 20, 13, 9 }), MakeSize<D3>({ 5, 3, 2 }), MakeSize<D3>({ 40, 2, 19 }) })
  {
    auto         input = RandomImage<D3>(size, -100.0, 100.0, 2);
    auto         ours = RunOurs<D3, D3>(input.GetPointer(), Mode::CPU);
    const double range = DynamicRange(input.GetPointer());
    EXPECT_LE(MaxAbsDifferenceTo(ours.GetPointer(), ReferenceCoefficients(input.GetPointer())), 1e-9 * range)
      << "size " << size;
    // and the coefficients reproduce the samples
    auto reconstructed = ToVector(ours.GetPointer());
    ForEachLine(reconstructed, SizeOf(input.GetPointer()), EvaluateAtSamples);
    EXPECT_LE(MaxAbsDifferenceTo(input.GetPointer(), reconstructed), 1e-9 * range);
  }
}

TEST(BSplinePrefilterCpu, FloatMatchesItkOnSyntheticImages)
{
  for (auto size : { MakeSize<F3>({ 31, 22, 17 }), MakeSize<F3>({ 5, 3, 9 }), MakeSize<F3>({ 64, 1, 7 }) })
  {
    auto input = RandomImage<F3>(size, 0.0, 1000.0, 3);
    auto ours = RunOurs<F3>(input.GetPointer(), Mode::CPU);
    auto itk = RunITK<F3>(input.GetPointer());
    EXPECT_LE(MaxAbsDifference(ours.GetPointer(), itk.GetPointer()), kFloatTolerance * DynamicRange(input.GetPointer()))
      << "size " << size;
  }
  auto smooth = SmoothImage<F2>(MakeSize<F2>({ 300, 211 }));
  auto ours = RunOurs<F2>(smooth.GetPointer(), Mode::CPU);
  auto itk = RunITK<F2>(smooth.GetPointer());
  EXPECT_LE(MaxAbsDifference(ours.GetPointer(), itk.GetPointer()), kFloatTolerance * DynamicRange(smooth.GetPointer()));
}

TEST(BSplinePrefilterCpu, MatchesItkOnRealImages)
{
  auto slice = ReadImage<UC2>(ExampleData("BrainProtonDensitySlice.png"));
  auto ours2 = RunOurs<UC2>(slice.GetPointer(), Mode::CPU);
  auto itk2 = RunITK<UC2>(slice.GetPointer());
  EXPECT_LE(MaxAbsDifference(ours2.GetPointer(), itk2.GetPointer()),
            kFloatTolerance * DynamicRange(slice.GetPointer()));

  auto volume = ReadImage<UC3>(ExampleData("KmeansTest_T1UCharRaw.nii.gz"));
  auto ours3 = RunOurs<UC3>(volume.GetPointer(), Mode::CPU);
  auto itk3 = RunITK<UC3>(volume.GetPointer());
  EXPECT_LE(MaxAbsDifference(ours3.GetPointer(), itk3.GetPointer()),
            kFloatTolerance * DynamicRange(volume.GetPointer()));
  // geometry is carried over
  EXPECT_EQ(ours3->GetSpacing(), volume->GetSpacing());
  EXPECT_EQ(ours3->GetOrigin(), volume->GetOrigin());
  EXPECT_EQ(ours3->GetDirection(), volume->GetDirection());
}

TEST(BSplinePrefilterCpu, IntegerInputsMatchItk)
{
  using S3 = itk::Image<short, 3>;
  using US3 = itk::Image<unsigned short, 3>;
  auto s = RandomImage<S3>(MakeSize<S3>({ 17, 12, 8 }), -3000, 3000, 4);
  auto u = RandomImage<US3>(MakeSize<US3>({ 17, 12, 8 }), 0, 60000, 5);
  EXPECT_LE(
    MaxAbsDifference(RunOurs<S3>(s.GetPointer(), Mode::CPU).GetPointer(), RunITK<S3>(s.GetPointer()).GetPointer()),
    kFloatTolerance * DynamicRange(s.GetPointer()));
  EXPECT_LE(
    MaxAbsDifference(RunOurs<US3>(u.GetPointer(), Mode::CPU).GetPointer(), RunITK<US3>(u.GetPointer()).GetPointer()),
    kFloatTolerance * DynamicRange(u.GetPointer()));
}

TEST(BSplinePrefilterCpu, OtherSplineOrdersMatchItk)
{
  auto input = RandomImage<D2>(MakeSize<D2>({ 33, 21 }), -10.0, 10.0, 6);
  for (unsigned order : { 0u, 1u, 2u, 4u, 5u })
  {
    auto ours = RunOurs<D2, D2>(input.GetPointer(), Mode::Automatic, Method::Recursive, -1, order);
    auto itk = RunITK<D2, D2>(input.GetPointer(), order);
    EXPECT_LE(MaxAbsDifference(ours.GetPointer(), itk.GetPointer()), 1e-12 * DynamicRange(input.GetPointer()))
      << "order " << order;
  }
}

TEST(BSplinePrefilterCpu, FIRErrorWithinDocumentedBound)
{
  auto         input = RandomImage<D3>(MakeSize<D3>({ 40, 30, 20 }), -100.0, 100.0, 7);
  const auto   exact = ReferenceCoefficients(input.GetPointer());
  const double maxInput = MaxMagnitude(ToVector(input.GetPointer()));
  double       previous = INFINITY;
  for (int k : { 3, 5, 7, 10, 13 })
  {
    auto         fir = RunOurs<D3, D3>(input.GetPointer(), Mode::CPU, Method::FIR, k);
    const double error = MaxAbsDifferenceTo(fir.GetPointer(), exact);
    const double bound = 3 * 9 * 4 * cif::CubicFIRTruncationBound(k) * maxInput;
    EXPECT_LE(error, bound) << "K = " << k;
    EXPECT_LT(error, previous) << "the error must fall as K grows (K = " << k << ")";
    previous = error;
  }
  // the default reaches float32-level agreement
  auto fir = RunOurs<D3, D3>(input.GetPointer(), Mode::CPU, Method::FIR);
  EXPECT_LE(MaxAbsDifferenceTo(fir.GetPointer(), exact), 1e-6 * DynamicRange(input.GetPointer()));
}

TEST(BSplinePrefilterCpu, FIRHalfWidthFollowsTolerance)
{
  auto filter = itk::CudaBSplineDecompositionImageFilter<F2, F2>::New();
  EXPECT_EQ(filter->GetFIRHalfWidth(), 13u); // default tolerance 1e-7
  filter->SetFIRHalfWidth(7);
  EXPECT_EQ(filter->GetFIRHalfWidth(), 7u);
  filter->SetFIRTolerance(1e-3);
  EXPECT_EQ(filter->GetFIRHalfWidth(), static_cast<unsigned>(cif::CubicFIRHalfWidthForTolerance(1e-3)));
  EXPECT_LE(cif::CubicFIRTruncationBound(cif::CubicFIRHalfWidthForTolerance(1e-3)), 1e-3);
  EXPECT_GT(cif::CubicFIRTruncationBound(cif::CubicFIRHalfWidthForTolerance(1e-3) - 1), 1e-3);
  // taps sum to one and follow sqrt(3) z^|k| up to the normalisation
  const auto taps = cif::CubicFIRTaps(7);
  double     sum = taps[0];
  for (int k = 1; k <= 7; ++k)
  {
    sum += 2 * taps[k];
    EXPECT_NEAR(taps[k] / taps[k - 1], std::sqrt(3.0) - 2.0, 1e-14);
  }
  EXPECT_NEAR(sum, 1.0, 1e-15);
}

TEST(BSplinePrefilterCpu, FIRStreamsWithAHalo)
{
  auto input = RandomImage<F3>(MakeSize<F3>({ 48, 40, 36 }), 0.0, 255.0, 8);
  auto whole = RunOurs<F3>(input.GetPointer(), Mode::CPU, Method::FIR, 7);

  using Filter = itk::CudaBSplineDecompositionImageFilter<F3, F3>;
  auto filter = Filter::New();
  filter->SetInput(input);
  filter->SetMethod(Method::FIR);
  filter->SetFIRHalfWidth(7);
  filter->SetExecutionMode(Mode::CPU);
  // The input requested region is the output requested region grown by K.
  F3::RegionType piece({ 10, 12, 14 }, { 8, 9, 10 });
  filter->GetOutput()->SetRequestedRegion(piece);
  filter->GetOutput()->UpdateOutputInformation();
  filter->GetOutput()->PropagateRequestedRegion();
  F3::RegionType expected({ 3, 5, 7 }, { 22, 23, 24 });
  EXPECT_EQ(input->GetRequestedRegion(), expected);

  auto streamer = itk::StreamingImageFilter<F3, F3>::New();
  streamer->SetInput(filter->GetOutput());
  streamer->SetNumberOfStreamDivisions(5);
  streamer->Update();
  EXPECT_EQ(MaxAbsDifference(streamer->GetOutput(), whole.GetPointer()), 0.0);
}

TEST(BSplinePrefilterCpu, AxisOfLengthOneIsLeftAlone)
{
  auto column = RandomImage<F2>(MakeSize<F2>({ 1, 50 }), -5.0, 5.0, 9);
  EXPECT_LE(MaxAbsDifference(RunOurs<F2>(column.GetPointer(), Mode::CPU).GetPointer(),
                             RunITK<F2>(column.GetPointer()).GetPointer()),
            kFloatTolerance * DynamicRange(column.GetPointer()));
  auto single = RandomImage<F2>(MakeSize<F2>({ 1, 1 }), -5.0, 5.0, 10);
  EXPECT_EQ(MaxAbsDifference(RunOurs<F2>(single.GetPointer(), Mode::CPU).GetPointer(), single.GetPointer()), 0.0);
  EXPECT_EQ(
    MaxAbsDifference(RunOurs<F2>(single.GetPointer(), Mode::CPU, Method::FIR).GetPointer(), single.GetPointer()), 0.0);
}

TEST(BSplinePrefilterCpu, NonFiniteInputPropagatesAsInItk)
{
  auto input = RandomImage<F2>(MakeSize<F2>({ 40, 30 }), 0.0, 1.0, 11);
  input->SetPixel({ 12, 9 }, NAN);
  auto itk = RunITK<F2>(input.GetPointer());
  auto ours = RunOurs<F2>(input.GetPointer(), Mode::CPU);
  EXPECT_EQ(CountNonFinite(ours.GetPointer()), CountNonFinite(itk.GetPointer()));
  EXPECT_EQ(CountNonFinite(ours.GetPointer()), 40u * 30u); // the recursion reaches every line through the NaN

  auto fir = RunOurs<F2>(input.GetPointer(), Mode::CPU, Method::FIR, 5);
  EXPECT_EQ(CountNonFinite(fir.GetPointer()), 11u * 11u); // only the (2K+1)^2 neighbourhood
  input->SetPixel({ 12, 9 }, INFINITY);
  auto inf = RunOurs<F2>(input.GetPointer(), Mode::CPU);
  EXPECT_EQ(CountNonFinite(inf.GetPointer()), CountNonFinite(RunITK<F2>(input.GetPointer()).GetPointer()));
}

TEST(BSplinePrefilterCpu, EmptyImageThrows)
{
  auto input = F2::New();
  input->SetRegions(MakeSize<F2>({ 0, 5 }));
  input->Allocate();
  auto filter = itk::CudaBSplineDecompositionImageFilter<F2, F2>::New();
  filter->SetInput(input);
  EXPECT_THROW(filter->Update(), itk::ExceptionObject);
}

TEST(BSplinePrefilterCpu, InvalidParametersThrow)
{
  auto filter = itk::CudaBSplineDecompositionImageFilter<F2, F2>::New();
  EXPECT_THROW(filter->SetFIRHalfWidth(33), itk::ExceptionObject);
  EXPECT_THROW(filter->SetFIRTolerance(0.0), itk::ExceptionObject);
  EXPECT_THROW(filter->SetFIRTolerance(1.5), itk::ExceptionObject);
  EXPECT_THROW(filter->SetSplineOrder(6), itk::ExceptionObject);
  // the FIR is defined for cubic splines only
  filter->SetInput(RandomImage<F2>(MakeSize<F2>({ 8, 8 }), 0.0, 1.0, 12));
  filter->SetMethod(Method::FIR);
  filter->SetSplineOrder(2);
  EXPECT_THROW(filter->Update(), itk::ExceptionObject);
}

TEST(BSplinePrefilterCpu, GpuModeThrowsWhenImpossible)
{
  auto filter = itk::CudaBSplineDecompositionImageFilter<F2, F2>::New();
  filter->SetInput(RandomImage<F2>(MakeSize<F2>({ 8, 8 }), 0.0, 1.0, 13));
  filter->SetExecutionMode(Mode::GPU);
  filter->SetSplineOrder(4); // the GPU path is cubic only; without a GPU it is impossible anyway
  try
  {
    filter->Update();
    FAIL() << "expected an exception";
  }
  catch (const itk::ExceptionObject & e)
  {
    EXPECT_NE(std::string(e.GetDescription()).find("GPU execution was requested but is impossible"), std::string::npos)
      << e.GetDescription();
  }
  if (!cif::Runtime::IsDeviceAvailable())
  {
    filter->SetSplineOrder(3);
    EXPECT_THROW(filter->Update(), itk::ExceptionObject);
  }
}

TEST(BSplinePrefilterCpu, AutomaticModeReportsWhereItRan)
{
  auto input = RandomImage<F2>(MakeSize<F2>({ 16, 16 }), 0.0, 1.0, 14);
  auto filter = itk::CudaBSplineDecompositionImageFilter<F2, F2>::New();
  filter->SetInput(input);
  filter->SetExecutionMode(Mode::CPU);
  filter->Update();
  EXPECT_EQ(filter->GetLastExecutedOn(), itk::CudaExecutedOn::CPU);
  filter->SetExecutionMode(Mode::Automatic);
  filter->SetSplineOrder(2);
  filter->Update();
  EXPECT_EQ(filter->GetLastExecutedOn(), itk::CudaExecutedOn::CPU);
  EXPECT_NE(filter->GetLastExecutionReport().Message.find("because"), std::string::npos);
}

TEST(BSplinePrefilterCpu, InputIsNotModified)
{
  auto       input = RandomImage<F3>(MakeSize<F3>({ 12, 10, 8 }), 0.0, 1.0, 15);
  const auto before = ToVector(input.GetPointer());
  RunOurs<F3>(input.GetPointer(), Mode::Automatic);
  RunOurs<F3>(input.GetPointer(), Mode::Automatic, Method::FIR);
  EXPECT_EQ(ToVector(input.GetPointer()), before);
}

TEST(BSplinePrefilterCpu, FactoryReplacesItkFilter)
{
  itk::CudaBSplineDecompositionImageFilterFactory::RegisterOneFactory();
  auto created = itk::BSplineDecompositionImageFilter<F2, F2>::New();
  EXPECT_NE((dynamic_cast<itk::CudaBSplineDecompositionImageFilter<F2, F2> *>(created.GetPointer())), nullptr);

  // ITK's B-spline interpolator builds its coefficients through New(), so it
  // now uses our filter, with the same values.
  auto image = SmoothImage<F2>(MakeSize<F2>({ 40, 30 }));
  using Interpolator = itk::BSplineInterpolateImageFunction<F2, double, double>;
  auto interpolator = Interpolator::New();
  interpolator->SetSplineOrder(3);
  interpolator->SetInputImage(image);
  itk::ContinuousIndex<double, 2> point;
  point[0] = 17.3;
  point[1] = 11.8;
  const double withFactory = interpolator->EvaluateAtContinuousIndex(point);

  for (auto * factory : itk::ObjectFactoryBase::GetRegisteredFactories())
  {
    if (dynamic_cast<itk::CudaBSplineDecompositionImageFilterFactory *>(factory))
    {
      itk::ObjectFactoryBase::UnRegisterFactory(factory);
      break;
    }
  }
  auto plain = itk::BSplineDecompositionImageFilter<F2, F2>::New();
  EXPECT_EQ((dynamic_cast<itk::CudaBSplineDecompositionImageFilter<F2, F2> *>(plain.GetPointer())), nullptr);
  auto reference = Interpolator::New();
  reference->SetSplineOrder(3);
  reference->SetInputImage(image);
  EXPECT_NEAR(withFactory, reference->EvaluateAtContinuousIndex(point), 1e-6 * DynamicRange(image.GetPointer()));
}

TEST(BSplinePrefilterCpu, ReportsProgress)
{
  auto filter = itk::CudaBSplineDecompositionImageFilter<F3, F3>::New();
  filter->SetInput(RandomImage<F3>(MakeSize<F3>({ 16, 16, 16 }), 0.0, 1.0, 16));
  const std::vector<float> seen = UpdateCollectingProgress(filter);
  ASSERT_GE(seen.size(), 3u);
  EXPECT_FLOAT_EQ(seen.back(), 1.0f);
}

TEST(BSplinePrefilterCpu, PrintSelfNamesTheParameters)
{
  auto filter = itk::CudaBSplineDecompositionImageFilter<F2, F2>::New();
  filter->SetMethod(Method::FIR);
  std::ostringstream os;
  filter->Print(os);
  for (const char * word : { "Method: FIR", "FIRHalfWidth: 13", "ExecutionMode: Automatic", "Spline Order: 3" })
  {
    EXPECT_NE(os.str().find(word), std::string::npos) << word;
  }
}

// ===========================================================================
// GPU path (CTest label "gpu")
// ===========================================================================

TEST(BSplinePrefilterGpu, RecursiveMatchesItkOnSyntheticImages)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  // sizes exercise full tiles, partial tiles, short lines (n < 18), lines that
  // need smaller tiles (2049, 5000) and lines too long for shared memory (70000)
  for (auto size : { MakeSize<F3>({ 64, 48, 40 }),
                     MakeSize<F3>({ 37, 29, 23 }),
                     MakeSize<F3>({ 5, 3, 9 }),
                     MakeSize<F3>({ 2049, 3, 2 }),
                     MakeSize<F3>({ 3, 2049, 2 }),
                     MakeSize<F3>({ 40, 1, 33 }),
                     MakeSize<F3>({ 9, 5000, 2 }) })
  {
    auto                input = RandomImage<F3>(size, -500.0, 1000.0, 20);
    itk::CudaExecutedOn ranOn;
    auto                gpu = RunOurs<F3>(input.GetPointer(), Mode::GPU, Method::Recursive, -1, 3, &ranOn);
    EXPECT_EQ(ranOn, itk::CudaExecutedOn::GPU);
    auto itk = RunITK<F3>(input.GetPointer());
    EXPECT_LE(MaxAbsDifference(gpu.GetPointer(), itk.GetPointer()), kFloatTolerance * DynamicRange(input.GetPointer()))
      << "size " << size;
  }
  auto longLine = RandomImage<F2>(MakeSize<F2>({ 70000, 2 }), 0.0, 1.0, 21);
  EXPECT_LE(MaxAbsDifference(RunOurs<F2>(longLine.GetPointer(), Mode::GPU).GetPointer(),
                             RunITK<F2>(longLine.GetPointer()).GetPointer()),
            kFloatTolerance);
  auto smooth = SmoothImage<F2>(MakeSize<F2>({ 1024, 777 }));
  EXPECT_LE(MaxAbsDifference(RunOurs<F2>(smooth.GetPointer(), Mode::GPU).GetPointer(),
                             RunITK<F2>(smooth.GetPointer()).GetPointer()),
            kFloatTolerance * DynamicRange(smooth.GetPointer()));
}

TEST(BSplinePrefilterGpu, RecursiveMatchesItkOnRealImages)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto slice = ReadImage<UC2>(ExampleData("BrainProtonDensitySlice.png"));
  EXPECT_LE(MaxAbsDifference(RunOurs<UC2>(slice.GetPointer(), Mode::GPU).GetPointer(),
                             RunITK<UC2>(slice.GetPointer()).GetPointer()),
            kFloatTolerance * DynamicRange(slice.GetPointer()));
  auto volume = ReadImage<UC3>(ExampleData("KmeansTest_T1UCharRaw.nii.gz"));
  EXPECT_LE(MaxAbsDifference(RunOurs<UC3>(volume.GetPointer(), Mode::GPU).GetPointer(),
                             RunITK<UC3>(volume.GetPointer()).GetPointer()),
            kFloatTolerance * DynamicRange(volume.GetPointer()));
}

TEST(BSplinePrefilterGpu, DoubleMatchesFloat64Reference)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto input = RandomImage<D3>(MakeSize<D3>({ 33, 20, 17 }), -100.0, 100.0, 22);
  auto gpu = RunOurs<D3, D3>(input.GetPointer(), Mode::GPU);
  EXPECT_LE(MaxAbsDifferenceTo(gpu.GetPointer(), ReferenceCoefficients(input.GetPointer())),
            1e-9 * DynamicRange(input.GetPointer()));
}

TEST(BSplinePrefilterGpu, IntegerInputsMatchCpu)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  using S3 = itk::Image<short, 3>;
  using US2 = itk::Image<unsigned short, 2>;
  auto s = RandomImage<S3>(MakeSize<S3>({ 30, 20, 10 }), -3000, 3000, 23);
  EXPECT_LE(MaxAbsDifference(RunOurs<S3>(s.GetPointer(), Mode::GPU).GetPointer(),
                             RunOurs<S3>(s.GetPointer(), Mode::CPU).GetPointer()),
            kFloatTolerance * DynamicRange(s.GetPointer()));
  auto u = RandomImage<US2>(MakeSize<US2>({ 300, 200 }), 0, 65000, 24);
  EXPECT_LE(MaxAbsDifference(RunOurs<US2>(u.GetPointer(), Mode::GPU).GetPointer(),
                             RunOurs<US2>(u.GetPointer(), Mode::CPU).GetPointer()),
            kFloatTolerance * DynamicRange(u.GetPointer()));
  auto c = RandomImage<UC3>(MakeSize<UC3>({ 30, 20, 10 }), 0, 255, 25);
  EXPECT_LE(MaxAbsDifference(RunOurs<UC3>(c.GetPointer(), Mode::GPU).GetPointer(),
                             RunOurs<UC3>(c.GetPointer(), Mode::CPU).GetPointer()),
            kFloatTolerance * DynamicRange(c.GetPointer()));
}

TEST(BSplinePrefilterGpu, FIRMatchesCpuAndStreams)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto input = RandomImage<F3>(MakeSize<F3>({ 50, 41, 30 }), 0.0, 255.0, 26);
  for (int k : { 7, 13 })
  {
    auto gpu = RunOurs<F3>(input.GetPointer(), Mode::GPU, Method::FIR, k);
    auto cpu = RunOurs<F3>(input.GetPointer(), Mode::CPU, Method::FIR, k);
    EXPECT_LE(MaxAbsDifference(gpu.GetPointer(), cpu.GetPointer()), kFloatTolerance * 255.0) << "K = " << k;
  }
  auto whole = RunOurs<F3>(input.GetPointer(), Mode::CPU, Method::FIR);
  auto filter = itk::CudaBSplineDecompositionImageFilter<F3, F3>::New();
  filter->SetInput(input);
  filter->SetMethod(Method::FIR);
  filter->SetExecutionMode(Mode::GPU);
  auto streamer = itk::StreamingImageFilter<F3, F3>::New();
  streamer->SetInput(filter->GetOutput());
  streamer->SetNumberOfStreamDivisions(4);
  streamer->Update();
  EXPECT_EQ(filter->GetLastExecutedOn(), itk::CudaExecutedOn::GPU);
  EXPECT_LE(MaxAbsDifference(streamer->GetOutput(), whole.GetPointer()), kFloatTolerance * 255.0);
  // double precision FIR agrees with the float64 reference within the truncation bound
  auto dinput = RandomImage<D3>(MakeSize<D3>({ 30, 20, 10 }), -1.0, 1.0, 27);
  auto dfir = RunOurs<D3, D3>(dinput.GetPointer(), Mode::GPU, Method::FIR, 13);
  EXPECT_LE(MaxAbsDifferenceTo(dfir.GetPointer(), ReferenceCoefficients(dinput.GetPointer())),
            3 * 9 * 4 * cif::CubicFIRTruncationBound(13));
}

TEST(BSplinePrefilterGpu, CoreWritesEveryOutputVoxel)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  // Poison the device output with NaN bytes; every voxel must be overwritten.
  auto                   input = RandomImage<F3>(MakeSize<F3>({ 45, 33, 21 }), 0.0, 100.0, 28);
  const std::size_t      count = input->GetBufferedRegion().GetNumberOfPixels();
  cif::PrefilterGeometry g;
  for (int a = 0; a < 3; ++a)
  {
    g.imageSize[a] = g.inputSize[a] = g.outputSize[a] = input->GetBufferedRegion().GetSize(a);
  }
  cif::DeviceBuffer in(count * sizeof(float)), out(count * sizeof(float));
  in.CopyFromHost(input->GetBufferPointer(), count * sizeof(float));
  std::vector<float> host(count);
  for (auto method : { cif::PrefilterMethod::Recursive, cif::PrefilterMethod::FIR })
  {
    out.FillBytes(0xFF);
    cif::PrefilterParameters p;
    p.method = method;
    cif::PrefilterCUDA(static_cast<const float *>(in.GetPointer()), static_cast<float *>(out.GetPointer()), g, p);
    out.CopyToHost(host.data(), count * sizeof(float));
    std::vector<float> cpu(count);
    cif::PrefilterCPU(input->GetBufferPointer(), cpu.data(), g, p, 2);
    std::size_t unwritten = 0;
    double      worst = 0.0;
    for (std::size_t i = 0; i < count; ++i)
    {
      unwritten += std::isfinite(host[i]) ? 0 : 1;
      worst = std::max(worst, std::fabs(static_cast<double>(host[i]) - cpu[i]));
    }
    EXPECT_EQ(unwritten, 0u);
    EXPECT_LE(worst, kFloatTolerance * 100.0);
  }
}

TEST(BSplinePrefilterGpu, NonFiniteInputPropagatesAsInItk)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto input = RandomImage<F3>(MakeSize<F3>({ 20, 15, 10 }), 0.0, 1.0, 29);
  input->SetPixel({ 3, 4, 5 }, NAN);
  EXPECT_EQ(CountNonFinite(RunOurs<F3>(input.GetPointer(), Mode::GPU).GetPointer()),
            CountNonFinite(RunITK<F3>(input.GetPointer()).GetPointer()));
  EXPECT_EQ(CountNonFinite(RunOurs<F3>(input.GetPointer(), Mode::GPU, Method::FIR, 2).GetPointer()), 5u * 5u * 5u);
}

TEST(BSplinePrefilterGpu, OutOfMemoryFallsBackToCpuOrThrows)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto input = RandomImage<F3>(MakeSize<F3>({ 64, 64, 64 }), 0.0, 1.0, 30);
  auto expected = RunOurs<F3>(input.GetPointer(), Mode::CPU);
  auto filter = itk::CudaBSplineDecompositionImageFilter<F3, F3>::New();
  filter->SetInput(input);
  ExpectOutOfMemoryFallsBackToCpuOrThrows(filter.GetPointer(), expected.GetPointer());
}

TEST(BSplinePrefilterGpu, ReportsTheDevice)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto filter = itk::CudaBSplineDecompositionImageFilter<F2, F2>::New();
  filter->SetInput(RandomImage<F2>(MakeSize<F2>({ 16, 16 }), 0.0, 1.0, 31));
  filter->Update();
  EXPECT_EQ(filter->GetLastExecutedOn(), itk::CudaExecutedOn::GPU);
  EXPECT_NE(filter->GetLastExecutionReport().Message.find(cif::Runtime::GetDeviceDescription()), std::string::npos);
}

} // namespace
