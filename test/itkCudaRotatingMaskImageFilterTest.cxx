/*=========================================================================
 *  Tests of CudaRotatingMaskImageFilter (CPU and GPU paths).
 *
 *  Reference: an independent long-double evaluation written here from the
 *  documented sub-region lists (two-pass mean and variance per sub-region,
 *  clamped neighbours). Near-ties are resolved with a tolerance: the
 *  "acceptable" sub-regions are those whose reference dispersion exceeds
 *  the smallest by at most
 *  - 1e-6 (absolute) for integer samples: distinct dispersions of integer
 *    data differ by at least 1/(49 * 81) in 2D and 1/729 in 3D, so this set
 *    is exactly the tied sub-regions, and the output must be the rounded
 *    mean of the FIRST of them (documented order): exact equality;
 *  - 1e-9 x (squared spread of the mask) for float samples: the output must
 *    be the mean of one of them within 2^-22 relative.
 *  Non-finite samples in the mask: the output must be NaN.
 *
 *  Independent checks of the definition: axis ramps, where sub-regions tie
 *  exactly and the first in the documented order must win (2D: +x before
 *  -x, -y before +y; 3D: +x first); straight steps, which the filter must
 *  preserve exactly.
 *=========================================================================*/
#include "CudaImageFiltersTestUtilities.h"
#include "cif/RotatingMask.h"
#include "itkCudaFilterImage.h"
#include "itkCudaRotatingMaskImageFilter.h"
#include "itkRegionOfInterestImageFilter.h"
#include "itkStreamingImageFilter.h"

#include <gtest/gtest.h>
#include <array>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

namespace
{
using namespace cif_test;
using Mode = itk::CudaExecutionMode;

// ---------------------------------------------------------------------------
// Independent reference, from the documented sub-region lists.
using Offset = std::array<int, 3>;

std::vector<std::vector<Offset>>
Regions(unsigned dimension)
{
  std::vector<std::vector<Offset>> r;
  if (dimension == 2)
  {
    std::vector<Offset> square;
    for (int dy = -1; dy <= 1; ++dy)
    {
      for (int dx = -1; dx <= 1; ++dx)
      {
        square.push_back({ { dx, dy, 0 } });
      }
    }
    r.push_back(square);
    r.push_back({ { { -1, -2, 0 } },
                  { { 0, -2, 0 } },
                  { { 1, -2, 0 } },
                  { { -1, -1, 0 } },
                  { { 0, -1, 0 } },
                  { { 1, -1, 0 } },
                  { { 0, 0, 0 } } });
    r.push_back({ { { 2, -1, 0 } },
                  { { 2, 0, 0 } },
                  { { 2, 1, 0 } },
                  { { 1, -1, 0 } },
                  { { 1, 0, 0 } },
                  { { 1, 1, 0 } },
                  { { 0, 0, 0 } } });
    r.push_back({ { { -1, 2, 0 } },
                  { { 0, 2, 0 } },
                  { { 1, 2, 0 } },
                  { { -1, 1, 0 } },
                  { { 0, 1, 0 } },
                  { { 1, 1, 0 } },
                  { { 0, 0, 0 } } });
    r.push_back({ { { -2, -1, 0 } },
                  { { -2, 0, 0 } },
                  { { -2, 1, 0 } },
                  { { -1, -1, 0 } },
                  { { -1, 0, 0 } },
                  { { -1, 1, 0 } },
                  { { 0, 0, 0 } } });
    r.push_back({ { { -2, -2, 0 } },
                  { { -1, -2, 0 } },
                  { { -2, -1, 0 } },
                  { { -1, -1, 0 } },
                  { { 0, -1, 0 } },
                  { { -1, 0, 0 } },
                  { { 0, 0, 0 } } });
    r.push_back({ { { 2, -2, 0 } },
                  { { 1, -2, 0 } },
                  { { 2, -1, 0 } },
                  { { 1, -1, 0 } },
                  { { 0, -1, 0 } },
                  { { 1, 0, 0 } },
                  { { 0, 0, 0 } } });
    r.push_back({ { { 2, 2, 0 } },
                  { { 1, 2, 0 } },
                  { { 2, 1, 0 } },
                  { { 1, 1, 0 } },
                  { { 0, 1, 0 } },
                  { { 1, 0, 0 } },
                  { { 0, 0, 0 } } });
    r.push_back({ { { -2, 2, 0 } },
                  { { -1, 2, 0 } },
                  { { -2, 1, 0 } },
                  { { -1, 1, 0 } },
                  { { 0, 1, 0 } },
                  { { -1, 0, 0 } },
                  { { 0, 0, 0 } } });
    return r;
  }
  for (int axis = 0; axis < 3; ++axis)
  {
    for (int sign : { +1, -1 })
    {
      std::vector<Offset> region;
      for (int k = 0; k <= 2; ++k)
      {
        for (int u = -1; u <= 1; ++u)
        {
          for (int v = -1; v <= 1; ++v)
          {
            Offset o{};
            o[axis] = sign * k;
            o[(axis + 1) % 3] = u;
            o[(axis + 2) % 3] = v;
            region.push_back(o);
          }
        }
      }
      r.push_back(region);
    }
  }
  return r;
}

struct Expected
{
  bool                nan{ false };
  double              firstMean{ 0 };  ///< mean of the first acceptable sub-region
  std::vector<double> acceptableMeans; ///< means of all acceptable sub-regions
};

std::vector<Expected>
Reference(const std::vector<double> & f, const std::array<long, 3> & n, unsigned dimension, bool integerSamples)
{
  const auto            regions = Regions(dimension);
  std::vector<Expected> out(f.size());
  const auto            at = [&](long x, long y, long z)
  {
    x = std::min(std::max(x, 0L), n[0] - 1);
    y = std::min(std::max(y, 0L), n[1] - 1);
    z = std::min(std::max(z, 0L), n[2] - 1);
    return f[static_cast<std::size_t>((z * n[1] + y) * n[0] + x)];
  };
  for (long z = 0; z < n[2]; ++z)
  {
    for (long y = 0; y < n[1]; ++y)
    {
      for (long x = 0; x < n[0]; ++x)
      {
        Expected &               e = out[static_cast<std::size_t>((z * n[1] + y) * n[0] + x)];
        std::vector<long double> mean, var;
        long double              spread = 0;
        const double             c = at(x, y, z);
        for (const auto & region : regions)
        {
          long double sum = 0;
          for (const auto & o : region)
          {
            const double v = at(x + o[0], y + o[1], z + o[2]);
            e.nan = e.nan || !std::isfinite(v);
            sum += v;
            spread = std::max(spread, std::fabs(static_cast<long double>(v) - c));
          }
          const long double m = sum / region.size();
          long double       ss = 0;
          for (const auto & o : region)
          {
            const long double d = at(x + o[0], y + o[1], z + o[2]) - m;
            ss += d * d;
          }
          mean.push_back(m);
          var.push_back(ss / region.size());
        }
        if (e.nan)
        {
          continue;
        }
        const long double best = *std::min_element(var.begin(), var.end());
        const long double tol = integerSamples ? 1e-6L : 1e-9L * spread * spread;
        bool              first = true;
        for (std::size_t s = 0; s < var.size(); ++s)
        {
          if (var[s] <= best + tol)
          {
            if (first)
            {
              e.firstMean = static_cast<double>(mean[s]);
              first = false;
            }
            e.acceptableMeans.push_back(static_cast<double>(mean[s]));
          }
        }
      }
    }
  }
  return out;
}

/** Counts output pixels that are not what the reference allows (see the file comment). */
template <typename TImage>
std::size_t
CountMismatches(const TImage * out, const std::vector<Expected> & ref, bool exactChoice, std::string * first = nullptr)
{
  using T = typename TImage::PixelType;
  std::size_t i = 0, bad = 0;
  for (itk::ImageRegionConstIterator<TImage> it(out, out->GetBufferedRegion()); !it.IsAtEnd(); ++it, ++i)
  {
    const double v = static_cast<double>(it.Get());
    bool         ok = false;
    if (ref[i].nan)
    {
      ok = std::isnan(v);
    }
    else if constexpr (std::is_integral<T>::value)
    {
      ok = v == std::floor(ref[i].firstMean + 0.5); // exact arithmetic: the first tied region, rounded
    }
    else if (exactChoice)
    {
      ok = std::fabs(v - ref[i].firstMean) <= std::fabs(ref[i].firstMean) / (1 << 22) + 1e-300;
    }
    else
    {
      for (double m : ref[i].acceptableMeans)
      {
        ok = ok || std::fabs(v - m) <= std::fabs(m) / (1 << 22) + 1e-300;
      }
    }
    if (!ok && bad++ == 0 && first)
    {
      *first =
        "pixel " + std::to_string(i) + ": got " + std::to_string(v) + ", expected " + std::to_string(ref[i].firstMean);
    }
  }
  return bad;
}

template <typename TIn, typename TOut = TIn>
typename itk::CudaRotatingMaskImageFilter<TIn, TOut>::Pointer
MakeOurs(const TIn * input, Mode mode, unsigned iterations = 1)
{
  auto filter = itk::CudaRotatingMaskImageFilter<TIn, TOut>::New();
  filter->SetInput(input);
  filter->SetExecutionMode(mode);
  filter->SetNumberOfIterations(iterations);
  return filter;
}

template <typename TIn, typename TOut = TIn>
typename TOut::Pointer
RunOurs(const TIn * input, Mode mode, unsigned iterations = 1)
{
  auto filter = MakeOurs<TIn, TOut>(input, mode, iterations);
  filter->Update();
  return TakeOutput(filter.GetPointer());
}

template <typename T>
constexpr bool IntegerSamples = std::is_integral<T>::value && sizeof(T) <= 2;

template <typename TIn, typename TOut = TIn>
void
CheckAgainstReference(const TIn * input, Mode mode, const char * what)
{
  auto       ours = RunOurs<TIn, TOut>(input, mode);
  const auto ref =
    Reference(ToVector(input), Extent(input), TIn::ImageDimension, IntegerSamples<typename TIn::PixelType>);
  std::string first;
  EXPECT_EQ(CountMismatches(ours.GetPointer(), ref, IntegerSamples<typename TIn::PixelType>, &first), 0u)
    << what << ", " << itk::CudaPixelTypeName<typename TIn::PixelType>() << " -> "
    << itk::CudaPixelTypeName<typename TOut::PixelType>() << " " << TIn::ImageDimension << "D: " << first;
}

template <unsigned D>
void
CheckAllTypes(const typename itk::Image<float, D>::SizeType & size, Mode mode)
{
  using U8 = itk::Image<unsigned char, D>;
  using S16 = itk::Image<short, D>;
  using U16 = itk::Image<unsigned short, D>;
  using F = itk::Image<float, D>;
  CheckAgainstReference<U8>(EdgeImage<U8>(size, 0, 255, 0.1, 1, 1e3).GetPointer(), mode, "edges");
  CheckAgainstReference<S16>(EdgeImage<S16>(size, -2000, 1500, 0.1, 2, 1e3).GetPointer(), mode, "edges");
  CheckAgainstReference<U16>(EdgeImage<U16>(size, 0, 65535, 0.2, 3, 1e3).GetPointer(), mode, "edges, full range");
  CheckAgainstReference<F>(EdgeImage<F>(size, -1.0, 1.0, 0.1, 4, 1e3).GetPointer(), mode, "edges");
  // few distinct values: many exact ties between sub-regions with different means
  CheckAgainstReference<U8>(RandomImage<U8>(size, 0.0, 3.0, 5).GetPointer(), mode, "ties");
  CheckAgainstReference<S16>(RandomImage<S16>(size, -2.0, 2.0, 6).GetPointer(), mode, "ties");
  CheckAgainstReference<U16>(RandomImage<U16>(size, 0.0, 2.0, 7).GetPointer(), mode, "ties");
  CheckAgainstReference<F>(RandomImage<F>(size, 0.0, 1.0, 8).GetPointer(), mode, "noise");
  // integer inputs to float output
  using F = itk::Image<float, D>;
  CheckAgainstReference<U16, F>(EdgeImage<U16>(size, 0, 4095, 0.1, 9, 1e3).GetPointer(), mode, "edges");
  CheckAgainstReference<U8, F>(RandomImage<U8>(size, 0.0, 3.0, 10).GetPointer(), mode, "ties");
  CheckAgainstReference<S16, F>(EdgeImage<S16>(size, -1000, 1000, 0.1, 11, 1e3).GetPointer(), mode, "edges");
}

/** An image whose value is (a . index) + offset. */
template <typename TImage>
typename TImage::Pointer
Ramp(const typename TImage::SizeType & size, const std::array<int, 3> & a, double offset)
{
  auto image = TImage::New();
  image->SetRegions(size);
  image->Allocate();
  for (itk::ImageRegionIterator<TImage> it(image, image->GetBufferedRegion()); !it.IsAtEnd(); ++it)
  {
    double v = offset;
    for (unsigned d = 0; d < TImage::ImageDimension; ++d)
    {
      v += a[d] * it.GetIndex()[d];
    }
    it.Set(static_cast<typename TImage::PixelType>(v));
  }
  return image;
}

/** Largest |out - in - shift| over pixels at least 2 away from every border. */
template <typename TIn, typename TOut>
double
InteriorShiftError(const TIn * in, const TOut * out, double shift)
{
  double worst = 0;
  auto   region = in->GetLargestPossibleRegion();
  region.ShrinkByRadius(2);
  itk::ImageRegionConstIterator<TOut> ot(out, region);
  for (itk::ImageRegionConstIterator<TIn> it(in, region); !it.IsAtEnd(); ++it, ++ot)
  {
    worst = std::max(worst, std::fabs(static_cast<double>(ot.Get()) - static_cast<double>(it.Get()) - shift));
  }
  return worst;
}

template <typename TIn, typename TOut>
void
CheckRamps(Mode mode)
{
  constexpr unsigned D = TIn::ImageDimension;
  const auto         size = D == 2 ? MakeSize<TIn>({ 11, 10 }) : MakeSize<TIn>({ 9, 8, 7 });
  const bool         integer = std::is_integral<typename TOut::PixelType>::value;
  // {ramp direction, expected shift} with the derivation in the comments
  struct Case
  {
    std::array<int, 3> a;
    double             shift;
  };
  std::vector<Case> cases;
  if (D == 2)
  {
    // f = x: the +x and -x pentagons tie at dispersion 24/49, below the
    // hexagons and the other pentagons (4/7) and the square (2/3); +x comes
    // first: mean x + 9/7.
    cases.push_back({ { { 1, 0, 0 } }, integer ? 1.0 : 9.0 / 7.0 });
    cases.push_back({ { { -1, 0, 0 } }, integer ? -1.0 : -9.0 / 7.0 });
    // f = y: -y (region 1) and +y (region 3) tie; -y comes first: y - 9/7.
    cases.push_back({ { { 0, 1, 0 } }, integer ? -1.0 : -9.0 / 7.0 });
  }
  else
  {
    // f = x: all six half-masks tie at 2/3; +x comes first: x + 1.
    cases.push_back({ { { 1, 0, 0 } }, 1.0 });
    cases.push_back({ { { -1, 0, 0 } }, -1.0 });
    // f = y or z: +x (first) has mean equal to the centre.
    cases.push_back({ { { 0, 1, 0 } }, 0.0 });
    cases.push_back({ { { 0, 0, 1 } }, 0.0 });
  }
  for (const auto & c : cases)
  {
    auto in = Ramp<TIn>(size, c.a, 40.0);
    auto out = RunOurs<TIn, TOut>(in.GetPointer(), mode);
    EXPECT_LE(InteriorShiftError(in.GetPointer(), out.GetPointer(), c.shift), integer ? 0.0 : 1e-5)
      << D << "D ramp (" << c.a[0] << ", " << c.a[1] << ", " << c.a[2] << ")";
  }
}

template <typename TImage>
void
CheckStepsArePreserved(Mode mode)
{
  constexpr unsigned D = TImage::ImageDimension;
  const auto         size = D == 2 ? MakeSize<TImage>({ 16, 14 }) : MakeSize<TImage>({ 12, 10, 9 });
  for (unsigned axis = 0; axis < D; ++axis)
  {
    auto image = TImage::New();
    image->SetRegions(size);
    image->Allocate();
    for (itk::ImageRegionIterator<TImage> it(image, image->GetBufferedRegion()); !it.IsAtEnd(); ++it)
    {
      it.Set(it.GetIndex()[axis] < 5 ? 30 : 200);
    }
    auto out = RunOurs<TImage>(image.GetPointer(), mode);
    EXPECT_EQ(MaxAbsDifference(out.GetPointer(), image.GetPointer()), 0.0) << D << "D step along axis " << axis;
  }
}

// ===========================================================================
// CPU path (runs everywhere, CI included)
// ===========================================================================

TEST(RotatingMaskCpu, MatchesFloat64Reference2D)
{
  CheckAllTypes<2>(MakeSize<itk::Image<float, 2>>({ 41, 29 }), Mode::CPU);
}

TEST(RotatingMaskCpu, MatchesFloat64Reference3D)
{
  CheckAllTypes<3>(MakeSize<itk::Image<float, 3>>({ 19, 15, 9 }), Mode::CPU);
}

TEST(RotatingMaskCpu, WiderTypesMatchReference)
{
  // 32-bit integers and doubles: double-precision arithmetic on the CPU core.
  using I2 = itk::Image<int, 2>;
  using D3 = itk::Image<double, 3>;
  using SC3 = itk::Image<signed char, 3>;
  auto ints = EdgeImage<I2>(MakeSize<I2>({ 25, 20 }), -100000, 100000, 0.1, 12, 1e3);
  auto out = RunOurs<I2>(ints.GetPointer(), Mode::CPU);
  EXPECT_EQ(
    CountMismatches(out.GetPointer(), Reference(ToVector(ints.GetPointer()), Extent(ints.GetPointer()), 2, true), true),
    0u);
  CheckAgainstReference<D3>(
    EdgeImage<D3>(MakeSize<D3>({ 12, 11, 7 }), -5.0, 5.0, 0.1, 13, 1e3).GetPointer(), Mode::CPU, "edges");
  CheckAgainstReference<SC3>(
    RandomImage<SC3>(MakeSize<SC3>({ 12, 11, 7 }), -128.0, 127.0, 14).GetPointer(), Mode::CPU, "noise");
  using F3 = itk::Image<float, 3>;
  using D3out = itk::Image<double, 3>;
  CheckAgainstReference<F3, D3out>(
    EdgeImage<F3>(MakeSize<F3>({ 12, 11, 7 }), -5.0, 5.0, 0.1, 15, 1e3).GetPointer(), Mode::CPU, "edges");
}

TEST(RotatingMaskCpu, RampsShowTheDocumentedTieOrder)
{
  CheckRamps<itk::Image<short, 2>, itk::Image<short, 2>>(Mode::CPU);
  CheckRamps<itk::Image<short, 2>, itk::Image<float, 2>>(Mode::CPU);
  CheckRamps<itk::Image<float, 2>, itk::Image<float, 2>>(Mode::CPU);
  CheckRamps<itk::Image<unsigned short, 3>, itk::Image<unsigned short, 3>>(Mode::CPU);
  CheckRamps<itk::Image<float, 3>, itk::Image<float, 3>>(Mode::CPU);
}

TEST(RotatingMaskCpu, StraightStepsArePreserved)
{
  CheckStepsArePreserved<itk::Image<unsigned char, 2>>(Mode::CPU);
  CheckStepsArePreserved<itk::Image<float, 3>>(Mode::CPU);
  CheckStepsArePreserved<itk::Image<short, 3>>(Mode::CPU);
}

TEST(RotatingMaskCpu, RealImages)
{
  using U2 = itk::Image<unsigned char, 2>;
  auto brain = ReadImage<U2>(ExampleData("BrainProtonDensitySlice.png"));
  CheckAgainstReference<U2>(brain.GetPointer(), Mode::CPU, "BrainProtonDensitySlice");
  using S3 = itk::Image<short, 3>;
  auto           volume = ReadImage<S3>(ExampleData("KmeansTest_T1UCharRaw.nii.gz"));
  auto           roi = itk::RegionOfInterestImageFilter<S3, S3>::New();
  S3::RegionType region;
  region.SetIndex({ { 30, 35, 20 } });
  region.SetSize({ { 40, 36, 12 } });
  roi->SetInput(volume);
  roi->SetRegionOfInterest(region);
  roi->Update();
  CheckAgainstReference<S3>(roi->GetOutput(), Mode::CPU, "KmeansTest_T1UCharRaw crop");
}

TEST(RotatingMaskCpu, IterationsReapplyTheFilter)
{
  using U3 = itk::Image<unsigned short, 3>;
  using F2 = itk::Image<float, 2>;
  auto input = EdgeImage<U3>(MakeSize<U3>({ 15, 12, 8 }), 0, 4000, 0.2, 16, 1e3);
  auto three = RunOurs<U3>(input.GetPointer(), Mode::CPU, 3);
  // against the reference applied three times (exact for integers)
  auto f = ToVector(input.GetPointer());
  for (int i = 0; i < 3; ++i)
  {
    const auto ref = Reference(f, Extent(input.GetPointer()), 3, true);
    for (std::size_t k = 0; k < f.size(); ++k)
    {
      f[k] = std::floor(ref[k].firstMean + 0.5);
    }
  }
  std::size_t i = 0, bad = 0;
  for (itk::ImageRegionConstIterator<U3> it(three, three->GetBufferedRegion()); !it.IsAtEnd(); ++it, ++i)
  {
    bad += static_cast<double>(it.Get()) == f[i] ? 0 : 1;
  }
  EXPECT_EQ(bad, 0u);
  // float: n iterations = n chained filters
  auto fin = EdgeImage<F2>(MakeSize<F2>({ 30, 22 }), 0, 1, 0.2, 17, 1e3);
  auto five = RunOurs<F2>(fin.GetPointer(), Mode::CPU, 5);
  auto chained = RunOurs<F2>(fin.GetPointer(), Mode::CPU);
  for (int k = 1; k < 5; ++k)
  {
    chained = RunOurs<F2>(chained.GetPointer(), Mode::CPU);
  }
  EXPECT_EQ(MaxAbsDifference(five.GetPointer(), chained.GetPointer()), 0.0);
  // a requested part with more than one iteration: the whole image is computed
  auto filter = MakeOurs<U3>(input.GetPointer(), Mode::CPU, 3);
  filter->GetOutput()->SetRequestedRegion(U3::RegionType({ { 2, 3, 1 } }, { { 5, 4, 3 } }));
  filter->GetOutput()->Update();
  EXPECT_EQ(filter->GetOutput()->GetBufferedRegion(), input->GetLargestPossibleRegion());
  EXPECT_EQ(MaxAbsDifference(filter->GetOutput(), three.GetPointer()), 0.0);
}

TEST(RotatingMaskCpu, TinyImagesAndSizeOneAxes)
{
  using U2 = itk::Image<unsigned char, 2>;
  using F3 = itk::Image<float, 3>;
  for (auto size : { MakeSize<U2>({ 1, 1 }), MakeSize<U2>({ 2, 3 }), MakeSize<U2>({ 1, 9 }), MakeSize<U2>({ 7, 1 }) })
  {
    CheckAgainstReference<U2>(RandomImage<U2>(size, 0.0, 255.0, 18).GetPointer(), Mode::CPU, "tiny");
  }
  for (auto size :
       { MakeSize<F3>({ 1, 1, 1 }), MakeSize<F3>({ 3, 1, 2 }), MakeSize<F3>({ 6, 4, 1 }), MakeSize<F3>({ 1, 5, 3 }) })
  {
    CheckAgainstReference<F3>(RandomImage<F3>(size, 0.0, 1.0, 19).GetPointer(), Mode::CPU, "tiny");
  }
}

TEST(RotatingMaskCpu, StreamedPiecesEqualTheWholeImage)
{
  using S3 = itk::Image<short, 3>;
  auto input = EdgeImage<S3>(MakeSize<S3>({ 20, 17, 13 }), -500, 500, 0.2, 20, 1e3);
  auto whole = RunOurs<S3>(input.GetPointer(), Mode::CPU);
  auto filter = MakeOurs<S3>(input.GetPointer(), Mode::CPU);
  auto streamer = itk::StreamingImageFilter<S3, S3>::New();
  streamer->SetInput(filter->GetOutput());
  streamer->SetNumberOfStreamDivisions(4);
  streamer->Update();
  EXPECT_EQ(MaxAbsDifference(streamer->GetOutput(), whole.GetPointer()), 0.0);
}

TEST(RotatingMaskCpu, NonFiniteSamplesPropagate)
{
  using F2 = itk::Image<float, 2>;
  using F3 = itk::Image<float, 3>;
  auto two = RandomImage<F2>(MakeSize<F2>({ 20, 18 }), 0.0, 1.0, 21);
  two->SetPixel({ { 9, 8 } }, NAN);
  auto out2 = RunOurs<F2>(two.GetPointer(), Mode::CPU);
  EXPECT_EQ(CountNonFinite(out2.GetPointer()), 25u); // the 5 x 5 windows that contain it
  for (int dy = -2; dy <= 2; ++dy)
  {
    for (int dx = -2; dx <= 2; ++dx)
    {
      EXPECT_TRUE(std::isnan(out2->GetPixel({ { 9 + dx, 8 + dy } })));
    }
  }
  auto three = RandomImage<F3>(MakeSize<F3>({ 12, 11, 10 }), 0.0, 1.0, 22);
  three->SetPixel({ { 5, 5, 5 } }, std::numeric_limits<float>::infinity());
  auto out3 = RunOurs<F3>(three.GetPointer(), Mode::CPU);
  EXPECT_EQ(CountNonFinite(out3.GetPointer()), 81u); // the union of the six half-masks
  CheckAgainstReference<F3>(three.GetPointer(), Mode::CPU, "infinity");
}

TEST(RotatingMaskCpu, BadInputThrowsAndModes)
{
  using F2 = itk::Image<float, 2>;
  using D2 = itk::Image<double, 2>;
  auto empty = F2::New();
  empty->SetRegions(MakeSize<F2>({ 4, 0 }));
  empty->Allocate();
  try
  {
    RunOurs<F2>(empty.GetPointer(), Mode::CPU);
    ADD_FAILURE() << "empty image accepted";
  }
  catch (const itk::ExceptionObject & e)
  {
    EXPECT_NE(std::string(e.GetDescription()).find("empty"), std::string::npos) << e.GetDescription();
  }
  auto input = RandomImage<F2>(MakeSize<F2>({ 8, 6 }), 0.0, 1.0, 23);
  EXPECT_THROW(RunOurs<F2>(input.GetPointer(), Mode::CPU, 0), itk::ExceptionObject);

  // double pixels are not on the GPU path: automatic runs the CPU core and says why; GPU mode throws
  auto doubles = RandomImage<D2>(MakeSize<D2>({ 8, 6 }), 0.0, 1.0, 24);
  auto filter = MakeOurs<D2>(doubles.GetPointer(), Mode::Automatic);
  filter->Update();
  EXPECT_EQ(filter->GetLastExecutedOn(), itk::CudaExecutedOn::CPU);
  EXPECT_NE(filter->GetLastExecutionReport().Message.find("because"), std::string::npos);
  const std::string why = filter->GetGPUUnsupportedReason();
  EXPECT_TRUE(why.find("double") != std::string::npos || why.find("no CUDA") != std::string::npos) << why;
  EXPECT_THROW(RunOurs<D2>(doubles.GetPointer(), Mode::GPU), itk::ExceptionObject);
}

// ===========================================================================
// GPU path
// ===========================================================================

/** GPU core vs CPU core, device output poisoned with two byte patterns. */
template <typename TIn, typename TOut>
void
CheckGpuCore(const std::array<long, 3> & n, int dimension, int iterations, double lo, double hi, unsigned seed)
{
  cif::ClampedNeighborhoodGeometry g;
  for (int a = 0; a < 3; ++a)
  {
    g.inputSize[a] = g.outputSize[a] = n[a];
  }
  cif::RotatingMaskParameters p;
  p.dimension = dimension;
  p.iterations = iterations;
  const std::size_t                      count = static_cast<std::size_t>(n[0] * n[1] * n[2]);
  std::vector<TIn>                       host(count);
  std::mt19937                           rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  for (std::size_t i = 0; i < count; ++i)
  {
    host[i] = static_cast<TIn>((i / 7) % 3 == 0 ? lo : u(rng)); // flat patches (ties) and noise
  }
  std::vector<TOut> cpu(count);
  cif::RotatingMaskCPU(host.data(), cpu.data(), g, p, 2);
  cif::DeviceBuffer in(count * sizeof(TIn)), out(count * sizeof(TOut));
  in.CopyFromHost(host.data(), count * sizeof(TIn));
  std::vector<TOut> gpu[2];
  for (int k = 0; k < 2; ++k)
  {
    out.FillBytes(k == 0 ? 0x00 : 0xFF);
    cif::RotatingMaskCUDA(static_cast<const TIn *>(in.GetPointer()), static_cast<TOut *>(out.GetPointer()), g, p);
    gpu[k].resize(count);
    out.CopyToHost(gpu[k].data(), count * sizeof(TOut));
  }
  std::size_t unwritten = 0, different = 0;
  double      worst = 0;
  for (std::size_t i = 0; i < count; ++i)
  {
    unwritten += gpu[0][i] == gpu[1][i] ? 0 : 1;
    different += gpu[0][i] == cpu[i] ? 0 : 1;
    worst = std::max(worst, std::fabs(static_cast<double>(gpu[0][i]) - cpu[i]));
  }
  EXPECT_EQ(unwritten, 0u);
  if (!IntegerSamples<TIn> && iterations > 1)
  {
    return; // a near-tie decided differently would spread over iterations; iteration 1 is checked
  }
  if (IntegerSamples<TIn>)
  {
    // the same exact arithmetic: bit for bit
    EXPECT_EQ(different, 0u) << itk::CudaPixelTypeName<TIn>() << " -> " << itk::CudaPixelTypeName<TOut>() << " "
                             << dimension << "D, worst " << worst;
  }
  else
  {
    // double arithmetic (the device may fuse multiply-adds): a different
    // choice only between near-tied sub-regions, which the reference tests bound
    EXPECT_LE(different, count / 1000) << dimension << "D float, worst " << worst;
  }
}

TEST(RotatingMaskGpu, CoreMatchesCpuCore)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  for (int iterations : { 1, 3 })
  {
    CheckGpuCore<unsigned char, unsigned char>({ { 45, 23, 13 } }, 3, iterations, 0, 255, 1);
    CheckGpuCore<short, short>({ { 45, 23, 13 } }, 3, iterations, -30000, 30000, 2);
    CheckGpuCore<unsigned short, unsigned short>({ { 45, 23, 13 } }, 3, iterations, 0, 65535, 3);
    CheckGpuCore<unsigned short, float>({ { 45, 23, 13 } }, 3, iterations, 0, 4095, 4);
    CheckGpuCore<float, float>({ { 45, 23, 13 } }, 3, iterations, -1, 1, 5);
    CheckGpuCore<unsigned char, float>({ { 70, 41, 1 } }, 2, iterations, 0, 255, 6);
    CheckGpuCore<short, float>({ { 70, 41, 1 } }, 2, iterations, -3000, 3000, 7);
    CheckGpuCore<unsigned short, unsigned short>({ { 70, 41, 1 } }, 2, iterations, 0, 65535, 8);
    CheckGpuCore<float, float>({ { 70, 41, 1 } }, 2, iterations, 0, 100, 9);
    // 2D masks slice by slice in a volume, and tiny extents
    CheckGpuCore<unsigned char, unsigned char>({ { 20, 9, 6 } }, 2, iterations, 0, 255, 10);
    CheckGpuCore<short, short>({ { 1, 1, 1 } }, 3, iterations, 0, 100, 11);
    CheckGpuCore<short, short>({ { 3, 2, 5 } }, 3, iterations, 0, 100, 12);
  }
}

TEST(RotatingMaskGpu, FilterMatchesReference)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  CheckAllTypes<2>(MakeSize<itk::Image<float, 2>>({ 67, 35 }), Mode::GPU);
  CheckAllTypes<3>(MakeSize<itk::Image<float, 3>>({ 37, 21, 11 }), Mode::GPU);
  CheckRamps<itk::Image<short, 2>, itk::Image<float, 2>>(Mode::GPU);
  CheckRamps<itk::Image<unsigned short, 3>, itk::Image<unsigned short, 3>>(Mode::GPU);
  CheckRamps<itk::Image<float, 3>, itk::Image<float, 3>>(Mode::GPU);
  CheckStepsArePreserved<itk::Image<unsigned char, 2>>(Mode::GPU);
  CheckStepsArePreserved<itk::Image<float, 3>>(Mode::GPU);
  using U2 = itk::Image<unsigned char, 2>;
  CheckAgainstReference<U2>(ReadImage<U2>(ExampleData("BrainProtonDensitySlice.png")).GetPointer(), Mode::GPU, "brain");
}

TEST(RotatingMaskGpu, IterationsStayOnTheDeviceWithCudaImages)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  using C3 = itk::CudaFilterImage<unsigned short, 3>;
  using U3 = itk::Image<unsigned short, 3>;
  auto plain = EdgeImage<U3>(MakeSize<U3>({ 40, 30, 12 }), 0, 4000, 0.2, 25, 1e3);
  auto input = C3::New();
  input->SetRegions(plain->GetLargestPossibleRegion());
  input->Allocate();
  std::copy(plain->GetBufferPointer(),
            plain->GetBufferPointer() + plain->GetBufferedRegion().GetNumberOfPixels(),
            input->GetBufferPointer());
  auto filter = MakeOurs<C3>(input.GetPointer(), Mode::GPU, 5);
  cif::Runtime::ResetTransferCounters();
  filter->Update();
  const auto counters = cif::Runtime::GetTransferCounters();
  EXPECT_EQ(counters.HostToDeviceCount, 1u);
  EXPECT_EQ(counters.DeviceToHostCount, 0u);
  EXPECT_NE(filter->GetLastExecutionReport().Message.find("5 iterations on the device"), std::string::npos);
  auto cpu = RunOurs<U3>(plain.GetPointer(), Mode::CPU, 5);
  EXPECT_EQ(MaxAbsDifference(static_cast<const C3 *>(filter->GetOutput()), cpu.GetPointer()), 0.0);
}

TEST(RotatingMaskGpu, NonFiniteSamplesPropagate)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  using F3 = itk::Image<float, 3>;
  auto three = RandomImage<F3>(MakeSize<F3>({ 40, 11, 10 }), 0.0, 1.0, 26);
  three->SetPixel({ { 33, 5, 5 } }, NAN);
  three->SetPixel({ { 5, 5, 5 } }, -std::numeric_limits<float>::infinity());
  auto out = RunOurs<F3>(three.GetPointer(), Mode::GPU);
  EXPECT_EQ(CountNonFinite(out.GetPointer()), 2 * 81u);
  CheckAgainstReference<F3>(three.GetPointer(), Mode::GPU, "non-finite");
}

TEST(RotatingMaskGpu, OutOfMemoryFallsBackToCpuOrThrows)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  using F3 = itk::Image<float, 3>;
  auto input = RandomImage<F3>(MakeSize<F3>({ 40, 40, 20 }), 0.0, 1.0, 27);
  auto expected = RunOurs<F3>(input.GetPointer(), Mode::CPU);
  auto filter = MakeOurs<F3>(input.GetPointer(), Mode::Automatic);
  ExpectOutOfMemoryFallsBackToCpuOrThrows(filter.GetPointer(), expected.GetPointer());
}

} // namespace
