/*=========================================================================
 *  CudaImageFilters: `cudaimagefilters grbf`, Gaussian RBF interpolation
 *  onto a zoomed or a reference grid with
 *  itk::CudaGaussianRBFInterpolationImageFilter.
 *=========================================================================*/
#include "FilterCommon.h"
#include "ToolCommon.h"
#include "itkCudaGaussianRBFInterpolationImageFilter.h"

#include <algorithm>
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
constexpr const char * CommandName = "grbf";

struct GrbfOptions
{
  std::string            Input, Output, Reference;
  std::vector<double>    Zoom;  ///< empty: --reference
  std::vector<double>    Sigma; ///< empty: one input spacing per axis
  double                 Tolerance{ 1e-6 };
  double                 Ridge{ 0.0 };
  double                 DefaultValue{ 0.0 };
  itk::CudaExecutionMode ExecutionMode{ itk::CudaExecutionMode::Automatic };
  bool                   Block{ false };       ///< --method block: the seed's block mode
  std::vector<double>    BlockSize;            ///< empty: the filter's default
  std::vector<double>    BlockOverlap;         ///< empty: the filter's default
  bool                   BlockDouble{ false }; ///< --block-precision double
  bool                   Verify{ false };
  bool                   Quiet{ false };
};

GrbfOptions
ParseGrbfOptions(const std::vector<std::string> & args)
{
  const ParsedArguments parsed = ParseArguments(args,
                                                { { "--zoom", true },
                                                  { "--reference", true },
                                                  { "--sigma", true },
                                                  { "--tolerance", true },
                                                  { "--ridge", true },
                                                  { "--default", true },
                                                  { "--device", true },
                                                  { "--method", true },
                                                  { "--block-size", true },
                                                  { "--block-overlap", true },
                                                  { "--block-precision", true },
                                                  { "--verify", false },
                                                  { "--quiet", false } });
  GrbfOptions           options;
  ParseInputAndOutput(parsed, CommandName, options.Input, options.Output);
  if (parsed.Has("--zoom") == parsed.Has("--reference"))
  {
    throw UsageError(std::string(CommandName) + " needs one output grid: --zoom Z[,Z,Z] or --reference REF");
  }
  if (parsed.Has("--zoom"))
  {
    options.Zoom = ParseRealList("--zoom", parsed.Get("--zoom"));
    for (double z : options.Zoom)
    {
      if (!(z > 0.0) || z > 64.0)
      {
        throw UsageError("--zoom: " + parsed.Get("--zoom") + " has a factor outside (0, 64]");
      }
    }
  }
  options.Reference = parsed.Get("--reference");
  if (parsed.Has("--sigma"))
  {
    options.Sigma = ParseRealList("--sigma", parsed.Get("--sigma"));
    for (double s : options.Sigma)
    {
      if (!(s > 0.0))
      {
        throw UsageError("--sigma: " + parsed.Get("--sigma") + " has a value that is not positive");
      }
    }
  }
  if (parsed.Has("--tolerance"))
  {
    options.Tolerance = ParseReal("--tolerance", parsed.Get("--tolerance"), 0.0, 0.0100000001);
  }
  if (parsed.Has("--ridge"))
  {
    options.Ridge = ParseFiniteReal("--ridge", parsed.Get("--ridge"));
    if (options.Ridge < 0)
    {
      throw UsageError("--ridge: " + parsed.Get("--ridge") + " is negative");
    }
  }
  if (parsed.Has("--default"))
  {
    options.DefaultValue = ParseFiniteReal("--default", parsed.Get("--default"));
  }
  options.ExecutionMode = ParseDeviceOption(parsed);
  const std::string method = parsed.Get("--method", "exact");
  if (method != "exact" && method != "block")
  {
    throw UsageError("--method: unknown method '" + method + "' (expected exact or block)");
  }
  options.Block = method == "block";
  for (const char * name : { "--block-size", "--block-overlap", "--block-precision" })
  {
    if (parsed.Has(name) && !options.Block)
    {
      throw UsageError(std::string(name) + " applies to --method block only");
    }
  }
  auto wholeNumbers = [&](const char * name, double least)
  {
    std::vector<double> values = ParseRealList(name, parsed.Get(name));
    for (double v : values)
    {
      if (!(v >= least) || v != std::floor(v) || v > 8192)
      {
        throw UsageError(std::string(name) + ": " + parsed.Get(name) + " has a value that is not a whole number in [" +
                         std::to_string(static_cast<int>(least)) + ", 8192]");
      }
    }
    return values;
  };
  if (parsed.Has("--block-size"))
  {
    options.BlockSize = wholeNumbers("--block-size", 1);
  }
  if (parsed.Has("--block-overlap"))
  {
    options.BlockOverlap = wholeNumbers("--block-overlap", 0);
  }
  if (parsed.Has("--block-precision"))
  {
    const std::string precision = parsed.Get("--block-precision");
    if (precision != "float" && precision != "double")
    {
      throw UsageError("--block-precision: '" + precision + "' (expected float or double)");
    }
    options.BlockDouble = precision == "double";
  }
  options.Verify = parsed.Has("--verify");
  options.Quiet = parsed.Has("--quiet");
  return options;
}

/** One value per axis from a list of 1 or D values. */
template <unsigned int D>
itk::FixedArray<double, D>
PerAxis(const std::vector<double> & values, const char * option, const std::string & input)
{
  if (values.size() != 1 && values.size() != D)
  {
    throw UsageError(std::string(option) + " takes 1 or " + std::to_string(D) + " values for the " + std::to_string(D) +
                     "D image '" + input + "', not " + std::to_string(values.size()));
  }
  itk::FixedArray<double, D> a;
  for (unsigned int d = 0; d < D; ++d)
  {
    a[d] = values.size() == 1 ? values[0] : values[d];
  }
  return a;
}

template <typename T, unsigned int D>
typename itk::CudaGaussianRBFInterpolationImageFilter<itk::Image<T, D>>::Pointer
MakeFilter(const GrbfOptions & options, const itk::Image<T, D> * input, itk::CudaExecutionMode mode)
{
  using ImageType = itk::Image<T, D>;
  auto filter = itk::CudaGaussianRBFInterpolationImageFilter<ImageType>::New();
  filter->SetInput(input);
  filter->SetExecutionMode(mode);
  filter->SetTolerance(options.Tolerance);
  filter->SetRidge(options.Ridge);
  filter->SetDefaultPixelValue(static_cast<T>(options.DefaultValue));
  if (!options.Sigma.empty())
  {
    filter->SetSigma(PerAxis<D>(options.Sigma, "--sigma", options.Input));
  }
  if (!options.Zoom.empty())
  {
    filter->SetZoomFactors(PerAxis<D>(options.Zoom, "--zoom", options.Input));
  }
  else
  {
    const auto reference = ReadImageFile<itk::Image<float, D>>(options.Reference);
    filter->SetReferenceImage(reference);
    filter->UseReferenceImageOn();
  }
  if (options.Block)
  {
    filter->SetMethod(itk::CudaGaussianRBFMethod::Block);
    filter->SetBlockDoublePrecision(options.BlockDouble);
    auto blocks = [&](const std::vector<double> & values, const char * name)
    {
      const auto                       a = PerAxis<D>(values, name, options.Input);
      itk::FixedArray<unsigned int, D> b;
      for (unsigned int d = 0; d < D; ++d)
      {
        b[d] = static_cast<unsigned int>(a[d]);
      }
      return b;
    };
    if (!options.BlockSize.empty())
    {
      filter->SetBlockSize(blocks(options.BlockSize, "--block-size"));
    }
    if (!options.BlockOverlap.empty())
    {
      filter->SetBlockOverlap(blocks(options.BlockOverlap, "--block-overlap"));
    }
  }
  return filter;
}

template <typename T, unsigned int D>
int
RunGrbf(const GrbfOptions & options)
{
  using ImageType = itk::Image<T, D>;
  const auto input = ReadImageFile<ImageType>(options.Input);
  auto       filter = MakeFilter<T, D>(options, input.GetPointer(), options.ExecutionMode);
  if (options.ExecutionMode == itk::CudaExecutionMode::GPU)
  {
    CheckGPURequest(filter->GetGPUUnsupportedReason());
  }
  StartDeviceOutsideTiming(options.ExecutionMode); // the CUDA context now, outside the timing
  const double       milliseconds = UpdateTimed(filter, CommandName, options.Quiet);
  std::ostringstream method;
  if (options.Block)
  {
    method << "the seed's block mode (blocks " << filter->GetBlockSize() << ", overlap " << filter->GetBlockOverlap()
           << ", " << (options.BlockDouble ? "double" : "float32") << ")";
  }
  else if (filter->GetAxisOperator(0) != nullptr)
  {
    std::ostringstream sigma, taps;
    for (unsigned int d = 0; d < D; ++d)
    {
      const auto op = filter->GetAxisOperator(d);
      sigma << (d ? "," : "") << std::setprecision(4) << op->sigma;
      taps << (d ? "," : "") << (op->identity ? 0 : op->taps);
    }
    method << "exact; sigma " << sigma.str() << " px; taps " << taps.str() << " (0: identity axis)";
  }
  else
  {
    method << "exact, point by point (the output grid is rotated against the input)";
  }
  std::cout << CommandName << ": " << SizeToString(input->GetLargestPossibleRegion().GetSize()) << " -> "
            << SizeToString(filter->GetOutput()->GetLargestPossibleRegion().GetSize()) << " pixels ("
            << itk::CudaPixelTypeName<T>() << "); " << method.str() << "; ran on "
            << filter->GetLastExecutionReport().Message << "; filter time " << std::fixed << std::setprecision(3)
            << milliseconds << " ms" << std::endl;
  std::cout.unsetf(std::ios_base::floatfield);
  std::cout << std::setprecision(6);
  WriteImageFile(filter->GetOutput(), options.Output);
  if (!options.Verify)
  {
    return ExitSuccess;
  }

  // --verify: OUT as written against the other device's result
  const bool ranOnGpu = filter->GetLastExecutedOn() == itk::CudaExecutedOn::GPU;
  if (!ranOnGpu && !cif::Runtime::IsDeviceAvailable())
  {
    std::cout << "verify: skipped (it compares the GPU and CPU results, and there is no GPU)" << std::endl;
    return ExitSuccess;
  }
  const auto written = ReadImageFile<ImageType>(options.Output);
  auto       other =
    MakeFilter<T, D>(options, input.GetPointer(), ranOnGpu ? itk::CudaExecutionMode::CPU : itk::CudaExecutionMode::GPU);
  other->Update();
  const double range = std::max(1.0, DynamicRange(input.GetPointer()));
  const double difference = LargestDifference(written.GetPointer(), other->GetOutput());
  // float: 2e-6 of the range (float32 GPU sums); integers: one step where
  // float32 rounding crosses an integer. Block mode: two LU implementations
  // (cuSOLVER, Eigen), 1e-5 of the range in double, 1e-2 in float32.
  double bound = std::is_integral<T>::value ? 1.0 : 2e-6 * range;
  if (options.Block)
  {
    bound = std::max(std::is_integral<T>::value ? 1.0 : 0.0, (options.BlockDouble ? 1e-5 : 1e-2) * range);
  }
  const bool pass = difference <= bound;
  std::cout << "verify: OUT against the " << (ranOnGpu ? "CPU" : "GPU") << " result: largest difference " << difference
            << " (bound " << bound << "): " << (pass ? "PASS" : "FAIL") << std::endl;
  return pass ? ExitSuccess : ExitFailure;
}

} // namespace

void
GaussianRBFUsage(std::ostream & os)
{
  os << "Usage: " << ToolName << ' ' << CommandName << " IN OUT (--zoom Z | --reference REF) [options]\n"
     << "\n"
     << "Gaussian radial basis function interpolation of IN onto a zoomed grid or REF's\n"
     << "grid (seed 003: zooming images, adding slices to stacks). Exact and separable:\n"
     << "within 1e-6 of a dense float64 solve of the whole system (2e-6 in float32 on\n"
     << "the GPU), relative to the largest input magnitude. Writes OUT in IN's pixel\n"
     << "type (integers clamped to their range).\n"
     << "\n"
     << "Arguments:\n";
  PrintInputArgumentHelp(os);
  PrintImageOutputArgumentHelp(os);
  os << "\n"
     << "Options:\n"
     << "  --zoom Z[,Z2[,Z3]]   zoom factors per axis (one for all): spacing / Z, size\n"
     << "                       round(size x Z), the same field of view\n"
     << "  --reference REF      the output grid is REF's (size, spacing, origin,\n"
     << "                       direction; axes not parallel to IN's are evaluated\n"
     << "                       point by point, slower: see also resample\n"
     << "                       --interpolation grbf for rotations and transform files)\n"
     << "  --sigma S[,S2,S3]    the Gaussian's sigma in physical units (default: one\n"
     << "                       input spacing per axis). Beyond about 2.09 pixels double\n"
     << "                       precision cannot reach the tolerance: an error says so\n"
     << "  --tolerance T        error bound relative to the input's largest magnitude\n"
     << "                       (default 1e-6, at most 0.01)\n"
     << "  --ridge L            L >= 0 added to the Gram diagonals: smooths instead of\n"
     << "                       interpolating, extends the usable sigma (default 0)\n"
     << "  --default V          value outside IN's extent (default 0)\n"
     << "  --method M           exact (default) or block: the seed's algorithm, for\n"
     << "                       comparison (a dense solve per block, blended across\n"
     << "                       the overlaps; float32 like the seed; not exact)\n"
     << "  --block-size B[,B2,B3]     nodes per block and axis (default 62 in 2D;\n"
     << "                       16,16,8 in 3D)\n"
     << "  --block-overlap O[,O2,O3]  nodes shared by neighbouring blocks (default 4\n"
     << "                       in 2D, 1 in 3D; at most half a block)\n"
     << "  --block-precision P  float (default, the seed's) or double\n";
  PrintDeviceOptionHelp(os);
  os << "  --verify             compare OUT with the other device's result (GPU with CPU):\n"
     << "                       within 2e-6 of the range for float, 1 for integers (block\n"
     << "                       mode: 1e-2 of the range in float32, 1e-5 in double)\n";
  PrintQuietAndHelpOptionHelp(os);
  os << "\n"
     << "Prints the sizes, sigma and taps per axis, the device and the filter's time.\n";
  PrintExitStatusHelp(os);
  os << "\n"
     << "Examples:\n"
     << "  " << ToolName << ' ' << CommandName << " slice.png slice_x4.nrrd --zoom 4\n"
     << "  " << ToolName << ' ' << CommandName << " stack.nii.gz stack_z2.nii.gz --zoom 1,1,2\n"
     << "  " << ToolName << ' ' << CommandName << " slice.png blocks.nrrd --zoom 2 --method block --block-size 62 "
     << "--block-overlap 4\n";
}

int
GaussianRBFMain(const std::vector<std::string> & args)
{
  if (HasHelpOption(args))
  {
    GaussianRBFUsage(std::cout);
    return ExitSuccess;
  }
  const GrbfOptions options = ParseGrbfOptions(args);
  CheckImageOutput(options.Output);
  const FilterInput input = DescribeFilterInput(options.Input, CommandName);
  CheckTypedImageOutput(options.Output, input.Pixel, input.Dimension, "OUT");
  if (!options.Zoom.empty() && options.Zoom.size() != 1 && options.Zoom.size() != input.Dimension)
  {
    throw UsageError("--zoom takes 1 or " + std::to_string(input.Dimension) + " values for '" + options.Input + "'");
  }
  if (!options.Sigma.empty() && options.Sigma.size() != 1 && options.Sigma.size() != input.Dimension)
  {
    throw UsageError("--sigma takes 1 or " + std::to_string(input.Dimension) + " values for '" + options.Input + "'");
  }
  if (!options.Reference.empty())
  {
    const ImageFileInformation reference = ReadImageFileInformation(options.Reference);
    if (EffectiveDimension(reference) != input.Dimension)
    {
      throw RuntimeFailure("--reference: '" + options.Reference + "' is not a " + std::to_string(input.Dimension) +
                           "D image like '" + options.Input + "'");
    }
  }
  return RunOnFilterInput(options.Input,
                          input,
                          options.ExecutionMode,
                          options.Quiet,
                          [&](auto pixel, auto dimension)
                          {
                            using T = typename decltype(pixel)::Type;
                            constexpr unsigned int D = decltype(dimension)::value;
                            return RunGrbf<T, D>(options);
                          });
}

} // namespace tool
} // namespace cif
