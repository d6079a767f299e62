/*=========================================================================
 *  CudaImageFilters: helpers shared by the subcommands of the
 *  cudaimagefilters command-line tool (argument parsing, errors, image IO,
 *  progress display).
 *=========================================================================*/
#ifndef ToolCommon_h
#define ToolCommon_h

#include "itkCommand.h"
#include "itkCudaExecution.h"
#include "itkCudaFactorylessTwin.h"
#include "cif/Runtime.h"
#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"
#include "itkImageIOBase.h"
#include "itkProcessObject.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>
#include <utility>

namespace cif
{
namespace tool
{

constexpr const char * ToolName = "cudaimagefilters";

/** Exit statuses of the tool. */
constexpr int ExitSuccess = 0;
constexpr int ExitFailure = 1;  ///< the work failed: I/O, filter, --verify
constexpr int ExitUsage = 2;    ///< bad command line: nothing was done
constexpr int ExitSkipped = 77; ///< --device gpu without a GPU (CTest's skip code)

/** A bad command line. main() prints it and exits with ExitUsage. */
class UsageError : public std::runtime_error
{
public:
  using std::runtime_error::runtime_error;
};

/** A failure while doing the work. main() prints it and exits with ExitFailure. */
class RuntimeFailure : public std::runtime_error
{
public:
  using std::runtime_error::runtime_error;
};

/** The request needs something this machine lacks (a GPU). main() prints it
 * and exits with ExitSkipped. */
class Unavailable : public std::runtime_error
{
public:
  using std::runtime_error::runtime_error;
};

/** Prints "cudaimagefilters: error: <message>" on one line to stderr. */
void
PrintError(const std::string & message);

/** The message with its line breaks and runs of blanks folded into single
 * spaces, so that multi-line ITK exception texts fit on one line. */
std::string
OneLine(const std::string & message);

/** The description of an ITK exception on one line, without the
 * "ITK ERROR: Class(0x...): " prefix of itkExceptionMacro. */
std::string
ExceptionMessage(const itk::ExceptionObject & exception);

/** True when args (before a "--") contain -h or --help. */
bool
HasHelpOption(const std::vector<std::string> & args);

/** An option a subcommand accepts: "--name" alone or "--name VALUE". */
struct OptionSpec
{
  std::string Name; ///< with the leading "--"
  bool        TakesValue;
};

/** A parsed command line: positional arguments and the options seen. */
class ParsedArguments
{
public:
  std::vector<std::string> Positionals;

  bool
  Has(const std::string & name) const;
  /** The value of an option that takes one; `fallback` when absent. */
  std::string
  Get(const std::string & name, const std::string & fallback = {}) const;

  void
  Set(const std::string & name, const std::string & value);

private:
  std::map<std::string, std::string> m_Options;
};

/** Parses args against the specs: accepts "--name VALUE" and "--name=VALUE";
 * everything after "--" is positional. Throws UsageError for an unknown or
 * repeated option and for a missing value. */
ParsedArguments
ParseArguments(const std::vector<std::string> & args, const std::vector<OptionSpec> & specs);

/** args with other spellings of options replaced by the tool's own
 * (`{ "--lower-threshold", "--lower" }`: the description's names, which
 * the Python keywords use, for a hand-written subcommand's options), in
 * both "--name VALUE" and "--name=VALUE" forms. */
std::vector<std::string>
WithToolSpellings(std::vector<std::string> args, const std::vector<std::pair<std::string, std::string>> & spellings);

/** The input and output file names: exactly two positional arguments. */
void
ParseInputAndOutput(const ParsedArguments & parsed,
                    const std::string &     command,
                    std::string &           input,
                    std::string &           output);

/** --device auto|gpu|cpu (default auto). */
itk::CudaExecutionMode
ParseDeviceOption(const ParsedArguments & parsed);

/** Value parsers for option values; they throw UsageError naming the option. */
long long
ParseInteger(const std::string & option, const std::string & text, long long minimum, long long maximum);
/** A positive byte count: digits with an optional binary suffix K, M, G or
 * T (KiB ... TiB): "4G" is 4 GiB. */
std::size_t
ParseByteSize(const std::string & option, const std::string & text);
/** A finite real strictly between `lower` and `upper`. */
double
ParseReal(const std::string & option, const std::string & text, double lower, double upper);
/** Any finite real. */
double
ParseFiniteReal(const std::string & option, const std::string & text);
/** A comma-separated list of finite reals, "1,-2.5,3" (no blanks, no empty
 * items); one value at least. */
std::vector<double>
ParseRealList(const std::string & option, const std::string & text);

/** What ITK's IO says about an image file without reading its pixels. */
struct ImageFileInformation
{
  unsigned int             Dimension{ 0 };
  std::vector<std::size_t> Size;    ///< one entry per dimension
  std::vector<double>      Spacing; ///< as the header gives it, one entry per dimension

  /** The number of pixels (the product of Size). */
  std::size_t
  Voxels() const
  {
    std::size_t n = 1;
    for (const std::size_t s : Size)
    {
      n *= s;
    }
    return n;
  }
  unsigned int Components{ 0 };
  std::string  PixelType;     ///< e.g. "scalar", "rgb", "rgba", "vector"
  std::string  ComponentType; ///< e.g. "unsigned_char", "float"
  std::string  IOName;        ///< e.g. "NiftiImageIO"
};

/** Reads the header of an image file. Throws RuntimeFailure when the file
 * does not exist or no ITK image IO can read it. */
ImageFileInformation
ReadImageFileInformation(const std::string & fileName);

/** The dimension of the image, not counting axes beyond the third that have
 * size 1 (such a file is read as a volume). */
unsigned int
EffectiveDimension(const ImageFileInformation & information);

/** True for RGB and RGBA pixels, which ITK reads into a scalar image as
 * their luminance. */
bool
IsColourPixel(const ImageFileInformation & information);

/** On stderr: "note: 'FILE' has rgb pixels; filtering their luminance". */
void
PrintColourNote(const std::string & fileName, const ImageFileInformation & information);

/** Reads the header of the input image of `command` and checks that it can
 * be read as a 2D or 3D float image: scalar pixels, or RGB/RGBA ones (a PNG
 * with a palette has them), which are read as their luminance (with
 * PrintColourNote unless `quiet`). Returns the dimension, 2 or 3, and the
 * header in `information` when given; throws RuntimeFailure otherwise. */
unsigned int
CheckScalarImageInput(const std::string &    fileName,
                      const std::string &    command,
                      bool                   quiet,
                      ImageFileInformation * information = nullptr);

/** Checks, before any work is done, that an image can be written to
 * `fileName`: a format that ITK's IO knows, in an existing folder. Returns
 * the name of the ImageIO class that will write it (e.g. "PNGImageIO");
 * throws UsageError otherwise. */
std::string
CheckImageOutput(const std::string & fileName);

/** True for the ImageIO classes that hold 8- or 16-bit integer pixels only. */
bool
IsIntegerOnlyImageIO(const std::string & ioName);

/** The float formats, for messages: ".nii.gz, .nii, .nrrd, .nhdr, .mha or .mhd". */
extern const char * const FloatImageFormats;

/** "181x217" or "256x256x48". */
template <typename TSize>
std::string
SizeToString(const TSize & size)
{
  std::string text;
  for (unsigned int a = 0; a < TSize::Dimension; ++a)
  {
    text += (a == 0 ? "" : "x") + std::to_string(size[a]);
  }
  return text;
}

/** For --device gpu, before any work: without a usable GPU throws
 * Unavailable (exit 77, so that CTest skips GPU tests on machines without
 * one), or RuntimeFailure when the environment sets
 * CUDAIMAGEFILTERS_REQUIRE_GPU=1. */
void
CheckGPUAvailable();

/** Before a command's timed update: unless `mode` is CPU and when a
 * device is usable, creates the current device's CUDA context now
 * (cudaMemGetInfo does), so that the filter time the command prints holds
 * the filter's work (uploads, kernels, downloads) and not the driver's
 * start-up, which goes with the process's start. */
void
StartDeviceOutsideTiming(itk::CudaExecutionMode mode);

/** For --device gpu: CheckGPUAvailable(), then a UsageError when the filter
 * cannot run the request on the GPU (`gpuUnsupportedReason` not empty). */
void
CheckGPURequest(const std::string & gpuUnsupportedReason);

/** ITK's own filter TFilter, created without the object factory: the
 * references that --verify compares with (itkCudaFactorylessTwin.h). */
template <typename TFilter>
using FactorylessReference = itk::CudaFactorylessTwin<TFilter>;

/** The image's max - min over its finite pixels; for a constant image its
 * largest magnitude, and 1 for an all-zero one. */
template <typename TImage>
double
DynamicRange(const TImage * image)
{
  const auto * pixels = image->GetBufferPointer();
  const auto   count = image->GetBufferedRegion().GetNumberOfPixels();
  double       lowest = std::numeric_limits<double>::infinity();
  double       highest = -lowest;
  for (itk::SizeValueType i = 0; i < count; ++i)
  {
    const double value = pixels[i];
    if (std::isfinite(value))
    {
      lowest = std::min(lowest, value);
      highest = std::max(highest, value);
    }
  }
  if (!(highest > lowest))
  {
    const double magnitude = std::isfinite(highest) ? std::max(std::fabs(lowest), std::fabs(highest)) : 0.0;
    return magnitude > 0.0 ? magnitude : 1.0;
  }
  return highest - lowest;
}

/** Largest |a - b| over all pixels of two images of the same size; infinite
 * when exactly one of a pair is not finite or when the two disagree on
 * non-finite values. */
template <typename TImage>
double
LargestDifference(const TImage * a, const TImage * b)
{
  const auto * pa = a->GetBufferPointer();
  const auto * pb = b->GetBufferPointer();
  const auto   count = a->GetBufferedRegion().GetNumberOfPixels();
  double       largest = 0.0;
  for (itk::SizeValueType i = 0; i < count; ++i)
  {
    const double va = pa[i];
    const double vb = pb[i];
    if (std::isfinite(va) && std::isfinite(vb))
    {
      largest = std::max(largest, std::fabs(va - vb));
    }
    else if (!(std::isnan(va) && std::isnan(vb)) && va != vb)
    {
      return std::numeric_limits<double>::infinity();
    }
  }
  return largest;
}

/** Reads a whole image; ITK exceptions become RuntimeFailure. */
template <typename TImage>
typename TImage::Pointer
ReadImageFile(const std::string & fileName)
{
  auto reader = itk::ImageFileReader<TImage>::New();
  reader->SetFileName(fileName);
  try
  {
    reader->Update();
  }
  catch (const itk::ExceptionObject & e)
  {
    throw RuntimeFailure("cannot read '" + fileName + "': " + ExceptionMessage(e));
  }
  typename TImage::Pointer image = reader->GetOutput();
  image->DisconnectPipeline();
  return image;
}

/** Whether an output is written compressed: with --compress (any command;
 * the tool's main() takes it out of the arguments and calls
 * SetCompressOutputs), or when its name says so (.gz, as .nii.gz), as
 * itk::WriteImage does by default. Uncompressed otherwise: gzip runs on one
 * core at tens of MB/s, so an 8 GB volume would take minutes to write, far
 * longer than the filtering. */
bool
CompressOutput(const std::string & fileName);
void
SetCompressOutputs(bool compress);

/** Writes an image, compressed when CompressOutput says so; ITK exceptions
 * become RuntimeFailure. */
template <typename TImage>
void
WriteImageFile(const TImage * image, const std::string & fileName)
{
  auto writer = itk::ImageFileWriter<TImage>::New();
  writer->SetInput(image);
  writer->SetFileName(fileName);
  writer->SetUseCompression(CompressOutput(fileName));
  try
  {
    writer->Update();
  }
  catch (const itk::ExceptionObject & e)
  {
    throw RuntimeFailure("cannot write '" + fileName + "': " + ExceptionMessage(e));
  }
}

/** \class ProgressBar
 * \brief Observer of itk::ProgressEvent that draws a text progress bar on
 * stderr, ended by itk::EndEvent. */
class ProgressBar : public itk::Command
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(ProgressBar);

  using Self = ProgressBar;
  using Superclass = itk::Command;
  using Pointer = itk::SmartPointer<Self>;
  itkNewMacro(Self);

  /** Text shown before the bar, e.g. "bspline-prefilter". */
  void
  SetLabel(const std::string & label)
  {
    m_Label = label;
  }

  /** Observes `object`'s ProgressEvent and EndEvent. */
  void
  Observe(itk::Object * object);

  /** Ends the bar's line (if one was drawn). Called at EndEvent; call it
   * when the filter throws, so that the error starts on a line of its own. */
  void
  Finish();

  void
  Execute(itk::Object * caller, const itk::EventObject & event) override;
  void
  Execute(const itk::Object * caller, const itk::EventObject & event) override;

protected:
  ProgressBar() = default;
  ~ProgressBar() override = default;

private:
  void
  Draw(double fraction);

  std::string m_Label;
  int         m_LastPercent{ -1 };
};

/** Updates `filter` and returns its wall time in milliseconds; draws a
 * progress bar labelled `label` unless `quiet`. Any exception becomes a
 * RuntimeFailure "<label> failed: ...". */
double
UpdateTimed(itk::ProcessObject * filter, const char * label, bool quiet);

/** Why IN cannot be read in pieces or OUT written in pieces by ITK's
 * streaming reader and writer (empty when both can), as the files' ITK
 * image IOs say (CanStreamRead, CanStreamWrite). With ITK 5.2.1 only
 * uncompressed MetaImage files (.mha, .mhd + .raw) stream, both ways;
 * NRRD, NIfTI, PNG, TIFF and compressed files are read and written whole. */
std::string
WhyNotStreamable(const std::string & input, const std::string & output);

/** The process's peak resident memory so far, in bytes (VmHWM; 0 when the
 * system does not say). */
std::size_t
PeakResidentBytes();

/** Physical memory of the machine, in bytes (0 when unknown). */
std::size_t
PhysicalMemoryBytes();

/** How a streaming subcommand runs: --stream, and the bytes of input and
 * output per piece (--stream-memory SIZE, which implies --stream). */
struct StreamSettings
{
  bool        Stream{ false };
  std::size_t Memory{ std::size_t{ 1 } << 30 };
};

/** The option specs of --stream and --stream-memory, for ParseArguments. */
void
AddStreamOptionSpecs(std::vector<OptionSpec> & specs);

/** Reads --stream and --stream-memory; --verify (which reads IN and OUT
 * whole) with either is a usage error. */
StreamSettings
ParseStreamOptions(const ParsedArguments & parsed, bool verify);

/** Turns streaming on, with a note on stderr unless `quiet`, when the input
 * (`inputBytes`) is larger than half the RAM, both files can stream
 * (WhyNotStreamable) and --verify is not given. */
void
StreamLargeInput(StreamSettings &    settings,
                 std::size_t         inputBytes,
                 const std::string & input,
                 const std::string & output,
                 bool                verify,
                 bool                quiet);

/** Pieces for streaming an image of `voxels` with `planes` along its
 * slowest axis, `bytesPerVoxel` of input and output together, so that a
 * piece holds about `memory` bytes (at least 1, at most `planes`). */
unsigned int
StreamPieces(std::size_t voxels, std::size_t planes, std::size_t bytesPerVoxel, std::size_t memory);

/** Reads IN, filters and writes OUT in pieces through ITK's streaming
 * reader and writer (ImageFileWriter::SetNumberOfStreamDivisions): memory
 * stays bounded by a piece and its halo, whatever the image's size. IN is
 * read as TImage, OUT written as TOutputImage. The
 * filter (set up, input not set) must ask for the input region its output
 * piece needs, as the module's filters do. Prints one line: size, what
 * `describe()` says, the pieces, the device, the time and the peak memory.
 * Throws RuntimeFailure when a format cannot stream (WhyNotStreamable). */
template <typename TImage, typename TOutputImage = TImage, typename TFilter, typename TDescribe>
int
RunStreamed(TFilter *           filter,
            const std::string & command,
            const std::string & input,
            const std::string & output,
            std::size_t         memory,
            bool                quiet,
            TDescribe &&        describe)
{
  const std::string why = WhyNotStreamable(input, output);
  if (!why.empty())
  {
    throw RuntimeFailure("--stream: " + why);
  }
  auto reader = itk::ImageFileReader<TImage>::New();
  reader->SetFileName(input);
  try
  {
    reader->UpdateOutputInformation();
  }
  catch (const itk::ExceptionObject & e)
  {
    throw RuntimeFailure("cannot read '" + input + "': " + ExceptionMessage(e));
  }
  const auto         size = reader->GetOutput()->GetLargestPossibleRegion().GetSize();
  const unsigned int pieces =
    StreamPieces(reader->GetOutput()->GetLargestPossibleRegion().GetNumberOfPixels(),
                 size[TImage::ImageDimension - 1],
                 sizeof(typename TImage::PixelType) + sizeof(typename TOutputImage::PixelType),
                 memory);
  filter->SetInput(reader->GetOutput());
  auto writer = itk::ImageFileWriter<TOutputImage>::New();
  writer->SetInput(filter->GetOutput());
  writer->SetFileName(output);
  writer->SetUseCompression(false);
  writer->SetNumberOfStreamDivisions(pieces);
  const double milliseconds = UpdateTimed(writer, command.c_str(), quiet);
  std::cout << command << ": " << SizeToString(size) << " pixels ("
            << itk::CudaPixelTypeName<typename TImage::PixelType>() << "); " << describe() << "; streamed in " << pieces
            << " piece" << (pieces == 1 ? "" : "s") << " (ITK's streaming reader and writer); last piece ran on "
            << filter->GetLastExecutionReport().Message << "; time " << std::fixed << std::setprecision(3)
            << milliseconds << " ms (reading, filtering and writing); peak memory " << std::setprecision(1)
            << PeakResidentBytes() / 1048576.0 << " MiB" << std::endl;
  std::cout.unsetf(std::ios_base::floatfield);
  std::cout << std::setprecision(6);
  return ExitSuccess;
}

/** A subcommand of the tool. To add one: write its Main and Usage in a
 * source file of its own, declare them below, add a row to the table in
 * CudaImageFiltersTool.cxx and the source file to apps/CMakeLists.txt. Main
 * gets the arguments after the subcommand's name; it returns the exit status
 * or throws UsageError, RuntimeFailure or Unavailable. */
struct Subcommand
{
  const char * Name;
  const char * Summary;
  int (*Main)(const std::vector<std::string> & args);
  void (*PrintUsage)(std::ostream & os);
};

int
ResampleMain(const std::vector<std::string> & args);
void
ResampleUsage(std::ostream & os);

int
GaussianRBFMain(const std::vector<std::string> & args);
void
GaussianRBFUsage(std::ostream & os);

int
SegmentMain(const std::vector<std::string> & args);
void
SegmentUsage(std::ostream & os);

int
KernelSuperpositionMain(const std::vector<std::string> & args);
void
KernelSuperpositionUsage(std::ostream & os);

int
DemonsMain(const std::vector<std::string> & args);
void
DemonsUsage(std::ostream & os);

int
RegisterMain(const std::vector<std::string> & args);
void
RegisterUsage(std::ostream & os);

} // namespace tool
} // namespace cif

#endif
