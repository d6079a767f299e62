/*=========================================================================
 *  CudaImageFilters: `cudaimagefilters median`, the median of the box
 *  around every pixel with itk::CudaMedianImageFilter.
 *=========================================================================*/
#include "SmoothingCommand.h"

#include <iostream>

namespace cif
{
namespace tool
{

namespace
{
constexpr const char * CommandName = "median";
} // namespace

void
MedianUsage(std::ostream & os)
{
  os << "Usage: " << ToolName << ' ' << CommandName << " IN OUT --radius R [options]\n"
     << "\n"
     << "Replaces every pixel of IN by the median of the box of 2R+1 pixels per axis\n"
     << "around it, like ITK's MedianImageFilter (window indices clamped to the image),\n"
     << "on the GPU or the CPU, and writes OUT in IN's pixel type. Exact: the result\n"
     << "is ITK's on both devices.\n"
     << "\n"
     << "Arguments:\n";
  PrintInputArgumentHelp(os);
  PrintImageOutputArgumentHelp(os);
  os << "\n"
     << "Options:\n"
     << "  --radius R           half-width of the window: R for every axis, or R1,R2[,R3]\n"
     << "                       per axis, 0 or more (required)\n";
  os << "  --kernel K           the GPU algorithm: auto (default: the cheapest that\n"
     << "                       fits), selection, radix_tile, radix_global or\n"
     << "                       sliding_histogram (ITK's SetGPUKernel)\n";
  PrintDeviceOptionHelp(os);
  PrintStreamOptionHelp(os);
  os << "  --verify             read OUT back and compare it with ITK's own\n"
     << "                       MedianImageFilter (same radius): they must be identical\n";
  PrintQuietAndHelpOptionHelp(os);
  os << "\n"
     << "Prints the device that ran the filter (and its GPU algorithm) and the\n"
     << "filter's time.\n";
  PrintExitStatusHelp(os);
  os << "\n"
     << "Example:\n"
     << "  " << ToolName << ' ' << CommandName << " ct.nii.gz ct_median.nii.gz --radius 1 --verify\n";
}

int
MedianMain(const std::vector<std::string> & args)
{
  if (HasHelpOption(args))
  {
    MedianUsage(std::cout);
    return ExitSuccess;
  }
  return SmoothingCommandMain<SmoothingKind::Median>(args, CommandName);
}

} // namespace tool
} // namespace cif
