/*=========================================================================
 *  CudaImageFilters: `cudaimagefilters bspline-prefilter`, the B-spline
 *  coefficients of an image with itk::CudaBSplineDecompositionImageFilter.
 *=========================================================================*/
#include "FilterCommon.h"
#include "ToolCommon.h"

#include "cif/BSplinePrefilter.h"
#include "itkBSplineDecompositionImageFilter.h"
#include "itkCudaBSplineDecompositionImageFilter.h"
#include "cif/Runtime.h"
#include "itkCudaExecution.h"
#include "itkImage.h"

#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <limits>
#include <sstream>

namespace cif
{
namespace tool
{

namespace
{

constexpr const char * CommandName = "bspline-prefilter";

/** --verify fails above this largest difference, relative to the input's range. */
constexpr double VerifyTolerance = 1e-6;

struct PrefilterOptions
{
  std::string                     Input;
  std::string                     Output;
  itk::CudaBSplinePrefilterMethod Method{ itk::CudaBSplinePrefilterMethod::Recursive };
  bool                            HasFIRHalfWidth{ false };
  unsigned int                    FIRHalfWidth{ 0 };
  bool                            HasFIRTolerance{ false };
  double                          FIRTolerance{ 0.0 };
  unsigned int                    SplineOrder{ 3 };
  itk::CudaExecutionMode          ExecutionMode{ itk::CudaExecutionMode::Automatic };
  bool                            Verify{ false };
  bool                            Quiet{ false };
  /** --stream (--method fir only: the recursive filter reads whole lines). */
  StreamSettings Streaming;
};

PrefilterOptions
ParsePrefilterOptions(const std::vector<std::string> & toolArgs)
{
  // the description's name (cif/Filter.h, "bspline-prefilter"), as the Python keyword
  const std::vector<std::string> args = WithToolSpellings(toolArgs, { { "--spline-order", "--order" } });
  std::vector<OptionSpec>        specs{ { "--method", true }, { "--fir-half-width", true }, { "--fir-tolerance", true },
                                 { "--order", true },  { "--device", true },         { "--verify", false },
                                 { "--quiet", false } };
  AddStreamOptionSpecs(specs);
  const ParsedArguments parsed = ParseArguments(args, specs);
  PrefilterOptions      options;
  ParseInputAndOutput(parsed, CommandName, options.Input, options.Output);

  const std::string method = parsed.Get("--method", "recursive");
  if (method == "recursive" || method == "iir")
  {
    options.Method = itk::CudaBSplinePrefilterMethod::Recursive;
  }
  else if (method == "fir")
  {
    options.Method = itk::CudaBSplinePrefilterMethod::FIR;
  }
  else
  {
    throw UsageError("--method: unknown method '" + method + "' (expected recursive, iir or fir)");
  }

  if (parsed.Has("--fir-half-width"))
  {
    options.HasFIRHalfWidth = true;
    options.FIRHalfWidth =
      static_cast<unsigned int>(ParseInteger("--fir-half-width", parsed.Get("--fir-half-width"), 0, MaxFIRHalfWidth));
  }
  if (parsed.Has("--fir-tolerance"))
  {
    options.HasFIRTolerance = true;
    options.FIRTolerance = ParseReal("--fir-tolerance", parsed.Get("--fir-tolerance"), 0.0, 1.0);
  }
  if (options.HasFIRHalfWidth && options.HasFIRTolerance)
  {
    throw UsageError("give --fir-half-width or --fir-tolerance, not both");
  }
  if ((options.HasFIRHalfWidth || options.HasFIRTolerance) && options.Method != itk::CudaBSplinePrefilterMethod::FIR)
  {
    throw UsageError(std::string(options.HasFIRHalfWidth ? "--fir-half-width" : "--fir-tolerance") +
                     " applies to --method fir only");
  }

  if (parsed.Has("--order"))
  {
    options.SplineOrder = static_cast<unsigned int>(ParseInteger("--order", parsed.Get("--order"), 0, 5));
  }
  if (options.Method == itk::CudaBSplinePrefilterMethod::FIR && options.SplineOrder != 3)
  {
    throw UsageError("--method fir is defined for cubic splines only (--order 3), not --order " +
                     std::to_string(options.SplineOrder));
  }

  options.ExecutionMode = ParseDeviceOption(parsed);
  options.Verify = parsed.Has("--verify");
  options.Quiet = parsed.Has("--quiet");
  options.Streaming = ParseStreamOptions(parsed, options.Verify);
  if (options.Streaming.Stream && options.Method != itk::CudaBSplinePrefilterMethod::FIR)
  {
    throw UsageError("--stream: the recursive prefilter filters whole lines along every axis, so it needs the whole "
                     "image; --method fir (a halo of K planes) streams");
  }
  return options;
}

/** ITK's own BSplineDecompositionImageFilter, created without the object
 * factory so that a registered CudaBSplineDecompositionImageFilterFactory
 * cannot substitute the filter under test. */
template <typename TInputImage, typename TOutputImage>
class ReferenceBSplineDecomposition : public itk::BSplineDecompositionImageFilter<TInputImage, TOutputImage>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(ReferenceBSplineDecomposition);

  using Self = ReferenceBSplineDecomposition;
  using Superclass = itk::BSplineDecompositionImageFilter<TInputImage, TOutputImage>;
  using Pointer = itk::SmartPointer<Self>;
  itkFactorylessNewMacro(Self);
  itkTypeMacro(ReferenceBSplineDecomposition, BSplineDecompositionImageFilter);

protected:
  ReferenceBSplineDecomposition() = default;
  ~ReferenceBSplineDecomposition() override = default;
};

/** --verify: reads OUT back and compares it with ITK's filter on the same
 * input. Prints one line; returns the exit status. */
template <typename TInputImage, typename TOutputImage>
int
VerifyAgainstITK(const TInputImage * input, const PrefilterOptions & options)
{
  const auto written = ReadImageFile<TOutputImage>(options.Output);
  if (written->GetLargestPossibleRegion().GetSize() != input->GetLargestPossibleRegion().GetSize())
  {
    throw RuntimeFailure("--verify: '" + options.Output + "' was read back with size " +
                         SizeToString(written->GetLargestPossibleRegion().GetSize()) + ", not " +
                         SizeToString(input->GetLargestPossibleRegion().GetSize()));
  }
  auto reference = ReferenceBSplineDecomposition<TInputImage, TOutputImage>::New();
  reference->SetSplineOrder(options.SplineOrder);
  reference->SetInput(input);
  try
  {
    reference->Update();
  }
  catch (const itk::ExceptionObject & e)
  {
    throw RuntimeFailure("--verify: ITK's BSplineDecompositionImageFilter failed: " + ExceptionMessage(e));
  }
  const double range = DynamicRange(input);
  const double relative = LargestDifference(written.GetPointer(), reference->GetOutput()) / range;
  const bool   passed = relative <= VerifyTolerance;
  std::cout << "verify: largest |OUT - itk::BSplineDecompositionImageFilter| is " << std::setprecision(3) << relative
            << " of the input's range " << range << " (limit " << VerifyTolerance
            << "): " << (passed ? "passed" : "FAILED") << std::endl;
  if (!passed)
  {
    std::ostringstream message;
    message << "--verify: the output differs from ITK's BSplineDecompositionImageFilter by " << std::setprecision(3)
            << relative << " of the input's range, more than " << VerifyTolerance;
    PrintError(message.str());
    return ExitFailure;
  }
  return ExitSuccess;
}

template <unsigned int VDimension>
int
RunPrefilter(const PrefilterOptions & options)
{
  using InputImageType = itk::Image<float, VDimension>;
  using OutputImageType = itk::Image<float, VDimension>;
  using FilterType = itk::CudaBSplineDecompositionImageFilter<InputImageType, OutputImageType>;

  auto filter = FilterType::New();
  filter->SetSplineOrder(options.SplineOrder);
  filter->SetMethod(options.Method);
  if (options.HasFIRHalfWidth)
  {
    filter->SetFIRHalfWidth(options.FIRHalfWidth);
  }
  if (options.HasFIRTolerance)
  {
    filter->SetFIRTolerance(options.FIRTolerance);
  }
  filter->SetExecutionMode(options.ExecutionMode);
  if (options.ExecutionMode == itk::CudaExecutionMode::GPU)
  {
    CheckGPURequest(filter->GetGPUUnsupportedReason());
  }
  else if (options.ExecutionMode == itk::CudaExecutionMode::Automatic)
  {
    cif::Runtime::IsDeviceAvailable(); // discover the device now, outside the timing
  }

  auto describe = [&]
  {
    std::ostringstream method;
    method << "spline order " << options.SplineOrder << ", ";
    if (options.Method == itk::CudaBSplinePrefilterMethod::FIR)
    {
      method << "FIR with half-width " << filter->GetFIRHalfWidth();
    }
    else
    {
      method << "recursive";
    }
    return method.str();
  };
  if (options.Streaming.Stream)
  {
    return RunStreamed<InputImageType, OutputImageType>(filter.GetPointer(),
                                                        CommandName,
                                                        options.Input,
                                                        options.Output,
                                                        options.Streaming.Memory,
                                                        options.Quiet,
                                                        describe);
  }
  const auto input = ReadImageFile<InputImageType>(options.Input);
  filter->SetInput(input);

  const double milliseconds = UpdateTimed(filter, CommandName, options.Quiet);

  std::cout << CommandName << ": " << SizeToString(input->GetLargestPossibleRegion().GetSize()) << " pixels, "
            << describe() << "; ran on " << filter->GetLastExecutionReport().Message << "; filter time " << std::fixed
            << std::setprecision(3) << milliseconds << " ms" << std::endl;
  std::cout.unsetf(std::ios_base::floatfield);

  WriteImageFile(filter->GetOutput(), options.Output);

  if (options.Verify)
  {
    return VerifyAgainstITK<InputImageType, OutputImageType>(input.GetPointer(), options);
  }
  return ExitSuccess;
}

} // namespace

void
BSplinePrefilterUsage(std::ostream & os)
{
  os << "Usage: " << ToolName << ' ' << CommandName << " IN OUT [options]\n"
     << "\n"
     << "Computes the coefficients of the B-spline that interpolates the image IN\n"
     << "(2D or 3D, read as float) and writes them to OUT as float, like ITK's\n"
     << "BSplineDecompositionImageFilter (mirror boundary), on the GPU or the CPU.\n"
     << "\n"
     << "Arguments:\n"
     << "  IN                   input image: .nii.gz, .nii, .nrrd, .nhdr, .mha, .mhd, .png\n"
     << "  OUT                  output image: .nii.gz, .nii, .nrrd, .nhdr, .mha, .mhd\n"
     << "                       (not .png: it cannot hold float coefficients)\n"
     << "\n"
     << "Options:\n"
     << "  --method M           recursive (default; alias iir): exact recursion over\n"
     << "                       whole lines, as ITK; fir: truncated convolution, local\n"
     << "                       (cubic only)\n"
     << "  --fir-half-width K   FIR half-width: 2K + 1 taps, 0 to " << MaxFIRHalfWidth << '\n'
     << "  --fir-tolerance T    FIR truncation error per axis, relative to the largest\n"
     << "                       input magnitude, in (0, 1); picks K (default 1e-7: K = 13)\n"
     << "  --order N            spline order, 0 to 5 (default 3; the GPU runs order 3);\n"
     << "                       also spelt --spline-order\n"
     << "  --device D           auto (default): the GPU when it can run the job, else\n"
     << "                       the CPU; gpu: the GPU only; cpu: the CPU only\n"
     << "  --verify             read OUT back and compare it with ITK's own\n"
     << "                       BSplineDecompositionImageFilter; fail when they differ\n"
     << "                       by more than " << VerifyTolerance << " of the input's range\n";
  PrintStreamOptionHelp(os);
  os << "                       (--method fir only: the recursive filter needs whole\n"
     << "                       lines along every axis)\n";
  PrintQuietAndHelpOptionHelp(os);
  os << "\n"
     << "Prints the device that ran the filter and the filter's time.\n"
     << "Exit status: 0 done; 1 failure (reading, filtering, writing, --verify);\n"
     << "2 bad command line; 77 --device gpu without a usable GPU (1 instead when\n"
     << "the environment sets CUDAIMAGEFILTERS_REQUIRE_GPU=1).\n";
}

int
BSplinePrefilterMain(const std::vector<std::string> & args)
{
  if (HasHelpOption(args))
  {
    BSplinePrefilterUsage(std::cout);
    return ExitSuccess;
  }
  PrefilterOptions options = ParsePrefilterOptions(args);
  CheckFloatImageOutput(options.Output);

  ImageFileInformation information;
  const unsigned int   dimension = CheckScalarImageInput(options.Input, CommandName, options.Quiet, &information);
  if (options.Method == itk::CudaBSplinePrefilterMethod::FIR)
  {
    // read as float: 4 bytes per voxel in memory
    StreamLargeInput(options.Streaming,
                     information.Voxels() * sizeof(float),
                     options.Input,
                     options.Output,
                     options.Verify,
                     options.Quiet);
  }
  return dimension == 2 ? RunPrefilter<2>(options) : RunPrefilter<3>(options);
}

} // namespace tool
} // namespace cif
