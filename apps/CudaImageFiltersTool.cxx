/*=========================================================================
 *  CudaImageFilters: the `cudaimagefilters` command-line tool.
 *
 *  main() looks the subcommand up in a table and turns its exceptions into
 *  one-line messages and exit statuses; each subcommand lives in a source
 *  file of its own (see Subcommand in ToolCommon.h).
 *=========================================================================*/
#include "DescribedCommand.h"
#include "ToolCommon.h"

#include "itkConfigure.h"
#include "cif/Runtime.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <exception>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <new>

#ifndef CUDAIMAGEFILTERS_VERSION
#  define CUDAIMAGEFILTERS_VERSION "unknown"
#endif

namespace cif
{
namespace tool
{
namespace
{

int
InfoMain(const std::vector<std::string> & args);
void
InfoUsage(std::ostream & os);

const Subcommand Subcommands[] = {
  { "demons", "demons registration: a displacement field", DemonsMain, DemonsUsage },
  { "grbf", "Gaussian RBF interpolation onto a zoomed or reference grid", GaussianRBFMain, GaussianRBFUsage },
  { "info", "whether CUDA is compiled in, and the GPU", InfoMain, InfoUsage },
  { "kernel-superposition",
    "spatially varying Gaussian blur, a sigma per pixel",
    KernelSuperpositionMain,
    KernelSuperpositionUsage },
  { "register", "image registration (ITK's v4 framework): a transform file", RegisterMain, RegisterUsage },
  { "resample", "an image resampled through a transform onto a grid", ResampleMain, ResampleUsage },
  { "segment", "filter, threshold and pack on the GPU: a packed mask", SegmentMain, SegmentUsage },
};

void
PrintUsage(std::ostream & os)
{
  os << "Usage: " << ToolName << " COMMAND [arguments]\n"
     << "       " << ToolName << " COMMAND --help\n"
     << "\n"
     << "Image filters of the ITK module CudaImageFilters, on the GPU (CUDA) or the CPU.\n"
     << "\n"
     << "Commands:\n";
  // the hand-written subcommands and those generated from the core's
  // descriptions (cif/Filter.h), in one alphabetical list
  std::map<std::string, std::string> commands;
  for (const auto & command : Subcommands)
  {
    commands[command.Name] = command.Summary;
  }
  for (const auto * filter : cif::Filters())
  {
    if (commands.count(filter->command) == 0)
    {
      std::string summary = filter->brief.empty() ? filter->summary.substr(0, filter->summary.find('.')) : filter->brief;
      summary[0] = static_cast<char>(std::tolower(summary[0]));
      commands[filter->command] = summary;
    }
  }
  for (const auto * operation : cif::MaskOperations())
  {
    if (commands.count(operation->command) == 0)
    {
      std::string summary = operation->summary.substr(0, operation->summary.find(':'));
      summary[0] = static_cast<char>(std::tolower(summary[0]));
      commands[operation->command] = summary;
    }
  }
  std::size_t width = std::strlen("-h, --help") + 2;
  for (const auto & command : commands)
  {
    width = std::max(width, command.first.size() + 2);
  }
  for (const auto & command : commands)
  {
    os << "  " << std::left << std::setw(static_cast<int>(width)) << command.first << command.second << '\n';
  }
  os << "\n"
     << "Options:\n"
     << "  " << std::setw(static_cast<int>(width)) << "-h, --help"
     << "print this help\n"
     << "  " << std::setw(static_cast<int>(width)) << "--version"
     << "print the version\n"
     << "\n"
     << "Options of every command (before or after its arguments):\n"
     << "  --compress                 compress every output (else only names that imply it:\n"
     << "                             .nii.gz, .mhd with .zraw)\n"
     << "  --device-memory-limit SIZE at most SIZE bytes of device memory (K, M, G suffixes:\n"
     << "                             4G); images larger than that stream through the GPU\n"
     << "                             in slabs\n"
     << "  --cuda-device N            run on CUDA device N (default: device 0, or the first\n"
     << "                             of CUDA_VISIBLE_DEVICES)\n";
}

void
InfoUsage(std::ostream & os)
{
  os << "Usage: " << ToolName << " info\n"
     << "\n"
     << "Prints the versions, whether CUDA was compiled in, and the GPU that the\n"
     << "filters would use (or why there is none).\n";
}

int
InfoMain(const std::vector<std::string> & args)
{
  if (HasHelpOption(args))
  {
    InfoUsage(std::cout);
    return ExitSuccess;
  }
  const ParsedArguments parsed = ParseArguments(args, {});
  if (!parsed.Positionals.empty())
  {
    throw UsageError("unexpected argument '" + parsed.Positionals[0] + "'");
  }
  std::cout << "CudaImageFilters " << CUDAIMAGEFILTERS_VERSION << " (ITK " << ITK_VERSION_STRING << "."
            << ITK_VERSION_PATCH << ")\n"
            << "CUDA compiled in: " << (cif::Runtime::IsCompiledWithCuda() ? "yes" : "no") << '\n';
  if (cif::Runtime::IsDeviceAvailable())
  {
    std::cout << "GPU: " << cif::Runtime::GetDeviceDescription() << '\n'
              << "GPU memory free: " << std::fixed << std::setprecision(1)
              << static_cast<double>(cif::Runtime::GetFreeMemory()) / (1024.0 * 1024.0 * 1024.0) << " GiB of "
              << static_cast<double>(cif::Runtime::GetTotalMemory()) / (1024.0 * 1024.0 * 1024.0) << " GiB\n";
  }
  else
  {
    std::cout << "GPU: none (" << cif::Runtime::GetUnavailableReason() << ")\n";
  }
  return ExitSuccess;
}

const Subcommand *
FindSubcommand(const std::string & name)
{
  for (const auto & command : Subcommands)
  {
    if (name == command.Name)
    {
      return &command;
    }
  }
  return nullptr;
}

/** A filter the core describes whose subcommand is generated (none of the
 * table's has its name). */
const cif::FilterDescriptor *
FindDescribed(const std::string & name)
{
  for (const auto * filter : cif::Filters())
  {
    if (filter->command == name && FindSubcommand(name) == nullptr)
    {
      return filter;
    }
  }
  return nullptr;
}

/** A packed-mask operation the core describes whose subcommand is
 * generated (none of the table's has its name). */
const cif::MaskOperationDescriptor *
FindMaskOperation(const std::string & name)
{
  for (const auto * operation : cif::MaskOperations())
  {
    if (operation->command == name && FindSubcommand(name) == nullptr)
    {
      return operation;
    }
  }
  return nullptr;
}

int
Run(const std::vector<std::string> & args)
{
  if (args.empty())
  {
    throw UsageError("no command given (see '" + std::string(ToolName) + " --help')");
  }
  const std::string & first = args[0];
  if (first == "-h" || first == "--help")
  {
    PrintUsage(std::cout);
    return ExitSuccess;
  }
  if (first == "--version")
  {
    std::cout << ToolName << ' ' << CUDAIMAGEFILTERS_VERSION << '\n';
    return ExitSuccess;
  }
  if (first == "help")
  {
    // "help COMMAND" is "COMMAND --help".
    if (args.size() < 2)
    {
      PrintUsage(std::cout);
      return ExitSuccess;
    }
    const Subcommand * command = FindSubcommand(args[1]);
    if (command != nullptr)
    {
      command->PrintUsage(std::cout);
      return ExitSuccess;
    }
    if (const cif::FilterDescriptor * filter = FindDescribed(args[1]))
    {
      DescribedUsage(*filter, std::cout);
      return ExitSuccess;
    }
    if (const cif::MaskOperationDescriptor * operation = FindMaskOperation(args[1]))
    {
      MaskOperationUsage(*operation, std::cout);
      return ExitSuccess;
    }
    throw UsageError("unknown command '" + args[1] + "' (see '" + ToolName + " --help')");
  }
  const Subcommand *            command = FindSubcommand(first);
  const cif::FilterDescriptor *        described = command == nullptr ? FindDescribed(first) : nullptr;
  const cif::MaskOperationDescriptor * operation =
    command == nullptr && described == nullptr ? FindMaskOperation(first) : nullptr;
  if (command == nullptr && described == nullptr && operation == nullptr)
  {
    const bool looksLikeOption = !first.empty() && first[0] == '-';
    throw UsageError(std::string(looksLikeOption ? "unknown option '" : "unknown command '") + first + "' (see '" +
                     ToolName + " --help')");
  }
  // --compress holds for every command's outputs (CompressOutput);
  // --device-memory-limit caps the device memory of every GPU filter
  // --cuda-device picks the GPU for the whole command
  std::vector<std::string> commandArgs;
  int                      cudaDevice = -1;
  for (auto it = args.begin() + 1; it != args.end(); ++it)
  {
    if (*it == "--")
    {
      commandArgs.insert(commandArgs.end(), it, args.end());
      break;
    }
    if (*it == "--compress")
    {
      SetCompressOutputs(true);
      continue;
    }
    if (*it == "--device-memory-limit")
    {
      if (it + 1 == args.end())
      {
        throw UsageError("--device-memory-limit needs a size (bytes, or with K, M, G: 4G)");
      }
      ++it;
      cif::Runtime::SetAllocationLimit(ParseByteSize("--device-memory-limit", *it));
      continue;
    }
    if (*it == "--cuda-device")
    {
      ++it;
      const std::string text = it != args.end() ? *it : std::string();
      char *            end = nullptr;
      const long        value = std::strtol(text.c_str(), &end, 10);
      if (text.empty() || *end != '\0' || value < 0 || value > 1024)
      {
        throw UsageError("--cuda-device needs a device index (0, 1, ...)");
      }
      cudaDevice = static_cast<int>(value);
      if (cif::Runtime::IsDeviceAvailable() && !cif::Runtime::GetDeviceProblem(cudaDevice).empty())
      {
        throw UsageError("--cuda-device: " + cif::Runtime::GetDeviceProblem(cudaDevice));
      }
      continue;
    }
    commandArgs.push_back(*it);
  }
  const cif::DeviceScope device(cudaDevice); // nothing without a GPU, or without the option
  try
  {
    return command != nullptr     ? command->Main(commandArgs)
           : described != nullptr ? DescribedMain(*described, commandArgs)
                                  : MaskOperationMain(*operation, commandArgs);
  }
  catch (const UsageError & e)
  {
    throw UsageError(std::string(e.what()) + " (see '" + ToolName + ' ' + first + " --help')");
  }
}

} // namespace
} // namespace tool
} // namespace cif

int
main(int argc, char * argv[])
{
  using namespace cif::tool;
  try
  {
    return Run(std::vector<std::string>(argv + 1, argv + argc));
  }
  catch (const UsageError & e)
  {
    PrintError(e.what());
    return ExitUsage;
  }
  catch (const Unavailable & e)
  {
    PrintError(e.what());
    return ExitSkipped;
  }
  catch (const RuntimeFailure & e)
  {
    PrintError(e.what());
    return ExitFailure;
  }
  catch (const itk::ExceptionObject & e)
  {
    PrintError(ExceptionMessage(e));
    return ExitFailure;
  }
  catch (const std::bad_alloc &)
  {
    PrintError("out of memory");
    return ExitFailure;
  }
  catch (const std::exception & e)
  {
    PrintError(e.what());
    return ExitFailure;
  }
  catch (...)
  {
    PrintError("unexpected failure");
    return ExitFailure;
  }
}
