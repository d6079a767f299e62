/*=========================================================================
 *  CudaImageFilters: the command line of the subcommands median,
 *  bilateral and rotating-mask.
 *=========================================================================*/
#include "SmoothingCommand.h"

#include "cif/Filter.h"

#include <stdexcept>

namespace cif
{
namespace tool
{

SmoothingCommandOptions
ParseSmoothingCommand(const std::vector<std::string> & args, SmoothingKind kind, const char * command)
{
  std::vector<OptionSpec> specs;
  switch (kind)
  {
    case SmoothingKind::Median:
      specs.push_back({ "--radius", true });
      specs.push_back({ "--kernel", true });
      break;
    case SmoothingKind::Bilateral:
      AppendSmoothingOptionSpecs(specs);
      break;
    case SmoothingKind::RotatingMask:
      specs.push_back({ "--iterations", true });
      break;
    case SmoothingKind::None:
      break;
  }
  specs.push_back({ "--device", true });
  specs.push_back({ "--verify", false });
  specs.push_back({ "--quiet", false });
  AddStreamOptionSpecs(specs);
  const ParsedArguments parsed = ParseArguments(args, specs);

  SmoothingCommandOptions options;
  options.Command = command;
  ParseInputAndOutput(parsed, command, options.Input, options.Output);
  options.Smoothing = ParseSmoothingSettings(parsed, kind, command, 1, -1);
  if (kind == SmoothingKind::Median && parsed.Has("--kernel"))
  {
    try
    {
      options.Smoothing.MedianKernel =
        static_cast<int>(cif::ChoiceValue(cif::FindFilter("median"), "kernel", parsed.Get("--kernel")));
    }
    catch (const std::invalid_argument & e)
    {
      throw UsageError(std::string("--kernel: ") + e.what());
    }
  }
  options.ExecutionMode = ParseDeviceOption(parsed);
  options.Verify = parsed.Has("--verify");
  options.Quiet = parsed.Has("--quiet");
  options.Streaming = ParseStreamOptions(parsed, options.Verify);
  if (kind == SmoothingKind::Bilateral && options.Verify && options.Smoothing.Iterations != 1)
  {
    throw UsageError("--verify compares with ITK's BilateralImageFilter, which has no iterations: give --iterations 1 "
                     "(or leave it out) with --verify");
  }
  return options;
}

} // namespace tool
} // namespace cif
