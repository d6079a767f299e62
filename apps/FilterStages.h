/*=========================================================================
 *  CudaImageFilters: the stages of the filtering and segmentation
 *  subcommands (median, bilateral, rotating-mask, threshold, segment): how
 *  each filter is set up from the command line, and what --verify compares
 *  each stage's result with.
 *=========================================================================*/
#ifndef FilterStages_h
#define FilterStages_h

#include "FilterCommon.h"

#include "itkBilateralImageFilter.h"
#include "itkBinaryThresholdImageFilter.h"
#include "itkCudaBilateralImageFilter.h"
#include "itkCudaMedianImageFilter.h"
#include "itkCudaPackedMaskIO.h"
#include "itkCudaRotatingMaskImageFilter.h"
#include "itkMedianImageFilter.h"
#include "itkMultiThreaderBase.h"
#include "itksys/SystemTools.hxx"

#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <limits>
#include <mutex>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace cif
{
namespace tool
{

/** What --verify found for one stage. */
struct StageCheck
{
  bool        Checked{ true }; ///< false: a comparison reported for information only
  bool        Passed{ true };
  std::string Line; ///< what was compared, and the result
};

/** Prints "verify: LINE: passed|FAILED|reported, not checked" on stdout. */
void
PrintStageCheck(const StageCheck & check);

/** The exit status of a list of checks (prints an error line for the first
 * failed one). */
int
StageChecksStatus(const std::vector<StageCheck> & checks);

/** A plain itk::Image copy of an image's largest possible region (host
 * pixels; a CudaFilterImage is synchronised through GetBufferPointer()). The
 * references of --verify run on such copies, disconnected from the pipeline
 * under test. */
template <typename T, unsigned int D>
typename itk::Image<T, D>::Pointer
ToPlainImage(const itk::Image<T, D> * image)
{
  auto copy = itk::Image<T, D>::New();
  copy->CopyInformation(image);
  copy->SetRegions(image->GetLargestPossibleRegion());
  copy->Allocate();
  const T *         source = image->GetBufferPointer();
  const std::size_t count = image->GetLargestPossibleRegion().GetNumberOfPixels();
  std::copy(source, source + count, copy->GetBufferPointer());
  return copy;
}

/** "1 iteration", "3 iterations". */
std::string
IterationsToString(unsigned int iterations);

// ---------------------------------------------------------------------------
// The smoothing filters.
// ---------------------------------------------------------------------------

template <SmoothingKind K, typename TInputImage, typename TOutputImage>
struct SmoothingFilterFor;
template <typename TInputImage, typename TOutputImage>
struct SmoothingFilterFor<SmoothingKind::Median, TInputImage, TOutputImage>
{
  using Type = itk::CudaMedianImageFilter<TInputImage, TOutputImage>;
};
template <typename TInputImage, typename TOutputImage>
struct SmoothingFilterFor<SmoothingKind::Bilateral, TInputImage, TOutputImage>
{
  using Type = itk::CudaBilateralImageFilter<TInputImage, TOutputImage>;
};
template <typename TInputImage, typename TOutputImage>
struct SmoothingFilterFor<SmoothingKind::RotatingMask, TInputImage, TOutputImage>
{
  using Type = itk::CudaRotatingMaskImageFilter<TInputImage, TOutputImage>;
};

/** --radius onto ITK's MedianImageFilter (and so CudaMedianImageFilter). */
template <typename TInputImage, typename TOutputImage>
void
ConfigureMedian(itk::MedianImageFilter<TInputImage, TOutputImage> * filter, const SmoothingSettings & settings)
{
  typename TInputImage::SizeType radius;
  for (unsigned int a = 0; a < TInputImage::ImageDimension; ++a)
  {
    radius[a] = static_cast<itk::SizeValueType>(settings.RadiusAlong(a));
  }
  filter->SetRadius(radius);
}

/** --domain-sigma, --range-sigma and --radius (else ITK's automatic size)
 * onto ITK's BilateralImageFilter (and so CudaBilateralImageFilter). */
template <typename TInputImage, typename TOutputImage>
void
ConfigureBilateral(itk::BilateralImageFilter<TInputImage, TOutputImage> * filter, const SmoothingSettings & settings)
{
  using FilterType = itk::BilateralImageFilter<TInputImage, TOutputImage>;
  constexpr unsigned int         D = TInputImage::ImageDimension;
  typename FilterType::ArrayType sigma;
  for (unsigned int a = 0; a < D; ++a)
  {
    sigma[a] = settings.DomainSigmaAlong(a);
  }
  filter->SetDomainSigma(sigma);
  filter->SetRangeSigma(settings.RangeSigma);
  if (!settings.Radius.empty())
  {
    typename FilterType::SizeType radius;
    for (unsigned int a = 0; a < D; ++a)
    {
      radius[a] = static_cast<itk::SizeValueType>(settings.RadiusAlong(a));
    }
    filter->SetAutomaticKernelSize(false);
    filter->SetRadius(radius);
  }
}

/** The module's filter of kind K, set up from the settings. */
template <SmoothingKind K, typename TInputImage, typename TOutputImage>
typename SmoothingFilterFor<K, TInputImage, TOutputImage>::Type::Pointer
MakeSmoothingFilter(const SmoothingSettings & settings, itk::CudaExecutionMode mode)
{
  auto filter = SmoothingFilterFor<K, TInputImage, TOutputImage>::Type::New();
  filter->SetExecutionMode(mode);
  if constexpr (K == SmoothingKind::Median)
  {
    ConfigureMedian(filter.GetPointer(), settings);
    filter->SetGPUKernel(static_cast<itk::CudaMedianKernel>(settings.MedianKernel));
  }
  else if constexpr (K == SmoothingKind::Bilateral)
  {
    ConfigureBilateral(filter.GetPointer(), settings);
    filter->SetNumberOfIterations(settings.Iterations);
  }
  else
  {
    filter->SetNumberOfIterations(settings.Iterations);
  }
  return filter;
}

/** The parameters of the filter: "radius 2x2" (median), "domain sigma 2,2
 * (radius 5x5, automatic), range sigma 20, 1 iteration" (bilateral), "5x5
 * mask (9 sub-regions), 1 iteration" (rotating mask). */
template <SmoothingKind K, typename TFilter>
std::string
DescribeSmoothing(const TFilter * filter, const SmoothingSettings & settings)
{
  constexpr unsigned int D = TFilter::ImageDimension;
  std::ostringstream     text;
  if constexpr (K == SmoothingKind::Median)
  {
    (void)filter;
    text << "radius " << PerAxisToString(settings.Radius, D);
  }
  else if constexpr (K == SmoothingKind::Bilateral)
  {
    text << "domain sigma " << PerAxisToString(settings.DomainSigma, D, ",") << " (radius ";
    try
    {
      text << SizeToString(filter->GetKernelRadius());
    }
    catch (const itk::ExceptionObject &)
    {
      text << "unknown";
    }
    text << (settings.Radius.empty() ? ", automatic" : "") << "), range sigma " << settings.RangeSigmaText << ", "
         << IterationsToString(settings.Iterations);
  }
  else
  {
    (void)filter;
    text << (D == 2 ? "5x5 mask (9" : "5x5x5 mask (6") << " sub-regions), " << IterationsToString(settings.Iterations);
  }
  return text.str();
}

// ---------------------------------------------------------------------------
// References for --verify: FactorylessReference<ITK's filter> (ToolCommon.h).
// ---------------------------------------------------------------------------

/** Updates a reference filter of --verify; ITK exceptions become RuntimeFailure. */
void
UpdateReference(itk::ProcessObject * filter, const std::string & name);

/** Throws RuntimeFailure when `result` (named `what`) does not have the
 * size of `expected`. */
template <typename TImageA, typename TImageB>
void
CheckSameSize(const TImageA * result, const TImageB * expected, const std::string & what)
{
  const auto size = result->GetLargestPossibleRegion().GetSize();
  const auto expectedSize = expected->GetLargestPossibleRegion().GetSize();
  if (size != expectedSize)
  {
    throw RuntimeFailure("--verify: " + what + " has size " + SizeToString(size) + ", not " +
                         SizeToString(expectedSize));
  }
}

/** Median: identical to itk::MedianImageFilter with the same radius
 * (CudaMedianImageFilter is exact; the real images have no NaN, where ITK's
 * result is unspecified). */
template <typename T, unsigned int D>
StageCheck
CheckMedianStage(const itk::Image<T, D> *  input,
                 const itk::Image<T, D> *  result,
                 const SmoothingSettings & settings,
                 const std::string &       what)
{
  using ImageType = itk::Image<T, D>;
  auto reference = FactorylessReference<itk::MedianImageFilter<ImageType, ImageType>>::New();
  ConfigureMedian(reference.GetPointer(), settings);
  reference->SetInput(input);
  UpdateReference(reference, "ITK's MedianImageFilter");
  CheckSameSize(result, reference->GetOutput(), what);
  const double       difference = LargestDifference<ImageType>(result, reference->GetOutput());
  StageCheck         check;
  std::ostringstream line;
  line << "largest |" << what << " - itk::MedianImageFilter| is " << difference << " (they must be identical)";
  check.Passed = difference == 0.0;
  check.Line = line.str();
  return check;
}

/** 2 sigma (exp(16 / samples) - 1): how far ITK's table of range Gaussian
 * samples moves its result from the exact filter (class documentation of
 * CudaBilateralImageFilter). */
inline double
BilateralTableBound(double rangeSigma, double samples)
{
  return 2.0 * rangeSigma * (std::exp(16.0 / samples) - 1.0);
}

/** Range samples of ITK's bilateral filter in --verify. */
constexpr unsigned long BilateralReferenceSamples = 1000000;
/** The GPU's single-precision bound against the CPU core, in range sigmas
 * (class documentation; it also covers the CPU core's 1e-9 of the range). */
constexpr double BilateralDeviceTolerance = 1e-4;

/** Largest |value| of an image. */
template <typename TImage>
double
LargestMagnitude(const TImage * image)
{
  const auto * pixels = image->GetBufferPointer();
  const auto   count = image->GetBufferedRegion().GetNumberOfPixels();
  double       largest = 0.0;
  for (itk::SizeValueType i = 0; i < count; ++i)
  {
    const double value = std::fabs(static_cast<double>(pixels[i]));
    if (std::isfinite(value))
    {
      largest = std::max(largest, value);
    }
  }
  return largest;
}

/** Bilateral, one iteration: within the documented tolerance of
 * itk::BilateralImageFilter with 10^6 range samples, where ITK's table is
 * nearly exact: 2 sigma (exp(16e-6) - 1) + 1e-4 sigma + 2^-22 max |value|,
 * plus one unit for integer pixels (truncation). More iterations: ITK's
 * filter has none, so the result is compared with the module's CPU core
 * for the same iterations and the difference is reported, not checked. */
template <typename T, unsigned int D>
StageCheck
CheckBilateralStage(const itk::Image<T, D> *  input,
                    const itk::Image<T, D> *  result,
                    const SmoothingSettings & settings,
                    const std::string &       what)
{
  using ImageType = itk::Image<T, D>;
  StageCheck         check;
  std::ostringstream line;
  line << std::setprecision(3);
  if (settings.Iterations == 1)
  {
    auto reference = FactorylessReference<itk::BilateralImageFilter<ImageType, ImageType>>::New();
    ConfigureBilateral(reference.GetPointer(), settings);
    reference->SetNumberOfRangeGaussianSamples(BilateralReferenceSamples);
    reference->SetInput(input);
    UpdateReference(reference, "ITK's BilateralImageFilter");
    CheckSameSize(result, reference->GetOutput(), what);
    const double sigma = settings.RangeSigma;
    const double table = BilateralTableBound(sigma, static_cast<double>(BilateralReferenceSamples));
    const double device = BilateralDeviceTolerance * sigma;
    const double rounding = std::ldexp(LargestMagnitude(reference->GetOutput()), -22);
    const double truncation = std::is_integral<T>::value ? 1.0 : 0.0;
    const double limit = table + device + rounding + truncation;
    const double difference = LargestDifference<ImageType>(result, reference->GetOutput());
    line << "largest |" << what << " - itk::BilateralImageFilter with 10^6 range samples| is " << difference
         << " (limit " << limit << " = ITK's table " << table << " + " << BilateralDeviceTolerance
         << " range sigma + 2^-22 max |value|" << (truncation > 0.0 ? " + 1 for integer truncation" : "") << ")";
    check.Passed = difference <= limit;
  }
  else
  {
    auto core = itk::CudaBilateralImageFilter<ImageType, ImageType>::New();
    ConfigureBilateral(core.GetPointer(), settings);
    core->SetNumberOfIterations(settings.Iterations);
    core->SetExecutionMode(itk::CudaExecutionMode::CPU);
    core->SetInput(input);
    UpdateReference(core, "the bilateral filter's CPU core");
    CheckSameSize(result, core->GetOutput(), what);
    const double      difference = LargestDifference<ImageType>(result, core->GetOutput());
    const T *         a = result->GetBufferPointer();
    const T *         b = core->GetOutput()->GetBufferPointer();
    const std::size_t count = result->GetLargestPossibleRegion().GetNumberOfPixels();
    std::size_t       differing = 0;
    for (std::size_t i = 0; i < count; ++i)
    {
      differing +=
        (a[i] == b[i] || (std::isnan(static_cast<double>(a[i])) && std::isnan(static_cast<double>(b[i])))) ? 0 : 1;
    }
    line << "with " << IterationsToString(settings.Iterations) << ", largest |" << what
         << " - the module's CPU core| is " << difference << " (" << differing << " of " << count
         << " voxels differ; ITK's filter has no iterations, and one-unit truncation differences can grow from one "
            "iteration to the next, so this is reported, not checked)";
    check.Checked = false;
  }
  check.Line = line.str();
  return check;
}

/** The sub-regions of the rotating mask as (dx, dy, dz) offsets, in the
 * order of the class documentation of CudaRotatingMaskImageFilter (typed
 * here from that text: nine regions in 2D, six in 3D). */
using MaskOffset = std::array<int, 3>;
const std::vector<std::vector<MaskOffset>> &
RotatingMaskSubRegions(unsigned int dimension);

/** Index of voxel (x, y, z) clamped to a grid of size n (zero-flux Neumann). */
inline std::size_t
ClampedIndex(long x, long y, long z, const std::array<long, 3> & n)
{
  x = std::min(std::max(x, 0L), n[0] - 1);
  y = std::min(std::max(y, 0L), n[1] - 1);
  z = std::min(std::max(z, 0L), n[2] - 1);
  return static_cast<std::size_t>((z * n[1] + y) * n[0] + x);
}

/** floor(a / b) for b > 0. */
inline long long
FloorDivide(long long a, long long b)
{
  const long long q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

/** One pass of the rotating mask on integer pixels, exactly: sums and sums
 * of squares in 64-bit integers, dispersions compared cross-multiplied
 * ((N_a Q_a - S_a^2) N_b^2 < (N_b Q_b - S_b^2) N_a^2; at most 2.3e15 for
 * 16-bit data), the first of tied regions, floor(mean + 1/2). */
template <typename T>
void
RotatingMaskIntegerPass(const T * in, T * out, const std::array<long, 3> & n, unsigned int dimension)
{
  const auto & regions = RotatingMaskSubRegions(dimension);
  const auto   rows = static_cast<itk::SizeValueType>(n[1] * n[2]);
  auto         threader = itk::MultiThreaderBase::New();
  threader->ParallelizeArray(
    0,
    rows,
    [&](itk::SizeValueType row)
    {
      const long y = static_cast<long>(row) % n[1];
      const long z = static_cast<long>(row) / n[1];
      for (long x = 0; x < n[0]; ++x)
      {
        bool      found = false;
        long long bestNumerator = 0, bestCount = 1, bestSum = 0;
        for (const auto & region : regions)
        {
          long long sum = 0, squares = 0;
          for (const auto & o : region)
          {
            const long long v = in[ClampedIndex(x + o[0], y + o[1], z + o[2], n)];
            sum += v;
            squares += v * v;
          }
          const long long count = static_cast<long long>(region.size());
          const long long numerator = count * squares - sum * sum; // count^2 x dispersion
          if (!found || numerator * (bestCount * bestCount) < bestNumerator * (count * count))
          {
            found = true;
            bestNumerator = numerator;
            bestCount = count;
            bestSum = sum;
          }
        }
        long long value = FloorDivide(2 * bestSum + bestCount, 2 * bestCount);
        value = std::min<long long>(std::max<long long>(value, std::numeric_limits<T>::lowest()),
                                    std::numeric_limits<T>::max());
        out[(z * n[1] + y) * n[0] + x] = static_cast<T>(value);
      }
    },
    nullptr);
}

/** Float pixels, one pass: the number of voxels of `result` that are not,
 * within 2^-22 relative (plus 1e-15 of the centre's and the spread's
 * magnitude), the mean of a sub-region whose dispersion exceeds the
 * smallest by at most 1e-9 times the squared spread of the mask (max |f -
 * f(centre)|), computed here in long double on the differences to the
 * centre; a non-finite sample anywhere in the mask requires NaN. Sets
 * `firstBad` to the first such voxel's index. */
std::size_t
CountRotatingMaskFloatMismatches(const float *               in,
                                 const float *               result,
                                 const std::array<long, 3> & n,
                                 unsigned int                dimension,
                                 std::size_t &               firstBad);

/** Rotating mask: compared with an independent evaluation of the
 * definition written here from the class documentation. Integer pixels:
 * exact, the reference iterated as often as the filter, so OUT must be
 * identical (the GPU and the CPU core both use exact arithmetic on them).
 * Float pixels: one iteration, checked voxel by voxel as
 * CountRotatingMaskFloatMismatches says (near-ties may be decided either
 * way); with more iterations it is not checked (reported). */
template <typename T, unsigned int D>
StageCheck
CheckRotatingMaskStage(const itk::Image<T, D> *  input,
                       const itk::Image<T, D> *  result,
                       const SmoothingSettings & settings,
                       const std::string &       what)
{
  CheckSameSize(result, input, what);
  std::array<long, 3> n{ { 1, 1, 1 } };
  for (unsigned int a = 0; a < D; ++a)
  {
    n[a] = static_cast<long>(input->GetLargestPossibleRegion().GetSize(a));
  }
  const std::size_t  count = input->GetLargestPossibleRegion().GetNumberOfPixels();
  const T *          out = result->GetBufferPointer();
  StageCheck         check;
  std::ostringstream line;
  if constexpr (std::is_integral<T>::value)
  {
    std::vector<T> current(input->GetBufferPointer(), input->GetBufferPointer() + count);
    std::vector<T> next(count);
    for (unsigned int i = 0; i < settings.Iterations; ++i)
    {
      RotatingMaskIntegerPass<T>(current.data(), next.data(), n, D);
      current.swap(next);
    }
    std::size_t differing = 0;
    for (std::size_t i = 0; i < count; ++i)
    {
      differing += out[i] == current[i] ? 0 : 1;
    }
    line << what << " differs from an independent exact evaluation of the rotating mask ("
         << IterationsToString(settings.Iterations) << ", integer arithmetic) in " << differing << " of " << count
         << " voxels (they must be identical)";
    check.Passed = differing == 0;
  }
  else
  {
    if (settings.Iterations != 1)
    {
      check.Checked = false;
      line << "with float pixels and " << IterationsToString(settings.Iterations)
           << ", near-ties may be decided either way, so the rotating mask is not checked (only with 1 iteration)";
    }
    else
    {
      std::size_t       firstBad = 0;
      const std::size_t bad = CountRotatingMaskFloatMismatches(input->GetBufferPointer(), out, n, D, firstBad);
      line << bad << " of " << count << " voxels of " << what
           << " are not the mean (within 2^-22 relative, or 2^-149 below FLT_MIN) of a sub-region whose "
              "dispersion is within 1e-9 x spread^2 of the smallest, by an independent long-double evaluation";
      if (bad != 0)
      {
        line << " (the first is voxel " << firstBad << ")";
      }
      check.Passed = bad == 0;
    }
  }
  check.Line = line.str();
  return check;
}

/** Rotating mask run on the GPU: compared with the module's CPU core on
 * the same input (same iterations). Integer pixels: both use exact integer
 * arithmetic, so they must be identical; float pixels: near-ties may be
 * decided differently, so the number of differing voxels is reported, not
 * checked. */
template <typename T, unsigned int D>
StageCheck
CheckRotatingMaskAgainstCPUCore(const itk::Image<T, D> *  input,
                                const itk::Image<T, D> *  result,
                                const SmoothingSettings & settings,
                                const std::string &       what)
{
  using ImageType = itk::Image<T, D>;
  auto core = itk::CudaRotatingMaskImageFilter<ImageType, ImageType>::New();
  core->SetNumberOfIterations(settings.Iterations);
  core->SetExecutionMode(itk::CudaExecutionMode::CPU);
  core->SetInput(input);
  UpdateReference(core, "the rotating mask's CPU core");
  CheckSameSize(result, core->GetOutput(), what);
  const T *         a = result->GetBufferPointer();
  const T *         b = core->GetOutput()->GetBufferPointer();
  const std::size_t count = result->GetLargestPossibleRegion().GetNumberOfPixels();
  std::size_t       differing = 0;
  for (std::size_t i = 0; i < count; ++i)
  {
    const bool bothNaN = std::isnan(static_cast<double>(a[i])) && std::isnan(static_cast<double>(b[i]));
    differing += (a[i] == b[i] || bothNaN) ? 0 : 1;
  }
  StageCheck         check;
  std::ostringstream line;
  line << what << " (GPU) differs from the module's CPU core in " << differing << " of " << count << " voxels";
  if constexpr (std::is_integral<T>::value)
  {
    line << " (integer pixels: they must be identical)";
    check.Passed = differing == 0;
  }
  else
  {
    line << " (float pixels: near-ties may be decided either way)";
    check.Checked = false;
  }
  check.Line = line.str();
  return check;
}

/** The stage check of kind K (not None). */
template <SmoothingKind K, typename T, unsigned int D>
StageCheck
CheckSmoothingStage(const itk::Image<T, D> *  input,
                    const itk::Image<T, D> *  result,
                    const SmoothingSettings & settings,
                    const std::string &       what)
{
  if constexpr (K == SmoothingKind::Median)
  {
    return CheckMedianStage<T, D>(input, result, settings, what);
  }
  else if constexpr (K == SmoothingKind::Bilateral)
  {
    return CheckBilateralStage<T, D>(input, result, settings, what);
  }
  else
  {
    return CheckRotatingMaskStage<T, D>(input, result, settings, what);
  }
}

// ---------------------------------------------------------------------------
// Threshold and packed mask.
// ---------------------------------------------------------------------------

/** itk::BinaryThresholdImageFilter's label image (not in place). */
template <typename T, unsigned int D>
typename itk::Image<std::uint8_t, D>::Pointer
ThresholdWithITK(const itk::Image<T, D> * image, T lower, T upper, std::uint8_t inside, std::uint8_t outside)
{
  using FilterType = FactorylessReference<itk::BinaryThresholdImageFilter<itk::Image<T, D>, itk::Image<std::uint8_t, D>>>;
  auto filter = FilterType::New();
  filter->SetInput(image);
  filter->SetInPlace(false);
  filter->SetLowerThreshold(lower);
  filter->SetUpperThreshold(upper);
  filter->SetInsideValue(inside);
  filter->SetOutsideValue(outside);
  UpdateReference(filter, "ITK's BinaryThresholdImageFilter");
  typename itk::Image<std::uint8_t, D>::Pointer labels = filter->GetOutput();
  labels->DisconnectPipeline();
  return labels;
}

/** Number of voxels where flags[i] != (Lower <= value <= Upper) evaluated
 * in double with the thresholds as given on the command line. */
template <typename T>
std::size_t
CountRuleMismatches(const T * values, const std::uint8_t * flags, std::size_t count, const ThresholdSettings & settings)
{
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < count; ++i)
  {
    const double value = static_cast<double>(values[i]);
    const bool   inside = settings.Lower <= value && value <= settings.Upper;
    mismatches += (flags[i] != 0) == inside ? 0 : 1;
  }
  return mismatches;
}

/** The bounds of the rule lower <= value <= upper that --verify checks in
 * double: as the command line gave them, or, when it gave none, the
 * thresholds the filter ran with. */
inline ThresholdSettings
RuleBounds(const ThresholdSettings * given, double lower, double upper)
{
  if (given != nullptr)
  {
    return *given;
  }
  ThresholdSettings settings;
  settings.Lower = lower;
  settings.Upper = upper;
  settings.LowerText = std::to_string(lower);
  settings.UpperText = std::to_string(upper);
  return settings;
}

/** A label image written by the tool: read back, it must equal
 * itk::BinaryThresholdImageFilter's output for `image` with the same
 * thresholds and values, and follow Lower <= value <= Upper in double
 * arithmetic with the thresholds as given. */
template <typename T, unsigned int D>
StageCheck
CheckLabelFile(const std::string &       fileName,
               const itk::Image<T, D> *  image,
               T                         lower,
               T                         upper,
               const ThresholdSettings & settings,
               std::uint8_t              inside,
               std::uint8_t              outside)
{
  using LabelImageType = itk::Image<std::uint8_t, D>;
  const auto        written = ReadImageFile<LabelImageType>(fileName);
  const std::string name = "'" + itksys::SystemTools::GetFilenameName(fileName) + "'";
  CheckSameSize(written.GetPointer(), image, name);
  const auto           reference = ThresholdWithITK<T, D>(image, lower, upper, inside, outside);
  const double         difference = LargestDifference<LabelImageType>(written.GetPointer(), reference.GetPointer());
  const std::size_t    count = image->GetLargestPossibleRegion().GetNumberOfPixels();
  const std::uint8_t * labels = written->GetBufferPointer();
  std::vector<std::uint8_t> flags(count);
  std::size_t               neither = 0;
  for (std::size_t i = 0; i < count; ++i)
  {
    flags[i] = labels[i] == inside ? 1 : 0;
    neither += (labels[i] == inside || labels[i] == outside) ? 0 : 1;
  }
  const std::size_t  rule = CountRuleMismatches(image->GetBufferPointer(), flags.data(), count, settings) + neither;
  StageCheck         check;
  std::ostringstream line;
  line << "largest |" << name << " - itk::BinaryThresholdImageFilter| is " << difference << ", and " << rule
       << " voxels break the rule " << settings.LowerText << " <= value <= " << settings.UpperText
       << " (both must be 0)";
  check.Passed = difference == 0.0 && rule == 0;
  check.Line = line.str();
  return check;
}

/** A packed mask file written by the tool: read back with ReadPackedMask,
 * it must have the grid of `image`, and its bits, decoded here from the
 * documented layout, must equal itk::BinaryThresholdImageFilter's output
 * for `image` and follow Lower <= value <= Upper in double arithmetic. */
template <typename T, unsigned int D>
StageCheck
CheckPackedMaskFile(const std::string &       fileName,
                    const itk::Image<T, D> *  image,
                    T                         lower,
                    T                         upper,
                    const ThresholdSettings & settings)
{
  const std::string                             name = "'" + itksys::SystemTools::GetFilenameName(fileName) + "'";
  typename itk::CudaPackedMask<D>::ConstPointer mask;
  try
  {
    mask = itk::ReadPackedMask<D>(fileName).GetPointer();
  }
  catch (const itk::ExceptionObject & e)
  {
    throw RuntimeFailure("--verify: cannot read the packed mask back: " + ExceptionMessage(e));
  }
  StageCheck        check;
  const std::string grid = CompareMaskGrid<D>(mask.GetPointer(), image);
  if (!grid.empty())
  {
    check.Passed = false;
    check.Line = name + " was read back with " + grid;
    return check;
  }
  const std::vector<std::uint8_t> flags = DecodePackedMask<D>(mask.GetPointer());
  const auto                      reference = ThresholdWithITK<T, D>(image, lower, upper, 1, 0);
  const std::uint8_t *            expected = reference->GetBufferPointer();
  const std::size_t               count = flags.size();
  std::size_t                     differing = 0;
  std::size_t                     inside = 0;
  for (std::size_t i = 0; i < count; ++i)
  {
    differing += flags[i] == expected[i] ? 0 : 1;
    inside += flags[i];
  }
  const std::size_t  rule = CountRuleMismatches(image->GetBufferPointer(), flags.data(), count, settings);
  std::ostringstream line;
  line << name << " read back (ReadPackedMask: " << mask->GetNumberOfWords() << " words, the grid of the image) holds "
       << inside << " inside voxels; its bits differ from "
       << "itk::BinaryThresholdImageFilter in " << differing << " voxels, and " << rule << " break the rule "
       << settings.LowerText << " <= value <= " << settings.UpperText << " (both must be 0)";
  check.Passed = differing == 0 && rule == 0;
  check.Line = line.str();
  return check;
}

} // namespace tool
} // namespace cif

#endif
