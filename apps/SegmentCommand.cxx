/*=========================================================================
 *  CudaImageFilters: `cudaimagefilters segment`, the segmentation chain of
 *  seed paper 002 on the GPU: an edge-preserving or median filter, a
 *  threshold, and a bit-packed mask, with itk::CudaFilterImage between the
 *  stages so that only the input's upload and the packed mask's download
 *  cross the bus.
 *=========================================================================*/
#include "FilterStages.h"

#include "itkCudaFilterImage.h"
#include "cif/Runtime.h"
#include "itkCudaExecution.h"
#include "itkCudaThresholdToPackedMaskImageFilter.h"
#include "itkCudaUnpackMaskImageFilter.h"
#include "itkTimeProbe.h"

#include <iomanip>
#include <iostream>

namespace cif
{
namespace tool
{

namespace
{

constexpr const char * CommandName = "segment";

/** Default --iterations of the bilateral and rotating-mask filters here. */
constexpr unsigned int DefaultIterations = 3;
/** Default --radius of the median filter here. */
constexpr long long DefaultMedianRadius = 1;

struct SegmentOptions
{
  std::string            Input;
  std::string            Output;
  std::string            Labels; ///< empty: no label image
  SmoothingSettings      Smoothing;
  ThresholdSettings      Thresholds;
  std::uint8_t           Inside{ 255 };
  std::uint8_t           Outside{ 0 };
  itk::CudaExecutionMode ExecutionMode{ itk::CudaExecutionMode::Automatic };
  bool                   Verify{ false };
  bool                   Quiet{ false };
};

SegmentOptions
ParseSegmentOptions(const std::vector<std::string> & args)
{
  std::vector<OptionSpec> specs = { { "--lower", true },  { "--upper", true },   { "--filter", true },
                                    { "--labels", true }, { "--inside", true },  { "--outside", true },
                                    { "--device", true }, { "--verify", false }, { "--quiet", false } };
  AppendSmoothingOptionSpecs(specs);
  const ParsedArguments parsed = ParseArguments(args, specs);
  SegmentOptions        options;
  ParseInputAndOutput(parsed, CommandName, options.Input, options.Output);

  const std::string filter = parsed.Get("--filter", "bilateral");
  SmoothingKind     kind = SmoothingKind::Bilateral;
  if (filter == "median")
  {
    kind = SmoothingKind::Median;
  }
  else if (filter == "rotating-mask")
  {
    kind = SmoothingKind::RotatingMask;
  }
  else if (filter == "none")
  {
    kind = SmoothingKind::None;
  }
  else if (filter != "bilateral")
  {
    throw UsageError("--filter: unknown filter '" + filter + "' (expected bilateral, median, rotating-mask or none)");
  }
  const std::string context = "--filter " + filter + (parsed.Has("--filter") ? "" : " (the default)");
  options.Smoothing = ParseSmoothingSettings(parsed, kind, context, DefaultIterations, DefaultMedianRadius);
  options.Thresholds = ParseThresholds(parsed, CommandName);

  if (parsed.Has("--labels"))
  {
    options.Labels = parsed.Get("--labels");
    if (options.Labels.empty())
    {
      throw UsageError("--labels: the file name is empty");
    }
  }
  for (const char * option : { "--inside", "--outside" })
  {
    if (parsed.Has(option))
    {
      if (options.Labels.empty())
      {
        throw UsageError(std::string(option) + " gives a label value of the --labels image; give --labels too");
      }
      const auto value = static_cast<std::uint8_t>(ParseInteger(option, parsed.Get(option), 0, 255));
      (std::string(option) == "--inside" ? options.Inside : options.Outside) = value;
    }
  }
  options.ExecutionMode = ParseDeviceOption(parsed);
  options.Verify = parsed.Has("--verify");
  options.Quiet = parsed.Has("--quiet");
  return options;
}

double
Milliseconds(const itk::TimeProbe & clock)
{
  return 1000.0 * clock.GetTotal();
}

std::string
Percent(std::size_t part, std::size_t whole)
{
  std::ostringstream text;
  text << std::fixed << std::setprecision(1)
       << (whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole)) << '%';
  return text.str();
}

std::string
TransfersToString(const cif::TransferCounters & counters)
{
  std::ostringstream text;
  text << counters.HostToDeviceCount << " upload" << (counters.HostToDeviceCount == 1 ? "" : "s") << " ("
       << counters.HostToDeviceBytes << " bytes), " << counters.DeviceToHostCount << " download"
       << (counters.DeviceToHostCount == 1 ? "" : "s") << " (" << counters.DeviceToHostBytes << " bytes)";
  return text.str();
}

template <SmoothingKind K, typename T, unsigned int D>
int
RunSegmentWith(const SegmentOptions & options)
{
  using CudaImageType = itk::CudaFilterImage<T, D>;
  using PackFilterType = itk::CudaThresholdToPackedMaskImageFilter<CudaImageType>;
  using MaskType = itk::CudaPackedMask<D>;
  using LabelImageType = itk::Image<std::uint8_t, D>;
  // the smoothing filter's type (a median placeholder, never created, for --filter none)
  constexpr SmoothingKind SmoothingOrMedian = K == SmoothingKind::None ? SmoothingKind::Median : K;
  using SmoothingType = typename SmoothingFilterFor<SmoothingOrMedian, CudaImageType, CudaImageType>::Type;

  T lower{};
  T upper{};
  ThresholdsInPixelType<T>(options.Thresholds, options.Input, lower, upper);

  typename SmoothingType::Pointer smoothing;
  if constexpr (K != SmoothingKind::None)
  {
    smoothing = MakeSmoothingFilter<K, CudaImageType, CudaImageType>(options.Smoothing, options.ExecutionMode);
  }
  auto pack = PackFilterType::New();
  pack->SetLowerThreshold(lower);
  pack->SetUpperThreshold(upper);
  pack->SetExecutionMode(options.ExecutionMode);
  if (options.ExecutionMode == itk::CudaExecutionMode::GPU)
  {
    if (smoothing)
    {
      CheckGPURequest(smoothing->GetGPUUnsupportedReason());
    }
    CheckGPURequest(pack->GetGPUUnsupportedReason());
  }
  if (options.ExecutionMode != itk::CudaExecutionMode::CPU && cif::Runtime::IsDeviceAvailable())
  {
    cif::Runtime::GetFreeMemory(); // start the device's context now, outside the stage timings
  }

  // ----- Read IN into a CudaFilterImage: host pixels, uploaded once by the first GPU stage.
  itk::TimeProbe readClock;
  readClock.Start();
  const auto input = ReadImageFile<CudaImageType>(options.Input);
  readClock.Stop();
  const std::size_t count = input->GetLargestPossibleRegion().GetNumberOfPixels();
  const std::size_t inputBytes = count * sizeof(T);

  cif::Runtime::ResetTransferCounters();

  // ----- Stage 1: the filter, CudaFilterImage to CudaFilterImage (on the GPU the result stays there).
  const CudaImageType * filtered = input.GetPointer();
  double                filterMilliseconds = 0.0;
  const std::string     filterLabel = std::string(CommandName) + ": " + SmoothingKindName(K);
  if constexpr (K != SmoothingKind::None)
  {
    smoothing->SetInput(input);
    filterMilliseconds = UpdateTimed(smoothing, filterLabel.c_str(), options.Quiet);
    filtered = smoothing->GetOutput();
  }

  // ----- Stage 2: threshold + pack, CudaFilterImage to CudaPackedMask (the words stay on the GPU).
  pack->SetInput(filtered);
  const double               packMilliseconds = UpdateTimed(pack, "segment: threshold + pack", options.Quiet);
  typename MaskType::Pointer mask = pack->GetOutput();
  mask->DisconnectPipeline();

  // ----- The packed words come to the host: the one download of the chain.
  itk::TimeProbe downloadClock;
  downloadClock.Start();
  mask->UpdateHostBuffer();
  downloadClock.Stop();
  const cif::TransferCounters counters = cif::Runtime::GetTransferCounters();

  itk::TimeProbe writeClock;
  writeClock.Start();
  try
  {
    itk::WritePackedMask<D>(mask.GetPointer(), options.Output, CompressOutput(options.Output));
  }
  catch (const itk::ExceptionObject & e)
  {
    throw RuntimeFailure("cannot write '" + options.Output + "': " + ExceptionMessage(e));
  }
  writeClock.Stop();

  double labelMilliseconds = 0.0;
  if (!options.Labels.empty())
  {
    // unpacked on the CPU from the downloaded words: the labels never cross the bus
    auto unpack = itk::CudaUnpackMaskImageFilter<LabelImageType>::New();
    unpack->SetInput(mask);
    unpack->SetInsideValue(options.Inside);
    unpack->SetOutsideValue(options.Outside);
    unpack->SetExecutionMode(itk::CudaExecutionMode::CPU);
    labelMilliseconds = UpdateTimed(unpack, "segment: labels", options.Quiet);
    WriteImageFile(unpack->GetOutput(), options.Labels);
  }

  // ----- Summary.
  const bool filterOnGPU = K == SmoothingKind::None || smoothing->GetLastExecutedOn() == itk::CudaExecutedOn::GPU;
  const bool filterOnCPU = K == SmoothingKind::None || smoothing->GetLastExecutedOn() == itk::CudaExecutedOn::CPU;
  const bool packOnGPU = pack->GetLastExecutedOn() == itk::CudaExecutedOn::GPU;
  const bool allOnGPU = filterOnGPU && packOnGPU;
  const bool allOnCPU = filterOnCPU && !packOnGPU;
  const std::size_t inside = mask->CountInside();
  const std::size_t packedBytes = mask->GetPackedSizeInBytes();

  std::cout << std::fixed << std::setprecision(3);
  std::cout << CommandName << ": IN: " << SizeToString(input->GetLargestPossibleRegion().GetSize()) << " pixels ("
            << itk::CudaPixelTypeName<T>() << ", " << inputBytes << " bytes), read in " << Milliseconds(readClock)
            << " ms\n";
  if constexpr (K != SmoothingKind::None)
  {
    std::cout << CommandName << ": stage 1: " << SmoothingKindName(K) << ", "
              << DescribeSmoothing<K>(smoothing.GetPointer(), options.Smoothing) << "; ran on "
              << smoothing->GetLastExecutionReport().Message << "; " << filterMilliseconds << " ms"
              << (filterOnGPU ? " (including the upload of IN)" : "") << "\n";
  }
  else
  {
    std::cout << CommandName << ": stage 1: none (--filter none)\n";
  }
  std::cout << CommandName << ": stage 2: threshold " << options.Thresholds.LowerText
            << " <= value <= " << options.Thresholds.UpperText << " (in " << itk::CudaPixelTypeName<T>() << ": "
            << ThresholdRangeToString(lower, upper) << ") + pack; ran on " << pack->GetLastExecutionReport().Message
            << "; " << packMilliseconds << " ms"
            << (K == SmoothingKind::None && packOnGPU ? " (including the upload of IN)" : "") << ": " << inside
            << " of " << count << " pixels inside (" << Percent(inside, count) << ")\n";
  std::cout << CommandName << ": packed mask: " << mask->GetNumberOfWords() << " words, " << packedBytes
            << " bytes (1 bit per voxel), downloaded in " << Milliseconds(downloadClock) << " ms, written to '"
            << options.Output << "' in " << Milliseconds(writeClock) << " ms\n";
  if (!options.Labels.empty())
  {
    std::cout << CommandName << ": labels: unpacked on the CPU from the downloaded words in " << labelMilliseconds
              << " ms (" << +options.Inside << " inside, " << +options.Outside << " outside), written to '"
              << options.Labels << "'\n";
  }
  std::cout << CommandName << ": host<->device transfers during the chain: " << TransfersToString(counters);
  if (allOnGPU && counters.HostToDeviceCount == 1 && counters.HostToDeviceBytes == inputBytes &&
      counters.DeviceToHostCount == 1 && counters.DeviceToHostBytes == packedBytes)
  {
    std::cout << ": the upload of IN and the download of the packed mask only (" << Percent(packedBytes, inputBytes)
              << " of IN's bytes came back)";
  }
  else if (allOnCPU && counters.HostToDeviceCount == 0 && counters.DeviceToHostCount == 0)
  {
    std::cout << ": none, every stage ran on the CPU";
  }
  std::cout << std::endl;
  std::cout.unsetf(std::ios_base::floatfield);
  std::cout << std::setprecision(6);

  if (!options.Verify)
  {
    return ExitSuccess;
  }

  // ----- --verify: each stage against its reference, on host copies.
  std::vector<StageCheck> checks;
  StageCheck              transfers;
  std::ostringstream      line;
  line << "transfers during the chain: " << TransfersToString(counters);
  if (allOnGPU)
  {
    line << "; expected 1 upload of IN (" << inputBytes << " bytes) and 1 download of the packed mask (" << packedBytes
         << " bytes)";
    transfers.Passed = counters.HostToDeviceCount == 1 && counters.HostToDeviceBytes == inputBytes &&
                       counters.DeviceToHostCount == 1 && counters.DeviceToHostBytes == packedBytes;
  }
  else if (allOnCPU)
  {
    line << "; expected none, every stage ran on the CPU";
    transfers.Passed = counters.HostToDeviceCount == 0 && counters.DeviceToHostCount == 0;
  }
  else
  {
    line << " (the stages ran on different devices, so any count is possible)";
    transfers.Checked = false;
  }
  transfers.Line = line.str();
  checks.push_back(transfers);

  // the filtered image comes to the host now, for the checks only (after the counters were read)
  filtered->UpdateHostBuffer();
  const auto plainInput = ToPlainImage<T, D>(input.GetPointer());
  const auto plainFiltered = K == SmoothingKind::None ? plainInput : ToPlainImage<T, D>(filtered);
  if constexpr (K != SmoothingKind::None)
  {
    checks.push_back(CheckSmoothingStage<K, T, D>(
      plainInput.GetPointer(), plainFiltered.GetPointer(), options.Smoothing, "the filtered image"));
    if constexpr (K == SmoothingKind::RotatingMask)
    {
      if (smoothing->GetLastExecutedOn() == itk::CudaExecutedOn::GPU)
      {
        checks.push_back(CheckRotatingMaskAgainstCPUCore<T, D>(
          plainInput.GetPointer(), plainFiltered.GetPointer(), options.Smoothing, "the filtered image"));
      }
    }
  }
  checks.push_back(
    CheckPackedMaskFile<T, D>(options.Output, plainFiltered.GetPointer(), lower, upper, options.Thresholds));
  if (!options.Labels.empty())
  {
    checks.push_back(CheckLabelFile<T, D>(
      options.Labels, plainFiltered.GetPointer(), lower, upper, options.Thresholds, options.Inside, options.Outside));
  }
  for (const auto & check : checks)
  {
    PrintStageCheck(check);
  }
  return StageChecksStatus(checks);
}

template <typename T, unsigned int D>
int
RunSegment(const SegmentOptions & options)
{
  switch (options.Smoothing.Kind)
  {
    case SmoothingKind::Median:
      return RunSegmentWith<SmoothingKind::Median, T, D>(options);
    case SmoothingKind::Bilateral:
      return RunSegmentWith<SmoothingKind::Bilateral, T, D>(options);
    case SmoothingKind::RotatingMask:
      return RunSegmentWith<SmoothingKind::RotatingMask, T, D>(options);
    case SmoothingKind::None:
      break;
  }
  return RunSegmentWith<SmoothingKind::None, T, D>(options);
}

} // namespace

void
SegmentUsage(std::ostream & os)
{
  os << "Usage: " << ToolName << ' ' << CommandName << " IN OUT --lower L --upper U [options]\n"
     << "\n"
     << "Segments IN by thresholding after an edge-preserving or median filter, the\n"
     << "chain of seed paper 002, with every stage on the GPU (or all on the CPU):\n"
     << "  1. the filter (--filter), in IN's pixel type;\n"
     << "  2. threshold L <= value <= U fused with packing: one bit per voxel, 32\n"
     << "     voxels along x per 32-bit word;\n"
     << "  3. the packed words come to the host and are written to OUT.\n"
     << "The stages hand itk::CudaFilterImage objects to each other, so on the GPU only IN's\n"
     << "upload and the packed mask's download (one bit per voxel) cross the bus;\n"
     << "the tool prints the module's transfer counters to show it, with the time of\n"
     << "each stage.\n"
     << "\n"
     << "Arguments:\n";
  PrintInputArgumentHelp(os);
  os << "  OUT                  the packed mask (WritePackedMask: the words with the true\n"
     << "                       grid in the header): " << PackedMaskFormats << '\n'
     << "\n"
     << "Options:\n"
     << "  --lower L            lower threshold, inclusive (required)\n"
     << "  --upper U            upper threshold, inclusive, U >= L (required); L and U\n"
     << "                       are real numbers, turned into the pixel type's values\n"
     << "                       that select exactly L <= value <= U (see the threshold\n"
     << "                       command)\n"
     << "  --filter F           bilateral (default), median, rotating-mask or none\n"
     << "  --domain-sigma S     bilateral: spatial sigma in physical units, S or\n"
     << "                       S1,S2[,S3] (required with bilateral)\n"
     << "  --range-sigma S      bilateral: range sigma in pixel values (required with\n"
     << "                       bilateral)\n"
     << "  --radius R           bilateral: box half-width, R or R1,R2[,R3] (default:\n"
     << "                       automatic, ceil(2.5 S_i / spacing_i)); median: window\n"
     << "                       half-width (default " << DefaultMedianRadius << ")\n"
     << "  --iterations N       bilateral and rotating-mask: how often the filter is\n"
     << "                       applied (default " << DefaultIterations << ")\n"
     << "  --labels FILE        also write the mask as an unsigned char label image,\n"
     << "                       unpacked on the CPU from the downloaded words (.nii.gz,\n"
     << "                       .nii, .nrrd, .nhdr, .mha, .mhd, or .png for 2D)\n"
     << "  --inside V           label of inside voxels in FILE, 0 to 255 (default 255)\n"
     << "  --outside V          label of outside voxels in FILE, 0 to 255 (default 0)\n";
  PrintDeviceOptionHelp(os);
  os << "  --verify             check every stage and print one line for each:\n"
     << "                       - transfers: exactly one upload of IN and one download\n"
     << "                         of the packed mask when every stage ran on the GPU,\n"
     << "                         none when all ran on the CPU;\n"
     << "                       - the filtered image (brought to the host afterwards,\n"
     << "                         for this check only) against the filter's reference,\n"
     << "                         as the median, bilateral and rotating-mask commands'\n"
     << "                         --verify; bilateral with more than one iteration is\n"
     << "                         compared with the module's CPU core and only reported;\n"
     << "                       - OUT read back with ReadPackedMask: the grid of IN, and\n"
     << "                         bits equal to ITK's BinaryThresholdImageFilter on the\n"
     << "                         filtered image;\n"
     << "                       - FILE of --labels read back: equal to ITK's\n"
     << "                         BinaryThresholdImageFilter with the same labels\n";
  PrintQuietAndHelpOptionHelp(os);
  os << "\n";
  PrintExitStatusHelp(os);
  os << "\n"
     << "Examples:\n"
     << "  " << ToolName << ' ' << CommandName << " ct.nii.gz liver.nrrd --lower 90 --upper 160\n"
     << "      --domain-sigma 2 --range-sigma 30\n"
     << "  " << ToolName << ' ' << CommandName << " ct.nii.gz liver.nrrd --lower 90 --upper 160\n"
     << "      --filter median --radius 2 --labels liver.nii.gz\n";
}

int
SegmentMain(const std::vector<std::string> & args)
{
  if (HasHelpOption(args))
  {
    SegmentUsage(std::cout);
    return ExitSuccess;
  }
  const SegmentOptions options = ParseSegmentOptions(args);
  CheckPackedMaskOutput(options.Output);
  if (!options.Labels.empty())
  {
    CheckImageOutput(options.Labels);
  }
  const FilterInput input = DescribeFilterInput(options.Input, CommandName);
  CheckSmoothingDimension(options.Smoothing, input.Dimension, options.Input);
  if (!options.Labels.empty())
  {
    CheckTypedImageOutput(options.Labels, PixelKind::UnsignedChar, input.Dimension, "--labels");
  }
  CheckThresholdsFitPixelType(options.Thresholds, input, options.Input);
  return RunOnFilterInput(options.Input,
                          input,
                          options.ExecutionMode,
                          options.Quiet,
                          [&](auto pixel, auto dimension)
                          {
                            using T = typename decltype(pixel)::Type;
                            constexpr unsigned int D = decltype(dimension)::value;
                            return RunSegment<T, D>(options);
                          });
}

} // namespace tool
} // namespace cif
