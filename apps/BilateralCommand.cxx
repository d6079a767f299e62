/*=========================================================================
 *  CudaImageFilters: `cudaimagefilters bilateral`, edge-preserving
 *  smoothing with itk::CudaBilateralImageFilter.
 *=========================================================================*/
#include "SmoothingCommand.h"

#include <iostream>

namespace cif
{
namespace tool
{

namespace
{
constexpr const char * CommandName = "bilateral";
} // namespace

void
BilateralUsage(std::ostream & os)
{
  os << "Usage: " << ToolName << ' ' << CommandName << " IN OUT --domain-sigma S --range-sigma S\n"
     << "       [options]\n"
     << "\n"
     << "Bilateral smoothing of IN, like ITK's BilateralImageFilter but with the exact\n"
     << "range Gaussian (ITK reads a table of NumberOfRangeGaussianSamples values), on\n"
     << "the GPU or the CPU; writes OUT in IN's pixel type (integers truncated, as ITK).\n"
     << "Every output pixel is the mean of the box around it weighted by a Gaussian of\n"
     << "the physical distance (--domain-sigma, normalised over the box) and a Gaussian\n"
     << "of the value difference (--range-sigma, cut off beyond 4 sigma, as ITK).\n"
     << "\n"
     << "Arguments:\n";
  PrintInputArgumentHelp(os);
  PrintImageOutputArgumentHelp(os);
  os << "\n"
     << "Options:\n"
     << "  --domain-sigma S     sigma of the spatial Gaussian in physical units (mm): S\n"
     << "                       for every axis, or S1,S2[,S3] per axis (required)\n"
     << "  --range-sigma S      sigma of the range Gaussian in pixel values (required)\n"
     << "  --radius R           half-width of the box, R or R1,R2[,R3], 0 or more\n"
     << "                       (default: ITK's automatic size, ceil(2.5 S_i /\n"
     << "                       spacing_i))\n"
     << "  --iterations N       apply the filter N times, each time to the previous\n"
     << "                       result (default 1; on the GPU the intermediate results\n"
     << "                       stay on the device)\n";
  PrintDeviceOptionHelp(os);
  PrintStreamOptionHelp(os);
  os << "  --verify             read OUT back and compare it with ITK's own\n"
     << "                       BilateralImageFilter with 10^6 range samples (so that its\n"
     << "                       table is nearly exact); fail when they differ by more\n"
     << "                       than the documented bound 2 S_r (exp(16e-6) - 1) +\n"
     << "                       " << BilateralDeviceTolerance << " S_r + 2^-22 max |value| (+ 1 for integer pixels,\n"
     << "                       truncation), S_r the range sigma; --iterations 1 only\n";
  PrintQuietAndHelpOptionHelp(os);
  os << "\n"
     << "Prints the kernel radius, the device that ran the filter and its time.\n";
  PrintExitStatusHelp(os);
  os << "\n"
     << "Example:\n"
     << "  " << ToolName << ' ' << CommandName << " ct.nii.gz smooth.nii.gz --domain-sigma 2 --range-sigma 40\n";
}

int
BilateralMain(const std::vector<std::string> & args)
{
  if (HasHelpOption(args))
  {
    BilateralUsage(std::cout);
    return ExitSuccess;
  }
  return SmoothingCommandMain<SmoothingKind::Bilateral>(args, CommandName);
}

} // namespace tool
} // namespace cif
