/*=========================================================================
 *  CudaImageFilters: `cudaimagefilters demons FIXED MOVING OUT_FIELD`,
 *  Thirion's demons registration with itk::CudaDemonsRegistrationFilter
 *  (ITK's DemonsRegistrationFilter on the GPU or the module's CPU core), or
 *  with --diffeomorphic the diffeomorphic demons with
 *  itk::CudaDiffeomorphicDemonsRegistrationFilter, as
 *  ITK's example DeformableRegistration2 runs it: optional histogram
 *  matching of the moving image to the fixed one, then the iterations; the
 *  displacement field written, and on request the moving image warped onto
 *  the fixed grid. --verify runs ITK's own filter on the same inputs and
 *  compares the fields.
 *=========================================================================*/
#include "ToolCommon.h"

#include "itkCudaDemonsRegistrationFilter.h"
#include "itkCudaDiffeomorphicDemonsRegistrationFilter.h"
#include "itkDemonsRegistrationFilter.h"
#include "itkDiffeomorphicDemonsRegistrationFilter.h"
#include "itkDisplacementFieldTransform.h"
#include "itkHistogramMatchingImageFilter.h"
#include "itkResampleImageFilter.h"

#include <algorithm>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <type_traits>

namespace cif
{
namespace tool
{
namespace
{
constexpr const char * CommandName = "demons";

/** The field must agree with ITK's within this RMS, in pixels (issue 23's
 * bound for 50 iterations). */
constexpr double VerifyTolerancePixels = 0.01;

struct DemonsOptions
{
  std::string            Fixed;
  std::string            Moving;
  std::string            Output;
  std::string            Warped;
  std::string            InitialField;
  unsigned int           Iterations{ 50 };
  std::vector<double>    StandardDeviations{ 1.0 };
  bool                   SmoothField{ true };
  bool                   SmoothUpdate{ false };
  std::vector<double>    UpdateStandardDeviations{ 1.0 };
  double                 IntensityThreshold{ 0.001 };
  double                 MaximumRMSError{ 0.0 };
  bool                   Diffeomorphic{ false };
  /** --diffeomorphic: ESMDemonsRegistrationFunction's gradient type (ITK's
   * numbering), maximum update step length, first-order exponential. */
  int                    Gradient{ 0 };
  double                 MaximumStep{ 0.5 };
  bool                   FirstOrderExp{ false };
  bool                   HistogramMatching{ false };
  bool                   Verify{ false };
  bool                   Quiet{ false };
  itk::CudaExecutionMode ExecutionMode{ itk::CudaExecutionMode::Automatic };
};

template <unsigned int D>
typename itk::FixedArray<double, D>
PerAxis(const std::vector<double> & values, const std::string & option)
{
  if (values.size() != 1 && values.size() != D)
  {
    throw UsageError(option + " takes one value or " + std::to_string(D) + " (one per axis)");
  }
  itk::FixedArray<double, D> a;
  for (unsigned int i = 0; i < D; ++i)
  {
    a[i] = values.size() == 1 ? values[0] : values[i];
    if (a[i] < 0.0)
    {
      throw UsageError(option + ": a standard deviation must be at least 0");
    }
  }
  return a;
}

template <unsigned int D>
using FloatImage = itk::Image<float, D>;
template <unsigned int D>
using FieldImage = itk::Image<itk::Vector<float, D>, D>;

/** The per-axis settings of a D-dimensional run, checked once. */
template <unsigned int D>
struct PerAxisSettings
{
  itk::FixedArray<double, D> StandardDeviations;
  itk::FixedArray<double, D> UpdateStandardDeviations;
};

/** The filter (ours, or ITK's own for --verify) set up as the options say. */
template <unsigned int D, typename TFilter>
void
Configure(TFilter *                     filter,
          const FloatImage<D> *         fixed,
          const FloatImage<D> *         moving,
          const FieldImage<D> *         initial,
          const DemonsOptions &         o,
          const PerAxisSettings<D> &    axes)
{
  filter->SetFixedImage(fixed);
  filter->SetMovingImage(moving);
  if (initial != nullptr)
  {
    filter->SetInitialDisplacementField(initial);
  }
  filter->SetNumberOfIterations(o.Iterations);
  filter->SetStandardDeviations(axes.StandardDeviations);
  filter->SetSmoothDisplacementField(o.SmoothField);
  filter->SetSmoothUpdateField(o.SmoothUpdate);
  filter->SetUpdateFieldStandardDeviations(axes.UpdateStandardDeviations);
  filter->SetIntensityDifferenceThreshold(o.IntensityThreshold);
  filter->SetMaximumRMSError(o.MaximumRMSError);
  if constexpr (std::is_base_of<itk::DiffeomorphicDemonsRegistrationFilter<FloatImage<D>, FloatImage<D>, FieldImage<D>>,
                                TFilter>::value)
  {
    filter->SetUseGradientType(static_cast<typename TFilter::GradientType>(o.Gradient));
    filter->SetMaximumUpdateStepLength(o.MaximumStep);
    filter->SetUseFirstOrderExp(o.FirstOrderExp);
  }
}

/** The module's filter and ITK's (for --verify): Thirion's, or with
 * Diffeomorphic the diffeomorphic ones. */
template <unsigned int D, bool Diffeomorphic>
struct DemonsFilters
{
  using Ours = itk::CudaDemonsRegistrationFilter<FloatImage<D>, FloatImage<D>, FieldImage<D>>;
  using Itk = itk::DemonsRegistrationFilter<FloatImage<D>, FloatImage<D>, FieldImage<D>>;
};
template <unsigned int D>
struct DemonsFilters<D, true>
{
  using Ours = itk::CudaDiffeomorphicDemonsRegistrationFilter<FloatImage<D>, FloatImage<D>, FieldImage<D>>;
  using Itk = itk::DiffeomorphicDemonsRegistrationFilter<FloatImage<D>, FloatImage<D>, FieldImage<D>>;
};

template <unsigned int D, bool Diffeomorphic>
int
RunDemons(const DemonsOptions & o)
{
  using Filters = DemonsFilters<D, Diffeomorphic>;
  using Image = FloatImage<D>;
  using Field = FieldImage<D>;
  // the command line's per-axis values, before any pixel is read
  const PerAxisSettings<D> axes{ PerAxis<D>(o.StandardDeviations, "--standard-deviations"),
                                 PerAxis<D>(o.UpdateStandardDeviations, "--update-standard-deviations") };
  const auto fixed = ReadImageFile<Image>(o.Fixed);
  // MOVING as read (what --warped resamples, as DeformableRegistration2
  // does), and what the registration takes (histogram-matched on request)
  const auto original = ReadImageFile<Image>(o.Moving);
  auto       moving = original;
  typename Field::Pointer initial;
  if (!o.InitialField.empty())
  {
    initial = ReadImageFile<Field>(o.InitialField);
    if (initial->GetLargestPossibleRegion() != fixed->GetLargestPossibleRegion())
    {
      throw RuntimeFailure("--initial-field '" + o.InitialField + "' is not on the fixed image's grid (size " +
                           SizeToString(initial->GetLargestPossibleRegion().GetSize()) + ", the fixed image's " +
                           SizeToString(fixed->GetLargestPossibleRegion().GetSize()) + ")");
    }
  }
  if (o.HistogramMatching)
  {
    // DeformableRegistration2's settings
    auto matcher = itk::HistogramMatchingImageFilter<Image, Image>::New();
    matcher->SetInput(original);
    matcher->SetReferenceImage(fixed);
    matcher->SetNumberOfHistogramLevels(1024);
    matcher->SetNumberOfMatchPoints(7);
    matcher->ThresholdAtMeanIntensityOn();
    matcher->Update();
    moving = matcher->GetOutput();
    moving->DisconnectPipeline();
  }
  auto filter = Filters::Ours::New();
  Configure<D>(filter.GetPointer(), fixed.GetPointer(), moving.GetPointer(), initial.GetPointer(), o, axes);
  filter->SetExecutionMode(o.ExecutionMode);
  if (o.ExecutionMode == itk::CudaExecutionMode::GPU)
  {
    CheckGPURequest(filter->GetCoreUnsupportedReason());
  }
  StartDeviceOutsideTiming(o.ExecutionMode);
  const double milliseconds = UpdateTimed(filter, CommandName, o.Quiet);
  std::cout << CommandName << ": " << SizeToString(fixed->GetLargestPossibleRegion().GetSize()) << " pixels, "
            << filter->GetElapsedIterations() << " iterations; metric (mean squared difference) "
            << filter->GetMetric() << ", RMS change " << filter->GetRMSChange() << "; ran on "
            << filter->GetLastExecutionReport().Message << "; filter time " << std::fixed << std::setprecision(3)
            << milliseconds << " ms" << std::endl;
  std::cout.unsetf(std::ios_base::floatfield);
  std::cout << std::setprecision(6);
  WriteImageFile(filter->GetOutput(), o.Output);
  if (!o.Warped.empty())
  {
    // DeformableRegistration2's warp: MOVING as read, through the field's
    // transform onto the fixed grid, linear interpolation
    auto transform = itk::DisplacementFieldTransform<float, D>::New();
    transform->SetDisplacementField(filter->GetOutput());
    auto warper = itk::ResampleImageFilter<Image, Image, double, float>::New();
    warper->SetInput(original);
    warper->SetTransform(transform);
    warper->UseReferenceImageOn();
    warper->SetReferenceImage(fixed);
    warper->Update();
    WriteImageFile(warper->GetOutput(), o.Warped);
  }
  if (o.Verify)
  {
    auto reference = FactorylessReference<typename Filters::Itk>::New();
    Configure<D>(reference.GetPointer(), fixed.GetPointer(), moving.GetPointer(), initial.GetPointer(), o, axes);
    try
    {
      reference->Update();
    }
    catch (const itk::ExceptionObject & e)
    {
      throw RuntimeFailure(std::string("--verify: ITK's ") + reference->GetNameOfClass() +
                           " failed: " + ExceptionMessage(e));
    }
    const auto        written = ReadImageFile<Field>(o.Output);
    const auto *      a = written->GetBufferPointer();
    const auto *      b = reference->GetOutput()->GetBufferPointer();
    const std::size_t n = written->GetBufferedRegion().GetNumberOfPixels();
    double            sum = 0.0;
    for (std::size_t i = 0; i < n; ++i)
    {
      for (unsigned int c = 0; c < D; ++c)
      {
        // in pixels of each axis
        const double d = (static_cast<double>(a[i][c]) - static_cast<double>(b[i][c])) / fixed->GetSpacing()[c];
        sum += d * d;
      }
    }
    const double       rms = std::sqrt(sum / static_cast<double>(n));
    std::ostringstream line;
    line << std::setprecision(3) << "RMS |OUT_FIELD - itk::" << reference->GetNameOfClass() << "'s| is " << rms
         << " pixels (limit " << VerifyTolerancePixels << "); iterations " << filter->GetElapsedIterations() << " and "
         << reference->GetElapsedIterations();
    const bool passed = rms <= VerifyTolerancePixels && filter->GetElapsedIterations() == reference->GetElapsedIterations();
    std::cout << "verify: " << line.str() << ": " << (passed ? "passed" : "FAILED") << std::endl;
    if (!passed)
    {
      PrintError(std::string("--verify: the field differs from ITK's ") + reference->GetNameOfClass() + ": " +
                 line.str());
      return ExitFailure;
    }
  }
  return ExitSuccess;
}

} // namespace

void
DemonsUsage(std::ostream & os)
{
  os << "Usage: " << ToolName << " demons FIXED MOVING OUT_FIELD [options]\n"
     << "\n"
     << "Thirion's demons registration of MOVING onto FIXED (2D or 3D scalar images,\n"
     << "read as float) with itk::CudaDemonsRegistrationFilter: ITK's\n"
     << "DemonsRegistrationFilter on the GPU or on the module's CPU core, with ITK's\n"
     << "arithmetic; with --diffeomorphic the diffeomorphic demons\n"
     << "(itk::CudaDiffeomorphicDemonsRegistrationFilter, ITK's\n"
     << "DiffeomorphicDemonsRegistrationFilter). OUT_FIELD gets the displacement field\n"
     << "(float vectors on FIXED's\n"
     << "grid, in physical units: .mha, .nrrd, .nii.gz), which ITK's\n"
     << "DisplacementFieldTransform reads.\n"
     << "\n"
     << "Options:\n"
     << "  --iterations N                 iterations (default 50)\n"
     << "  --standard-deviations S[,S,S]  the field's Gaussian smoothing, in pixels, per\n"
     << "                                 iteration (default 1)\n"
     << "  --no-smooth-field              do not smooth the field\n"
     << "  --smooth-update                smooth each update (a viscous registration)\n"
     << "  --update-standard-deviations S[,S,S]  its smoothing (default 1)\n"
     << "  --intensity-threshold T        no update where |fixed - moving| < T (0.001)\n"
     << "  --maximum-rms-error E          stop when the RMS change falls below E (0: never)\n"
     << "  --diffeomorphic                the diffeomorphic demons (ITK's\n"
     << "                                 DiffeomorphicDemonsRegistrationFilter); with it:\n"
     << "  --gradient symmetric|fixed|warped-moving|mapped-moving\n"
     << "                                 the image forces (default symmetric)\n"
     << "  --maximum-step L               the largest update step, in pixels (0.5; 0: none,\n"
     << "                                 ITK's automatic exponential)\n"
     << "  --first-order-exp              the update's exponential to first order\n"
     << "  --histogram-matching           match MOVING's histogram to FIXED's first (as ITK's\n"
     << "                                 DeformableRegistration2: 1024 levels, 7 points)\n"
     << "  --initial-field FILE           start from this field (on FIXED's grid)\n"
     << "  --warped OUT_IMAGE             also write MOVING warped onto FIXED's grid (float)\n"
     << "  --device auto|gpu|cpu          where to run (default auto)\n"
     << "  --verify                       run ITK's filter on the same input\n"
     << "                                 and compare the fields (RMS within 0.01 pixel)\n"
     << "  --quiet                        no progress bar\n";
}

int
DemonsMain(const std::vector<std::string> & args)
{
  if (HasHelpOption(args))
  {
    DemonsUsage(std::cout);
    return ExitSuccess;
  }
  const ParsedArguments parsed = ParseArguments(args,
                                                { { "--iterations", true },
                                                  { "--standard-deviations", true },
                                                  { "--no-smooth-field", false },
                                                  { "--smooth-update", false },
                                                  { "--update-standard-deviations", true },
                                                  { "--intensity-threshold", true },
                                                  { "--maximum-rms-error", true },
                                                  { "--diffeomorphic", false },
                                                  { "--gradient", true },
                                                  { "--maximum-step", true },
                                                  { "--first-order-exp", false },
                                                  { "--histogram-matching", false },
                                                  { "--initial-field", true },
                                                  { "--warped", true },
                                                  { "--device", true },
                                                  { "--verify", false },
                                                  { "--quiet", false } });
  if (parsed.Positionals.size() != 3)
  {
    throw UsageError("demons takes three arguments, FIXED MOVING OUT_FIELD (got " +
                     std::to_string(parsed.Positionals.size()) + ")");
  }
  DemonsOptions o;
  o.Fixed = parsed.Positionals[0];
  o.Moving = parsed.Positionals[1];
  o.Output = parsed.Positionals[2];
  o.Iterations = static_cast<unsigned int>(
    ParseInteger("--iterations", parsed.Get("--iterations", "50"), 0, std::numeric_limits<int>::max()));
  if (parsed.Has("--standard-deviations"))
  {
    o.StandardDeviations = ParseRealList("--standard-deviations", parsed.Get("--standard-deviations"));
  }
  if (parsed.Has("--update-standard-deviations"))
  {
    o.UpdateStandardDeviations =
      ParseRealList("--update-standard-deviations", parsed.Get("--update-standard-deviations"));
  }
  o.SmoothField = !parsed.Has("--no-smooth-field");
  o.SmoothUpdate = parsed.Has("--smooth-update");
  if (parsed.Has("--intensity-threshold"))
  {
    o.IntensityThreshold = ParseFiniteReal("--intensity-threshold", parsed.Get("--intensity-threshold"));
  }
  if (parsed.Has("--maximum-rms-error"))
  {
    o.MaximumRMSError = ParseFiniteReal("--maximum-rms-error", parsed.Get("--maximum-rms-error"));
  }
  o.Diffeomorphic = parsed.Has("--diffeomorphic");
  if (!o.Diffeomorphic)
  {
    for (const char * option : { "--gradient", "--maximum-step", "--first-order-exp" })
    {
      if (parsed.Has(option))
      {
        throw UsageError(std::string(option) + " is an option of the diffeomorphic demons (add --diffeomorphic)");
      }
    }
  }
  if (parsed.Has("--gradient"))
  {
    const std::string              gradient = parsed.Get("--gradient");
    const std::vector<std::string> names{ "symmetric", "fixed", "warped-moving", "mapped-moving" };
    const auto                     found = std::find(names.begin(), names.end(), gradient);
    if (found == names.end())
    {
      throw UsageError("--gradient takes symmetric, fixed, warped-moving or mapped-moving (got '" + gradient + "')");
    }
    o.Gradient = static_cast<int>(found - names.begin());
  }
  if (parsed.Has("--maximum-step"))
  {
    o.MaximumStep = ParseFiniteReal("--maximum-step", parsed.Get("--maximum-step"));
  }
  o.FirstOrderExp = parsed.Has("--first-order-exp");
  o.HistogramMatching = parsed.Has("--histogram-matching");
  o.InitialField = parsed.Get("--initial-field");
  o.Warped = parsed.Get("--warped");
  o.ExecutionMode = ParseDeviceOption(parsed);
  o.Verify = parsed.Has("--verify");
  o.Quiet = parsed.Has("--quiet");

  for (const std::string * output : { &o.Output, &o.Warped })
  {
    if (output->empty())
    {
      continue;
    }
    const std::string io = CheckImageOutput(*output);
    if (IsIntegerOnlyImageIO(io))
    {
      throw UsageError("cannot write '" + *output + "': demons writes float (" + std::string(FloatImageFormats) +
                       ")");
    }
  }
  const unsigned int fixedDimension = CheckScalarImageInput(o.Fixed, CommandName, o.Quiet);
  const unsigned int movingDimension = CheckScalarImageInput(o.Moving, CommandName, o.Quiet);
  if (fixedDimension != movingDimension)
  {
    throw RuntimeFailure("FIXED '" + o.Fixed + "' is " + std::to_string(fixedDimension) + "D but MOVING '" + o.Moving +
                         "' is " + std::to_string(movingDimension) + "D");
  }
  if (o.Diffeomorphic)
  {
    return fixedDimension == 2 ? RunDemons<2, true>(o) : RunDemons<3, true>(o);
  }
  return fixedDimension == 2 ? RunDemons<2, false>(o) : RunDemons<3, false>(o);
}

} // namespace tool
} // namespace cif
