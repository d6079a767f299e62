/*=========================================================================
 *  CudaImageFilters: the subcommands of the packed-mask operations the
 *  core describes (cif::MaskOperationDescriptor, cif/PackedMask.h) that
 *  have no hand-written one (the threshold's packed mask is
 *  `threshold --packed`): their arguments, options, help and value checks
 *  come from the description.
 *
 *    cudaimagefilters unpack-mask MASK OUT [--inside-value V]
 *                     [--outside-value V] [--output-type T] [--device D]
 *    cudaimagefilters apply-packed-mask IN MASK OUT [--outside-value V]
 *
 *  One positional argument per input operand of the description (IN for an
 *  image, MASK for a packed-mask file written by `threshold --packed` or
 *  WritePackedMask), then OUT. The operation runs through its ITK class.
 *=========================================================================*/
#include "DescribedCommand.h"
#include "FilterCommon.h"

#include "cif/PackedMask.h"
#include "cif/Runtime.h"
#include "itkCudaApplyPackedMaskImageFilter.h"
#include "itkCudaExecution.h"
#include "itkCudaPackedMaskIO.h"
#include "itkCudaUnpackMaskImageFilter.h"

#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
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
};

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
  if (run.Mode == itk::CudaExecutionMode::Automatic)
  {
    cif::Runtime::IsDeviceAvailable(); // discover the device now, outside the timing
  }
  const double milliseconds = UpdateTimed(filter.GetPointer(), operation.command.c_str(), run.Quiet);
  const auto * output = dynamic_cast<const ImageType *>(filter->GetOutputs()[0].GetPointer());
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
  std::cout << operation.command << ": " << SizeToString(output->GetLargestPossibleRegion().GetSize()) << " pixels ("
            << itk::CudaPixelTypeName<T>() << ")" << settings.str() << "; ran on "
            << control->GetLastExecutionReport().Message << "; filter time " << std::fixed << std::setprecision(3)
            << milliseconds << " ms" << std::endl;
  std::cout.unsetf(std::ios_base::floatfield);
  WriteImageFile(output, run.Output);
  return ExitSuccess;
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
  run.Mode = ParseDeviceOption(parsed);
  run.Quiet = parsed.Has("--quiet");
  CheckImageOutput(run.Output);
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
  CheckTypedImageOutput(run.Output, input.Pixel, input.Dimension, "OUT");
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

} // namespace tool
} // namespace cif
