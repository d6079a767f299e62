/*=========================================================================
 *  Tests of CudaBSplineInterpolateImageFunction against ITK's
 *  itk::BSplineInterpolateImageFunction.
 *
 *  Tolerances (stated in the class documentation):
 *  - per-point calls (ITK's code on our coefficients) vs ITK: <= 1e-6
 *    relative; the CPU batch vs the per-point calls: identical;
 *  - GPU batch vs ITK's per-point calls: values <= 1e-5 (float coefficients)
 *    or 1e-9 (double) of the largest |value|; gradients <= the same
 *    fraction of (largest |value|) / (smallest spacing), the scale of the
 *    rounding error of a gradient computed from coefficients of that size;
 *  - points outside [start - 0.5, end + 0.5) on some axis (ITK's
 *    IsInsideBuffer; NaN is outside): value 0, gradient 0, flag 0.
 *=========================================================================*/
#include "CudaImageFiltersTestUtilities.h"
#include "itkBSplineDecompositionImageFilter.h"
#include "itkBSplineInterpolateImageFunction.h"
#include "cif/BSplineEvaluate.h"
#include "itkCudaBSplineInterpolateImageFunction.h"
#include "itkIdentityTransform.h"
#include "itkImageRegionConstIteratorWithIndex.h"
#include "itkResampleImageFilter.h"

#include <gtest/gtest.h>
#include <algorithm>
#include <chrono>
#include <limits>
#include <sstream>
#include <thread>
#include <vector>

namespace
{
using namespace cif_test;
using Mode = itk::CudaExecutionMode;
using Method = itk::CudaBSplinePrefilterMethod;
using F2 = itk::Image<float, 2>;
using F3 = itk::Image<float, 3>;
using D3 = itk::Image<double, 3>;

template <typename TImage, typename TCoef = double>
using Ours = itk::CudaBSplineInterpolateImageFunction<TImage, double, TCoef>;
template <typename TImage, typename TCoef = double>
using Itk = itk::BSplineInterpolateImageFunction<TImage, double, TCoef>;

template <unsigned int D>
using CIndex = itk::ContinuousIndex<double, D>;
template <unsigned int D>
using Point = itk::Point<double, D>;
template <unsigned int D>
using Gradient = itk::CovariantVector<double, D>;

/** Anisotropic spacing, an origin and a rotated direction (x-y by 30
 * degrees, and y-z by 20 degrees in 3D). */
template <typename TImage>
void
GiveGeometry(TImage * image)
{
  constexpr unsigned int         D = TImage::ImageDimension;
  typename TImage::SpacingType   spacing;
  typename TImage::PointType     origin;
  typename TImage::DirectionType xy, yz;
  xy.SetIdentity();
  yz.SetIdentity();
  for (unsigned int d = 0; d < D; ++d)
  {
    spacing[d] = 0.9 + 0.35 * d;
    origin[d] = -7.0 + 3.1 * d;
  }
  const double a = 0.5236;
  xy[0][0] = std::cos(a);
  xy[0][1] = -std::sin(a);
  xy[1][0] = std::sin(a);
  xy[1][1] = std::cos(a);
  if (D == 3)
  {
    const double b = 0.349;
    yz[1][1] = std::cos(b);
    yz[1][D - 1] = -std::sin(b);
    yz[D - 1][1] = std::sin(b);
    yz[D - 1][D - 1] = std::cos(b);
  }
  image->SetSpacing(spacing);
  image->SetOrigin(origin);
  image->SetDirection(xy * yz);
}

/** A smooth (or random) image with geometry; `start` is its first index. */
template <typename TImage>
typename TImage::Pointer
TestImage(const typename TImage::SizeType & size, bool random = false, typename TImage::IndexType start = {})
{
  auto                                   image = TImage::New();
  typename TImage::RegionType            region(start, size);
  std::mt19937                           rng(7);
  std::uniform_real_distribution<double> noise(-60.0, 60.0);
  image->SetRegions(region);
  image->Allocate();
  for (itk::ImageRegionIterator<TImage> it(image, region); !it.IsAtEnd(); ++it)
  {
    double v = 100.0;
    for (unsigned d = 0; d < TImage::ImageDimension; ++d)
    {
      const double x = static_cast<double>(it.GetIndex()[d]);
      v += 40.0 * std::cos(0.23 * (d + 1) * x + d) + 0.5 * x;
    }
    it.Set(static_cast<typename TImage::PixelType>(random ? noise(rng) : v));
  }
  GiveGeometry(image.GetPointer());
  return image;
}

/** Continuous indices uniform in [start - margin, end + margin] per axis. */
template <typename TImage>
std::vector<CIndex<TImage::ImageDimension>>
RandomIndices(const TImage * image, std::size_t count, double margin, unsigned seed)
{
  constexpr unsigned int                 D = TImage::ImageDimension;
  const auto                             region = image->GetBufferedRegion();
  std::mt19937                           rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<CIndex<D>>                 indices(count);
  for (auto & index : indices)
  {
    for (unsigned int d = 0; d < D; ++d)
    {
      const double lo = static_cast<double>(region.GetIndex(d)) - margin;
      const double hi = static_cast<double>(region.GetIndex(d) + static_cast<long>(region.GetSize(d)) - 1) + margin;
      index[d] = lo + (hi - lo) * unit(rng);
    }
  }
  return indices;
}

template <typename TImage>
std::vector<Point<TImage::ImageDimension>>
ToPoints(const TImage * image, const std::vector<CIndex<TImage::ImageDimension>> & indices)
{
  std::vector<Point<TImage::ImageDimension>> points(indices.size());
  for (std::size_t i = 0; i < indices.size(); ++i)
  {
    image->TransformContinuousIndexToPhysicalPoint(indices[i], points[i]);
  }
  return points;
}

template <typename TImage, typename TCoef = double>
typename Ours<TImage, TCoef>::Pointer
MakeOurs(const TImage * image, Mode mode, unsigned order = 3, bool useDirection = true)
{
  auto interpolator = Ours<TImage, TCoef>::New();
  interpolator->SetExecutionMode(mode);
  interpolator->SetSplineOrder(order);
  interpolator->SetUseImageDirection(useDirection);
  interpolator->SetInputImage(image);
  return interpolator;
}

template <typename TImage, typename TCoef = double>
typename Itk<TImage, TCoef>::Pointer
MakeItk(const TImage * image, unsigned order = 3, bool useDirection = true)
{
  auto interpolator = Itk<TImage, TCoef>::New();
  interpolator->SetSplineOrder(order);
  interpolator->SetUseImageDirection(useDirection);
  interpolator->SetInputImage(image);
  return interpolator;
}

/** ITK's per-point results: IsInsideBuffer, Evaluate, EvaluateDerivative
 * (0 for outside points, the documented batch convention). */
template <unsigned int D>
struct Results
{
  std::vector<double>       values;
  std::vector<Gradient<D>>  gradients;
  std::vector<std::uint8_t> inside;
};

template <typename TInterpolator, unsigned int D>
Results<D>
PerPoint(const TInterpolator * interpolator, const std::vector<Point<D>> & points)
{
  Results<D> r;
  r.values.assign(points.size(), 0.0);
  r.gradients.assign(points.size(), Gradient<D>(0.0));
  r.inside.assign(points.size(), 0);
  for (std::size_t i = 0; i < points.size(); ++i)
  {
    if (interpolator->IsInsideBuffer(points[i]))
    {
      r.inside[i] = 1;
      r.values[i] = interpolator->Evaluate(points[i]);
      r.gradients[i] = interpolator->EvaluateDerivative(points[i]);
    }
  }
  return r;
}

/** Largest errors, relative to the scales of the file's header comment. */
struct Errors
{
  double value{ 0 };
  double gradient{ 0 };
  std::string
  Describe() const
  {
    std::ostringstream os;
    os << "relative errors: value " << value << ", gradient " << gradient;
    return os.str();
  }
};

template <unsigned int D, typename TImage>
Errors
Compare(const Results<D> & a, const Results<D> & reference, const TImage * image)
{
  double valueScale = 0.0;
  for (std::size_t i = 0; i < reference.values.size(); ++i)
  {
    valueScale = std::max(valueScale, std::fabs(reference.values[i]));
  }
  double minSpacing = INFINITY;
  for (unsigned int d = 0; d < D; ++d)
  {
    minSpacing = std::min(minSpacing, image->GetSpacing()[d]);
  }
  const double gradientScale = valueScale / minSpacing;
  Errors       e;
  for (std::size_t i = 0; i < reference.values.size(); ++i)
  {
    e.value = std::max(e.value, std::fabs(a.values[i] - reference.values[i]) / valueScale);
    for (unsigned int d = 0; d < D; ++d)
    {
      e.gradient = std::max(e.gradient, std::fabs(a.gradients[i][d] - reference.gradients[i][d]) / gradientScale);
    }
    if (!std::isfinite(a.values[i]))
    {
      e.value = INFINITY;
    }
  }
  return e;
}

template <typename TInterpolator, unsigned int D>
Results<D>
Batch(const TInterpolator * interpolator, const std::vector<Point<D>> & points, std::size_t * insideCount = nullptr)
{
  Results<D>        r;
  const std::size_t n = interpolator->EvaluateBatch(points, r.values, &r.gradients, &r.inside);
  if (insideCount)
  {
    *insideCount = n;
  }
  return r;
}

// ===========================================================================
// CPU
// ===========================================================================

/** Every per-point call of ours equals ITK's on the same image. */
template <typename TImage, typename TCoef>
void
ExpectPerPointMatchesItk(const TImage * image, unsigned order, bool useDirection)
{
  constexpr unsigned int D = TImage::ImageDimension;
  auto                   ours = MakeOurs<TImage, TCoef>(image, Mode::CPU, order, useDirection);
  auto                   itk = MakeItk<TImage, TCoef>(image, order, useDirection);
  const auto             indices = RandomIndices(image, 300, 0.49, 11);
  const auto             points = ToPoints(image, indices);

  const Results<D> reference = PerPoint(itk.GetPointer(), points);
  Results<D>       r = PerPoint(ours.GetPointer(), points);
  EXPECT_EQ(r.inside, reference.inside);
  Errors e = Compare(r, reference, image);
  std::cout << D << "D, " << (sizeof(TCoef) == 4 ? "float" : "double") << " coefficients, order " << order
            << ", UseImageDirection " << useDirection << ": per-point vs ITK " << e.Describe() << std::endl;
  EXPECT_LE(e.value, 1e-6) << "order " << order << ", " << e.Describe();
  EXPECT_LE(e.gradient, 1e-6) << "order " << order << ", " << e.Describe();

  // The other per-point forms: continuous index, value-and-derivative, thread id.
  for (std::size_t i = 0; i < indices.size(); ++i)
  {
    if (!reference.inside[i])
    {
      continue;
    }
    CIndex<D> index;
    image->TransformPhysicalPointToContinuousIndex(points[i], index);
    r.values[i] = ours->EvaluateAtContinuousIndex(index);
    r.gradients[i] = ours->EvaluateDerivativeAtContinuousIndex(index);
  }
  e = Compare(r, reference, image);
  EXPECT_LE(e.value, 1e-6) << "at continuous index, " << e.Describe();
  EXPECT_LE(e.gradient, 1e-6) << "at continuous index, " << e.Describe();
  for (std::size_t i = 0; i < indices.size(); ++i)
  {
    if (reference.inside[i])
    {
      ours->EvaluateValueAndDerivative(points[i], r.values[i], r.gradients[i]);
      EXPECT_EQ(ours->Evaluate(points[i], 0), ours->Evaluate(points[i]));
    }
  }
  e = Compare(r, reference, image);
  EXPECT_LE(e.value, 1e-6) << "value and derivative, " << e.Describe();
  EXPECT_LE(e.gradient, 1e-6) << "value and derivative, " << e.Describe();
}

TEST(CudaBSplineInterpolatorCpu, PerPointMatchesItk2D)
{
  auto image = TestImage<F2>({ { 37, 29 } });
  for (bool useDirection : { true, false })
  {
    ExpectPerPointMatchesItk<F2, double>(image.GetPointer(), 3, useDirection);
    ExpectPerPointMatchesItk<F2, float>(image.GetPointer(), 3, useDirection);
  }
}

TEST(CudaBSplineInterpolatorCpu, PerPointMatchesItk3D)
{
  auto image = TestImage<F3>({ { 19, 17, 13 } });
  auto noise = TestImage<D3>({ { 14, 11, 9 } }, true);
  for (bool useDirection : { true, false })
  {
    ExpectPerPointMatchesItk<F3, double>(image.GetPointer(), 3, useDirection);
    ExpectPerPointMatchesItk<F3, float>(image.GetPointer(), 3, useDirection);
    ExpectPerPointMatchesItk<D3, double>(noise.GetPointer(), 3, useDirection);
  }
}

TEST(CudaBSplineInterpolatorCpu, PerPointMatchesItkWithAStartIndexAndOtherOrders)
{
  auto image = TestImage<F2>({ { 23, 18 } }, false, { { 3, -2 } });
  for (unsigned order : { 1u, 2u, 3u, 4u, 5u })
  {
    ExpectPerPointMatchesItk<F2, double>(image.GetPointer(), order, true);
  }
  auto volume = TestImage<F3>({ { 12, 10, 9 } }, false, { { -4, 2, 5 } });
  ExpectPerPointMatchesItk<F3, double>(volume.GetPointer(), 3, true);
}

TEST(CudaBSplineInterpolatorCpu, InterpolatesTheSamples)
{
  auto   image = TestImage<F3>({ { 15, 12, 10 } }, true);
  auto   ours = MakeOurs<F3>(image.GetPointer(), Mode::CPU);
  double worst = 0.0;
  for (itk::ImageRegionConstIteratorWithIndex<F3> it(image, image->GetBufferedRegion()); !it.IsAtEnd(); ++it)
  {
    CIndex<3> index;
    for (unsigned d = 0; d < 3; ++d)
    {
      index[d] = static_cast<double>(it.GetIndex()[d]);
    }
    worst = std::max(worst, std::fabs(ours->EvaluateAtContinuousIndex(index) - it.Get()));
  }
  EXPECT_LE(worst, 1e-9 * DynamicRange(image.GetPointer()));
  EXPECT_EQ(ours->GetCoefficientsExecutionReport().Device, itk::CudaExecutedOn::CPU);
}

/** The CPU batch is a loop over ITK's per-point calls: identical results, in
 * every form, with and without gradients, on the calling thread (few
 * points) and in parallel (many). */
TEST(CudaBSplineInterpolatorCpu, BatchEqualsPerPoint)
{
  auto image = TestImage<F3>({ { 16, 13, 11 } });
  for (unsigned order : { 3u, 2u })
  {
    auto ours = MakeOurs<F3>(image.GetPointer(), Mode::CPU, order);
    for (std::size_t count : { std::size_t{ 40 }, std::size_t{ 2000 } })
    {
      const auto  indices = RandomIndices(image.GetPointer(), count, 1.5, 5); // some outside
      const auto  points = ToPoints(image.GetPointer(), indices);
      const auto  reference = PerPoint(ours.GetPointer(), points);
      std::size_t expectedInside = 0;
      for (auto flag : reference.inside)
      {
        expectedInside += flag;
      }
      ASSERT_GT(expectedInside, count / 4);
      ASSERT_LT(expectedInside, count);

      std::size_t insideCount = 0;
      const auto  batch = Batch(ours.GetPointer(), points, &insideCount);
      EXPECT_EQ(insideCount, expectedInside);
      EXPECT_EQ(batch.inside, reference.inside);
      EXPECT_EQ(batch.values, reference.values);
      EXPECT_EQ(batch.gradients, reference.gradients);
      EXPECT_EQ(ours->GetLastExecutedOn(), itk::CudaExecutedOn::CPU);

      // Values only.
      std::vector<double> values;
      EXPECT_EQ(ours->EvaluateBatch(points, values), expectedInside);
      EXPECT_EQ(values, reference.values);

      // Continuous indices (those ITK computes from the points).
      std::vector<CIndex<3>> mapped(points.size());
      for (std::size_t i = 0; i < points.size(); ++i)
      {
        image->TransformPhysicalPointToContinuousIndex(points[i], mapped[i]);
      }
      Results<3> atIndex;
      EXPECT_EQ(ours->EvaluateBatchAtContinuousIndex(mapped, atIndex.values, &atIndex.gradients, &atIndex.inside),
                expectedInside);
      EXPECT_EQ(atIndex.values, reference.values);
      EXPECT_EQ(atIndex.gradients, reference.gradients);
      EXPECT_EQ(atIndex.inside, reference.inside);

      // Raw arrays, outputs optional.
      std::vector<double> raw(count * 3), rawValues(count), rawGradients(count * 3);
      for (std::size_t i = 0; i < count; ++i)
      {
        for (unsigned d = 0; d < 3; ++d)
        {
          raw[i * 3 + d] = points[i][d];
        }
      }
      EXPECT_EQ(ours->EvaluateBatch(count, raw.data(), rawValues.data(), rawGradients.data()), expectedInside);
      EXPECT_EQ(rawValues, reference.values);
      for (std::size_t i = 0; i < count; ++i)
      {
        for (unsigned d = 0; d < 3; ++d)
        {
          ASSERT_EQ(rawGradients[i * 3 + d], reference.gradients[i][d]);
        }
      }
      std::vector<std::uint8_t> flags(count);
      EXPECT_EQ(ours->EvaluateBatch(count, raw.data(), nullptr, nullptr, flags.data()), expectedInside);
      EXPECT_EQ(flags, reference.inside);
    }
  }
}

TEST(CudaBSplineInterpolatorCpu, OutsidePointsFollowTheDocumentedConvention)
{
  auto                      image = TestImage<F2>({ { 20, 15 } }, false, { { 2, -3 } });
  auto                      ours = MakeOurs<F2>(image.GetPointer(), Mode::CPU);
  const double              x0 = 2.0, y0 = -3.0, x1 = 21.0, y1 = 11.0; // first and last indices
  auto                      below = [](double x) { return std::nextafter(x, -1e300); };
  const double              nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<CIndex<2>>    indices;
  std::vector<std::uint8_t> expected;
  auto                      add = [&](double x, double y, bool in)
  {
    CIndex<2> c;
    c[0] = x;
    c[1] = y;
    indices.push_back(c);
    expected.push_back(in ? 1 : 0);
  };
  add(x0 - 0.5, y0 - 0.5, true);         // the first corner of the buffer is inside
  add(below(x0 - 0.5), y0 + 3.0, false); // just before it
  add(x0 + 3.0, below(y0 - 0.5), false);
  add(below(x1 + 0.5), below(y1 + 0.5), true); // just before the last edge
  add(x1 + 0.5, y0 + 2.0, false);              // the last edge itself is outside
  add(x0 + 1.0, y1 + 0.5, false);
  add(nan, y0 + 1.0, false); // NaN is outside
  add(x0 + 1.0, nan, false);
  add(1e300, -1e300, false);
  add(x0 + 7.3, y0 + 4.1, true);
  std::vector<double>       values;
  std::vector<Gradient<2>>  gradients;
  std::vector<std::uint8_t> inside;
  EXPECT_EQ(ours->EvaluateBatchAtContinuousIndex(indices, values, &gradients, &inside), 3u);
  EXPECT_EQ(inside, expected);
  for (std::size_t i = 0; i < indices.size(); ++i)
  {
    EXPECT_EQ(static_cast<bool>(inside[i]), ours->IsInsideBuffer(indices[i])) << "point " << i;
    if (inside[i])
    {
      EXPECT_EQ(values[i], ours->EvaluateAtContinuousIndex(indices[i]));
      EXPECT_EQ(gradients[i], ours->EvaluateDerivativeAtContinuousIndex(indices[i]));
    }
    else
    {
      EXPECT_EQ(values[i], 0.0);
      EXPECT_EQ(gradients[i], Gradient<2>(0.0));
    }
  }
}

TEST(CudaBSplineInterpolatorCpu, EmptyPointListAndMissingImage)
{
  auto                  interpolator = Ours<F2>::New();
  std::vector<Point<2>> none;
  std::vector<double>   values(5, 1.0);
  EXPECT_THROW(interpolator->EvaluateBatch(none, values), itk::ExceptionObject) << "no image yet";

  auto image = TestImage<F2>({ { 10, 9 } });
  interpolator->SetInputImage(image);
  std::vector<Gradient<2>>  gradients(3);
  std::vector<std::uint8_t> inside(4, 1);
  EXPECT_EQ(interpolator->EvaluateBatch(none, values, &gradients, &inside), 0u);
  EXPECT_TRUE(values.empty());
  EXPECT_TRUE(gradients.empty());
  EXPECT_TRUE(inside.empty());
  EXPECT_EQ(interpolator->EvaluateBatchAtContinuousIndex(std::vector<CIndex<2>>(), values), 0u);
  EXPECT_EQ(interpolator->EvaluateBatch(0, nullptr, nullptr), 0u);
  EXPECT_THROW(interpolator->EvaluateBatch(3, nullptr, nullptr), itk::ExceptionObject);
}

TEST(CudaBSplineInterpolatorCpu, ReportsWhereItRanAndWhy)
{
  auto                image = TestImage<F2>({ { 12, 11 } });
  auto                ours = MakeOurs<F2>(image.GetPointer(), Mode::Automatic);
  const auto          points = ToPoints(image.GetPointer(), RandomIndices(image.GetPointer(), 10, 0.3, 3));
  std::vector<double> values;
  EXPECT_EQ(ours->GetLastExecutedOn(), itk::CudaExecutedOn::None);
  ours->EvaluateBatch(points, values);
  if (!cif::Runtime::IsDeviceAvailable())
  {
    EXPECT_EQ(ours->GetCoefficientsExecutionReport().Device, itk::CudaExecutedOn::CPU);
    EXPECT_EQ(ours->GetLastExecutedOn(), itk::CudaExecutedOn::CPU);
    EXPECT_NE(ours->GetLastExecutionReport().Message.find("CPU, because"), std::string::npos)
      << ours->GetLastExecutionReport().Message;

    // GPU mode without a GPU: the coefficients, the batch and the device form throw.
    auto gpu = Ours<F2>::New();
    gpu->SetExecutionMode(Mode::GPU);
    EXPECT_THROW(gpu->SetInputImage(image), itk::ExceptionObject);
    ours->SetExecutionMode(Mode::GPU);
    EXPECT_THROW(ours->EvaluateBatch(points, values), itk::ExceptionObject);
    EXPECT_THROW(ours->EvaluateBatchOnDevice(1, nullptr, false, nullptr), itk::ExceptionObject);
  }
  ours->SetExecutionMode(Mode::CPU);
  EXPECT_THROW(ours->EvaluateBatchOnDevice(1, nullptr, false, nullptr), itk::ExceptionObject);
  ours->EvaluateBatch(points, values);
  EXPECT_EQ(ours->GetLastExecutionReport().Message, "CPU");

  auto quintic = MakeOurs<F2>(image.GetPointer(), Mode::CPU, 5);
  if (cif::Runtime::IsCompiledWithCuda())
  {
    EXPECT_NE(quintic->GetGPUUnsupportedReason().find("spline order 3"), std::string::npos)
      << quintic->GetGPUUnsupportedReason();
  }
  else
  {
    EXPECT_NE(quintic->GetGPUUnsupportedReason().find("no CUDA"), std::string::npos);
  }
}

TEST(CudaBSplineInterpolatorCpu, PrefilterMethodOption)
{
  auto image = TestImage<F2>({ { 40, 33 } });
  auto fir = Ours<F2>::New();
  fir->SetExecutionMode(Mode::CPU);
  fir->SetPrefilterMethod(Method::FIR); // default tolerance 1e-7: K = 13
  fir->SetInputImage(image);
  auto         exact = MakeOurs<F2>(image.GetPointer(), Mode::CPU);
  const auto   points = ToPoints(image.GetPointer(), RandomIndices(image.GetPointer(), 200, 0.4, 9));
  const auto   a = PerPoint(fir.GetPointer(), points);
  const auto   b = PerPoint(exact.GetPointer(), points);
  const Errors e = Compare(a, b, image.GetPointer());
  EXPECT_LE(e.value, 1e-5) << e.Describe();
  EXPECT_LE(e.gradient, 1e-5) << e.Describe();
  EXPECT_GT(e.value, 0.0) << "the FIR coefficients are not the exact ones";
  fir->SetPrefilterFIRHalfWidth(3); // a coarse FIR is further off
  fir->SetInputImage(image);
  EXPECT_GT(Compare(PerPoint(fir.GetPointer(), points), b, image.GetPointer()).value, 10 * e.value);
  EXPECT_THROW(fir->SetPrefilterFIRHalfWidth(40), itk::ExceptionObject);
  EXPECT_THROW(fir->SetPrefilterFIRTolerance(0.0), itk::ExceptionObject);
}

/** A registration-like use: a mean-squares metric and its derivative with
 * respect to a translation of the moving image, from one batch call per
 * iteration, equal to the per-point loop a v4 metric runs, and to finite
 * differences of the metric (so the gradients are physical-space ones). */
TEST(CudaBSplineInterpolatorCpu, RegistrationLikeMetricAndDerivative)
{
  auto moving = TestImage<F2>({ { 60, 56 } });
  auto ours = MakeOurs<F2>(moving.GetPointer(), Mode::Automatic);

  // Fixed points: a grid inside the moving image's footprint; fixed values
  // from the moving image at a shifted position.
  std::vector<Point<2>> fixedPoints;
  for (double y = 12.0; y < 42.0; y += 1.3)
  {
    for (double x = 12.0; x < 45.0; x += 1.1)
    {
      CIndex<2> index;
      index[0] = x;
      index[1] = y;
      Point<2> p;
      moving->TransformContinuousIndexToPhysicalPoint(index, p);
      fixedPoints.push_back(p);
    }
  }
  itk::Vector<double, 2> truth;
  truth[0] = 0.8;
  truth[1] = -0.6;
  std::vector<double> fixedValues(fixedPoints.size());
  for (std::size_t i = 0; i < fixedPoints.size(); ++i)
  {
    fixedValues[i] = ours->Evaluate(fixedPoints[i] + truth);
  }

  auto metricBatch = [&](const itk::Vector<double, 2> & t, itk::Vector<double, 2> * derivative)
  {
    std::vector<Point<2>> mapped(fixedPoints.size());
    for (std::size_t i = 0; i < mapped.size(); ++i)
    {
      mapped[i] = fixedPoints[i] + t;
    }
    std::vector<double>       values;
    std::vector<Gradient<2>>  gradients;
    std::vector<std::uint8_t> inside;
    const std::size_t         n = ours->EvaluateBatch(mapped, values, &gradients, &inside);
    double                    sum = 0.0;
    itk::Vector<double, 2>    d(0.0);
    for (std::size_t i = 0; i < mapped.size(); ++i)
    {
      if (inside[i])
      {
        const double r = values[i] - fixedValues[i];
        sum += r * r;
        d[0] += 2.0 * r * gradients[i][0];
        d[1] += 2.0 * r * gradients[i][1];
      }
    }
    if (derivative)
    {
      *derivative = d / static_cast<double>(n);
    }
    return sum / static_cast<double>(n);
  };
  auto metricPerPoint = [&](const itk::Vector<double, 2> & t, itk::Vector<double, 2> * derivative)
  {
    double                 sum = 0.0;
    std::size_t            n = 0;
    itk::Vector<double, 2> d(0.0);
    for (const auto & x : fixedPoints)
    {
      const Point<2> y = x + t;
      if (ours->IsInsideBuffer(y))
      {
        double      value;
        Gradient<2> gradient;
        ours->EvaluateValueAndDerivative(y, value, gradient);
        const double r = value - fixedValues[&x - fixedPoints.data()];
        sum += r * r;
        d[0] += 2.0 * r * gradient[0];
        d[1] += 2.0 * r * gradient[1];
        ++n;
      }
    }
    *derivative = d / static_cast<double>(n);
    return sum / static_cast<double>(n);
  };

  itk::Vector<double, 2> t;
  t[0] = 0.3;
  t[1] = 0.2;
  itk::Vector<double, 2> dBatch, dLoop;
  const double           mBatch = metricBatch(t, &dBatch);
  const double           mLoop = metricPerPoint(t, &dLoop);
  EXPECT_NEAR(mBatch, mLoop, 1e-12 * mLoop);
  EXPECT_NEAR(dBatch[0], dLoop[0], 1e-9 * dLoop.GetNorm());
  EXPECT_NEAR(dBatch[1], dLoop[1], 1e-9 * dLoop.GetNorm());
  EXPECT_GT(mBatch, 1.0);

  const double h = 1e-5;
  for (unsigned k = 0; k < 2; ++k)
  {
    itk::Vector<double, 2> plus = t, minus = t;
    plus[k] += h;
    minus[k] -= h;
    const double numeric = (metricBatch(plus, nullptr) - metricBatch(minus, nullptr)) / (2.0 * h);
    EXPECT_NEAR(dBatch[k], numeric, 1e-5 * dBatch.GetNorm()) << "axis " << k;
  }
  // At the truth the metric vanishes.
  EXPECT_LE(metricBatch(truth, nullptr), 1e-12 * mBatch);
}

TEST(CudaBSplineInterpolatorCpu, BatchCallsFromSeveralThreads)
{
  auto                     image = TestImage<F3>({ { 14, 12, 10 } });
  auto                     ours = MakeOurs<F3>(image.GetPointer(), Mode::Automatic);
  const auto               points = ToPoints(image.GetPointer(), RandomIndices(image.GetPointer(), 700, 0.7, 21));
  const auto               reference = PerPoint(ours.GetPointer(), points);
  Results<3>               r[3];
  std::vector<std::thread> threads;
  for (auto & result : r)
  {
    threads.emplace_back([&] { result = Batch(ours.GetPointer(), points); });
  }
  for (auto & thread : threads)
  {
    thread.join();
  }
  for (const auto & result : r)
  {
    EXPECT_EQ(result.inside, reference.inside);
    EXPECT_LE(Compare(result, reference, image.GetPointer()).value, 1e-5);
  }
}

TEST(CudaBSplineInterpolatorCpu, WorksAsAnItkInterpolator)
{
  auto image = TestImage<F2>({ { 31, 27 } });
  auto resample = [&](itk::InterpolateImageFunction<F2, double> * interpolator)
  {
    auto filter = itk::ResampleImageFilter<F2, F2>::New();
    filter->SetInput(image);
    filter->SetTransform(itk::IdentityTransform<double, 2>::New());
    filter->SetInterpolator(interpolator);
    filter->SetOutputParametersFromImage(image);
    auto origin = image->GetOrigin();
    origin[0] += 0.37;
    origin[1] -= 0.21;
    filter->SetOutputOrigin(origin);
    filter->Update();
    F2::Pointer out = filter->GetOutput();
    out->DisconnectPipeline();
    return out;
  };
  auto ours = Ours<F2>::New();
  ours->SetExecutionMode(Mode::CPU);
  auto itk = Itk<F2>::New();
  auto a = resample(ours.GetPointer());
  auto b = resample(itk.GetPointer());
  // The filter called our SetInputImage (virtual), so our prefilter ran;
  // after the update it disconnected the image (SetInputImage(nullptr)).
  EXPECT_EQ(ours->GetCoefficientsExecutionReport().Device, itk::CudaExecutedOn::CPU);
  EXPECT_EQ(ours->GetInputImage(), nullptr);
  EXPECT_LE(MaxAbsDifference(a.GetPointer(), b.GetPointer()), 1e-6 * DynamicRange(image.GetPointer()));
}

TEST(CudaBSplineInterpolatorCpu, ExecutionModeIsAnItkSetting)
{
  ExpectExecutionModeIsAnItkSetting(Ours<F2>::New().GetPointer());
}

TEST(CudaBSplineInterpolatorCpu, NullInputAndPrintSelf)
{
  auto image = TestImage<F2>({ { 8, 7 } });
  auto ours = MakeOurs<F2>(image.GetPointer(), Mode::CPU);
  ASSERT_NE(ours->GetCoefficients(), nullptr);
  EXPECT_EQ(ours->GetCoefficients()->GetBufferedRegion(), image->GetBufferedRegion());
  std::ostringstream os;
  ours->SetPrefilterFIRHalfWidth(9);
  ours->Print(os);
  EXPECT_NE(os.str().find("ExecutionMode: CPU"), std::string::npos) << os.str();
  EXPECT_NE(os.str().find("PrefilterMethod: Recursive"), std::string::npos);
  EXPECT_NE(os.str().find("PrefilterFIRHalfWidth: 9"), std::string::npos);
  EXPECT_NE(os.str().find("Spline Order: 3"), std::string::npos);
  ours->SetInputImage(nullptr);
  EXPECT_EQ(ours->GetCoefficients(), nullptr);
  EXPECT_EQ(ours->GetInputImage(), nullptr);
  std::vector<double> values;
  EXPECT_THROW(ours->EvaluateBatch(std::vector<Point<2>>(1), values), itk::ExceptionObject);
}

// ===========================================================================
// GPU (CTest label "gpu")
// ===========================================================================

/** The core's CPU batch (cif::BSplineEvaluateCPU, the Python package's CPU
 * path) on ITK's own double coefficients equals ITK's per-point calls: the
 * same operations in the same order, so to the last few bits. */
template <typename TImage>
void
ExpectCoreCpuBatchMatchesItk(const TImage * image, bool useDirection)
{
  constexpr unsigned int D = TImage::ImageDimension;
  auto                   itk = MakeItk<TImage, double>(image, 3, useDirection);
  const auto             points = ToPoints(image, RandomIndices(image, 2000, 1.5, 23)); // some outside
  const auto             reference = PerPoint(itk.GetPointer(), points);

  using Decomposition = itk::BSplineDecompositionImageFilter<TImage, itk::Image<double, D>>;
  auto decomposition = Decomposition::New();
  decomposition->SetSplineOrder(3);
  decomposition->SetInput(image);
  decomposition->Update();
  const double * coefficients = decomposition->GetOutput()->GetBufferPointer();

  cif::BSplineEvaluateGeometry g;
  g.dimension = static_cast<int>(D);
  const auto region = image->GetBufferedRegion();
  // ImageBase's own matrix: (direction * diag(spacing))^-1 with vnl's inverse
  typename TImage::DirectionType scale;
  scale.Fill(0.0);
  for (unsigned int i = 0; i < D; ++i)
  {
    scale[i][i] = image->GetSpacing()[i];
  }
  const typename TImage::DirectionType indexToPoint = image->GetDirection() * scale;
  const typename TImage::DirectionType pointToIndex(indexToPoint.GetInverse());
  for (unsigned int i = 0; i < D; ++i)
  {
    g.size[i] = static_cast<std::int64_t>(region.GetSize(i));
    g.start[i] = region.GetIndex(i);
    g.origin[i] = image->GetOrigin()[i];
    g.spacing[i] = image->GetSpacing()[i];
    for (unsigned int j = 0; j < D; ++j)
    {
      g.pointToIndex[i][j] = pointToIndex[i][j];
      g.gradientMatrix[i][j] = useDirection ? image->GetDirection()[i][j] : (i == j ? 1.0 : 0.0);
    }
  }
  std::vector<double>       flat(points.size() * D), values(points.size()), gradients(points.size() * D);
  std::vector<std::uint8_t> inside(points.size());
  for (std::size_t n = 0; n < points.size(); ++n)
  {
    for (unsigned int d = 0; d < D; ++d)
    {
      flat[n * D + d] = points[n][d];
    }
  }
  cif::BSplineEvaluateBatch b;
  b.count = static_cast<std::int64_t>(points.size());
  b.points = flat.data();
  b.values = values.data();
  b.gradients = gradients.data();
  b.inside = inside.data();
  cif::BSplineEvaluateCPU(coefficients, g, b, 3);

  Results<D> r;
  r.values = values;
  r.inside = inside;
  r.gradients.resize(points.size());
  for (std::size_t n = 0; n < points.size(); ++n)
  {
    for (unsigned int d = 0; d < D; ++d)
    {
      r.gradients[n][d] = gradients[n * D + d];
    }
  }
  EXPECT_EQ(r.inside, reference.inside);
  const Errors e = Compare(r, reference, image);
  std::cout << D << "D core CPU batch vs ITK: " << e.Describe() << std::endl;
  EXPECT_LE(e.value, 1e-13) << e.Describe();
  EXPECT_LE(e.gradient, 1e-13) << e.Describe();
  for (std::size_t n = 0; n < points.size(); ++n)
  {
    if (!inside[n])
    {
      EXPECT_EQ(values[n], 0.0);
    }
  }
}

TEST(CudaBSplineInterpolatorCpu, CoreCpuBatchMatchesItk)
{
  ExpectCoreCpuBatchMatchesItk(TestImage<F2>({ { 37, 29 } }).GetPointer(), true);
  ExpectCoreCpuBatchMatchesItk(TestImage<F3>({ { 17, 13, 11 } }, true).GetPointer(), true);
  ExpectCoreCpuBatchMatchesItk(TestImage<F3>({ { 9, 1, 3 } }).GetPointer(), false); // a size-1 axis
  // the core refuses what it cannot do
  cif::BSplineEvaluateGeometry g;
  g.dimension = 4;
  cif::BSplineEvaluateBatch b;
  const double              c = 0.0;
  EXPECT_THROW(cif::BSplineEvaluateCPU(&c, g, b, 1), std::invalid_argument);
}

/** GPU batch vs ITK's per-point calls (ITK's own coefficients), and vs our
 * per-point calls (the same coefficients as the GPU). */
template <typename TImage, typename TCoef>
void
ExpectGpuBatchMatchesItk(const TImage * image, bool useDirection, double tolerance)
{
  constexpr unsigned int D = TImage::ImageDimension;
  auto                   ours = MakeOurs<TImage, TCoef>(image, Mode::GPU, 3, useDirection);
  auto                   itk = MakeItk<TImage, TCoef>(image, 3, useDirection);
  EXPECT_EQ(ours->GetCoefficientsExecutionReport().Device, itk::CudaExecutedOn::GPU);
  const auto points = ToPoints(image, RandomIndices(image, 5000, 2.0, 17)); // some outside

  std::size_t insideCount = 0;
  const auto  gpu = Batch(ours.GetPointer(), points, &insideCount);
  EXPECT_EQ(ours->GetLastExecutedOn(), itk::CudaExecutedOn::GPU) << ours->GetLastExecutionReport().Message;
  const auto reference = PerPoint(itk.GetPointer(), points);
  const auto sameCoefficients = PerPoint(ours.GetPointer(), points);
  EXPECT_EQ(gpu.inside, reference.inside);
  std::size_t expectedInside = 0;
  for (auto flag : reference.inside)
  {
    expectedInside += flag;
  }
  EXPECT_EQ(insideCount, expectedInside);
  ASSERT_GT(expectedInside, points.size() / 20);
  for (std::size_t i = 0; i < points.size(); ++i)
  {
    if (!gpu.inside[i])
    {
      ASSERT_EQ(gpu.values[i], 0.0);
      ASSERT_EQ(gpu.gradients[i], Gradient<D>(0.0));
    }
  }
  const Errors vsItk = Compare(gpu, reference, image);
  const Errors vsOurs = Compare(gpu, sameCoefficients, image);
  std::cout << D << "D, " << (sizeof(TCoef) == 4 ? "float" : "double") << " coefficients, UseImageDirection "
            << useDirection << ": vs ITK " << vsItk.Describe() << "; vs per-point on the same coefficients "
            << vsOurs.Describe() << std::endl;
  EXPECT_LE(vsItk.value, tolerance) << vsItk.Describe();
  EXPECT_LE(vsItk.gradient, tolerance) << vsItk.Describe();
  EXPECT_LE(vsOurs.value, tolerance) << vsOurs.Describe();
  EXPECT_LE(vsOurs.gradient, tolerance) << vsOurs.Describe();
}

TEST(CudaBSplineInterpolatorGpu, BatchMatchesItk2D)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto image = TestImage<F2>({ { 97, 81 } });
  auto noise = TestImage<F2>({ { 64, 50 } }, true);
  for (bool useDirection : { true, false })
  {
    ExpectGpuBatchMatchesItk<F2, float>(image.GetPointer(), useDirection, 1e-5);
    ExpectGpuBatchMatchesItk<F2, double>(image.GetPointer(), useDirection, 1e-9);
    ExpectGpuBatchMatchesItk<F2, float>(noise.GetPointer(), useDirection, 1e-5);
    ExpectGpuBatchMatchesItk<F2, double>(noise.GetPointer(), useDirection, 1e-9);
  }
}

TEST(CudaBSplineInterpolatorGpu, BatchMatchesItk3D)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto image = TestImage<F3>({ { 41, 37, 29 } });
  auto noise = TestImage<D3>({ { 30, 26, 21 } }, true);
  for (bool useDirection : { true, false })
  {
    ExpectGpuBatchMatchesItk<F3, float>(image.GetPointer(), useDirection, 1e-5);
    ExpectGpuBatchMatchesItk<F3, double>(image.GetPointer(), useDirection, 1e-9);
    ExpectGpuBatchMatchesItk<D3, float>(noise.GetPointer(), useDirection, 1e-5);
    ExpectGpuBatchMatchesItk<D3, double>(noise.GetPointer(), useDirection, 1e-9);
  }
}

TEST(CudaBSplineInterpolatorGpu, BatchMatchesItkWithAStartIndexAndThinAxes)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto shifted = TestImage<F3>({ { 21, 17, 12 } }, false, { { 5, -3, 2 } });
  ExpectGpuBatchMatchesItk<F3, float>(shifted.GetPointer(), true, 1e-5);
  ExpectGpuBatchMatchesItk<F3, double>(shifted.GetPointer(), true, 1e-9);
  // An axis of length 1 (start 0, where ITK reads index 0) and one of length 3.
  auto thin = TestImage<F3>({ { 25, 3, 1 } });
  ExpectGpuBatchMatchesItk<F3, double>(thin.GetPointer(), true, 1e-9);
}

TEST(CudaBSplineInterpolatorGpu, AllFormsAgree)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto       image = TestImage<F3>({ { 33, 30, 20 } });
  auto       ours = MakeOurs<F3, float>(image.GetPointer(), Mode::GPU);
  const auto indices = RandomIndices(image.GetPointer(), 3000, 1.0, 8);
  const auto points = ToPoints(image.GetPointer(), indices);
  const auto batch = Batch(ours.GetPointer(), points);

  std::vector<CIndex<3>> mapped(points.size());
  for (std::size_t i = 0; i < points.size(); ++i)
  {
    image->TransformPhysicalPointToContinuousIndex(points[i], mapped[i]);
  }
  Results<3> atIndex;
  ours->EvaluateBatchAtContinuousIndex(mapped, atIndex.values, &atIndex.gradients, &atIndex.inside);
  EXPECT_EQ(atIndex.inside, batch.inside);
  EXPECT_EQ(atIndex.values, batch.values);
  EXPECT_EQ(atIndex.gradients, batch.gradients);

  std::vector<double> values;
  ours->EvaluateBatch(points, values);
  EXPECT_EQ(values, batch.values) << "values without gradients";

  // Device arrays.
  const std::size_t     n = points.size();
  cif::DeviceBuffer devicePoints(n * 3 * sizeof(double)), deviceValues(n * sizeof(double)),
    deviceGradients(n * 3 * sizeof(double)), deviceInside(n);
  devicePoints.CopyFromHost(points[0].GetDataPointer(), n * 3 * sizeof(double));
  ours->EvaluateBatchOnDevice(n,
                              static_cast<const double *>(devicePoints.GetPointer()),
                              false,
                              static_cast<double *>(deviceValues.GetPointer()),
                              static_cast<double *>(deviceGradients.GetPointer()),
                              static_cast<std::uint8_t *>(deviceInside.GetPointer()));
  Results<3> onDevice;
  onDevice.values.resize(n);
  onDevice.gradients.resize(n);
  onDevice.inside.resize(n);
  deviceValues.CopyToHost(onDevice.values.data(), n * sizeof(double));
  deviceGradients.CopyToHost(onDevice.gradients[0].GetDataPointer(), n * 3 * sizeof(double));
  deviceInside.CopyToHost(onDevice.inside.data(), n);
  EXPECT_EQ(onDevice.values, batch.values);
  EXPECT_EQ(onDevice.gradients, batch.gradients);
  EXPECT_EQ(onDevice.inside, batch.inside);
}

TEST(CudaBSplineInterpolatorGpu, CoefficientsStayOnTheDevice)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto       image = TestImage<F3>({ { 64, 60, 50 } });
  const auto points = ToPoints(image.GetPointer(), RandomIndices(image.GetPointer(), 10000, 0.4, 4));

  cif::Runtime::ResetTransferCounters();
  auto ours = MakeOurs<F3, float>(image.GetPointer(), Mode::Automatic);
  auto counters = cif::Runtime::GetTransferCounters();
  EXPECT_EQ(ours->GetCoefficientsExecutionReport().Device, itk::CudaExecutedOn::GPU);
  EXPECT_EQ(counters.HostToDeviceCount, 1u) << "the image";
  EXPECT_EQ(counters.DeviceToHostCount, 1u) << "the host copy of the coefficients, for per-point calls";

  Results<3> first, second;
  for (Results<3> * r : { &first, &second })
  {
    cif::Runtime::ResetTransferCounters();
    *r = Batch(ours.GetPointer(), points);
    counters = cif::Runtime::GetTransferCounters();
    EXPECT_EQ(counters.HostToDeviceCount, 1u) << "the points only";
    EXPECT_EQ(counters.HostToDeviceBytes, points.size() * 3 * sizeof(double));
    EXPECT_EQ(counters.DeviceToHostCount, 3u) << "values, gradients, flags";
  }
  EXPECT_EQ(first.values, second.values);

  // After ReleaseDeviceMemory the next batch uploads the coefficients once.
  ours->ReleaseDeviceMemory();
  cif::Runtime::ResetTransferCounters();
  const auto third = Batch(ours.GetPointer(), points);
  EXPECT_EQ(cif::Runtime::GetTransferCounters().HostToDeviceCount, 2u);
  EXPECT_EQ(third.values, first.values);

  // Coefficients computed on the CPU: uploaded at the first GPU batch only.
  auto cpuCoefficients = MakeOurs<F3, float>(image.GetPointer(), Mode::CPU);
  EXPECT_EQ(cpuCoefficients->GetCoefficientsExecutionReport().Device, itk::CudaExecutedOn::CPU);
  cpuCoefficients->SetExecutionMode(Mode::GPU);
  cif::Runtime::ResetTransferCounters();
  const auto fourth = Batch(cpuCoefficients.GetPointer(), points);
  EXPECT_EQ(cif::Runtime::GetTransferCounters().HostToDeviceCount, 2u) << "coefficients and points";
  cif::Runtime::ResetTransferCounters();
  Batch(cpuCoefficients.GetPointer(), points);
  EXPECT_EQ(cif::Runtime::GetTransferCounters().HostToDeviceCount, 1u) << "points only";
  EXPECT_LE(Compare(fourth, first, image.GetPointer()).value, 1e-5);
}

TEST(CudaBSplineInterpolatorGpu, OtherOrdersRunOnTheCpuOrThrow)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto       image = TestImage<F2>({ { 30, 28 } });
  auto       quadratic = MakeOurs<F2>(image.GetPointer(), Mode::Automatic, 2);
  const auto points = ToPoints(image.GetPointer(), RandomIndices(image.GetPointer(), 100, 0.4, 2));
  const auto r = Batch(quadratic.GetPointer(), points);
  EXPECT_EQ(quadratic->GetLastExecutedOn(), itk::CudaExecutedOn::CPU);
  EXPECT_NE(quadratic->GetLastExecutionReport().Message.find("spline order 3"), std::string::npos)
    << quadratic->GetLastExecutionReport().Message;
  EXPECT_EQ(r.values, PerPoint(quadratic.GetPointer(), points).values);
  quadratic->SetExecutionMode(Mode::GPU);
  EXPECT_THROW(Batch(quadratic.GetPointer(), points), itk::ExceptionObject);
}

TEST(CudaBSplineInterpolatorGpu, OutOfMemoryFallsBackToCpuOrThrows)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto       image = TestImage<F3>({ { 30, 30, 30 } });
  auto       ours = MakeOurs<F3, double>(image.GetPointer(), Mode::Automatic);
  const auto points = ToPoints(image.GetPointer(), RandomIndices(image.GetPointer(), 50000, 0.4, 6));
  const auto reference = PerPoint(ours.GetPointer(), points);
  cif::Runtime::SetAllocationLimit(cif::Runtime::GetBytesAllocated() + 4096);
  Results<3> r;
  EXPECT_NO_THROW(r = Batch(ours.GetPointer(), points));
  const auto report = ours->GetLastExecutionReport();
  EXPECT_EQ(report.Device, itk::CudaExecutedOn::CPU);
  EXPECT_TRUE(report.FellBackAfterOutOfMemory) << report.Message;
  EXPECT_EQ(r.values, reference.values);
  ours->SetExecutionMode(Mode::GPU);
  EXPECT_THROW(Batch(ours.GetPointer(), points), itk::ExceptionObject);
  cif::Runtime::SetAllocationLimit(0);
  EXPECT_NO_THROW(Batch(ours.GetPointer(), points));
  EXPECT_EQ(ours->GetLastExecutedOn(), itk::CudaExecutedOn::GPU);
}

TEST(CudaBSplineInterpolatorGpu, BoundaryPointsMatchTheCpu)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto image = TestImage<F2>({ { 20, 15 } }, false, { { 2, -3 } });
  auto gpu = MakeOurs<F2, double>(image.GetPointer(), Mode::GPU);
  auto cpu = MakeOurs<F2, double>(image.GetPointer(), Mode::CPU);
  // Points on and next to the boundaries of [start - 0.5, end + 0.5), at
  // integers and half-integers, and NaN.
  std::vector<CIndex<2>> indices;
  const double           nan = std::numeric_limits<double>::quiet_NaN();
  for (double x : { 1.5, 2.0, 2.5, 21.0, 21.5 })
  {
    for (double y : { -3.5, -3.0, 0.0, 11.0, 11.5 })
    {
      for (double dx : { -1e-12, 0.0, 1e-12 })
      {
        CIndex<2> c;
        c[0] = x + dx;
        c[1] = y;
        indices.push_back(c);
        c[0] = std::nextafter(x, -1e9);
        c[1] = std::nextafter(y, 1e9);
        indices.push_back(c);
      }
    }
  }
  CIndex<2> c;
  c[0] = nan;
  c[1] = 0.0;
  indices.push_back(c);
  Results<2> a, b;
  gpu->EvaluateBatchAtContinuousIndex(indices, a.values, &a.gradients, &a.inside);
  cpu->EvaluateBatchAtContinuousIndex(indices, b.values, &b.gradients, &b.inside);
  EXPECT_EQ(a.inside, b.inside);
  EXPECT_EQ(a.inside.back(), 0);
  const Errors e = Compare(a, b, image.GetPointer());
  EXPECT_LE(e.value, 1e-9) << e.Describe();
  EXPECT_LE(e.gradient, 1e-9) << e.Describe();

  // Physical points whose continuous indices land on the boundaries: the
  // GPU maps them exactly as ITK does, so the flags agree.
  std::vector<Point<2>> points(indices.size() - 1);
  for (std::size_t i = 0; i + 1 < indices.size(); ++i)
  {
    image->TransformContinuousIndexToPhysicalPoint(indices[i], points[i]);
  }
  EXPECT_EQ(Batch(gpu.GetPointer(), points).inside, Batch(cpu.GetPointer(), points).inside);
}

TEST(CudaBSplineInterpolatorGpu, ManyPoints)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto                      image = TestImage<F3>({ { 128, 128, 64 } });
  auto                      ours = MakeOurs<F3, float>(image.GetPointer(), Mode::GPU);
  auto                      cpu = MakeOurs<F3, float>(image.GetPointer(), Mode::CPU);
  const std::size_t         n = std::size_t{ 1 } << 21;
  const auto                indices = RandomIndices(image.GetPointer(), n, 0.6, 12);
  std::vector<double>       values;
  std::vector<Gradient<3>>  gradients;
  std::vector<std::uint8_t> inside;
  ours->EvaluateBatchAtContinuousIndex(indices, values, &gradients, &inside); // warm-up
  const auto start = std::chrono::steady_clock::now();
  ours->EvaluateBatchAtContinuousIndex(indices, values, &gradients, &inside);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << n << " points with gradients, 3D float coefficients: " << seconds * 1e3 << " ms including transfers"
            << std::endl;
  // A sample against the CPU.
  std::vector<CIndex<3>> sample(indices.begin(), indices.begin() + 5000);
  Results<3>             reference;
  cpu->EvaluateBatchAtContinuousIndex(sample, reference.values, &reference.gradients, &reference.inside);
  Results<3> head;
  head.values.assign(values.begin(), values.begin() + 5000);
  head.gradients.assign(gradients.begin(), gradients.begin() + 5000);
  head.inside.assign(inside.begin(), inside.begin() + 5000);
  EXPECT_EQ(head.inside, reference.inside);
  const Errors e = Compare(head, reference, image.GetPointer());
  EXPECT_LE(e.value, 1e-5) << e.Describe();
  EXPECT_LE(e.gradient, 1e-5) << e.Describe();
}

} // namespace
