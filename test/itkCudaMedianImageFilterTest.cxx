/*=========================================================================
 *  Tests of CudaMedianImageFilter and the median core (CPU and GPU paths).
 *
 *  Reference: ITK's own itk::MedianImageFilter. Tolerance: none, outputs
 *  must be identical pixel for pixel (operator==), for unsigned char (with
 *  many ties), short, unsigned short and NaN-free float images, 2D and 3D,
 *  isotropic and anisotropic radii, radius 0 on an axis, radii larger than
 *  the image, size-1 axes, and two real images.
 *
 *  With NaN, ITK's result is unspecified; the module's rule (NaN above
 *  +Inf, -0.0 below +0.0) is checked bit for bit against an independent
 *  sort-based reference written here.
 *
 *  Machines without a GPU still test the GPU algorithms: cif::MedianEmulateCUDA
 *  runs the kernels' per-thread code (tile loads, forgetful selection, radix
 *  select, stores) block by block on the CPU.
 *=========================================================================*/
#include "CudaImageFiltersTestUtilities.h"
#include "cif/Median.h"
#include "cif/MedianKeys.h"
#include "itkCudaFilterImage.h"
#include "itkCudaMedianImageFilter.h"
#include "itkCommand.h"
#include "itkExtractImageFilter.h"
#include "itkMedianImageFilter.h"
#include "itkStreamingImageFilter.h"

#include <gtest/gtest.h>
#include <algorithm>
#include <array>
#include <cstring>
#include <iterator>
#include <limits>
#include <type_traits>
#include <vector>

namespace
{
using namespace cif_test;
using Mode = itk::CudaExecutionMode;
using Kernel = itk::CudaMedianKernel;

using UC2 = itk::Image<unsigned char, 2>;
using UC3 = itk::Image<unsigned char, 3>;
using S2 = itk::Image<short, 2>;
using S3 = itk::Image<short, 3>;
using US2 = itk::Image<unsigned short, 2>;
using US3 = itk::Image<unsigned short, 3>;
using F2 = itk::Image<float, 2>;
using F3 = itk::Image<float, 3>;

/** Shared memory per block of an H100/H200 (opt-in), for the emulation. */
constexpr std::size_t kH200SharedBytes = 232448;

template <typename TImage>
typename TImage::SizeType
MakeRadius(std::initializer_list<itk::SizeValueType> values)
{
  return MakeSize<TImage>(values);
}

/** Random pixels in [lo, hi) with a non-trivial origin index. */
template <typename TImage>
typename TImage::Pointer
TestImage(const typename TImage::SizeType & size, double lo, double hi, unsigned seed)
{
  auto image = RandomImage<TImage>(size, lo, hi, seed);
  auto region = image->GetLargestPossibleRegion();
  auto index = region.GetIndex();
  for (unsigned d = 0; d < TImage::ImageDimension; ++d)
  {
    index[d] = 3 - static_cast<itk::IndexValueType>(2 * d);
  }
  region.SetIndex(index);
  image->SetRegions(region); // same buffer, shifted indices
  return image;
}

template <typename TImage>
typename TImage::Pointer
RunItk(const TImage * input, const typename TImage::SizeType & radius)
{
  auto filter = itk::MedianImageFilter<TImage, TImage>::New();
  filter->SetInput(input);
  filter->SetRadius(radius);
  filter->Update();
  return TakeOutput(filter.GetPointer());
}

struct RunInfo
{
  itk::CudaExecutedOn device{ itk::CudaExecutedOn::None };
  Kernel              kernel{ Kernel::Automatic };
  std::string         message;
};

template <typename TIn, typename TOut = TIn>
typename TOut::Pointer
RunOurs(const TIn *                    input,
        const typename TIn::SizeType & radius,
        Mode                           mode,
        Kernel                         kernel = Kernel::Automatic,
        RunInfo *                      info = nullptr)
{
  auto filter = itk::CudaMedianImageFilter<TIn, TOut>::New();
  filter->SetInput(input);
  filter->SetRadius(radius);
  filter->SetExecutionMode(mode);
  filter->SetGPUKernel(kernel);
  filter->Update();
  if (info)
  {
    info->device = filter->GetLastExecutedOn();
    info->kernel = filter->GetLastGPUKernel();
    info->message = filter->GetLastExecutionReport().Message;
  }
  return TakeOutput(filter.GetPointer());
}

/** Pixels of a (within b's region) that differ from b; NaN equals NaN. */
template <typename TA, typename TB>
std::size_t
CountDiffering(const TA * a, const TB * b)
{
  std::size_t                       count = 0;
  itk::ImageRegionConstIterator<TB> jt(b, a->GetBufferedRegion());
  for (itk::ImageRegionConstIterator<TA> it(a, a->GetBufferedRegion()); !it.IsAtEnd(); ++it, ++jt)
  {
    const double x = it.Get(), y = jt.Get();
    count += (x == y || (std::isnan(x) && std::isnan(y))) ? 0 : 1;
  }
  return count;
}

std::string
RadiusText(const itk::Size<2> & r)
{
  return std::to_string(r[0]) + "," + std::to_string(r[1]);
}
std::string
RadiusText(const itk::Size<3> & r)
{
  return std::to_string(r[0]) + "," + std::to_string(r[1]) + "," + std::to_string(r[2]);
}

/** The core job for a whole buffered image. */
template <typename TImage>
cif::MedianGeometry
WholeImageJob(const TImage * image, const typename TImage::SizeType & radius)
{
  cif::MedianGeometry g;
  for (unsigned d = 0; d < TImage::ImageDimension; ++d)
  {
    g.inputSize[d] = g.outputSize[d] = static_cast<std::int64_t>(image->GetBufferedRegion().GetSize(d));
    g.radius[d] = static_cast<std::int64_t>(radius[d]);
  }
  return g;
}

/** An empty image with the geometry of `like`. */
template <typename TImage>
typename TImage::Pointer
Like(const TImage * like)
{
  auto out = TImage::New();
  out->CopyInformation(like);
  out->SetRegions(like->GetBufferedRegion());
  out->Allocate();
  return out;
}

/** The GPU kernels' code on the CPU (see cif::MedianEmulateCUDA). */
template <typename TImage>
typename TImage::Pointer
Emulate(const TImage *                    input,
        const typename TImage::SizeType & radius,
        cif::MedianKernel                 kernel,
        cif::MedianPlan *                 plan = nullptr,
        std::size_t                       sharedBytes = kH200SharedBytes)
{
  auto       out = Like(input);
  const auto g = WholeImageJob(input, radius);
  const auto ran = cif::MedianEmulateCUDA(input->GetBufferPointer(), out->GetBufferPointer(), g, kernel, sharedBytes);
  if (plan)
  {
    *plan = ran;
  }
  return out;
}

/** Radii for the synthetic tests, with whether the selection kernel takes them. */
struct Case3
{
  std::array<itk::SizeValueType, 3> radius;
  bool                              selection;
};
const std::vector<Case3> kRadii3 = {
  { { 0, 0, 0 }, false }, { { 1, 0, 0 }, true }, { { 0, 0, 3 }, true },  { { 1, 1, 1 }, true },  { { 2, 2, 2 }, true },
  { { 2, 2, 1 }, true },  { { 1, 1, 2 }, true }, { { 2, 1, 1 }, true },  { { 1, 2, 2 }, true },  { { 0, 1, 2 }, true },
  { { 3, 2, 1 }, true },  { { 1, 3, 0 }, true }, { { 3, 3, 3 }, false }, { { 2, 3, 2 }, false },
};
struct Case2
{
  std::array<itk::SizeValueType, 2> radius;
  bool                              selection;
};
const std::vector<Case2> kRadii2 = {
  { { 0, 0 }, false }, { { 1, 1 }, true }, { { 2, 2 }, true },  { { 3, 3 }, true },
  { { 1, 3 }, true },  { { 3, 0 }, true }, { { 0, 2 }, true },  { { 2, 1 }, true },
  { { 4, 4 }, true },  { { 6, 2 }, true }, { { 5, 5 }, false }, { { 13, 1 }, false },
};

template <typename TSize>
std::int64_t
MedianWindow(const TSize & radius)
{
  std::int64_t n = 1;
  for (unsigned d = 0; d < TSize::Dimension; ++d)
  {
    n *= 2 * static_cast<std::int64_t>(radius[d]) + 1;
  }
  return n;
}

template <typename TImage, typename TCases>
void
ExpectAllPathsMatchItk(const TImage * input, const TCases & cases, bool emulate)
{
  for (const auto & c : cases)
  {
    typename TImage::SizeType radius;
    std::copy(c.radius.begin(), c.radius.end(), radius.begin());
    const auto itk = RunItk(input, radius);
    RunInfo    info;
    const auto cpu = RunOurs(input, radius, Mode::CPU, Kernel::Automatic, &info);
    EXPECT_EQ(info.device, itk::CudaExecutedOn::CPU);
    EXPECT_EQ(CountDiffering(cpu.GetPointer(), itk.GetPointer()), 0u) << "CPU core, radius " << RadiusText(radius);
    if (!emulate)
    {
      continue;
    }
    for (auto kernel : { cif::MedianKernel::Automatic,
                         cif::MedianKernel::Selection,
                         cif::MedianKernel::SlidingHistogram,
                         cif::MedianKernel::RadixTile,
                         cif::MedianKernel::RadixGlobal })
    {
      cif::MedianPlan plan;
      const auto      gpu = Emulate(input, radius, kernel, &plan);
      EXPECT_EQ(CountDiffering(gpu.GetPointer(), itk.GetPointer()), 0u)
        << "emulated " << cif::MedianKernelName(plan.kernel) << " (asked: " << cif::MedianKernelName(kernel)
        << "), radius " << RadiusText(radius) << ": " << plan.description;
      if (kernel == cif::MedianKernel::Selection)
      {
        EXPECT_EQ(plan.kernel == cif::MedianKernel::Selection, c.selection) << plan.description;
      }
      if (kernel == cif::MedianKernel::RadixTile)
      {
        EXPECT_EQ(plan.kernel,
                  MedianWindow(radius) > 1 ? cif::MedianKernel::RadixTile : cif::MedianKernel::RadixGlobal);
      }
      if (kernel == cif::MedianKernel::SlidingHistogram)
      {
        EXPECT_EQ(plan.kernel,
                  MedianWindow(radius) > 1 ? cif::MedianKernel::SlidingHistogram : cif::MedianKernel::RadixGlobal);
      }
    }
  }
}

// ===========================================================================
// CPU (CTest label "cpu"): the CPU core and the emulated GPU kernels
// ===========================================================================

TEST(MedianCpu, KeysKeepTheOrder)
{
  using K = cif::median::Keys<float>;
  const float values[] = { -INFINITY, -3e38f, -1.5f, -1e-40f, -0.0f, 0.0f, 1e-40f, 1.0f, 2.5e10f, INFINITY };
  for (std::size_t i = 0; i + 1 < std::size(values); ++i)
  {
    EXPECT_LT(K::ToKey(values[i]), K::ToKey(values[i + 1])) << values[i] << " vs " << values[i + 1];
  }
  for (float v : values)
  {
    const float back = K::FromKey(K::ToKey(v));
    EXPECT_EQ(std::memcmp(&back, &v, sizeof v), 0) << v;
  }
  EXPECT_EQ(K::ToKey(std::numeric_limits<float>::quiet_NaN()), 0xFFFFFFFFu);
  EXPECT_EQ(K::ToKey(-std::numeric_limits<float>::quiet_NaN()), 0xFFFFFFFFu);
  EXPECT_GT(K::ToKey(std::numeric_limits<float>::quiet_NaN()), K::ToKey(INFINITY));
  using KS = cif::median::Keys<short>;
  EXPECT_LT(KS::ToKey(-32768), KS::ToKey(-1));
  EXPECT_LT(KS::ToKey(-1), KS::ToKey(0));
  EXPECT_LT(KS::ToKey(0), KS::ToKey(32767));
  EXPECT_EQ(KS::FromKey(KS::ToKey(-1234)), -1234);
}

TEST(MedianCpu, MatchesItkOnRandomVolumes)
{
  ExpectAllPathsMatchItk(TestImage<UC3>(MakeSize<UC3>({ 37, 11, 9 }), 0, 5, 1).GetPointer(), kRadii3, true);
  ExpectAllPathsMatchItk(TestImage<S3>(MakeSize<S3>({ 19, 13, 10 }), -3000, 3000, 2).GetPointer(), kRadii3, true);
  ExpectAllPathsMatchItk(TestImage<US3>(MakeSize<US3>({ 21, 9, 12 }), 0, 65536, 3).GetPointer(), kRadii3, true);
  ExpectAllPathsMatchItk(TestImage<F3>(MakeSize<F3>({ 35, 10, 9 }), -100, 100, 4).GetPointer(), kRadii3, true);
  // floats with many ties (integers 0..3)
  auto ties = TestImage<F3>(MakeSize<F3>({ 17, 12, 11 }), 0, 4, 5);
  for (itk::ImageRegionIterator<F3> it(ties, ties->GetBufferedRegion()); !it.IsAtEnd(); ++it)
  {
    it.Set(std::floor(it.Get()));
  }
  ExpectAllPathsMatchItk(ties.GetPointer(), kRadii3, true);
}

TEST(MedianCpu, MatchesItkOnRandomImages2D)
{
  ExpectAllPathsMatchItk(TestImage<UC2>(MakeSize<UC2>({ 71, 40 }), 0, 4, 6).GetPointer(), kRadii2, true);
  ExpectAllPathsMatchItk(TestImage<S2>(MakeSize<S2>({ 45, 38 }), -30000, 30000, 7).GetPointer(), kRadii2, true);
  ExpectAllPathsMatchItk(TestImage<US2>(MakeSize<US2>({ 33, 50 }), 0, 1000, 8).GetPointer(), kRadii2, true);
  ExpectAllPathsMatchItk(TestImage<F2>(MakeSize<F2>({ 40, 41 }), -1e6, 1e6, 9).GetPointer(), kRadii2, true);
}

TEST(MedianCpu, MatchesItkOnRealImages)
{
  auto slice = ReadImage<UC2>(ExampleData("BrainProtonDensitySlice.png"));
  ExpectAllPathsMatchItk(slice.GetPointer(), std::vector<Case2>{ { { 1, 1 }, true }, { { 3, 2 }, true } }, true);
  auto volume = ReadImage<UC3>(ExampleData("KmeansTest_T1UCharRaw.nii.gz"));
  ExpectAllPathsMatchItk(volume.GetPointer(), std::vector<Case3>{ { { 1, 1, 1 }, true } }, false);
  // the emulation is slow: a part of the volume for it
  auto extract = itk::ExtractImageFilter<UC3, UC3>::New();
  extract->SetInput(volume);
  auto region = volume->GetLargestPossibleRegion();
  region.SetIndex(0, 40);
  region.SetIndex(1, 50);
  region.SetIndex(2, 20);
  region.SetSize(MakeSize<UC3>({ 40, 30, 12 }));
  extract->SetExtractionRegion(region);
  extract->Update();
  ExpectAllPathsMatchItk(extract->GetOutput(),
                         std::vector<Case3>{ { { 1, 1, 1 }, true }, { { 2, 2, 2 }, true }, { { 2, 1, 0 }, true } },
                         true);
  // The same anatomy as 16-bit and float intensities spread over many key
  // prefixes, with windows beyond the selection kernel: the sliding
  // histogram's levels below the first rebuild where the prefix changes.
  auto wide = itk::Image<unsigned short, 3>::New();
  auto real = itk::Image<float, 3>::New();
  for (auto * image : { static_cast<itk::ImageBase<3> *>(wide.GetPointer()), static_cast<itk::ImageBase<3> *>(real) })
  {
    image->CopyInformation(extract->GetOutput());
    image->SetRegions(extract->GetOutput()->GetBufferedRegion());
  }
  wide->Allocate();
  real->Allocate();
  const auto * source = extract->GetOutput()->GetBufferPointer();
  for (std::size_t i = 0; i < extract->GetOutput()->GetBufferedRegion().GetNumberOfPixels(); ++i)
  {
    wide->GetBufferPointer()[i] = static_cast<unsigned short>(source[i] * 251 + (i * 7919) % 97);
    real->GetBufferPointer()[i] = static_cast<float>(source[i]) * 37.3f - 1000.0f + static_cast<float>(i % 13) * 0.01f;
  }
  const std::vector<Case3> large = { { { 3, 3, 3 }, false }, { { 2, 4, 3 }, false } };
  ExpectAllPathsMatchItk(wide.GetPointer(), large, true);
  ExpectAllPathsMatchItk(real.GetPointer(), large, true);
}

TEST(MedianCpu, StreamsLikeItk)
{
  auto input = TestImage<US3>(MakeSize<US3>({ 30, 26, 22 }), 0, 4000, 10);
  auto filter = itk::CudaMedianImageFilter<US3, US3>::New();
  filter->SetInput(input);
  filter->SetRadius(MakeRadius<US3>({ 2, 1, 2 }));
  filter->SetExecutionMode(Mode::CPU);
  auto streamer = itk::StreamingImageFilter<US3, US3>::New();
  streamer->SetInput(filter->GetOutput());
  streamer->SetNumberOfStreamDivisions(4);
  streamer->Update();
  EXPECT_EQ(
    CountDiffering(streamer->GetOutput(), RunItk(input.GetPointer(), MakeRadius<US3>({ 2, 1, 2 })).GetPointer()), 0u);
}

TEST(MedianCpu, EmulatedKernelsHandleOutputSubRegions)
{
  // An output that starts inside the input buffer and ends past it, as a
  // streamed piece (or a hand-made job) can: indices are still clamped.
  auto       input = TestImage<S3>(MakeSize<S3>({ 23, 17, 13 }), -500, 500, 11);
  const auto radius = MakeRadius<S3>({ 2, 2, 1 });
  const auto itk = RunItk(input.GetPointer(), radius);
  for (auto kernel : { cif::MedianKernel::Selection,
                       cif::MedianKernel::SlidingHistogram,
                       cif::MedianKernel::RadixTile,
                       cif::MedianKernel::RadixGlobal })
  {
    cif::MedianGeometry g = WholeImageJob(input.GetPointer(), radius);
    const std::int64_t  start[3] = { 5, 3, 4 }, size[3] = { 15, 11, 7 };
    for (int a = 0; a < 3; ++a)
    {
      g.outputStart[a] = start[a];
      g.outputSize[a] = size[a];
    }
    std::vector<short> out(15 * 11 * 7);
    const auto plan = cif::MedianEmulateCUDA(input->GetBufferPointer(), out.data(), g, kernel, kH200SharedBytes);
    EXPECT_EQ(plan.kernel, kernel);
    std::size_t differing = 0;
    for (std::int64_t z = 0; z < size[2]; ++z)
      for (std::int64_t y = 0; y < size[1]; ++y)
        for (std::int64_t x = 0; x < size[0]; ++x)
        {
          auto index = input->GetBufferedRegion().GetIndex();
          index[0] += start[0] + x;
          index[1] += start[1] + y;
          index[2] += start[2] + z;
          differing += out[x + size[0] * (y + size[1] * z)] == itk->GetPixel(index) ? 0 : 1;
        }
    EXPECT_EQ(differing, 0u) << cif::MedianKernelName(kernel);
  }
}

/** Independent reference for the NaN rule: each window sorted with NaN last
 * and -0.0 before +0.0, its middle element; a NaN result is 0x7FFFFFFF. */
std::vector<std::uint32_t>
NaNRuleReference(const F3 * input, const itk::Size<3> & radius)
{
  const auto                 size = input->GetBufferedRegion().GetSize();
  const float *              p = input->GetBufferPointer();
  std::vector<std::uint32_t> bits;
  std::vector<float>         window;
  const auto                 before = [](float a, float b)
  {
    if (std::isnan(a) || std::isnan(b))
    {
      return !std::isnan(a) && std::isnan(b);
    }
    return a < b || (a == b && std::signbit(a) && !std::signbit(b));
  };
  const auto clamp = [](long i, long n) { return std::min(std::max(i, 0L), n - 1); };
  for (long z = 0; z < static_cast<long>(size[2]); ++z)
    for (long y = 0; y < static_cast<long>(size[1]); ++y)
      for (long x = 0; x < static_cast<long>(size[0]); ++x)
      {
        window.clear();
        for (long dz = -static_cast<long>(radius[2]); dz <= static_cast<long>(radius[2]); ++dz)
          for (long dy = -static_cast<long>(radius[1]); dy <= static_cast<long>(radius[1]); ++dy)
            for (long dx = -static_cast<long>(radius[0]); dx <= static_cast<long>(radius[0]); ++dx)
            {
              window.push_back(
                p[clamp(x + dx, size[0]) + size[0] * (clamp(y + dy, size[1]) + size[1] * clamp(z + dz, size[2]))]);
            }
        std::sort(window.begin(), window.end(), before);
        float         m = window[window.size() / 2];
        std::uint32_t b;
        std::memcpy(&b, &m, sizeof b);
        bits.push_back(std::isnan(m) ? 0x7FFFFFFFu : b);
      }
  return bits;
}

template <typename TImage>
std::vector<std::uint32_t>
Bits(const TImage * image)
{
  std::vector<std::uint32_t> bits;
  for (itk::ImageRegionConstIterator<TImage> it(image, image->GetBufferedRegion()); !it.IsAtEnd(); ++it)
  {
    const float   v = it.Get();
    std::uint32_t b;
    std::memcpy(&b, &v, sizeof b);
    bits.push_back(b);
  }
  return bits;
}

/** A float volume with NaNs (a third, and most pixels of the first six
 * columns, so that some medians are NaN), infinities, signed zeros and
 * numbers. */
F3::Pointer
NaNVolume()
{
  auto                               input = TestImage<F3>(MakeSize<F3>({ 19, 14, 9 }), -3, 3, 12);
  std::mt19937                       rng(13);
  std::uniform_int_distribution<int> pick(0, 9);
  for (itk::ImageRegionIterator<F3> it(input, input->GetBufferedRegion()); !it.IsAtEnd(); ++it)
  {
    const int r = pick(rng);
    if (r < 3 || (it.GetIndex()[0] < 6 && r < 8))
    {
      it.Set(r % 2 ? std::numeric_limits<float>::quiet_NaN() : -std::numeric_limits<float>::quiet_NaN());
    }
    else if (r == 9)
    {
      it.Set(it.GetIndex()[1] % 2 ? INFINITY : -INFINITY);
    }
    else if (r >= 6)
    {
      it.Set(it.Get() < 0 ? -0.0f : 0.0f);
    }
    // else: the random value in [-3, 3)
  }
  return input;
}

TEST(MedianCpu, NaNRuleOnCpuAndEmulatedKernels)
{
  const auto input = NaNVolume();
  for (const auto & radius : { MakeRadius<F3>({ 1, 1, 1 }), MakeRadius<F3>({ 2, 2, 2 }), MakeRadius<F3>({ 3, 1, 2 }) })
  {
    const auto expected = NaNRuleReference(input.GetPointer(), radius);
    const auto nanCount = std::count(expected.begin(), expected.end(), 0x7FFFFFFFu);
    EXPECT_GT(nanCount, 0) << "the test volume must produce NaN medians";
    EXPECT_LT(nanCount, static_cast<long>(expected.size())) << "and numbers";
    EXPECT_EQ(Bits(RunOurs(input.GetPointer(), radius, Mode::CPU).GetPointer()), expected) << RadiusText(radius);
    for (auto kernel : { cif::MedianKernel::Selection,
                         cif::MedianKernel::SlidingHistogram,
                         cif::MedianKernel::RadixTile,
                         cif::MedianKernel::RadixGlobal })
    {
      EXPECT_EQ(Bits(Emulate(input.GetPointer(), radius, kernel).GetPointer()), expected)
        << cif::MedianKernelName(kernel) << ", radius " << RadiusText(radius);
    }
  }
}

TEST(MedianCpu, SizeOneAxesAndRadiusLargerThanTheImage)
{
  const std::vector<UC3::SizeType> sizes = { MakeSize<UC3>({ 1, 1, 1 }),  MakeSize<UC3>({ 1, 9, 7 }),
                                             MakeSize<UC3>({ 13, 1, 5 }), MakeSize<UC3>({ 6, 5, 1 }),
                                             MakeSize<UC3>({ 1, 1, 17 }), MakeSize<UC3>({ 5, 4, 3 }) };
  const std::vector<UC3::SizeType> radii = { MakeRadius<UC3>({ 1, 1, 1 }),
                                             MakeRadius<UC3>({ 2, 2, 2 }),
                                             MakeRadius<UC3>({ 7, 3, 9 }),
                                             MakeRadius<UC3>({ 20, 20, 20 }) };
  unsigned                         seed = 20;
  for (const auto & size : sizes)
  {
    const auto input = TestImage<UC3>(size, 0, 7, seed++);
    for (const auto & radius : radii)
    {
      const auto itk = RunItk(input.GetPointer(), radius);
      EXPECT_EQ(CountDiffering(RunOurs(input.GetPointer(), radius, Mode::CPU).GetPointer(), itk.GetPointer()), 0u)
        << "CPU, size " << size << ", radius " << RadiusText(radius);
      for (auto kernel : { cif::MedianKernel::Automatic,
                           cif::MedianKernel::Selection,
                           cif::MedianKernel::SlidingHistogram,
                           cif::MedianKernel::RadixTile,
                           cif::MedianKernel::RadixGlobal })
      {
        cif::MedianPlan plan;
        EXPECT_EQ(CountDiffering(Emulate(input.GetPointer(), radius, kernel, &plan).GetPointer(), itk.GetPointer()), 0u)
          << cif::MedianKernelName(plan.kernel) << ", size " << size << ", radius " << RadiusText(radius);
      }
    }
  }
  // a 2D image thinner than its window
  const auto thin = TestImage<US2>(MakeSize<US2>({ 3, 40 }), 0, 100, 30);
  ExpectAllPathsMatchItk(thin.GetPointer(), std::vector<Case2>{ { { 5, 1 }, true }, { { 1, 30 }, false } }, true);
}

TEST(MedianCpu, PlanFallsBackAndSaysWhy)
{
  cif::MedianGeometry g;
  for (int a = 0; a < 3; ++a)
  {
    g.inputSize[a] = g.outputSize[a] = 64;
    g.radius[a] = 1;
  }
  auto plan = cif::PlanMedian<unsigned short>(g, cif::MedianKernel::Automatic, kH200SharedBytes);
  EXPECT_EQ(plan.kernel, cif::MedianKernel::Selection) << plan.description;
  g.radius[0] = g.radius[1] = g.radius[2] = 2;
  plan = cif::PlanMedian<unsigned short>(g, cif::MedianKernel::Automatic, kH200SharedBytes);
  EXPECT_EQ(plan.kernel, cif::MedianKernel::Selection) << plan.description;
  // 343 pixels: the sliding histogram pays in one level of counters (keys
  // spanning fewer than 4096 values), not in two 8-bit levels
  g.radius[0] = g.radius[1] = g.radius[2] = 3;
  plan = cif::PlanMedian<unsigned short>(g, cif::MedianKernel::Automatic, kH200SharedBytes, 4095);
  EXPECT_EQ(plan.kernel, cif::MedianKernel::SlidingHistogram) << plan.description;
  plan = cif::PlanMedian<unsigned short>(g, cif::MedianKernel::Automatic, kH200SharedBytes, 4096);
  EXPECT_EQ(plan.kernel, cif::MedianKernel::RadixTile) << plan.description;
  g.radius[0] = g.radius[1] = g.radius[2] = 5;
  plan = cif::PlanMedian<unsigned short>(g, cif::MedianKernel::Automatic, kH200SharedBytes);
  EXPECT_EQ(plan.kernel, cif::MedianKernel::SlidingHistogram) << plan.description;
  plan = cif::PlanMedian<unsigned short>(g, cif::MedianKernel::RadixTile, kH200SharedBytes);
  EXPECT_EQ(plan.kernel, cif::MedianKernel::RadixTile) << plan.description;

  // selection asked for a window it cannot hold
  plan = cif::PlanMedian<unsigned short>(g, cif::MedianKernel::Selection, kH200SharedBytes);
  EXPECT_EQ(plan.kernel, cif::MedianKernel::SlidingHistogram);
  EXPECT_NE(plan.description.find("selection was asked for"), std::string::npos) << plan.description;

  // a radix tile larger than the shared memory
  g.radius[0] = g.radius[1] = g.radius[2] = 30;
  g.inputSize[0] = g.outputSize[0] = 200;
  plan = cif::PlanMedian<unsigned short>(g, cif::MedianKernel::Automatic, kH200SharedBytes);
  EXPECT_EQ(plan.kernel, cif::MedianKernel::RadixGlobal) << plan.description;
  EXPECT_NE(plan.description.find("shared-memory tile"), std::string::npos) << plan.description;
  // a window more than twice the image it covers: radix from global memory
  g.inputSize[0] = g.outputSize[0] = 20;
  plan = cif::PlanMedian<unsigned short>(g, cif::MedianKernel::Automatic, kH200SharedBytes);
  EXPECT_EQ(plan.kernel, cif::MedianKernel::RadixGlobal) << plan.description;
  g.inputSize[0] = g.outputSize[0] = 200;
  plan = cif::PlanMedian<unsigned short>(g, cif::MedianKernel::RadixTile, kH200SharedBytes);
  EXPECT_EQ(plan.kernel, cif::MedianKernel::RadixGlobal);
  EXPECT_NE(plan.description.find("shared-memory tile"), std::string::npos) << plan.description;

  // and the emulation follows the same fallback with a small shared memory
  const auto      input = TestImage<US3>(MakeSize<US3>({ 12, 9, 7 }), 0, 50, 31);
  const auto      radius = MakeRadius<US3>({ 4, 3, 3 });
  cif::MedianPlan ran;
  const auto      out = Emulate(input.GetPointer(), radius, cif::MedianKernel::RadixTile, &ran, 4096);
  EXPECT_EQ(ran.kernel, cif::MedianKernel::RadixGlobal);
  EXPECT_EQ(CountDiffering(out.GetPointer(), RunItk(input.GetPointer(), radius).GetPointer()), 0u);
}

TEST(MedianCpu, SlidingHistogramCountsKeysInLevelsOfAtMost12Bits)
{
  // Keys are counted from the input's smallest one: in one level when they
  // span fewer than 4096 values, else in levels of at most 12 bits, the
  // lower ones rebuilt where the digits above them change.
  const auto radius = MakeRadius<S3>({ 3, 2, 3 });
  for (const auto & c : std::vector<std::pair<double, const char *>>{
         { 1500, "span 2999 values, counted in 12 bits (one level" }, { 3000, "counted in 1 + 12 bits (levels" } })
  {
    const auto      input = TestImage<S3>(MakeSize<S3>({ 23, 9, 14 }), -c.first, c.first, 77);
    cif::MedianPlan plan;
    const auto      out = Emulate(input.GetPointer(), radius, cif::MedianKernel::SlidingHistogram, &plan);
    EXPECT_EQ(plan.kernel, cif::MedianKernel::SlidingHistogram);
    EXPECT_NE(plan.description.find(c.second), std::string::npos) << plan.description;
    EXPECT_EQ(CountDiffering(out.GetPointer(), RunItk(input.GetPointer(), radius).GetPointer()), 0u)
      << plan.description;
  }
  const auto      wide = TestImage<US3>(MakeSize<US3>({ 23, 9, 14 }), 0, 65536, 78);
  const auto      real = TestImage<F3>(MakeSize<F3>({ 23, 9, 14 }), -100, 100, 79);
  cif::MedianPlan plan;
  auto out = Emulate(wide.GetPointer(), MakeRadius<US3>({ 3, 2, 3 }), cif::MedianKernel::SlidingHistogram, &plan);
  EXPECT_NE(plan.description.find("counted in 4 + 12 bits"), std::string::npos) << plan.description;
  EXPECT_EQ(CountDiffering(out.GetPointer(), RunItk(wide.GetPointer(), MakeRadius<US3>({ 3, 2, 3 })).GetPointer()), 0u);
  const auto floats =
    Emulate(real.GetPointer(), MakeRadius<F3>({ 3, 2, 3 }), cif::MedianKernel::SlidingHistogram, &plan);
  EXPECT_NE(plan.description.find(" + 12 + 12 bits"), std::string::npos) << plan.description;
  EXPECT_EQ(CountDiffering(floats.GetPointer(), RunItk(real.GetPointer(), MakeRadius<F3>({ 3, 2, 3 })).GetPointer()),
            0u);
  // a window of 2^16 pixels or more would overflow the 16-bit counters
  const auto big = MakeRadius<US3>({ 20, 20, 20 });
  out = Emulate(wide.GetPointer(), big, cif::MedianKernel::SlidingHistogram, &plan);
  EXPECT_EQ(plan.kernel, cif::MedianKernel::RadixGlobal);
  EXPECT_NE(plan.description.find("overflows its 16-bit counters"), std::string::npos) << plan.description;
  EXPECT_EQ(CountDiffering(out.GetPointer(), RunItk(wide.GetPointer(), big).GetPointer()), 0u);
}

/** A float volume of integers in [lo, hi) (CT read as float). */
F3::Pointer
IntegerFloats(int lo, int hi, unsigned seed)
{
  auto image = TestImage<F3>(MakeSize<F3>({ 29, 17, 13 }), lo, hi, seed);
  for (itk::ImageRegionIterator<F3> it(image, image->GetBufferedRegion()); !it.IsAtEnd(); ++it)
  {
    it.Set(std::floor(it.Get()));
  }
  return image;
}

TEST(MedianCpu, IntegerFloatsRunOnSixteenBitOffsets)
{
  // Past the selection kernel, float pixels that all hold integers spanning
  // fewer than 2^16 values run on 16-bit offsets from the smallest; any
  // other float (a fraction, -0.0, a wider span) keeps 32-bit keys.
  const auto radius = MakeRadius<F3>({ 3, 3, 2 });
  struct Case
  {
    F3::Pointer image;
    bool        offsets;
  };
  auto negativeZero = IntegerFloats(-3, 3, 93);
  negativeZero->GetBufferPointer()[100] = -0.0f;
  auto fraction = IntegerFloats(-1024, 3072, 94);
  fraction->GetBufferPointer()[7] = 0.5f;
  for (const auto & c : { Case{ IntegerFloats(-1024, 3072, 91), true },
                          Case{ IntegerFloats(-40000, 20000, 92), true },
                          Case{ IntegerFloats(-40000, 40000, 95), false },
                          Case{ negativeZero, false },
                          Case{ fraction, false } })
  {
    const auto itk = RunItk(c.image.GetPointer(), radius);
    for (auto kernel :
         { cif::MedianKernel::Automatic, cif::MedianKernel::SlidingHistogram, cif::MedianKernel::RadixTile })
    {
      cif::MedianPlan plan;
      const auto      out = Emulate(c.image.GetPointer(), radius, kernel, &plan);
      EXPECT_EQ(plan.description.find("all integers in [") != std::string::npos, c.offsets) << plan.description;
      EXPECT_EQ(CountDiffering(out.GetPointer(), itk.GetPointer()), 0u) << plan.description;
    }
  }
}

TEST(MedianCpu, UnsupportedPixelTypesRunItkOnTheCpu)
{
  using D2 = itk::Image<double, 2>;
  auto       input = TestImage<D2>(MakeSize<D2>({ 20, 16 }), -5, 5, 40);
  const auto radius = MakeRadius<D2>({ 1, 2 });
  RunInfo    info;
  auto       out = RunOurs(input.GetPointer(), radius, Mode::Automatic, Kernel::Automatic, &info);
  EXPECT_EQ(info.device, itk::CudaExecutedOn::CPU);
  if (cif::Runtime::IsDeviceAvailable())
  {
    EXPECT_NE(info.message.find("double"), std::string::npos) << info.message;
  }
  const std::string why = itk::CudaMedianImageFilter<D2, D2>::New()->GetGPUUnsupportedReason();
  EXPECT_NE(why.find("double"), std::string::npos) << why;
  EXPECT_EQ(CountDiffering(out.GetPointer(), RunItk(input.GetPointer(), radius).GetPointer()), 0u);
  EXPECT_THROW(RunOurs(input.GetPointer(), radius, Mode::GPU), itk::ExceptionObject);

  // different input and output types: ITK's conversion on the CPU
  auto shorts = TestImage<S2>(MakeSize<S2>({ 15, 12 }), -100, 100, 41);
  auto filter = itk::CudaMedianImageFilter<S2, F2>::New();
  filter->SetInput(shorts);
  filter->SetRadius(1);
  filter->Update();
  EXPECT_EQ(filter->GetLastExecutedOn(), itk::CudaExecutedOn::CPU);
  EXPECT_NE(filter->GetGPUUnsupportedReason().find("short to float"), std::string::npos)
    << filter->GetGPUUnsupportedReason();
  auto reference = itk::MedianImageFilter<S2, F2>::New();
  reference->SetInput(shorts);
  reference->SetRadius(1);
  reference->Update();
  EXPECT_EQ(CountDiffering(filter->GetOutput(), reference->GetOutput()), 0u);

  // four dimensions
  using UC4 = itk::Image<unsigned char, 4>;
  auto input4 = RandomImage<UC4>(MakeSize<UC4>({ 6, 5, 4, 3 }), 0, 9, 42);
  auto f4 = itk::CudaMedianImageFilter<UC4, UC4>::New();
  f4->SetInput(input4);
  f4->SetRadius(1);
  f4->Update();
  EXPECT_EQ(f4->GetLastExecutedOn(), itk::CudaExecutedOn::CPU);
  EXPECT_EQ(CountDiffering(f4->GetOutput(), RunItk(input4.GetPointer(), MakeRadius<UC4>({ 1, 1, 1, 1 })).GetPointer()),
            0u);
}

TEST(MedianCpu, ReportsProgressFromTheCore)
{
  // the CPU core reports ten stages; the filter passes them on as ITK's
  // progress events, ending at 1
  auto input = RandomImage<UC3>(MakeSize<UC3>({ 24, 20, 16 }), 0, 255, 5);
  auto filter = itk::CudaMedianImageFilter<UC3, UC3>::New();
  filter->SetInput(input);
  filter->SetRadius(1);
  filter->SetExecutionMode(Mode::CPU);
  const std::vector<float> seen = UpdateCollectingProgress(filter);
  const auto between = std::count_if(seen.begin(), seen.end(), [](float f) { return f > 0.0f && f < 1.0f; });
  EXPECT_GE(between, 5) << "progress events: " << seen.size();
  ASSERT_FALSE(seen.empty());
  EXPECT_FLOAT_EQ(seen.back(), 1.0f);
}

TEST(MedianCpu, EmptyInputThrows)
{
  auto input = UC2::New();
  input->SetRegions(MakeSize<UC2>({ 0, 5 }));
  input->Allocate();
  for (Mode mode : { Mode::CPU, Mode::Automatic })
  {
    auto filter = itk::CudaMedianImageFilter<UC2, UC2>::New();
    filter->SetInput(input);
    filter->SetExecutionMode(mode);
    EXPECT_THROW(filter->Update(), itk::ExceptionObject);
  }
  cif::MedianGeometry g;
  g.inputSize[1] = 0;
  EXPECT_NE(cif::ValidateMedianJob(g), "");
  g.inputSize[1] = 1;
  g.radius[2] = 1 << 20; // a window of 2^21 + 1 pixels is fine ...
  EXPECT_EQ(cif::ValidateMedianJob(g), "");
  g.radius[0] = g.radius[1] = 1 << 10; // ... 2^53 is not
  EXPECT_NE(cif::ValidateMedianJob(g).find("pixels"), std::string::npos);
}

TEST(MedianCpu, GpuModeWithoutGpuThrows)
{
  if (cif::Runtime::IsDeviceAvailable())
  {
    GTEST_SKIP() << "this machine has a GPU";
  }
  auto input = TestImage<UC2>(MakeSize<UC2>({ 8, 8 }), 0, 9, 43);
  EXPECT_THROW(RunOurs(input.GetPointer(), MakeRadius<UC2>({ 1, 1 }), Mode::GPU), itk::ExceptionObject);
  RunInfo info;
  RunOurs(input.GetPointer(), MakeRadius<UC2>({ 1, 1 }), Mode::Automatic, Kernel::Automatic, &info);
  EXPECT_EQ(info.device, itk::CudaExecutedOn::CPU);
  EXPECT_NE(info.message.find("CPU, because"), std::string::npos) << info.message;
}

// ===========================================================================
// GPU (CTest label "gpu")
// ===========================================================================

template <typename TImage, typename TCases>
void
ExpectGpuMatchesItk(const TImage * input, const TCases & cases)
{
  for (const auto & c : cases)
  {
    typename TImage::SizeType radius;
    std::copy(c.radius.begin(), c.radius.end(), radius.begin());
    const auto itk = RunItk(input, radius);
    for (Kernel kernel :
         { Kernel::Automatic, Kernel::Selection, Kernel::SlidingHistogram, Kernel::RadixTile, Kernel::RadixGlobal })
    {
      RunInfo    info;
      const auto gpu = RunOurs(input, radius, Mode::GPU, kernel, &info);
      EXPECT_EQ(info.device, itk::CudaExecutedOn::GPU);
      EXPECT_EQ(CountDiffering(gpu.GetPointer(), itk.GetPointer()), 0u)
        << "radius " << RadiusText(radius) << ", " << info.message;
      if (kernel == Kernel::Selection)
      {
        EXPECT_EQ(info.kernel == Kernel::Selection, c.selection) << info.message;
      }
      if (kernel == Kernel::RadixGlobal)
      {
        EXPECT_EQ(info.kernel, Kernel::RadixGlobal);
      }
    }
  }
}

TEST(MedianGpu, MatchesItkOnRandomVolumes)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  ExpectGpuMatchesItk(TestImage<UC3>(MakeSize<UC3>({ 37, 11, 9 }), 0, 5, 1).GetPointer(), kRadii3);
  ExpectGpuMatchesItk(TestImage<S3>(MakeSize<S3>({ 19, 13, 10 }), -3000, 3000, 2).GetPointer(), kRadii3);
  ExpectGpuMatchesItk(TestImage<US3>(MakeSize<US3>({ 41, 23, 17 }), 0, 65536, 3).GetPointer(), kRadii3);
  ExpectGpuMatchesItk(TestImage<F3>(MakeSize<F3>({ 35, 18, 9 }), -100, 100, 4).GetPointer(), kRadii3);
}

TEST(MedianGpu, MatchesItkOnRandomImages2D)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  ExpectGpuMatchesItk(TestImage<UC2>(MakeSize<UC2>({ 71, 40 }), 0, 4, 6).GetPointer(), kRadii2);
  ExpectGpuMatchesItk(TestImage<S2>(MakeSize<S2>({ 45, 38 }), -30000, 30000, 7).GetPointer(), kRadii2);
  ExpectGpuMatchesItk(TestImage<US2>(MakeSize<US2>({ 133, 50 }), 0, 1000, 8).GetPointer(), kRadii2);
  ExpectGpuMatchesItk(TestImage<F2>(MakeSize<F2>({ 40, 41 }), -1e6, 1e6, 9).GetPointer(), kRadii2);
}

TEST(MedianGpu, MatchesItkOnRealImages)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto slice = ReadImage<UC2>(ExampleData("BrainProtonDensitySlice.png"));
  ExpectGpuMatchesItk(slice.GetPointer(),
                      std::vector<Case2>{ { { 1, 1 }, true }, { { 2, 2 }, true }, { { 5, 5 }, false } });
  auto volume = ReadImage<UC3>(ExampleData("KmeansTest_T1UCharRaw.nii.gz"));
  ExpectGpuMatchesItk(volume.GetPointer(), std::vector<Case3>{ { { 1, 1, 1 }, true }, { { 2, 2, 1 }, true } });
}

TEST(MedianGpu, CoreWritesEveryOutputPixel)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  // Two runs into outputs poisoned with 0x00 and 0xFF bytes: a pixel left
  // unwritten would keep a poison in at least one of them.
  const auto        input = TestImage<US3>(MakeSize<US3>({ 45, 19, 13 }), 0, 65536, 50);
  const auto        count = input->GetBufferedRegion().GetNumberOfPixels();
  cif::DeviceBuffer in(count * 2), out(count * 2);
  in.CopyFromHost(input->GetBufferPointer(), count * 2);
  for (const auto & radius :
       { MakeRadius<US3>({ 1, 1, 1 }), MakeRadius<US3>({ 2, 2, 2 }), MakeRadius<US3>({ 3, 3, 1 }) })
  {
    const auto itk = RunItk(input.GetPointer(), radius);
    const auto g = WholeImageJob(input.GetPointer(), radius);
    for (auto kernel : { cif::MedianKernel::Selection,
                         cif::MedianKernel::SlidingHistogram,
                         cif::MedianKernel::RadixTile,
                         cif::MedianKernel::RadixGlobal })
    {
      for (int poison : { 0x00, 0xFF })
      {
        out.FillBytes(poison);
        cif::MedianCUDA(static_cast<const unsigned short *>(in.GetPointer()),
                        static_cast<unsigned short *>(out.GetPointer()),
                        g,
                        kernel);
        auto result = Like(input.GetPointer());
        out.CopyToHost(result->GetBufferPointer(), count * 2);
        EXPECT_EQ(CountDiffering(result.GetPointer(), itk.GetPointer()), 0u)
          << cif::MedianKernelName(kernel) << ", poison " << poison << ", radius " << RadiusText(radius);
      }
    }
  }
}

TEST(MedianGpu, SlidingHistogramLevelsMatchItk)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  // Each way of counting keys, on the device, into poisoned outputs: one
  // level from a nonzero base, 1 + 12 and 4 + 12 bits, and float levels.
  const auto run = [](const auto * input, const auto & radius, const char * counting)
  {
    using TImage = typename std::remove_cv<typename std::remove_pointer<decltype(input)>::type>::type;
    using T = typename TImage::PixelType;
    const auto        count = input->GetBufferedRegion().GetNumberOfPixels();
    cif::DeviceBuffer in(count * sizeof(T)), out(count * sizeof(T));
    in.CopyFromHost(input->GetBufferPointer(), count * sizeof(T));
    out.FillBytes(0xA5);
    const auto plan = cif::MedianCUDA(static_cast<const T *>(in.GetPointer()),
                                      static_cast<T *>(out.GetPointer()),
                                      WholeImageJob(input, radius),
                                      cif::MedianKernel::SlidingHistogram);
    EXPECT_EQ(plan.kernel, cif::MedianKernel::SlidingHistogram);
    EXPECT_NE(plan.description.find(counting), std::string::npos) << plan.description;
    auto result = Like(input);
    out.CopyToHost(result->GetBufferPointer(), count * sizeof(T));
    EXPECT_EQ(CountDiffering(result.GetPointer(), RunItk(input, radius).GetPointer()), 0u) << plan.description;
  };
  const auto size = MakeSize<S3>({ 61, 37, 29 });
  const auto radius = MakeRadius<S3>({ 4, 3, 5 });
  run(TestImage<S3>(size, -1500, 1500, 81).GetPointer(), radius, "counted in 12 bits (one level");
  run(TestImage<S3>(size, -3000, 3000, 82).GetPointer(), radius, "counted in 1 + 12 bits");
  run(TestImage<US3>(MakeSize<US3>({ 61, 37, 29 }), 0, 65536, 83).GetPointer(),
      MakeRadius<US3>({ 4, 3, 5 }),
      "counted in 4 + 12 bits");
  run(TestImage<F3>(MakeSize<F3>({ 61, 37, 29 }), -100, 100, 84).GetPointer(),
      MakeRadius<F3>({ 4, 3, 5 }),
      " + 12 + 12 bits");
  run(TestImage<US2>(MakeSize<US2>({ 300, 41 }), 1000, 3000, 85).GetPointer(),
      MakeRadius<US2>({ 6, 9 }),
      "counted in 11 bits (one level");
}

TEST(MedianGpu, IntegerFloatsRunOnSixteenBitOffsets)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  const auto radius = MakeRadius<F3>({ 4, 3, 3 });
  for (const auto & c : std::vector<std::pair<F3::Pointer, bool>>{ { IntegerFloats(-1024, 3072, 96), true },
                                                                   { IntegerFloats(-40000, 40000, 97), false } })
  {
    RunInfo    info;
    const auto gpu = RunOurs(c.first.GetPointer(), radius, Mode::GPU, Kernel::Automatic, &info);
    EXPECT_EQ(info.device, itk::CudaExecutedOn::GPU);
    EXPECT_EQ(info.message.find("all integers in [") != std::string::npos, c.second) << info.message;
    EXPECT_EQ(CountDiffering(gpu.GetPointer(), RunItk(c.first.GetPointer(), radius).GetPointer()), 0u) << info.message;
  }
}

TEST(MedianGpu, CudaImageStaysOnTheDevice)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  using CudaUS3 = itk::CudaFilterImage<unsigned short, 3>;
  auto plain = TestImage<US3>(MakeSize<US3>({ 64, 48, 20 }), 0, 4096, 51);
  auto input = CudaUS3::New();
  input->SetRegions(plain->GetLargestPossibleRegion());
  input->CopyInformation(plain);
  input->Allocate();
  std::copy(plain->GetBufferPointer(),
            plain->GetBufferPointer() + plain->GetBufferedRegion().GetNumberOfPixels(),
            input->GetBufferPointer());

  auto first = itk::CudaMedianImageFilter<CudaUS3, CudaUS3>::New();
  first->SetInput(input);
  first->SetRadius(1);
  first->SetExecutionMode(Mode::GPU);
  auto second = itk::CudaMedianImageFilter<CudaUS3, CudaUS3>::New();
  second->SetInput(first->GetOutput());
  second->SetRadius(2);
  second->SetExecutionMode(Mode::GPU);
  cif::Runtime::ResetTransferCounters();
  second->Update();
  const auto counters = cif::Runtime::GetTransferCounters();
  EXPECT_EQ(counters.HostToDeviceCount, 1u); // the input, once
  EXPECT_EQ(counters.DeviceToHostCount, 0u); // nothing comes back
  EXPECT_FALSE(second->GetOutput()->IsHostBufferCurrent());

  const auto expected =
    RunItk(RunItk(plain.GetPointer(), MakeRadius<US3>({ 1, 1, 1 })).GetPointer(), MakeRadius<US3>({ 2, 2, 2 }));
  EXPECT_EQ(CountDiffering(static_cast<const CudaUS3 *>(second->GetOutput()), expected.GetPointer()), 0u);
}

TEST(MedianGpu, NaNRuleMatchesTheCpu)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  const auto input = NaNVolume();
  for (const auto & radius : { MakeRadius<F3>({ 1, 1, 1 }), MakeRadius<F3>({ 2, 2, 2 }), MakeRadius<F3>({ 3, 1, 2 }) })
  {
    const auto expected = NaNRuleReference(input.GetPointer(), radius);
    for (Kernel kernel : { Kernel::Selection, Kernel::RadixTile, Kernel::RadixGlobal })
    {
      EXPECT_EQ(Bits(RunOurs(input.GetPointer(), radius, Mode::GPU, kernel).GetPointer()), expected)
        << kernel << ", radius " << RadiusText(radius);
    }
  }
}

TEST(MedianGpu, StreamsLikeItk)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto input = TestImage<F3>(MakeSize<F3>({ 50, 36, 30 }), 0, 10, 52);
  for (Kernel kernel : { Kernel::Selection, Kernel::RadixTile, Kernel::RadixGlobal })
  {
    auto filter = itk::CudaMedianImageFilter<F3, F3>::New();
    filter->SetInput(input);
    filter->SetRadius(MakeRadius<F3>({ 2, 1, 2 }));
    filter->SetExecutionMode(Mode::GPU);
    filter->SetGPUKernel(kernel);
    auto streamer = itk::StreamingImageFilter<F3, F3>::New();
    streamer->SetInput(filter->GetOutput());
    streamer->SetNumberOfStreamDivisions(5);
    streamer->Update();
    EXPECT_EQ(filter->GetLastExecutedOn(), itk::CudaExecutedOn::GPU);
    EXPECT_EQ(
      CountDiffering(streamer->GetOutput(), RunItk(input.GetPointer(), MakeRadius<F3>({ 2, 1, 2 })).GetPointer()), 0u)
      << kernel;
  }
}

TEST(MedianGpu, SizeOneAxesAndRadiusLargerThanTheImage)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  const std::vector<US3::SizeType> sizes = { MakeSize<US3>({ 1, 1, 1 }),
                                             MakeSize<US3>({ 1, 9, 7 }),
                                             MakeSize<US3>({ 13, 1, 5 }),
                                             MakeSize<US3>({ 6, 5, 1 }),
                                             MakeSize<US3>({ 5, 4, 3 }) };
  unsigned                         seed = 60;
  for (const auto & size : sizes)
  {
    const auto input = TestImage<US3>(size, 0, 9, seed++);
    for (const auto & radius :
         { MakeRadius<US3>({ 1, 1, 1 }), MakeRadius<US3>({ 2, 2, 2 }), MakeRadius<US3>({ 20, 20, 20 }) })
    {
      const auto itk = RunItk(input.GetPointer(), radius);
      for (Kernel kernel :
           { Kernel::Automatic, Kernel::Selection, Kernel::SlidingHistogram, Kernel::RadixTile, Kernel::RadixGlobal })
      {
        RunInfo info;
        EXPECT_EQ(
          CountDiffering(RunOurs(input.GetPointer(), radius, Mode::GPU, kernel, &info).GetPointer(), itk.GetPointer()),
          0u)
          << "size " << size << ", radius " << RadiusText(radius) << ": " << info.message;
      }
    }
  }
}

TEST(MedianGpu, TileTooLargeFallsBackToGlobalMemoryAndSaysSo)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  // radius 20: a tile of 72 x 44 x 42 16-bit keys (260 KiB) fits no block
  const auto input = TestImage<US3>(MakeSize<US3>({ 9, 7, 6 }), 0, 1000, 70);
  const auto radius = MakeRadius<US3>({ 20, 20, 20 });
  RunInfo    info;
  const auto gpu = RunOurs(input.GetPointer(), radius, Mode::GPU, Kernel::RadixTile, &info);
  EXPECT_EQ(info.kernel, Kernel::RadixGlobal);
  EXPECT_NE(info.message.find("shared-memory tile"), std::string::npos) << info.message;
  EXPECT_EQ(CountDiffering(gpu.GetPointer(), RunItk(input.GetPointer(), radius).GetPointer()), 0u);
}

TEST(MedianGpu, OutOfMemoryFallsBackToCpuOrThrows)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto input = TestImage<F3>(MakeSize<F3>({ 64, 64, 32 }), 0, 1, 80);
  auto expected = RunItk(input.GetPointer(), MakeRadius<F3>({ 1, 1, 1 }));
  auto filter = itk::CudaMedianImageFilter<F3, F3>::New();
  filter->SetInput(input);
  filter->SetRadius(1);
  ExpectOutOfMemoryFallsBackToCpuOrThrows(filter.GetPointer(), expected.GetPointer());
}

TEST(MedianGpu, ReportsTheDeviceAndTheAlgorithm)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto filter = itk::CudaMedianImageFilter<US3, US3>::New();
  filter->SetInput(TestImage<US3>(MakeSize<US3>({ 16, 16, 8 }), 0, 100, 90));
  filter->SetRadius(1);
  filter->Update();
  EXPECT_EQ(filter->GetLastExecutedOn(), itk::CudaExecutedOn::GPU);
  EXPECT_EQ(filter->GetLastGPUKernel(), Kernel::Selection);
  const std::string & message = filter->GetLastExecutionReport().Message;
  EXPECT_NE(message.find(cif::Runtime::GetDeviceDescription()), std::string::npos) << message;
  EXPECT_NE(message.find("forgetful selection"), std::string::npos) << message;
  filter->SetRadius(4);
  filter->Update();
  EXPECT_EQ(filter->GetLastGPUKernel(), Kernel::SlidingHistogram);
  EXPECT_NE(filter->GetLastExecutionReport().Message.find("sliding histogram"), std::string::npos);
  filter->SetGPUKernel(Kernel::RadixTile);
  filter->Update();
  EXPECT_EQ(filter->GetLastGPUKernel(), Kernel::RadixTile);
  EXPECT_NE(filter->GetLastExecutionReport().Message.find("radix select"), std::string::npos);
}

} // namespace
