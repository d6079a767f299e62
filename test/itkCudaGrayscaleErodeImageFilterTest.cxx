/*=========================================================================
 *  Tests of CudaGrayscaleErodeImageFilter (CPU and GPU paths) and its core.
 *
 *  References: ITK's own itk::GrayscaleErodeImageFilter with
 *  itk::FlatStructuringElement::Box (anchor algorithm, ITK's choice for a
 *  box, and the basic and van Herk-Gil-Werman algorithms), and an
 *  independent brute-force reference written here: the minimum over the
 *  box's samples inside the image, and the boundary value when the box
 *  reaches past the image on an axis with a non-zero radius; NaN samples
 *  ignored.
 *
 *  Tolerance: none (a minimum is exact): every comparison counts differing
 *  pixels and expects 0. NaN input is compared with the reference only
 *  (ITK's result with NaN depends on its algorithm's comparison order).
 *
 *  Two defects of ITK 5.2's anchor algorithm are avoided, not replicated:
 *  - where the region a thread processes is one pixel thick along an axis
 *    (always on an image with a size-1 axis; with several work units also
 *    on thin thread slabs), ITK warns "Line [5, 0] doesn't correspond to a
 *    face" and leaves pixels unwritten (uninitialised memory), so the
 *    anchor reference runs with one work unit, and images with a size-1
 *    axis are compared with ITK's basic algorithm;
 *  - on a line of n pixels with radius r >= n + 2 its short-line branch
 *    keeps the largest sample instead of the smallest (so the result is
 *    the boundary value), so radii past the image are compared with ITK's
 *    basic algorithm, which gives the box minimum as this filter does.
 *=========================================================================*/
#include "CudaSegmentationTestUtilities.h"
#include "cif/BoxFilters.h"
#include "itkCudaGrayscaleErodeImageFilter.h"
#include "itkGrayscaleErodeImageFilter.h"
#include "itkStreamingImageFilter.h"

#include <gtest/gtest.h>
#include <vector>

namespace
{
using namespace cif_test;
using Mode = itk::CudaExecutionMode;

template <typename TImage>
using Kernel = itk::FlatStructuringElement<TImage::ImageDimension>;
template <typename TImage>
using ItkErode = itk::GrayscaleErodeImageFilter<TImage, TImage, Kernel<TImage>>;
template <typename TImage>
using OurErode = itk::CudaGrayscaleErodeImageFilter<TImage, TImage>;
using Algorithm = itk::MathematicalMorphologyEnums::Algorithm;

template <typename TImage>
typename TImage::Pointer
RunITK(const TImage *                     input,
       const typename TImage::SizeType &  radius,
       Algorithm                          algorithm = Algorithm::ANCHOR,
       const typename TImage::PixelType * boundary = nullptr)
{
  auto filter = ItkErode<TImage>::New();
  filter->SetInput(input);
  filter->SetKernel(Kernel<TImage>::Box(radius));
  filter->SetAlgorithm(algorithm);
  if (algorithm == Algorithm::ANCHOR)
  {
    filter->SetNumberOfWorkUnits(1); // see the file comment
  }
  if (boundary)
  {
    filter->SetBoundary(*boundary);
  }
  filter->Update();
  return TakeOutput(filter.GetPointer());
}

template <typename TImage>
typename TImage::Pointer
RunOurs(const TImage *                     input,
        const typename TImage::SizeType &  radius,
        Mode                               mode,
        const typename TImage::PixelType * boundary = nullptr,
        itk::CudaExecutedOn *              ranOn = nullptr)
{
  auto filter = OurErode<TImage>::New();
  filter->SetInput(input);
  filter->SetKernel(Kernel<TImage>::Box(radius));
  filter->SetExecutionMode(mode);
  if (boundary)
  {
    filter->SetBoundary(*boundary);
  }
  filter->Update();
  if (ranOn)
  {
    *ranOn = filter->GetLastExecutedOn();
  }
  return TakeOutput(filter.GetPointer());
}

/** Independent reference (see the file comment). */
template <typename TImage>
std::vector<double>
ReferenceErosion(const TImage * input, const typename TImage::SizeType & radius, double boundary)
{
  constexpr unsigned  D = TImage::ImageDimension;
  const auto          region = input->GetBufferedRegion();
  std::vector<double> result;
  for (itk::ImageRegionConstIteratorWithIndex<TImage> it(input, region); !it.IsAtEnd(); ++it)
  {
    double m = NAN; // the empty minimum
    bool   crosses = false;
    auto   take = [&m](double v)
    {
      if (!std::isnan(v) && (std::isnan(m) || v < m))
      {
        m = v;
      }
    };
    std::vector<itk::IndexValueType> k(D);
    for (unsigned a = 0; a < D; ++a)
    {
      k[a] = -static_cast<itk::IndexValueType>(radius[a]);
      const auto i = it.GetIndex()[a] - region.GetIndex(a);
      const auto r = static_cast<itk::IndexValueType>(radius[a]);
      crosses = crosses || (r > 0 && (i - r < 0 || i + r > static_cast<itk::IndexValueType>(region.GetSize(a)) - 1));
    }
    for (;;)
    {
      typename TImage::IndexType q;
      for (unsigned a = 0; a < D; ++a)
      {
        q[a] = it.GetIndex()[a] + k[a];
      }
      if (region.IsInside(q))
      {
        take(static_cast<double>(input->GetPixel(q)));
      }
      unsigned a = 0;
      for (; a < D; ++a)
      {
        if (++k[a] <= static_cast<itk::IndexValueType>(radius[a]))
        {
          break;
        }
        k[a] = -static_cast<itk::IndexValueType>(radius[a]);
      }
      if (a == D)
      {
        break;
      }
    }
    if (crosses)
    {
      take(boundary);
    }
    result.push_back(m);
  }
  return result;
}

template <typename TImage>
std::size_t
CountDifferingFrom(const TImage * image, const std::vector<double> & values)
{
  std::size_t count = 0, i = 0;
  for (itk::ImageRegionConstIterator<TImage> it(image, image->GetBufferedRegion()); !it.IsAtEnd(); ++it, ++i)
  {
    const double v = static_cast<double>(it.Get());
    count += ((std::isnan(v) && std::isnan(values[i])) || v == values[i]) ? 0 : 1;
  }
  return count;
}

template <typename TImage>
void
ExpectMatchesItk(const TImage *                     input,
                 const typename TImage::SizeType &  radius,
                 Mode                               mode,
                 const typename TImage::PixelType * boundary = nullptr,
                 Algorithm                          algorithm = Algorithm::ANCHOR)
{
  itk::CudaExecutedOn ranOn = itk::CudaExecutedOn::None;
  auto                ours = RunOurs<TImage>(input, radius, mode, boundary, &ranOn);
  auto                itk = RunITK<TImage>(input, radius, algorithm, boundary);
  EXPECT_EQ(CountDiffering(ours.GetPointer(), itk.GetPointer()), 0u)
    << itk::CudaPixelTypeName<typename TImage::PixelType>() << ", " << TImage::ImageDimension << "D, size "
    << input->GetBufferedRegion().GetSize() << ", radius " << radius;
  EXPECT_EQ(ranOn, mode == Mode::GPU ? itk::CudaExecutedOn::GPU : itk::CudaExecutedOn::CPU);
  EXPECT_TRUE(SameGeometry(ours.GetPointer(), itk.GetPointer()));
}

template <typename T>
void
ExpectAllCasesMatchItk(Mode mode, unsigned seed)
{
  using I2 = itk::Image<T, 2>;
  using I3 = itk::Image<T, 3>;
  const BoxFilterCases<T> cases(seed);
  cases.ForEach([mode](const auto * image, const auto & radius) { ExpectMatchesItk(image, radius, mode); });
  // a boundary value that wins at the edges: the rule "boundary takes part when the box crosses the edge"
  const T low = std::is_floating_point<T>::value ? T(-500) : T(std::numeric_limits<T>::lowest() / 2 + 40);
  ExpectMatchesItk<I2>(cases.image2.GetPointer(), Radius<I2>({ 2, 1 }), mode, &low);
  ExpectMatchesItk<I3>(cases.image3.GetPointer(), Radius<I3>({ 1, 0, 2 }), mode, &low);
}

using F2 = itk::Image<float, 2>;
using F3 = itk::Image<float, 3>;
using UC2 = itk::Image<unsigned char, 2>;
using UC3 = itk::Image<unsigned char, 3>;
using S3 = itk::Image<short, 3>;
using US2 = itk::Image<unsigned short, 2>;
using US3 = itk::Image<unsigned short, 3>;

/** +Inf everywhere except a finite block: at the edges ITK gives the float maximum (its boundary), not +Inf. */
F3::Pointer
InfinityImage()
{
  auto image = F3::New();
  image->SetRegions(F3::SizeType{ { 12, 10, 8 } });
  image->Allocate();
  image->FillBuffer(std::numeric_limits<float>::infinity());
  for (itk::IndexValueType z = 3; z < 5; ++z)
    for (itk::IndexValueType y = 4; y < 6; ++y)
      for (itk::IndexValueType x = 5; x < 8; ++x)
      {
        image->SetPixel({ { x, y, z } }, 1.5f);
      }
  image->SetPixel({ { 0, 0, 7 } }, -std::numeric_limits<float>::infinity());
  return image;
}

F3::Pointer
ImageWithNaN(unsigned seed)
{
  auto image = RandomPixels<F3>({ 14, 12, 9 }, seed);
  image->SetPixel({ { 0, 0, 0 } }, NAN);
  image->SetPixel({ { 5, 6, 4 } }, NAN);
  for (itk::IndexValueType x = 8; x < 12; ++x) // a NaN block bigger than a radius-1 box
    for (itk::IndexValueType y = 3; y < 7; ++y)
      for (itk::IndexValueType z = 2; z < 6; ++z)
      {
        image->SetPixel({ { x, y, z } }, NAN);
      }
  return image;
}

// ===========================================================================
// CPU
// ===========================================================================

TEST(ErodeCpu, MatchesItkForEveryPixelType)
{
  ExpectAllCasesMatchItk<unsigned char>(Mode::CPU, 1);
  ExpectAllCasesMatchItk<short>(Mode::CPU, 3);
  ExpectAllCasesMatchItk<unsigned short>(Mode::CPU, 5);
  ExpectAllCasesMatchItk<float>(Mode::CPU, 7);
}

TEST(ErodeCpu, MatchesItksOtherBoxAlgorithms)
{
  auto        image = RandomPixels<S3>({ 21, 15, 11 }, 11);
  const short boundary = -1000;
  for (Algorithm algorithm : { Algorithm::BASIC, Algorithm::VHGW, Algorithm::ANCHOR })
  {
    for (auto radius : { Radius<S3>({ 1 }), Radius<S3>({ 3, 0, 2 }) })
    {
      auto ours = RunOurs<S3>(image.GetPointer(), radius, Mode::CPU);
      EXPECT_EQ(CountDiffering(ours.GetPointer(), RunITK<S3>(image.GetPointer(), radius, algorithm).GetPointer()), 0u)
        << "algorithm " << algorithm << ", radius " << radius;
      auto low = RunOurs<S3>(image.GetPointer(), radius, Mode::CPU, &boundary);
      EXPECT_EQ(
        CountDiffering(low.GetPointer(), RunITK<S3>(image.GetPointer(), radius, algorithm, &boundary).GetPointer()), 0u)
        << "algorithm " << algorithm << ", radius " << radius << ", boundary " << boundary;
    }
  }
  // the histogram algorithm is left to ITK, and the report says so
  auto filter = OurErode<S3>::New();
  filter->SetInput(image);
  filter->SetKernel(Kernel<S3>::Box(Radius<S3>({ 1 })));
  filter->SetAlgorithm(Algorithm::HISTO);
  filter->Update();
  EXPECT_EQ(filter->GetLastExecutedOn(), itk::CudaExecutedOn::CPU);
  EXPECT_NE(filter->GetLastExecutionReport().Message.find("histogram"), std::string::npos)
    << filter->GetLastExecutionReport().Message;
  EXPECT_EQ(CountDiffering(filter->GetOutput(), RunITK<S3>(image.GetPointer(), Radius<S3>({ 1 })).GetPointer()), 0u);
}

TEST(ErodeCpu, MatchesAnIndependentReference)
{
  auto image = RandomPixels<US3>({ 13, 11, 9 }, 21);
  for (auto radius : { Radius<US3>({ 1 }), Radius<US3>({ 2, 0, 3 }) })
  {
    const unsigned short boundary = 1000;
    EXPECT_EQ(CountDifferingFrom(RunOurs<US3>(image.GetPointer(), radius, Mode::CPU).GetPointer(),
                                 ReferenceErosion(image.GetPointer(), radius, 65535.0)),
              0u);
    EXPECT_EQ(CountDifferingFrom(RunOurs<US3>(image.GetPointer(), radius, Mode::CPU, &boundary).GetPointer(),
                                 ReferenceErosion(image.GetPointer(), radius, boundary)),
              0u);
    // and the reference is ITK's rule
    EXPECT_EQ(CountDifferingFrom(RunITK<US3>(image.GetPointer(), radius, Algorithm::ANCHOR, &boundary).GetPointer(),
                                 ReferenceErosion(image.GetPointer(), radius, boundary)),
              0u);
  }
}

TEST(ErodeCpu, InfinitiesAsItk)
{
  auto image = InfinityImage();
  ExpectMatchesItk<F3>(image.GetPointer(), Radius<F3>({ 1 }), Mode::CPU);
  auto ours = RunOurs<F3>(image.GetPointer(), Radius<F3>({ 1 }), Mode::CPU);
  EXPECT_EQ(ours->GetPixel({ { 0, 9, 0 } }), std::numeric_limits<float>::max()); // ITK's boundary, not +Inf
  EXPECT_EQ(ours->GetPixel({ { 1, 1, 6 } }), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(ours->GetPixel({ { 2, 2, 2 } }), std::numeric_limits<float>::infinity());
}

TEST(ErodeCpu, NaNSamplesAreIgnored)
{
  auto image = ImageWithNaN(31);
  for (auto radius : { Radius<F3>({ 1 }), Radius<F3>({ 2, 0, 1 }) })
  {
    auto ours = RunOurs<F3>(image.GetPointer(), radius, Mode::CPU);
    EXPECT_EQ(CountDifferingFrom(ours.GetPointer(), ReferenceErosion(image.GetPointer(), radius, FLT_MAX)), 0u);
  }
  auto ours = RunOurs<F3>(image.GetPointer(), Radius<F3>({ 1 }), Mode::CPU);
  EXPECT_TRUE(std::isnan(ours->GetPixel({ { 9, 4, 3 } }))); // an interior box of NaN only
  EXPECT_FALSE(std::isnan(ours->GetPixel({ { 5, 6, 4 } })));
  EXPECT_FALSE(std::isnan(ours->GetPixel({ { 0, 0, 0 } })));
}

/** Radii past the image and size-1 axes: ITK's basic algorithm (see the file comment) and the reference. */
template <typename TImage>
void
ExpectLargeRadiusCase(const TImage * input, const typename TImage::SizeType & radius, Mode mode)
{
  const auto boundary = itk::NumericTraits<typename TImage::PixelType>::max();
  ExpectMatchesItk<TImage>(input, radius, mode, &boundary, Algorithm::BASIC);
  EXPECT_EQ(CountDifferingFrom(RunOurs<TImage>(input, radius, mode).GetPointer(),
                               ReferenceErosion(input, radius, static_cast<double>(boundary))),
            0u);
}

TEST(ErodeCpu, RadiusLargerThanTheImageAndSizeOneAxes)
{
  auto tiny = RandomPixels<UC2>({ 7, 5 }, 41);
  ExpectLargeRadiusCase<UC2>(tiny.GetPointer(), Radius<UC2>({ 20, 9 }), Mode::CPU);
  auto line = RandomPixels<F3>({ 1, 9, 1 }, 42);
  ExpectLargeRadiusCase<F3>(line.GetPointer(), Radius<F3>({ 2, 3, 1 }), Mode::CPU);
  auto column = RandomPixels<S3>({ 12, 1, 1 }, 43);
  ExpectLargeRadiusCase<S3>(column.GetPointer(), Radius<S3>({ 1, 4, 4 }), Mode::CPU);
  auto flat = RandomPixels<US3>({ 15, 11, 1 }, 44);
  ExpectLargeRadiusCase<US3>(flat.GetPointer(), Radius<US3>({ 2, 1, 1 }), Mode::CPU);
}

TEST(ErodeCpu, StreamsAsItk)
{
  auto input = RandomPixels<US3>({ 24, 20, 18 }, 51);
  auto filter = OurErode<US3>::New();
  filter->SetInput(input);
  filter->SetKernel(Kernel<US3>::Box(Radius<US3>({ 2, 1, 2 })));
  filter->SetExecutionMode(Mode::CPU);
  auto streamer = itk::StreamingImageFilter<US3, US3>::New();
  streamer->SetInput(filter->GetOutput());
  streamer->SetNumberOfStreamDivisions(4);
  streamer->Update();
  EXPECT_EQ(
    CountDiffering(streamer->GetOutput(), RunITK<US3>(input.GetPointer(), Radius<US3>({ 2, 1, 2 })).GetPointer()), 0u);
}

TEST(ErodeCpu, RealImages)
{
  auto slice = ReadImage<UC2>(ExampleData("BrainProtonDensitySlice.png"));
  ExpectMatchesItk<UC2>(slice.GetPointer(), Radius<UC2>({ 2 }), Mode::CPU);
  auto volume = ReadImage<UC3>(ExampleData("KmeansTest_T1UCharRaw.nii.gz"));
  ExpectMatchesItk<UC3>(volume.GetPointer(), Radius<UC3>({ 1, 2, 1 }), Mode::CPU);
}

TEST(ErodeCpu, OtherKernelsRunItksImplementationAndSayWhy)
{
  auto image = RandomPixels<UC2>({ 30, 25 }, 61);
  auto filter = OurErode<UC2>::New();
  filter->SetInput(image);
  filter->SetKernel(Kernel<UC2>::Ball(Radius<UC2>({ 3 })));
  filter->Update();
  EXPECT_EQ(filter->GetLastExecutedOn(), itk::CudaExecutedOn::CPU);
  EXPECT_NE(filter->GetBoxUnsupportedReason().find("box"), std::string::npos);
  EXPECT_NE(filter->GetLastExecutionReport().Message.find("ITK's implementation"), std::string::npos);
  auto itk = ItkErode<UC2>::New();
  itk->SetInput(image);
  itk->SetKernel(Kernel<UC2>::Ball(Radius<UC2>({ 3 })));
  itk->Update();
  EXPECT_EQ(CountDiffering(filter->GetOutput(), itk->GetOutput()), 0u);
  EXPECT_TRUE(OurErode<UC2>::IsFlatBox(Kernel<UC2>::Box(Radius<UC2>({ 2, 0 }))));
  EXPECT_FALSE(OurErode<UC2>::IsFlatBox(Kernel<UC2>::Cross(Radius<UC2>({ 2 }))));
  // a radius beyond the GPU tiles
  auto big = OurErode<UC2>::New();
  big->SetKernel(Kernel<UC2>::Box(Radius<UC2>({ 65, 1 })));
  EXPECT_NE(big->GetGPUUnsupportedReason().find("radi"), std::string::npos);
}

TEST(ErodeCpu, BadInput)
{
  auto empty = F3::New();
  empty->SetRegions(F3::SizeType{ { 4, 0, 4 } });
  empty->Allocate();
  auto filter = OurErode<F3>::New();
  filter->SetInput(empty);
  EXPECT_THROW(filter->Update(), itk::ExceptionObject);
  if (!cif::Runtime::IsDeviceAvailable())
  {
    auto image = RandomPixels<F3>({ 5, 5, 5 }, 71);
    auto gpu = OurErode<F3>::New();
    gpu->SetInput(image);
    gpu->SetExecutionMode(Mode::GPU);
    EXPECT_THROW(gpu->Update(), itk::ExceptionObject);
  }
}

// ===========================================================================
// GPU (CTest label "gpu")
// ===========================================================================

TEST(ErodeGpu, MatchesItkForEveryPixelType)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  ExpectAllCasesMatchItk<unsigned char>(Mode::GPU, 101);
  ExpectAllCasesMatchItk<short>(Mode::GPU, 103);
  ExpectAllCasesMatchItk<unsigned short>(Mode::GPU, 105);
  ExpectAllCasesMatchItk<float>(Mode::GPU, 107);
}

TEST(ErodeGpu, EdgeCasesInfinitiesAndNaN)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  ExpectMatchesItk<F3>(InfinityImage().GetPointer(), Radius<F3>({ 1 }), Mode::GPU);
  auto tiny = RandomPixels<UC2>({ 7, 5 }, 111);
  ExpectLargeRadiusCase<UC2>(tiny.GetPointer(), Radius<UC2>({ 20, 9 }), Mode::GPU);
  auto line = RandomPixels<F3>({ 1, 9, 1 }, 112);
  ExpectLargeRadiusCase<F3>(line.GetPointer(), Radius<F3>({ 2, 3, 1 }), Mode::GPU);
  auto wide = RandomPixels<US2>({ 300, 140 }, 113);
  ExpectMatchesItk<US2>(wide.GetPointer(), Radius<US2>({ 64, 64 }), Mode::GPU);
  auto nan = ImageWithNaN(114);
  for (auto radius : { Radius<F3>({ 1 }), Radius<F3>({ 2, 0, 1 }) })
  {
    EXPECT_EQ(CountDiffering(RunOurs<F3>(nan.GetPointer(), radius, Mode::GPU).GetPointer(),
                             RunOurs<F3>(nan.GetPointer(), radius, Mode::CPU).GetPointer()),
              0u);
  }
  // past the GPU tiles: the CPU in automatic mode, an exception in GPU mode
  itk::CudaExecutedOn ranOn;
  RunOurs<US2>(wide.GetPointer(), Radius<US2>({ 65, 1 }), Mode::Automatic, nullptr, &ranOn);
  EXPECT_EQ(ranOn, itk::CudaExecutedOn::CPU);
  EXPECT_THROW(RunOurs<US2>(wide.GetPointer(), Radius<US2>({ 65, 1 }), Mode::GPU), itk::ExceptionObject);
}

TEST(ErodeGpu, StreamsAndKeepsDataOnTheDevice)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  using CudaF3 = itk::CudaFilterImage<float, 3>;
  auto plain = RandomPixels<F3>({ 40, 33, 21 }, 121);
  auto input = ToCudaImage<CudaF3>(plain.GetPointer());
  auto first = OurErode<CudaF3>::New();
  first->SetInput(input);
  first->SetKernel(Kernel<CudaF3>::Box(Radius<CudaF3>({ 1 })));
  first->SetExecutionMode(Mode::GPU);
  auto second = OurErode<CudaF3>::New();
  second->SetInput(first->GetOutput());
  second->SetKernel(Kernel<CudaF3>::Box(Radius<CudaF3>({ 2, 0, 1 })));
  second->SetExecutionMode(Mode::GPU);
  cif::Runtime::ResetTransferCounters();
  second->Update();
  const auto counters = cif::Runtime::GetTransferCounters();
  EXPECT_EQ(counters.HostToDeviceCount, 1u);
  EXPECT_EQ(counters.DeviceToHostCount, 0u);
  auto reference = RunITK<F3>(RunITK<F3>(plain.GetPointer(), Radius<F3>({ 1 })).GetPointer(), Radius<F3>({ 2, 0, 1 }));
  EXPECT_EQ(CountDiffering(static_cast<const CudaF3 *>(second->GetOutput()), reference.GetPointer()), 0u);

  auto filter = OurErode<S3>::New();
  auto shorts = RandomPixels<S3>({ 30, 26, 22 }, 122);
  filter->SetInput(shorts);
  filter->SetKernel(Kernel<S3>::Box(Radius<S3>({ 2 })));
  filter->SetExecutionMode(Mode::GPU);
  auto streamer = itk::StreamingImageFilter<S3, S3>::New();
  streamer->SetInput(filter->GetOutput());
  streamer->SetNumberOfStreamDivisions(3);
  streamer->Update();
  EXPECT_EQ(CountDiffering(streamer->GetOutput(), RunITK<S3>(shorts.GetPointer(), Radius<S3>({ 2 })).GetPointer()), 0u);
}

TEST(ErodeGpu, RealImages)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto slice = ReadImage<UC2>(ExampleData("BrainProtonDensitySlice.png"));
  ExpectMatchesItk<UC2>(slice.GetPointer(), Radius<UC2>({ 2 }), Mode::GPU);
  auto volume = ReadImage<UC3>(ExampleData("KmeansTest_T1UCharRaw.nii.gz"));
  ExpectMatchesItk<UC3>(volume.GetPointer(), Radius<UC3>({ 1, 2, 3 }), Mode::GPU);
}

TEST(ErodeGpu, CoreWritesEveryOutputVoxelAndMatchesTheCpuCore)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto             input = RandomPixels<US3>({ 45, 33, 21 }, 131);
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
  cif::DeviceBuffer in(inCount * 2), out(outCount * 2);
  in.CopyFromHost(input->GetBufferPointer(), inCount * 2);
  // the output poisoned with 0 and 0xFFFF, each time equal to the CPU core
  const auto expectCpuCore = [&](const char * what)
  {
    for (int poison : { 0x00, 0xFF })
    {
      out.FillBytes(poison);
      cif::BoxMinCUDA(static_cast<const unsigned short *>(in.GetPointer()),
                      static_cast<unsigned short *>(out.GetPointer()),
                      g,
                      static_cast<unsigned short>(40000));
      std::vector<unsigned short> gpu(outCount), cpu(outCount);
      out.CopyToHost(gpu.data(), outCount * 2);
      cif::BoxMinCPU(input->GetBufferPointer(), cpu.data(), g, static_cast<unsigned short>(40000), 2);
      EXPECT_EQ(gpu, cpu) << what << ", poison " << poison;
    }
  };
  expectCpuCore("one pass");
  // a box too wide for the one-pass tile (x radius above 16) takes the separable passes
  g.radius[0] = 17;
  ASSERT_EQ(cif::ValidateBoxJob(g), "");
  expectCpuCore("separable");
}

TEST(ErodeGpu, OnePassAndSeparableMinimaMatchItk)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  // sizes that are no multiple of the one-pass tile (128 x 8 x 16 outputs),
  // x sizes with and without whole quads of outputs; radii up to the
  // one-pass tile's limits (x radius 16, y radius 8) and past them
  // (separable passes); the kernels with x and y radii 1, 2 or 3 unrolled,
  // with z radius 1 (its window in registers) and others
  auto us = RandomPixels<US3>({ 40, 37, 30 }, 141);
  auto f = RandomPixels<F3>({ 35, 17, 33 }, 142);
  for (auto radius : { Radius<US3>({ 1 }),
                       Radius<US3>({ 2, 0, 3 }),
                       Radius<US3>({ 0, 4, 1 }),
                       Radius<US3>({ 8, 8, 8 }),
                       Radius<US3>({ 1, 1, 10 }),
                       Radius<US3>({ 2, 2, 12 }),
                       Radius<US3>({ 16, 8, 2 }),
                       Radius<US3>({ 17, 1, 1 }),
                       Radius<US3>({ 3, 3, 3 }),
                       Radius<US3>({ 2, 2, 1 }),
                       Radius<US3>({ 3, 3, 1 }),
                       Radius<US3>({ 3, 1, 1 }) })
  {
    ExpectMatchesItk<US3>(us.GetPointer(), radius, Mode::GPU);
    ExpectMatchesItk<F3>(f.GetPointer(), radius, Mode::GPU);
  }
  auto nan = ImageWithNaN(143);
  for (auto radius : { Radius<F3>({ 1, 2, 3 }), Radius<F3>({ 1, 1, 12 }) })
  {
    EXPECT_EQ(CountDiffering(RunOurs<F3>(nan.GetPointer(), radius, Mode::GPU).GetPointer(),
                             RunOurs<F3>(nan.GetPointer(), radius, Mode::CPU).GetPointer()),
              0u)
      << "radius " << radius;
  }
}

} // namespace
