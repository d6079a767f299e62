/*=========================================================================
 *  CudaImageFilters: `cudaimagefilters rotating-mask`, edge-preserving
 *  smoothing with itk::CudaRotatingMaskImageFilter.
 *=========================================================================*/
#include "SmoothingCommand.h"

#include <iostream>

namespace cif
{
namespace tool
{

namespace
{
constexpr const char * CommandName = "rotating-mask";
} // namespace

void
RotatingMaskUsage(std::ostream & os)
{
  os << "Usage: " << ToolName << ' ' << CommandName << " IN OUT [options]\n"
     << "\n"
     << "Rotating-mask (Nagao-Matsuyama) smoothing of IN on the GPU or the CPU: every\n"
     << "pixel becomes the mean of the sub-region of its 5x5 (3D: 5x5x5) mask with the\n"
     << "smallest variance (2D: nine regions, the centre 3x3 square, four pentagons and\n"
     << "four hexagons; 3D: six 3x3x3 half-masks), the first one on ties; the border is\n"
     << "clamped. OUT has IN's pixel type (integers: the mean rounded to nearest).\n"
     << "\n"
     << "Arguments:\n";
  PrintInputArgumentHelp(os);
  PrintImageOutputArgumentHelp(os);
  os << "\n"
     << "Options:\n"
     << "  --iterations N       apply the filter N times, each time to the previous\n"
     << "                       result (default 1; on the GPU the intermediate results\n"
     << "                       stay on the device)\n";
  PrintDeviceOptionHelp(os);
  PrintStreamOptionHelp(os);
  os << "  --verify             read OUT back and compare it with an independent\n"
     << "                       evaluation of the definition in this program (ITK has\n"
     << "                       no such filter). Integer pixels: exact integer\n"
     << "                       arithmetic, iterated N times; OUT must be identical.\n"
     << "                       Float pixels (--iterations 1 only): every pixel must\n"
     << "                       be, within 2^-22 relative (2^-149 for subnormal\n"
     << "                       values), the mean of a sub-region whose variance is\n"
     << "                       within 1e-9 x spread^2 of the smallest (near-ties may\n"
     << "                       go either way; spread = max |f - f(centre)| in the\n"
     << "                       mask). When the GPU ran the filter, OUT is also\n"
     << "                       compared with the module's CPU core: identical for\n"
     << "                       integer pixels (float: the difference is reported)\n";
  PrintQuietAndHelpOptionHelp(os);
  os << "\n"
     << "Prints the device that ran the filter and its time.\n";
  PrintExitStatusHelp(os);
  os << "\n"
     << "Example:\n"
     << "  " << ToolName << ' ' << CommandName << " ct.nii.gz ct_smooth.nii.gz --iterations 3\n";
}

int
RotatingMaskMain(const std::vector<std::string> & args)
{
  if (HasHelpOption(args))
  {
    RotatingMaskUsage(std::cout);
    return ExitSuccess;
  }
  return SmoothingCommandMain<SmoothingKind::RotatingMask>(args, CommandName);
}

} // namespace tool
} // namespace cif
