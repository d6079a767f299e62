/*=========================================================================
 *  CudaImageFilters: helpers shared by the subcommands that filter and
 *  segment images in their own pixel type (median, bilateral,
 *  rotating-mask, threshold, segment): the choice of the pixel type from
 *  the file header, output-format checks, option values (radii, sigmas,
 *  thresholds) and the decoding of packed masks for --verify.
 *=========================================================================*/
#ifndef FilterCommon_h
#define FilterCommon_h

#include "ToolCommon.h"

#include "itkCudaPackedMask.h"
#include "cif/Runtime.h"
#include "itkCudaExecution.h"
#include "itkImage.h"

#include <cstdint>
#include <iosfwd>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace cif
{
namespace tool
{

/** The pixel types these subcommands keep: those of the module's cores. */
enum class PixelKind
{
  UnsignedChar,
  Short,
  UnsignedShort,
  Float
};

/** Bytes of one pixel of the kind. */
inline std::size_t
PixelBytes(PixelKind kind)
{
  return kind == PixelKind::UnsignedChar ? 1 : (kind == PixelKind::Float ? 4 : 2);
}

/** "unsigned char", "short", "unsigned short", "float". */
const char *
PixelKindName(PixelKind kind);

/** What a subcommand learned from its input's header. */
struct FilterInput
{
  unsigned int         Dimension{ 0 }; ///< 2 or 3
  PixelKind            Pixel{ PixelKind::Float };
  bool                 ConvertedToFloat{ false }; ///< a component type other than the four
  ImageFileInformation Information;
};

/** Reads the header of IN (CheckScalarImageInput: scalar or RGB/RGBA
 * pixels, 2D or 3D) and picks the pixel type: the file's component type
 * when it is unsigned char, short, unsigned short or float, else float.
 * RGB(A) pixels are read as their luminance in the component type (ITK's
 * conversion). Prints nothing: see PrintFilterInputNotes. */
FilterInput
DescribeFilterInput(const std::string & fileName, const std::string & command);

/** The notes about IN on stderr unless `quiet`: colour pixels (luminance),
 * a component type read as float. */
void
PrintFilterInputNotes(const std::string & fileName, const FilterInput & input, bool quiet);

template <typename T>
struct PixelTag
{
  using Type = T;
};
template <unsigned int VDimension>
using DimensionTag = std::integral_constant<unsigned int, VDimension>;

/** Calls function(PixelTag<T>{}, DimensionTag<D>{}) for the pixel type of
 * `kind` and `dimension` (2 or 3) and returns its result. */
template <typename TFunction>
int
DispatchPixelAndDimension(PixelKind kind, unsigned int dimension, TFunction && function)
{
  const bool twoD = dimension == 2;
  switch (kind)
  {
    case PixelKind::UnsignedChar:
      return twoD ? function(PixelTag<unsigned char>{}, DimensionTag<2>{})
                  : function(PixelTag<unsigned char>{}, DimensionTag<3>{});
    case PixelKind::Short:
      return twoD ? function(PixelTag<short>{}, DimensionTag<2>{}) : function(PixelTag<short>{}, DimensionTag<3>{});
    case PixelKind::UnsignedShort:
      return twoD ? function(PixelTag<unsigned short>{}, DimensionTag<2>{})
                  : function(PixelTag<unsigned short>{}, DimensionTag<3>{});
    case PixelKind::Float:
      break;
  }
  return twoD ? function(PixelTag<float>{}, DimensionTag<2>{}) : function(PixelTag<float>{}, DimensionTag<3>{});
}

/** How every filter subcommand starts its work once its own checks passed:
 * for --device gpu, CheckGPUAvailable() (exit 77 before any work), the
 * notes about IN (PrintFilterInputNotes), then run(PixelTag<T>{},
 * DimensionTag<D>{}) for IN's pixel type and dimension; returns its result. */
template <typename TFunction>
int
RunOnFilterInput(const std::string &    fileName,
                 const FilterInput &    input,
                 itk::CudaExecutionMode mode,
                 bool                   quiet,
                 TFunction &&           run)
{
  if (mode == itk::CudaExecutionMode::GPU)
  {
    CheckGPUAvailable();
  }
  PrintFilterInputNotes(fileName, input, quiet);
  return DispatchPixelAndDimension(input.Pixel, input.Dimension, std::forward<TFunction>(run));
}

/** Checks, before any work, that an image of `kind` pixels and `dimension`
 * can be written to `fileName` without loss: a known format in an existing
 * folder (CheckImageOutput), and for PNG a 2D image of unsigned char or
 * unsigned short, for BMP a 2D unsigned char image, never JPEG (lossy).
 * `what` names the file in messages ("OUT", "--labels"). Throws UsageError. */
void
CheckTypedImageOutput(const std::string & fileName, PixelKind kind, unsigned int dimension, const std::string & what);

/** The formats a packed mask file can be written in, for messages. */
extern const char * const PackedMaskFormats;

/** Checks, before any work, that a packed mask (WritePackedMask) can be
 * written to `fileName`: NRRD (.nrrd, .nhdr) or MetaImage (.mha, .mhd), the
 * formats whose headers keep the CudaPackedMask_ fields. Throws UsageError. */
void
CheckPackedMaskOutput(const std::string & fileName);

/** A comma-separated list of integers from `minimum` to `maximum`, "1,2,3"
 * (no blanks, no empty items); one value at least. */
std::vector<long long>
ParseIntegerList(const std::string & option, const std::string & text, long long minimum, long long maximum);

/** A finite number greater than 0. */
double
ParsePositiveReal(const std::string & option, const std::string & text);

/** Checks that a per-axis option given as `text` has 1 or `dimension`
 * values; throws UsageError naming the input otherwise. */
void
CheckPerAxisCount(const std::string & option,
                  const std::string & text,
                  std::size_t         count,
                  unsigned int        dimension,
                  const std::string & input);

/** "2x2x1" of a per-axis list given with 1 or D values. */
template <typename T>
std::string
PerAxisToString(const std::vector<T> & values, unsigned int dimension, const char * separator = "x")
{
  std::string text;
  for (unsigned int a = 0; a < dimension; ++a)
  {
    std::ostringstream item;
    item << values[values.size() == 1 ? 0 : a];
    text += (a == 0 ? "" : separator) + item.str();
  }
  return text;
}

/** The smoothing filter of a subcommand (segment's --filter). */
enum class SmoothingKind
{
  None,
  Median,
  Bilateral,
  RotatingMask
};

/** "none", "median", "bilateral", "rotating-mask": the names of --filter. */
const char *
SmoothingKindName(SmoothingKind kind);

/** Largest --radius per axis and largest --iterations: no cap of the tool's
 * own (ITK has none); the cores' 32-bit coordinates are the limit, and the
 * cores' checks name what does not fit. */
constexpr long long MaxRadius = 2147483647;
constexpr long long MaxIterations = 2147483647;

/** The smoothing options: --radius, --domain-sigma, --range-sigma,
 * --iterations, as given on the command line. */
struct SmoothingSettings
{
  SmoothingKind          Kind{ SmoothingKind::None };
  std::vector<long long> Radius; ///< 1 or D values; empty: the bilateral filter's automatic size
  std::string            RadiusText;
  std::vector<double>    DomainSigma; ///< 1 or D values, physical units
  std::string            DomainSigmaText;
  double                 RangeSigma{ 0.0 };
  std::string            RangeSigmaText;
  unsigned int           Iterations{ 1 };
  /** --kernel of the median: the index of its choice in the median's
   * description (cif/Filter.h: auto, selection, radix_tile, radix_global,
   * sliding_histogram), which is cif::MedianKernel's value. */
  int                    MedianKernel{ 0 };

  /** The value for axis `axis` of a list given with 1 or D values. */
  long long
  RadiusAlong(unsigned int axis) const
  {
    return Radius[Radius.size() == 1 ? 0 : axis];
  }
  double
  DomainSigmaAlong(unsigned int axis) const
  {
    return DomainSigma[DomainSigma.size() == 1 ? 0 : axis];
  }
};

/** Adds --radius, --domain-sigma, --range-sigma and --iterations to `specs`
 * (the options of segment; the filter subcommands list their own). */
void
AppendSmoothingOptionSpecs(std::vector<OptionSpec> & specs);

/** Parses the smoothing options for `kind`. An option that `kind` does not
 * take is a UsageError "OPTION does not apply to CONTEXT"; bilateral needs
 * --domain-sigma and --range-sigma ("CONTEXT needs ..."); median needs
 * --radius unless `defaultMedianRadius` >= 0. `defaultIterations` applies
 * to bilateral and rotating-mask. */
SmoothingSettings
ParseSmoothingSettings(const ParsedArguments & parsed,
                       SmoothingKind           kind,
                       const std::string &     context,
                       unsigned int            defaultIterations,
                       long long               defaultMedianRadius);

/** Checks the per-axis lists against IN's dimension (UsageError). */
void
CheckSmoothingDimension(const SmoothingSettings & settings, unsigned int dimension, const std::string & input);

/** --lower and --upper, as given (reals). */
struct ThresholdSettings
{
  double      Lower{ 0.0 };
  double      Upper{ 0.0 };
  std::string LowerText;
  std::string UpperText;
};

/** Parses --lower and --upper (both needed; lower <= upper). */
ThresholdSettings
ParseThresholds(const ParsedArguments & parsed, const std::string & command);

/** The thresholds in the pixel type that select exactly the pixel values v
 * with Lower <= v <= Upper (real arithmetic): for integer types the
 * smallest integer >= Lower and the largest <= Upper, clamped to the type's
 * range; for float the smallest float >= Lower and the largest <= Upper.
 * ITK compares in the pixel type, so these are what the filters get.
 * Throws UsageError when no value of the type lies in [Lower, Upper]. */
template <typename T>
void
ThresholdsInPixelType(const ThresholdSettings & settings, const std::string & input, T & lower, T & upper);

/** Before any work: the thresholds in the input's pixel type
 * (ThresholdsInPixelType for that type), lower and upper; throws UsageError
 * when no value of the type lies in [Lower, Upper]. */
std::pair<double, double>
CheckThresholdsFitPixelType(const ThresholdSettings & settings,
                            const FilterInput &       input,
                            const std::string &       fileName);

/** "[100, 200]" */
template <typename T>
std::string
ThresholdRangeToString(T lower, T upper)
{
  std::ostringstream text;
  text << '[' << +lower << ", " << +upper << ']';
  return text.str();
}

/** The inside flag (0 or 1) of every voxel of a packed mask's region, in
 * x-fastest order, decoded here from the documented word layout (word w of
 * row (y, z) holds x = x0 + 32 w + i at bit i, rows padded to whole words)
 * rather than with the module's unpacking code. Reads the host copy of the
 * words. Throws RuntimeFailure when the word buffer does not match the
 * region. */
template <unsigned int VDimension>
std::vector<std::uint8_t>
DecodePackedMask(const itk::CudaPackedMask<VDimension> * mask)
{
  const auto        region = mask->GetMaskRegion();
  const std::size_t nx = region.GetSize(0);
  const std::size_t voxels = region.GetNumberOfPixels();
  const std::size_t rows = nx == 0 ? 0 : voxels / nx;
  const std::size_t wordsPerRow = (nx + 31) / 32;
  if (mask->GetBufferedRegion().GetNumberOfPixels() != rows * wordsPerRow)
  {
    throw RuntimeFailure("the packed mask holds " + std::to_string(mask->GetBufferedRegion().GetNumberOfPixels()) +
                         " words, its region of " + std::to_string(voxels) + " voxels needs " +
                         std::to_string(rows * wordsPerRow));
  }
  const std::uint32_t *     words = mask->GetBufferPointer(); // const: synchronises the host copy
  std::vector<std::uint8_t> flags(voxels);
  for (std::size_t row = 0; row < rows; ++row)
  {
    const std::uint32_t * rowWords = words + row * wordsPerRow;
    for (std::size_t x = 0; x < nx; ++x)
    {
      flags[row * nx + x] = static_cast<std::uint8_t>((rowWords[x / 32] >> (x % 32)) & 1u);
    }
  }
  return flags;
}

/** Empty when `mask` has the grid of `image` (region, spacing, origin,
 * direction); else what differs. */
template <unsigned int VDimension, typename TImage>
std::string
CompareMaskGrid(const itk::CudaPackedMask<VDimension> * mask, const TImage * image)
{
  std::ostringstream why;
  if (mask->GetMaskRegion() != image->GetLargestPossibleRegion())
  {
    why << "region " << SizeToString(mask->GetMaskRegion().GetSize()) << " instead of "
        << SizeToString(image->GetLargestPossibleRegion().GetSize());
  }
  else if (mask->GetSpacing() != image->GetSpacing())
  {
    why << "spacing " << mask->GetSpacing() << " instead of " << image->GetSpacing();
  }
  else if (mask->GetOrigin() != image->GetOrigin())
  {
    why << "origin " << mask->GetOrigin() << " instead of " << image->GetOrigin();
  }
  else if (mask->GetDirection() != image->GetDirection())
  {
    why << "a different direction";
  }
  return why.str();
}

/** Lines of --help shared by these subcommands. */
void
PrintInputArgumentHelp(std::ostream & os);
void
PrintImageOutputArgumentHelp(std::ostream & os);
void
PrintDeviceOptionHelp(std::ostream & os);
/** The help lines of --stream and --stream-memory. */
void
PrintStreamOptionHelp(std::ostream & os);
void
PrintQuietAndHelpOptionHelp(std::ostream & os);
void
PrintExitStatusHelp(std::ostream & os);

} // namespace tool
} // namespace cif

#endif
