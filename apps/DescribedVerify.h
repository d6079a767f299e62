/*=========================================================================
 *  CudaImageFilters: --verify of the generated subcommands. A check needs
 *  an implementation to compare with (ITK's filter, or an independent
 *  evaluation of the definition), which no description can give: this is
 *  the tool's one table of them, by command, over the stage checks the
 *  segment pipeline uses too (FilterStages.h). A described filter without
 *  a row has no --verify.
 *=========================================================================*/
#ifndef cifToolDescribedVerify_h
#define cifToolDescribedVerify_h

#include "FilterStages.h"
#include "cif/Filter.h"
#include "cif/PackedMask.h"
#include "itkBSplineDecompositionImageFilter.h"

#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace cif
{
namespace tool
{

/** What a --verify compares with. */
enum class VerifyAgainst
{
  Median,               ///< ITK's MedianImageFilter
  Bilateral,            ///< ITK's BilateralImageFilter
  RotatingMask,         ///< an independent evaluation of the definition
  BSplineDecomposition, ///< ITK's BSplineDecompositionImageFilter
  BinaryThreshold,      ///< ITK's BinaryThresholdImageFilter, and the rule in double
};

/** One subcommand's --verify: its help (after "--verify  "), and why it
 * cannot check a request (empty if it can). */
struct DescribedVerifier
{
  const char *  Command;
  VerifyAgainst Against;
  const char *  Help;
  std::string (*Refuse)(const cif::Parameters & given, bool floatPixels);
};

/** --verify of the prefilter fails above this largest difference, relative
 * to the input's range (the description's stated accuracy). */
constexpr double PrefilterVerifyTolerance = 1e-6;

inline std::string
RefuseBilateral(const cif::Parameters & given, bool)
{
  const auto it = given.find("number_of_iterations");
  if (it != given.end() && !it->second.empty() && it->second[0] != 1)
  {
    return "--verify compares with ITK's BilateralImageFilter, which has no iterations: give --iterations 1 (or "
           "leave it out) with --verify";
  }
  if (given.count("spacing") != 0)
  {
    return "--verify compares with ITK's BilateralImageFilter on IN's own spacing: leave --spacing out with --verify";
  }
  return {};
}

inline std::string
RefuseRotatingMask(const cif::Parameters & given, bool floatPixels)
{
  const auto it = given.find("number_of_iterations");
  if (floatPixels && it != given.end() && !it->second.empty() && it->second[0] != 1)
  {
    return "--verify checks float images for --iterations 1 only (in float, near-ties between sub-regions may be "
           "decided either way, and iterated results then part)";
  }
  return {};
}

inline std::string
RefuseNothing(const cif::Parameters &, bool)
{
  return {};
}

inline const std::vector<DescribedVerifier> &
DescribedVerifiers()
{
  static const std::vector<DescribedVerifier> verifiers = {
    { "threshold",
      VerifyAgainst::BinaryThreshold,
      "read OUT back and compare it with ITK's own BinaryThresholdImageFilter on IN: identical labels, or with "
      "--packed identical bits (the file read back with ReadPackedMask, the bits decoded from the documented layout, "
      "the grid of IN); also checks lower <= value <= upper in double arithmetic, with the bounds as given, for "
      "every voxel",
      &RefuseNothing },
    { "bspline-prefilter",
      VerifyAgainst::BSplineDecomposition,
      "read OUT back and compare it with ITK's own BSplineDecompositionImageFilter (same spline order); fail when "
      "they differ by more than 1e-6 of the input's range",
      &RefuseNothing },
    { "median",
      VerifyAgainst::Median,
      "read OUT back and compare it with ITK's own MedianImageFilter (same radius): they must be identical",
      &RefuseNothing },
    { "bilateral",
      VerifyAgainst::Bilateral,
      "read OUT back and compare it with ITK's own BilateralImageFilter with 10^6 range samples (so that its table "
      "is nearly exact); fail when they differ by more than the documented bound 2 S_r (exp(16e-6) - 1) + 1e-4 S_r "
      "+ 2^-22 max |value| (+ 1 for integer pixels, truncation), S_r the range sigma; one iteration only",
      &RefuseBilateral },
    { "rotating-mask",
      VerifyAgainst::RotatingMask,
      "read OUT back and compare it with an independent evaluation of the definition in this program (ITK has no "
      "such filter). Integer pixels: exact integer arithmetic, iterated N times; OUT must be identical. Float pixels "
      "(one iteration only): every pixel must be, within 2^-22 relative (2^-149 for subnormal values), the mean of "
      "a sub-region whose variance is within 1e-9 x spread^2 of the smallest (near-ties may go either way; spread "
      "= max |f - f(centre)| in the mask). When the GPU ran the filter, OUT is also compared with the module's CPU "
      "core: identical for integer pixels (float: the difference is reported)",
      &RefuseRotatingMask },
  };
  return verifiers;
}

/** The --verify of `command`, or nullptr. */
inline const DescribedVerifier *
FindDescribedVerifier(const std::string & command)
{
  for (const auto & v : DescribedVerifiers())
  {
    if (command == v.Command)
    {
      return &v;
    }
  }
  return nullptr;
}

/** The stage checks' settings of checked parameters. */
inline SmoothingSettings
SmoothingSettingsOf(SmoothingKind kind, const cif::Parameters & p)
{
  SmoothingSettings s;
  s.Kind = kind;
  const auto number = [](double v)
  {
    std::ostringstream text;
    text << v;
    return text.str();
  };
  if (p.count("radius") != 0)
  {
    for (double r : p.at("radius"))
    {
      s.Radius.push_back(static_cast<long long>(r));
    }
  }
  if (p.count("domain_sigma") != 0)
  {
    s.DomainSigma = p.at("domain_sigma");
  }
  if (p.count("range_sigma") != 0)
  {
    s.RangeSigma = cif::Value(p, "range_sigma");
    s.RangeSigmaText = number(s.RangeSigma);
  }
  if (p.count("number_of_iterations") != 0)
  {
    s.Iterations = static_cast<unsigned int>(cif::Value(p, "number_of_iterations"));
  }
  return s;
}

/** The smoothing stage checks of an image of one pixel type in and out. */
template <typename T, unsigned int D>
void
SameTypeChecks(const DescribedVerifier &  verifier,
               const itk::Image<T, D> *   input,
               const itk::Image<T, D> *   written,
               const cif::Parameters &    checked,
               bool                       ranOnGpu,
               std::vector<StageCheck> &  checks)
{
  switch (verifier.Against)
  {
    case VerifyAgainst::Median:
      checks.push_back(CheckSmoothingStage<SmoothingKind::Median, T, D>(
        input, written, SmoothingSettingsOf(SmoothingKind::Median, checked), "OUT"));
      break;
    case VerifyAgainst::Bilateral:
      checks.push_back(CheckSmoothingStage<SmoothingKind::Bilateral, T, D>(
        input, written, SmoothingSettingsOf(SmoothingKind::Bilateral, checked), "OUT"));
      break;
    case VerifyAgainst::RotatingMask:
    {
      const SmoothingSettings settings = SmoothingSettingsOf(SmoothingKind::RotatingMask, checked);
      checks.push_back(CheckSmoothingStage<SmoothingKind::RotatingMask, T, D>(input, written, settings, "OUT"));
      if (ranOnGpu)
      {
        checks.push_back(CheckRotatingMaskAgainstCPUCore<T, D>(input, written, settings, "OUT"));
      }
      break;
    }
    case VerifyAgainst::BSplineDecomposition:
    case VerifyAgainst::BinaryThreshold:
      break;
  }
}
/** (the smoothing checks compare images of one type) */
template <typename TIn, typename TOut, unsigned int D>
void
SameTypeChecks(const DescribedVerifier & verifier,
               const itk::Image<TIn, D> *,
               const itk::Image<TOut, D> *,
               const cif::Parameters &,
               bool,
               std::vector<StageCheck> &)
{
  throw RuntimeFailure(std::string("--verify of ") + verifier.Command + " compares images of one pixel type");
}

/** OUT against ITK's BSplineDecompositionImageFilter on IN, relative to
 * IN's range. */
template <typename TIn, typename TOut, unsigned int D>
StageCheck
CheckBSplineDecomposition(const itk::Image<TIn, D> *  input,
                          const itk::Image<TOut, D> * written,
                          const cif::Parameters &     checked)
{
  using OutputImageType = itk::Image<TOut, D>;
  auto reference =
    FactorylessReference<itk::BSplineDecompositionImageFilter<itk::Image<TIn, D>, OutputImageType>>::New();
  reference->SetSplineOrder(static_cast<unsigned int>(cif::Value(checked, "spline_order")));
  reference->SetInput(ToPlainImage<TIn, D>(input));
  UpdateReference(reference, "ITK's BSplineDecompositionImageFilter");
  const double       range = DynamicRange(input);
  const double       relative = LargestDifference<OutputImageType>(written, reference->GetOutput()) / range;
  StageCheck         check;
  std::ostringstream line;
  line << "largest |OUT - itk::BSplineDecompositionImageFilter| is " << std::setprecision(3) << relative
       << " of the input's range " << range << " (limit " << PrefilterVerifyTolerance << ")";
  check.Passed = relative <= PrefilterVerifyTolerance;
  check.Line = line.str();
  return check;
}

/** Runs `verifier`'s checks of OUT (`written`) against IN. */
template <typename TIn, typename TOut, unsigned int D>
std::vector<StageCheck>
RunDescribedVerifier(const DescribedVerifier &   verifier,
                     const itk::Image<TIn, D> *  input,
                     const itk::Image<TOut, D> * written,
                     const std::string &         outputFile,
                     const ThresholdSettings *   bounds,
                     const cif::Parameters &     checked,
                     bool                        ranOnGpu)
{
  std::vector<StageCheck> checks;
  if (verifier.Against == VerifyAgainst::BSplineDecomposition)
  {
    checks.push_back(CheckBSplineDecomposition<TIn, TOut, D>(input, written, checked));
  }
  else if (verifier.Against == VerifyAgainst::BinaryThreshold)
  {
    if constexpr (std::is_same<TOut, std::uint8_t>::value)
    {
      const auto value = [&](const char * name, double absent)
      {
        const auto it = checked.find(name);
        return it == checked.end() || it->second.empty() ? absent : it->second[0];
      };
      const TIn lower =
        cif::AsValueOf<TIn>(value("lower_threshold", static_cast<double>(std::numeric_limits<TIn>::lowest())));
      const TIn upper =
        cif::AsValueOf<TIn>(value("upper_threshold", static_cast<double>(std::numeric_limits<TIn>::max())));
      checks.push_back(CheckLabelFile<TIn, D>(outputFile,
                                              input,
                                              lower,
                                              upper,
                                              RuleBounds(bounds, lower, upper),
                                              static_cast<std::uint8_t>(value("inside_value", 255)),
                                              static_cast<std::uint8_t>(value("outside_value", 0))));
    }
    else
    {
      throw RuntimeFailure("--verify of threshold checks unsigned char labels");
    }
  }
  else
  {
    SameTypeChecks(verifier, input, written, checked, ranOnGpu, checks);
  }
  return checks;
}

} // namespace tool
} // namespace cif

#endif
