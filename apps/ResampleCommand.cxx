/*=========================================================================
 *  CudaImageFilters: `cudaimagefilters resample`, an image resampled through
 *  a transform onto an output grid with itk::CudaResampleImageFilter: the
 *  run and --verify. The options and help are in ResampleOptions, the grid
 *  in ResampleGrid.h, the transform and interpolator in ResampleTransforms.h.
 *=========================================================================*/
#include "ResampleGrid.h"
#include "ResampleOptions.h"
#include "ResampleTransforms.h"

namespace cif
{
namespace tool
{
namespace resample
{
namespace
{

/** Float to unsigned char for .png output: clamped to [0, 255] and rounded
 * to the nearest integer (halves away from zero); NaN becomes 0. */
template <unsigned int D>
typename itk::Image<unsigned char, D>::Pointer
ToUnsignedChar(const itk::Image<float, D> * image)
{
  auto converted = itk::Image<unsigned char, D>::New();
  converted->CopyInformation(image);
  converted->SetRegions(image->GetBufferedRegion());
  converted->Allocate();
  const float *     in = image->GetBufferPointer();
  unsigned char *   out = converted->GetBufferPointer();
  const std::size_t count = image->GetBufferedRegion().GetNumberOfPixels();
  for (std::size_t i = 0; i < count; ++i)
  {
    const double value = in[i];
    out[i] = std::isnan(value) ? 0 : static_cast<unsigned char>(std::lround(std::min(255.0, std::max(0.0, value))));
  }
  return converted;
}

/** --verify: reads OUT back and compares it with ITK's ResampleImageFilter
 * (same transform, interpolator kind, grid and default value) on the same
 * input. Prints one line; returns the exit status. */
template <unsigned int D>
int
VerifyAgainstITK(const itk::Image<float, D> *             input,
                 const itk::Transform<double, D, D> *     transform,
                 const OutputGrid<itk::Image<float, D>> & grid,
                 const ResampleOptions &                  options,
                 bool                                     unsignedCharOutput)
{
  using ImageType = itk::Image<float, D>;
  using ByteImageType = itk::Image<unsigned char, D>;
  auto reference = FactorylessReference<itk::ResampleImageFilter<ImageType, ImageType>>::New();
  reference->SetInput(input);
  reference->SetTransform(transform);
  reference->SetInterpolator(MakeInterpolator<ImageType>(options));
  reference->SetDefaultPixelValue(static_cast<float>(options.DefaultValue));
  grid.ApplyTo(reference.GetPointer());
  try
  {
    reference->Update();
  }
  catch (const itk::ExceptionObject & e)
  {
    throw RuntimeFailure("--verify: ITK's ResampleImageFilter failed: " + ExceptionMessage(e));
  }

  double difference = 0.0;
  double limit = 0.0;
  auto   checkSize = [&](const auto & size)
  {
    if (size != grid.Size)
    {
      throw RuntimeFailure("--verify: '" + options.Output + "' was read back with size " + SizeToString(size) +
                           ", not " + SizeToString(grid.Size));
    }
  };
  std::ostringstream line;
  line << std::setprecision(3);
  if (unsignedCharOutput)
  {
    const auto written = ReadImageFile<ByteImageType>(options.Output);
    checkSize(written->GetLargestPossibleRegion().GetSize());
    const auto expected = ToUnsignedChar<D>(reference->GetOutput());
    difference = LargestDifference<ByteImageType>(written.GetPointer(), expected.GetPointer());
    limit = VerifyToleranceUnsignedChar;
    line << "largest |OUT - itk::ResampleImageFilter| (both as unsigned char) is " << difference
         << " grey levels (limit " << limit << ")";
  }
  else
  {
    const auto written = ReadImageFile<ImageType>(options.Output);
    checkSize(written->GetLargestPossibleRegion().GetSize());
    const double range = DynamicRange(input);
    difference = LargestDifference<ImageType>(written.GetPointer(), reference->GetOutput()) / range;
    limit = options.Mode == ResampleMode::Fast ? VerifyToleranceFast : VerifyTolerance;
    line << "largest |OUT - itk::ResampleImageFilter| is " << difference << " of the input's range " << range
         << " (limit " << limit << ")";
  }
  const bool passed = difference <= limit;
  std::cout << "verify: " << line.str() << ": " << (passed ? "passed" : "FAILED") << std::endl;
  if (!passed)
  {
    PrintError("--verify: the output differs from ITK's ResampleImageFilter: " + line.str());
    return ExitFailure;
  }
  return ExitSuccess;
}

template <unsigned int D>
int
RunResample(const ResampleOptions & options, bool unsignedCharOutput)
{
  using ImageType = itk::Image<float, D>;
  using TransformType = itk::Transform<double, D, D>;
  using FilterType = itk::CudaResampleImageFilter<ImageType, ImageType>;

  // The transform file and the reference's header first: they are small,
  // and their errors should come before the input's pixels are read.
  std::string                          transformDescription;
  typename TransformType::ConstPointer transform;
  if (options.HasTransformFile())
  {
    transform = ReadTransformFile<D>(options.TransformFile, options.Input, transformDescription);
  }
  OutputGrid<ImageType> grid;
  if (options.HasReference())
  {
    // Only the reference's grid is used: its header, not its pixels.
    auto reader = itk::ImageFileReader<ImageType>::New();
    reader->SetFileName(options.Reference);
    try
    {
      reader->UpdateOutputInformation();
    }
    catch (const itk::ExceptionObject & e)
    {
      throw RuntimeFailure("cannot read '" + options.Reference + "': " + ExceptionMessage(e));
    }
    grid.CopyFrom(reader->GetOutput());
    grid.Description = "grid of '" + itksys::SystemTools::GetFilenameName(options.Reference) + "'";
  }

  const auto input = ReadImageFile<ImageType>(options.Input);
  if (options.HasZoom)
  {
    grid = ZoomGrid(input.GetPointer(), options.Zoom, options.ZoomText);
  }
  else if (!options.HasReference())
  {
    grid.CopyFrom(input.GetPointer());
    grid.Description = "grid of IN";
  }
  for (unsigned int a = 0; a < D; ++a)
  {
    if (grid.Size[a] == 0)
    {
      throw RuntimeFailure("the output grid (" + grid.Description + ") has size 0 along axis " + std::to_string(a));
    }
  }
  if (transform.IsNull())
  {
    if (options.HasRotate() || options.HasTranslate())
    {
      transform = MakeEulerTransform(input.GetPointer(), options, transformDescription);
    }
    else
    {
      transform = itk::IdentityTransform<double, D>::New().GetPointer();
      transformDescription = "identity";
    }
  }

  auto filter = FilterType::New();
  filter->SetInput(input);
  filter->SetTransform(transform);
  filter->SetInterpolator(MakeInterpolator<ImageType>(options));
  filter->SetDefaultPixelValue(static_cast<float>(options.DefaultValue));
  grid.ApplyTo(filter.GetPointer());
  filter->SetPrefilterMethod(options.Prefilter);
  filter->SetEvaluationMode(options.Mode == ResampleMode::Fast ? itk::CudaBSplineEvaluationMode::Fast
                                                               : itk::CudaBSplineEvaluationMode::Accurate);
  if (options.HasFIRHalfWidth)
  {
    filter->SetFIRHalfWidth(options.FIRHalfWidth);
  }
  filter->SetExecutionMode(options.ExecutionMode);
  if (options.ExecutionMode == itk::CudaExecutionMode::GPU)
  {
    CheckGPURequest(filter->GetGPUUnsupportedReason());
  }
  StartDeviceOutsideTiming(options.ExecutionMode); // the CUDA context now, outside the timing

  const double milliseconds = UpdateTimed(filter, CommandName, options.Quiet);

  const bool         ranOnGPU = filter->GetLastExecutedOn() == itk::CudaExecutedOn::GPU;
  std::ostringstream interpolation;
  interpolation << InterpolationName(options.Interpolation) << " interpolation";
  if (options.Interpolation == InterpolationKind::Cubic)
  {
    if (!ranOnGPU)
    {
      interpolation << " (ITK's recursive prefilter";
      if (options.Prefilter == itk::CudaBSplinePrefilterMethod::FIR)
      {
        interpolation << "; --prefilter fir is for the GPU";
      }
      interpolation << ')';
    }
    else if (options.Prefilter == itk::CudaBSplinePrefilterMethod::FIR)
    {
      interpolation << " (FIR prefilter, half-width " << filter->GetFIRHalfWidth() << ')';
    }
    else
    {
      interpolation << " (recursive prefilter)";
    }
  }
  std::cout << CommandName << ": " << SizeToString(grid.Size) << " pixels (" << grid.Description << ") from "
            << SizeToString(input->GetLargestPossibleRegion().GetSize()) << "; transform " << transformDescription
            << "; " << interpolation.str() << "; ran on " << filter->GetLastExecutionReport().Message
            << "; filter time " << std::fixed << std::setprecision(3) << milliseconds << " ms" << std::endl;
  std::cout.unsetf(std::ios_base::floatfield);
  std::cout << std::setprecision(6);

  if (unsignedCharOutput)
  {
    const auto converted = ToUnsignedChar<D>(filter->GetOutput());
    WriteImageFile(converted.GetPointer(), options.Output);
  }
  else
  {
    WriteImageFile(filter->GetOutput(), options.Output);
  }

  if (options.Verify)
  {
    return VerifyAgainstITK<D>(input.GetPointer(), transform.GetPointer(), grid, options, unsignedCharOutput);
  }
  return ExitSuccess;
}

} // namespace
} // namespace resample

int
ResampleMain(const std::vector<std::string> & args)
{
  using namespace resample;
  if (HasHelpOption(args))
  {
    ResampleUsage(std::cout);
    return ExitSuccess;
  }
  const ResampleOptions options = ParseResampleOptions(args);
  const std::string     outputIO = CheckImageOutput(options.Output);
  const bool            unsignedCharOutput = outputIO == "PNGImageIO";
  if (IsIntegerOnlyImageIO(outputIO) && !unsignedCharOutput)
  {
    const std::string format = outputIO.substr(0, outputIO.size() - std::string("ImageIO").size());
    throw UsageError("cannot write '" + options.Output + "': " + CommandName + " writes float (" + FloatImageFormats +
                     ") or unsigned char to .png, not " + format);
  }

  // The note about colour pixels waits until the command line is known to be good.
  ImageFileInformation inputInformation;
  const unsigned int   dimension = CheckScalarImageInput(options.Input, CommandName, true, &inputInformation);
  const std::string    dimensionText = std::to_string(dimension) + "D";
  if (options.HasRotate() && options.RotateDegrees.size() != (dimension == 2 ? 1u : 3u))
  {
    throw UsageError("--rotate " + options.RotateText + " gives " +
                     (options.RotateDegrees.size() == 1 ? "one angle (2D)" : "three angles (3D)") + ", but '" +
                     options.Input + "' is a " + dimensionText + " image (give " +
                     (dimension == 2 ? "one angle DEG" : "three angles AX,AY,AZ") + ")");
  }
  if (options.HasTranslate() && options.Translation.size() != dimension)
  {
    throw UsageError("--translate " + options.TranslateText + " has " + std::to_string(options.Translation.size()) +
                     " components, but '" + options.Input + "' is a " + dimensionText + " image");
  }
  if (unsignedCharOutput && dimension != 2)
  {
    throw UsageError("cannot write '" + options.Output + "': PNG holds 2D images, and the output is " + dimensionText +
                     " (use " + FloatImageFormats + ")");
  }
  if (options.HasZoom)
  {
    const ImageFileInformation & information = inputInformation;
    for (unsigned int a = 0; a < dimension; ++a)
    {
      const double size = ZoomedAxisSize(information.Size[a], options.Zoom);
      if (size < 1.0)
      {
        throw UsageError("--zoom " + options.ZoomText + " leaves the output no pixels along axis " + std::to_string(a) +
                         " (" + std::to_string(information.Size[a]) + " x " + options.ZoomText + " rounds to 0)");
      }
      if (size > MaxZoomedAxisSize)
      {
        throw UsageError("--zoom " + options.ZoomText + " asks for " + std::to_string(information.Size[a]) + " x " +
                         options.ZoomText + " pixels along axis " + std::to_string(a) + ", too many");
      }
    }
  }
  if (options.HasReference())
  {
    const ImageFileInformation reference = ReadImageFileInformation(options.Reference);
    const unsigned int         referenceDimension = EffectiveDimension(reference);
    if (referenceDimension != dimension)
    {
      throw RuntimeFailure("--reference: '" + options.Reference + "' is a " + std::to_string(referenceDimension) +
                           "D image, but '" + options.Input + "' is " + dimensionText);
    }
  }
  if (options.HasTransformFile())
  {
    if (itksys::SystemTools::FileIsDirectory(options.TransformFile))
    {
      throw RuntimeFailure("cannot read transform file '" + options.TransformFile + "': it is a folder");
    }
    if (!itksys::SystemTools::FileExists(options.TransformFile, true))
    {
      throw RuntimeFailure("cannot read transform file '" + options.TransformFile + "': no such file");
    }
  }
  if (options.ExecutionMode == itk::CudaExecutionMode::GPU)
  {
    CheckGPUAvailable(); // exit 77 before any work
  }
  if (IsColourPixel(inputInformation) && !options.Quiet)
  {
    PrintColourNote(options.Input, inputInformation);
  }

  return dimension == 2 ? RunResample<2>(options, unsignedCharOutput) : RunResample<3>(options, unsignedCharOutput);
}

} // namespace tool
} // namespace cif
