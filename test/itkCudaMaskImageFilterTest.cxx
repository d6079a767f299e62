/*=========================================================================
 *  Tests of CudaMaskImageFilter, a drop-in for itk::MaskImageFilter,
 *  compared with ITK's own filter (the reference) on ITK's example images
 *  and on random images, bit for bit (tolerance 0) on both devices:
 *  - every image type (unsigned char, short, unsigned short, float, double)
 *    with every mask type, 2D and 3D;
 *  - ITK's semantics: the masking and outside values, NaN in the image, the
 *    mask and the masking value, in-place operation, streaming in pieces;
 *  - what runs ITK's implementation (and says why): other types, a
 *    constant in place of the mask, a mask buffered over more than the
 *    image; ITK's errors for a mask of another grid;
 *  - the GPU core over poisoned device outputs, a region inside a larger
 *    buffer, data left on the device (CudaFilterImage), slabs.
 *=========================================================================*/
#include "CudaImageFiltersTestUtilities.h"
#include "cif/Filter.h"
#include "cif/Runtime.h"
#include "itkBinaryThresholdImageFilter.h"
#include "itkCastImageFilter.h"
#include "itkCudaMaskImageFilter.h"
#include "itkStreamingImageFilter.h"

#include <gtest/gtest.h>
#include <cmath>
#include <limits>
#include <type_traits>

namespace
{
using namespace cif_test;
using Mode = itk::CudaExecutionMode;

/** Both outputs equal, NaN where the other is NaN. */
template <typename TImage>
void
ExpectIdentical(const TImage * a, const TImage * b)
{
  ASSERT_EQ(a->GetBufferedRegion(), b->GetBufferedRegion());
  itk::ImageRegionConstIterator<TImage> it(a, a->GetBufferedRegion()), jt(b, b->GetBufferedRegion());
  std::size_t                           differing = 0;
  for (; !it.IsAtEnd(); ++it, ++jt)
  {
    const double x = static_cast<double>(it.Get()), y = static_cast<double>(jt.Get());
    differing += !(x == y || (std::isnan(x) && std::isnan(y)));
  }
  EXPECT_EQ(differing, 0u);
}

/** ITK's MaskImageFilter's output: the reference. */
template <typename TImage, typename TMask>
typename TImage::Pointer
ItkMask(const TImage * image, const TMask * mask, double outside, double masking)
{
  auto itk = itk::MaskImageFilter<TImage, TMask>::New();
  itk->SetInput(image);
  itk->SetMaskImage(mask);
  itk->SetOutsideValue(static_cast<typename TImage::PixelType>(outside));
  itk->SetMaskingValue(static_cast<typename TMask::PixelType>(masking));
  itk->Update();
  return TakeOutput(itk.GetPointer());
}

template <typename TImage, typename TMask>
typename itk::CudaMaskImageFilter<TImage, TMask>::Pointer
OurMask(const TImage * image, const TMask * mask, double outside, double masking, Mode mode)
{
  auto ours = itk::CudaMaskImageFilter<TImage, TMask>::New();
  ours->SetInput(image);
  ours->SetMaskImage(mask);
  ours->SetOutsideValue(static_cast<typename TImage::PixelType>(outside));
  ours->SetMaskingValue(static_cast<typename TMask::PixelType>(masking));
  ours->SetExecutionMode(mode);
  ours->Update();
  return ours;
}

/** A mask of `TMask` pixels from an image: 0 below `level`, else 1 + a
 * value that varies (so the masking value may select any of them). */
template <typename TMask, typename TImage>
typename TMask::Pointer
MaskOf(const TImage * image, double level)
{
  auto mask = TMask::New();
  mask->CopyInformation(image);
  mask->SetRegions(image->GetLargestPossibleRegion());
  mask->Allocate();
  itk::ImageRegionConstIterator<TImage> it(image, image->GetLargestPossibleRegion());
  itk::ImageRegionIterator<TMask>       mt(mask, mask->GetLargestPossibleRegion());
  for (; !it.IsAtEnd(); ++it, ++mt)
  {
    const double v = static_cast<double>(it.Get());
    mt.Set(static_cast<typename TMask::PixelType>(v < level ? 0 : 1 + static_cast<int>(v) % 3));
  }
  return mask;
}

template <typename TImage>
typename TImage::Pointer
Cast(const itk::Image<unsigned char, TImage::ImageDimension> * image)
{
  auto cast = itk::CastImageFilter<itk::Image<unsigned char, TImage::ImageDimension>, TImage>::New();
  cast->SetInput(image);
  cast->Update();
  return TakeOutput(cast.GetPointer());
}

/** ITK's example images (2D PNG, 3D NIfTI) as T, masked by M, against ITK. */
template <typename T, typename M, unsigned int D>
void
CheckRealImage(Mode mode)
{
  using ImageType = itk::Image<T, D>;
  using MaskType = itk::Image<M, D>;
  const std::string name = D == 2 ? "BrainProtonDensitySlice.png" : "KmeansTest_T1UCharRaw.nii.gz";
  const auto image = Cast<ImageType>(ReadImage<itk::Image<unsigned char, D>>(ExampleData(name)).GetPointer());
  const auto mask = MaskOf<MaskType>(image.GetPointer(), 60);
  for (double masking : { 0.0, 2.0 })
  {
    SCOPED_TRACE(std::string(itk::CudaPixelTypeName<T>()) + " masked by " + itk::CudaPixelTypeName<M>() +
                 ", masking value " + std::to_string(masking));
    const auto expected = ItkMask(image.GetPointer(), mask.GetPointer(), 7, masking);
    const auto ours = OurMask(image.GetPointer(), mask.GetPointer(), 7, masking, mode);
    EXPECT_EQ(ours->GetLastExecutedOn(), mode == Mode::GPU ? itk::CudaExecutedOn::GPU : itk::CudaExecutedOn::CPU)
      << ours->GetLastExecutionReport().Message;
    ExpectIdentical(ours->GetOutput(), expected.GetPointer());
    EXPECT_EQ(ours->GetOutput()->GetSpacing(), image->GetSpacing());
    EXPECT_EQ(ours->GetOutput()->GetOrigin(), image->GetOrigin());
  }
}

template <typename T, unsigned int D>
void
CheckEveryMaskType(Mode mode)
{
  CheckRealImage<T, unsigned char, D>(mode);
  CheckRealImage<T, short, D>(mode);
  CheckRealImage<T, unsigned short, D>(mode);
  CheckRealImage<T, float, D>(mode);
  CheckRealImage<T, double, D>(mode);
}

template <unsigned int D>
void
CheckEveryType(Mode mode)
{
  CheckEveryMaskType<unsigned char, D>(mode);
  CheckEveryMaskType<short, D>(mode);
  CheckEveryMaskType<unsigned short, D>(mode);
  CheckEveryMaskType<float, D>(mode);
  CheckEveryMaskType<double, D>(mode);
}

/** NaN in the image, the mask and the masking value, as ITK compares them. */
void
CheckNaN(Mode mode)
{
  using ImageType = itk::Image<float, 2>;
  const auto image = RandomImage<ImageType>(MakeSize<ImageType>({ 37, 23 }), -5, 5, 3);
  const auto mask = RandomImage<ImageType>(MakeSize<ImageType>({ 37, 23 }), -1, 1, 4);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int i = 0; i < 40; ++i)
  {
    image->GetBufferPointer()[i * 13] = nan;
    mask->GetBufferPointer()[i * 17 + 5] = nan;
    mask->GetBufferPointer()[i * 11 + 2] = 0.0f;
  }
  for (double masking : { 0.0, static_cast<double>(nan) })
  {
    for (double outside : { -3.5, static_cast<double>(nan) })
    {
      SCOPED_TRACE("masking " + std::to_string(masking) + ", outside " + std::to_string(outside));
      const auto expected = ItkMask(image.GetPointer(), mask.GetPointer(), outside, masking);
      const auto ours = OurMask(image.GetPointer(), mask.GetPointer(), outside, masking, mode);
      ExpectIdentical(ours->GetOutput(), expected.GetPointer());
    }
  }
}
} // namespace

TEST(Mask, MatchesItkOnTheCpuForEveryTypeIn2D)
{
  CheckEveryType<2>(Mode::CPU);
}
TEST(Mask, MatchesItkOnTheCpuForEveryTypeIn3D)
{
  CheckEveryType<3>(Mode::CPU);
}
TEST(MaskGpu, MatchesItkOnTheGpuForEveryTypeIn2D)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  CheckEveryType<2>(Mode::GPU);
}
TEST(MaskGpu, MatchesItkOnTheGpuForEveryTypeIn3D)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  CheckEveryType<3>(Mode::GPU);
}

TEST(Mask, NaNAsInItk)
{
  CheckNaN(Mode::CPU);
}
TEST(MaskGpu, NaNAsInItk)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  CheckNaN(Mode::GPU);
}

TEST(Mask, DefaultsAreItks)
{
  using ImageType = itk::Image<short, 2>;
  auto ours = itk::CudaMaskImageFilter<ImageType, itk::Image<unsigned char, 2>>::New();
  auto itk = itk::MaskImageFilter<ImageType, itk::Image<unsigned char, 2>>::New();
  EXPECT_EQ(ours->GetOutsideValue(), itk->GetOutsideValue());
  EXPECT_EQ(ours->GetMaskingValue(), itk->GetMaskingValue());
  EXPECT_STREQ(ours->GetNameOfClass(), "CudaMaskImageFilter");
  // a subclass of ITK's filter: a drop-in wherever ITK's is expected
  itk::MaskImageFilter<ImageType, itk::Image<unsigned char, 2>> * asItk = ours.GetPointer();
  EXPECT_NE(asItk, nullptr);
}

/** In place (InPlaceImageFilter): the output takes the input's buffer, on
 * both devices, with ITK's result. */
TEST(Mask, InPlaceOnEveryDevice)
{
  using ImageType = itk::Image<float, 3>;
  using MaskType = itk::Image<unsigned char, 3>;
  const auto reference = RandomImage<ImageType>(MakeSize<ImageType>({ 31, 17, 9 }), 0, 100, 5);
  const auto mask = MaskOf<MaskType>(reference.GetPointer(), 50);
  const auto expected = ItkMask(reference.GetPointer(), mask.GetPointer(), -1, 0);
  for (Mode mode : { Mode::CPU, Mode::Automatic })
  {
    auto          copy = RandomImage<ImageType>(MakeSize<ImageType>({ 31, 17, 9 }), 0, 100, 5);
    const float * buffer = copy->GetBufferPointer();
    auto          ours = itk::CudaMaskImageFilter<ImageType, MaskType>::New();
    ours->SetInput(copy);
    ours->SetMaskImage(mask);
    ours->SetOutsideValue(-1);
    ours->InPlaceOn();
    ours->SetExecutionMode(mode);
    ours->Update();
    ExpectIdentical(ours->GetOutput(), expected.GetPointer());
    // the output took the input's buffer (ITK releases it from the input)
    EXPECT_EQ(ours->GetOutput()->GetBufferPointer(), buffer) << "ran in place";
  }
}

/** ITK's pipeline streams the image and the mask in the same pieces. */
TEST(Mask, StreamedPiecesEqualTheWhole)
{
  using ImageType = itk::Image<unsigned short, 3>;
  using MaskType = itk::Image<float, 3>;
  const auto image = Cast<ImageType>(
    ReadImage<itk::Image<unsigned char, 3>>(ExampleData("KmeansTest_T1UCharRaw.nii.gz")).GetPointer());
  const auto mask = MaskOf<MaskType>(image.GetPointer(), 80);
  const auto expected = ItkMask(image.GetPointer(), mask.GetPointer(), 3, 0);
  auto       ours = itk::CudaMaskImageFilter<ImageType, MaskType>::New();
  ours->SetInput(image);
  ours->SetMaskImage(mask);
  ours->SetOutsideValue(3);
  auto streamer = itk::StreamingImageFilter<ImageType, ImageType>::New();
  streamer->SetInput(ours->GetOutput());
  streamer->SetNumberOfStreamDivisions(4);
  streamer->Update();
  ExpectIdentical(streamer->GetOutput(), expected.GetPointer());
}

/** Requests the cores do not take run ITK's implementation and say why. */
TEST(Mask, OtherRequestsRunItksImplementation)
{
  using ImageType = itk::Image<float, 2>;
  const auto image = RandomImage<ImageType>(MakeSize<ImageType>({ 20, 10 }), 0, 10, 6);
  {
    // a mask of int pixels (no core for it)
    using IntMask = itk::Image<int, 2>;
    auto mask = IntMask::New();
    mask->CopyInformation(image);
    mask->SetRegions(image->GetLargestPossibleRegion());
    mask->Allocate();
    mask->FillBuffer(0);
    mask->GetBufferPointer()[7] = 4;
    auto ours = itk::CudaMaskImageFilter<ImageType, IntMask>::New();
    ours->SetInput(image);
    ours->SetMaskImage(mask);
    ours->Update();
    EXPECT_NE(ours->GetLastExecutionReport().Message.find("ITK's implementation"), std::string::npos)
      << ours->GetLastExecutionReport().Message;
    ExpectIdentical(ours->GetOutput(), ItkMask(image.GetPointer(), mask.GetPointer(), 0, 0).GetPointer());
  }
  {
    // a constant in place of the mask (BinaryGeneratorImageFilter's SetConstant2)
    auto ours = itk::CudaMaskImageFilter<ImageType, ImageType>::New();
    ours->SetInput(image);
    ours->SetConstant2(1.0f);
    ours->Update();
    const std::string message = ours->GetLastExecutionReport().Message;
    EXPECT_NE(message.find("mask_image is no itk::Image"), std::string::npos) << message;
    ExpectIdentical(ours->GetOutput(), image.GetPointer());
  }
  {
    // a mask buffered over more than the image: ITK uses the part under the image
    auto large = RandomImage<ImageType>(MakeSize<ImageType>({ 30, 12 }), -1, 1, 7);
    auto ours = itk::CudaMaskImageFilter<ImageType, ImageType>::New();
    ours->SetInput(image);
    ours->SetMaskImage(large);
    ours->Update();
    const std::string message = ours->GetLastExecutionReport().Message;
    EXPECT_NE(message.find("buffered region differs"), std::string::npos) << message;
    auto itk = itk::MaskImageFilter<ImageType, ImageType>::New();
    itk->SetInput(image);
    itk->SetMaskImage(large);
    itk->Update();
    ExpectIdentical(ours->GetOutput(), itk->GetOutput());
  }
}

/** ITK's errors stay ITK's: a mask on another grid, a smaller mask, no mask. */
TEST(Mask, MismatchedOrMissingMaskThrowsAsItk)
{
  using ImageType = itk::Image<float, 2>;
  const auto image = RandomImage<ImageType>(MakeSize<ImageType>({ 20, 10 }), 0, 10, 6);
  const auto shifted = RandomImage<ImageType>(MakeSize<ImageType>({ 20, 10 }), 0, 10, 8);
  ImageType::PointType origin;
  origin.Fill(3.0);
  shifted->SetOrigin(origin);
  const auto small = RandomImage<ImageType>(MakeSize<ImageType>({ 10, 10 }), 0, 10, 9);
  for (const ImageType * mask : std::vector<const ImageType *>{ shifted.GetPointer(), small.GetPointer(), nullptr })
  {
    auto ours = itk::CudaMaskImageFilter<ImageType, ImageType>::New();
    auto itk = itk::MaskImageFilter<ImageType, ImageType>::New();
    ours->SetInput(image);
    itk->SetInput(image);
    if (mask != nullptr)
    {
      ours->SetMaskImage(mask);
      itk->SetMaskImage(mask);
    }
    EXPECT_THROW(itk->Update(), itk::ExceptionObject);
    EXPECT_THROW(ours->Update(), itk::ExceptionObject);
  }
}

TEST(Mask, EmptyImageThrows)
{
  using ImageType = itk::Image<float, 2>;
  auto image = ImageType::New();
  image->SetRegions(MakeSize<ImageType>({ 0, 5 }));
  image->Allocate();
  auto ours = itk::CudaMaskImageFilter<ImageType, ImageType>::New();
  ours->SetInput(image);
  ours->SetMaskImage(image);
  EXPECT_THROW(ours->Update(), itk::ExceptionObject);
}

/** The core's checks of the values other faces give as numbers. */
TEST(Mask, DescriptionChecksValuesAgainstTheTypes)
{
  const cif::FilterDescriptor & d = cif::FindFilter("mask_image_filter");
  ASSERT_TRUE(d.HasCompanion());
  cif::Extent extent;
  extent.dimension = 2;
  extent.size[0] = extent.size[1] = 4;
  cif::Parameters p{ { "outside_value", { 300 } } };
  EXPECT_THROW(cif::CheckParameters(d, p, extent, cif::Pixel::UInt8), std::invalid_argument);
  p = { { "outside_value", { 300 } } };
  EXPECT_NO_THROW(cif::CheckParameters(d, p, extent, cif::Pixel::Int16));
  p = { { "masking_value", { 0.5 } } };
  cif::CheckParameters(d, p, extent, cif::Pixel::Float32);
  EXPECT_THROW(cif::CheckCompanion(d, p, cif::Pixel::UInt8), std::invalid_argument);
  EXPECT_NO_THROW(cif::CheckCompanion(d, p, cif::Pixel::Float32));
  p = { { "masking_value", { std::nan("") } } };
  cif::CheckParameters(d, p, extent, cif::Pixel::Float32);
  EXPECT_THROW(cif::CheckCompanion(d, p, cif::Pixel::UInt16), std::invalid_argument);
  EXPECT_NO_THROW(cif::CheckCompanion(d, p, cif::Pixel::Float64));
}

/** The GPU core writes every output pixel of a region inside a larger
 * buffer, over device outputs poisoned with two byte patterns, equal to
 * the CPU core. */
TEST(MaskGpu, CoreWritesEveryPixelOfARegionOverPoison)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  const cif::FilterDescriptor & d = cif::FindFilter("mask");
  using ImageType = itk::Image<short, 3>;
  const auto   image = RandomImage<ImageType>(MakeSize<ImageType>({ 45, 33, 7 }), -500, 500, 11);
  const auto   mask = RandomImage<itk::Image<float, 3>>(MakeSize<ImageType>({ 45, 33, 7 }), -1, 1, 12);
  std::vector<float> maskValues(mask->GetBufferPointer(), mask->GetBufferPointer() + 45 * 33 * 7);
  for (std::size_t i = 0; i < maskValues.size(); i += 3)
  {
    maskValues[i] = 0.0f;
  }
  cif::Job job;
  job.dimension = 3;
  const std::int64_t in[3] = { 45, 33, 7 }, start[3] = { 3, 5, 1 }, size[3] = { 40, 20, 5 };
  for (int a = 0; a < 3; ++a)
  {
    job.inputSize[a] = in[a];
    job.outputStart[a] = start[a];
    job.outputSize[a] = size[a];
  }
  job.companionPixel = cif::Pixel::Float32;
  cif::Parameters p{ { "outside_value", { -77 } }, { "masking_value", { 0 } } };
  const std::size_t   outPixels = 40 * 20 * 5;
  std::vector<short>  cpu(outPixels);
  cif::Job            onHost = job;
  onHost.companion = maskValues.data();
  d.cpu(cif::Pixel::Int16, image->GetBufferPointer(), cpu.data(), onHost, p, 2);
  cif::DeviceBuffer dIn, dMask, dOut;
  dIn.Allocate(maskValues.size() * sizeof(short));
  dIn.CopyFromHost(image->GetBufferPointer(), maskValues.size() * sizeof(short));
  dMask.Allocate(maskValues.size() * sizeof(float));
  dMask.CopyFromHost(maskValues.data(), maskValues.size() * sizeof(float));
  dOut.Allocate(outPixels * sizeof(short));
  for (int poison : { 0x00, 0xFF })
  {
    dOut.FillBytes(poison);
    cif::Job onDevice = job;
    onDevice.companion = dMask.GetPointer();
    d.cuda(cif::Pixel::Int16, dIn.GetPointer(), dOut.GetPointer(), onDevice, p, 0);
    std::vector<short> gpu(outPixels);
    dOut.CopyToHost(gpu.data(), outPixels * sizeof(short));
    EXPECT_EQ(gpu, cpu) << "poison " << poison;
  }
  // the CPU core against the rule, pixel by pixel
  std::size_t wrong = 0, o = 0;
  for (std::int64_t k = 0; k < size[2]; ++k)
    for (std::int64_t j = 0; j < size[1]; ++j)
      for (std::int64_t i = 0; i < size[0]; ++i, ++o)
      {
        const std::int64_t at = ((k + start[2]) * in[1] + j + start[1]) * in[0] + i + start[0];
        const short        want = maskValues[at] != 0.0f ? image->GetBufferPointer()[at] : short{ -77 };
        wrong += cpu[o] != want;
      }
  EXPECT_EQ(wrong, 0u);
}

/** Images and masks left on the device (CudaFilterImage) stay there: ITK's
 * result, with no upload of the inputs. */
TEST(MaskGpu, DeviceResidentImages)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  using ImageType = itk::CudaFilterImage<float, 3>;
  using MaskType = itk::CudaFilterImage<unsigned char, 3>;
  const auto host = RandomImage<itk::Image<float, 3>>(MakeSize<itk::Image<float, 3>>({ 64, 48, 16 }), 0, 10, 13);
  auto       image = ImageType::New();
  image->SetRegions(host->GetLargestPossibleRegion());
  image->Allocate();
  std::copy(host->GetBufferPointer(), host->GetBufferPointer() + 64 * 48 * 16, image->GetBufferPointer());
  auto mask = MaskType::New();
  mask->SetRegions(host->GetLargestPossibleRegion());
  mask->Allocate();
  for (std::size_t i = 0; i < 64 * 48 * 16; ++i)
  {
    mask->GetBufferPointer()[i] = host->GetBufferPointer()[i] > 4 ? 1 : 0;
  }
  auto plainMask = itk::Image<unsigned char, 3>::New();
  plainMask->SetRegions(host->GetLargestPossibleRegion());
  plainMask->Allocate();
  std::copy(mask->GetBufferPointer(), mask->GetBufferPointer() + 64 * 48 * 16, plainMask->GetBufferPointer());
  const auto expected = ItkMask(host.GetPointer(), plainMask.GetPointer(), 0, 0);
  auto ours = itk::CudaMaskImageFilter<ImageType, MaskType>::New();
  ours->SetInput(image);
  ours->SetMaskImage(mask);
  ours->SetExecutionMode(Mode::GPU);
  ours->Update();
  const float * out = ours->GetOutput()->GetBufferPointer();
  std::size_t   wrong = 0;
  for (std::size_t i = 0; i < 64 * 48 * 16; ++i)
  {
    wrong += out[i] != expected->GetBufferPointer()[i];
  }
  EXPECT_EQ(wrong, 0u);
}

/** Host images larger than the device's allowance run in slabs, the mask
 * cut with the image: ITK's result. */
TEST(MaskGpu, SlabsUnderAnAllocationCap)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  using ImageType = itk::Image<float, 3>;
  using MaskType = itk::Image<unsigned short, 3>;
  const auto image = RandomImage<ImageType>(MakeSize<ImageType>({ 128, 96, 64 }), 0, 10, 14);
  const auto mask = MaskOf<MaskType>(image.GetPointer(), 5);
  const auto expected = ItkMask(image.GetPointer(), mask.GetPointer(), -2, 0);
  // room for a quarter of the one-piece job (image, mask, output)
  const std::size_t whole = 128 * 96 * 64 * (4 + 2 + 4);
  cif::Runtime::SetAllocationLimit(cif::Runtime::GetBytesAllocated() + whole / 4);
  auto ours = itk::CudaMaskImageFilter<ImageType, MaskType>::New();
  ours->SetInput(image);
  ours->SetMaskImage(mask);
  ours->SetOutsideValue(-2);
  ours->SetExecutionMode(Mode::GPU);
  ours->Update();
  cif::Runtime::SetAllocationLimit(0);
  EXPECT_NE(ours->GetLastExecutionReport().Message.find("slabs"), std::string::npos)
    << ours->GetLastExecutionReport().Message;
  ExpectIdentical(ours->GetOutput(), expected.GetPointer());
}
