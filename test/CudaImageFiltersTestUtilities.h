/*=========================================================================
 *  CudaImageFilters: helpers shared by the tests.
 *=========================================================================*/
#ifndef CudaImageFiltersTestUtilities_h
#define CudaImageFiltersTestUtilities_h

#include "cif/Runtime.h"
#include "itkCommand.h"
#include "itkCudaExecution.h"
#include "itkImage.h"
#include "itkCastImageFilter.h"
#include "itkImageFileReader.h"
#include "itkImageRegionConstIterator.h"
#include "itkImageRegionIterator.h"
#include "itkProcessObject.h"

#include <gtest/gtest.h>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace cif_test
{

/** How many GPUs the test run must have: CUDAIMAGEFILTERS_REQUIRE_GPU=N
 * (0 when unset). 1 makes GPU tests fail instead of skipping; 2 also makes
 * the tests of two devices fail instead of skipping on a one-GPU machine. */
inline int
GpusRequired()
{
  const char * value = std::getenv("CUDAIMAGEFILTERS_REQUIRE_GPU");
  return value != nullptr ? std::max(0, std::atoi(value)) : 0;
}

/** True when GPU tests must run (CUDAIMAGEFILTERS_REQUIRE_GPU=1 or more). */
inline bool
GpuRequired()
{
  return GpusRequired() >= 1;
}

/** For GPU tests: skip without a device, or fail when a GPU is required. */
#define CIF_REQUIRE_GPU_OR_SKIP()                                                                                      \
  do                                                                                                                   \
  {                                                                                                                    \
    if (!cif::Runtime::IsDeviceAvailable())                                                                        \
    {                                                                                                                  \
      if (cif_test::GpuRequired())                                                                                     \
      {                                                                                                                \
        FAIL() << "CUDAIMAGEFILTERS_REQUIRE_GPU is set but " << cif::Runtime::GetUnavailableReason();              \
      }                                                                                                                \
      GTEST_SKIP() << "no GPU: " << cif::Runtime::GetUnavailableReason();                                          \
    }                                                                                                                  \
  } while (false)

inline std::string
ExampleData(const std::string & name)
{
  return std::string(CIF_EXAMPLES_DATA) + "/" + name;
}

template <typename TImage>
typename TImage::Pointer
ReadImage(const std::string & path)
{
  auto reader = itk::ImageFileReader<TImage>::New();
  reader->SetFileName(path);
  reader->Update();
  return reader->GetOutput();
}

/** `image` converted to TImage by ITK's CastImageFilter (static_cast per pixel). */
template <typename TImage, typename TSource>
typename TImage::Pointer
CastImage(const TSource * image)
{
  auto cast = itk::CastImageFilter<TSource, TImage>::New();
  cast->SetInput(image);
  cast->Update();
  typename TImage::Pointer out = cast->GetOutput();
  out->DisconnectPipeline();
  return out;
}

/** A size from its components (x first). */
template <typename TImage>
typename TImage::SizeType
MakeSize(std::initializer_list<itk::SizeValueType> values)
{
  typename TImage::SizeType size;
  std::copy(values.begin(), values.end(), size.begin());
  return size;
}

/** A radius from its components; missing ones repeat the last given ({ 2 } is 2 on every axis). */
template <typename TImage>
typename TImage::SizeType
Radius(std::initializer_list<itk::SizeValueType> r)
{
  typename TImage::SizeType size;
  auto                      it = r.begin();
  for (unsigned a = 0; a < TImage::ImageDimension; ++a)
  {
    size[a] = it != r.end() ? *it++ : size[a - 1];
  }
  return size;
}

/** The pixels of the buffered region as doubles, x fastest. */
template <typename TImage>
std::vector<double>
ToVector(const TImage * image)
{
  std::vector<double> v;
  for (itk::ImageRegionConstIterator<TImage> it(image, image->GetBufferedRegion()); !it.IsAtEnd(); ++it)
  {
    v.push_back(static_cast<double>(it.Get()));
  }
  return v;
}

/** The buffered size on three axes (1 for the axes a 2D image lacks). */
template <typename TImage>
std::array<long, 3>
Extent(const TImage * image)
{
  std::array<long, 3> n{ { 1, 1, 1 } };
  for (unsigned a = 0; a < TImage::ImageDimension; ++a)
  {
    n[a] = static_cast<long>(image->GetBufferedRegion().GetSize(a));
  }
  return n;
}

/** Piecewise-constant regions with two straight edges (x at half the width,
 * y at a third of the height) plus uniform noise of +-noiseFraction of the
 * range, clamped to [lo, hi]: an edge-preserving filter's use case. With
 * `roundScale` > 0 the values are rounded to multiples of 1 / roundScale. */
template <typename TImage>
typename TImage::Pointer
EdgeImage(const typename TImage::SizeType & size,
          double                            lo,
          double                            hi,
          double                            noiseFraction,
          unsigned                          seed,
          double                            roundScale = 0.0)
{
  auto image = TImage::New();
  image->SetRegions(size);
  image->Allocate();
  std::mt19937                           rng(seed);
  std::uniform_real_distribution<double> noise(-noiseFraction, noiseFraction);
  const double                           span = hi - lo;
  for (itk::ImageRegionIterator<TImage> it(image, image->GetBufferedRegion()); !it.IsAtEnd(); ++it)
  {
    const auto idx = it.GetIndex();
    double     v = lo + 0.2 * span;
    if (2 * idx[0] >= static_cast<long>(size[0]))
    {
      v += 0.5 * span;
    }
    if (3 * idx[1] >= static_cast<long>(size[1]))
    {
      v += 0.15 * span;
    }
    v += noise(rng) * span;
    if (roundScale > 0.0)
    {
      v = std::round(v * roundScale) / roundScale;
    }
    it.Set(static_cast<typename TImage::PixelType>(std::min(hi, std::max(lo, v))));
  }
  return image;
}

/** An image of the given size filled with uniform random values in [lo, hi). */
template <typename TImage>
typename TImage::Pointer
RandomImage(const typename TImage::SizeType & size, double lo, double hi, unsigned seed)
{
  auto image = TImage::New();
  image->SetRegions(size);
  image->Allocate();
  std::mt19937                           rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  for (itk::ImageRegionIterator<TImage> it(image, image->GetBufferedRegion()); !it.IsAtEnd(); ++it)
  {
    it.Set(static_cast<typename TImage::PixelType>(dist(rng)));
  }
  return image;
}

/** A smooth image: a sum of a few low-frequency cosines plus a ramp. */
template <typename TImage>
typename TImage::Pointer
SmoothImage(const typename TImage::SizeType & size)
{
  auto image = TImage::New();
  image->SetRegions(size);
  image->Allocate();
  for (itk::ImageRegionIterator<TImage> it(image, image->GetBufferedRegion()); !it.IsAtEnd(); ++it)
  {
    double v = 100.0;
    for (unsigned d = 0; d < TImage::ImageDimension; ++d)
    {
      const double x = it.GetIndex()[d];
      v += 40.0 * std::cos(0.07 * (d + 1) * x + d) + 0.5 * x;
    }
    it.Set(static_cast<typename TImage::PixelType>(v));
  }
  return image;
}

template <typename TImage>
double
DynamicRange(const TImage * image)
{
  double lo = INFINITY, hi = -INFINITY;
  for (itk::ImageRegionConstIterator<TImage> it(image, image->GetBufferedRegion()); !it.IsAtEnd(); ++it)
  {
    const double v = it.Get();
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  return hi - lo;
}

/** Largest |a - b| over the buffered region of a, which b must cover.
 * Iterators are used on both sides so that a CudaFilterImage synchronises. NaN when
 * exactly one side is non-finite or the two non-finite values differ. */
template <typename TA, typename TB>
double
MaxAbsDifference(const TA * a, const TB * b)
{
  double                            worst = 0.0;
  itk::ImageRegionConstIterator<TB> jt(b, a->GetBufferedRegion());
  for (itk::ImageRegionConstIterator<TA> it(a, a->GetBufferedRegion()); !it.IsAtEnd(); ++it, ++jt)
  {
    const double x = it.Get();
    const double y = jt.Get();
    if (!std::isfinite(x) || !std::isfinite(y))
    {
      const bool same = (std::isnan(x) && std::isnan(y)) || x == y;
      if (!same)
      {
        return NAN;
      }
      continue;
    }
    worst = std::max(worst, std::fabs(x - y));
  }
  return worst;
}

/** For images of vector pixels (FixedArray-like, D components) on one
 * grid: the largest |component| of `expected` and the largest component
 * difference between the two, over the buffer. */
template <typename TA, typename TB>
std::pair<double, double>
LargestComponentAndDifference(const TA * got, const TB * expected)
{
  constexpr unsigned int D = TB::PixelType::Dimension;
  const std::size_t      n = expected->GetBufferedRegion().GetNumberOfPixels();
  double                 largest = 0.0;
  double                 difference = 0.0;
  for (std::size_t i = 0; i < n; ++i)
  {
    for (unsigned int c = 0; c < D; ++c)
    {
      const double e = static_cast<double>(expected->GetBufferPointer()[i][c]);
      largest = std::max(largest, std::abs(e));
      difference = std::max(difference, std::abs(static_cast<double>(got->GetBufferPointer()[i][c]) - e));
    }
  }
  return { largest, difference };
}

/** ITK's BrainProtonDensitySlice as TImage (a 2D image type) with an
 * anisotropic spacing (0.8, 1.3): the Gaussian filters' real 2D input. */
template <typename TImage>
typename TImage::Pointer
AnisotropicBrainSlice()
{
  const auto source = ReadImage<itk::Image<unsigned char, 2>>(ExampleData("BrainProtonDensitySlice.png"));
  auto       image = CastImage<TImage>(source.GetPointer());
  typename TImage::SpacingType spacing;
  spacing[0] = 0.8;
  spacing[1] = 1.3;
  image->SetSpacing(spacing);
  return image;
}

/** The comparison of a filter that is ITK's arithmetic with ITK's output:
 * integer outputs identical, real ones within `relative` of `range`;
 * returns the largest difference. `what` goes into the failure message. */
template <typename TImage>
double
ExpectItkExactOrWithin(const TImage * got, const TImage * expected, double range, double relative,
                       const std::string & what = {})
{
  const double difference = MaxAbsDifference(got, expected);
  if (std::is_integral<typename TImage::PixelType>::value)
  {
    EXPECT_EQ(difference, 0.0) << "integer outputs equal ITK's; " << what;
  }
  else
  {
    EXPECT_LE(difference, relative * range) << "range " << range << "; " << what;
  }
  return difference;
}

/** The output of an updated filter, detached from its pipeline. */
template <typename TFilter>
auto
TakeOutput(TFilter * filter)
{
  typename TFilter::OutputImageType::Pointer out = filter->GetOutput();
  out->DisconnectPipeline();
  return out;
}

/** The out-of-memory contract of a GPU filter, for GPU tests: with the
 * device allocation limit just above what is allocated now, an update in
 * automatic mode falls back to the CPU, says so, and gives `expected`
 * exactly; in GPU mode the update throws; without the limit the GPU runs.
 * `filter` is set up (inputs, parameters) in automatic mode. */
template <typename TFilter, typename TImage>
void
ExpectOutOfMemoryFallsBackToCpuOrThrows(TFilter * filter, const TImage * expected)
{
  // so small that not even one slab plane fits (a larger limit makes the
  // filters stream the image through the device in slabs instead)
  cif::Runtime::SetAllocationLimit(cif::Runtime::GetBytesAllocated() + 64);
  filter->Update();
  EXPECT_EQ(filter->GetLastExecutedOn(), itk::CudaExecutedOn::CPU);
  EXPECT_TRUE(filter->GetLastExecutionReport().FellBackAfterOutOfMemory);
  EXPECT_NE(filter->GetLastExecutionReport().Message.find("out of memory"), std::string::npos);
  EXPECT_EQ(MaxAbsDifference(filter->GetOutput(), expected), 0.0);
  filter->SetExecutionMode(itk::CudaExecutionMode::GPU);
  filter->Modified();
  EXPECT_THROW(filter->Update(), itk::ExceptionObject);
  cif::Runtime::SetAllocationLimit(0);
  filter->Modified();
  filter->Update();
  EXPECT_EQ(filter->GetLastExecutedOn(), itk::CudaExecutedOn::GPU);
}

/** Number of non-finite pixels. */
template <typename TImage>
std::size_t
CountNonFinite(const TImage * image)
{
  std::size_t count = 0;
  for (itk::ImageRegionConstIterator<TImage> it(image, image->GetBufferedRegion()); !it.IsAtEnd(); ++it)
  {
    count += std::isfinite(static_cast<double>(it.Get())) ? 0 : 1;
  }
  return count;
}

/** SetExecutionMode / GetExecutionMode behave as itkSetEnumMacro /
 * itkGetEnumMacro would: default Automatic, setting another mode modifies
 * the object, setting the same mode does not, and PrintSelf names the mode.
 * Leaves the object in CPU mode. */
template <typename TObject>
void
ExpectExecutionModeIsAnItkSetting(TObject * object)
{
  EXPECT_EQ(object->GetExecutionMode(), itk::CudaExecutionMode::Automatic);
  const itk::ModifiedTimeType before = object->GetMTime();
  object->SetExecutionMode(itk::CudaExecutionMode::Automatic);
  EXPECT_EQ(object->GetMTime(), before);
  object->SetExecutionMode(itk::CudaExecutionMode::CPU);
  EXPECT_GT(object->GetMTime(), before);
  EXPECT_EQ(object->GetExecutionMode(), itk::CudaExecutionMode::CPU);
  std::ostringstream os;
  object->Print(os);
  EXPECT_NE(os.str().find("ExecutionMode: CPU"), std::string::npos) << os.str();
}

} // namespace cif_test

/** Updates `filter` and returns the progress it reported through ITK's
 * ProgressEvent, in order. */
inline std::vector<float>
UpdateCollectingProgress(itk::ProcessObject * filter)
{
  std::vector<float> seen;
  auto               command = itk::CStyleCommand::New();
  command->SetClientData(&seen);
  command->SetCallback(
    [](itk::Object * caller, const itk::EventObject &, void * data)
    { static_cast<std::vector<float> *>(data)->push_back(static_cast<itk::ProcessObject *>(caller)->GetProgress()); });
  const unsigned long tag = filter->AddObserver(itk::ProgressEvent(), command);
  filter->Update();
  filter->RemoveObserver(tag);
  return seen;
}

#endif
