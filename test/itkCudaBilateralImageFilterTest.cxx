/*=========================================================================
 *  Tests of CudaBilateralImageFilter (CPU and GPU paths).
 *
 *  References:
 *  - an independent long-double evaluation of the definition written here
 *    (unnormalised domain Gaussian of the physical offsets, exact range
 *    Gaussian on |d| < 4 RangeSigma, sum h f / sum h, clamped neighbours);
 *  - ITK's itk::BilateralImageFilter, with 10^6 range samples (its lookup
 *    table then moves the result by at most 2 sigma (exp(16e-6) - 1)) and
 *    with the default 100 samples (bound 2 sigma (exp(0.16) - 1)).
 *
 *  Tolerances (stated in the class documentation):
 *  - CPU vs the float64 reference: 1e-9 x (input range + |value|); float
 *    outputs additionally one float rounding; integer outputs: the
 *    truncation of a value within that distance;
 *  - GPU vs the CPU core: 1e-4 RangeSigma + 2^-22 |value| (integer outputs:
 *    the truncation of a value within that distance);
 *  - ours vs ITK: 2 RangeSigma (exp(16 / samples) - 1) + 2^-22 |value|, plus
 *    one unit for integer outputs.
 *=========================================================================*/
#include "CudaImageFiltersTestUtilities.h"
#include "cif/Bilateral.h"
#include "itkBilateralImageFilter.h"
#include "itkCudaBilateralImageFilter.h"
#include "itkCudaFilterImage.h"
#include "itkGaussianImageSource.h"
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
// Independent reference.
struct Settings
{
  std::array<double, 3> domainSigma{ { 1.0, 1.0, 1.0 } };
  std::array<int, 3>    radius{ { 1, 1, 1 } }; ///< used as given (computed by the caller when automatic)
  double                rangeSigma{ 20.0 };
};

/** The definition in long double: g = sum h f / sum h over the clamped box. */
std::vector<double>
ReferenceBilateral(const std::vector<double> &   f,
                   const std::array<long, 3> &   n,
                   const std::array<double, 3> & spacing,
                   const Settings &              s)
{
  std::vector<double> out(f.size());
  const auto          at = [&](long x, long y, long z)
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
        const double c = at(x, y, z);
        long double  num = 0, den = 0;
        for (int kz = -s.radius[2]; kz <= s.radius[2]; ++kz)
        {
          for (int ky = -s.radius[1]; ky <= s.radius[1]; ++ky)
          {
            for (int kx = -s.radius[0]; kx <= s.radius[0]; ++kx)
            {
              const int   k[3] = { kx, ky, kz };
              long double e = 0;
              for (int a = 0; a < 3; ++a)
              {
                const long double t = k[a] * static_cast<long double>(spacing[a]) / s.domainSigma[a];
                e += t * t / 2;
              }
              const double v = at(x + kx, y + ky, z + kz);
              const double d = v - c;
              if (std::fabs(d) < 4.0 * s.rangeSigma)
              {
                const long double h =
                  std::exp(-e) * std::exp(-static_cast<long double>(d) * d / (2.0L * s.rangeSigma * s.rangeSigma));
                num += h * v;
                den += h;
              }
            }
          }
        }
        out[static_cast<std::size_t>((z * n[1] + y) * n[0] + x)] = static_cast<double>(num / den);
      }
    }
  }
  return out;
}

template <typename TImage>
std::array<double, 3>
SpacingOf(const TImage * image)
{
  std::array<double, 3> h{ { 1.0, 1.0, 1.0 } };
  for (unsigned a = 0; a < TImage::ImageDimension; ++a)
  {
    h[a] = image->GetSpacing()[a];
  }
  return h;
}

/** Truncation toward zero into T's range, as the filter documents for integer outputs. */
template <typename T>
double
TruncateTo(double v)
{
  const double lo = static_cast<double>(std::numeric_limits<T>::lowest());
  const double hi = static_cast<double>(std::numeric_limits<T>::max());
  return std::trunc(std::min(hi, std::max(lo, v)));
}

/** Every output pixel must be the reference within tol(r) = absTol + relTol |r| (integer
 * outputs: the truncation of some value within that distance). Returns the number of failures. */
template <typename TImage>
std::size_t
CountMismatches(const TImage *              out,
                const std::vector<double> & ref,
                double                      absTol,
                double                      relTol,
                double *                    worst = nullptr)
{
  using T = typename TImage::PixelType;
  std::size_t i = 0, bad = 0;
  double      w = 0;
  for (itk::ImageRegionConstIterator<TImage> it(out, out->GetBufferedRegion()); !it.IsAtEnd(); ++it, ++i)
  {
    const double v = static_cast<double>(it.Get());
    const double r = ref[i];
    if (std::isnan(r) || std::isnan(v))
    {
      bad += (std::isnan(r) && std::isnan(v)) ? 0 : 1;
      continue;
    }
    const double tol = absTol + relTol * std::fabs(r);
    if constexpr (std::is_integral<T>::value)
    {
      const bool ok = v >= TruncateTo<T>(r - tol) && v <= TruncateTo<T>(r + tol);
      bad += ok ? 0 : 1;
      w = std::max(w, ok ? 0.0 : std::fabs(v - TruncateTo<T>(r)));
    }
    else
    {
      w = std::max(w, std::fabs(v - r));
      bad += std::fabs(v - r) <= tol ? 0 : 1;
    }
  }
  if (worst)
  {
    *worst = w;
  }
  return bad;
}

/** `input` and the settings on ITK's filter or ours (its subclass). */
template <typename TIn, typename TOut>
void
ApplySettings(itk::BilateralImageFilter<TIn, TOut> * filter, const TIn * input, const Settings & s, bool automatic)
{
  typename itk::BilateralImageFilter<TIn, TOut>::ArrayType sigma;
  typename itk::BilateralImageFilter<TIn, TOut>::SizeType  radius;
  for (unsigned a = 0; a < TIn::ImageDimension; ++a)
  {
    sigma[a] = s.domainSigma[a];
    radius[a] = static_cast<itk::SizeValueType>(s.radius[a]);
  }
  filter->SetInput(input);
  filter->SetDomainSigma(sigma);
  filter->SetRangeSigma(s.rangeSigma);
  filter->SetAutomaticKernelSize(automatic);
  filter->SetRadius(radius);
}

template <typename TIn, typename TOut = TIn>
typename itk::CudaBilateralImageFilter<TIn, TOut>::Pointer
MakeOurs(const TIn * input, const Settings & s, Mode mode, bool automatic = false, unsigned iterations = 1)
{
  auto filter = itk::CudaBilateralImageFilter<TIn, TOut>::New();
  ApplySettings<TIn, TOut>(filter.GetPointer(), input, s, automatic);
  filter->SetExecutionMode(mode);
  filter->SetNumberOfIterations(iterations);
  return filter;
}

template <typename TIn, typename TOut = TIn>
typename TOut::Pointer
RunOurs(const TIn * input, const Settings & s, Mode mode, bool automatic = false, unsigned iterations = 1)
{
  auto filter = MakeOurs<TIn, TOut>(input, s, mode, automatic, iterations);
  filter->Update();
  return TakeOutput(filter.GetPointer());
}

template <typename TIn, typename TOut = TIn>
typename TOut::Pointer
RunITK(const TIn * input, const Settings & s, unsigned long samples, bool automatic = false)
{
  auto filter = itk::BilateralImageFilter<TIn, TOut>::New();
  ApplySettings<TIn, TOut>(filter.GetPointer(), input, s, automatic);
  filter->SetNumberOfRangeGaussianSamples(samples);
  filter->Update();
  return TakeOutput(filter.GetPointer());
}

/** Bound on ITK's lookup-table deviation from the exact filter (see the class documentation). */
double
ItkTableBound(double rangeSigma, double samples)
{
  return 2.0 * rangeSigma * (std::exp(16.0 / samples) - 1.0);
}

constexpr double kCpuRelTol = 1e-9;
constexpr double kGpuSigmaTol = 1e-4;
constexpr double kFloatRel = 1.0 / (1 << 22);

/** CPU vs the independent reference for one pixel type and dimension. */
template <typename TImage>
void
CheckCpuAgainstReference(const typename TImage::SizeType & size, double lo, double hi, const Settings & s)
{
  auto         input = EdgeImage<TImage>(size, lo, hi, 0.06, 11);
  const double range = DynamicRange(input.GetPointer());
  auto         ours = RunOurs<TImage>(input.GetPointer(), s, Mode::CPU);
  const auto   ref =
    ReferenceBilateral(ToVector(input.GetPointer()), Extent(input.GetPointer()), SpacingOf(input.GetPointer()), s);
  double       worst = 0;
  const double relTol = std::is_integral<typename TImage::PixelType>::value ? kCpuRelTol : kFloatRel;
  EXPECT_EQ(CountMismatches(ours.GetPointer(), ref, kCpuRelTol * range, relTol, &worst), 0u)
    << "worst " << worst << " for " << itk::CudaPixelTypeName<typename TImage::PixelType>() << " "
    << TImage::ImageDimension << "D";
}

// ===========================================================================
// CPU path (runs everywhere, CI included)
// ===========================================================================

TEST(BilateralCpu, DomainKernelIsItksNormalisedGaussian)
{
  // ITK builds its kernel with GaussianImageSource at the input's spacing and
  // origin and divides by the sum; the core's weights must be the same.
  using G = itk::Image<double, 3>;
  const int                              radius[3] = { 2, 3, 1 };
  const double                           sigma[3] = { 1.3, 0.8, 2.5 };
  const double                           spacing[3] = { 0.7, 0.5, 2.0 };
  const auto                             ours = cif::BilateralDomainWeights(radius, sigma, spacing);
  auto                                   source = itk::GaussianImageSource<G>::New();
  G::SizeType                            size;
  G::SpacingType                         h;
  G::PointType                           origin;
  itk::GaussianImageSource<G>::ArrayType mean, sd;
  for (int a = 0; a < 3; ++a)
  {
    size[a] = 2 * radius[a] + 1;
    h[a] = spacing[a];
    origin[a] = 10.0 * (a + 1);
    mean[a] = spacing[a] * radius[a] + origin[a];
    sd[a] = sigma[a];
  }
  source->SetSize(size);
  source->SetSpacing(h);
  source->SetOrigin(origin);
  source->SetScale(1.0);
  source->SetNormalized(true);
  source->SetSigma(sd);
  source->SetMean(mean);
  source->Update();
  auto   itk = ToVector(source->GetOutput());
  double sum = 0;
  for (double v : itk)
  {
    sum += v;
  }
  ASSERT_EQ(itk.size(), ours.size());
  for (std::size_t i = 0; i < itk.size(); ++i)
  {
    EXPECT_NEAR(ours[i], itk[i] / sum, 1e-12 * itk[i] / sum + 1e-15) << i;
  }
}

TEST(BilateralCpu, MatchesFloat64Reference2D)
{
  Settings s;
  s.domainSigma = { { 1.5, 1.0, 1.0 } };
  s.radius = { { 3, 2, 0 } };
  s.rangeSigma = 25.0;
  CheckCpuAgainstReference<itk::Image<unsigned char, 2>>(MakeSize<itk::Image<unsigned char, 2>>({ 37, 23 }), 0, 255, s);
  CheckCpuAgainstReference<itk::Image<short, 2>>(MakeSize<itk::Image<short, 2>>({ 37, 23 }), -300, 200, s);
  s.rangeSigma = 900.0;
  CheckCpuAgainstReference<itk::Image<unsigned short, 2>>(
    MakeSize<itk::Image<unsigned short, 2>>({ 37, 23 }), 0, 9000, s);
  s.rangeSigma = 0.3;
  CheckCpuAgainstReference<itk::Image<float, 2>>(MakeSize<itk::Image<float, 2>>({ 37, 23 }), -1.0, 2.0, s);
}

TEST(BilateralCpu, MatchesFloat64Reference3D)
{
  Settings s;
  s.domainSigma = { { 1.0, 1.4, 0.9 } };
  s.radius = { { 2, 2, 2 } };
  s.rangeSigma = 30.0;
  using U8 = itk::Image<unsigned char, 3>;
  using S16 = itk::Image<short, 3>;
  using U16 = itk::Image<unsigned short, 3>;
  using F = itk::Image<float, 3>;
  CheckCpuAgainstReference<U8>(MakeSize<U8>({ 19, 14, 9 }), 0, 255, s);
  CheckCpuAgainstReference<S16>(MakeSize<S16>({ 19, 14, 9 }), -500, 500, s);
  s.rangeSigma = 400.0;
  CheckCpuAgainstReference<U16>(MakeSize<U16>({ 19, 14, 9 }), 100, 4095, s);
  s.radius = { { 1, 3, 2 } };
  s.rangeSigma = 0.25;
  CheckCpuAgainstReference<F>(MakeSize<F>({ 19, 14, 9 }), -1.0, 1.0, s);
}

TEST(BilateralCpu, IntegerToFloatOutputMatchesReference)
{
  using In = itk::Image<unsigned short, 3>;
  using Out = itk::Image<float, 3>;
  Settings s;
  s.radius = { { 2, 1, 1 } };
  s.rangeSigma = 150.0;
  auto       input = EdgeImage<In>(MakeSize<In>({ 21, 13, 7 }), 0, 2000, 0.06, 3);
  auto       ours = RunOurs<In, Out>(input.GetPointer(), s, Mode::CPU);
  const auto ref =
    ReferenceBilateral(ToVector(input.GetPointer()), Extent(input.GetPointer()), SpacingOf(input.GetPointer()), s);
  EXPECT_EQ(CountMismatches(ours.GetPointer(), ref, 1e-9 * 2000, kFloatRel), 0u);
}

TEST(BilateralCpu, MatchesItkWithFineLookupTableAnisotropic)
{
  // With 10^6 range samples ITK's table is within 3.2e-5 sigma of the exact
  // Gaussian: this checks the domain kernel (physical units, per-axis sigma,
  // automatic radius), the cutoff and the boundary against ITK itself.
  using F3 = itk::Image<float, 3>;
  using S3 = itk::Image<short, 3>;
  Settings s;
  s.domainSigma = { { 1.2, 0.9, 2.6 } };
  s.rangeSigma = 40.0;
  auto            input = EdgeImage<F3>(MakeSize<F3>({ 17, 15, 8 }), 0, 400, 0.06, 5);
  F3::SpacingType spacing;
  spacing[0] = 1.0;
  spacing[1] = 0.6;
  spacing[2] = 2.5;
  input->SetSpacing(spacing);
  auto filter = MakeOurs<F3>(input.GetPointer(), s, Mode::CPU, true);
  filter->Update();
  const auto radius = filter->GetKernelRadius();
  EXPECT_EQ(radius[0], 3u); // ceil(2.5 * 1.2 / 1.0)
  EXPECT_EQ(radius[1], 4u); // ceil(2.5 * 0.9 / 0.6)
  EXPECT_EQ(radius[2], 3u); // ceil(2.5 * 2.6 / 2.5)
  auto itk = RunITK<F3>(input.GetPointer(), s, 1000000, true);
  EXPECT_LE(MaxAbsDifference(filter->GetOutput(), itk.GetPointer()),
            ItkTableBound(s.rangeSigma, 1e6) + kFloatRel * 400);

  auto ints = EdgeImage<S3>(MakeSize<S3>({ 17, 15, 8 }), -200, 200, 0.06, 6);
  ints->SetSpacing(spacing);
  s.rangeSigma = 25.0;
  auto ours = RunOurs<S3>(ints.GetPointer(), s, Mode::CPU, true);
  EXPECT_LE(MaxAbsDifference(ours.GetPointer(), RunITK<S3>(ints.GetPointer(), s, 1000000, true).GetPointer()), 1.0);
  // explicit radius
  s.radius = { { 1, 2, 0 } };
  ours = RunOurs<S3>(ints.GetPointer(), s, Mode::CPU, false);
  EXPECT_LE(MaxAbsDifference(ours.GetPointer(), RunITK<S3>(ints.GetPointer(), s, 1000000, false).GetPointer()), 1.0);
}

TEST(BilateralCpu, DiffersFromItkDefaultTableWithinTheQuantisationBound)
{
  using F2 = itk::Image<float, 2>;
  using U2 = itk::Image<unsigned char, 2>;
  Settings s;
  s.domainSigma = { { 1.5, 1.5, 1.0 } };
  s.rangeSigma = 20.0;
  auto         input = EdgeImage<F2>(MakeSize<F2>({ 45, 38 }), 0, 255, 0.06, 7);
  auto         ours = RunOurs<F2>(input.GetPointer(), s, Mode::CPU, true);
  auto         itk = RunITK<F2>(input.GetPointer(), s, 100, true);
  const double diff = MaxAbsDifference(ours.GetPointer(), itk.GetPointer());
  EXPECT_LE(diff, ItkTableBound(s.rangeSigma, 100) + kFloatRel * 255);
  EXPECT_GT(diff, 1e-3); // the table's quantisation is visible: the test is not vacuous

  auto bytes = EdgeImage<U2>(MakeSize<U2>({ 45, 38 }), 0, 255, 0.06, 8);
  EXPECT_LE(MaxAbsDifference(RunOurs<U2>(bytes.GetPointer(), s, Mode::CPU, true).GetPointer(),
                             RunITK<U2>(bytes.GetPointer(), s, 100, true).GetPointer()),
            ItkTableBound(s.rangeSigma, 100) + 1.0);
}

TEST(BilateralCpu, RealImages)
{
  // 2D: BrainProtonDensitySlice (uchar), against ITK (fine table) and the reference.
  using U2 = itk::Image<unsigned char, 2>;
  auto     brain = ReadImage<U2>(ExampleData("BrainProtonDensitySlice.png"));
  Settings s;
  s.domainSigma = { { 2.0, 2.0, 1.0 } };
  s.rangeSigma = 15.0;
  auto ours = RunOurs<U2>(brain.GetPointer(), s, Mode::CPU, true);
  EXPECT_LE(MaxAbsDifference(ours.GetPointer(), RunITK<U2>(brain.GetPointer(), s, 1000000, true).GetPointer()), 1.0);
  s.radius = { { 5, 5, 0 } };
  const auto ref =
    ReferenceBilateral(ToVector(brain.GetPointer()), Extent(brain.GetPointer()), SpacingOf(brain.GetPointer()), s);
  EXPECT_EQ(CountMismatches(ours.GetPointer(), ref, kCpuRelTol * 255, kCpuRelTol), 0u);

  // 3D: a crop of KmeansTest_T1UCharRaw (short, spacing 2 x 2 x 3 mm) to float.
  using S3 = itk::Image<short, 3>;
  using F3 = itk::Image<float, 3>;
  auto           volume = ReadImage<S3>(ExampleData("KmeansTest_T1UCharRaw.nii.gz"));
  auto           roi = itk::RegionOfInterestImageFilter<S3, S3>::New();
  S3::RegionType region;
  region.SetIndex({ { 40, 40, 25 } });
  region.SetSize({ { 30, 26, 8 } });
  roi->SetInput(volume);
  roi->SetRegionOfInterest(region);
  roi->Update();
  Settings v;
  v.domainSigma = { { 3.0, 3.0, 4.0 } }; // mm: radius ceil(2.5 sigma / spacing) = 4, 4, 4
  v.rangeSigma = 10.0;
  auto vol = RunOurs<S3, F3>(roi->GetOutput(), v, Mode::CPU, true);
  EXPECT_LE(MaxAbsDifference(vol.GetPointer(), RunITK<S3, F3>(roi->GetOutput(), v, 1000000, true).GetPointer()),
            ItkTableBound(v.rangeSigma, 1e6) + kFloatRel * 1000);
}

TEST(BilateralCpu, IterationsReapplyTheFilter)
{
  using U3 = itk::Image<unsigned short, 3>;
  using F3 = itk::Image<float, 3>;
  Settings s;
  s.radius = { { 1, 1, 1 } };
  s.rangeSigma = 200.0;
  auto input = EdgeImage<U3>(MakeSize<U3>({ 16, 12, 7 }), 0, 4000, 0.06, 9);
  // three iterations = three chained filters (exactly, same core)
  auto three = RunOurs<U3>(input.GetPointer(), s, Mode::CPU, false, 3);
  auto once = RunOurs<U3>(input.GetPointer(), s, Mode::CPU);
  auto twice = RunOurs<U3>(once.GetPointer(), s, Mode::CPU);
  auto thrice = RunOurs<U3>(twice.GetPointer(), s, Mode::CPU);
  EXPECT_EQ(MaxAbsDifference(three.GetPointer(), thrice.GetPointer()), 0.0);
  EXPECT_GT(MaxAbsDifference(three.GetPointer(), once.GetPointer()), 0.0);
  // with float output: the reference applied twice / four times
  for (unsigned n : { 2u, 4u })
  {
    auto ours = RunOurs<U3, F3>(input.GetPointer(), s, Mode::CPU, false, n);
    auto ref = ToVector(input.GetPointer());
    for (unsigned i = 0; i < n; ++i)
    {
      ref = ReferenceBilateral(ref, Extent(input.GetPointer()), SpacingOf(input.GetPointer()), s);
      for (double & v : ref)
      {
        v = static_cast<float>(v);
      }
    }
    EXPECT_EQ(CountMismatches(ours.GetPointer(), ref, 1e-9 * 4000, 4 * kFloatRel), 0u) << n << " iterations";
  }
  // more than one iteration computes the whole image even when a part is requested
  auto filter = MakeOurs<U3>(input.GetPointer(), s, Mode::CPU, false, 3);
  filter->GetOutput()->SetRequestedRegion(U3::RegionType({ { 2, 3, 1 } }, { { 5, 4, 3 } }));
  filter->GetOutput()->Update();
  EXPECT_EQ(filter->GetOutput()->GetBufferedRegion(), input->GetLargestPossibleRegion());
  EXPECT_EQ(MaxAbsDifference(filter->GetOutput(), three.GetPointer()), 0.0);
}

TEST(BilateralCpu, TinyImagesRadiusLargerThanImageAndSizeOneAxes)
{
  using F3 = itk::Image<float, 3>;
  using U2 = itk::Image<unsigned char, 2>;
  Settings s;
  s.domainSigma = { { 2.0, 1.0, 3.0 } };
  s.radius = { { 6, 5, 4 } };
  s.rangeSigma = 30.0;
  for (auto size :
       { MakeSize<F3>({ 1, 1, 1 }), MakeSize<F3>({ 3, 2, 1 }), MakeSize<F3>({ 1, 7, 2 }), MakeSize<F3>({ 5, 1, 4 }) })
  {
    auto       input = RandomImage<F3>(size, 0.0, 100.0, 12);
    auto       ours = RunOurs<F3>(input.GetPointer(), s, Mode::CPU);
    const auto ref =
      ReferenceBilateral(ToVector(input.GetPointer()), Extent(input.GetPointer()), SpacingOf(input.GetPointer()), s);
    EXPECT_EQ(CountMismatches(ours.GetPointer(), ref, 1e-9 * 100, kFloatRel), 0u) << size;
    EXPECT_LE(MaxAbsDifference(ours.GetPointer(), RunITK<F3>(input.GetPointer(), s, 1000000).GetPointer()),
              ItkTableBound(s.rangeSigma, 1e6) + kFloatRel * 100)
      << size;
  }
  auto one = RandomImage<U2>(MakeSize<U2>({ 1, 9 }), 0.0, 255.0, 13);
  EXPECT_LE(MaxAbsDifference(RunOurs<U2>(one.GetPointer(), s, Mode::CPU).GetPointer(),
                             RunITK<U2>(one.GetPointer(), s, 1000000).GetPointer()),
            1.0);
}

TEST(BilateralCpu, StreamedPiecesEqualTheWholeImage)
{
  using F3 = itk::Image<float, 3>;
  Settings s;
  s.radius = { { 2, 1, 2 } };
  s.rangeSigma = 50.0;
  auto input = EdgeImage<F3>(MakeSize<F3>({ 20, 17, 12 }), 0, 300, 0.06, 14);
  auto whole = RunOurs<F3>(input.GetPointer(), s, Mode::CPU);
  auto filter = MakeOurs<F3>(input.GetPointer(), s, Mode::CPU);
  auto streamer = itk::StreamingImageFilter<F3, F3>::New();
  streamer->SetInput(filter->GetOutput());
  streamer->SetNumberOfStreamDivisions(5);
  streamer->Update();
  EXPECT_EQ(MaxAbsDifference(streamer->GetOutput(), whole.GetPointer()), 0.0);
}

TEST(BilateralCpu, BadParametersAndEmptyInputThrow)
{
  using F2 = itk::Image<float, 2>;
  auto     input = RandomImage<F2>(MakeSize<F2>({ 8, 6 }), 0.0, 1.0, 15);
  Settings s;
  for (double bad : { 0.0, -1.0, std::nan(""), std::numeric_limits<double>::infinity() })
  {
    s.rangeSigma = bad;
    auto filter = MakeOurs<F2>(input.GetPointer(), s, Mode::CPU);
    try
    {
      filter->Update();
      ADD_FAILURE() << "RangeSigma " << bad << " accepted";
    }
    catch (const itk::ExceptionObject & e)
    {
      EXPECT_NE(std::string(e.GetDescription()).find("range_sigma"), std::string::npos) << e.GetDescription();
    }
  }
  s.rangeSigma = 1.0;
  s.domainSigma = { { 0.0, 1.0, 1.0 } };
  EXPECT_THROW(MakeOurs<F2>(input.GetPointer(), s, Mode::CPU, true)->Update(), itk::ExceptionObject);
  s.domainSigma = { { 1.0, 1.0, 1.0 } };
  EXPECT_THROW(MakeOurs<F2>(input.GetPointer(), s, Mode::CPU, false, 0)->Update(), itk::ExceptionObject);
  // more taps than the filter accepts
  s.radius = { { 2000, 2000, 0 } };
  EXPECT_THROW(MakeOurs<F2>(input.GetPointer(), s, Mode::CPU)->Update(), itk::ExceptionObject);
  s.radius = { { 1, 1, 0 } };
  auto mu = MakeOurs<F2>(input.GetPointer(), s, Mode::CPU, true);
  mu->SetDomainMu(-1.0);
  EXPECT_THROW(mu->Update(), itk::ExceptionObject);
  // empty input
  auto empty = F2::New();
  empty->SetRegions(MakeSize<F2>({ 0, 5 }));
  empty->Allocate();
  try
  {
    RunOurs<F2>(empty.GetPointer(), s, Mode::CPU);
    ADD_FAILURE() << "empty image accepted";
  }
  catch (const itk::ExceptionObject & e)
  {
    EXPECT_NE(std::string(e.GetDescription()).find("empty"), std::string::npos) << e.GetDescription();
  }
}

TEST(BilateralCpu, NonFiniteValuesBehaveAsInItk)
{
  // A NaN or infinite neighbour fails the range cutoff and is ignored; a
  // non-finite centre gives NaN.
  using F2 = itk::Image<float, 2>;
  auto input = EdgeImage<F2>(MakeSize<F2>({ 20, 16 }), 0, 100, 0.06, 16);
  input->SetPixel({ { 5, 5 } }, NAN);
  input->SetPixel({ { 12, 9 } }, std::numeric_limits<float>::infinity());
  Settings s;
  s.radius = { { 2, 2, 0 } };
  s.rangeSigma = 20.0;
  auto ours = RunOurs<F2>(input.GetPointer(), s, Mode::CPU);
  EXPECT_EQ(CountNonFinite(ours.GetPointer()), 2u);
  EXPECT_TRUE(std::isnan(ours->GetPixel({ { 5, 5 } })));
  EXPECT_TRUE(std::isnan(ours->GetPixel({ { 12, 9 } })));
  EXPECT_LE(MaxAbsDifference(ours.GetPointer(), RunITK<F2>(input.GetPointer(), s, 1000000).GetPointer()),
            ItkTableBound(s.rangeSigma, 1e6) + kFloatRel * 100);
}

/** A pixel pair the description does not list but the CPU core is written
 * for: the exact core runs (not ITK's table), said in the report, and
 * matches the independent reference (iterated in the output type; integer
 * outputs are not iterated here, where one truncation near an integer
 * would move the next iteration). */
template <typename TIn, typename TOut>
void
CheckPairOutsideTheDescription(const typename TIn::SizeType & size, double lo, double hi, unsigned iterations)
{
  Settings s;
  s.radius = { { 2, 1, 1 } };
  s.rangeSigma = 0.2 * (hi - lo);
  auto input = EdgeImage<TIn>(size, lo, hi, 0.06, 23);
  auto filter = MakeOurs<TIn, TOut>(input.GetPointer(), s, Mode::Automatic, false, iterations);
  filter->Update();
  const std::string report = filter->GetLastExecutionReport().Message;
  EXPECT_EQ(filter->GetLastExecutedOn(), itk::CudaExecutedOn::CPU) << report;
  EXPECT_NE(report.find("the module's CPU core (exact range Gaussian)"), std::string::npos) << report;
  auto ref = ToVector(input.GetPointer());
  for (unsigned i = 0; i < iterations; ++i)
  {
    ref = ReferenceBilateral(ref, Extent(input.GetPointer()), SpacingOf(input.GetPointer()), s);
    for (double & v : ref)
    {
      v = static_cast<double>(static_cast<typename TOut::PixelType>(v)); // each iteration's output type
    }
  }
  const double relTol = std::is_same<typename TOut::PixelType, float>::value ? 4 * kFloatRel : kCpuRelTol;
  double       worst = 0;
  EXPECT_EQ(CountMismatches(filter->GetOutput(), ref, kCpuRelTol * (hi - lo), relTol, &worst), 0u)
    << "worst " << worst << " for " << itk::CudaPixelTypeName<typename TIn::PixelType>() << " to "
    << itk::CudaPixelTypeName<typename TOut::PixelType>() << ", " << iterations << " iterations";
  // GPU mode refuses the pair
  EXPECT_THROW((MakeOurs<TIn, TOut>(input.GetPointer(), s, Mode::GPU)->Update()), itk::ExceptionObject);
}

TEST(BilateralCpu, PairsOnlyTheCpuCoreIsWrittenForRunItExactly)
{
  using I2 = itk::Image<int, 2>;
  using SC3 = itk::Image<signed char, 3>;
  using UI2 = itk::Image<unsigned int, 2>;
  using UC3 = itk::Image<unsigned char, 3>;
  using D3 = itk::Image<double, 3>;
  using F2 = itk::Image<float, 2>;
  using S2 = itk::Image<short, 2>;
  using D2 = itk::Image<double, 2>;
  CheckPairOutsideTheDescription<I2, I2>(MakeSize<I2>({ 31, 22 }), -70000, 90000, 1);
  CheckPairOutsideTheDescription<I2, F2>(MakeSize<I2>({ 31, 22 }), -70000, 90000, 2);
  CheckPairOutsideTheDescription<SC3, SC3>(MakeSize<SC3>({ 13, 11, 6 }), -120, 120, 1);
  CheckPairOutsideTheDescription<UI2, F2>(MakeSize<UI2>({ 25, 19 }), 0, 3e6, 1);
  CheckPairOutsideTheDescription<UC3, D3>(MakeSize<UC3>({ 17, 12, 7 }), 0, 255, 1);
  CheckPairOutsideTheDescription<S2, D2>(MakeSize<S2>({ 23, 17 }), -900, 700, 3);
}

TEST(BilateralCpu, ReportsProgressFromTheCore)
{
  // the described pair and a pair only the core is written for: the core's
  // progress (once per iteration) reaches ITK's ProgressEvent, ending at 1
  using S3 = itk::Image<short, 3>;
  using I3 = itk::Image<int, 3>;
  Settings s;
  s.rangeSigma = 40.0;
  auto short3 = RandomImage<S3>(MakeSize<S3>({ 24, 20, 16 }), 0.0, 200.0, 31);
  auto int3 = RandomImage<I3>(MakeSize<I3>({ 24, 20, 16 }), 0.0, 200.0, 31);
  const std::vector<float> described = UpdateCollectingProgress(MakeOurs<S3>(short3.GetPointer(), s, Mode::CPU, false, 4));
  const std::vector<float> other = UpdateCollectingProgress(MakeOurs<I3>(int3.GetPointer(), s, Mode::CPU, false, 4));
  for (const auto & seen : { described, other })
  {
    const auto between = std::count_if(seen.begin(), seen.end(), [](float f) { return f > 0.0f && f < 1.0f; });
    EXPECT_GE(between, 3) << "progress events: " << seen.size();
    ASSERT_FALSE(seen.empty());
    EXPECT_FLOAT_EQ(seen.back(), 1.0f);
  }
}

TEST(BilateralCpu, TypesOutsideTheCoreRunItksFilter)
{
  // 4D images and `long` pixels: ITK's own filter, said in the report; GPU mode throws.
  using L2 = itk::Image<long, 2>;
  using F4 = itk::Image<float, 4>;
  Settings s;
  s.rangeSigma = 30.0;
  auto longs = RandomImage<L2>(MakeSize<L2>({ 12, 9 }), 0.0, 200.0, 17);
  auto filter = MakeOurs<L2>(longs.GetPointer(), s, Mode::Automatic, true, 2);
  filter->Update();
  EXPECT_EQ(filter->GetLastExecutedOn(), itk::CudaExecutedOn::CPU);
  EXPECT_NE(filter->GetLastExecutionReport().Message.find("ITK's BilateralImageFilter"), std::string::npos)
    << filter->GetLastExecutionReport().Message;
  auto itk1 = RunITK<L2>(longs.GetPointer(), s, 100, true);
  auto itk2 = RunITK<L2>(itk1.GetPointer(), s, 100, true);
  EXPECT_EQ(MaxAbsDifference(filter->GetOutput(), itk2.GetPointer()), 0.0);
  EXPECT_THROW(MakeOurs<L2>(longs.GetPointer(), s, Mode::GPU, true)->Update(), itk::ExceptionObject);

  auto four = RandomImage<F4>(MakeSize<F4>({ 6, 5, 4, 3 }), 0.0, 100.0, 18);
  s.domainSigma = { { 0.8, 0.8, 0.8 } };
  auto f4 = itk::CudaBilateralImageFilter<F4, F4>::New();
  f4->SetInput(four);
  f4->SetDomainSigma(0.8);
  f4->SetRangeSigma(30.0);
  f4->Update();
  EXPECT_NE(f4->GetLastExecutionReport().Message.find("dimensions"), std::string::npos)
    << f4->GetLastExecutionReport().Message;
  auto i4 = itk::BilateralImageFilter<F4, F4>::New();
  i4->SetInput(four);
  i4->SetDomainSigma(0.8);
  i4->SetRangeSigma(30.0);
  i4->Update();
  EXPECT_EQ(MaxAbsDifference(f4->GetOutput(), i4->GetOutput()), 0.0);
  EXPECT_FALSE(f4->GetGPUUnsupportedReason().empty());
}

TEST(BilateralCpu, ExecutionModesAndReasons)
{
  using D2 = itk::Image<double, 2>;
  using U2 = itk::Image<unsigned short, 2>;
  Settings s;
  auto     doubles = RandomImage<D2>(MakeSize<D2>({ 10, 8 }), 0.0, 100.0, 19);
  auto     filter = MakeOurs<D2>(doubles.GetPointer(), s, Mode::Automatic);
  filter->Update();
  EXPECT_EQ(filter->GetLastExecutedOn(), itk::CudaExecutedOn::CPU);
  EXPECT_NE(filter->GetLastExecutionReport().Message.find("module's CPU core"), std::string::npos);
  // double pixels are not on the GPU path: the reason says so (or that there is no CUDA)
  const std::string why = filter->GetGPUUnsupportedReason();
  EXPECT_TRUE(why.find("double") != std::string::npos || why.find("no CUDA") != std::string::npos) << why;
  EXPECT_THROW(MakeOurs<D2>(doubles.GetPointer(), s, Mode::GPU)->Update(), itk::ExceptionObject);

  auto shorts = RandomImage<U2>(MakeSize<U2>({ 10, 8 }), 0.0, 1000.0, 20);
  auto f = MakeOurs<U2>(shorts.GetPointer(), s, Mode::Automatic);
  EXPECT_TRUE(f->GetGPUUnsupportedReason().empty() || !cif::BilateralCUDAIsCompiled());
  f->Update();
  if (!cif::Runtime::IsDeviceAvailable())
  {
    EXPECT_EQ(f->GetLastExecutedOn(), itk::CudaExecutedOn::CPU);
    EXPECT_NE(f->GetLastExecutionReport().Message.find("because"), std::string::npos);
    EXPECT_THROW(MakeOurs<U2>(shorts.GetPointer(), s, Mode::GPU)->Update(), itk::ExceptionObject);
  }
}

// ===========================================================================
// GPU path
// ===========================================================================

/** GPU core vs CPU core on device buffers poisoned with two different byte
 * patterns: equal results for both prove that every output was written. */
template <typename TIn, typename TOut>
void
CheckGpuCoreAgainstCpu(const std::array<long, 3> &      n,
                       double                           lo,
                       double                           hi,
                       const cif::BilateralParameters & p,
                       const std::string &              expectKernel)
{
  cif::ClampedNeighborhoodGeometry g;
  for (int a = 0; a < 3; ++a)
  {
    g.inputSize[a] = g.outputSize[a] = n[a];
  }
  const std::size_t                      count = static_cast<std::size_t>(n[0] * n[1] * n[2]);
  std::vector<TIn>                       host(count);
  std::mt19937                           rng(21);
  std::uniform_real_distribution<double> noise(lo, hi);
  for (std::size_t i = 0; i < count; ++i)
  {
    // blocks with noise: edges and flat-ish regions
    const double base =
      (i % static_cast<std::size_t>(n[0]) < static_cast<std::size_t>(n[0] / 2)) ? lo : 0.5 * (lo + hi);
    host[i] = static_cast<TIn>(std::min(hi, base + 0.3 * (noise(rng) - lo)));
  }
  // the CPU core in double precision: the centre of the tolerance band
  std::vector<double> exact(count);
  cif::BilateralCPU(host.data(), exact.data(), g, p, 2);
  cif::DeviceBuffer in(count * sizeof(TIn)), out(count * sizeof(TOut));
  in.CopyFromHost(host.data(), count * sizeof(TIn));
  std::vector<TOut> gpu[2];
  std::string       kernel;
  for (int k = 0; k < 2; ++k)
  {
    out.FillBytes(k == 0 ? 0x00 : 0xFF);
    kernel = cif::BilateralCUDA(static_cast<const TIn *>(in.GetPointer()), static_cast<TOut *>(out.GetPointer()), g, p);
    gpu[k].resize(count);
    out.CopyToHost(gpu[k].data(), count * sizeof(TOut));
  }
  EXPECT_NE(kernel.find(expectKernel), std::string::npos) << kernel;
  std::size_t unwritten = 0, bad = 0;
  for (std::size_t i = 0; i < count; ++i)
  {
    const bool same = gpu[0][i] == gpu[1][i] || (std::isnan(double(gpu[0][i])) && std::isnan(double(gpu[1][i])));
    unwritten += same ? 0 : 1;
    const double tol = kGpuSigmaTol * p.rangeSigma + kFloatRel * std::fabs(exact[i]);
    const double v = static_cast<double>(gpu[0][i]);
    bool         ok;
    if constexpr (std::is_integral<TOut>::value)
    {
      ok = v >= TruncateTo<TOut>(exact[i] - tol) && v <= TruncateTo<TOut>(exact[i] + tol);
    }
    else
    {
      ok = std::fabs(v - exact[i]) <= tol;
    }
    bad += ok ? 0 : 1;
  }
  EXPECT_EQ(unwritten, 0u) << kernel;
  EXPECT_EQ(bad, 0u) << itk::CudaPixelTypeName<TIn>() << " -> " << itk::CudaPixelTypeName<TOut>() << ", " << kernel;
}

cif::BilateralParameters
Parameters(int rx, int ry, int rz, double rangeSigma, int iterations = 1)
{
  cif::BilateralParameters p;
  p.radius[0] = rx;
  p.radius[1] = ry;
  p.radius[2] = rz;
  const double sigma[3] = { 1.2, 1.0, 1.5 }, spacing[3] = { 1.0, 1.0, 1.0 };
  p.domainWeights = cif::BilateralDomainWeights(p.radius, sigma, spacing);
  p.rangeSigma = rangeSigma;
  p.rangeCutoff = 4.0 * rangeSigma;
  p.iterations = iterations;
  return p;
}

TEST(BilateralGpu, CoreMatchesCpuCoreForAllTypesAndRadii)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  const std::array<long, 3> v3{ { 37, 21, 11 } }, v2{ { 70, 45, 1 } };
  for (int r : { 1, 2, 3 })
  {
    CheckGpuCoreAgainstCpu<unsigned char, unsigned char>(v3, 0, 255, Parameters(r, r, r, 20.0), "unrolled");
    CheckGpuCoreAgainstCpu<short, short>(v3, -1000, 1000, Parameters(r, r, r, 150.0), "unrolled");
    CheckGpuCoreAgainstCpu<unsigned short, unsigned short>(v3, 0, 4095, Parameters(r, r, r, 300.0), "unrolled");
    CheckGpuCoreAgainstCpu<float, float>(v3, -1, 1, Parameters(r, r, r, 0.2), "unrolled");
    CheckGpuCoreAgainstCpu<unsigned short, float>(v3, 0, 60000, Parameters(r, r, r, 5000.0), "unrolled");
    CheckGpuCoreAgainstCpu<unsigned char, float>(v2, 0, 255, Parameters(r, r, 0, 25.0), "unrolled");
    CheckGpuCoreAgainstCpu<short, float>(v2, -3000, 3000, Parameters(r, r, 0, 500.0), "unrolled");
    CheckGpuCoreAgainstCpu<float, float>(v2, 0, 100, Parameters(r, r, 0, 10.0), "unrolled");
  }
  // run-time radius (not unrolled), anisotropic
  CheckGpuCoreAgainstCpu<unsigned short, unsigned short>(v3, 0, 4095, Parameters(2, 1, 3, 300.0), "shared-memory tile");
  CheckGpuCoreAgainstCpu<float, float>(v3, 0, 1, Parameters(4, 4, 4, 0.3), "shared-memory tile");
  CheckGpuCoreAgainstCpu<unsigned char, unsigned char>(v2, 0, 255, Parameters(7, 5, 0, 30.0), "shared-memory tile");
  // tiny volumes and radius larger than the image
  CheckGpuCoreAgainstCpu<float, float>({ { 1, 1, 1 } }, 0, 1, Parameters(2, 2, 2, 0.3), "shared-memory tile");
  CheckGpuCoreAgainstCpu<short, short>({ { 3, 2, 5 } }, 0, 100, Parameters(6, 6, 6, 30.0), "shared-memory tile");
}

TEST(BilateralGpu, LargeRadiiUseTheGlobalMemoryKernel)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  // more taps than the constant buffer holds
  CheckGpuCoreAgainstCpu<float, float>({ { 14, 12, 11 } }, 0, 1, Parameters(11, 11, 11, 0.3), "constant-memory");
  // few taps but a tile wider than shared memory
  CheckGpuCoreAgainstCpu<unsigned short, unsigned short>(
    { { 50, 20, 1 } }, 0, 4000, Parameters(4000, 0, 0, 300.0), "shared-memory tile larger");
}

TEST(BilateralGpu, IterationsStayOnTheDevice)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  CheckGpuCoreAgainstCpu<float, float>({ { 33, 20, 9 } }, 0, 1, Parameters(2, 2, 2, 0.3, 3), "3 iterations");
  CheckGpuCoreAgainstCpu<unsigned char, float>({ { 33, 20, 9 } }, 0, 255, Parameters(1, 1, 1, 30.0, 2), "2 iterations");
  // through the filter with CudaFilterImage input and output: one upload, no download before the host asks
  using C3 = itk::CudaFilterImage<unsigned short, 3>;
  using U3 = itk::Image<unsigned short, 3>;
  auto plain = EdgeImage<U3>(MakeSize<U3>({ 40, 30, 12 }), 0, 4000, 0.06, 22);
  auto input = C3::New();
  input->SetRegions(plain->GetLargestPossibleRegion());
  input->Allocate();
  std::copy(plain->GetBufferPointer(),
            plain->GetBufferPointer() + plain->GetBufferedRegion().GetNumberOfPixels(),
            input->GetBufferPointer());
  Settings s;
  s.radius = { { 2, 2, 2 } };
  s.rangeSigma = 250.0;
  auto filter = MakeOurs<C3>(input.GetPointer(), s, Mode::GPU, false, 5);
  cif::Runtime::ResetTransferCounters();
  filter->Update();
  const auto counters = cif::Runtime::GetTransferCounters();
  EXPECT_EQ(counters.HostToDeviceCount, 1u);
  EXPECT_EQ(counters.DeviceToHostCount, 0u);
  EXPECT_EQ(filter->GetLastExecutedOn(), itk::CudaExecutedOn::GPU);
  EXPECT_NE(filter->GetLastExecutionReport().Message.find("5 iterations on the device"), std::string::npos);
  auto cpu = RunOurs<U3>(plain.GetPointer(), s, Mode::CPU, false, 5);
  // five integer iterations: truncation differences of one unit may grow by one per iteration
  EXPECT_LE(MaxAbsDifference(static_cast<const C3 *>(filter->GetOutput()), cpu.GetPointer()), 5.0);
}

TEST(BilateralGpu, FilterMatchesItkAndCpu)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  using F3 = itk::Image<float, 3>;
  using U2 = itk::Image<unsigned char, 2>;
  Settings s;
  s.domainSigma = { { 1.2, 0.9, 2.6 } };
  s.rangeSigma = 40.0;
  auto            input = EdgeImage<F3>(MakeSize<F3>({ 33, 25, 14 }), 0, 400, 0.06, 23);
  F3::SpacingType spacing;
  spacing[0] = 1.0;
  spacing[1] = 0.6;
  spacing[2] = 2.5;
  input->SetSpacing(spacing);
  auto filter = MakeOurs<F3>(input.GetPointer(), s, Mode::GPU, true);
  filter->Update();
  EXPECT_EQ(filter->GetLastExecutedOn(), itk::CudaExecutedOn::GPU);
  EXPECT_LE(MaxAbsDifference(filter->GetOutput(), RunITK<F3>(input.GetPointer(), s, 1000000, true).GetPointer()),
            ItkTableBound(s.rangeSigma, 1e6) + kGpuSigmaTol * s.rangeSigma + kFloatRel * 400);
  auto brain = ReadImage<U2>(ExampleData("BrainProtonDensitySlice.png"));
  s.domainSigma = { { 2.0, 2.0, 1.0 } };
  s.rangeSigma = 15.0;
  EXPECT_LE(MaxAbsDifference(RunOurs<U2>(brain.GetPointer(), s, Mode::GPU, true).GetPointer(),
                             RunOurs<U2>(brain.GetPointer(), s, Mode::CPU, true).GetPointer()),
            1.0);
  // a streamed sub-region on the GPU equals the whole image
  auto streamed = MakeOurs<F3>(input.GetPointer(), s, Mode::GPU, true);
  auto streamer = itk::StreamingImageFilter<F3, F3>::New();
  streamer->SetInput(streamed->GetOutput());
  streamer->SetNumberOfStreamDivisions(3);
  streamer->Update();
  EXPECT_EQ(MaxAbsDifference(streamer->GetOutput(), RunOurs<F3>(input.GetPointer(), s, Mode::GPU, true).GetPointer()),
            0.0);
}

TEST(BilateralGpu, NonFiniteValuesAsOnTheCpu)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  using F2 = itk::Image<float, 2>;
  auto input = EdgeImage<F2>(MakeSize<F2>({ 40, 30 }), 0, 100, 0.06, 24);
  input->SetPixel({ { 5, 5 } }, NAN);
  input->SetPixel({ { 20, 9 } }, -std::numeric_limits<float>::infinity());
  Settings s;
  s.radius = { { 2, 2, 0 } };
  s.rangeSigma = 20.0;
  auto gpu = RunOurs<F2>(input.GetPointer(), s, Mode::GPU);
  auto cpu = RunOurs<F2>(input.GetPointer(), s, Mode::CPU);
  EXPECT_EQ(CountNonFinite(gpu.GetPointer()), 2u);
  EXPECT_LE(MaxAbsDifference(gpu.GetPointer(), cpu.GetPointer()), kGpuSigmaTol * 20.0 + kFloatRel * 100);
}

TEST(BilateralGpu, OutOfMemoryFallsBackToCpuOrThrows)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  using F3 = itk::Image<float, 3>;
  auto     input = RandomImage<F3>(MakeSize<F3>({ 40, 40, 20 }), 0.0, 1.0, 25);
  Settings s;
  s.rangeSigma = 0.3;
  auto expected = RunOurs<F3>(input.GetPointer(), s, Mode::CPU, false, 2);
  auto filter = MakeOurs<F3>(input.GetPointer(), s, Mode::Automatic, false, 2);
  ExpectOutOfMemoryFallsBackToCpuOrThrows(filter.GetPointer(), expected.GetPointer());
}

} // namespace
