/*=========================================================================
 *  CudaImageFilters: the subcommand of every filter the core describes
 *  (cif/Filter.h) that has no hand-written one: its options, help and
 *  checks come from the description, so a filter added to the core gets its
 *  subcommand with no code here.
 *
 *    cudaimagefilters COMMAND IN OUT [--PARAMETER V[,V,V] ...] [--device D] [--quiet]
 *
 *  IN is read with ITK, the core's entry runs on its pixels (GPU or CPU, as
 *  cif::RunFilterOnHost decides), and OUT gets IN's pixel type and the
 *  output grid the description names (IN's, or the bins' of a shrink).
 *=========================================================================*/
#include "DescribedCommand.h"
#include "FilterCommon.h"

#include "cif/Filter.h"
#include "itkCudaExecution.h"

#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace cif
{
namespace tool
{
namespace
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

std::string
Number(double v)
{
  std::ostringstream text;
  text << v;
  return text.str();
}

/** Wraps `text` at 79 columns after `indent` spaces. */
void
PrintWrapped(std::ostream & os, const std::string & text, std::size_t indent, std::size_t first = 0)
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

template <typename T>
constexpr cif::Pixel
CorePixel()
{
  if constexpr (std::is_same<T, unsigned char>::value)
    return cif::Pixel::UInt8;
  else if constexpr (std::is_same<T, short>::value)
    return cif::Pixel::Int16;
  else if constexpr (std::is_same<T, unsigned short>::value)
    return cif::Pixel::UInt16;
  else
    return cif::Pixel::Float32;
}

/** The parameters as given on the command line (checked later, once, by cif::CheckParameters). */
cif::Parameters
ParseParameters(const cif::FilterDescriptor & filter, const ParsedArguments & parsed)
{
  cif::Parameters parameters;
  for (const auto & spec : filter.parameters)
  {
    const std::string option = OptionOf(spec.name);
    if (!parsed.Has(option))
    {
      continue;
    }
    const std::string text = parsed.Get(option);
    if (spec.kind == cif::ParameterKind::Choice)
    {
      try
      {
        parameters[spec.name] = { cif::ChoiceValue(filter, spec.name, text) };
      }
      catch (const std::invalid_argument & e)
      {
        throw UsageError(option + ": " + e.what());
      }
    }
    else
    {
      parameters[spec.name] = ParseRealList(option, text);
    }
  }
  return parameters;
}

/** The output image's grid: IN's, or the bins' (itk::BinShrinkImageFilter's
 * grid for an image whose index starts at 0: spacing times f, origin at the
 * centre of the first bin). */
template <typename TImage>
void
SetOutputGrid(const cif::FilterDescriptor & filter,
              const cif::Parameters &       parameters,
              const TImage *                input,
              TImage *                      output,
              const cif::Extent &           outExtent)
{
  constexpr unsigned int D = TImage::ImageDimension;
  output->CopyInformation(input);
  typename TImage::SizeType size;
  for (unsigned int a = 0; a < D; ++a)
  {
    size[a] = static_cast<itk::SizeValueType>(outExtent.size[a]);
  }
  output->SetRegions(size);
  if (filter.grid == cif::OutputGrid::Bin)
  {
    typename TImage::SpacingType    spacing = input->GetSpacing();
    itk::ContinuousIndex<double, D> firstBinCentre;
    typename TImage::PointType      origin;
    for (unsigned int a = 0; a < D; ++a)
    {
      const double f = cif::Value(parameters, "shrink_factors", static_cast<int>(a));
      spacing[a] *= f;
      firstBinCentre[a] = 0.5 * (f - 1.0);
    }
    input->TransformContinuousIndexToPhysicalPoint(firstBinCentre, origin);
    output->SetSpacing(spacing);
    output->SetOrigin(origin);
  }
  output->Allocate();
}

template <typename T, unsigned int D>
int
RunDescribed(const cif::FilterDescriptor & filter,
             cif::Parameters               parameters,
             const std::string &           inputName,
             const std::string &           outputName,
             itk::CudaExecutionMode        mode,
             bool                          quiet)
{
  using ImageType = itk::Image<T, D>;
  const auto  input = ReadImageFile<ImageType>(inputName);
  cif::Extent extent;
  extent.dimension = static_cast<int>(D);
  for (unsigned int a = 0; a < D; ++a)
  {
    extent.size[a] = static_cast<std::int64_t>(input->GetBufferedRegion().GetSize(a));
  }
  for (const auto & spec : filter.parameters)
  {
    // a property of the image (its spacing), unless the option gives it
    if (spec.fromImage && spec.name == "spacing" && parameters.count(spec.name) == 0)
    {
      for (unsigned int a = 0; a < D; ++a)
      {
        parameters[spec.name].push_back(input->GetSpacing()[a]);
      }
    }
  }
  try
  {
    cif::CheckParameters(filter, parameters, extent, CorePixel<T>());
  }
  catch (const std::invalid_argument & e)
  {
    throw UsageError(e.what());
  }
  if (mode == itk::CudaExecutionMode::GPU)
  {
    CheckGPURequest(cif::GpuProblem(filter, CorePixel<T>(), parameters, extent));
  }
  const cif::Extent outExtent = cif::OutputExtent(filter, parameters, extent);
  auto              output = ImageType::New();
  SetOutputGrid(filter, parameters, input.GetPointer(), output.GetPointer(), outExtent);

  const auto                 start = std::chrono::steady_clock::now();
  const cif::ExecutionReport report = cif::RunFilterOnHost(
    filter, CorePixel<T>(), input->GetBufferPointer(), output->GetBufferPointer(), extent, parameters, mode, 0);
  const double milliseconds =
    std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  std::ostringstream settings;
  for (const auto & spec : filter.parameters)
  {
    const auto & values = parameters.at(spec.name);
    settings << "; " << spec.name << ' ';
    if (values.empty())
    {
      settings << "default";
    }
    else if (spec.kind == cif::ParameterKind::Choice)
    {
      settings << spec.choices[static_cast<std::size_t>(values[0])];
    }
    else
    {
      for (std::size_t i = 0; i < values.size(); ++i)
      {
        settings << (i ? "x" : "") << Number(values[i]);
      }
    }
  }
  (void)quiet;
  std::cout << filter.command << ": " << SizeToString(input->GetLargestPossibleRegion().GetSize()) << " pixels ("
            << itk::CudaPixelTypeName<T>() << ") to " << SizeToString(output->GetLargestPossibleRegion().GetSize())
            << settings.str() << "; ran on " << report.Message << "; filter time " << std::fixed << std::setprecision(3)
            << milliseconds << " ms" << std::endl;
  std::cout.unsetf(std::ios_base::floatfield);
  std::cout << std::setprecision(6);
  WriteImageFile(output.GetPointer(), outputName);
  return ExitSuccess;
}
} // namespace

void
DescribedUsage(const cif::FilterDescriptor & filter, std::ostream & os)
{
  os << "Usage: " << ToolName << ' ' << filter.command << " IN OUT [options]\n\n";
  PrintWrapped(
    os, filter.summary + (filter.itkTwin.empty() ? "" : " Like " + filter.itkTwin + ".") + " " + filter.details, 0);
  os << "\nArguments:\n";
  PrintInputArgumentHelp(os);
  PrintImageOutputArgumentHelp(os);
  os << "\nOptions:\n";
  for (const auto & spec : filter.parameters)
  {
    std::string head = "  " + OptionOf(spec.name) + (spec.perAxis ? " V[,V,V]" : " V");
    std::string help = spec.help;
    if (spec.kind == cif::ParameterKind::Choice)
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
    os << head << std::string(head.size() < 23 ? 23 - head.size() : 1, ' ');
    PrintWrapped(os, help, 23, std::max<std::size_t>(head.size(), 23));
  }
  PrintDeviceOptionHelp(os);
  PrintQuietAndHelpOptionHelp(os);
  os << "\nPrints the device that ran the filter and the filter's time. The C++ class is\n"
     << filter.itkClass << "; the Python function cudaimagefilters." << filter.function << ".\n";
  PrintExitStatusHelp(os);
}

int
DescribedMain(const cif::FilterDescriptor & filter, const std::vector<std::string> & args)
{
  if (HasHelpOption(args))
  {
    DescribedUsage(filter, std::cout);
    return ExitSuccess;
  }
  std::vector<OptionSpec> specs;
  for (const auto & spec : filter.parameters)
  {
    specs.push_back({ OptionOf(spec.name), true });
  }
  specs.push_back({ "--device", true });
  specs.push_back({ "--quiet", false });
  const ParsedArguments parsed = ParseArguments(args, specs);
  std::string           inputName, outputName;
  ParseInputAndOutput(parsed, filter.command, inputName, outputName);
  const cif::Parameters        parameters = ParseParameters(filter, parsed);
  const itk::CudaExecutionMode mode = ParseDeviceOption(parsed);
  const bool                   quiet = parsed.Has("--quiet");
  CheckImageOutput(outputName);
  const FilterInput input = DescribeFilterInput(inputName, filter.command);
  CheckTypedImageOutput(outputName, input.Pixel, input.Dimension, "OUT");
  return RunOnFilterInput(inputName,
                          input,
                          mode,
                          quiet,
                          [&](auto pixel, auto dimension)
                          {
                            using T = typename decltype(pixel)::Type;
                            constexpr unsigned int D = decltype(dimension)::value;
                            return RunDescribed<T, D>(filter, parameters, inputName, outputName, mode, quiet);
                          });
}

} // namespace tool
} // namespace cif
