/*=========================================================================
 *  CudaImageFilters: the subcommand of every filter the core describes
 *  (cif/Filter.h) that has no hand-written one: its options, help and
 *  checks come from the description, so a filter added to the core gets its
 *  subcommand with no code here.
 *
 *    cudaimagefilters COMMAND IN OUT [--PARAMETER V[,V,V] ...] [--device D]
 *                     [--stream] [--stream-memory SIZE] [--verify] [--quiet]
 *
 *  IN runs through the tool's ITK filter over the description
 *  (DescribedImageFilter.h: the module's GPU, CPU and slab runs), whole or
 *  streamed in pieces by ITK's streaming reader and writer; OUT gets IN's
 *  pixel type and the output grid the description names (IN's, or the
 *  bins' of a shrink). --verify exists where the tool has an implementation
 *  to compare with (DescribedVerify.h).
 *=========================================================================*/
#include "DescribedCommand.h"
#include "DescribedImageFilter.h"
#include "DescribedVerify.h"
#include "FilterCommon.h"

#include "cif/Filter.h"
#include "cif/Runtime.h"
#include "itkCovariantVector.h"
#include "itkCudaExecution.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <type_traits>

namespace cif
{
namespace tool
{
std::string
OptionOf(const std::string & name)
{
  std::string option = "--" + name;
  for (auto & c : option)
  {
    c = c == '_' ? '-' : c;
  }
  return option;
}

void
PrintWrapped(std::ostream & os, const std::string & text, std::size_t indent, std::size_t first)
{
  std::istringstream words(text);
  std::string        word;
  std::size_t        column = first;
  bool               start = true;
  while (words >> word)
  {
    if (!start && column + 1 + word.size() > 79)
    {
      os << '\n' << std::string(indent, ' ');
      column = indent;
      start = true;
    }
    os << (start ? "" : " ") << word;
    column += (start ? 0 : 1) + word.size();
    start = false;
  }
  os << '\n';
}

void
PrintOptionHelp(std::ostream & os, const std::string & head, const std::string & help)
{
  os << head << std::string(head.size() < 23 ? 23 - head.size() : 1, ' ');
  PrintWrapped(os, help, 23, std::max<std::size_t>(head.size(), 23));
}

void
PrintGeneratedFooter(std::ostream & os, const std::string & itkClass, const std::string & function)
{
  os << "\nPrints the device that ran the filter and the filter's time. The C++ class is\n"
     << itkClass << "; the Python function cudaimagefilters." << function << ".\n";
  PrintExitStatusHelp(os);
}

bool
IsRealBound(const std::string & name)
{
  return name == "lower_threshold" || name == "upper_threshold";
}

ThresholdSettings
RealBoundsOf(const std::string & lowerOption,
             const std::string & lowerText,
             const std::string & upperOption,
             const std::string & upperText)
{
  ThresholdSettings bounds;
  bounds.LowerText = lowerText.empty() ? "-inf" : lowerText;
  bounds.UpperText = upperText.empty() ? "inf" : upperText;
  bounds.Lower = lowerText.empty() ? -std::numeric_limits<double>::infinity() : ParseFiniteReal(lowerOption, lowerText);
  bounds.Upper = upperText.empty() ? std::numeric_limits<double>::infinity() : ParseFiniteReal(upperOption, upperText);
  if (bounds.Lower > bounds.Upper)
  {
    throw UsageError(lowerOption + " " + lowerText + " is greater than " + upperOption + " " + upperText +
                     " (a voxel is inside when lower <= value <= upper)");
  }
  return bounds;
}

const cif::MaskOperationDescriptor *
PackedVariantOf(const cif::FilterDescriptor & filter)
{
  for (const auto * operation : cif::MaskOperations())
  {
    if (operation->command == filter.command)
    {
      return operation;
    }
  }
  return nullptr;
}

namespace
{
std::string
Number(double v)
{
  std::ostringstream text;
  text << v;
  return text.str();
}

/** "uint8, int16, ..." : the pixel types the filter takes. */
std::string
PixelNames(const cif::FilterDescriptor & filter)
{
  std::string names;
  for (cif::Pixel p : filter.cpuPixels)
  {
    names += (names.empty() ? "" : ", ") + std::string(cif::PixelName(p));
  }
  std::string toFloat;
  for (cif::Pixel p : filter.floatOutputPixels)
  {
    if (cif::FloatOutputOnly(filter, p))
    {
      toFloat += (toFloat.empty() ? "" : ", ") + std::string(cif::PixelName(p));
    }
  }
  return toFloat.empty() ? names : names + " (" + toFloat + " into float32)";
}

/** The command-line spellings of a parameter: its own, then its aliases. */
std::vector<std::string>
OptionsOf(const cif::ParameterSpec & spec)
{
  std::vector<std::string> options{ OptionOf(spec.name) };
  for (const auto & alias : spec.optionAliases)
  {
    options.push_back("--" + alias);
  }
  return options;
}

/** Largest value of an integer option: the description's, within the
 * cores' 32-bit coordinates (MaxRadius). */
long long
IntegerMaximum(const cif::ParameterSpec & spec)
{
  return spec.maximum >= static_cast<double>(MaxRadius) ? MaxRadius : static_cast<long long>(spec.maximum);
}

/** One option's text as the parameter's values: integers, numbers (positive
 * ones where the description wants them), or a choice's name. The ranges of
 * the values are the description's. */
std::vector<double>
ParseValues(const cif::FilterDescriptor & filter,
            const cif::ParameterSpec &    spec,
            const std::string &           option,
            const std::string &           text)
{
  std::vector<double> values;
  switch (spec.kind)
  {
    case cif::ParameterKind::Choice:
      try
      {
        values = { cif::ChoiceValue(filter, spec.name, text) };
      }
      catch (const std::invalid_argument & e)
      {
        throw UsageError(option + ": " + e.what());
      }
      break;
    case cif::ParameterKind::Integer:
    case cif::ParameterKind::OptionalInteger:
    {
      const auto minimum = static_cast<long long>(std::max(spec.minimum, -9.0e18));
      if (spec.perAxis)
      {
        for (long long v : ParseIntegerList(option, text, minimum, IntegerMaximum(spec)))
        {
          values.push_back(static_cast<double>(v));
        }
      }
      else
      {
        values = { static_cast<double>(ParseInteger(option, text, minimum, IntegerMaximum(spec))) };
      }
      break;
    }
    case cif::ParameterKind::Real:
    case cif::ParameterKind::OptionalReal:
      values = ParseRealList(option, text);
      if (spec.exclusiveMinimum && spec.minimum == 0)
      {
        for (double v : values)
        {
          if (!(v > 0.0))
          {
            throw UsageError(option + ": " + Number(v) + (values.size() == 1 ? std::string() : " in '" + text + "'") +
                             " is not a positive number (expected numbers greater than 0)");
          }
        }
      }
      break;
  }
  return values;
}

/** A parameter given on the command line: its values and how it was given. */
struct GivenParameter
{
  std::string Option;
  std::string Text;
};

/** The parameters as given on the command line (checked later, once, by
 * cif::CheckParameters); `given` says under which option. When one of the
 * options the command line requires (ParameterSpec::commandLineRequired)
 * is absent, the UsageError names them all. */
cif::Parameters
ParseParameters(const cif::FilterDescriptor &            filter,
                const ParsedArguments &                  parsed,
                std::map<std::string, GivenParameter> & given)
{
  cif::Parameters          parameters;
  std::vector<std::string> required;
  bool                     missing = false;
  for (const auto & spec : filter.parameters)
  {
    const std::vector<std::string> options = OptionsOf(spec);
    std::string                    used;
    for (const auto & option : options)
    {
      if (parsed.Has(option))
      {
        if (!used.empty())
        {
          throw UsageError(used + " and " + option + " are the same option: give one");
        }
        used = option;
      }
    }
    if (spec.commandLineRequired)
    {
      required.push_back(options.front() + (spec.perAxis ? " V[,V,V]" : " V"));
      missing = missing || used.empty();
    }
    if (used.empty())
    {
      continue;
    }
    given[spec.name] = { used, parsed.Get(used) };
    parameters[spec.name] = ParseValues(filter, spec, used, parsed.Get(used));
  }
  if (missing)
  {
    std::string list;
    for (std::size_t i = 0; i < required.size(); ++i)
    {
      list += (i == 0 ? "" : i + 1 == required.size() ? " and " : ", ") + required[i];
    }
    throw UsageError(filter.command + " needs " + list);
  }
  return parameters;
}

/** The settings line: every parameter as the run used it. */
std::string
SettingsText(const cif::FilterDescriptor & filter, const cif::Parameters & parameters, int dimension)
{
  const auto list = [](std::ostream & os, const std::vector<double> & values)
  {
    for (std::size_t i = 0; i < values.size(); ++i)
    {
      os << (i ? "x" : "") << Number(values[i]);
    }
  };
  std::ostringstream settings;
  for (const auto & spec : filter.parameters)
  {
    const auto   it = parameters.find(spec.name);
    const auto & values = it == parameters.end() ? std::vector<double>{} : it->second;
    settings << (settings.tellp() > 0 ? "; " : "") << spec.name << ' ';
    if (values.empty())
    {
      settings << (cif::IsOptional(spec.kind) ? "automatic" : "default");
      // what the automatic choice came to (the bilateral's radius)
      const std::vector<double> automatic =
        filter.automaticValues ? filter.automaticValues(spec.name, parameters, dimension) : std::vector<double>{};
      if (!automatic.empty())
      {
        settings << " (";
        list(settings, automatic);
        settings << ')';
      }
    }
    else if (spec.kind == cif::ParameterKind::Choice)
    {
      settings << spec.choices[static_cast<std::size_t>(values[0])];
    }
    else if (spec.matrix)
    {
      // row by row: (1,0,0;0,0,-1;0,1,0)
      const auto rows = static_cast<std::size_t>(dimension);
      settings << '(';
      for (std::size_t i = 0; i < values.size(); ++i)
      {
        settings << (i == 0 ? "" : i % rows == 0 ? ";" : ",") << Number(values[i] + 0.0); // no -0
      }
      settings << ')';
    }
    else
    {
      list(settings, values);
    }
  }
  return settings.str();
}

/** The module's pixel type of a kind the tool reads. */
cif::Pixel
PixelOfKind(PixelKind kind)
{
  switch (kind)
  {
    case PixelKind::UnsignedChar:
      return cif::Pixel::UInt8;
    case PixelKind::Short:
      return cif::Pixel::Int16;
    case PixelKind::UnsignedShort:
      return cif::Pixel::UInt16;
    case PixelKind::Float:
      break;
  }
  return cif::Pixel::Float32;
}

/** OUT's pixel type for IN's: IN's, or for a description that chooses the
 * output's type (outputPixels) its default for IN's (defaultOutputPixel, or
 * the list's first), which the tool writes as float or as IN's type. */
PixelKind
OutputKindOf(const cif::FilterDescriptor & filter, PixelKind in)
{
  if (filter.outputPixels.empty())
  {
    // integers the filter takes only into float (anisotropic diffusion)
    return cif::FloatOutputOnly(filter, PixelOfKind(in)) ? PixelKind::Float : in;
  }
  const cif::Pixel out =
    filter.defaultOutputPixel ? filter.defaultOutputPixel(PixelOfKind(in)) : filter.outputPixels.front();
  if (out == PixelOfKind(in))
  {
    return in;
  }
  if (out == cif::Pixel::Float32)
  {
    return PixelKind::Float;
  }
  if (out == cif::Pixel::UInt8)
  {
    return PixelKind::UnsignedChar;
  }
  throw RuntimeFailure(filter.command + ": the tool writes " + PixelKindName(in) + " images as " +
                       PixelKindName(in) + ", unsigned char or float, not " + cif::PixelName(out));
}

/** Why the description needs the whole image with its default parameters
 * (FilterDescriptor::wholeImage; empty: pieces are exact), for the help.
 * Descriptions without defaults for every parameter give empty. */
std::string
WholeImageReasonOfDefaults(const cif::FilterDescriptor & filter)
{
  if (!filter.wholeImage)
  {
    return {};
  }
  cif::Parameters parameters;
  try
  {
    cif::CompleteParameters(filter, parameters, 3);
  }
  catch (const std::invalid_argument &)
  {
    return {};
  }
  return filter.wholeImage(parameters);
}

/** What a run needs besides IN's pixels. */
struct DescribedRun
{
  const cif::FilterDescriptor * Filter{ nullptr };
  cif::Parameters               Given; ///< as parsed (the image's spacing not filled in)
  std::string                   Input;
  std::string                   Output;
  /** The companion image's file (the mask filter's MASK) and its header;
   * empty for filters without one. */
  std::string                   Companion;
  std::optional<FilterInput>    CompanionInput;
  /** OUT's pixel type: IN's, or the one the description chooses for it
   * (OutputKindOf). */
  PixelKind                     OutputKind{ PixelKind::Float };
  itk::CudaExecutionMode        Mode{ itk::CudaExecutionMode::Automatic };
  StreamSettings                Streaming;
  const DescribedVerifier *     Verify{ nullptr };
  bool                          Quiet{ false };
  /** The bounds as given (IsRealBound), turned into the pixel type's by
   * each run; absent: none given. */
  std::optional<ThresholdSettings> Bounds;
};

/** The given parameters with the image's spacing where the description
 * takes it from the image, checked once for IN (the description's one
 * check; a UsageError before any work when they do not pass). */
cif::Parameters
CheckedFor(const DescribedRun & run, const FilterInput & header)
{
  const cif::FilterDescriptor & filter = *run.Filter;
  const cif::Pixel              pixel = PixelOfKind(header.Pixel);
  if (!cif::HasPixel(filter.cpuPixels, pixel) && !cif::FloatOutputOnly(filter, pixel))
  {
    throw UsageError(filter.command + " takes " + PixelNames(filter) + " images, not " + PixelKindName(header.Pixel));
  }
  const unsigned int D = header.Dimension;
  cif::Parameters    parameters = run.Given;
  cif::Extent        extent;
  extent.dimension = static_cast<int>(D);
  for (unsigned int a = 0; a < D; ++a)
  {
    extent.size[a] = static_cast<std::int64_t>(header.Information.Size[a]);
  }
  for (const auto & spec : filter.parameters)
  {
    if (spec.fromImage && spec.name == "spacing" && parameters.count(spec.name) == 0)
    {
      parameters[spec.name] =
        std::vector<double>(header.Information.Spacing.begin(), header.Information.Spacing.begin() + D);
    }
  }
  try
  {
    if (filter.outputPixels.empty())
    {
      cif::CheckParameters(filter, parameters, extent, pixel);
    }
    else
    {
      cif::CheckParameters(filter, parameters, extent, pixel, PixelOfKind(run.OutputKind));
    }
  }
  catch (const std::invalid_argument & e)
  {
    throw UsageError(e.what());
  }
  if (run.CompanionInput)
  {
    // the companion (MASK): IN's size, a pixel type and values the filter takes
    const FilterInput & companion = *run.CompanionInput;
    const std::string   operand = filter.companion.operand;
    if (companion.Dimension != D)
    {
      throw UsageError(operand + " '" + run.Companion + "' has " + std::to_string(companion.Dimension) +
                       " dimensions, IN has " + std::to_string(D));
    }
    for (unsigned int a = 0; a < D; ++a)
    {
      if (companion.Information.Size[a] != header.Information.Size[a])
      {
        throw UsageError(operand + " '" + run.Companion + "' is not of IN's size (" + std::to_string(a) + ": " +
                         std::to_string(companion.Information.Size[a]) + " pixels, IN " +
                         std::to_string(header.Information.Size[a]) + ")");
      }
    }
    try
    {
      cif::CheckCompanion(filter, parameters, PixelOfKind(companion.Pixel));
    }
    catch (const std::invalid_argument & e)
    {
      throw UsageError(e.what());
    }
  }
  if (run.Mode == itk::CudaExecutionMode::GPU)
  {
    CheckGPURequest(cif::GpuProblem(filter, pixel, parameters, extent));
  }
  return parameters;
}

/** The reader of the companion image (MASK) in its own pixel type, not yet
 * updated: the filter's input 1, which ITK's pipeline reads whole or, with
 * --stream, piece by piece with IN. */
template <typename T, unsigned int D>
itk::ProcessObject::Pointer
ReaderOf(const std::string & fileName)
{
  auto reader = itk::ImageFileReader<itk::Image<T, D>>::New();
  reader->SetFileName(fileName);
  return reader.GetPointer();
}
template <unsigned int D>
itk::ProcessObject::Pointer
CompanionReader(const std::string & fileName, PixelKind kind)
{
  switch (kind)
  {
    case PixelKind::UnsignedChar:
      return ReaderOf<unsigned char, D>(fileName);
    case PixelKind::Short:
      return ReaderOf<short, D>(fileName);
    case PixelKind::UnsignedShort:
      return ReaderOf<unsigned short, D>(fileName);
    case PixelKind::Float:
      break;
  }
  return ReaderOf<float, D>(fileName);
}

/** "float", or "float vectors of 3" for a vector pixel. */
template <typename TPixel>
std::string
OutputPixelText()
{
  if constexpr (std::is_arithmetic<TPixel>::value)
  {
    return itk::CudaPixelTypeName<TPixel>();
  }
  else
  {
    using Component = typename itk::NumericTraits<TPixel>::ValueType;
    return std::string(itk::CudaPixelTypeName<Component>()) + " vectors of " +
           std::to_string(sizeof(TPixel) / sizeof(Component));
  }
}

template <typename T, typename TOut, unsigned int D>
int
RunDescribed(const DescribedRun & run, const cif::Parameters & checked)
{
  using ImageType = itk::Image<T, D>;
  using OutputImageType = itk::Image<TOut, D>;
  constexpr bool Scalar = std::is_arithmetic<TOut>::value;
  using FilterType = DescribedImageFilter<ImageType, OutputImageType>;
  const cif::FilterDescriptor & filter = *run.Filter;
  auto                          core = FilterType::New();
  core->SetDescription(filter);
  core->SetParameters(run.Given);
  core->SetExecutionMode(run.Mode);
  itk::ProcessObject::Pointer companion;
  if (run.CompanionInput)
  {
    companion = CompanionReader<D>(run.Companion, run.CompanionInput->Pixel);
    core->SetCompanion(companion->GetOutputs()[0]);
  }
  StartDeviceOutsideTiming(run.Mode); // the CUDA context now, outside the timing
  if constexpr (Scalar)
  {
    if (run.Streaming.Stream)
    {
      return RunStreamed<ImageType, OutputImageType>(core.GetPointer(),
                                                     filter.command,
                                                     run.Input,
                                                     run.Output,
                                                     run.Streaming.Memory,
                                                     run.Quiet,
                                                     [&]
                                                     { return SettingsText(filter, checked, static_cast<int>(D)); });
    }
  }
  const auto input = ReadImageFile<ImageType>(run.Input);
  core->SetInput(input);
  const double milliseconds = UpdateTimed(core, filter.command.c_str(), run.Quiet);
  // the parameters the filter ran with (IN's own spacing and direction), checked before the run
  cif::Parameters ran = FilterType::DescribedParameters(core.GetPointer());
  cif::CompleteParameters(filter, ran, static_cast<int>(D));
  std::cout << filter.command << ": " << SizeToString(input->GetLargestPossibleRegion().GetSize()) << " pixels ("
            << itk::CudaPixelTypeName<T>() << ") to "
            << SizeToString(core->GetOutput()->GetLargestPossibleRegion().GetSize())
            << (std::is_same<T, TOut>::value ? std::string() : std::string(" (") + OutputPixelText<TOut>() + ")")
            << "; " << SettingsText(filter, ran, static_cast<int>(D)) << "; ran on "
            << core->GetLastExecutionReport().Message << "; filter time " << std::fixed << std::setprecision(3)
            << milliseconds << " ms" << std::endl;
  std::cout.unsetf(std::ios_base::floatfield);
  std::cout << std::setprecision(6);
  WriteImageFile(core->GetOutput(), run.Output);
  if (run.Verify == nullptr)
  {
    return ExitSuccess;
  }
  if constexpr (!Scalar)
  {
    throw RuntimeFailure(filter.command + ": --verify has no check of vector images");
  }
  else
  {
    const auto written = ReadImageFile<OutputImageType>(run.Output);
    const auto checks = RunDescribedVerifier<T, TOut, D>(*run.Verify,
                                                         input.GetPointer(),
                                                         written.GetPointer(),
                                                         run.Output,
                                                         run.Bounds ? &*run.Bounds : nullptr,
                                                         ran,
                                                         core->GetLastExecutedOn() == itk::CudaExecutedOn::GPU);
    for (const auto & check : checks)
    {
      PrintStageCheck(check);
    }
    return StageChecksStatus(checks);
  }
}
} // namespace

void
DescribedUsage(const cif::FilterDescriptor & filter, std::ostream & os)
{
  const std::string operand = filter.HasCompanion() ? filter.companion.operand + " " : std::string();
  os << "Usage: " << ToolName << ' ' << filter.command << " IN " << operand << "OUT [options]\n\n";
  PrintWrapped(
    os, filter.summary + (filter.itkTwin.empty() ? "" : " Like " + filter.itkTwin + ".") + " " + filter.details, 0);
  os << "\nArguments:\n";
  PrintInputArgumentHelp(os);
  if (filter.HasCompanion())
  {
    std::string types;
    for (cif::Pixel p : filter.companion.pixels)
    {
      if (p != cif::Pixel::Float64)
      {
        types += (types.empty() ? "" : ", ") + std::string(cif::CTypeName(p));
      }
    }
    PrintOptionHelp(os,
                    "  " + filter.companion.operand,
                    filter.companion.help + ", read in its own pixel type (" + types +
                      "; other component types as float)");
  }
  const bool integersToFloat =
    cif::FloatOutputOnly(filter, cif::Pixel::UInt8) || cif::FloatOutputOnly(filter, cif::Pixel::Int16);
  if (filter.vectorOutput)
  {
    PrintOptionHelp(os,
                    "  OUT",
                    "output image of float vectors, one component per axis (x first; ITK's CovariantVector): "
                    ".nii.gz, .nii, .nrrd, .nhdr, .mha, .mhd");
  }
  else if (filter.outputPixels.empty() && integersToFloat)
  {
    PrintOptionHelp(os,
                    "  OUT",
                    "output image of float pixels (IN's integers are computed and written as float, as ITK "
                    "does): .nii.gz, .nii, .nrrd, .nhdr, .mha, .mhd");
  }
  else if (filter.outputPixels.empty())
  {
    PrintImageOutputArgumentHelp(os);
  }
  else
  {
    // OUT's type for each type the tool reads IN as
    std::set<std::string> types;
    for (PixelKind in : { PixelKind::UnsignedChar, PixelKind::Short, PixelKind::UnsignedShort, PixelKind::Float })
    {
      if (cif::HasPixel(filter.cpuPixels, PixelOfKind(in)))
      {
        types.insert(PixelKindName(OutputKindOf(filter, in)));
      }
    }
    std::string list;
    for (const auto & type : types)
    {
      list += (list.empty() ? "" : " or ") + type;
    }
    PrintOptionHelp(os,
                    "  OUT",
                    "output image of " + list + " pixels: .nii.gz, .nii, .nrrd, .nhdr, .mha, .mhd" +
                      (list == "unsigned char" ? ", or .png (2D only)" : ""));
  }
  os << "\nOptions:\n";
  for (const auto & spec : filter.parameters)
  {
    std::string head = "  " + OptionOf(spec.name) + (spec.perAxis ? " V[,V,V]" : spec.matrix ? " V,V,..." : " V");
    std::string help = spec.help;
    if (spec.commandLineRequired)
    {
      help += " (required)";
    }
    else if (spec.kind == cif::ParameterKind::Choice)
    {
      help += " (default " + spec.choices[static_cast<std::size_t>(spec.defaults.at(0))] + ")";
    }
    else if (spec.fromImage)
    {
      help += " (default: IN's)";
    }
    else if (!spec.defaults.empty())
    {
      help += " (default " + Number(spec.defaults[0]) + ")";
    }
    else if (!cif::IsOptional(spec.kind))
    {
      help += " (required)";
    }
    if (IsRealBound(spec.name))
    {
      help += "; here any real number: the run takes the pixel type's values that select exactly lower <= value "
              "<= upper (on integer pixels the smallest integer >= lower and the largest <= upper)";
    }
    for (const auto & alias : spec.optionAliases)
    {
      help += "; also --" + alias;
    }
    PrintOptionHelp(os, head, help);
  }
  if (const cif::MaskOperationDescriptor * packed = PackedVariantOf(filter))
  {
    PrintOptionHelp(os,
                    "  --packed",
                    "write a packed mask instead, one bit per voxel, 32 voxels along x per 32-bit word (" +
                      packed->itkClass + ", written by WritePackedMask with its grid in the header): OUT is " +
                      PackedMaskFormats + "; not with the label values or --stream");
  }
  PrintDeviceOptionHelp(os);
  PrintStreamOptionHelp(os);
  const std::string whole = WholeImageReasonOfDefaults(filter);
  if (!whole.empty())
  {
    PrintOptionHelp(os, "", "Not with the defaults: " + whole);
  }
  if (const DescribedVerifier * verify = FindDescribedVerifier(filter.command))
  {
    PrintOptionHelp(os, "  --verify", verify->Help);
  }
  PrintQuietAndHelpOptionHelp(os);
  PrintGeneratedFooter(os, filter.itkClass, filter.function);
}

int
DescribedMain(const cif::FilterDescriptor & filter, const std::vector<std::string> & args)
{
  if (HasHelpOption(args))
  {
    DescribedUsage(filter, std::cout);
    return ExitSuccess;
  }
  const cif::MaskOperationDescriptor * packed = PackedVariantOf(filter);
  if (packed != nullptr && std::find(args.begin(), args.end(), "--packed") != args.end())
  {
    return PackedVariantMain(*packed, filter, args);
  }
  DescribedRun run;
  run.Filter = &filter;
  run.Verify = FindDescribedVerifier(filter.command);
  std::vector<OptionSpec> specs;
  for (const auto & spec : filter.parameters)
  {
    for (const auto & option : OptionsOf(spec))
    {
      specs.push_back({ option, true });
    }
  }
  specs.push_back({ "--device", true });
  specs.push_back({ "--quiet", false });
  if (run.Verify != nullptr)
  {
    specs.push_back({ "--verify", false });
  }
  AddStreamOptionSpecs(specs);
  ParsedArguments parsed = ParseArguments(args, specs);
  if (filter.HasCompanion())
  {
    // IN COMPANION OUT: the companion taken out, the rest as every subcommand's
    if (parsed.Positionals.size() >= 3)
    {
      run.Companion = parsed.Positionals[1];
      parsed.Positionals.erase(parsed.Positionals.begin() + 1);
    }
    else if (parsed.Positionals.size() < 3)
    {
      throw UsageError(filter.command + " needs IN, " + filter.companion.operand + " and OUT file names");
    }
  }
  ParseInputAndOutput(parsed, filter.command, run.Input, run.Output);
  std::map<std::string, GivenParameter> given;
  run.Given = ParseParameters(filter, parsed, given);
  if (given.count("lower_threshold") != 0 || given.count("upper_threshold") != 0)
  {
    // each bound as given (its option's spelling and text), or absent
    const auto as = [&](const char * name)
    {
      const auto it = given.find(name);
      return it == given.end() ? GivenParameter{ OptionOf(name), "" } : it->second;
    };
    const GivenParameter lower = as("lower_threshold");
    const GivenParameter upper = as("upper_threshold");
    run.Bounds = RealBoundsOf(lower.Option, lower.Text, upper.Option, upper.Text);
  }
  run.Mode = ParseDeviceOption(parsed);
  run.Quiet = parsed.Has("--quiet");
  const bool verify = run.Verify != nullptr && parsed.Has("--verify");
  if (!verify)
  {
    run.Verify = nullptr;
  }
  run.Streaming = ParseStreamOptions(parsed, verify);
  CheckImageOutput(run.Output);
  const FilterInput input = DescribeFilterInput(run.Input, filter.command);
  run.OutputKind = OutputKindOf(filter, input.Pixel);
  if (filter.HasCompanion())
  {
    run.CompanionInput = DescribeFilterInput(run.Companion, filter.command);
    PrintFilterInputNotes(run.Companion, *run.CompanionInput, run.Quiet);
  }
  if (run.Bounds)
  {
    // the pixel type's values that select exactly lower <= value <= upper
    // (none: a usage error before any work)
    const auto bounds = CheckThresholdsFitPixelType(*run.Bounds, input, run.Input);
    run.Given["lower_threshold"] = { bounds.first };
    run.Given["upper_threshold"] = { bounds.second };
  }
  for (const auto & spec : filter.parameters)
  {
    const auto it = given.find(spec.name);
    if (spec.perAxis && it != given.end())
    {
      CheckPerAxisCount(
        it->second.Option, it->second.Text, run.Given.at(spec.name).size(), input.Dimension, run.Input);
    }
  }
  CheckTypedImageOutput(run.Output, run.OutputKind, input.Dimension, "OUT");
  if (run.Verify != nullptr)
  {
    const std::string why = run.Verify->Refuse(run.Given, input.Pixel == PixelKind::Float);
    if (!why.empty())
    {
      throw UsageError(why);
    }
  }
  const cif::Parameters checked = CheckedFor(run, input);
  // pieces need the whole image where the description says so (its reason
  // for the checked parameters); else an input larger than half the RAM is
  // streamed when its format allows
  const std::string whole = filter.wholeImage ? filter.wholeImage(checked) : std::string();
  if (!whole.empty() && run.Streaming.Stream)
  {
    throw UsageError("--stream: " + whole);
  }
  // a companion (MASK) is read in the same pieces as IN, so it must stream too
  const std::string companionWhole = run.CompanionInput ? WhyNotStreamable(run.Companion, run.Output) : std::string();
  if (!companionWhole.empty() && run.Streaming.Stream)
  {
    throw UsageError("--stream: " + filter.companion.operand + ": " + companionWhole);
  }
  if (whole.empty() && companionWhole.empty())
  {
    StreamLargeInput(run.Streaming,
                     input.Information.Voxels() * PixelBytes(input.Pixel),
                     run.Input,
                     run.Output,
                     verify,
                     run.Quiet);
  }
  return RunOnFilterInput(run.Input,
                          input,
                          run.Mode,
                          run.Quiet,
                          [&](auto pixel, auto dimension)
                          {
                            using T = typename decltype(pixel)::Type;
                            constexpr unsigned int D = decltype(dimension)::value;
                            if (filter.vectorOutput)
                            {
                              // a gradient: float vectors of D components
                              return RunDescribed<T, itk::CovariantVector<float, D>, D>(run, checked);
                            }
                            switch (run.OutputKind == input.Pixel ? input.Pixel : run.OutputKind)
                            {
                              case PixelKind::UnsignedChar:
                                return RunDescribed<T, unsigned char, D>(run, checked);
                              case PixelKind::Float:
                                return RunDescribed<T, float, D>(run, checked);
                              default:
                                return RunDescribed<T, T, D>(run, checked);
                            }
                          });
}

} // namespace tool
} // namespace cif
