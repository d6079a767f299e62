/*=========================================================================
 *  CudaImageFilters: helpers shared by the filtering and segmentation
 *  subcommands of the cudaimagefilters tool.
 *=========================================================================*/
#include "FilterCommon.h"

#include "itkCudaExecution.h"

#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <sstream>

namespace cif
{
namespace tool
{

const char *
PixelKindName(PixelKind kind)
{
  switch (kind)
  {
    case PixelKind::UnsignedChar:
      return "unsigned char";
    case PixelKind::Short:
      return "short";
    case PixelKind::UnsignedShort:
      return "unsigned short";
    case PixelKind::Float:
      break;
  }
  return "float";
}

FilterInput
DescribeFilterInput(const std::string & fileName, const std::string & command)
{
  FilterInput input;
  input.Dimension = CheckScalarImageInput(fileName, command, true, &input.Information);
  const std::string & component = input.Information.ComponentType;
  if (component == "unsigned_char")
  {
    input.Pixel = PixelKind::UnsignedChar;
  }
  else if (component == "short")
  {
    input.Pixel = PixelKind::Short;
  }
  else if (component == "unsigned_short")
  {
    input.Pixel = PixelKind::UnsignedShort;
  }
  else
  {
    input.Pixel = PixelKind::Float;
    input.ConvertedToFloat = component != "float";
  }
  return input;
}

void
PrintFilterInputNotes(const std::string & fileName, const FilterInput & input, bool quiet)
{
  if (quiet)
  {
    return;
  }
  if (IsColourPixel(input.Information))
  {
    PrintColourNote(fileName, input.Information);
  }
  if (input.ConvertedToFloat)
  {
    std::cerr << ToolName << ": note: '" << fileName << "' has " << input.Information.ComponentType
              << " pixels; they are read as float (the filters keep unsigned char, short, unsigned short and float)"
              << std::endl;
  }
}

namespace
{
std::string
FormatOf(const std::string & ioName)
{
  const std::string suffix = "ImageIO";
  if (ioName.size() > suffix.size() && ioName.compare(ioName.size() - suffix.size(), suffix.size(), suffix) == 0)
  {
    return ioName.substr(0, ioName.size() - suffix.size());
  }
  return ioName;
}
} // namespace

void
CheckTypedImageOutput(const std::string & fileName, PixelKind kind, unsigned int dimension, const std::string & what)
{
  const std::string ioName = CheckImageOutput(fileName);
  if (ioName == "JPEGImageIO")
  {
    throw UsageError("cannot write '" + fileName + "': JPEG is lossy (use " + FloatImageFormats + ", or .png for 2D)");
  }
  const bool png = ioName == "PNGImageIO";
  if (png || IsIntegerOnlyImageIO(ioName))
  {
    const bool pixelFits = kind == PixelKind::UnsignedChar || (png && kind == PixelKind::UnsignedShort);
    if (dimension != 2 || !pixelFits)
    {
      throw UsageError("cannot write '" + fileName + "': " + FormatOf(ioName) + " files hold 2D " +
                       (png ? "unsigned char or unsigned short" : "unsigned char") + " images, and " + what + " is a " +
                       std::to_string(dimension) + "D image of " + PixelKindName(kind) + " pixels (use " +
                       FloatImageFormats + ")");
    }
  }
}

const char * const PackedMaskFormats = ".nrrd, .nhdr, .mha or .mhd";

void
CheckPackedMaskOutput(const std::string & fileName)
{
  const std::string ioName = CheckImageOutput(fileName);
  if (ioName != "NrrdImageIO" && ioName != "MetaImageIO")
  {
    throw UsageError("cannot write '" + fileName + "': a packed mask is written as " + PackedMaskFormats +
                     " (its true grid travels in header fields that " + FormatOf(ioName) + " files do not keep)");
  }
}

std::vector<long long>
ParseIntegerList(const std::string & option, const std::string & text, long long minimum, long long maximum)
{
  const std::string range =
    " (expected integers from " + std::to_string(minimum) + " to " + std::to_string(maximum) + ")";
  std::vector<long long> values;
  std::size_t            start = 0;
  while (true)
  {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const std::string where = item == text ? std::string() : "' in '" + text;
    if (item.empty())
    {
      throw UsageError(option + ": '" + text + "' is not a comma-separated list of integers (an item is empty)");
    }
    char * end = nullptr;
    errno = 0;
    const long long value = std::strtoll(item.c_str(), &end, 10);
    if (end != item.c_str() + item.size() || errno == ERANGE || std::isspace(static_cast<unsigned char>(item[0])))
    {
      throw UsageError(option + ": '" + item + where + "' is not an integer" + range);
    }
    if (value < minimum || value > maximum)
    {
      throw UsageError(option + ": " + item + (where.empty() ? std::string() : " in '" + text + "'") +
                       " is out of range" + range);
    }
    values.push_back(value);
    if (comma == std::string::npos)
    {
      return values;
    }
    start = comma + 1;
  }
}

double
ParsePositiveReal(const std::string & option, const std::string & text)
{
  const double value = ParseFiniteReal(option, text);
  if (!(value > 0.0))
  {
    throw UsageError(option + ": " + text + " is not a positive number (expected a number greater than 0)");
  }
  return value;
}

void
CheckPerAxisCount(const std::string & option,
                  const std::string & text,
                  std::size_t         count,
                  unsigned int        dimension,
                  const std::string & input)
{
  if (count != 1 && count != dimension)
  {
    throw UsageError(option + " " + text + " has " + std::to_string(count) + " values, but '" + input + "' is a " +
                     std::to_string(dimension) + "D image (give one value for all axes, or one per axis)");
  }
}

const char *
SmoothingKindName(SmoothingKind kind)
{
  switch (kind)
  {
    case SmoothingKind::Median:
      return "median";
    case SmoothingKind::Bilateral:
      return "bilateral";
    case SmoothingKind::RotatingMask:
      return "rotating-mask";
    case SmoothingKind::None:
      break;
  }
  return "none";
}

void
AppendSmoothingOptionSpecs(std::vector<OptionSpec> & specs)
{
  specs.push_back({ "--radius", true });
  specs.push_back({ "--domain-sigma", true });
  specs.push_back({ "--range-sigma", true });
  specs.push_back({ "--iterations", true });
}

SmoothingSettings
ParseSmoothingSettings(const ParsedArguments & parsed,
                       SmoothingKind           kind,
                       const std::string &     context,
                       unsigned int            defaultIterations,
                       long long               defaultMedianRadius)
{
  SmoothingSettings settings;
  settings.Kind = kind;
  const bool takesRadius = kind == SmoothingKind::Median || kind == SmoothingKind::Bilateral;
  const bool takesSigmas = kind == SmoothingKind::Bilateral;
  const bool takesIterations = kind == SmoothingKind::Bilateral || kind == SmoothingKind::RotatingMask;
  auto       refuse = [&](const char * option, bool applies, const char * why)
  {
    if (parsed.Has(option) && !applies)
    {
      throw UsageError(std::string(option) + " does not apply to " + context + why);
    }
  };
  const char * maskNote = kind == SmoothingKind::RotatingMask ? " (its mask is 5x5, or 5x5x5 in 3D)" : "";
  refuse("--radius", takesRadius, maskNote);
  refuse("--domain-sigma", takesSigmas, "");
  refuse("--range-sigma", takesSigmas, "");
  refuse("--iterations", takesIterations, "");

  if (takesRadius && parsed.Has("--radius"))
  {
    settings.RadiusText = parsed.Get("--radius");
    settings.Radius = ParseIntegerList("--radius", settings.RadiusText, 0, MaxRadius);
  }
  if (kind == SmoothingKind::Median && settings.Radius.empty())
  {
    if (defaultMedianRadius < 0)
    {
      throw UsageError(context + " needs --radius R or --radius R1,R2[,R3] (the window is 2R+1 pixels wide)");
    }
    settings.Radius = { defaultMedianRadius };
    settings.RadiusText = std::to_string(defaultMedianRadius);
  }
  if (takesSigmas)
  {
    if (!parsed.Has("--domain-sigma") || !parsed.Has("--range-sigma"))
    {
      throw UsageError(context + " needs --domain-sigma S (physical units, or S1,S2[,S3] per axis) and --range-sigma S "
                                 "(pixel values)");
    }
    settings.DomainSigmaText = parsed.Get("--domain-sigma");
    settings.DomainSigma = ParseRealList("--domain-sigma", settings.DomainSigmaText);
    for (const double sigma : settings.DomainSigma)
    {
      if (!(sigma > 0.0))
      {
        std::ostringstream value;
        value << sigma;
        throw UsageError("--domain-sigma: " + value.str() +
                         (settings.DomainSigma.size() == 1 ? std::string() : " in '" + settings.DomainSigmaText + "'") +
                         " is not a positive number (expected numbers greater than 0)");
      }
    }
    settings.RangeSigmaText = parsed.Get("--range-sigma");
    settings.RangeSigma = ParsePositiveReal("--range-sigma", settings.RangeSigmaText);
  }
  if (takesIterations)
  {
    settings.Iterations = defaultIterations;
    if (parsed.Has("--iterations"))
    {
      settings.Iterations =
        static_cast<unsigned int>(ParseInteger("--iterations", parsed.Get("--iterations"), 1, MaxIterations));
    }
  }
  return settings;
}

void
CheckSmoothingDimension(const SmoothingSettings & settings, unsigned int dimension, const std::string & input)
{
  if (!settings.Radius.empty())
  {
    CheckPerAxisCount("--radius", settings.RadiusText, settings.Radius.size(), dimension, input);
  }
  if (!settings.DomainSigma.empty())
  {
    CheckPerAxisCount("--domain-sigma", settings.DomainSigmaText, settings.DomainSigma.size(), dimension, input);
  }
}

ThresholdSettings
ParseThresholds(const ParsedArguments & parsed, const std::string & command)
{
  if (!parsed.Has("--lower") || !parsed.Has("--upper"))
  {
    throw UsageError(command + " needs --lower L and --upper U (a voxel is inside when L <= value <= U)");
  }
  ThresholdSettings settings;
  settings.LowerText = parsed.Get("--lower");
  settings.UpperText = parsed.Get("--upper");
  settings.Lower = ParseFiniteReal("--lower", settings.LowerText);
  settings.Upper = ParseFiniteReal("--upper", settings.UpperText);
  if (settings.Lower > settings.Upper)
  {
    throw UsageError("--lower " + settings.LowerText + " is greater than --upper " + settings.UpperText +
                     " (a voxel is inside when lower <= value <= upper)");
  }
  return settings;
}

template <typename T>
void
ThresholdsInPixelType(const ThresholdSettings & settings, const std::string & input, T & lower, T & upper)
{
  bool empty = false;
  if constexpr (std::is_integral<T>::value)
  {
    const double lowest = std::max(std::ceil(settings.Lower), static_cast<double>(std::numeric_limits<T>::lowest()));
    const double highest = std::min(std::floor(settings.Upper), static_cast<double>(std::numeric_limits<T>::max()));
    empty = lowest > highest;
    if (!empty)
    {
      lower = static_cast<T>(lowest);
      upper = static_cast<T>(highest);
    }
  }
  else
  {
    const double largest = static_cast<double>(FLT_MAX);
    empty = settings.Lower > largest || settings.Upper < -largest;
    if (!empty)
    {
      // the smallest float >= Lower and the largest <= Upper: the same set of float values
      float lowest = settings.Lower < -largest ? -FLT_MAX : static_cast<float>(settings.Lower);
      if (static_cast<double>(lowest) < settings.Lower)
      {
        lowest = std::nextafter(lowest, std::numeric_limits<float>::infinity());
      }
      float highest = settings.Upper > largest ? FLT_MAX : static_cast<float>(settings.Upper);
      if (static_cast<double>(highest) > settings.Upper)
      {
        highest = std::nextafter(highest, -std::numeric_limits<float>::infinity());
      }
      empty = lowest > highest;
      lower = lowest;
      upper = highest;
    }
  }
  if (empty)
  {
    throw UsageError(std::string("no ") + itk::CudaPixelTypeName<T>() + " value lies in [" + settings.LowerText + ", " +
                     settings.UpperText + "], so every voxel of '" + input + "' would be outside");
  }
}

template void
ThresholdsInPixelType<unsigned char>(const ThresholdSettings &, const std::string &, unsigned char &, unsigned char &);
template void
ThresholdsInPixelType<short>(const ThresholdSettings &, const std::string &, short &, short &);
template void
ThresholdsInPixelType<unsigned short>(const ThresholdSettings &,
                                      const std::string &,
                                      unsigned short &,
                                      unsigned short &);
template void
ThresholdsInPixelType<float>(const ThresholdSettings &, const std::string &, float &, float &);

void
PrintInputArgumentHelp(std::ostream & os)
{
  os << "  IN                   input image, 2D or 3D: .nii.gz, .nii, .nrrd, .nhdr, .mha,\n"
     << "                       .mhd, .png; unsigned char, short, unsigned short and\n"
     << "                       float pixels are kept, other types are read as float,\n"
     << "                       RGB(A) pixels as their luminance\n";
}

void
PrintImageOutputArgumentHelp(std::ostream & os)
{
  os << "  OUT                  output image in IN's pixel type: .nii.gz, .nii, .nrrd,\n"
     << "                       .nhdr, .mha, .mhd, or .png (2D unsigned char or\n"
     << "                       unsigned short only)\n";
}

void
PrintDeviceOptionHelp(std::ostream & os)
{
  os << "  --device D           auto (default): the GPU when it can run the job, else\n"
     << "                       the CPU; gpu: the GPU only; cpu: the CPU only\n";
}

void
PrintStreamOptionHelp(std::ostream & os)
{
  os << "  --stream             read, filter and write in pieces along the slowest axis\n"
     << "                       (ITK's streaming reader and writer), so that images\n"
     << "                       larger than the memory are filtered: uncompressed\n"
     << "                       MetaImage files (.mha, .mhd) in and out (ITK reads and\n"
     << "                       writes the other formats whole). Automatic for such\n"
     << "                       inputs larger than half the RAM\n"
     << "  --stream-memory SIZE bytes of input and output per piece (K, M, G: 2G;\n"
     << "                       default 1G); implies --stream\n";
}

void
PrintQuietAndHelpOptionHelp(std::ostream & os)
{
  os << "  --compress           write the output compressed (gzip/zlib: small files,\n"
     << "                       but tens of MB/s); by default only names ending in\n"
     << "                       .gz (.nii.gz) are compressed\n"
     << "  --quiet              no progress bar, no notes\n"
     << "  -h, --help           print this help\n";
}

void
PrintExitStatusHelp(std::ostream & os)
{
  os << "Exit status: 0 done; 1 failure (reading, filtering, writing, --verify);\n"
     << "2 bad command line (nothing was done); 77 --device gpu without a usable GPU\n"
     << "(1 instead when the environment sets CUDAIMAGEFILTERS_REQUIRE_GPU=1).\n";
}

std::pair<double, double>
CheckThresholdsFitPixelType(const ThresholdSettings & settings, const FilterInput & input, const std::string & fileName)
{
  std::pair<double, double> bounds;
  DispatchPixelAndDimension(input.Pixel,
                            input.Dimension,
                            [&](auto pixel, auto)
                            {
                              using T = typename decltype(pixel)::Type;
                              T lower{}, upper{};
                              ThresholdsInPixelType<T>(settings, fileName, lower, upper);
                              bounds = { static_cast<double>(lower), static_cast<double>(upper) };
                              return 0;
                            });
  return bounds;
}

} // namespace tool
} // namespace cif
