/*=========================================================================
 *  CudaImageFilters: one description per filter (the core's registry).
 *
 *  A filter is described once, in src/core/<filter>/<Filter>Descriptor.cxx:
 *  its names (the subcommand, the Python function, the ITK class and its
 *  ITK twin), its parameters (name, kind, per axis or not, range, default,
 *  choices, help), the pixel types and dimensions of each device, the halo
 *  a piece of the image needs, the output grid, and the CPU and CUDA entry
 *  points with their slab policy. The faces are generated from it:
 *
 *  - the command-line tool's subcommand (options, help, checks: apps/);
 *  - the Python function, its keywords and its halo (python/);
 *  - the list of filters the tests iterate over (every face present).
 *
 *  CheckParameters is the one validation of a call's parameters; every face
 *  calls it once per call. Plain C++: no ITK, no CUDA.
 *=========================================================================*/
#ifndef cif_Filter_h
#define cif_Filter_h

#include "cif/Execution.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace cif
{

/** The pixel types of the cores. */
enum class Pixel : std::uint8_t
{
  UInt8,
  Int16,
  UInt16,
  Float32,
  Float64
};
/** "uint8", "int16", "uint16", "float32", "float64" (NumPy's names). */
const char *
PixelName(Pixel pixel);
/** "unsigned char", "short", ..., "double" (the C++ type). */
const char *
CTypeName(Pixel pixel);
/** Bytes of one pixel. */
std::size_t
PixelBytes(Pixel pixel);
/** Whether `pixel` is in `list`. */
bool
HasPixel(const std::vector<Pixel> & list, Pixel pixel);

/** The cif::Pixel of a C++ pixel type: unsigned char, short, unsigned
 * short, float or double (the cores' types; any other type is taken for
 * double, so the faces check the type first). Written for C++11, as the
 * ITK classes' headers are read by the Python wrapping. */
template <typename T>
constexpr Pixel
PixelTypeOf()
{
  return std::is_same<T, std::uint8_t>::value    ? Pixel::UInt8
         : std::is_same<T, std::int16_t>::value  ? Pixel::Int16
         : std::is_same<T, std::uint16_t>::value ? Pixel::UInt16
         : std::is_same<T, float>::value         ? Pixel::Float32
                                                 : Pixel::Float64;
}

/** Progress of a CPU entry, a fraction in [0, 1] (may be empty). */
using Progress = std::function<void(double)>;

/** What a parameter holds. Choices are stored as the index of the choice. */
enum class ParameterKind : std::uint8_t
{
  Integer,
  Real,
  Choice,
  /** a real value that may be absent (Python None, no CLI option): an
   * empty value list */
  OptionalReal,
  /** integer values that may be absent (an empty value list; the filter
   * says what absent means, e.g. an automatic radius) */
  OptionalInteger
};

/** Whether a parameter of this kind may be absent. */
inline bool
IsOptional(ParameterKind kind)
{
  return kind == ParameterKind::OptionalReal || kind == ParameterKind::OptionalInteger;
}

/** One parameter of a filter. The name is snake_case: the Python keyword;
 * the CLI option is --name with '-' for '_'; the ITK class's Set method is
 * the name in CamelCase. */
struct ParameterSpec
{
  std::string   name;
  ParameterKind kind{ ParameterKind::Integer };
  /** One value for every axis, or one per axis (x, y, z order). */
  bool perAxis{ false };
  /** The Python function takes it by position too (after the image). */
  bool positional{ false };
  /** Inclusive range of every value (the choices' indices for Choice). */
  double minimum{ -1e308 };
  double maximum{ 1e308 };
  /** The default (one value, or one per axis); empty: no default (the CLI
   * option is required; for OptionalReal, absent). */
  std::vector<double> defaults;
  /** The names of the choices (Choice). */
  std::vector<std::string> choices;
  std::string              help;
  /** A property of the image rather than a setting ("spacing"): every face
   * fills it from the image (the ITK input's, the file's, the itk.Image's)
   * unless the caller gives it (a NumPy array's spacing keyword). */
  bool fromImage{ false };
  /** Values must exceed `minimum` (a sigma: positive). */
  bool exclusiveMinimum{ false };
  /** The command line asks for it although it has a default (a smoothing
   * width, which a tool's user should choose; ITK's and Python's default
   * stands elsewhere). */
  bool commandLineRequired{ false };
  /** Other spellings of its command-line option, without "--"
   * ("iterations" for number_of_iterations): the subcommands' names from
   * before their options came from the description. */
  std::vector<std::string> optionAliases;
  /** Other names of choices, each with the choice it stands for ({"iir",
   * "recursive"}): accepted by every face, never printed. */
  std::vector<std::pair<std::string, std::string>> choiceAliases;
  /** NaN is a value of this real parameter, compared as ITK compares it
   * (a threshold: no pixel lies beyond a NaN bound, so every pixel is
   * outside); else NaN is refused. */
  bool nanAllowed{ false };
  /** The image's direction matrix (with fromImage): D x D values, row by
   * row; `defaults` are not used, absent it is the identity. */
  bool matrix{ false };
};

/** A call's parameters: name -> values (one per axis after CheckParameters
 * for per-axis parameters). */
using Parameters = std::map<std::string, std::vector<double>>;

/** The extent of an image buffer: its dimension and size per axis (x
 * fastest; axes past the dimension have size 1). */
struct Extent
{
  int          dimension{ 0 };
  std::int64_t size[3]{ 1, 1, 1 };
  std::int64_t
  Pixels() const
  {
    return size[0] * size[1] * size[2];
  }
};

/** A pixel type, or none: std::optional<Pixel>'s use here, written out so
 * that this header (which the ITK classes include) parses as C++11 too, as
 * the CastXML of ITK 5.2's Python wrapping reads it. */
class OptionalPixel
{
public:
  OptionalPixel() = default;
  OptionalPixel(Pixel pixel)
    : m_Set(true)
    , m_Pixel(pixel)
  {}
  explicit operator bool() const { return m_Set; }
  /** The pixel type (only where one is set). */
  Pixel
  operator*() const
  {
    return m_Pixel;
  }

private:
  bool  m_Set{ false };
  Pixel m_Pixel{ Pixel::UInt8 };
};

/** One call's job: the input buffer's size, and the output buffer's size
 * and place. For filters on the input's grid the output is the region
 * starting at outputStart (in input pixels) inside the input; for the Bin
 * grid outputStart is where the first output pixel's bin starts in the
 * input buffer (in input pixels too): output pixel i bins input pixels
 * [outputStart + i f, outputStart + i f + f); for the Subsample grid
 * output pixel i is input pixel outputStart + i f. The slab runner cuts jobs of
 * the first kind (cif::SlabGeometry). */
struct Job
{
  int          dimension{ 0 };
  std::int64_t inputSize[3]{ 1, 1, 1 };
  std::int64_t outputStart[3]{ 0, 0, 0 };
  std::int64_t outputSize[3]{ 1, 1, 1 };
  /** Where a CPU entry reports its progress (the ITK classes' progress
   * events; empty for the other faces). GPU entries ignore it. */
  Progress progress;
  /** The output buffer's pixel type, for filters whose output type is
   * chosen apart from the input's (FilterDescriptor::outputPixels: the
   * threshold's labels); unset for the others. */
  OptionalPixel outputPixel;
  /** The companion image's buffer (FilterDescriptor::companion: the mask of
   * the mask filter) and its pixel type, for filters that have one: of the
   * input buffer's extent (inputSize) and on the same device as the input;
   * null for the others. */
  const void *  companion{ nullptr };
  OptionalPixel companionPixel;
};

/** A core's geometry (a struct with inputSize, outputStart and outputSize
 * on three axes, as the median, box and clamped-neighbourhood jobs have)
 * with the job's sizes. */
template <typename TGeometry>
TGeometry
GeometryOfJob(const Job & job)
{
  TGeometry g;
  for (int a = 0; a < 3; ++a)
  {
    g.inputSize[a] = job.inputSize[a];
    g.outputStart[a] = job.outputStart[a];
    g.outputSize[a] = job.outputSize[a];
  }
  return g;
}

/** The whole-image job of an image and an output extent. */
Job
WholeImageJob(const Extent & input, const Extent & output);

/** How the output grid follows from the input's. */
enum class OutputGrid : std::uint8_t
{
  /** the input's grid (neighbourhood filters) */
  Same,
  /** shrunk by the integer factors of the parameter "shrink_factors":
   * size floor(n / f) (at least 1), spacing times f, origin at the centre
   * of the first bin (itk::BinShrinkImageFilter) */
  Bin,
  /** subsampled by the integer factors of the parameter "shrink_factors":
   * size floor(n / f) (at least 1), spacing times f, the output's centre on
   * the input's (itk::ShrinkImageFilter); output pixel i is input pixel
   * outputStart + i f */
  Subsample
};

/** What an entry point tells of its run: a note for the execution report
 * (the GPU algorithm, say; may be empty) and, for filters whose parameters
 * choose an algorithm with an automatic choice (the median's "kernel"), the
 * index of the choice the run took (-1: none). Entries may return a plain
 * string (the note). */
struct EntryResult
{
  std::string note;
  int         algorithm{ -1 };
  EntryResult() = default;
  EntryResult(std::string text, int chosen = -1)
    : note(std::move(text))
    , algorithm(chosen)
  {
  }
};

/** One entry point: fills the output buffer of `job` from the input
 * buffer, both of `pixel` (for the float-output entries: the input of
 * `pixel`, the output float32; for filters with outputPixels: the output
 * of job.outputPixel), on the CPU with `threads` threads or on the
 * current CUDA stream (device buffers; `threads` unused). Parameters have
 * passed CheckParameters; `threads` is at least 1 (the faces resolve "all
 * cores"). */
using Entry = std::function<
  EntryResult(Pixel pixel, const void * in, void * out, const Job & job, const Parameters & parameters, int threads)>;

/** Slabs for host images too large for the device (cif/Slabs.h), cut
 * along the slowest axis with the filter's halo. */
struct SlabPolicy
{
  /** false: such images run on the CPU in automatic mode (the report says
   * why). Only filters on the input's grid (OutputGrid::Same) cut. */
  bool slabs{ true };
  /** The CUDA entry writes every input plane of a slab (iterated filters). */
  bool kernelWritesInputPlanes{ false };
  /** The device work memory per input pixel, for the slab plan. */
  std::size_t workBytesPerInputPixel{ 0 };
};

/** A second image a filter reads beside its input, on the input's grid:
 * the mask of the mask filter. Every face takes it after the image: the
 * Python function's second positional argument, the tool's operand between
 * IN and OUT, the ITK class's input 1 (its twin's SetMaskImage). Its pixel
 * type is its own, among `pixels`. */
struct CompanionSpec
{
  /** snake_case: the Python argument ("mask_image"); empty: the filter has
   * no companion. */
  std::string name;
  /** The tool's operand ("MASK"). */
  std::string operand;
  std::string help;
  /** The pixel types it may have (on both devices). */
  std::vector<Pixel> pixels;
  /** Checks of the parameters against its pixel type (a masking value the
   * mask's type cannot hold; empty: fine). May be empty. */
  std::function<std::string(const Parameters &, Pixel companion)> check;
};

/** Everything the faces need to know about one filter. */
struct FilterDescriptor
{
  /** The subcommand ("bin-shrink") and the Python function
   * ("bin_shrink_image_filter"). */
  std::string command;
  std::string function;
  /** The ITK class ("itk::CudaBinShrinkImageFilter") and its ITK twin
   * ("itk::BinShrinkImageFilter"; empty for none). */
  std::string itkClass;
  std::string itkTwin;
  /** One line: what is computed. */
  std::string summary;
  /** A few words for the tool's list of commands (empty: the summary's
   * first sentence). */
  std::string brief;
  /** Longer help: exactness, boundary, NaN. */
  std::string                details;
  std::vector<ParameterSpec> parameters;
  /** The pixel types each device takes (input and output of one type). */
  std::vector<Pixel> gpuPixels;
  std::vector<Pixel> cpuPixels;
  int                minDimension{ 1 };
  int                maxDimension{ 3 };
  OutputGrid         grid{ OutputGrid::Same };
  /** Checks across parameters and against the pixel type, after each
   * parameter has been checked alone (empty: fine; else the problem,
   * without the function's name). May be empty. */
  std::function<std::string(const Parameters &, const Extent &, Pixel)> check;
  /** ITK's warnings for valid but doubtful parameters (an anisotropic
   * diffusion's unstable time step), after the checks: every face reports
   * the text and runs (the ITK class's itkWarningMacro, the tool's stderr,
   * Python's warnings.warn); empty: none. May be empty. */
  std::function<std::string(const Parameters &, const Extent &)> warning;
  /** The input planes a piece of the image needs on each side, per axis
   * (x, y, z), for pieces to equal the one-piece result. */
  std::function<std::array<std::int64_t, 3>(const Parameters &, int dimension)> halo;
  /** The values an optional parameter left absent takes in a checked call
   * of `dimension` axes (the bilateral's automatic radius), for the faces'
   * reports; empty values where it has none. May be empty. */
  std::function<std::vector<double>(const std::string & name, const Parameters &, int dimension)> automaticValues;
  /** Why the GPU cannot take the call (empty if it can; may be empty); the
   * pixel type and a build without CUDA are checked apart. */
  std::function<std::string(const Parameters &, const Extent &)> gpuProblem;
  /** Why, for host images in automatic mode, the CPU core is the better
   * choice (the shrink reads 1/f of its input, which the GPU would have to
   * upload whole); empty: the GPU. An explicit GPU request still runs the
   * GPU; device-resident images always do. May be empty. */
  std::function<std::string(const Parameters &)> hostCPUReason;
  /** Whether the CUDA code is compiled in. */
  std::function<bool()> cudaCompiled;
  Entry                 cpu;
  Entry                 cuda;
  /** Integer inputs written as float32 (the ITK classes' TOutputImage =
   * float): the input pixel types that take it, and its entries (empty:
   * none). */
  std::vector<Pixel> floatOutputPixels;
  Entry              cpuFloatOutput;
  Entry              cudaFloatOutput;
  /** Filters whose output pixel type is chosen apart from the input's
   * (the threshold's label image): the output types the entries write, for
   * every input type of the devices' lists, with the output's type in
   * Job::outputPixel; the first is the default (Python's output_dtype).
   * Empty: the output is of the input's type (or float32, above). */
  std::vector<Pixel> outputPixels;
  /** With outputPixels: the default output type for an input type (empty:
   * outputPixels' first). */
  std::function<Pixel(Pixel input)> defaultOutputPixel;
  /** With outputPixels: the checks that need the output's type (a label
   * value the type cannot hold), after `check`; empty: fine. May be empty. */
  std::function<std::string(const Parameters &, Pixel input, Pixel output)> outputCheck;
  /** How a host image too large for the device is cut (see SlabPolicy),
   * for the parameters and the output's pixel type (the input's, or float32
   * for the float-output entries); empty: slabs with the halo above and no
   * work memory. */
  std::function<SlabPolicy(const Parameters &, Pixel)> slabPolicy;
  /** Why a piece of the output needs the whole input (the recursive
   * prefilter's whole lines), for parameters whose halo is no exact bound;
   * empty: the halo is exact. Such calls request the whole image in ITK's
   * pipeline and are not streamed. May be empty. */
  std::function<std::string(const Parameters &)> wholeImage;
  /** A filter's own pieces for a CUDA job on host buffers (the prefilter's
   * exact two-pass slabs), in place of the halo's slabs: `whole()` when
   * `mayCut` is false (device-resident images) or the job fits the device,
   * else the CUDA core on pieces read from `in()` into `out()` (asked for
   * only then: the host pointer of a device-resident image would download
   * it). Returns how it cut the job (empty: one piece). Empty: the slabs of
   * the halo and slabPolicy. */
  std::function<std::string(bool                                  mayCut,
                            Pixel                                 pixel,
                            const std::function<const void *()> & in,
                            const std::function<void *()> &       out,
                            const Job &                           job,
                            const Parameters &                    parameters,
                            const std::function<void()> &         whole)>
    cudaOnHost;
  /** The companion image (CompanionSpec::name empty: none). Its buffer
   * reaches the entries in Job::companion. */
  CompanionSpec companion;
  /** The output has one component per image axis (a gradient): D values of
   * the output's pixel type per pixel, x's first, on the input's grid. Such
   * filters choose their output type (outputPixels), run whole (no slabs)
   * and their faces write vector images (itk::CovariantVector pixels; a
   * last array axis of D in Python). */
  bool vectorOutput{ false };
  bool
  HasCompanion() const
  {
    return !companion.name.empty();
  }
};

/** The values per output pixel of a call on `dimension` axes: D for
 * vectorOutput filters, else 1. */
int
OutputComponents(const FilterDescriptor & filter, int dimension);

/** Why the companion's pixel type is not one the filter takes (empty: it
 * is; the faces raise their type errors with it): "<function>: <name> of
 * <type> pixels is not supported; use ...". */
std::string
CompanionPixelProblem(const FilterDescriptor & filter, Pixel companion);

/** The checks of a call's companion image, after CheckParameters: its pixel
 * type (CompanionPixelProblem) and the description's checks of the
 * parameters against it. The faces check its extent and grid against the
 * image's themselves (Python and the tool: equal sizes; the ITK class:
 * ITK's rules). Throws std::invalid_argument "<function>: <problem>". */
void
CheckCompanion(const FilterDescriptor & filter, const Parameters & parameters, Pixel companion);

/** Whether the filter takes `pixel` only into float32 (floatOutputPixels
 * that neither device takes into the same type: the anisotropic
 * diffusions' integer inputs); the faces then write float32. */
bool
FloatOutputOnly(const FilterDescriptor & filter, Pixel pixel);

/** The output pixel type of a call on `input` pixels: the input's, or the
 * description's default where it chooses the output's apart. */
Pixel
DefaultOutputPixel(const FilterDescriptor & filter, Pixel input);

/** The pixel type of a NumPy-style name ("uint8", ...); false for others. */
bool
PixelFromName(const std::string & name, Pixel & pixel);

/** Every filter described so far, in the order of the documentation. */
const std::vector<const FilterDescriptor *> &
Filters();

/** The filter with this subcommand or Python function name; throws
 * std::invalid_argument for an unknown name. */
const FilterDescriptor &
FindFilter(const std::string & name);

/** The one validation of a call's parameters: fills in defaults, expands a
 * single value of a per-axis parameter to every axis, checks the number of
 * values, their kind and range, the choices, unknown names, the image's
 * dimension, then the filter's own check. Throws std::invalid_argument
 * "<function>: <problem>". */
void
CheckParameters(const FilterDescriptor & filter, Parameters & parameters, const Extent & image, Pixel pixel);
/** The same for a filter with outputPixels (the output's type among them,
 * then the filter's outputCheck). */
void
CheckParameters(const FilterDescriptor & filter,
                Parameters &             parameters,
                const Extent &           image,
                Pixel                    pixel,
                Pixel                    outputPixel);

/** The part of CheckParameters that needs no image: unknown names,
 * defaults, per-axis expansion to `dimension` values, counts, kinds and
 * ranges (for the halo of a call before its image is known). */
void
CompleteParameters(const FilterDescriptor & filter, Parameters & parameters, int dimension);

/** The value of choice `text` of a Choice parameter; throws
 * std::invalid_argument "<function>: <name> must be one of ..." for others. */
double
ChoiceValue(const FilterDescriptor & filter, const std::string & name, const std::string & text);

/** The output extent of a call (after CheckParameters). */
Extent
OutputExtent(const FilterDescriptor & filter, const Parameters & parameters, const Extent & image);

/** The whole-image job of a filter on an image whose index starts at 0:
 * the output extent of its grid, and for the Subsample grid the input
 * pixel output pixel 0 samples (cif::ShrinkFirstIndex, ITK's centred
 * grid). `parameters` are checked. */
Job
WholeImageJob(const FilterDescriptor & filter, const Parameters & parameters, const Extent & input);

/** A parameter's value along axis a (after CheckParameters). */
double
Value(const Parameters & parameters, const std::string & name, int axis = 0);
/** The index of a Choice parameter's value. */
int
ChoiceIndex(const Parameters & parameters, const std::string & name);

/** Why the GPU cannot run a checked call: the pixel type, the build, the
 * filter's own gpuProblem (empty if it can). */
std::string
GpuProblem(const FilterDescriptor & filter, Pixel pixel, const Parameters & parameters, const Extent & image);
/** The same for a run in `mode` on host data (`hostData`) or device data:
 * for host data in automatic mode, also the filter's hostCPUReason (host
 * images its CPU core serves better). The one place the faces ask it. */
std::string
GpuProblem(const FilterDescriptor & filter,
           Pixel                    pixel,
           const Parameters &       parameters,
           const Extent &           image,
           ExecutionMode            mode,
           bool                     hostData);

/** The GPU job of a checked call on host buffers: `whole()` (the one-piece
 * job) when it fits the device, else the filter's CUDA entry on slabs read
 * straight from `in` into `out` (cif::RunNeighbourhoodJobCUDA with the
 * filter's halo and slab policy); filters that do not cut run whole. The
 * entry's notes go to `note`. Returns how the job was cut (empty: one
 * piece). */
std::string
RunOnHostBuffersCUDA(const FilterDescriptor &      filter,
                     Pixel                         pixel,
                     const void *                  in,
                     void *                        out,
                     const Job &                   job,
                     const Parameters &            parameters,
                     const std::function<void()> & whole,
                     std::string &                 note);

} // namespace cif

#endif
