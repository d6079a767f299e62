/*=========================================================================
 *  Tests of the streamed one-piece path (cif::RunStreamedCUDA): plain host
 *  images through the filters whose output planes read only their own
 *  input planes (CudaMaskImageFilter, CudaBinaryThresholdImageFilter,
 *  CudaBinShrinkImageFilter) go up and down in pieces along the slowest
 *  axis, the downloads overlapping the next uploads.
 *
 *  - the piece plan and the checks of a layout (no GPU needed);
 *  - on the GPU, with pieces made small (SetStreamedPieceBytes) so that
 *    small images cut into many pieces, an odd last one included: each
 *    class equals ITK's own filter bit for bit (tolerance 0: these classes
 *    are ITK-exact), in 2D and 3D, and each input byte goes up once and
 *    each output byte comes down once (the transfer counters);
 *  - a requested region inside the input: only its planes go up.
 *=========================================================================*/
#include "CudaImageFiltersTestUtilities.h"
#include "cif/Runtime.h"
#include "cif/Slabs.h"
#include "itkBinShrinkImageFilter.h"
#include "itkBinaryThresholdImageFilter.h"
#include "itkCudaBinShrinkImageFilter.h"
#include "itkCudaBinaryThresholdImageFilter.h"
#include "itkCudaMaskImageFilter.h"
#include "itkMaskImageFilter.h"

#include <gtest/gtest.h>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

namespace
{
using namespace cif_test;
using Mode = itk::CudaExecutionMode;

/** The streamed piece size for one scope. */
class PieceBytes
{
public:
  explicit PieceBytes(std::size_t bytes) { cif::SetStreamedPieceBytes(bytes); }
  ~PieceBytes() { cif::SetStreamedPieceBytes(0); }
  PieceBytes(const PieceBytes &) = delete;
  PieceBytes &
  operator=(const PieceBytes &) = delete;
};

/** A layout of one input (or two) for the plan's arithmetic; the pointers
 * are never used by StreamedPieces. */
cif::StreamedLayout
Layout(std::int64_t inputPlanes, std::int64_t first, std::int64_t factor, std::int64_t outputPlanes,
       std::vector<std::size_t> inputPlaneBytes)
{
  cif::StreamedLayout layout;
  layout.inputPlaneBytes = std::move(inputPlaneBytes);
  layout.hostInputs.assign(layout.inputPlaneBytes.size(), nullptr);
  layout.deviceInputs.assign(layout.inputPlaneBytes.size(), nullptr);
  layout.inputPlanes = inputPlanes;
  layout.inputFirst = first;
  layout.factor = factor;
  layout.outputPlanes = outputPlanes;
  layout.outputPlaneBytes = 100;
  return layout;
}

/** Equal buffered regions and pixels, NaN where the other is NaN. */
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

/** Bytes of a region of an image's pixels. */
template <typename TImage>
std::uint64_t
BytesOf(const typename TImage::RegionType & region)
{
  return region.GetNumberOfPixels() * sizeof(typename TImage::PixelType);
}

/** Runs `ours` (set up, GPU mode) and checks the bytes that crossed PCIe. */
template <typename TFilter>
void
UpdateCounting(TFilter * ours, std::uint64_t up, std::uint64_t down)
{
  cif::Runtime::ResetTransferCounters();
  ours->Update();
  const cif::TransferCounters counted = cif::Runtime::GetTransferCounters();
  EXPECT_EQ(ours->GetLastExecutedOn(), itk::CudaExecutedOn::GPU) << ours->GetLastExecutionReport().Message;
  EXPECT_EQ(counted.HostToDeviceBytes, up);
  EXPECT_EQ(counted.DeviceToHostBytes, down);
}

/** The mask of a float image by an unsigned char mask, D dimensions, in
 * pieces of `pieceBytes` (and in one piece), against ITK. */
template <unsigned int D>
void
CheckMask(const typename itk::Image<float, D>::SizeType & size, std::size_t pieceBytes)
{
  using ImageType = itk::Image<float, D>;
  using MaskType = itk::Image<unsigned char, D>;
  const auto image = RandomImage<ImageType>(size, -10, 10, 31);
  image->GetBufferPointer()[5] = std::numeric_limits<float>::quiet_NaN();
  const auto mask = RandomImage<MaskType>(size, 0, 2, 32);
  auto       itkMask = itk::MaskImageFilter<ImageType, MaskType>::New();
  itkMask->SetInput(image);
  itkMask->SetMaskImage(mask);
  itkMask->SetOutsideValue(-3);
  itkMask->Update();
  for (const std::size_t piece : { pieceBytes, std::numeric_limits<std::size_t>::max() })
  {
    SCOPED_TRACE("piece bytes " + std::to_string(piece));
    PieceBytes scope(piece);
    auto       ours = itk::CudaMaskImageFilter<ImageType, MaskType>::New();
    ours->SetInput(image);
    ours->SetMaskImage(mask);
    ours->SetOutsideValue(-3);
    ours->SetExecutionMode(Mode::GPU);
    const auto region = image->GetLargestPossibleRegion();
    UpdateCounting(ours.GetPointer(), BytesOf<ImageType>(region) + BytesOf<MaskType>(region), BytesOf<ImageType>(region));
    ExpectIdentical(ours->GetOutput(), itkMask->GetOutput());
  }
}
} // namespace

TEST(Streamed, PiecesFollowThePieceSize)
{
  const auto one = Layout(100, 0, 1, 100, { 1000 });
  {
    PieceBytes scope(10000);
    EXPECT_EQ(cif::StreamedPieces(one), 10);
    // two inputs: 1250 bytes an output plane, 8 planes a piece
    EXPECT_EQ(cif::StreamedPieces(Layout(100, 0, 1, 100, { 1000, 250 })), 13);
    // bins of 2 planes: 2000 bytes an output plane, 5 planes a piece
    EXPECT_EQ(cif::StreamedPieces(Layout(101, 1, 2, 50, { 1000 })), 10);
    // a plane larger than a piece: one plane a piece
    EXPECT_EQ(cif::StreamedPieces(Layout(7, 0, 1, 7, { 20000 })), 7);
  }
  {
    PieceBytes scope(9999);
    EXPECT_EQ(cif::StreamedPieces(one), 12); // 9 planes a piece
  }
  {
    PieceBytes scope(std::numeric_limits<std::size_t>::max());
    EXPECT_EQ(cif::StreamedPieces(one), 1);
  }
  // the default: 64 MiB of input a piece
  EXPECT_EQ(cif::GetStreamedPieceBytes(), cif::DefaultStreamedPieceBytes);
  EXPECT_EQ(cif::StreamedPieces(Layout(512, 0, 1, 512, { 512 * 512 * 4 })), 8);
}

TEST(Streamed, LayoutsThatLeaveTheBuffersThrow)
{
  EXPECT_THROW(cif::StreamedPieces(Layout(100, 1, 1, 100, { 1000 })), std::invalid_argument);
  EXPECT_THROW(cif::StreamedPieces(Layout(100, 0, 2, 51, { 1000 })), std::invalid_argument);
  EXPECT_THROW(cif::StreamedPieces(Layout(100, 0, 0, 10, { 1000 })), std::invalid_argument);
  EXPECT_THROW(cif::StreamedPieces(Layout(100, -1, 1, 10, { 1000 })), std::invalid_argument);
  EXPECT_THROW(cif::StreamedPieces(Layout(100, 0, 1, 0, { 1000 })), std::invalid_argument);
  EXPECT_THROW(cif::StreamedPieces(Layout(100, 0, 1, 10, { 1000, 0 })), std::invalid_argument);
  EXPECT_THROW(cif::StreamedPieces(Layout(100, 0, 1, 10, {})), std::invalid_argument);
  auto mismatched = Layout(100, 0, 1, 10, { 1000, 10 });
  mismatched.deviceInputs.pop_back();
  EXPECT_THROW(cif::StreamedPieces(mismatched), std::invalid_argument);
  EXPECT_NO_THROW(cif::StreamedPieces(Layout(100, 0, 2, 50, { 1000 })));
}

TEST(StreamedGpu, MaskInPiecesEqualsItkAndMovesEachByteOnce)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  using Size3 = itk::Image<float, 3>::SizeType;
  using Size2 = itk::Image<float, 2>::SizeType;
  // 3D: 38400 bytes of input an output plane, at most 2 planes a piece: 31 pieces of 1 or 2 planes
  CheckMask<3>(Size3{ { 96, 80, 61 } }, 80000);
  // 2D: rows of 1505 bytes, at most 5 rows a piece: 43 pieces of 4 or 5 rows
  CheckMask<2>(Size2{ { 301, 211 } }, 7600);
}

TEST(StreamedGpu, ThresholdInPiecesEqualsItk)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  using InputType = itk::Image<float, 3>;
  using LabelType = itk::Image<unsigned char, 3>;
  const auto image = RandomImage<InputType>(MakeSize<InputType>({ 70, 90, 53 }), 0, 100, 33);
  auto       reference = itk::BinaryThresholdImageFilter<InputType, LabelType>::New();
  reference->SetInput(image);
  reference->SetLowerThreshold(20);
  reference->SetUpperThreshold(70.5f);
  reference->SetInsideValue(200);
  reference->SetOutsideValue(7);
  reference->Update();
  PieceBytes scope(3 * 70 * 90 * 4); // at most 3 planes a piece: 18 pieces
  auto       ours = itk::CudaBinaryThresholdImageFilter<InputType, LabelType>::New();
  ours->SetInput(image);
  ours->SetLowerThreshold(20);
  ours->SetUpperThreshold(70.5f);
  ours->SetInsideValue(200);
  ours->SetOutsideValue(7);
  ours->SetExecutionMode(Mode::GPU);
  const auto region = image->GetLargestPossibleRegion();
  UpdateCounting(ours.GetPointer(), BytesOf<InputType>(region), BytesOf<LabelType>(region));
  ExpectIdentical(ours->GetOutput(), reference->GetOutput());
}

TEST(StreamedGpu, BinShrinkInPiecesUploadsOnlyTheBinnedPlanes)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  using ImageType = itk::Image<float, 3>;
  const auto image = RandomImage<ImageType>(MakeSize<ImageType>({ 97, 64, 83 }), -5, 5, 34);
  itk::BinShrinkImageFilter<ImageType, ImageType>::ShrinkFactorsType factors;
  factors[0] = 2;
  factors[1] = 3;
  factors[2] = 4;
  auto reference = itk::BinShrinkImageFilter<ImageType, ImageType>::New();
  reference->SetInput(image);
  reference->SetShrinkFactors(factors);
  reference->Update();
  PieceBytes scope(97 * 64 * 4 * 4 * 3); // at most 3 output planes (12 input planes) a piece: 7 pieces
  auto       ours = itk::CudaBinShrinkImageFilter<ImageType>::New();
  ours->SetInput(image);
  ours->SetShrinkFactors(factors);
  ours->SetExecutionMode(Mode::GPU);
  // 20 bins of 4 planes: 80 of the 83 input planes go up
  const std::uint64_t plane = 97 * 64 * sizeof(float);
  const std::uint64_t outputBytes = BytesOf<ImageType>(reference->GetOutput()->GetLargestPossibleRegion());
  UpdateCounting(ours.GetPointer(), 80 * plane, outputBytes);
  ExpectIdentical(ours->GetOutput(), reference->GetOutput());
}

TEST(StreamedGpu, ARequestedRegionUploadsOnlyItsPlanes)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  using ImageType = itk::Image<float, 3>;
  using MaskType = itk::Image<unsigned char, 3>;
  const auto image = RandomImage<ImageType>(MakeSize<ImageType>({ 64, 48, 40 }), -10, 10, 35);
  const auto mask = RandomImage<MaskType>(MakeSize<MaskType>({ 64, 48, 40 }), 0, 2, 36);
  // a block inside the image: x 5..54, y 3..44, z 7..39
  const ImageType::RegionType request({ { 5, 3, 7 } }, { { 50, 42, 33 } });
  auto itkMask = itk::MaskImageFilter<ImageType, MaskType>::New();
  itkMask->SetInput(image);
  itkMask->SetMaskImage(mask);
  itkMask->GetOutput()->SetRequestedRegion(request);
  itkMask->Update();
  PieceBytes scope(4 * 64 * 48 * 5); // at most 4 planes a piece: 9 pieces
  auto       ours = itk::CudaMaskImageFilter<ImageType, MaskType>::New();
  ours->SetInput(image);
  ours->SetMaskImage(mask);
  ours->SetExecutionMode(Mode::GPU);
  ours->GetOutput()->SetRequestedRegion(request);
  // the request's 33 planes of the whole image and mask rows go up; its pixels come down
  UpdateCounting(ours.GetPointer(), 33 * 64 * 48 * (4 + 1), BytesOf<ImageType>(request));
  ExpectIdentical(ours->GetOutput(), itkMask->GetOutput());
}
