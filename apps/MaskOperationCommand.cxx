/*=========================================================================
 *  CudaImageFilters: the subcommands of the packed-mask operations the
 *  core describes (cif::MaskOperationDescriptor, cif/PackedMask.h): their
 *  arguments, options, help and value checks come from the description.
 *  An operation whose command is a described filter's (the threshold's
 *  packed mask) is that subcommand's --packed variant
 *  (PackedVariantMain), with the filter's option spellings.
 *
 *    cudaimagefilters unpack-mask MASK OUT [--inside-value V]
 *                     [--outside-value V] [--output-type T] [--device D]
 *    cudaimagefilters apply-packed-mask IN MASK OUT [--outside-value V]
 *
 *  One positional argument per input operand of the description (IN for an
 *  image, MASK for a packed-mask file written by `threshold --packed` or
 *  WritePackedMask), then OUT: an image, or a packed mask for an operation
 *  whose output is one. The operation runs through its ITK class.
 *=========================================================================*/
#include "DescribedCommand.h"
#include "FilterCommon.h"
#include "FilterStages.h"

#include "cif/PackedMask.h"
#include "cif/Runtime.h"
#include "itkCudaApplyPackedMaskImageFilter.h"
#include "itkCudaExecution.h"
#include "itkCudaPackedMaskIO.h"
#include "itkCudaThresholdToPackedMaskImageFilter.h"
#include "itkCudaUnpackMaskImageFilter.h"

#include <algorithm>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

namespace cif
{
namespace tool
{
namespace
{
const char *
ArgumentOf(cif::MaskOperand operand)
{
  return operand == cif::MaskOperand::Words ? "MASK" : "IN";
}

/** The output's pixel type is an option when no input is an image. */
bool
HasImageInput(const cif::MaskOperationDescriptor & operation)
{
  for (const auto operand : operation.inputs)
  {
    if (operand == cif::MaskOperand::Image)
    {
      return true;
    }
  }
  return false;
}

/** --output-type: NumPy's names, as Python's dtype keyword. */
PixelKind
ParseOutputType(const std::string & text)
{
  const std::map<std::string, PixelKind> kinds{ { "uint8", PixelKind::UnsignedChar },
                                                { "int16", PixelKind::Short },
                                                { "uint16", PixelKind::UnsignedShort },
                                                { "float32", PixelKind::Float } };
  const auto it = kinds.find(text);
  if (it == kinds.end())
  {
    throw UsageError("--output-type: unknown type '" + text + "' (expected uint8, int16, uint16 or float32)");
  }
  return it->second;
}

struct MaskRun
{
  const cif::MaskOperationDescriptor * Operation{ nullptr };
  std::vector<std::string>             Inputs; ///< one file per input operand
  std::string                          Output;
  std::map<std::string, double>        Given; ///< the values given on the command line
  itk::CudaExecutionMode               Mode{ itk::CudaExecutionMode::Automatic };
  bool                                 Quiet{ false };
  bool                                 Verify{ false };
  /** The bounds as given (IsRealBound), turned into the pixel type's by
   * the run; absent: none given. */
  std::optional<ThresholdSettings> Bounds;
};

/** Whether --verify can check the operation: the threshold's packed mask,
 * against ITK's BinaryThresholdImageFilter (the threshold's verifier,
 * DescribedVerify.h). */
bool
CanVerify(const cif::MaskOperationDescriptor & operation)
{
  return operation.function == "threshold_to_packed_mask";
}

template <unsigned int D>
typename itk::CudaPackedMask<D>::Pointer
ReadMask(const std::string & fileName)
{
  try
  {
    return itk::ReadPackedMask<D>(fileName);
  }
  catch (const itk::ExceptionObject & e)
  {
    throw RuntimeFailure("cannot read the packed mask '" + fileName + "': " + ExceptionMessage(e));
  }
}

/** The ITK class of the operation with its operands and the values given
 * (absent ones keep the class's defaults, ITK's): the one place that names
 * the classes. */
template <typename T, unsigned int D>
itk::ProcessObject::Pointer
MakeFilter(const MaskRun & run)
{
  using ImageType = itk::Image<T, D>;
  const auto given = [&](const char * name, const std::function<void(T)> & set)
  {
    const auto it = run.Given.find(name);
    if (it != run.Given.end())
    {
      set(cif::AsValueOf<T>(it->second));
    }
  };
  const std::string & function = run.Operation->function;
  if (function == "threshold_to_packed_mask")
  {
    auto filter = itk::CudaThresholdToPackedMaskImageFilter<ImageType>::New();
    filter->SetInput(ReadImageFile<ImageType>(run.Inputs[0]));
    given("lower_threshold", [&](T v) { filter->SetLowerThreshold(v); });
    given("upper_threshold", [&](T v) { filter->SetUpperThreshold(v); });
    return filter.GetPointer();
  }
  if (function == "unpack_mask")
  {
    auto filter = itk::CudaUnpackMaskImageFilter<ImageType>::New();
    filter->SetInput(ReadMask<D>(run.Inputs[0]));
    given("inside_value", [&](T v) { filter->SetInsideValue(v); });
    given("outside_value", [&](T v) { filter->SetOutsideValue(v); });
    return filter.GetPointer();
  }
  if (function == "apply_packed_mask")
  {
    auto filter = itk::CudaApplyPackedMaskImageFilter<ImageType>::New();
    filter->SetInput(ReadImageFile<ImageType>(run.Inputs[0]));
    filter->SetMaskImage(ReadMask<D>(run.Inputs[1]));
    given("outside_value", [&](T v) { filter->SetOutsideValue(v); });
    return filter.GetPointer();
  }
  throw RuntimeFailure("no ITK class runs " + function + " in this tool");
}

/** "N of M pixels inside (x%)". */
std::string
InsideSummary(std::size_t inside, std::size_t count)
{
  std::ostringstream text;
  text << inside << " of " << count << " pixels inside (" << std::fixed << std::setprecision(1)
       << (count == 0 ? 0.0 : 100.0 * static_cast<double>(inside) / static_cast<double>(count)) << "%)";
  return text.str();
}

template <typename T, unsigned int D>
int
RunMaskOperation(const MaskRun & run)
{
  using ImageType = itk::Image<T, D>;
  const cif::MaskOperationDescriptor & operation = *run.Operation;
  // the values in the image's pixel type, as the ITK class holds them (the
  // description's rule; the class checks the whole call again)
  for (const auto & value : run.Given)
  {
    if (!cif::IsValueOf<T>(value.second))
    {
      std::ostringstream why;
      why << OptionOf(value.first) << ": " << value.second << " is not a value of the image's pixel type "
          << itk::CudaPixelTypeName<T>();
      throw UsageError(why.str());
    }
  }
  const itk::ProcessObject::Pointer filter = MakeFilter<T, D>(run);
  auto * control = dynamic_cast<itk::CudaExecutionControl *>(filter.GetPointer());
  control->SetExecutionMode(run.Mode);
  StartDeviceOutsideTiming(run.Mode); // the CUDA context now, outside the timing
  const double milliseconds = UpdateTimed(filter.GetPointer(), operation.command.c_str(), run.Quiet);
  std::ostringstream settings;
  for (const auto & value : operation.values)
  {
    const auto it = run.Given.find(value.name);
    settings << "; " << value.name << ' ';
    if (it == run.Given.end())
    {
      settings << "default";
    }
    else
    {
      settings << it->second;
    }
  }
  const auto report = [&](const std::string & size, const std::string & what)
  {
    std::cout << operation.command << ": " << size << " pixels (" << itk::CudaPixelTypeName<T>() << ")"
              << settings.str() << what << "; ran on " << control->GetLastExecutionReport().Message
              << "; filter time " << std::fixed << std::setprecision(3) << milliseconds << " ms" << std::endl;
    std::cout.unsetf(std::ios_base::floatfield);
  };
  if (operation.output == cif::MaskOperand::Image)
  {
    const auto * output = dynamic_cast<const ImageType *>(filter->GetOutputs()[0].GetPointer());
    report(SizeToString(output->GetLargestPossibleRegion().GetSize()), "");
    WriteImageFile(output, run.Output);
    return ExitSuccess;
  }
  const auto * mask = dynamic_cast<const itk::CudaPackedMask<D> *>(filter->GetOutputs()[0].GetPointer());
  const auto   region = mask->GetMaskRegion();
  std::ostringstream words;
  words << "; " << InsideSummary(mask->CountInside(), region.GetNumberOfPixels()) << "; packed mask of "
        << mask->GetNumberOfWords() << " words (" << mask->GetPackedSizeInBytes() << " bytes, 1 bit per voxel)";
  report(SizeToString(region.GetSize()), words.str());
  try
  {
    itk::WritePackedMask<D>(mask, run.Output, CompressOutput(run.Output));
  }
  catch (const itk::ExceptionObject & e)
  {
    throw RuntimeFailure("cannot write '" + run.Output + "': " + ExceptionMessage(e));
  }
  if (!run.Verify)
  {
    return ExitSuccess;
  }
  // the threshold's packed mask (CanVerify), against ITK's filter on IN read
  // again, with the thresholds it ran with (ITK's defaults: the type's range)
  const auto value = [&](const char * name, T absent)
  {
    const auto it = run.Given.find(name);
    return it == run.Given.end() ? absent : cif::AsValueOf<T>(it->second);
  };
  const T          lower = value("lower_threshold", std::numeric_limits<T>::lowest());
  const T          upper = value("upper_threshold", std::numeric_limits<T>::max());
  const auto       input = ReadImageFile<ImageType>(run.Inputs[0]);
  const StageCheck check = CheckPackedMaskFile<T, D>(
    run.Output, input.GetPointer(), lower, upper, RuleBounds(run.Bounds ? &*run.Bounds : nullptr, lower, upper));
  PrintStageCheck(check);
  return StageChecksStatus({ check });
}
} // namespace

void
MaskOperationUsage(const cif::MaskOperationDescriptor & operation, std::ostream & os)
{
  os << "Usage: " << ToolName << ' ' << operation.command;
  for (const auto operand : operation.inputs)
  {
    os << ' ' << ArgumentOf(operand);
  }
  os << " OUT [options]\n\n";
  PrintWrapped(os, operation.summary, 0);
  os << "\nArguments:\n";
  for (const auto operand : operation.inputs)
  {
    if (operand == cif::MaskOperand::Words)
    {
      PrintOptionHelp(os,
                      "  MASK",
                      std::string("a packed mask (written by threshold --packed or WritePackedMask: ") +
                        PackedMaskFormats + "), of IN's grid where there is an IN");
    }
    else
    {
      PrintInputArgumentHelp(os);
    }
  }
  if (HasImageInput(operation))
  {
    PrintImageOutputArgumentHelp(os);
  }
  else
  {
    PrintOptionHelp(os,
                    "  OUT",
                    "output label image of the --output-type, on MASK's grid: .nii.gz, .nii, .nrrd, .nhdr, .mha, "
                    ".mhd, or .png (2D uint8 or uint16 only)");
  }
  os << "\nOptions:\n";
  for (const auto & value : operation.values)
  {
    PrintOptionHelp(os, "  " + OptionOf(value.name) + " V", value.help);
  }
  if (!HasImageInput(operation))
  {
    PrintOptionHelp(os, "  --output-type T", "OUT's pixel type: uint8, int16, uint16 or float32 (default uint8)");
  }
  PrintDeviceOptionHelp(os);
  PrintQuietAndHelpOptionHelp(os);
  PrintGeneratedFooter(os, operation.itkClass, operation.function);
}

int
MaskOperationMain(const cif::MaskOperationDescriptor & operation, const std::vector<std::string> & args)
{
  if (HasHelpOption(args))
  {
    MaskOperationUsage(operation, std::cout);
    return ExitSuccess;
  }
  std::vector<OptionSpec> specs;
  for (const auto & value : operation.values)
  {
    specs.push_back({ OptionOf(value.name), true });
  }
  const bool chooseOutput = !HasImageInput(operation);
  if (chooseOutput)
  {
    specs.push_back({ "--output-type", true });
  }
  specs.push_back({ "--device", true });
  specs.push_back({ "--quiet", false });
  if (CanVerify(operation))
  {
    specs.push_back({ "--verify", false });
  }
  const ParsedArguments parsed = ParseArguments(args, specs);
  MaskRun               run;
  run.Operation = &operation;
  const std::size_t count = operation.inputs.size() + 1;
  if (parsed.Positionals.size() != count)
  {
    std::string expected;
    for (const auto operand : operation.inputs)
    {
      expected += std::string(ArgumentOf(operand)) + " ";
    }
    throw UsageError(operation.command + " needs " + expected + "OUT: " + std::to_string(count) +
                     " file names, not " + std::to_string(parsed.Positionals.size()));
  }
  run.Inputs.assign(parsed.Positionals.begin(), parsed.Positionals.end() - 1);
  run.Output = parsed.Positionals.back();
  for (const auto & value : operation.values)
  {
    const std::string option = OptionOf(value.name);
    if (parsed.Has(option))
    {
      run.Given[value.name] = ParseReal(option,
                                        parsed.Get(option),
                                        -std::numeric_limits<double>::infinity(),
                                        std::numeric_limits<double>::infinity());
    }
  }
  if (run.Given.count("lower_threshold") != 0 || run.Given.count("upper_threshold") != 0)
  {
    const auto text = [&](const char * name) { return parsed.Has(OptionOf(name)) ? parsed.Get(OptionOf(name)) : ""; };
    run.Bounds = RealBoundsOf(
      OptionOf("lower_threshold"), text("lower_threshold"), OptionOf("upper_threshold"), text("upper_threshold"));
  }
  run.Mode = ParseDeviceOption(parsed);
  run.Quiet = parsed.Has("--quiet");
  run.Verify = CanVerify(operation) && parsed.Has("--verify");
  if (operation.output == cif::MaskOperand::Words)
  {
    CheckPackedMaskOutput(run.Output);
  }
  else
  {
    CheckImageOutput(run.Output);
  }
  // the pixel type and dimension: the first image input's, or the output
  // type chosen and the mask's dimension
  FilterInput input;
  std::string inputFile;
  for (std::size_t i = 0; i < operation.inputs.size() && inputFile.empty(); ++i)
  {
    if (operation.inputs[i] == cif::MaskOperand::Image)
    {
      inputFile = run.Inputs[i];
      input = DescribeFilterInput(inputFile, operation.command);
    }
  }
  if (chooseOutput)
  {
    inputFile = run.Inputs[0];
    input.Information = ReadImageFileInformation(inputFile);
    input.Dimension = EffectiveDimension(input.Information);
    if (input.Dimension != 2 && input.Dimension != 3)
    {
      throw UsageError("'" + inputFile + "' is not a 2D or 3D packed mask");
    }
    input.Pixel = parsed.Has("--output-type") ? ParseOutputType(parsed.Get("--output-type")) : PixelKind::UnsignedChar;
  }
  if (operation.output == cif::MaskOperand::Image)
  {
    CheckTypedImageOutput(run.Output, input.Pixel, input.Dimension, "OUT");
  }
  if (run.Bounds)
  {
    // the pixel type's values that select exactly lower <= value <= upper
    // (none: a usage error before any work)
    const auto bounds = CheckThresholdsFitPixelType(*run.Bounds, input, inputFile);
    run.Given["lower_threshold"] = bounds.first;
    run.Given["upper_threshold"] = bounds.second;
  }
  return RunOnFilterInput(inputFile,
                          input,
                          run.Mode,
                          run.Quiet,
                          [&](auto pixel, auto dimension)
                          {
                            using T = typename decltype(pixel)::Type;
                            constexpr unsigned int D = decltype(dimension)::value;
                            return RunMaskOperation<T, D>(run);
                          });
}

int
PackedVariantMain(const cif::MaskOperationDescriptor & operation,
                  const cif::FilterDescriptor &        base,
                  const std::vector<std::string> &     args)
{
  std::vector<std::string> rest;
  std::copy_if(args.begin(), args.end(), std::back_inserter(rest), [](const std::string & a) { return a != "--packed"; });
  const auto has = [&](const std::string & option)
  {
    return std::any_of(rest.begin(),
                       rest.end(),
                       [&](const std::string & a) { return a == option || a.rfind(option + "=", 0) == 0; });
  };
  for (const char * option : { "--stream", "--stream-memory" })
  {
    if (has(option))
    {
      throw UsageError(std::string(option) + " writes images in pieces; a packed mask (--packed) is written whole");
    }
  }
  // the filter's options: those of the operation's values under every
  // spelling the filter's subcommand takes; the others are refused by name
  std::vector<std::pair<std::string, std::string>> spellings;
  std::vector<std::string>                         required;
  bool                                             missing = false;
  for (const auto & spec : base.parameters)
  {
    const bool shared = std::any_of(operation.values.begin(),
                                    operation.values.end(),
                                    [&](const cif::MaskValueSpec & v) { return v.name == spec.name; });
    std::vector<std::string> options{ OptionOf(spec.name) };
    for (const auto & alias : spec.optionAliases)
    {
      options.push_back("--" + alias);
    }
    bool given = false;
    for (const auto & option : options)
    {
      given = given || has(option);
      if (has(option) && !shared)
      {
        throw UsageError(option + " is a setting of " + base.command + "'s image; with --packed OUT holds one bit " +
                         "per voxel");
      }
      if (shared && option != options.front())
      {
        spellings.emplace_back(option, options.front());
      }
    }
    if (shared && spec.commandLineRequired)
    {
      required.push_back(options.front() + " V");
      missing = missing || !given;
    }
  }
  if (missing)
  {
    std::string list;
    for (std::size_t i = 0; i < required.size(); ++i)
    {
      list += (i == 0 ? "" : i + 1 == required.size() ? " and " : ", ") + required[i];
    }
    throw UsageError(base.command + " --packed needs " + list);
  }
  return MaskOperationMain(operation, WithToolSpellings(rest, spellings));
}

} // namespace tool
} // namespace cif
