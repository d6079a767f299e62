/*=========================================================================
 *  CudaImageFilters: helpers shared by the subcommands of the
 *  cudaimagefilters command-line tool.
 *=========================================================================*/
#include "ToolCommon.h"

#include "itkCudaImageFileCheck.h"

#include "itkCudaExecution.h"

#include "cif/Runtime.h"
#include "itkImageIOFactory.h"
#include "itkObjectFactoryBase.h"
#include "itkProcessObject.h"
#include "itkTimeProbe.h"
#include "itksys/SystemTools.hxx"

#include <algorithm>
#include <fstream>
#include <unistd.h>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <regex>
#include <sstream>

namespace cif
{
namespace tool
{

void
PrintError(const std::string & message)
{
  std::cerr << ToolName << ": error: " << OneLine(message) << std::endl;
}

std::string
OneLine(const std::string & message)
{
  std::string text;
  bool        pendingSpace = false;
  for (const char c : message)
  {
    if (c == '\n' || c == '\r' || c == '\t' || c == ' ')
    {
      pendingSpace = !text.empty();
      continue;
    }
    if (pendingSpace)
    {
      text += ' ';
      pendingSpace = false;
    }
    text += c;
  }
  return text;
}

std::string
ExceptionMessage(const itk::ExceptionObject & exception)
{
  static const std::regex prefix("^ITK ERROR: [^ (]+\\(0x[0-9a-fA-F]+\\): ");
  return OneLine(std::regex_replace(OneLine(exception.GetDescription()), prefix, ""));
}

bool
HasHelpOption(const std::vector<std::string> & args)
{
  for (const auto & arg : args)
  {
    if (arg == "--")
    {
      return false;
    }
    if (arg == "-h" || arg == "--help")
    {
      return true;
    }
  }
  return false;
}

bool
ParsedArguments::Has(const std::string & name) const
{
  return m_Options.count(name) != 0;
}

std::string
ParsedArguments::Get(const std::string & name, const std::string & fallback) const
{
  const auto found = m_Options.find(name);
  return found == m_Options.end() ? fallback : found->second;
}

void
ParsedArguments::Set(const std::string & name, const std::string & value)
{
  m_Options[name] = value;
}

std::vector<std::string>
WithToolSpellings(std::vector<std::string> args, const std::vector<std::pair<std::string, std::string>> & spellings)
{
  for (auto & arg : args)
  {
    if (arg == "--")
    {
      break; // positional from here
    }
    for (const auto & spelling : spellings)
    {
      if (arg == spelling.first || arg.rfind(spelling.first + "=", 0) == 0)
      {
        arg = spelling.second + arg.substr(spelling.first.size());
      }
    }
  }
  return args;
}

ParsedArguments
ParseArguments(const std::vector<std::string> & args, const std::vector<OptionSpec> & specs)
{
  ParsedArguments parsed;
  bool            optionsEnded = false;
  for (std::size_t i = 0; i < args.size(); ++i)
  {
    const std::string & arg = args[i];
    if (optionsEnded || arg.size() < 2 || arg[0] != '-')
    {
      parsed.Positionals.push_back(arg);
      continue;
    }
    if (arg == "--")
    {
      optionsEnded = true;
      continue;
    }
    // "--name=value" or "--name [value]".
    const auto         equals = arg.find('=');
    const std::string  name = arg.substr(0, equals);
    const OptionSpec * spec = nullptr;
    for (const auto & candidate : specs)
    {
      if (candidate.Name == name)
      {
        spec = &candidate;
      }
    }
    if (spec == nullptr)
    {
      throw UsageError("unknown option '" + name + "'");
    }
    if (parsed.Has(name))
    {
      throw UsageError("option " + name + " is given more than once");
    }
    std::string value;
    if (!spec->TakesValue)
    {
      if (equals != std::string::npos)
      {
        throw UsageError("option " + name + " takes no value");
      }
    }
    else if (equals != std::string::npos)
    {
      value = arg.substr(equals + 1);
    }
    else if (i + 1 < args.size())
    {
      value = args[++i];
    }
    else
    {
      throw UsageError("option " + name + " needs a value");
    }
    parsed.Set(name, value);
  }
  return parsed;
}

void
ParseInputAndOutput(const ParsedArguments & parsed,
                    const std::string &     command,
                    std::string &           input,
                    std::string &           output)
{
  if (parsed.Positionals.empty())
  {
    throw UsageError(command + " needs an input and an output file name");
  }
  if (parsed.Positionals.size() == 1)
  {
    throw UsageError(command + " needs an output file name after '" + parsed.Positionals[0] + "'");
  }
  if (parsed.Positionals.size() > 2)
  {
    throw UsageError("unexpected argument '" + parsed.Positionals[2] + "'");
  }
  input = parsed.Positionals[0];
  output = parsed.Positionals[1];
}

itk::CudaExecutionMode
ParseDeviceOption(const ParsedArguments & parsed)
{
  itk::CudaExecutionMode mode = itk::CudaExecutionMode::Automatic;
  if (parsed.Has("--device"))
  {
    const std::string device = parsed.Get("--device");
    if (!cif::ExecutionModeFromString(device, mode))
    {
      throw UsageError("--device: unknown device '" + device + "' (expected auto, gpu or cpu)");
    }
  }
  return mode;
}

long long
ParseInteger(const std::string & option, const std::string & text, long long minimum, long long maximum)
{
  const std::string range =
    " (expected an integer from " + std::to_string(minimum) + " to " + std::to_string(maximum) + ")";
  char * end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE ||
      std::isspace(static_cast<unsigned char>(text[0])))
  {
    throw UsageError(option + ": '" + text + "' is not an integer" + range);
  }
  if (value < minimum || value > maximum)
  {
    throw UsageError(option + ": " + text + " is out of range" + range);
  }
  return value;
}

std::size_t
ParseByteSize(const std::string & option, const std::string & text)
{
  std::string digits = text;
  int         shift = 0;
  if (!digits.empty())
  {
    const char unit = static_cast<char>(std::toupper(static_cast<unsigned char>(digits.back())));
    const int  shifts[] = { 10, 20, 30, 40 };
    const auto at = std::string("KMGT").find(unit);
    if (at != std::string::npos)
    {
      shift = shifts[at];
      digits.pop_back();
    }
  }
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos)
  {
    throw UsageError(option + ": '" + text + "' is not a size (bytes, or with K, M, G, T: 4G)");
  }
  const long long value = ParseInteger(option, digits, 1, (1LL << 62) >> shift);
  return static_cast<std::size_t>(value) << shift;
}

double
ParseReal(const std::string & option, const std::string & text, double lower, double upper)
{
  std::ostringstream range;
  range << " (expected a number greater than " << lower << " and less than " << upper << ")";
  char * end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || std::isspace(static_cast<unsigned char>(text[0])) ||
      !std::isfinite(value))
  {
    throw UsageError(option + ": '" + text + "' is not a number" + range.str());
  }
  if (!(value > lower && value < upper))
  {
    throw UsageError(option + ": " + text + " is out of range" + range.str());
  }
  return value;
}

double
ParseFiniteReal(const std::string & option, const std::string & text)
{
  char * end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || std::isspace(static_cast<unsigned char>(text[0])) ||
      !std::isfinite(value))
  {
    throw UsageError(option + ": '" + text + "' is not a number");
  }
  return value;
}

std::vector<double>
ParseRealList(const std::string & option, const std::string & text)
{
  std::vector<double> values;
  std::size_t         start = 0;
  while (true)
  {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty())
    {
      throw UsageError(option + ": '" + text + "' is not a comma-separated list of numbers (an item is empty)");
    }
    char * end = nullptr;
    errno = 0;
    const double value = std::strtod(item.c_str(), &end);
    if (end != item.c_str() + item.size() || std::isspace(static_cast<unsigned char>(item[0])) || !std::isfinite(value))
    {
      throw UsageError(option + ": '" + item + (item == text ? std::string() : "' in '" + text) + "' is not a number");
    }
    values.push_back(value);
    if (comma == std::string::npos)
    {
      return values;
    }
    start = comma + 1;
  }
}

namespace
{
/** "NiftiImageIO, NrrdImageIO, ..." : the image IOs this program can use. */
std::string
RegisteredImageIONames()
{
  std::string names;
  for (const auto & object : itk::ObjectFactoryBase::CreateAllInstance("itkImageIOBase"))
  {
    const auto * io = dynamic_cast<const itk::ImageIOBase *>(object.GetPointer());
    if (io != nullptr)
    {
      names += (names.empty() ? "" : ", ") + std::string(io->GetNameOfClass());
    }
  }
  return names.empty() ? std::string("none") : names;
}

} // namespace

namespace
{
bool g_CompressOutputs = false;
} // namespace

bool
CompressOutput(const std::string & fileName)
{
  const std::string lower = itksys::SystemTools::LowerCase(fileName);
  return g_CompressOutputs || (lower.size() > 3 && lower.compare(lower.size() - 3, 3, ".gz") == 0);
}

void
SetCompressOutputs(bool compress)
{
  g_CompressOutputs = compress;
}

const char * const FloatImageFormats = ".nii.gz, .nii, .nrrd, .nhdr, .mha or .mhd";

ImageFileInformation
ReadImageFileInformation(const std::string & fileName)
{
  if (fileName.empty())
  {
    throw UsageError("the input file name is empty");
  }
  if (itksys::SystemTools::FileIsDirectory(fileName))
  {
    throw RuntimeFailure("cannot read '" + fileName + "': it is a folder, not an image file");
  }
  if (!itksys::SystemTools::FileExists(fileName, true))
  {
    throw RuntimeFailure("cannot read '" + fileName + "': no such file");
  }
  const auto io = itk::ImageIOFactory::CreateImageIO(fileName.c_str(), itk::IOFileModeEnum::ReadMode);
  if (io == nullptr)
  {
    throw RuntimeFailure("cannot read '" + fileName + "': not an image format this program reads (it reads with " +
                         RegisteredImageIONames() + ")");
  }
  // Does the file hold the pixel data its header promises? (ITK's NIfTI and
  // MetaImage readers would print a line and go on with garbage.)
  try
  {
    itk::CudaCheckImageFile(fileName);
  }
  catch (const itk::ExceptionObject & e)
  {
    throw RuntimeFailure(ExceptionMessage(e)); // names the file and what is wrong
  }
  io->SetFileName(fileName);
  try
  {
    io->ReadImageInformation();
  }
  catch (const itk::ExceptionObject & e)
  {
    throw RuntimeFailure("cannot read '" + fileName + "': " + ExceptionMessage(e));
  }
  ImageFileInformation information;
  information.Dimension = io->GetNumberOfDimensions();
  for (unsigned int a = 0; a < information.Dimension; ++a)
  {
    information.Size.push_back(io->GetDimensions(a));
    information.Spacing.push_back(io->GetSpacing(a));
  }
  information.Components = io->GetNumberOfComponents();
  information.PixelType = itk::ImageIOBase::GetPixelTypeAsString(io->GetPixelType());
  information.ComponentType = itk::ImageIOBase::GetComponentTypeAsString(io->GetComponentType());
  information.IOName = io->GetNameOfClass();
  return information;
}

unsigned int
EffectiveDimension(const ImageFileInformation & information)
{
  unsigned int dimension = information.Dimension;
  while (dimension > 3 && information.Size[dimension - 1] == 1)
  {
    --dimension;
  }
  return dimension;
}

bool
IsColourPixel(const ImageFileInformation & information)
{
  return (information.PixelType == "rgb" && information.Components == 3) ||
         (information.PixelType == "rgba" && information.Components == 4);
}

void
PrintColourNote(const std::string & fileName, const ImageFileInformation & information)
{
  std::cerr << ToolName << ": note: '" << fileName << "' has " << information.PixelType
            << " pixels; filtering their luminance" << std::endl;
}

unsigned int
CheckScalarImageInput(const std::string &    fileName,
                      const std::string &    command,
                      bool                   quiet,
                      ImageFileInformation * informationOut)
{
  const ImageFileInformation information = ReadImageFileInformation(fileName);
  // Colour pixels (a PNG with a palette has them) are read as their
  // luminance, ITK's conversion to a scalar; other multi-component pixels
  // are refused.
  const bool colour = IsColourPixel(information);
  if (information.Components != 1 && !colour)
  {
    throw RuntimeFailure("cannot filter '" + fileName + "': it has " + std::to_string(information.Components) +
                         "-component " + information.PixelType + " pixels; " + command +
                         " needs scalar (or RGB) pixels");
  }
  if (colour && !quiet)
  {
    PrintColourNote(fileName, information);
  }
  const unsigned int dimension = EffectiveDimension(information);
  if (dimension != 2 && dimension != 3)
  {
    throw RuntimeFailure("cannot filter '" + fileName + "': it is a " + std::to_string(information.Dimension) +
                         "D image; " + command + " handles 2D and 3D images");
  }
  if (informationOut != nullptr)
  {
    *informationOut = information;
  }
  return dimension;
}

bool
IsIntegerOnlyImageIO(const std::string & ioName)
{
  for (const char * integerOnly : { "PNGImageIO", "JPEGImageIO", "BMPImageIO" })
  {
    if (ioName == integerOnly)
    {
      return true;
    }
  }
  return false;
}

std::string
CheckImageOutput(const std::string & fileName)
{
  if (fileName.empty())
  {
    throw UsageError("the output file name is empty");
  }
  const auto io = itk::ImageIOFactory::CreateImageIO(fileName.c_str(), itk::IOFileModeEnum::WriteMode);
  if (io == nullptr)
  {
    throw UsageError("cannot write '" + fileName + "': unknown image file type (use " + FloatImageFormats + ")");
  }
  const std::string folder = itksys::SystemTools::GetFilenamePath(fileName);
  if (!folder.empty() && !itksys::SystemTools::FileIsDirectory(folder))
  {
    throw UsageError("cannot write '" + fileName + "': folder '" + folder + "' does not exist");
  }
  return io->GetNameOfClass();
}

void
StartDeviceOutsideTiming(itk::CudaExecutionMode mode)
{
  if (mode != itk::CudaExecutionMode::CPU && cif::Runtime::IsDeviceAvailable())
  {
    cif::Runtime::GetFreeMemory();
  }
}

void
CheckGPUAvailable()
{
  if (!cif::Runtime::IsDeviceAvailable())
  {
    const std::string why = "--device gpu: no GPU can be used: " + cif::Runtime::GetUnavailableReason();
    const char *      require = std::getenv("CUDAIMAGEFILTERS_REQUIRE_GPU");
    if (require != nullptr && std::atoi(require) >= 1)
    {
      throw RuntimeFailure(why + " (CUDAIMAGEFILTERS_REQUIRE_GPU=" + require + ")");
    }
    throw Unavailable(why + " (exit status 77; set CUDAIMAGEFILTERS_REQUIRE_GPU=1 to make this a failure)");
  }
}

void
CheckGPURequest(const std::string & gpuUnsupportedReason)
{
  CheckGPUAvailable();
  if (!gpuUnsupportedReason.empty())
  {
    throw UsageError("--device gpu: " + gpuUnsupportedReason);
  }
}

void
ProgressBar::Observe(itk::Object * object)
{
  object->AddObserver(itk::ProgressEvent(), this);
  object->AddObserver(itk::EndEvent(), this);
}

void
ProgressBar::Execute(itk::Object * caller, const itk::EventObject & event)
{
  this->Execute(const_cast<const itk::Object *>(caller), event);
}

void
ProgressBar::Execute(const itk::Object * caller, const itk::EventObject & event)
{
  if (itk::EndEvent().CheckEvent(&event))
  {
    this->Finish();
    return;
  }
  const auto * process = dynamic_cast<const itk::ProcessObject *>(caller);
  if (process != nullptr && itk::ProgressEvent().CheckEvent(&event))
  {
    this->Draw(process->GetProgress());
  }
}

void
ProgressBar::Draw(double fraction)
{
  const double clamped = std::min(1.0, std::max(0.0, fraction));
  const int    percent = static_cast<int>(std::lround(100.0 * clamped));
  // The bar only moves forward: ITK's multi-threaded filters (such as
  // ResampleImageFilter) can report progress out of order.
  if (percent <= m_LastPercent)
  {
    return;
  }
  m_LastPercent = percent;
  constexpr int width = 40;
  const int     filled = static_cast<int>(std::lround(width * clamped));
  std::cerr << '\r' << m_Label << " [" << std::string(filled, '#') << std::string(width - filled, '.') << "] "
            << std::setw(3) << percent << '%' << std::flush;
}

void
ProgressBar::Finish()
{
  if (m_LastPercent >= 0)
  {
    std::cerr << std::endl;
  }
  m_LastPercent = -1;
}

double
UpdateTimed(itk::ProcessObject * filter, const char * label, bool quiet)
{
  ProgressBar::Pointer progress;
  if (!quiet)
  {
    progress = ProgressBar::New();
    progress->SetLabel(label);
    progress->Observe(filter);
  }
  itk::TimeProbe clock;
  try
  {
    clock.Start();
    filter->Update();
    clock.Stop();
  }
  catch (const itk::ExceptionObject & e)
  {
    if (progress)
    {
      progress->Finish();
    }
    throw RuntimeFailure(std::string(label) + " failed: " + ExceptionMessage(e));
  }
  catch (const std::exception & e)
  {
    if (progress)
    {
      progress->Finish();
    }
    throw RuntimeFailure(std::string(label) + " failed: " + e.what());
  }
  return 1000.0 * clock.GetTotal();
}

std::string
WhyNotStreamable(const std::string & input, const std::string & output)
{
  auto in = itk::ImageIOFactory::CreateImageIO(input.c_str(), itk::IOFileModeEnum::ReadMode);
  if (in.IsNull())
  {
    return "no ITK image IO reads '" + input + "'";
  }
  in->SetFileName(input);
  in->ReadImageInformation();
  if (!in->CanStreamRead())
  {
    return "ITK reads '" + input + "' (" + in->GetNameOfClass() +
           ") whole; only uncompressed MetaImage files (.mha, .mhd) can be read in pieces";
  }
  auto out = itk::ImageIOFactory::CreateImageIO(output.c_str(), itk::IOFileModeEnum::WriteMode);
  if (out.IsNull())
  {
    return "no ITK image IO writes '" + output + "'";
  }
  out->SetUseCompression(CompressOutput(output));
  if (out->GetUseCompression())
  {
    return "compressed outputs ('" + output + "') are written whole: leave out --compress and .gz";
  }
  if (!out->CanStreamWrite())
  {
    return "ITK writes '" + output + "' (" + out->GetNameOfClass() +
           ") whole; only uncompressed MetaImage files (.mha, .mhd) can be written in pieces";
  }
  return {};
}

void
AddStreamOptionSpecs(std::vector<OptionSpec> & specs)
{
  specs.push_back({ "--stream", false });
  specs.push_back({ "--stream-memory", true });
}

StreamSettings
ParseStreamOptions(const ParsedArguments & parsed, bool verify)
{
  StreamSettings settings;
  settings.Stream = parsed.Has("--stream");
  if (parsed.Has("--stream-memory"))
  {
    settings.Memory = ParseByteSize("--stream-memory", parsed.Get("--stream-memory"));
    settings.Stream = true;
  }
  if (settings.Stream && verify)
  {
    throw UsageError("--verify reads IN and OUT whole, which --stream is there to avoid: give one of them");
  }
  return settings;
}

void
StreamLargeInput(StreamSettings &    settings,
                 std::size_t         inputBytes,
                 const std::string & input,
                 const std::string & output,
                 bool                verify,
                 bool                quiet)
{
  const std::size_t ram = PhysicalMemoryBytes();
  if (settings.Stream || verify || ram == 0 || inputBytes <= ram / 2 || !WhyNotStreamable(input, output).empty())
  {
    return;
  }
  settings.Stream = true;
  if (!quiet)
  {
    std::cerr << "note: '" << input << "' is larger than half the memory: streaming it (--stream)\n";
  }
}

std::size_t
PeakResidentBytes()
{
  std::ifstream status("/proc/self/status");
  std::string   line;
  while (std::getline(status, line))
  {
    if (line.rfind("VmHWM:", 0) == 0)
    {
      return static_cast<std::size_t>(std::strtoull(line.c_str() + 6, nullptr, 10)) * 1024;
    }
  }
  return 0;
}

std::size_t
PhysicalMemoryBytes()
{
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) : 0;
}

unsigned int
StreamPieces(std::size_t voxels, std::size_t planes, std::size_t bytesPerVoxel, std::size_t memory)
{
  const std::size_t bytes = voxels * bytesPerVoxel;
  const std::size_t pieces = memory == 0 ? planes : (bytes + memory - 1) / memory;
  return static_cast<unsigned int>(
    std::max<std::size_t>(1, std::min<std::size_t>(pieces, std::min<std::size_t>(planes, 1u << 30))));
}

} // namespace tool
} // namespace cif
