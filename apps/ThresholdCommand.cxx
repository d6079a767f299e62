/*=========================================================================
 *  CudaImageFilters: `cudaimagefilters threshold`, a label image with
 *  itk::CudaBinaryThresholdImageFilter, or (--packed) a bit-packed mask
 *  with itk::CudaThresholdToPackedMaskImageFilter written by
 *  WritePackedMask.
 *=========================================================================*/
#include "FilterStages.h"

#include "itkCudaBinaryThresholdImageFilter.h"
#include "cif/Runtime.h"
#include "itkCudaExecution.h"
#include "itkCudaThresholdToPackedMaskImageFilter.h"

#include <iomanip>
#include <iostream>

namespace cif
{
namespace tool
{

namespace
{

constexpr const char * CommandName = "threshold";

struct ThresholdOptions
{
  std::string            Input;
  std::string            Output;
  ThresholdSettings      Thresholds;
  bool                   Packed{ false };
  std::uint8_t           Inside{ 255 };
  std::uint8_t           Outside{ 0 };
  itk::CudaExecutionMode ExecutionMode{ itk::CudaExecutionMode::Automatic };
  bool                   Verify{ false };
  bool                   Quiet{ false };
  /** --stream (label images only: a packed mask is written whole). */
  StreamSettings Streaming;
};

ThresholdOptions
ParseThresholdOptions(const std::vector<std::string> & toolArgs)
{
  // the description's names (cif/Filter.h, "threshold"), as the Python keywords
  const std::vector<std::string> args = WithToolSpellings(toolArgs,
                                                          { { "--lower-threshold", "--lower" },
                                                            { "--upper-threshold", "--upper" },
                                                            { "--inside-value", "--inside" },
                                                            { "--outside-value", "--outside" } });
  std::vector<OptionSpec>        specs{ { "--lower", true },   { "--upper", true },   { "--inside", true },
                                 { "--outside", true }, { "--packed", false }, { "--device", true },
                                 { "--verify", false }, { "--quiet", false } };
  AddStreamOptionSpecs(specs);
  const ParsedArguments parsed = ParseArguments(args, specs);
  ThresholdOptions      options;
  ParseInputAndOutput(parsed, CommandName, options.Input, options.Output);
  options.Thresholds = ParseThresholds(parsed, CommandName);
  options.Packed = parsed.Has("--packed");
  for (const char * option : { "--inside", "--outside" })
  {
    if (parsed.Has(option))
    {
      if (options.Packed)
      {
        throw UsageError(std::string(option) +
                         " gives a label value of the output image; with --packed OUT holds one bit per voxel");
      }
      const auto value = static_cast<std::uint8_t>(ParseInteger(option, parsed.Get(option), 0, 255));
      (std::string(option) == "--inside" ? options.Inside : options.Outside) = value;
    }
  }
  options.ExecutionMode = ParseDeviceOption(parsed);
  options.Verify = parsed.Has("--verify");
  options.Quiet = parsed.Has("--quiet");
  options.Streaming = ParseStreamOptions(parsed, options.Verify);
  if (options.Streaming.Stream && options.Packed)
  {
    throw UsageError("--stream writes label images in pieces; a packed mask (--packed) is written whole");
  }
  return options;
}

std::string
InsideSummary(std::size_t inside, std::size_t count)
{
  std::ostringstream text;
  text << inside << " of " << count << " pixels inside (" << std::fixed << std::setprecision(1)
       << (count == 0 ? 0.0 : 100.0 * static_cast<double>(inside) / static_cast<double>(count)) << "%)";
  return text.str();
}

template <typename T, unsigned int D>
int
RunThreshold(const ThresholdOptions & options)
{
  using ImageType = itk::Image<T, D>;
  using LabelImageType = itk::Image<std::uint8_t, D>;
  using LabelFilterType = itk::CudaBinaryThresholdImageFilter<ImageType, LabelImageType>;
  using PackFilterType = itk::CudaThresholdToPackedMaskImageFilter<ImageType>;

  T lower{};
  T upper{};
  ThresholdsInPixelType<T>(options.Thresholds, options.Input, lower, upper);

  auto                 labelFilter = LabelFilterType::New();
  auto                 packFilter = PackFilterType::New();
  itk::ProcessObject * filter = nullptr;
  std::string          unsupported;
  if (options.Packed)
  {
    packFilter->SetLowerThreshold(lower);
    packFilter->SetUpperThreshold(upper);
    packFilter->SetExecutionMode(options.ExecutionMode);
    unsupported = packFilter->GetGPUUnsupportedReason();
    filter = packFilter;
  }
  else
  {
    labelFilter->SetLowerThreshold(lower);
    labelFilter->SetUpperThreshold(upper);
    labelFilter->SetInsideValue(options.Inside);
    labelFilter->SetOutsideValue(options.Outside);
    labelFilter->SetInPlace(false); // the input stays as read, for --verify
    labelFilter->SetExecutionMode(options.ExecutionMode);
    unsupported = labelFilter->GetGPUUnsupportedReason();
    filter = labelFilter;
  }
  if (options.ExecutionMode == itk::CudaExecutionMode::GPU)
  {
    CheckGPURequest(unsupported);
  }
  else if (options.ExecutionMode == itk::CudaExecutionMode::Automatic)
  {
    cif::Runtime::IsDeviceAvailable(); // discover the device now, outside the timing
  }

  if (options.Streaming.Stream)
  {
    return RunStreamed<ImageType, LabelImageType>(labelFilter.GetPointer(),
                                                  CommandName,
                                                  options.Input,
                                                  options.Output,
                                                  options.Streaming.Memory,
                                                  options.Quiet,
                                                  [&]
                                                  {
                                                    std::ostringstream text;
                                                    text << "inside when " << options.Thresholds.LowerText
                                                         << " <= value <= " << options.Thresholds.UpperText << " (in "
                                                         << itk::CudaPixelTypeName<T>() << ": "
                                                         << ThresholdRangeToString(lower, upper) << "); labels "
                                                         << +options.Inside << " inside, " << +options.Outside
                                                         << " outside";
                                                    return text.str();
                                                  });
  }
  const auto input = ReadImageFile<ImageType>(options.Input);
  packFilter->SetInput(input);
  labelFilter->SetInput(input);
  const double milliseconds = UpdateTimed(filter, CommandName, options.Quiet);

  const std::size_t  count = input->GetLargestPossibleRegion().GetNumberOfPixels();
  std::ostringstream summary;
  summary << CommandName << ": " << SizeToString(input->GetLargestPossibleRegion().GetSize()) << " pixels ("
          << itk::CudaPixelTypeName<T>() << "), inside when " << options.Thresholds.LowerText
          << " <= value <= " << options.Thresholds.UpperText << " (in " << itk::CudaPixelTypeName<T>() << ": "
          << ThresholdRangeToString(lower, upper) << "): ";
  if (options.Packed)
  {
    const auto * mask = packFilter->GetOutput();
    summary << InsideSummary(mask->CountInside(), count) << "; packed mask of " << mask->GetNumberOfWords()
            << " words (" << mask->GetPackedSizeInBytes() << " bytes, 1 bit per voxel); ran on "
            << packFilter->GetLastExecutionReport().Message;
  }
  else
  {
    const std::uint8_t * labels = labelFilter->GetOutput()->GetBufferPointer();
    std::size_t          inside = 0;
    for (std::size_t i = 0; i < count; ++i)
    {
      inside += labels[i] == options.Inside ? 1 : 0;
    }
    summary << InsideSummary(inside, count) << "; labels " << +options.Inside << " inside, " << +options.Outside
            << " outside; ran on " << labelFilter->GetLastExecutionReport().Message;
  }
  summary << "; filter time " << std::fixed << std::setprecision(3) << milliseconds << " ms";
  std::cout << summary.str() << std::endl;

  if (options.Packed)
  {
    try
    {
      itk::WritePackedMask<D>(packFilter->GetOutput(), options.Output, CompressOutput(options.Output));
    }
    catch (const itk::ExceptionObject & e)
    {
      throw RuntimeFailure("cannot write '" + options.Output + "': " + ExceptionMessage(e));
    }
  }
  else
  {
    WriteImageFile(labelFilter->GetOutput(), options.Output);
  }

  if (!options.Verify)
  {
    return ExitSuccess;
  }
  const StageCheck check =
    options.Packed
      ? CheckPackedMaskFile<T, D>(options.Output, input.GetPointer(), lower, upper, options.Thresholds)
      : CheckLabelFile<T, D>(
          options.Output, input.GetPointer(), lower, upper, options.Thresholds, options.Inside, options.Outside);
  PrintStageCheck(check);
  return StageChecksStatus({ check });
}

} // namespace

void
ThresholdUsage(std::ostream & os)
{
  os << "Usage: " << ToolName << ' ' << CommandName << " IN OUT --lower L --upper U [options]\n"
     << "\n"
     << "Binary thresholding of IN on the GPU or the CPU: a voxel is inside when\n"
     << "L <= value <= U. Without --packed OUT is a label image of unsigned char, like\n"
     << "ITK's BinaryThresholdImageFilter (bit for bit); with --packed OUT is a packed\n"
     << "mask, one bit per voxel (32 voxels along x per 32-bit word; the class\n"
     << "itk::CudaThresholdToPackedMaskImageFilter), written by the module's\n"
     << "WritePackedMask with the true grid in its header, 1/8 of the bytes of a label\n"
     << "image (unpack-mask and apply-packed-mask read it).\n"
     << "\n"
     << "ITK compares in the pixel type; L and U are real numbers here, turned into the\n"
     << "pixel type's values that select exactly L <= value <= U (integer pixels: the\n"
     << "smallest integer >= L and the largest <= U, clamped to the type; float: the\n"
     << "nearest floats inside [L, U]). NaN is outside.\n"
     << "\n"
     << "Arguments:\n";
  PrintInputArgumentHelp(os);
  os << "  OUT                  without --packed: a label image, .nii.gz, .nii, .nrrd,\n"
     << "                       .nhdr, .mha, .mhd or .png (2D); with --packed: a packed\n"
     << "                       mask, " << PackedMaskFormats << '\n'
     << "\n"
     << "Options:\n"
     << "  --lower L            lower threshold, inclusive (required)\n"
     << "  --upper U            upper threshold, inclusive, U >= L (required)\n"
     << "  --inside V           label of inside voxels, 0 to 255 (default 255, ITK's)\n"
     << "  --outside V          label of outside voxels, 0 to 255 (default 0)\n"
     << "                       (also spelt --lower-threshold, --upper-threshold,\n"
     << "                       --inside-value, --outside-value: the names of the\n"
     << "                       Python function's keywords)\n"
     << "  --packed             write a packed mask instead of a label image\n";
  PrintDeviceOptionHelp(os);
  PrintStreamOptionHelp(os);
  os << "  --verify             read OUT back and compare it with ITK's own\n"
     << "                       BinaryThresholdImageFilter on IN: identical labels, or\n"
     << "                       with --packed identical bits (the file read back with\n"
     << "                       ReadPackedMask, the bits decoded from the documented\n"
     << "                       layout, the grid of IN); also checks L <= value <= U in\n"
     << "                       double arithmetic for every voxel\n";
  PrintQuietAndHelpOptionHelp(os);
  os << "\n"
     << "Prints the thresholds in the pixel type, the number of inside voxels, the\n"
     << "device that ran the filter and its time.\n";
  PrintExitStatusHelp(os);
  os << "\n"
     << "Examples:\n"
     << "  " << ToolName << ' ' << CommandName << " ct.nii.gz bone.nii.gz --lower 300 --upper 3000\n"
     << "  " << ToolName << ' ' << CommandName << " ct.nii.gz bone.nrrd --lower 300 --upper 3000 --packed\n";
}

int
ThresholdMain(const std::vector<std::string> & args)
{
  if (HasHelpOption(args))
  {
    ThresholdUsage(std::cout);
    return ExitSuccess;
  }
  ThresholdOptions options = ParseThresholdOptions(args);
  if (options.Packed)
  {
    CheckPackedMaskOutput(options.Output);
  }
  else
  {
    CheckImageOutput(options.Output);
  }
  const FilterInput input = DescribeFilterInput(options.Input, CommandName);
  if (!options.Packed)
  {
    CheckTypedImageOutput(options.Output, PixelKind::UnsignedChar, input.Dimension, "OUT");
  }
  // thresholds that no value of the pixel type satisfies: a usage error before any work
  CheckThresholdsFitPixelType(options.Thresholds, input, options.Input);
  if (!options.Packed)
  {
    StreamLargeInput(options.Streaming,
                     input.Information.Voxels() * PixelBytes(input.Pixel),
                     options.Input,
                     options.Output,
                     options.Verify,
                     options.Quiet);
  }
  return RunOnFilterInput(options.Input,
                          input,
                          options.ExecutionMode,
                          options.Quiet,
                          [&](auto pixel, auto dimension)
                          {
                            using T = typename decltype(pixel)::Type;
                            constexpr unsigned int D = decltype(dimension)::value;
                            return RunThreshold<T, D>(options);
                          });
}

} // namespace tool
} // namespace cif
