/*=========================================================================
 *  CudaImageFilters: the generated subcommand of a filter the core
 *  describes (see DescribedCommand.cxx).
 *=========================================================================*/
#ifndef DescribedCommand_h
#define DescribedCommand_h

#include "FilterCommon.h"
#include "ToolCommon.h"

#include "cif/Filter.h"
#include "cif/PackedMask.h"

#include <ostream>
#include <string>
#include <vector>

namespace cif
{
namespace tool
{
/** The subcommand of `filter`: its Main (arguments after its name). */
int
DescribedMain(const cif::FilterDescriptor & filter, const std::vector<std::string> & args);
/** Its --help. */
void
DescribedUsage(const cif::FilterDescriptor & filter, std::ostream & os);

/** The command-line option of a description's name: "inside_value" ->
 * "--inside-value". */
std::string
OptionOf(const std::string & name);
/** Writes `text` wrapped at 79 columns, continuing lines after `indent`
 * spaces; the first line starts at column `first`. */
void
PrintWrapped(std::ostream & os, const std::string & text, std::size_t indent, std::size_t first = 0);

/** One option's line of a generated --help: `head` ("  --radius V"),
 * then `help` wrapped from column 23. */
void
PrintOptionHelp(std::ostream & os, const std::string & head, const std::string & help);
/** The end of a generated --help: what the run prints, the ITK class, the
 * Python function, the exit status. */
void
PrintGeneratedFooter(std::ostream & os, const std::string & itkClass, const std::string & function);

/** A description's inclusive bounds on the input's values (its
 * "lower_threshold" and "upper_threshold"): the command line takes any real
 * numbers, which the run turns into the pixel type's values that select
 * exactly the pixels with lower <= value <= upper (ThresholdsInPixelType),
 * where the other faces take values of the pixel type, as ITK does. */
bool
IsRealBound(const std::string & name);

/** The bounds as the command line gave them (each option as spelt, and its
 * text; an empty text: not given, -inf or +inf): finite numbers, lower <=
 * upper. Throws UsageError. */
ThresholdSettings
RealBoundsOf(const std::string & lowerOption,
             const std::string & lowerText,
             const std::string & upperOption,
             const std::string & upperText);

/** The packed-mask operation a described filter's subcommand runs with
 * --packed: the one whose command is the filter's (the threshold's packed
 * mask), or nullptr. */
const cif::MaskOperationDescriptor *
PackedVariantOf(const cif::FilterDescriptor & filter);

/** The generated subcommand of a packed-mask operation (cif/PackedMask.h,
 * MaskOperationCommand.cxx): its Main and its --help. */
int
MaskOperationMain(const cif::MaskOperationDescriptor & operation, const std::vector<std::string> & args);
/** The same for the --packed variant of `base`'s subcommand: its options
 * take the spellings of `base`'s parameters of the same names. */
int
PackedVariantMain(const cif::MaskOperationDescriptor & operation,
                  const cif::FilterDescriptor &        base,
                  const std::vector<std::string> &     args);
void
MaskOperationUsage(const cif::MaskOperationDescriptor & operation, std::ostream & os);
} // namespace tool
} // namespace cif

#endif
