/*=========================================================================
 *  CudaImageFilters: what the subcommands median, bilateral and
 *  rotating-mask share: IN is filtered in its own pixel type and written to
 *  OUT; --verify reads OUT back and compares it with the stage's reference
 *  (FilterStages.h).
 *=========================================================================*/
#ifndef SmoothingCommand_h
#define SmoothingCommand_h

#include "FilterStages.h"

#include "cif/Runtime.h"
#include "itkCudaExecution.h"

#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

namespace cif
{
namespace tool
{

struct SmoothingCommandOptions
{
  std::string            Command; ///< "median", "bilateral", "rotating-mask"
  std::string            Input;
  std::string            Output;
  SmoothingSettings      Smoothing;
  itk::CudaExecutionMode ExecutionMode{ itk::CudaExecutionMode::Automatic };
  bool                   Verify{ false };
  bool                   Quiet{ false };
  /** --stream: read, filter and write in pieces through ITK's streaming
   * (or automatically for inputs larger than half the RAM); the pieces
   * hold about Streaming.Memory bytes of input and output (--stream-memory). */
  StreamSettings Streaming;
};

/** Parses the command line of a smoothing subcommand: the options of
 * `kind` (median: --radius; bilateral: --domain-sigma, --range-sigma,
 * --radius, --iterations; rotating-mask: --iterations) and --device,
 * --verify, --quiet. */
SmoothingCommandOptions
ParseSmoothingCommand(const std::vector<std::string> & args, SmoothingKind kind, const char * command);

/** Filters IN with the module's filter of kind K in pixel type T, D
 * dimensions; writes OUT; --verify. Returns the exit status. */
template <SmoothingKind K, typename T, unsigned int D>
int
RunSmoothing(const SmoothingCommandOptions & options)
{
  using ImageType = itk::Image<T, D>;
  auto filter = MakeSmoothingFilter<K, ImageType, ImageType>(options.Smoothing, options.ExecutionMode);
  if (options.ExecutionMode == itk::CudaExecutionMode::GPU)
  {
    CheckGPURequest(filter->GetGPUUnsupportedReason());
  }
  else if (options.ExecutionMode == itk::CudaExecutionMode::Automatic)
  {
    cif::Runtime::IsDeviceAvailable(); // discover the device now, outside the timing
  }

  if (options.Streaming.Stream)
  {
    return RunStreamed<ImageType>(filter.GetPointer(),
                                  options.Command,
                                  options.Input,
                                  options.Output,
                                  options.Streaming.Memory,
                                  options.Quiet,
                                  [&] { return DescribeSmoothing<K>(filter.GetPointer(), options.Smoothing); });
  }
  const auto input = ReadImageFile<ImageType>(options.Input);
  filter->SetInput(input);
  const double milliseconds = UpdateTimed(filter, options.Command.c_str(), options.Quiet);

  std::cout << options.Command << ": " << SizeToString(input->GetLargestPossibleRegion().GetSize()) << " pixels ("
            << itk::CudaPixelTypeName<T>() << "); " << DescribeSmoothing<K>(filter.GetPointer(), options.Smoothing)
            << "; ran on " << filter->GetLastExecutionReport().Message << "; filter time " << std::fixed
            << std::setprecision(3) << milliseconds << " ms" << std::endl;
  std::cout.unsetf(std::ios_base::floatfield);
  std::cout << std::setprecision(6);

  WriteImageFile(filter->GetOutput(), options.Output);

  if (!options.Verify)
  {
    return ExitSuccess;
  }
  const auto              written = ReadImageFile<ImageType>(options.Output);
  std::vector<StageCheck> checks;
  checks.push_back(CheckSmoothingStage<K, T, D>(input.GetPointer(), written.GetPointer(), options.Smoothing, "OUT"));
  if constexpr (K == SmoothingKind::RotatingMask)
  {
    if (filter->GetLastExecutedOn() == itk::CudaExecutedOn::GPU)
    {
      checks.push_back(
        CheckRotatingMaskAgainstCPUCore<T, D>(input.GetPointer(), written.GetPointer(), options.Smoothing, "OUT"));
    }
  }
  for (const auto & check : checks)
  {
    PrintStageCheck(check);
  }
  return StageChecksStatus(checks);
}

/** Main of a smoothing subcommand after --help: parses, checks the output
 * and the input's header before any work, then dispatches on the pixel
 * type and dimension. */
template <SmoothingKind K>
int
SmoothingCommandMain(const std::vector<std::string> & args, const char * command)
{
  SmoothingCommandOptions options = ParseSmoothingCommand(args, K, command);
  CheckImageOutput(options.Output);
  const FilterInput input = DescribeFilterInput(options.Input, command);
  // an input larger than half the RAM is streamed when its format allows
  StreamLargeInput(options.Streaming,
                   input.Information.Voxels() * PixelBytes(input.Pixel),
                   options.Input,
                   options.Output,
                   options.Verify,
                   options.Quiet);
  CheckSmoothingDimension(options.Smoothing, input.Dimension, options.Input);
  CheckTypedImageOutput(options.Output, input.Pixel, input.Dimension, "OUT");
  if (K == SmoothingKind::RotatingMask && options.Verify && input.Pixel == PixelKind::Float &&
      options.Smoothing.Iterations != 1)
  {
    throw UsageError("--verify checks float images for --iterations 1 only (in float, near-ties between "
                     "sub-regions may be decided either way, and iterated results then part)");
  }
  return RunOnFilterInput(options.Input,
                          input,
                          options.ExecutionMode,
                          options.Quiet,
                          [&](auto pixel, auto dimension)
                          {
                            using T = typename decltype(pixel)::Type;
                            constexpr unsigned int D = decltype(dimension)::value;
                            return RunSmoothing<K, T, D>(options);
                          });
}

} // namespace tool
} // namespace cif

#endif
