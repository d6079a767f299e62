/*=========================================================================
 *  CudaImageFilters: the generated subcommand of a filter the core
 *  describes (see DescribedCommand.cxx).
 *=========================================================================*/
#ifndef DescribedCommand_h
#define DescribedCommand_h

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

/** The generated subcommand of a packed-mask operation (cif/PackedMask.h,
 * MaskOperationCommand.cxx): its Main and its --help. */
int
MaskOperationMain(const cif::MaskOperationDescriptor & operation, const std::vector<std::string> & args);
void
MaskOperationUsage(const cif::MaskOperationDescriptor & operation, std::ostream & os);
} // namespace tool
} // namespace cif

#endif
