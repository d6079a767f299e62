/*=========================================================================
 *  Tests of CudaMeanImageFilter (CPU and GPU paths) and its core.
 *
 *  References: ITK's own itk::MeanImageFilter, and an independent float64
 *  brute-force box mean written here (every box sample fetched with clamped
 *  indices, summed in a long double, divided, truncated or rounded).
 *
 *  Tolerance: none. The filter claims ITK's output bit for bit, so every
 *  comparison counts differing pixels and expects 0 (NaN equals NaN). For
 *  float input the test data mix values in [0, 1000) with +-1e20 that
 *  cancel, on which the order of the double additions changes the result;
 *  a separable sum is shown to differ from ITK there, so the equality
 *  tests really check ITK's summation order.
 *=========================================================================*/
#include "CudaSegmentationTestUtilities.h"
#include "cif/BoxFilters.h"
#include "itkCudaMeanImageFilter.h"
#include "itkMeanImageFilter.h"
#include "itkStreamingImageFilter.h"

#include <gtest/gtest.h>
#include <algorithm>
#include <cstdlib>
#include <vector>

namespace
{
using namespace cif_test;
using Mode = itk::CudaExecutionMode;

template <typename T>
const char *
CudaPixelTypeNameOf()
{
  return itk::CudaPixelTypeName<T>();
}

template <typename TIn, typename TOut = TIn>
typename TOut::Pointer
RunITK(const TIn * input, const typename TIn::SizeType & radius)
{
  auto filter = itk::MeanImageFilter<TIn, TOut>::New();
  filter->SetInput(input);
  filter->SetRadius(radius);
  filter->Update();
  return TakeOutput(filter.GetPointer());
}

template <typename TIn, typename TOut = TIn>
typename TOut::Pointer
RunOurs(const TIn * input, const typename TIn::SizeType & radius, Mode mode, itk::CudaExecutedOn * ranOn = nullptr)
{
  auto filter = itk::CudaMeanImageFilter<TIn, TOut>::New();
  filter->SetInput(input);
  filter->SetRadius(radius);
  filter->SetExecutionMode(mode);
  filter->Update();
  if (ranOn)
  {
    *ranOn = filter->GetLastExecutedOn();
  }
  return TakeOutput(filter.GetPointer());
}

/** Float data on which the order of the additions matters: values in [0, 1000) with 5 % of +1e20 and 5 % of
 * -1e20. Where a box holds as many of each, the exact sum is small, and what a double sum keeps of the small values
 * depends on when the large ones cancel. */
template <typename TImage>
typename TImage::Pointer
CancellingFloats(const typename TImage::SizeType & size, unsigned seed)
{
  auto image = TImage::New();
  image->SetRegions(size);
  image->Allocate();
  std::mt19937                           rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (itk::ImageRegionIterator<TImage> it(image, image->GetBufferedRegion()); !it.IsAtEnd(); ++it)
  {
    const double u = unit(rng);
    it.Set(u < 0.05 ? 1e20f : (u < 0.10 ? -1e20f : static_cast<float>(1000.0 * unit(rng))));
  }
  return image;
}

/** Independent reference: brute-force box mean with clamped indices, long double sum. */
template <typename TIn, typename TOut>
std::vector<double>
ReferenceMean(const TIn * input, const typename TIn::SizeType & radius)
{
  constexpr unsigned  D = TIn::ImageDimension;
  const auto          region = input->GetBufferedRegion();
  std::vector<double> result;
  double              volume = 1;
  for (unsigned a = 0; a < D; ++a)
  {
    volume *= 2.0 * radius[a] + 1.0;
  }
  for (itk::ImageRegionConstIteratorWithIndex<TIn> it(input, region); !it.IsAtEnd(); ++it)
  {
    long double                      sum = 0;
    std::vector<itk::IndexValueType> counter(D);
    for (unsigned a = 0; a < D; ++a)
    {
      counter[a] = -static_cast<itk::IndexValueType>(radius[a]);
    }
    for (;;)
    {
      typename TIn::IndexType q;
      for (unsigned a = 0; a < D; ++a)
      {
        const auto lo = region.GetIndex(a);
        const auto hi = lo + static_cast<itk::IndexValueType>(region.GetSize(a)) - 1;
        q[a] = std::min(hi, std::max(lo, it.GetIndex()[a] + counter[a]));
      }
      sum += static_cast<long double>(input->GetPixel(q));
      unsigned a = 0;
      for (; a < D; ++a)
      {
        if (++counter[a] <= static_cast<itk::IndexValueType>(radius[a]))
        {
          break;
        }
        counter[a] = -static_cast<itk::IndexValueType>(radius[a]);
      }
      if (a == D)
      {
        break;
      }
    }
    result.push_back(static_cast<double>(static_cast<TOut>(static_cast<double>(sum) / volume)));
  }
  return result;
}

template <typename TIn, typename TOut = TIn>
void
ExpectMatchesItk(const TIn * input, const typename TIn::SizeType & radius, Mode mode)
{
  itk::CudaExecutedOn ranOn = itk::CudaExecutedOn::None;
  auto                ours = RunOurs<TIn, TOut>(input, radius, mode, &ranOn);
  auto                itk = RunITK<TIn, TOut>(input, radius);
  EXPECT_EQ(CountDiffering(ours.GetPointer(), itk.GetPointer()), 0u)
    << CudaPixelTypeNameOf<typename TIn::PixelType>() << " -> " << CudaPixelTypeNameOf<typename TOut::PixelType>()
    << ", " << TIn::ImageDimension << "D, size " << input->GetBufferedRegion().GetSize() << ", radius " << radius;
  EXPECT_EQ(ranOn, mode == Mode::GPU ? itk::CudaExecutedOn::GPU : itk::CudaExecutedOn::CPU);
  EXPECT_EQ(ours->GetBufferedRegion(), itk->GetBufferedRegion());
  EXPECT_TRUE(SameGeometry(ours.GetPointer(), itk.GetPointer()));
}

/** Every pixel type, 2D and 3D, several radii: identical to ITK. */
template <typename T>
void
ExpectAllCasesMatchItk(Mode mode, unsigned seed)
{
  using I2 = itk::Image<T, 2>;
  using I3 = itk::Image<T, 3>;
  const BoxFilterCases<T> cases(seed);
  cases.ForEach([mode](const auto * image, const auto & radius) { ExpectMatchesItk(image, radius, mode); });
  if constexpr (!std::is_same<T, float>::value)
  {
    ExpectMatchesItk<I2, itk::Image<float, 2>>(cases.image2.GetPointer(), Radius<I2>({ 2, 1 }), mode);
    ExpectMatchesItk<I3, itk::Image<float, 3>>(cases.image3.GetPointer(), Radius<I3>({ 1, 2, 1 }), mode);
  }
}

using F2 = itk::Image<float, 2>;
using F3 = itk::Image<float, 3>;
using UC2 = itk::Image<unsigned char, 2>;
using UC3 = itk::Image<unsigned char, 3>;
using S3 = itk::Image<short, 3>;
using US3 = itk::Image<unsigned short, 3>;

// ===========================================================================
// CPU
// ===========================================================================

TEST(MeanCpu, MatchesItkForEveryPixelType)
{
  ExpectAllCasesMatchItk<unsigned char>(Mode::CPU, 1);
  ExpectAllCasesMatchItk<short>(Mode::CPU, 3);
  ExpectAllCasesMatchItk<unsigned short>(Mode::CPU, 5);
  ExpectAllCasesMatchItk<float>(Mode::CPU, 7);
}

TEST(MeanCpu, FloatSumsFollowItksOrder)
{
  auto               input = CancellingFloats<F3>({ 21, 18, 15 }, 11);
  const F3::SizeType radius = Radius<F3>({ 2, 1, 2 });
  auto               ours = RunOurs<F3>(input.GetPointer(), radius, Mode::CPU);
  auto               itk = RunITK<F3>(input.GetPointer(), radius);
  EXPECT_EQ(CountDiffering(ours.GetPointer(), itk.GetPointer()), 0u);
  // the data are order-sensitive: a separable double sum (x, then y, then z) differs from ITK somewhere
  const auto    size = input->GetBufferedRegion().GetSize();
  std::size_t   differ = 0;
  auto          clamp = [](long i, long n) { return std::min(n - 1, std::max(0L, i)); };
  const float * in = input->GetBufferPointer();
  const float * ref = itk->GetBufferPointer();
  for (long z = 0; z < long(size[2]); ++z)
    for (long y = 0; y < long(size[1]); ++y)
      for (long x = 0; x < long(size[0]); ++x)
      {
        double sz = 0;
        for (long dz = -2; dz <= 2; ++dz)
        {
          double sy = 0;
          for (long dy = -1; dy <= 1; ++dy)
          {
            double sx = 0;
            for (long dx = -2; dx <= 2; ++dx)
            {
              sx += in[(clamp(z + dz, size[2]) * size[1] + clamp(y + dy, size[1])) * size[0] + clamp(x + dx, size[0])];
            }
            sy += sx;
          }
          sz += sy;
        }
        differ += static_cast<float>(sz / 75.0) != ref[(z * size[1] + y) * size[0] + x] ? 1 : 0;
      }
  EXPECT_GT(differ, 0u) << "the wide-range data should make the summation order visible";
}

TEST(MeanCpu, MatchesAnIndependentReference)
{
  auto                us = RandomPixels<US3>({ 13, 11, 9 }, 21);
  auto                s = RandomPixels<S3>({ 13, 11, 9 }, 22);
  auto                f = RandomPixels<F3>({ 13, 11, 9 }, 23);
  const US3::SizeType radius = Radius<US3>({ 2, 1, 3 });
  EXPECT_EQ(ToVector(RunOurs<US3>(us.GetPointer(), radius, Mode::CPU).GetPointer()),
            (ReferenceMean<US3, unsigned short>(us.GetPointer(), radius)));
  EXPECT_EQ(ToVector(RunOurs<S3>(s.GetPointer(), radius, Mode::CPU).GetPointer()),
            (ReferenceMean<S3, short>(s.GetPointer(), radius)));
  // float: the long double reference may round differently from a double sum only in the last float bit
  const auto ours = ToVector(RunOurs<F3>(f.GetPointer(), radius, Mode::CPU).GetPointer());
  const auto reference = ReferenceMean<F3, float>(f.GetPointer(), radius);
  ASSERT_EQ(ours.size(), reference.size());
  for (std::size_t i = 0; i < ours.size(); ++i)
  {
    ASSERT_LE(std::fabs(ours[i] - reference[i]), 1e-4 * std::max(1.0, std::fabs(reference[i]))) << i;
  }
}

TEST(MeanCpu, RadiusLargerThanTheImageAndSizeOneAxes)
{
  auto tiny = RandomPixels<UC2>({ 7, 5 }, 31);
  ExpectMatchesItk<UC2>(tiny.GetPointer(), Radius<UC2>({ 20, 9 }), Mode::CPU);
  auto line = RandomPixels<F3>({ 1, 9, 1 }, 32);
  ExpectMatchesItk<F3>(line.GetPointer(), Radius<F3>({ 2, 3, 1 }), Mode::CPU);
  auto column = RandomPixels<S3>({ 12, 1, 1 }, 33);
  ExpectMatchesItk<S3>(column.GetPointer(), Radius<S3>({ 1, 4, 4 }), Mode::CPU);
  auto single = RandomPixels<US3>({ 1, 1, 1 }, 34);
  ExpectMatchesItk<US3>(single.GetPointer(), Radius<US3>({ 1 }), Mode::CPU);
  // 16-bit sums past 2^31 take the 64-bit accumulator
  auto big = RandomImage<US3>({ 12, 12, 12 }, 60000.0, 65536.0, 35);
  ExpectMatchesItk<US3>(big.GetPointer(), Radius<US3>({ 16, 16, 16 }), Mode::CPU);
}

TEST(MeanCpu, NonFiniteValuesPropagateAsInItk)
{
  auto input = RandomPixels<F3>({ 15, 12, 10 }, 41);
  input->SetPixel({ { 3, 4, 5 } }, std::numeric_limits<float>::quiet_NaN());
  input->SetPixel({ { 10, 2, 1 } }, std::numeric_limits<float>::infinity());
  input->SetPixel({ { 11, 2, 1 } }, -std::numeric_limits<float>::infinity());
  input->SetPixel({ { 0, 11, 9 } }, std::numeric_limits<float>::infinity());
  ExpectMatchesItk<F3>(input.GetPointer(), Radius<F3>({ 1 }), Mode::CPU);
  auto ours = RunOurs<F3>(input.GetPointer(), Radius<F3>({ 1 }), Mode::CPU);
  EXPECT_GE(CountNonFinite(ours.GetPointer()), 27u);
}

TEST(MeanCpu, StreamsAsItk)
{
  auto input = RandomPixels<S3>({ 24, 20, 18 }, 51);
  auto filter = itk::CudaMeanImageFilter<S3, S3>::New();
  filter->SetInput(input);
  filter->SetRadius(Radius<S3>({ 2, 1, 2 }));
  filter->SetExecutionMode(Mode::CPU);
  auto streamer = itk::StreamingImageFilter<S3, S3>::New();
  streamer->SetInput(filter->GetOutput());
  streamer->SetNumberOfStreamDivisions(4);
  streamer->Update();
  EXPECT_EQ(CountDiffering(streamer->GetOutput(), RunITK<S3>(input.GetPointer(), Radius<S3>({ 2, 1, 2 })).GetPointer()),
            0u);
}

TEST(MeanCpu, RealImages)
{
  auto slice = ReadImage<UC2>(ExampleData("BrainProtonDensitySlice.png"));
  ExpectMatchesItk<UC2>(slice.GetPointer(), Radius<UC2>({ 2 }), Mode::CPU);
  ExpectMatchesItk<UC2, F2>(slice.GetPointer(), Radius<UC2>({ 1, 3 }), Mode::CPU);
  auto volume = ReadImage<UC3>(ExampleData("KmeansTest_T1UCharRaw.nii.gz"));
  ExpectMatchesItk<UC3>(volume.GetPointer(), Radius<UC3>({ 1 }), Mode::CPU);
}

TEST(MeanCpu, EmptyInputThrows)
{
  auto empty = F3::New();
  empty->SetRegions(F3::SizeType{ { 0, 4, 4 } });
  empty->Allocate();
  auto filter = itk::CudaMeanImageFilter<F3, F3>::New();
  filter->SetInput(empty);
  EXPECT_THROW(filter->Update(), itk::ExceptionObject);
}

TEST(MeanCpu, UnsupportedRequestsRunItksImplementationAndSayWhy)
{
  using D2 = itk::Image<double, 2>;
  auto input = RandomImage<D2>({ 20, 16 }, -5.0, 5.0, 61);
  auto filter = itk::CudaMeanImageFilter<D2, D2>::New();
  filter->SetInput(input);
  filter->SetRadius(2);
  filter->Update();
  EXPECT_EQ(filter->GetLastExecutedOn(), itk::CudaExecutedOn::CPU);
  EXPECT_NE(filter->GetGPUUnsupportedReason().find("double"), std::string::npos) << filter->GetGPUUnsupportedReason();
  EXPECT_EQ(CountDiffering(filter->GetOutput(), RunITK<D2>(input.GetPointer(), Radius<D2>({ 2 })).GetPointer()), 0u);
  // a radius beyond the GPU tiles: the CPU in automatic mode, with the reason
  auto big = itk::CudaMeanImageFilter<F2, F2>::New();
  auto image = RandomPixels<F2>({ 40, 30 }, 62);
  big->SetInput(image);
  big->SetRadius(Radius<F2>({ 65, 1 }));
  big->Update();
  EXPECT_EQ(big->GetLastExecutedOn(), itk::CudaExecutedOn::CPU);
  EXPECT_NE(big->GetGPUUnsupportedReason().find("radi"), std::string::npos);
  EXPECT_EQ(CountDiffering(big->GetOutput(), RunITK<F2>(image.GetPointer(), Radius<F2>({ 65, 1 })).GetPointer()), 0u);
}

TEST(MeanCpu, VerboseWritesOneLinePerRun)
{
  // CUDAIMAGEFILTERS_VERBOSE=1: one stderr line per run, with the class, the
  // device and, when the CPU ran, why; nothing without it
  auto input = RandomPixels<F2>({ 12, 10 }, 81);
  auto run = [&](Mode mode)
  {
    auto filter = itk::CudaMeanImageFilter<F2, F2>::New();
    filter->SetInput(input);
    filter->SetExecutionMode(mode);
    testing::internal::CaptureStderr();
    filter->Update();
    return testing::internal::GetCapturedStderr();
  };
  ASSERT_EQ(unsetenv("CUDAIMAGEFILTERS_VERBOSE"), 0);
  EXPECT_EQ(run(Mode::CPU), "");
  ASSERT_EQ(setenv("CUDAIMAGEFILTERS_VERBOSE", "1", 1), 0);
  EXPECT_EQ(run(Mode::CPU), "cudaimagefilters: CudaMeanImageFilter: CPU\n");
  const std::string automatic = run(Mode::Automatic);
  EXPECT_EQ(std::count(automatic.begin(), automatic.end(), '\n'), 1) << automatic;
  EXPECT_EQ(automatic.rfind("cudaimagefilters: CudaMeanImageFilter: ", 0), 0u) << automatic;
  if (!cif::Runtime::IsDeviceAvailable())
  {
    EXPECT_NE(automatic.find("CPU, because"), std::string::npos) << automatic;
  }
  else
  {
    EXPECT_NE(automatic.find(": GPU: "), std::string::npos) << automatic;
  }
  // ITK's own implementation (double pixels) says so too
  using D2 = itk::Image<double, 2>;
  auto twin = itk::CudaMeanImageFilter<D2, D2>::New();
  twin->SetInput(RandomImage<D2>({ 8, 8 }, -1.0, 1.0, 82));
  testing::internal::CaptureStderr();
  twin->Update();
  const std::string line = testing::internal::GetCapturedStderr();
  EXPECT_NE(line.find("ITK's implementation, because"), std::string::npos) << line;
  ASSERT_EQ(setenv("CUDAIMAGEFILTERS_VERBOSE", "0", 1), 0);
  EXPECT_EQ(run(Mode::CPU), "");
  ASSERT_EQ(unsetenv("CUDAIMAGEFILTERS_VERBOSE"), 0);
}

TEST(MeanCpu, ExecutionModeIsAnItkSetting)
{
  ExpectExecutionModeIsAnItkSetting(itk::CudaMeanImageFilter<F2, F2>::New().GetPointer());
}

TEST(MeanCpu, GpuModeWithoutGpuThrows)
{
  if (cif::Runtime::IsDeviceAvailable())
  {
    GTEST_SKIP() << "this machine has a GPU";
  }
  auto input = RandomPixels<F2>({ 8, 8 }, 71);
  auto filter = itk::CudaMeanImageFilter<F2, F2>::New();
  filter->SetInput(input);
  filter->SetExecutionMode(Mode::GPU);
  EXPECT_THROW(filter->Update(), itk::ExceptionObject);
}

// ===========================================================================
// GPU (CTest label "gpu")
// ===========================================================================

TEST(MeanGpu, MatchesItkForEveryPixelType)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  ExpectAllCasesMatchItk<unsigned char>(Mode::GPU, 101);
  ExpectAllCasesMatchItk<short>(Mode::GPU, 103);
  ExpectAllCasesMatchItk<unsigned short>(Mode::GPU, 105);
  ExpectAllCasesMatchItk<float>(Mode::GPU, 107);
}

TEST(MeanGpu, FloatSumsFollowItksOrder)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto input = CancellingFloats<F3>({ 45, 18, 20 }, 111);
  for (auto radius : { Radius<F3>({ 2, 1, 2 }), Radius<F3>({ 3 }), Radius<F3>({ 8, 8, 8 }) })
  {
    auto filter = itk::CudaMeanImageFilter<F3, F3>::New();
    filter->SetInput(input);
    filter->SetRadius(radius);
    filter->SetExecutionMode(Mode::GPU);
    filter->Update();
    EXPECT_NE(filter->GetLastExecutionReport().Message.find("ITK's order"), std::string::npos)
      << filter->GetLastExecutionReport().Message;
    EXPECT_EQ(CountDiffering(filter->GetOutput(), RunITK<F3>(input.GetPointer(), radius).GetPointer()), 0u)
      << "radius " << radius;
  }
  auto wide2 = CancellingFloats<F2>({ 70, 50 }, 112);
  ExpectMatchesItk<F2>(wide2.GetPointer(), Radius<F2>({ 5, 7 }), Mode::GPU);
}

TEST(MeanGpu, LargeFloatBoxesUseSeparableSumsAndSaySo)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  // integer-valued floats: the separable double sums are exact, so still ITK's result
  auto input = RandomImage<F3>({ 24, 24, 24 }, 0.0, 4096.0, 113);
  for (itk::ImageRegionIterator<F3> it(input, input->GetBufferedRegion()); !it.IsAtEnd(); ++it)
  {
    it.Set(std::floor(it.Get()));
  }
  auto filter = itk::CudaMeanImageFilter<F3, F3>::New();
  filter->SetInput(input);
  filter->SetRadius(Radius<F3>({ 10, 10, 10 })); // a 52 x 28 x 21 float tile: 122 KB, over the 96 KB cap
  filter->SetExecutionMode(Mode::GPU);
  filter->Update();
  EXPECT_NE(filter->GetLastExecutionReport().Message.find("separable double"), std::string::npos)
    << filter->GetLastExecutionReport().Message;
  EXPECT_EQ(
    CountDiffering(filter->GetOutput(), RunITK<F3>(input.GetPointer(), Radius<F3>({ 10, 10, 10 })).GetPointer()), 0u);
}

TEST(MeanGpu, EdgeCases)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto tiny = RandomPixels<UC2>({ 7, 5 }, 121);
  ExpectMatchesItk<UC2>(tiny.GetPointer(), Radius<UC2>({ 20, 9 }), Mode::GPU);
  auto line = RandomPixels<F3>({ 1, 9, 1 }, 122);
  ExpectMatchesItk<F3>(line.GetPointer(), Radius<F3>({ 2, 3, 1 }), Mode::GPU);
  auto column = RandomPixels<S3>({ 300, 1, 2 }, 123);
  ExpectMatchesItk<S3>(column.GetPointer(), Radius<S3>({ 64, 4, 4 }), Mode::GPU);
  auto input = RandomPixels<F3>({ 15, 12, 10 }, 124);
  input->SetPixel({ { 3, 4, 5 } }, std::numeric_limits<float>::quiet_NaN());
  input->SetPixel({ { 10, 2, 1 } }, std::numeric_limits<float>::infinity());
  input->SetPixel({ { 11, 2, 1 } }, -std::numeric_limits<float>::infinity());
  ExpectMatchesItk<F3>(input.GetPointer(), Radius<F3>({ 1 }), Mode::GPU);
  // 16-bit sums past 2^31 take the 64-bit accumulator
  auto big = RandomImage<US3>({ 12, 12, 12 }, 60000.0, 65536.0, 125);
  ExpectMatchesItk<US3>(big.GetPointer(), Radius<US3>({ 16, 16, 16 }), Mode::GPU);
}

TEST(MeanGpu, StreamsAndKeepsDataOnTheDevice)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  using CudaUS3 = itk::CudaFilterImage<unsigned short, 3>;
  auto plain = RandomPixels<US3>({ 40, 33, 21 }, 131);
  auto input = ToCudaImage<CudaUS3>(plain.GetPointer());
  auto first = itk::CudaMeanImageFilter<CudaUS3, CudaUS3>::New();
  first->SetInput(input);
  first->SetRadius(1);
  first->SetExecutionMode(Mode::GPU);
  auto second = itk::CudaMeanImageFilter<CudaUS3, CudaUS3>::New();
  second->SetInput(first->GetOutput());
  second->SetRadius(Radius<CudaUS3>({ 2, 0, 1 }));
  second->SetExecutionMode(Mode::GPU);
  cif::Runtime::ResetTransferCounters();
  second->Update();
  const auto counters = cif::Runtime::GetTransferCounters();
  EXPECT_EQ(counters.HostToDeviceCount, 1u);
  EXPECT_EQ(counters.DeviceToHostCount, 0u);
  auto reference =
    RunITK<US3>(RunITK<US3>(plain.GetPointer(), Radius<US3>({ 1 })).GetPointer(), Radius<US3>({ 2, 0, 1 }));
  EXPECT_EQ(CountDiffering(static_cast<const CudaUS3 *>(second->GetOutput()), reference.GetPointer()), 0u);

  auto filter = itk::CudaMeanImageFilter<F3, F3>::New();
  auto floats = CancellingFloats<F3>({ 30, 26, 22 }, 132);
  filter->SetInput(floats);
  filter->SetRadius(2);
  filter->SetExecutionMode(Mode::GPU);
  auto streamer = itk::StreamingImageFilter<F3, F3>::New();
  streamer->SetInput(filter->GetOutput());
  streamer->SetNumberOfStreamDivisions(3);
  streamer->Update();
  EXPECT_EQ(CountDiffering(streamer->GetOutput(), RunITK<F3>(floats.GetPointer(), Radius<F3>({ 2 })).GetPointer()), 0u);
}

TEST(MeanGpu, RealImages)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto slice = ReadImage<UC2>(ExampleData("BrainProtonDensitySlice.png"));
  ExpectMatchesItk<UC2>(slice.GetPointer(), Radius<UC2>({ 2 }), Mode::GPU);
  auto volume = ReadImage<UC3>(ExampleData("KmeansTest_T1UCharRaw.nii.gz"));
  ExpectMatchesItk<UC3>(volume.GetPointer(), Radius<UC3>({ 1, 2, 3 }), Mode::GPU);
  ExpectMatchesItk<UC3, F3>(volume.GetPointer(), Radius<UC3>({ 1 }), Mode::GPU);
}

TEST(MeanGpu, CoreWritesEveryOutputVoxelAndMatchesTheCpuCore)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  // a cropped output inside a larger input, every axis filtered; the device output is poisoned first
  auto             input = CancellingFloats<F3>({ 45, 33, 21 }, 141);
  cif::BoxGeometry g;
  const int        start[3] = { 3, 5, 2 }, size[3] = { 37, 20, 15 }, radius[3] = { 2, 3, 1 };
  for (int a = 0; a < 3; ++a)
  {
    g.inputSize[a] = static_cast<std::int64_t>(input->GetBufferedRegion().GetSize(a));
    g.outputStart[a] = start[a];
    g.outputSize[a] = size[a];
    g.radius[a] = radius[a];
  }
  ASSERT_EQ(cif::ValidateBoxJob(g), "");
  const std::size_t inCount = input->GetBufferedRegion().GetNumberOfPixels();
  const std::size_t outCount = std::size_t(size[0]) * size[1] * size[2];
  cif::DeviceBuffer in(inCount * 4), out(outCount * 4);
  in.CopyFromHost(input->GetBufferPointer(), inCount * 4);
  out.FillBytes(0xFF); // NaN
  const auto method =
    cif::BoxMeanCUDA(static_cast<const float *>(in.GetPointer()), static_cast<float *>(out.GetPointer()), g);
  EXPECT_EQ(method, cif::BoxMeanMethod::DirectITKOrder);
  std::vector<float> gpu(outCount), cpu(outCount);
  out.CopyToHost(gpu.data(), outCount * 4);
  cif::BoxMeanCPU(input->GetBufferPointer(), cpu.data(), g, 2);
  std::size_t differ = 0;
  for (std::size_t i = 0; i < outCount; ++i)
  {
    differ += (gpu[i] == cpu[i] || (std::isnan(gpu[i]) && std::isnan(cpu[i]))) ? 0 : 1;
  }
  EXPECT_EQ(differ, 0u);
  EXPECT_EQ(CountNonFinite(RunOurs<F3>(input.GetPointer(), Radius<F3>({ 1 }), Mode::CPU).GetPointer()), 0u);

  // integer path, the same poisoning
  auto              shorts = RandomPixels<S3>({ 45, 33, 21 }, 142);
  cif::DeviceBuffer sin(inCount * 2), sout(outCount * 2);
  sin.CopyFromHost(shorts->GetBufferPointer(), inCount * 2);
  sout.FillBytes(0x5A);
  EXPECT_EQ(cif::BoxMeanCUDA(static_cast<const short *>(sin.GetPointer()), static_cast<short *>(sout.GetPointer()), g),
            cif::BoxMeanMethod::FusedInteger);
  std::vector<short> sgpu(outCount), scpu(outCount);
  sout.CopyToHost(sgpu.data(), outCount * 2);
  cif::BoxMeanCPU(shorts->GetBufferPointer(), scpu.data(), g, 2);
  EXPECT_EQ(sgpu, scpu);

  // a box too wide for the one-pass tile (x radius above 16): separable passes, poisoned the same way
  g.radius[0] = 17;
  ASSERT_EQ(cif::ValidateBoxJob(g), "");
  sout.FillBytes(0x5A);
  EXPECT_EQ(cif::BoxMeanCUDA(static_cast<const short *>(sin.GetPointer()), static_cast<short *>(sout.GetPointer()), g),
            cif::BoxMeanMethod::SeparableInteger);
  sout.CopyToHost(sgpu.data(), outCount * 2);
  cif::BoxMeanCPU(shorts->GetBufferPointer(), scpu.data(), g, 2);
  EXPECT_EQ(sgpu, scpu);
}

TEST(MeanGpu, OnePassAndSeparableIntegerSumsMatchItk)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  // sizes that are no multiple of the one-pass tile (128 x 8 x 16 outputs),
  // x sizes with and without whole quads of outputs; radii from 0 to the
  // one-pass tile's limits (x radius 16, y radius 8; deep boxes take a long
  // ring of planes in more than 48 KiB of shared memory) and past them
  // (separable passes)
  auto us = RandomPixels<US3>({ 40, 37, 30 }, 151);
  auto uc = RandomPixels<UC3>({ 35, 17, 33 }, 152);
  for (auto radius : { Radius<US3>({ 0 }),
                       Radius<US3>({ 1 }),
                       Radius<US3>({ 2, 0, 3 }),
                       Radius<US3>({ 0, 4, 1 }),
                       Radius<US3>({ 8, 8, 8 }),
                       Radius<US3>({ 1, 1, 10 }),
                       Radius<US3>({ 2, 2, 12 }),
                       Radius<US3>({ 16, 8, 2 }),
                       Radius<US3>({ 17, 1, 1 }),
                       Radius<US3>({ 1, 9, 1 }),
                       Radius<US3>({ 3, 3, 3 }),
                       Radius<US3>({ 2, 2, 1 }) })
  {
    auto filter = itk::CudaMeanImageFilter<US3, US3>::New();
    filter->SetInput(us);
    filter->SetRadius(radius);
    filter->SetExecutionMode(Mode::GPU);
    filter->Update();
    const std::string & message = filter->GetLastExecutionReport().Message;
    EXPECT_NE(message.find(radius[0] > 16 || radius[1] > 8 ? "separable integer sums" : "integer sums in one pass"),
              std::string::npos)
      << "radius " << radius << ": " << message;
    EXPECT_EQ(CountDiffering(filter->GetOutput(), RunITK<US3>(us.GetPointer(), radius).GetPointer()), 0u)
      << "radius " << radius;
    ExpectMatchesItk<UC3>(uc.GetPointer(), radius, Mode::GPU);
  }
  // a 2D image and one plane of a volume
  auto slice = RandomPixels<itk::Image<short, 2>>({ 70, 33 }, 153);
  ExpectMatchesItk<itk::Image<short, 2>>(slice.GetPointer(), Radius<itk::Image<short, 2>>({ 3, 1 }), Mode::GPU);
  auto plane = RandomPixels<US3>({ 50, 20, 1 }, 154);
  ExpectMatchesItk<US3>(plane.GetPointer(), Radius<US3>({ 1, 2, 2 }), Mode::GPU);
}

} // namespace
