/*=========================================================================
 *  CudaImageFilters: `cudaimagefilters resample`: parsing its command line
 *  and its --help.
 *=========================================================================*/
#include "ResampleOptions.h"

namespace cif
{
namespace tool
{
namespace resample
{

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

} // namespace resample

void
ResampleUsage(std::ostream & os)
{
  using namespace resample;
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

} // namespace tool
} // namespace cif
