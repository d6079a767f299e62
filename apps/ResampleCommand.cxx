/*=========================================================================
 *  CudaImageFilters: `cudaimagefilters resample`, an image resampled through
 *  a transform onto an output grid with itk::CudaResampleImageFilter.
 *=========================================================================*/
#include "FilterCommon.h"
#include "ToolCommon.h"

#include "cif/BSplinePrefilter.h"
#include "itkBSplineInterpolateImageFunction.h"
#include "itkCompositeTransform.h"
#include "itkContinuousIndex.h"
#include "itkCudaGaussianRBFInterpolateImageFunction.h"
#include "itkCudaResampleImageFilter.h"
#include "cif/Runtime.h"
#include "itkCudaExecution.h"
#include "itkEuler2DTransform.h"
#include "itkEuler3DTransform.h"
#include "itkIdentityTransform.h"
#include "itkImage.h"
#include "itkLinearInterpolateImageFunction.h"
#include "itkMath.h"
#include "itkNearestNeighborInterpolateImageFunction.h"
#include "itkObjectFactoryBase.h"
#include "itkResampleImageFilter.h"
#include "itkTransformFileReader.h"
#include "itkTxtTransformIOFactory.h"
#include "itksys/SystemTools.hxx"

#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace cif
{
namespace tool
{

namespace
{

constexpr const char * CommandName = "resample";

/** --verify fails above this largest difference, relative to the input's
 * range (float output), */
constexpr double VerifyTolerance = 1e-5;
/** ... or above this many grey levels (unsigned char output, .png). */
constexpr double VerifyToleranceUnsignedChar = 1.0;
/** The fast texture mode's floor (docs/ResamplePerformance.md: up to 6e-3 of
 * the range on real images, 1.6e-2 on noise). */
constexpr double VerifyToleranceFast = 2e-2;

/** Largest output size along an axis that --zoom may ask for. */
constexpr double MaxZoomedAxisSize = 1e9;

enum class InterpolationKind
{
  Nearest,
  Linear,
  Cubic,
  GaussianRBF
};

/** --mode: how the GPU interpolates. Fast (texture hardware) is still to
 * come in the filter; the tool refuses it for now. */
enum class ResampleMode
{
  Accurate,
  Fast
};

struct ResampleOptions
{
  std::string                     Input;
  std::string                     Output;
  std::string                     RotateText; ///< as given, for messages
  std::vector<double>             RotateDegrees;
  std::string                     TranslateText;
  std::vector<double>             Translation;
  std::string                     TransformFile;
  bool                            HasZoom{ false };
  std::string                     ZoomText;
  double                          Zoom{ 1.0 };
  std::string                     Reference;
  InterpolationKind               Interpolation{ InterpolationKind::Cubic };
  std::vector<double>             Sigma; ///< grbf: sigma per axis (physical); empty: one spacing
  bool                            HasPrefilter{ false };
  itk::CudaBSplinePrefilterMethod Prefilter{ itk::CudaBSplinePrefilterMethod::Recursive };
  bool                            HasFIRHalfWidth{ false };
  unsigned int                    FIRHalfWidth{ 0 };
  ResampleMode                    Mode{ ResampleMode::Accurate };
  double                          DefaultValue{ 0.0 };
  itk::CudaExecutionMode          ExecutionMode{ itk::CudaExecutionMode::Automatic };
  bool                            Verify{ false };
  bool                            Quiet{ false };

  bool
  HasRotate() const
  {
    return !RotateDegrees.empty();
  }
  bool
  HasTranslate() const
  {
    return !Translation.empty();
  }
  bool
  HasTransformFile() const
  {
    return !TransformFile.empty();
  }
  bool
  HasReference() const
  {
    return !Reference.empty();
  }
};

const char *
InterpolationName(InterpolationKind kind)
{
  switch (kind)
  {
    case InterpolationKind::Nearest:
      return "nearest neighbour";
    case InterpolationKind::Linear:
      return "linear";
    case InterpolationKind::GaussianRBF:
      return "Gaussian RBF (exact, point by point)";
    case InterpolationKind::Cubic:
      break;
  }
  return "cubic B-spline";
}

ResampleOptions
ParseResampleOptions(const std::vector<std::string> & args)
{
  const ParsedArguments parsed = ParseArguments(args,
                                                { { "--rotate", true },
                                                  { "--translate", true },
                                                  { "--transform", true },
                                                  { "--zoom", true },
                                                  { "--reference", true },
                                                  { "--interpolation", true },
                                                  { "--sigma", true },
                                                  { "--prefilter", true },
                                                  { "--fir-half-width", true },
                                                  { "--mode", true },
                                                  { "--default", true },
                                                  { "--device", true },
                                                  { "--verify", false },
                                                  { "--quiet", false } });
  ResampleOptions       options;
  ParseInputAndOutput(parsed, CommandName, options.Input, options.Output);

  // ----- Geometry.
  if (parsed.Has("--rotate"))
  {
    options.RotateText = parsed.Get("--rotate");
    options.RotateDegrees = ParseRealList("--rotate", options.RotateText);
    if (options.RotateDegrees.size() != 1 && options.RotateDegrees.size() != 3)
    {
      throw UsageError("--rotate: '" + options.RotateText + "' has " + std::to_string(options.RotateDegrees.size()) +
                       " angles; give one angle DEG for a 2D image or three AX,AY,AZ for a 3D one (degrees)");
    }
  }
  if (parsed.Has("--translate"))
  {
    options.TranslateText = parsed.Get("--translate");
    options.Translation = ParseRealList("--translate", options.TranslateText);
    if (options.Translation.size() != 2 && options.Translation.size() != 3)
    {
      throw UsageError("--translate: '" + options.TranslateText + "' has " +
                       std::to_string(options.Translation.size()) +
                       " components; give TX,TY for a 2D image or TX,TY,TZ for a 3D one");
    }
  }
  if (options.HasRotate() && options.HasTranslate() &&
      (options.RotateDegrees.size() == 1) != (options.Translation.size() == 2))
  {
    throw UsageError("--rotate " + options.RotateText + " and --translate " + options.TranslateText +
                     " do not agree on the dimension (one angle and TX,TY for 2D; AX,AY,AZ and TX,TY,TZ for 3D)");
  }
  if (parsed.Has("--transform"))
  {
    options.TransformFile = parsed.Get("--transform");
    if (options.TransformFile.empty())
    {
      throw UsageError("--transform: the file name is empty");
    }
  }
  if (parsed.Has("--zoom"))
  {
    options.HasZoom = true;
    options.ZoomText = parsed.Get("--zoom");
    options.Zoom = ParseFiniteReal("--zoom", options.ZoomText);
    if (!(options.Zoom > 0.0))
    {
      throw UsageError("--zoom: " + options.ZoomText + " is not a zoom factor (expected a number greater than 0)");
    }
  }
  if (parsed.Has("--reference"))
  {
    options.Reference = parsed.Get("--reference");
    if (options.Reference.empty())
    {
      throw UsageError("--reference: the file name is empty");
    }
  }
  if (options.HasTransformFile() && (options.HasRotate() || options.HasTranslate()))
  {
    throw UsageError(std::string("--transform and ") + (options.HasRotate() ? "--rotate" : "--translate") +
                     " both define the transform; give one of them");
  }
  if (options.HasZoom)
  {
    for (const char * other : { "--rotate", "--translate", "--transform", "--reference" })
    {
      if (parsed.Has(other))
      {
        throw UsageError(std::string("--zoom and ") + other +
                         " cannot be combined: --zoom defines the whole geometry (identity transform, zoomed grid)");
      }
    }
  }
  if (!options.HasRotate() && !options.HasTranslate() && !options.HasTransformFile() && !options.HasZoom &&
      !options.HasReference())
  {
    throw UsageError(std::string(CommandName) +
                     " needs a geometry: --rotate, --translate, --transform, --zoom or --reference");
  }

  // ----- Interpolation.
  const std::string interpolation = parsed.Get("--interpolation", "cubic");
  if (interpolation == "nearest")
  {
    options.Interpolation = InterpolationKind::Nearest;
  }
  else if (interpolation == "linear")
  {
    options.Interpolation = InterpolationKind::Linear;
  }
  else if (interpolation == "cubic")
  {
    options.Interpolation = InterpolationKind::Cubic;
  }
  else if (interpolation == "grbf")
  {
    options.Interpolation = InterpolationKind::GaussianRBF;
  }
  else
  {
    throw UsageError("--interpolation: unknown interpolation '" + interpolation +
                     "' (expected nearest, linear, cubic or grbf)");
  }
  if (parsed.Has("--sigma"))
  {
    if (options.Interpolation != InterpolationKind::GaussianRBF)
    {
      throw UsageError("--sigma applies to --interpolation grbf only, not " + interpolation);
    }
    options.Sigma = ParseRealList("--sigma", parsed.Get("--sigma"));
    for (double v : options.Sigma)
    {
      if (!(v > 0.0) || !std::isfinite(v))
      {
        throw UsageError("--sigma: " + parsed.Get("--sigma") + " has a value that is not positive and finite");
      }
    }
  }
  if (parsed.Has("--prefilter"))
  {
    options.HasPrefilter = true;
    const std::string prefilter = parsed.Get("--prefilter");
    if (prefilter == "recursive" || prefilter == "iir")
    {
      options.Prefilter = itk::CudaBSplinePrefilterMethod::Recursive;
    }
    else if (prefilter == "fir")
    {
      options.Prefilter = itk::CudaBSplinePrefilterMethod::FIR;
    }
    else
    {
      throw UsageError("--prefilter: unknown prefilter '" + prefilter + "' (expected recursive, iir or fir)");
    }
    if (options.Interpolation != InterpolationKind::Cubic)
    {
      throw UsageError("--prefilter applies to --interpolation cubic only, not " + interpolation);
    }
  }
  if (parsed.Has("--fir-half-width"))
  {
    options.HasFIRHalfWidth = true;
    options.FIRHalfWidth =
      static_cast<unsigned int>(ParseInteger("--fir-half-width", parsed.Get("--fir-half-width"), 0, MaxFIRHalfWidth));
    if (options.Prefilter != itk::CudaBSplinePrefilterMethod::FIR || options.Interpolation != InterpolationKind::Cubic)
    {
      throw UsageError("--fir-half-width applies to --prefilter fir only");
    }
  }
  if (parsed.Has("--mode"))
  {
    const std::string mode = parsed.Get("--mode");
    if (mode == "accurate")
    {
      options.Mode = ResampleMode::Accurate;
    }
    else if (mode == "fast")
    {
      options.Mode = ResampleMode::Fast;
    }
    else
    {
      throw UsageError("--mode: unknown mode '" + mode + "' (expected accurate or fast)");
    }
  }
  if (options.Mode == ResampleMode::Fast && options.Interpolation != InterpolationKind::Cubic)
  {
    throw UsageError("--mode fast applies to --interpolation cubic only");
  }

  // ----- The rest.
  if (parsed.Has("--default"))
  {
    options.DefaultValue = ParseFiniteReal("--default", parsed.Get("--default"));
  }
  options.ExecutionMode = ParseDeviceOption(parsed);
  options.Verify = parsed.Has("--verify");
  options.Quiet = parsed.Has("--quiet");
  return options;
}

/** Output size along one axis for --zoom: the input's size times the zoom,
 * rounded to the nearest integer (halves up). */
double
ZoomedAxisSize(std::size_t inputSize, double zoom)
{
  return std::floor(static_cast<double>(inputSize) * zoom + 0.5);
}

/** ITK's own ResampleImageFilter, created without the object factory so
 * that no registered override can substitute the filter under test. */
template <typename TInputImage, typename TOutputImage>
class ReferenceResample : public itk::ResampleImageFilter<TInputImage, TOutputImage>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(ReferenceResample);

  using Self = ReferenceResample;
  using Superclass = itk::ResampleImageFilter<TInputImage, TOutputImage>;
  using Pointer = itk::SmartPointer<Self>;
  itkFactorylessNewMacro(Self);
  itkTypeMacro(ReferenceResample, ResampleImageFilter);

protected:
  ReferenceResample() = default;
  ~ReferenceResample() override = default;
};

/** The output grid of the resampling. */
template <typename TImage>
struct OutputGrid
{
  typename TImage::SizeType      Size;
  typename TImage::IndexType     StartIndex;
  typename TImage::SpacingType   Spacing;
  typename TImage::PointType     Origin;
  typename TImage::DirectionType Direction;
  std::string                    Description; ///< where it comes from, for the summary line

  void
  CopyFrom(const TImage * image)
  {
    const auto region = image->GetLargestPossibleRegion();
    Size = region.GetSize();
    StartIndex = region.GetIndex();
    Spacing = image->GetSpacing();
    Origin = image->GetOrigin();
    Direction = image->GetDirection();
  }

  template <typename TFilter>
  void
  ApplyTo(TFilter * filter) const
  {
    filter->SetSize(Size);
    filter->SetOutputStartIndex(StartIndex);
    filter->SetOutputSpacing(Spacing);
    filter->SetOutputOrigin(Origin);
    filter->SetOutputDirection(Direction);
  }
};

/** "0.5x0.5x1.2". */
template <typename TVector>
std::string
SpacingToString(const TVector & spacing)
{
  std::ostringstream text;
  for (unsigned int a = 0; a < TVector::Dimension; ++a)
  {
    text << (a == 0 ? "" : "x") << spacing[a];
  }
  return text.str();
}

/** "(90, 108)". */
template <typename TArray>
std::string
TupleToString(const TArray & values, unsigned int count)
{
  std::ostringstream text;
  text << '(';
  for (unsigned int a = 0; a < count; ++a)
  {
    text << (a == 0 ? "" : ", ") << values[a];
  }
  text << ')';
  return text.str();
}

/** --zoom: spacing / F, size N' = N x F (rounded), same direction; the
 * origin is placed so that the two grids have the same physical centre, as
 * itk::ShrinkImageFilter does: output pixel i of an axis lies at input
 * continuous index start + (N - 1) / 2 + (i - (N' - 1) / 2) / F. When N x F
 * is an integer, that is start - 0.5 + (i + 0.5) / F: the grids share their
 * edges, as itk::ExpandImageFilter's output does. */
template <typename TImage>
OutputGrid<TImage>
ZoomGrid(const TImage * input, double zoom, const std::string & zoomText)
{
  constexpr unsigned int          D = TImage::ImageDimension;
  OutputGrid<TImage>              grid;
  const auto                      region = input->GetLargestPossibleRegion();
  itk::ContinuousIndex<double, D> firstCentre;
  for (unsigned int a = 0; a < D; ++a)
  {
    grid.Size[a] = static_cast<itk::SizeValueType>(ZoomedAxisSize(region.GetSize(a), zoom));
    grid.StartIndex[a] = 0;
    grid.Spacing[a] = input->GetSpacing()[a] / zoom;
    const double inputSize = static_cast<double>(region.GetSize(a));
    const double outputSize = static_cast<double>(grid.Size[a]);
    firstCentre[a] =
      static_cast<double>(region.GetIndex(a)) + 0.5 * (inputSize - 1.0) - 0.5 * (outputSize - 1.0) / zoom;
  }
  input->TransformContinuousIndexToPhysicalPoint(firstCentre, grid.Origin);
  grid.Direction = input->GetDirection();
  grid.Description = "zoom " + zoomText + ": spacing " + SpacingToString(grid.Spacing);
  return grid;
}

/** Registers the reader of ITK's text transform files (.tfm, .txt) unless
 * ITK's IO factory registration already did. */
void
RegisterTransformFileIO()
{
  for (const auto * factory : itk::ObjectFactoryBase::GetRegisteredFactories())
  {
    if (dynamic_cast<const itk::TxtTransformIOFactory *>(factory) != nullptr)
    {
      return;
    }
  }
  itk::TxtTransformIOFactory::RegisterOneFactory();
}

/** Reads the one transform of an ITK transform file (a CompositeTransform
 * counts as one) and checks that it maps D-dimensional points to
 * D-dimensional points, which is what itk::ResampleImageFilter takes. */
template <unsigned int D>
typename itk::Transform<double, D, D>::ConstPointer
ReadTransformFile(const std::string & fileName, const std::string & input, std::string & description)
{
  using TransformType = itk::Transform<double, D, D>;
  RegisterTransformFileIO();
  auto reader = itk::TransformFileReaderTemplate<double>::New();
  reader->SetFileName(fileName);
  try
  {
    reader->Update();
  }
  catch (const itk::ExceptionObject & e)
  {
    throw RuntimeFailure("cannot read transform file '" + fileName + "': " + ExceptionMessage(e));
  }
  const auto * transforms = reader->GetTransformList();
  if (transforms == nullptr || transforms->empty() || transforms->front().IsNull())
  {
    throw RuntimeFailure("cannot read transform file '" + fileName + "': it holds no transform");
  }
  const auto        first = transforms->front();
  const std::string name = first->GetNameOfClass();
  // The reader puts a CompositeTransform first and its parts after it.
  const bool composite = name.find("CompositeTransform") != std::string::npos;
  if (transforms->size() > 1 && !composite)
  {
    throw RuntimeFailure("transform file '" + fileName + "' holds " + std::to_string(transforms->size()) +
                         " transforms; " + CommandName + " takes one (or a CompositeTransform)");
  }
  const auto * transform = dynamic_cast<const TransformType *>(first.GetPointer());
  if (transform == nullptr)
  {
    throw RuntimeFailure("the transform in '" + fileName + "' (" + name + ") maps " +
                         std::to_string(first->GetInputSpaceDimension()) + "D to " +
                         std::to_string(first->GetOutputSpaceDimension()) + "D points, but '" + input + "' is a " +
                         std::to_string(D) + "D image, which needs a " + std::to_string(D) + "D transform");
  }
  description = name;
  if (const auto * parts = dynamic_cast<const itk::CompositeTransform<double, D> *>(transform))
  {
    description += " of " + std::to_string(parts->GetNumberOfTransforms()) + " transforms";
  }
  description += " from '" + itksys::SystemTools::GetFilenameName(fileName) + "'";
  return transform;
}

/** --rotate/--translate: an Euler transform about the input's centre (the
 * physical point of its middle continuous index). */
template <typename TImage>
typename itk::Transform<double, TImage::ImageDimension, TImage::ImageDimension>::ConstPointer
MakeEulerTransform(const TImage * input, const ResampleOptions & options, std::string & description)
{
  constexpr unsigned int          D = TImage::ImageDimension;
  const auto                      region = input->GetLargestPossibleRegion();
  itk::ContinuousIndex<double, D> middle;
  for (unsigned int a = 0; a < D; ++a)
  {
    middle[a] = static_cast<double>(region.GetIndex(a)) + 0.5 * (static_cast<double>(region.GetSize(a)) - 1.0);
  }
  typename TImage::PointType centre;
  input->TransformContinuousIndexToPhysicalPoint(middle, centre);
  std::vector<double> degrees = options.RotateDegrees;
  degrees.resize(D == 2 ? 1 : 3, 0.0);
  std::vector<double> translation = options.Translation;
  translation.resize(D, 0.0);

  std::ostringstream                                  text;
  typename itk::Transform<double, D, D>::ConstPointer result;
  if constexpr (D == 2)
  {
    auto transform = itk::Euler2DTransform<double>::New();
    transform->SetCenter(centre);
    transform->SetAngleInDegrees(degrees[0]);
    typename itk::Euler2DTransform<double>::OutputVectorType offset;
    offset[0] = translation[0];
    offset[1] = translation[1];
    transform->SetTranslation(offset);
    text << transform->GetNameOfClass() << ": rotation " << degrees[0] << " degrees";
    result = transform.GetPointer();
  }
  else
  {
    auto transform = itk::Euler3DTransform<double>::New();
    transform->SetCenter(centre);
    const double radians = itk::Math::pi / 180.0;
    transform->SetRotation(degrees[0] * radians, degrees[1] * radians, degrees[2] * radians);
    typename itk::Euler3DTransform<double>::OutputVectorType offset;
    for (unsigned int a = 0; a < 3; ++a)
    {
      offset[a] = translation[a];
    }
    transform->SetTranslation(offset);
    text << transform->GetNameOfClass() << ": rotation " << TupleToString(degrees, 3) << " degrees";
    result = transform.GetPointer();
  }
  text << " about " << TupleToString(centre, D) << ", translation " << TupleToString(translation, D);
  description = text.str();
  return result;
}

template <typename TImage>
typename itk::InterpolateImageFunction<TImage, double>::Pointer
MakeInterpolator(const ResampleOptions & options)
{
  constexpr unsigned int D = TImage::ImageDimension;
  switch (options.Interpolation)
  {
    case InterpolationKind::GaussianRBF:
    {
      auto                       grbf = itk::CudaGaussianRBFInterpolateImageFunction<TImage, double>::New();
      itk::FixedArray<double, D> sigma;
      sigma.Fill(0.0); // one spacing
      if (!options.Sigma.empty())
      {
        if (options.Sigma.size() != 1 && options.Sigma.size() != D)
        {
          throw UsageError("--sigma takes 1 or " + std::to_string(D) + " values for the " + std::to_string(D) +
                           "D image '" + options.Input + "', not " + std::to_string(options.Sigma.size()));
        }
        for (unsigned int d = 0; d < D; ++d)
        {
          sigma[d] = options.Sigma.size() == 1 ? options.Sigma[0] : options.Sigma[d];
        }
      }
      grbf->SetSigma(sigma);
      return grbf.GetPointer();
    }
    case InterpolationKind::Nearest:
      return itk::NearestNeighborInterpolateImageFunction<TImage, double>::New().GetPointer();
    case InterpolationKind::Linear:
      return itk::LinearInterpolateImageFunction<TImage, double>::New().GetPointer();
    case InterpolationKind::Cubic:
      break;
  }
  auto cubic = itk::BSplineInterpolateImageFunction<TImage, double, double>::New();
  cubic->SetSplineOrder(3);
  return cubic.GetPointer();
}

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
  auto reference = ReferenceResample<ImageType, ImageType>::New();
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
  else if (options.ExecutionMode == itk::CudaExecutionMode::Automatic)
  {
    cif::Runtime::IsDeviceAvailable(); // discover the device now, outside the timing
  }

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

void
ResampleUsage(std::ostream & os)
{
  os << "Usage: " << ToolName << ' ' << CommandName << " IN OUT GEOMETRY [options]\n"
     << "\n"
     << "Resamples the image IN (2D or 3D, read as float) through a transform onto\n"
     << "an output grid, like ITK's ResampleImageFilter, on the GPU or the CPU, and\n"
     << "writes OUT as float (as unsigned char, clamped and rounded, for .png).\n"
     << "\n"
     << "Arguments:\n"
     << "  IN                   input image: .nii.gz, .nii, .nrrd, .nhdr, .mha, .mhd, .png\n"
     << "  OUT                  output image: .nii.gz, .nii, .nrrd, .nhdr, .mha, .mhd\n"
     << "                       (float), or .png (2D only, unsigned char)\n"
     << "\n"
     << "Geometry (at least one; the output grid is IN's unless --zoom or\n"
     << "--reference gives another):\n"
     << "  --rotate DEG         2D: rotation by DEG degrees about the centre of IN\n"
     << "                       (itk::Euler2DTransform)\n"
     << "  --rotate AX,AY,AZ    3D: rotation by Euler angles in degrees about the\n"
     << "                       centre of IN (itk::Euler3DTransform: R = Rz Rx Ry)\n"
     << "  --translate T        TX,TY (2D) or TX,TY,TZ (3D), physical units: the\n"
     << "                       Euler transform's translation (alone: no rotation)\n"
     << "  --transform FILE     a transform from an ITK transform file (.tfm or .txt,\n"
     << "                       ITK's text format), any D-to-D transform that\n"
     << "                       itk::ResampleImageFilter takes; not with --rotate or\n"
     << "                       --translate\n"
     << "  --zoom F             F > 0: output spacing = IN's spacing / F, size = IN's\n"
     << "                       size x F (rounded to the nearest integer), identity\n"
     << "                       transform, same physical centre (see below); not\n"
     << "                       with the other geometry options\n"
     << "  --reference IMAGE    the output grid (size, spacing, origin, direction) of\n"
     << "                       IMAGE (its header only); the identity transform unless\n"
     << "                       --rotate, --translate or --transform is also given\n"
     << "\n"
     << "  As in ITK, the transform maps points of the output grid to points of IN,\n"
     << "  so --rotate 10 turns the image content by -10 degrees. The centre of\n"
     << "  --rotate is the physical point of IN's middle pixel, (size - 1) / 2, also\n"
     << "  with --reference. --zoom keeps the physical centre, as\n"
     << "  itk::ShrinkImageFilter does: along an axis of N pixels zoomed to\n"
     << "  N' = round(N x F), output pixel i lies at IN's continuous index\n"
     << "  (N - 1) / 2 + (i - (N' - 1) / 2) / F; when N x F is an integer that is\n"
     << "  -0.5 + (i + 0.5) / F, so the grids share their edges (physical extent),\n"
     << "  as in itk::ExpandImageFilter's output.\n"
     << "\n"
     << "Options:\n"
     << "  --interpolation I    nearest, linear, cubic or grbf (default: cubic B-spline,\n"
     << "                       itk::BSplineInterpolateImageFunction of order 3; grbf:\n"
     << "                       Gaussian radial basis functions through every pixel,\n"
     << "                       CudaGaussianRBFInterpolateImageFunction, exact to 1e-6\n"
     << "                       of the largest magnitude, double precision)\n"
     << "  --sigma S[,S2,S3]    grbf: the Gaussian's sigma in physical units (default:\n"
     << "                       one input spacing per axis; at most about 2.09 pixels)\n"
     << "  --prefilter P        cubic on the GPU: the B-spline coefficients by\n"
     << "                       recursive (default; alias iir; exact, as ITK) or fir;\n"
     << "                       the CPU always runs ITK's recursive prefilter\n"
     << "  --fir-half-width K   FIR half-width: 2K + 1 taps, 0 to " << MaxFIRHalfWidth << " (default 13)\n"
     << "  --mode M             cubic on the GPU: accurate (default): 4^N coefficients\n"
     << "                       with explicit weights; fast: 2^N hardware-linear\n"
     << "                       texture fetches, accurate to about 1e-2 of the range\n"
     << "  --default V          value of output pixels that map outside IN (default 0)\n"
     << "  --device D           auto (default): the GPU when it can run the job, else\n"
     << "                       the CPU; gpu: the GPU only; cpu: the CPU only\n"
     << "  --verify             read OUT back and compare it with ITK's own\n"
     << "                       ResampleImageFilter (same transform, interpolator and\n"
     << "                       grid); fail when they differ by more than " << VerifyTolerance << " of the\n"
     << "                       input's range (" << VerifyToleranceUnsignedChar << " grey level for .png output)\n";
  PrintQuietAndHelpOptionHelp(os);
  os << "\n"
     << "Prints the output size, the transform, the interpolation, the device that\n"
     << "ran the filter and the filter's time.\n"
     << "Exit status: 0 done; 1 failure (reading images or the transform file, a\n"
     << "transform or reference of the wrong dimension, filtering, writing,\n"
     << "--verify); 2 bad command line (including a --rotate or --translate of the\n"
     << "wrong dimension for IN, and a --zoom that leaves an axis of size 0); 77\n"
     << "--device gpu without a usable GPU (1 instead when the environment sets\n"
     << "CUDAIMAGEFILTERS_REQUIRE_GPU=1).\n"
     << "\n"
     << "Examples:\n"
     << "  " << ToolName << ' ' << CommandName << " slice.png rotated.png --rotate 10\n"
     << "  " << ToolName << ' ' << CommandName << " t1.nii.gz out.nii.gz --rotate 5,0,10 --translate 1,2,3\n"
     << "  " << ToolName << ' ' << CommandName << " t1.nii.gz out.nii.gz --zoom 2 --interpolation linear\n"
     << "  " << ToolName << ' ' << CommandName << " t1.nii.gz out.nii.gz --transform a.tfm --reference b.nii.gz\n";
}

int
ResampleMain(const std::vector<std::string> & args)
{
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
