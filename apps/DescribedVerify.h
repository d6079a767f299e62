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

#include <sstream>
#include <string>
#include <vector>

namespace cif
{
namespace tool
{

/** One subcommand's --verify: its help (after "--verify  "), and why it
 * cannot check a request (empty if it can). */
struct DescribedVerifier
{
  const char * Command;
  SmoothingKind Kind;
  const char *  Help;
  std::string (*Refuse)(const cif::Parameters & given, bool floatPixels);
};

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
    { "median",
      SmoothingKind::Median,
      "read OUT back and compare it with ITK's own MedianImageFilter (same radius): they must be identical",
      &RefuseNothing },
    { "bilateral",
      SmoothingKind::Bilateral,
      "read OUT back and compare it with ITK's own BilateralImageFilter with 10^6 range samples (so that its table "
      "is nearly exact); fail when they differ by more than the documented bound 2 S_r (exp(16e-6) - 1) + 1e-4 S_r "
      "+ 2^-22 max |value| (+ 1 for integer pixels, truncation), S_r the range sigma; one iteration only",
      &RefuseBilateral },
    { "rotating-mask",
      SmoothingKind::RotatingMask,
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

/** Runs `verifier`'s checks of OUT (`written`) against IN. */
template <typename T, unsigned int D>
std::vector<StageCheck>
RunDescribedVerifier(const DescribedVerifier &  verifier,
                     const itk::Image<T, D> *   input,
                     const itk::Image<T, D> *   written,
                     const cif::Parameters &    checked,
                     bool                       ranOnGpu)
{
  const SmoothingSettings settings = SmoothingSettingsOf(verifier.Kind, checked);
  std::vector<StageCheck> checks;
  switch (verifier.Kind)
  {
    case SmoothingKind::Median:
      checks.push_back(CheckSmoothingStage<SmoothingKind::Median, T, D>(input, written, settings, "OUT"));
      break;
    case SmoothingKind::Bilateral:
      checks.push_back(CheckSmoothingStage<SmoothingKind::Bilateral, T, D>(input, written, settings, "OUT"));
      break;
    case SmoothingKind::RotatingMask:
      checks.push_back(CheckSmoothingStage<SmoothingKind::RotatingMask, T, D>(input, written, settings, "OUT"));
      if (ranOnGpu)
      {
        checks.push_back(CheckRotatingMaskAgainstCPUCore<T, D>(input, written, settings, "OUT"));
      }
      break;
    case SmoothingKind::None:
      break;
  }
  return checks;
}

} // namespace tool
} // namespace cif

#endif
