/*=========================================================================
 *  Tests of CudaBinaryThresholdImageFilter (CPU and GPU paths) and the
 *  threshold core.
 *
 *  Reference: ITK's own itk::BinaryThresholdImageFilter, with the same
 *  settings (or none: the defaults), and the rule written out here for the
 *  non-finite cases. Tolerance: none (every pixel must be equal).
 *=========================================================================*/
#include "CudaSegmentationTestUtilities.h"
#include "cif/PackedMask.h"
#include "itkBinaryThresholdImageFilter.h"
#include "itkCudaBinaryThresholdImageFilter.h"
#include "itkStreamingImageFilter.h"

#include <gtest/gtest.h>
#include <optional>
#include <vector>

namespace
{
using namespace cif_test;
using Mode = itk::CudaExecutionMode;

template <typename TIn, typename TOut>
struct Settings
{
  std::optional<typename TIn::PixelType>  lower, upper;
  std::optional<typename TOut::PixelType> inside, outside;
};

template <typename TFilter, typename TIn, typename TOut>
void
Apply(TFilter * filter, const Settings<TIn, TOut> & s)
{
  if (s.lower)
  {
    filter->SetLowerThreshold(*s.lower);
  }
  if (s.upper)
  {
    filter->SetUpperThreshold(*s.upper);
  }
  if (s.inside)
  {
    filter->SetInsideValue(*s.inside);
  }
  if (s.outside)
  {
    filter->SetOutsideValue(*s.outside);
  }
}

template <typename TIn, typename TOut>
typename TOut::Pointer
RunITK(const TIn * input, const Settings<TIn, TOut> & s)
{
  auto filter = itk::BinaryThresholdImageFilter<TIn, TOut>::New();
  filter->SetInput(input);
  filter->InPlaceOff(); // keep the shared input
  Apply(filter.GetPointer(), s);
  filter->Update();
  return TakeOutput(filter.GetPointer());
}

template <typename TIn, typename TOut>
typename TOut::Pointer
RunOurs(const TIn * input, const Settings<TIn, TOut> & s, Mode mode, itk::CudaExecutedOn * ranOn = nullptr)
{
  auto filter = itk::CudaBinaryThresholdImageFilter<TIn, TOut>::New();
  filter->SetInput(input);
  filter->InPlaceOff();
  filter->SetExecutionMode(mode);
  Apply(filter.GetPointer(), s);
  filter->Update();
  if (ranOn)
  {
    *ranOn = filter->GetLastExecutedOn();
  }
  return TakeOutput(filter.GetPointer());
}

template <typename TIn, typename TOut>
void
ExpectMatchesItk(const TIn * input, const Settings<TIn, TOut> & s, Mode mode)
{
  itk::CudaExecutedOn ranOn = itk::CudaExecutedOn::None;
  auto                ours = RunOurs<TIn, TOut>(input, s, mode, &ranOn);
  auto                itk = RunITK<TIn, TOut>(input, s);
  EXPECT_EQ(CountDiffering(ours.GetPointer(), itk.GetPointer()), 0u)
    << itk::CudaPixelTypeName<typename TIn::PixelType>() << " -> " << itk::CudaPixelTypeName<typename TOut::PixelType>()
    << ", " << TIn::ImageDimension << "D";
  EXPECT_EQ(ranOn, mode == Mode::GPU ? itk::CudaExecutedOn::GPU : itk::CudaExecutedOn::CPU);
  EXPECT_TRUE(SameGeometry(ours.GetPointer(), itk.GetPointer()));
  EXPECT_EQ(ours->GetLargestPossibleRegion(), itk->GetLargestPossibleRegion());
}

/** Thresholds at the 30 % and 70 % points of the type's test range, and the one-sided and default cases. */
template <typename TIn, typename TOut>
void
ExpectAllSettingsMatchItk(const TIn * input, Mode mode)
{
  using P = typename TIn::PixelType;
  using Q = typename TOut::PixelType;
  const double lo = std::is_floating_point<P>::value ? -1000.0 : static_cast<double>(std::numeric_limits<P>::lowest());
  const double hi = std::is_floating_point<P>::value ? 1000.0 : static_cast<double>(std::numeric_limits<P>::max());
  const P      a = static_cast<P>(lo + 0.3 * (hi - lo)), b = static_cast<P>(lo + 0.7 * (hi - lo));
  ExpectMatchesItk<TIn, TOut>(input, {}, mode); // defaults
  ExpectMatchesItk<TIn, TOut>(input, { a, b, {}, {} }, mode);
  ExpectMatchesItk<TIn, TOut>(input, { a, {}, {}, {} }, mode); // lower only
  ExpectMatchesItk<TIn, TOut>(input, { {}, b, {}, {} }, mode); // upper only
  ExpectMatchesItk<TIn, TOut>(input, { b, b, Q(7), Q(3) }, mode);
  ExpectMatchesItk<TIn, TOut>(input, { a, b, Q(0), Q(1) }, mode);
}

template <typename TIn>
void
ExpectEveryOutputTypeMatchesItk(Mode mode, unsigned seed)
{
  constexpr unsigned     D = TIn::ImageDimension;
  typename TIn::SizeType size;
  for (unsigned a = 0; a < D; ++a)
  {
    size[a] = 37 - 8 * a;
  }
  auto input = RandomPixels<TIn>(size, seed);
  GiveGeometry(input.GetPointer());
  ExpectAllSettingsMatchItk<TIn, itk::Image<unsigned char, D>>(input.GetPointer(), mode);
  ExpectAllSettingsMatchItk<TIn, itk::Image<short, D>>(input.GetPointer(), mode);
  ExpectAllSettingsMatchItk<TIn, itk::Image<unsigned short, D>>(input.GetPointer(), mode);
  ExpectAllSettingsMatchItk<TIn, itk::Image<float, D>>(input.GetPointer(), mode);
}

using F2 = itk::Image<float, 2>;
using F3 = itk::Image<float, 3>;
using UC2 = itk::Image<unsigned char, 2>;
using UC3 = itk::Image<unsigned char, 3>;
using S2 = itk::Image<short, 2>;
using S3 = itk::Image<short, 3>;
using US2 = itk::Image<unsigned short, 2>;
using US3 = itk::Image<unsigned short, 3>;

/** Floats with NaN, +-Inf and the float extremes (the default thresholds). */
F3::Pointer
NonFiniteImage()
{
  auto                image = RandomPixels<F3>({ 9, 7, 5 }, 41);
  const float         values[] = { NAN,
                                   std::numeric_limits<float>::infinity(),
                                   -std::numeric_limits<float>::infinity(),
                                   std::numeric_limits<float>::max(),
                                   std::numeric_limits<float>::lowest(),
                                   -0.0f,
                                   0.0f };
  itk::IndexValueType x = 0;
  for (float v : values)
  {
    image->SetPixel({ { x++, 2, 3 } }, v);
  }
  return image;
}

void
ExpectNonFiniteRules(Mode mode)
{
  auto image = NonFiniteImage();
  using S = Settings<F3, UC3>;
  for (const S & s : { S{}, S{ -5.0f, 5.0f, {}, {} }, S{ 0.0f, {}, {}, {} }, S{ {}, -0.0f, {}, {} } })
  {
    ExpectMatchesItk<F3, UC3>(image.GetPointer(), s, mode);
  }
  // the rule: NaN outside; with the defaults (-FLT_MAX, FLT_MAX) the infinities are outside and the extremes inside
  auto out = RunOurs<F3, UC3>(image.GetPointer(), {}, mode);
  EXPECT_EQ(out->GetPixel({ { 0, 2, 3 } }), 0);
  EXPECT_EQ(out->GetPixel({ { 1, 2, 3 } }), 0);
  EXPECT_EQ(out->GetPixel({ { 2, 2, 3 } }), 0);
  EXPECT_EQ(out->GetPixel({ { 3, 2, 3 } }), 255);
  EXPECT_EQ(out->GetPixel({ { 4, 2, 3 } }), 255);
  // a NaN threshold: every pixel outside, as ITK (no exception: NaN > x is false)
  S nanLower{ NAN, 1.0f, {}, {} };
  ExpectMatchesItk<F3, UC3>(image.GetPointer(), nanLower, mode);
  auto        nanOut = RunOurs<F3, UC3>(image.GetPointer(), nanLower, mode);
  std::size_t inside = 0;
  for (itk::ImageRegionConstIterator<UC3> it(nanOut, nanOut->GetBufferedRegion()); !it.IsAtEnd(); ++it)
  {
    inside += it.Get() != 0 ? 1 : 0;
  }
  EXPECT_EQ(inside, 0u);
}

/** In place on a plain image (the output is `image`'s buffer, overwritten)
 * and streamed in 5 pieces on a fresh float image (seed `streamSeed`): both
 * as ITK's filter. */
void
ExpectInPlaceAndStreamingMatchItk(US3 * image, Mode mode, unsigned streamSeed)
{
  auto reference = RunITK<US3, US3>(image, { 1000, 40000, 9, 1 });
  auto copy = US3::New();
  copy->Graft(image); // shares the buffer, so running in place overwrites `image`'s pixels
  auto filter = itk::CudaBinaryThresholdImageFilter<US3, US3>::New();
  filter->SetInput(copy);
  filter->InPlaceOn();
  filter->SetExecutionMode(mode);
  filter->SetLowerThreshold(1000);
  filter->SetUpperThreshold(40000);
  filter->SetInsideValue(9);
  filter->SetOutsideValue(1);
  filter->Update();
  EXPECT_EQ(filter->GetOutput()->GetBufferPointer(), image->GetBufferPointer());
  EXPECT_EQ(CountDiffering(filter->GetOutput(), reference.GetPointer()), 0u);

  auto fresh = RandomPixels<F3>({ 30, 22, 19 }, streamSeed);
  auto streamed = itk::CudaBinaryThresholdImageFilter<F3, UC3>::New();
  streamed->SetInput(fresh);
  streamed->SetLowerThreshold(-10.0f);
  streamed->SetUpperThreshold(500.0f);
  streamed->SetExecutionMode(mode);
  auto streamer = itk::StreamingImageFilter<UC3, UC3>::New();
  streamer->SetInput(streamed->GetOutput());
  streamer->SetNumberOfStreamDivisions(5);
  streamer->Update();
  EXPECT_EQ(
    CountDiffering(streamer->GetOutput(), RunITK<F3, UC3>(fresh.GetPointer(), { -10.0f, 500.0f, {}, {} }).GetPointer()),
    0u);
}

// ===========================================================================
// CPU
// ===========================================================================

TEST(BinaryThresholdCpu, DefaultsAreItks)
{
  auto ours = itk::CudaBinaryThresholdImageFilter<F3, US3>::New();
  auto itk = itk::BinaryThresholdImageFilter<F3, US3>::New();
  EXPECT_EQ(ours->GetLowerThreshold(), itk->GetLowerThreshold());
  EXPECT_EQ(ours->GetUpperThreshold(), itk->GetUpperThreshold());
  EXPECT_EQ(ours->GetInsideValue(), itk->GetInsideValue());
  EXPECT_EQ(ours->GetOutsideValue(), itk->GetOutsideValue());
  EXPECT_EQ(ours->GetLowerThreshold(), -std::numeric_limits<float>::max());
  EXPECT_EQ(ours->GetInsideValue(), 65535);
  EXPECT_EQ(ours->GetInPlace(), itk->GetInPlace());
}

TEST(BinaryThresholdCpu, MatchesItkForEveryPixelTypePair)
{
  ExpectEveryOutputTypeMatchesItk<UC2>(Mode::CPU, 1);
  ExpectEveryOutputTypeMatchesItk<S3>(Mode::CPU, 2);
  ExpectEveryOutputTypeMatchesItk<US2>(Mode::CPU, 3);
  ExpectEveryOutputTypeMatchesItk<F3>(Mode::CPU, 4);
  auto s2 = RandomPixels<S2>({ 33, 1 }, 5);
  ExpectAllSettingsMatchItk<S2, UC2>(s2.GetPointer(), Mode::CPU);
  auto us3 = RandomPixels<US3>({ 1, 1, 17 }, 6);
  ExpectAllSettingsMatchItk<US3, F3>(us3.GetPointer(), Mode::CPU);
}

TEST(BinaryThresholdCpu, NonFiniteValues)
{
  ExpectNonFiniteRules(Mode::CPU);
}

TEST(BinaryThresholdCpu, LowerAboveUpperThrowsAsItk)
{
  auto image = RandomPixels<S3>({ 6, 5, 4 }, 51);
  auto ours = itk::CudaBinaryThresholdImageFilter<S3, UC3>::New();
  ours->SetInput(image);
  ours->SetLowerThreshold(10);
  ours->SetUpperThreshold(9);
  auto itk = itk::BinaryThresholdImageFilter<S3, UC3>::New();
  itk->SetInput(image);
  itk->SetLowerThreshold(10);
  itk->SetUpperThreshold(9);
  EXPECT_THROW(itk->Update(), itk::ExceptionObject);
  try
  {
    ours->Update();
    FAIL() << "no exception";
  }
  catch (const itk::ExceptionObject & e)
  {
    EXPECT_NE(std::string(e.GetDescription()).find("Lower threshold cannot be greater than upper threshold"),
              std::string::npos)
      << e.GetDescription();
  }
  // equal thresholds are fine
  ours->SetUpperThreshold(10);
  EXPECT_NO_THROW(ours->Update());
}

TEST(BinaryThresholdCpu, InPlaceAndStreaming)
{
  auto image = RandomPixels<US3>({ 20, 18, 16 }, 61);
  ExpectInPlaceAndStreamingMatchItk(image.GetPointer(), Mode::CPU, 62);
}

TEST(BinaryThresholdCpu, StridedCoreInput)
{
  // the core reads a sub-block of a larger buffer (a streamed output region)
  auto                     image = RandomPixels<S3>({ 17, 13, 11 }, 71);
  cif::ElementwiseGeometry g;
  g.size[0] = 9;
  g.size[1] = 7;
  g.size[2] = 5;
  g.inputRowPitch = 17;
  g.inputSlicePitch = 17 * 13;
  const std::int64_t         offset = 3 + 17 * 4 + 17 * 13 * 2;
  std::vector<unsigned char> out(9 * 7 * 5);
  cif::ThresholdCPU<short, unsigned char>(image->GetBufferPointer() + offset, out.data(), g, -100, 20000, 1, 0, 2);
  std::size_t i = 0, bad = 0;
  for (int z = 0; z < 5; ++z)
    for (int y = 0; y < 7; ++y)
      for (int x = 0; x < 9; ++x, ++i)
      {
        const short v = image->GetPixel({ { x + 3, y + 4, z + 2 } });
        bad += out[i] != ((v >= -100 && v <= 20000) ? 1 : 0) ? 1 : 0;
      }
  EXPECT_EQ(bad, 0u);
}

TEST(BinaryThresholdCpu, RealImages)
{
  auto slice = ReadImage<UC2>(ExampleData("BrainProtonDensitySlice.png"));
  ExpectMatchesItk<UC2, UC2>(slice.GetPointer(), { 90, 200, 1, 0 }, Mode::CPU);
  auto volume = ReadImage<UC3>(ExampleData("KmeansTest_T1UCharRaw.nii.gz"));
  ExpectMatchesItk<UC3, F3>(volume.GetPointer(), { 50, {}, {}, {} }, Mode::CPU);
}

TEST(BinaryThresholdCpu, BadInput)
{
  auto empty = F3::New();
  empty->SetRegions(F3::SizeType{ { 4, 4, 0 } });
  empty->Allocate();
  auto filter = itk::CudaBinaryThresholdImageFilter<F3, UC3>::New();
  filter->SetInput(empty);
  EXPECT_THROW(filter->Update(), itk::ExceptionObject);
  // other pixel types run ITK's implementation and say why the GPU was not used
  using D2 = itk::Image<double, 2>;
  auto doubles = RandomImage<D2>({ 10, 10 }, -1.0, 1.0, 81);
  auto other = itk::CudaBinaryThresholdImageFilter<D2, UC2>::New();
  other->SetInput(doubles);
  other->SetLowerThreshold(0.0);
  other->Update();
  EXPECT_EQ(other->GetLastExecutedOn(), itk::CudaExecutedOn::CPU);
  EXPECT_NE(other->GetGPUUnsupportedReason().find("double"), std::string::npos);
  auto itk = itk::BinaryThresholdImageFilter<D2, UC2>::New();
  itk->SetInput(doubles);
  itk->SetLowerThreshold(0.0);
  itk->Update();
  EXPECT_EQ(CountDiffering(other->GetOutput(), itk->GetOutput()), 0u);
  if (!cif::Runtime::IsDeviceAvailable())
  {
    auto image = RandomPixels<F3>({ 5, 5, 5 }, 82);
    auto gpu = itk::CudaBinaryThresholdImageFilter<F3, UC3>::New();
    gpu->SetInput(image);
    gpu->SetExecutionMode(Mode::GPU);
    EXPECT_THROW(gpu->Update(), itk::ExceptionObject);
  }
}

// ===========================================================================
// GPU (CTest label "gpu")
// ===========================================================================

TEST(BinaryThresholdGpu, MatchesItkForEveryPixelTypePair)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  ExpectEveryOutputTypeMatchesItk<UC2>(Mode::GPU, 101);
  ExpectEveryOutputTypeMatchesItk<S3>(Mode::GPU, 102);
  ExpectEveryOutputTypeMatchesItk<US2>(Mode::GPU, 103);
  ExpectEveryOutputTypeMatchesItk<F3>(Mode::GPU, 104);
  auto big = RandomPixels<US3>({ 1500, 3, 2 }, 105); // rows longer than one block's 1024 voxels
  ExpectAllSettingsMatchItk<US3, UC3>(big.GetPointer(), Mode::GPU);
}

TEST(BinaryThresholdGpu, NonFiniteValues)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  ExpectNonFiniteRules(Mode::GPU);
}

TEST(BinaryThresholdGpu, InPlaceStreamingAndDeviceResidency)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  using CudaUS3 = itk::CudaFilterImage<unsigned short, 3>;
  auto plain = RandomPixels<US3>({ 40, 30, 20 }, 111);
  auto reference = RunITK<US3, US3>(plain.GetPointer(), { 1000, 40000, 9, 1 });
  // in place on a device-resident CudaFilterImage: no transfer at all
  auto input = ToCudaImage<CudaUS3>(plain.GetPointer());
  input->GetDeviceBufferPointer(); // upload now
  auto filter = itk::CudaBinaryThresholdImageFilter<CudaUS3, CudaUS3>::New();
  filter->SetInput(input);
  filter->InPlaceOn();
  filter->SetExecutionMode(Mode::GPU);
  filter->SetLowerThreshold(1000);
  filter->SetUpperThreshold(40000);
  filter->SetInsideValue(9);
  filter->SetOutsideValue(1);
  cif::Runtime::ResetTransferCounters();
  filter->Update();
  auto counters = cif::Runtime::GetTransferCounters();
  EXPECT_EQ(counters.HostToDeviceCount, 0u);
  EXPECT_EQ(counters.DeviceToHostCount, 0u);
  EXPECT_EQ(CountDiffering(static_cast<const CudaUS3 *>(filter->GetOutput()), reference.GetPointer()), 0u);
  // in place on a plain image; streamed (the core reads sub-blocks of the input buffer)
  ExpectInPlaceAndStreamingMatchItk(plain.GetPointer(), Mode::GPU, 112);
}

TEST(BinaryThresholdGpu, RealImages)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto slice = ReadImage<UC2>(ExampleData("BrainProtonDensitySlice.png"));
  ExpectMatchesItk<UC2, UC2>(slice.GetPointer(), { 90, 200, 1, 0 }, Mode::GPU);
  auto volume = ReadImage<UC3>(ExampleData("KmeansTest_T1UCharRaw.nii.gz"));
  ExpectMatchesItk<UC3, F3>(volume.GetPointer(), { 50, {}, {}, {} }, Mode::GPU);
}

TEST(BinaryThresholdGpu, CoreWritesEveryOutputVoxel)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto                     image = RandomPixels<S3>({ 1100, 13, 11 }, 121);
  cif::ElementwiseGeometry g;
  g.size[0] = 1030;
  g.size[1] = 7;
  g.size[2] = 5;
  g.inputRowPitch = 1100;
  g.inputSlicePitch = 1100 * 13;
  const std::int64_t    offset = 3 + 1100 * 4 + 1100 * 13 * 2;
  const std::size_t     inCount = image->GetBufferedRegion().GetNumberOfPixels();
  const std::size_t     outCount = 1030 * 7 * 5;
  cif::DeviceBuffer in(inCount * 2), out(outCount);
  in.CopyFromHost(image->GetBufferPointer(), inCount * 2);
  out.FillBytes(0xA5);
  cif::ThresholdCUDA<short, unsigned char>(static_cast<const short *>(in.GetPointer()) + offset,
                                           static_cast<unsigned char *>(out.GetPointer()),
                                           g,
                                           -100,
                                           20000,
                                           1,
                                           0);
  std::vector<unsigned char> gpu(outCount), cpu(outCount);
  out.CopyToHost(gpu.data(), outCount);
  cif::ThresholdCPU<short, unsigned char>(image->GetBufferPointer() + offset, cpu.data(), g, -100, 20000, 1, 0, 2);
  EXPECT_EQ(gpu, cpu);
}

} // namespace
