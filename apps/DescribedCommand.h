/*=========================================================================
 *  CudaImageFilters: the generated subcommand of a filter the core
 *  describes (see DescribedCommand.cxx).
 *=========================================================================*/
#ifndef DescribedCommand_h
#define DescribedCommand_h

#include "ToolCommon.h"

#include "cif/Filter.h"

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
} // namespace tool
} // namespace cif

#endif
