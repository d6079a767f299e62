/*=========================================================================
 *  CudaImageFilters: `cudaimagefilters kernel-superposition`, a spatially
 *  varying Gaussian blur (every pixel spreads its intensity with its own
 *  sigma, from a sigma map) with itk::CudaKernelSuperpositionImageFilter.
 *=========================================================================*/
#include "FilterCommon.h"
#include "ToolCommon.h"

#include "cif/KernelSuperposition.h"
#include "itkCudaKernelSuperpositionImageFilter.h"
#include "cif/Runtime.h"
#include "itkCudaExecution.h"
#include "itkImage.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <limits>
#include <sstream>
#include <type_traits>

namespace cif
{
namespace tool
{

namespace
{
constexpr const char * CommandName = "kernel-superposition";

/** The direct evaluation of --verify runs on one thread; beyond this many
 * kernel taps it is skipped. */
constexpr double MaxDirectTaps = 4e9;

struct KernelSuperpositionOptions
{
  std::string                    Input, Output;
  std::vector<std::string>       SigmaFiles;    ///< x (or every axis), then --sigma-y, --sigma-z; empty: --sigma
  std::vector<double>            SigmaConstant; ///< --sigma: 1 or D values
  std::string                    SigmaConstantText;
  double                         Cutoff{ 3.0 };
  cif::CutoffMass                CutoffMass{ cif::CutoffMass::Renormalize };
  bool                           Pad{ false };
  cif::KernelSuperpositionMethod Method{ cif::KernelSuperpositionMethod::Automatic };
  bool                           MethodGiven{ false };
  itk::CudaExecutionMode         ExecutionMode{ itk::CudaExecutionMode::Automatic };
  bool                           Verify{ false };
  bool                           Quiet{ false };

  bool
  PerAxis() const
  {
    return SigmaFiles.size() > 1 || SigmaConstant.size() > 1;
  }
};

KernelSuperpositionOptions
ParseKernelSuperpositionOptions(const std::vector<std::string> & args)
{
  const ParsedArguments      parsed = ParseArguments(args,
                                                { { "--sigma", true },
                                                       { "--sigma-y", true },
                                                       { "--sigma-z", true },
                                                       { "--cutoff", true },
                                                       { "--cutoff-mass", true },
                                                       { "--pad", false },
                                                       { "--method", true },
                                                       { "--device", true },
                                                       { "--verify", false },
                                                       { "--quiet", false } });
  KernelSuperpositionOptions options;
  const auto &               positionals = parsed.Positionals;
  const std::string          files = "IN SIGMA OUT, or IN OUT with --sigma S";
  if (parsed.Has("--sigma"))
  {
    for (const char * name : { "--sigma-y", "--sigma-z" })
    {
      if (parsed.Has(name))
      {
        throw UsageError(std::string(name) + " gives a sigma map file, and --sigma a constant sigma: use one or the "
                                             "other (--sigma SX,SY[,SZ] gives a constant per axis)");
      }
    }
    if (positionals.size() == 3)
    {
      throw UsageError("unexpected argument '" + positionals[2] + "' (with --sigma there is no SIGMA file: " + files +
                       ")");
    }
    ParseInputAndOutput(parsed, CommandName, options.Input, options.Output);
    options.SigmaConstantText = parsed.Get("--sigma");
    options.SigmaConstant = ParseRealList("--sigma", options.SigmaConstantText);
    for (double s : options.SigmaConstant)
    {
      if (s < 0.0)
      {
        throw UsageError("--sigma: " + options.SigmaConstantText +
                         " has a negative value (sigmas are lengths in physical units, 0 or more)");
      }
    }
    if (options.SigmaConstant.size() > 3)
    {
      throw UsageError("--sigma: " + options.SigmaConstantText + " has " +
                       std::to_string(options.SigmaConstant.size()) + " values (1, or one per axis)");
    }
  }
  else
  {
    if (positionals.size() < 3)
    {
      throw UsageError(std::string(CommandName) + " needs three file names, " + files + " (got " +
                       std::to_string(positionals.size()) + ")");
    }
    if (positionals.size() > 3)
    {
      throw UsageError("unexpected argument '" + positionals[3] + "'");
    }
    options.Input = positionals[0];
    options.SigmaFiles.push_back(positionals[1]);
    options.Output = positionals[2];
    if (parsed.Has("--sigma-z") && !parsed.Has("--sigma-y"))
    {
      throw UsageError("--sigma-z needs --sigma-y too (per-axis maps: SIGMA for x, --sigma-y, --sigma-z)");
    }
    for (const char * name : { "--sigma-y", "--sigma-z" })
    {
      if (parsed.Has(name))
      {
        options.SigmaFiles.push_back(parsed.Get(name));
      }
    }
  }
  if (parsed.Has("--cutoff"))
  {
    const std::string text = parsed.Get("--cutoff");
    options.Cutoff = ParseFiniteReal("--cutoff", text);
    if (!(options.Cutoff > 0.0) || options.Cutoff > 100.0)
    {
      throw UsageError("--cutoff: " + text +
                       " is out of range (expected a number of sigmas greater than 0 and at "
                       "most 100)");
    }
  }
  const std::string mass = parsed.Get("--cutoff-mass", "renormalize");
  if (mass == "renormalize" || mass == "discard")
  {
    options.CutoffMass = mass == "discard" ? cif::CutoffMass::Discard : cif::CutoffMass::Renormalize;
  }
  else
  {
    throw UsageError("--cutoff-mass: unknown choice '" + mass + "' (expected renormalize or discard)");
  }
  options.Pad = parsed.Has("--pad");
  if (parsed.Has("--method"))
  {
    const std::string method = parsed.Get("--method");
    if (!cif::KernelSuperpositionMethodFromString(method, options.Method))
    {
      throw UsageError("--method: unknown method '" + method +
                       "' (expected automatic, scatter, scatter-warp-synchronous, scatter-global-atomics or gather)");
    }
    options.MethodGiven = true;
  }
  options.ExecutionMode = ParseDeviceOption(parsed);
  options.Verify = parsed.Has("--verify");
  options.Quiet = parsed.Has("--quiet");
  return options;
}

/** Before any work: the number of per-axis sigmas against IN's dimension
 * (UsageError), and the sigma map files' headers: one value per pixel, IN's
 * dimension and size (RuntimeFailure). */
void
CheckSigmaFileHeaders(const KernelSuperpositionOptions & options, const FilterInput & input)
{
  const unsigned int D = input.Dimension;
  if (options.SigmaFiles.size() > 1 && options.SigmaFiles.size() != D)
  {
    throw UsageError(D == 2 ? "--sigma-z gives the z axis's sigma map, but '" + options.Input + "' is a 2D image"
                            : "per-axis sigma maps of the 3D image '" + options.Input + "' need --sigma-z too");
  }
  if (options.SigmaConstant.size() > 1 && options.SigmaConstant.size() != D)
  {
    throw UsageError("--sigma " + options.SigmaConstantText + " has " + std::to_string(options.SigmaConstant.size()) +
                     " values, but '" + options.Input + "' is a " + std::to_string(D) + "D image (give 1 or " +
                     std::to_string(D) + ")");
  }
  auto sizeText = [D](const std::vector<std::size_t> & size)
  {
    std::string text;
    for (unsigned int a = 0; a < D; ++a)
    {
      text += (a == 0 ? "" : "x") + std::to_string(size[a]);
    }
    return text;
  };
  for (const std::string & file : options.SigmaFiles)
  {
    const ImageFileInformation sigma = ReadImageFileInformation(file);
    if (sigma.Components != 1 || IsColourPixel(sigma))
    {
      throw RuntimeFailure("the sigma map '" + file + "' has " + sigma.PixelType +
                           " pixels; a sigma map holds one value per pixel");
    }
    if (EffectiveDimension(sigma) != D)
    {
      throw RuntimeFailure("the sigma map '" + file + "' is a " + std::to_string(EffectiveDimension(sigma)) +
                           "D image, but '" + options.Input + "' is " + std::to_string(D) + "D");
    }
    if (!std::equal(sigma.Size.begin(), sigma.Size.begin() + D, input.Information.Size.begin()))
    {
      throw RuntimeFailure("the sigma map '" + file + "' is " + sizeText(sigma.Size) + " pixels, but '" +
                           options.Input + "' is " + sizeText(input.Information.Size) +
                           "; the sigma maps must be on IN's grid (size, spacing, origin and direction)");
    }
  }
}

/** Empty when `map` has the grid of `image` within ITK's tolerances (1e-6
 * of the spacing for spacings and origins, 1e-6 for directions); else what
 * differs. */
template <typename TMap, typename TImage>
std::string
CompareGrid(const TMap * map, const TImage * image, const std::string & imageName)
{
  constexpr unsigned int D = TImage::ImageDimension;
  std::ostringstream     why;
  const auto             spacing = image->GetSpacing();
  if (map->GetLargestPossibleRegion() != image->GetLargestPossibleRegion())
  {
    why << "is " << SizeToString(map->GetLargestPossibleRegion().GetSize()) << " pixels, but " << imageName << " is "
        << SizeToString(image->GetLargestPossibleRegion().GetSize());
    return why.str();
  }
  for (unsigned int a = 0; a < D; ++a)
  {
    if (!(std::fabs(map->GetSpacing()[a] - spacing[a]) <= 1e-6 * spacing[a]))
    {
      why << "has spacing " << map->GetSpacing() << ", but " << imageName << " has " << spacing;
      return why.str();
    }
  }
  for (unsigned int a = 0; a < D; ++a)
  {
    if (!(std::fabs(map->GetOrigin()[a] - image->GetOrigin()[a]) <= 1e-6 * spacing[0]))
    {
      why << "has origin " << map->GetOrigin() << ", but " << imageName << " has " << image->GetOrigin();
      return why.str();
    }
  }
  for (unsigned int r = 0; r < D; ++r)
  {
    for (unsigned int c = 0; c < D; ++c)
    {
      if (!(std::fabs(map->GetDirection()[r][c] - image->GetDirection()[r][c]) <= 1e-6))
      {
        why << "has another direction than " << imageName;
        return why.str();
      }
    }
  }
  return {};
}

template <unsigned int D>
using SigmaImage = itk::Image<float, D>;

/** The sigma maps in use: one (every axis) or D (x, y[, z]). */
template <unsigned int D>
struct SigmaInputs
{
  std::vector<typename SigmaImage<D>::Pointer> Maps;
};

/** Reads the sigma files (as float) or makes the constant maps of --sigma
 * on IN's grid; checks the grids and the values (finite, not negative).
 * Throws RuntimeFailure naming the file and the pixel. */
template <unsigned int D, typename TImage>
SigmaInputs<D>
MakeSigmaInputs(const KernelSuperpositionOptions & options, const TImage * input)
{
  SigmaInputs<D> sigma;
  if (options.SigmaFiles.empty())
  {
    for (double value : options.SigmaConstant)
    {
      auto map = SigmaImage<D>::New();
      map->SetRegions(input->GetLargestPossibleRegion());
      map->SetSpacing(input->GetSpacing());
      map->SetOrigin(input->GetOrigin());
      map->SetDirection(input->GetDirection());
      map->Allocate();
      map->FillBuffer(static_cast<float>(value));
      sigma.Maps.push_back(map);
    }
    return sigma;
  }
  for (const std::string & file : options.SigmaFiles)
  {
    auto              map = ReadImageFile<SigmaImage<D>>(file);
    const std::string why = CompareGrid(map.GetPointer(), input, "'" + options.Input + "'");
    if (!why.empty())
    {
      throw RuntimeFailure("the sigma map '" + file + "' " + why +
                           "; the sigma maps must be on IN's grid (size, spacing, origin and direction)");
    }
    const float * values = map->GetBufferPointer();
    const auto    count = map->GetBufferedRegion().GetNumberOfPixels();
    for (itk::SizeValueType i = 0; i < count; ++i)
    {
      if (!(values[i] >= 0.0f) || !std::isfinite(values[i]))
      {
        const auto         index = map->ComputeIndex(static_cast<itk::OffsetValueType>(i));
        std::ostringstream why;
        why << "the sigma map '" << file << "' has " << values[i] << " at pixel " << index
            << "; sigmas must be finite and not negative (physical lengths)";
        throw RuntimeFailure(why.str());
      }
    }
    sigma.Maps.push_back(map);
  }
  return sigma;
}

template <typename TIn, typename TOut, unsigned int D>
typename itk::CudaKernelSuperpositionImageFilter<itk::Image<TIn, D>, itk::Image<TOut, D>, SigmaImage<D>>::Pointer
MakeFilter(const KernelSuperpositionOptions & options,
           const itk::Image<TIn, D> *         input,
           const SigmaInputs<D> &             sigma,
           itk::CudaExecutionMode             mode)
{
  using FilterType = itk::CudaKernelSuperpositionImageFilter<itk::Image<TIn, D>, itk::Image<TOut, D>, SigmaImage<D>>;
  auto filter = FilterType::New();
  filter->SetInput(input);
  if (sigma.Maps.size() == 1)
  {
    filter->SetSigmaMap(sigma.Maps[0]);
  }
  else
  {
    for (unsigned int a = 0; a < D; ++a)
    {
      filter->SetSigmaMapForAxis(a, sigma.Maps[a]);
    }
  }
  filter->SetCutoff(options.Cutoff);
  filter->SetCutoffMass(options.CutoffMass);
  filter->SetPadOutput(options.Pad);
  filter->SetMethod(options.Method);
  filter->SetExecutionMode(mode);
  return filter;
}

/** The definition evaluated directly, in double, on one thread, for
 * --verify: every input pixel scatters its weights
 * w(d) = [erf((d + 1/2) / (sqrt 2 s)) - erf((d - 1/2) / (sqrt 2 s))] / 2,
 * |d| <= ceil(cutoff s), s = sigma / spacing (renormalised by their sum, or
 * not), into the output box `outRegion`. Written apart from the module's
 * cores. Returns false, leaving `out` empty, when it would take more than
 * MaxDirectTaps kernel taps (`taps` says how many). */
template <typename TIn, unsigned int D>
bool
DirectSuperposition(const itk::Image<TIn, D> *         input,
                    const SigmaInputs<D> &             sigma,
                    const KernelSuperpositionOptions & options,
                    const itk::ImageRegion<D> &        outRegion,
                    std::vector<double> &              out,
                    double &                           taps)
{
  const auto        inRegion = input->GetLargestPossibleRegion();
  const TIn *       in = input->GetBufferPointer();
  const std::size_t count = inRegion.GetNumberOfPixels();
  const auto        spacing = input->GetSpacing();
  // s = sigma x (1 / spacing), as the filter computes it, so that the radii
  // agree where cutoff x s is a whole number
  auto sigmaOf = [&](unsigned int a, std::size_t i) {
    return static_cast<double>(sigma.Maps[sigma.Maps.size() == 1 ? 0 : a]->GetBufferPointer()[i]) * (1.0 / spacing[a]);
  };
  auto radiusOf = [&](double s) { return static_cast<long long>(std::ceil(options.Cutoff * s)); };

  taps = 0.0;
  for (std::size_t i = 0; i < count; ++i)
  {
    if (in[i] != TIn(0))
    {
      double product = 1.0;
      for (unsigned int a = 0; a < D; ++a)
      {
        product *= 2.0 * static_cast<double>(radiusOf(sigmaOf(a, i))) + 1.0;
      }
      taps += product;
    }
  }
  out.clear();
  if (taps > MaxDirectTaps)
  {
    return false;
  }

  long long inSize[3] = { 1, 1, 1 }, outSize[3] = { 1, 1, 1 }, outStart[3] = { 0, 0, 0 };
  for (unsigned int a = 0; a < D; ++a)
  {
    inSize[a] = static_cast<long long>(inRegion.GetSize(a));
    outSize[a] = static_cast<long long>(outRegion.GetSize(a));
    outStart[a] = outRegion.GetIndex(a) - inRegion.GetIndex(a);
  }
  out.assign(static_cast<std::size_t>(outSize[0] * outSize[1] * outSize[2]), 0.0);
  std::vector<double> weights[3];
  long long           radius[3] = { 0, 0, 0 };
  for (long long z = 0; z < inSize[2]; ++z)
  {
    for (long long y = 0; y < inSize[1]; ++y)
    {
      for (long long x = 0; x < inSize[0]; ++x)
      {
        const std::size_t i = static_cast<std::size_t>((z * inSize[1] + y) * inSize[0] + x);
        const double      value = static_cast<double>(in[i]);
        if (value == 0.0)
        {
          continue;
        }
        for (unsigned int a = 0; a < 3; ++a)
        {
          const double s = a < D ? sigmaOf(a, i) : 0.0;
          radius[a] = s > 0.0 ? radiusOf(s) : 0;
          weights[a].assign(static_cast<std::size_t>(2 * radius[a] + 1), 1.0);
          if (s > 0.0)
          {
            double sum = 0.0;
            for (long long d = -radius[a]; d <= radius[a]; ++d)
            {
              const double w =
                0.5 * (std::erf((d + 0.5) / (std::sqrt(2.0) * s)) - std::erf((d - 0.5) / (std::sqrt(2.0) * s)));
              weights[a][static_cast<std::size_t>(d + radius[a])] = w;
              sum += w;
            }
            if (options.CutoffMass == cif::CutoffMass::Renormalize)
            {
              for (double & w : weights[a])
              {
                w /= sum;
              }
            }
          }
        }
        const long long position[3] = { x, y, z };
        long long       first[3], last[3];
        for (unsigned int a = 0; a < 3; ++a)
        {
          first[a] = std::max(-radius[a], outStart[a] - position[a]);
          last[a] = std::min(radius[a], outStart[a] + outSize[a] - 1 - position[a]);
        }
        for (long long dz = first[2]; dz <= last[2]; ++dz)
        {
          const double wz = value * weights[2][static_cast<std::size_t>(dz + radius[2])];
          for (long long dy = first[1]; dy <= last[1]; ++dy)
          {
            const double wzy = wz * weights[1][static_cast<std::size_t>(dy + radius[1])];
            double * row = out.data() + ((z + dz - outStart[2]) * outSize[1] + (y + dy - outStart[1])) * outSize[0] -
                           outStart[0] + x;
            for (long long dx = first[0]; dx <= last[0]; ++dx)
            {
              row[dx] += wzy * weights[0][static_cast<std::size_t>(dx + radius[0])];
            }
          }
        }
      }
    }
  }
  return true;
}

template <typename TPixel>
double
LargestMagnitude(const TPixel * values, std::size_t count)
{
  double largest = 0.0;
  for (std::size_t i = 0; i < count; ++i)
  {
    const double v = std::fabs(static_cast<double>(values[i]));
    if (std::isfinite(v))
    {
      largest = std::max(largest, v);
    }
  }
  return largest;
}

template <typename TPixel>
double
Sum(const TPixel * values, std::size_t count, bool magnitudes = false)
{
  double sum = 0.0;
  for (std::size_t i = 0; i < count; ++i)
  {
    const double v = static_cast<double>(values[i]);
    sum += magnitudes ? std::fabs(v) : v;
  }
  return sum;
}

/** "1,2,3" of the first D values of an ITK size or array. */
template <typename T>
std::string
AxesToString(const T & values, unsigned int dimension)
{
  std::ostringstream text;
  for (unsigned int a = 0; a < dimension; ++a)
  {
    text << (a == 0 ? "" : ",") << values[a];
  }
  return text.str();
}

template <typename TIn, typename TOut, unsigned int D>
int
RunKernelSuperposition(const KernelSuperpositionOptions & options)
{
  using InputImageType = itk::Image<TIn, D>;
  using OutputImageType = itk::Image<TOut, D>;
  const auto input = ReadImageFile<InputImageType>(options.Input);
  const auto sigma = MakeSigmaInputs<D>(options, input.GetPointer());
  auto       filter = MakeFilter<TIn, TOut, D>(options, input.GetPointer(), sigma, options.ExecutionMode);
  if (options.ExecutionMode == itk::CudaExecutionMode::GPU)
  {
    CheckGPURequest(filter->GetGPUUnsupportedReason());
  }
  StartDeviceOutsideTiming(options.ExecutionMode); // the CUDA context now, outside the timing
  const double milliseconds = UpdateTimed(filter, CommandName, options.Quiet);
  const auto   radius = filter->ComputeLargestRadius();
  const bool   ranOnGpu = filter->GetLastExecutedOn() == itk::CudaExecutedOn::GPU;

  double lowest = std::numeric_limits<double>::infinity(), highest = -lowest;
  for (const auto & map : sigma.Maps)
  {
    const auto minmax = std::minmax_element(map->GetBufferPointer(),
                                            map->GetBufferPointer() + map->GetBufferedRegion().GetNumberOfPixels());
    lowest = std::min(lowest, static_cast<double>(*minmax.first));
    highest = std::max(highest, static_cast<double>(*minmax.second));
  }
  const auto         outRegion = filter->GetOutput()->GetLargestPossibleRegion();
  std::ostringstream sigmaText;
  if (options.SigmaFiles.empty())
  {
    sigmaText << "sigma " << options.SigmaConstantText << " (constant";
  }
  else
  {
    sigmaText << "sigma " << lowest << " to " << highest << " (" << (options.PerAxis() ? "per-axis maps" : "map");
  }
  sigmaText << ", physical units)";
  std::cout << CommandName << ": " << SizeToString(input->GetLargestPossibleRegion().GetSize()) << " -> "
            << SizeToString(outRegion.GetSize()) << " pixels (" << itk::CudaPixelTypeName<TIn>() << " -> "
            << itk::CudaPixelTypeName<TOut>() << "); " << sigmaText.str() << "; cutoff " << options.Cutoff << " sigma, "
            << (options.CutoffMass == cif::CutoffMass::Renormalize ? "renormalized" : "tails discarded")
            << "; largest radius " << AxesToString(radius, D) << " px" << (options.Pad ? " (the padding)" : "")
            << "; ran on " << filter->GetLastExecutionReport().Message << "; filter time " << std::fixed
            << std::setprecision(3) << milliseconds << " ms" << std::endl;
  std::cout.unsetf(std::ios_base::floatfield);
  std::cout << std::setprecision(6);
  if (options.MethodGiven && !ranOnGpu && !options.Quiet)
  {
    std::cerr << ToolName << ": note: --method chooses the GPU's method; the CPU core always scatters by output slabs"
              << std::endl;
  }

  const std::size_t inCount = input->GetLargestPossibleRegion().GetNumberOfPixels();
  const std::size_t outCount = outRegion.GetNumberOfPixels();
  const double      inSum = Sum(input->GetBufferPointer(), inCount);
  const double      outSum = Sum(filter->GetOutput()->GetBufferPointer(), outCount);
  if (options.Pad)
  {
    std::cout << CommandName << ": sum of IN " << std::setprecision(10) << inSum << ", sum of OUT " << outSum
              << std::setprecision(6) << std::endl;
  }

  WriteImageFile(filter->GetOutput(), options.Output);
  if (!options.Verify)
  {
    return ExitSuccess;
  }

  // --verify: OUT as written against a direct evaluation of the definition,
  // and on a GPU run against the CPU core; with --pad and renormalize, the
  // sums.
  const auto     written = ReadImageFile<OutputImageType>(options.Output);
  const TOut *   out = written->GetBufferPointer();
  const double   largestInput = LargestMagnitude(input->GetBufferPointer(), inCount);
  bool           pass = true;
  constexpr bool doubleOut = std::is_same<TOut, double>::value;
  auto           report = [&](const std::string & what, double difference, double bound)
  {
    const bool ok = difference <= bound;
    pass = pass && ok;
    std::cout << "verify: " << what << ' ' << difference << " (bound " << bound << "): " << (ok ? "PASS" : "FAIL")
              << std::endl;
  };
  if (written->GetLargestPossibleRegion().GetNumberOfPixels() != outCount)
  {
    throw RuntimeFailure("--verify: '" + options.Output + "' was read back with " +
                         SizeToString(written->GetLargestPossibleRegion().GetSize()) + " pixels instead of " +
                         SizeToString(outRegion.GetSize()));
  }

  std::vector<double> direct;
  double              taps = 0.0;
  if (DirectSuperposition(input.GetPointer(), sigma, options, outRegion, direct, taps))
  {
    const double largest = LargestMagnitude(direct.data(), direct.size());
    // CPU: double sums within 1e-12, then OUT's rounding to float (or
    // double); GPU: float32 erff and atomics (the filter's documented bound).
    const double bound = ranOnGpu ? 1e-5 * largest + 1e-6 * largestInput : (doubleOut ? 1e-10 : 1e-6) * largest;
    double       difference = 0.0;
    for (std::size_t i = 0; i < outCount; ++i)
    {
      const double a = out[i], b = direct[i];
      if (std::isfinite(a) && std::isfinite(b))
      {
        difference = std::max(difference, std::fabs(a - b));
      }
      else if (!(std::isnan(a) && std::isnan(b)) && a != b)
      {
        difference = std::numeric_limits<double>::infinity();
      }
    }
    report("OUT against a direct evaluation of the definition (double): largest difference", difference, bound);
  }
  else
  {
    std::cout << "verify: the direct evaluation of the definition is skipped (" << taps
              << " kernel taps on one thread; at most " << MaxDirectTaps << ")" << std::endl;
  }

  if (ranOnGpu)
  {
    auto cpu = MakeFilter<TIn, TOut, D>(options, input.GetPointer(), sigma, itk::CudaExecutionMode::CPU);
    UpdateTimed(cpu, "verify (CPU core)", true);
    const double largest = LargestMagnitude(cpu->GetOutput()->GetBufferPointer(), outCount);
    report("OUT against the CPU core: largest difference",
           LargestDifference(written.GetPointer(), cpu->GetOutput()),
           1e-5 * largest + 1e-6 * largestInput);
  }

  if (options.Pad && options.CutoffMass == cif::CutoffMass::Renormalize)
  {
    // Padded by the largest radius, nothing leaves the grid, and each
    // pixel's renormalised kernel sums to 1.
    const double writtenSum = Sum(out, outCount);
    const double bound = 1e-5 * Sum(input->GetBufferPointer(), inCount, true);
    if (std::isfinite(writtenSum) && std::isfinite(bound))
    {
      report("mass conservation: |sum OUT - sum IN| =", std::fabs(writtenSum - inSum), bound);
    }
    else
    {
      std::cout << "verify: mass conservation not checked (IN or OUT has values that are not finite)" << std::endl;
    }
  }
  return pass ? ExitSuccess : ExitFailure;
}

} // namespace

void
KernelSuperpositionUsage(std::ostream & os)
{
  os << "Usage: " << ToolName << ' ' << CommandName << " IN SIGMA OUT [options]\n"
     << "       " << ToolName << ' ' << CommandName << " IN SIGMA OUT --sigma-y SY\n"
     << "       [--sigma-z SZ] [options]\n"
     << "       " << ToolName << ' ' << CommandName << " IN OUT --sigma S[,SY[,SZ]]\n"
     << "       [options]\n"
     << "\n"
     << "Spatially varying Gaussian blur by kernel superposition (seed 004: pencil-beam\n"
     << "dose, depth-variant PSFs): every pixel of IN spreads its intensity over its\n"
     << "neighbours with its own Gaussian, whose sigma is read from a sigma map:\n"
     << "  OUT(y) = sum over x of IN(x) prod_a w(y_a - x_a; s_a(x))\n"
     << "for |y_a - x_a| <= ceil(C s_a(x)), w the Gaussian of sigma s integrated over\n"
     << "each output pixel (the weights of an axis sum to 1), s_a = sigma / spacing_a\n"
     << "in pixels, C the cutoff. Writes float pixels (double for double images). On\n"
     << "the GPU in float32: within 1e-5 of the largest output plus 1e-6 of the\n"
     << "largest input of the CPU's double result.\n"
     << "\n"
     << "Arguments:\n";
  PrintInputArgumentHelp(os);
  os << "                       (double pixels too: on the CPU, into a double OUT)\n"
     << "  SIGMA                the sigma map: a Gaussian sigma per pixel in physical\n"
     << "                       units (IN's, e.g. mm), finite and >= 0 (0 keeps the pixel\n"
     << "                       in place), read as float, on IN's grid (size, spacing,\n"
     << "                       origin, direction); the same sigma along every axis, or\n"
     << "                       with --sigma-y the x axis's\n"
     << "  OUT                  output image, float (double for a double IN): .nii.gz,\n"
     << "                       .nii, .nrrd, .nhdr, .mha, .mhd\n"
     << "\n"
     << "Options:\n"
     << "  --sigma S[,SY[,SZ]]  a constant sigma (physical units) instead of SIGMA: one\n"
     << "                       for every axis, or one per axis\n"
     << "  --sigma-y SY         the y axis's sigma map (SIGMA is then the x axis's)\n"
     << "  --sigma-z SZ         the z axis's sigma map (3D, with --sigma-y)\n"
     << "  --cutoff C           kernel radius in sigmas, ceil(C s) pixels (default 3;\n"
     << "                       greater than 0, at most 100)\n"
     << "  --cutoff-mass M      renormalize (default): each pixel's kernel is scaled to\n"
     << "                       sum to 1 within the cutoff, so no mass is lost; discard:\n"
     << "                       the exact Gaussian integrals, the tails are lost\n"
     << "  --pad                grow OUT by the largest radius on every side, so that\n"
     << "                       nothing spreads past its border (OUT's first pixel moves\n"
     << "                       by -radius); without it OUT is IN's grid and what spreads\n"
     << "                       past the border is lost\n"
     << "  --method M           the GPU's method: automatic (default: the warp-synchronous\n"
     << "                       scatter where the tile fits in shared memory, else\n"
     << "                       scatter-global-atomics),\n"
     << "                       scatter, scatter-warp-synchronous, scatter-global-atomics\n"
     << "                       or gather (the exact baseline); the CPU core always\n"
     << "                       scatters by output slabs\n";
  PrintDeviceOptionHelp(os);
  os << "  --verify             read OUT back and compare it with a direct double\n"
     << "                       evaluation of the definition (on one thread; skipped\n"
     << "                       beyond 4e9 kernel taps): within 1e-6 of the largest\n"
     << "                       output for a CPU run (float OUT), 1e-5 plus 1e-6 of the\n"
     << "                       largest input for a GPU run, which is also compared with\n"
     << "                       the CPU core; with --pad and renormalize, check that the\n"
     << "                       sum of OUT is the sum of IN within 1e-5 of sum |IN|\n";
  PrintQuietAndHelpOptionHelp(os);
  os << "\n"
     << "Prints the sizes, the sigmas, the largest radius, the device and GPU method,\n"
     << "the filter's time, and with --pad the sums of IN and OUT.\n";
  PrintExitStatusHelp(os);
  os << "\n"
     << "Examples:\n"
     << "  " << ToolName << ' ' << CommandName << " fluence.nrrd sigma.nrrd dose.nrrd --pad\n"
     << "  " << ToolName << ' ' << CommandName << " stack.nii.gz sx.nii.gz blurred.nii.gz \\\n"
     << "      --sigma-y sy.nii.gz --sigma-z sz.nii.gz\n"
     << "  " << ToolName << ' ' << CommandName << " slice.png blur.nrrd --sigma 2.5 --verify\n";
}

int
KernelSuperpositionMain(const std::vector<std::string> & args)
{
  if (HasHelpOption(args))
  {
    KernelSuperpositionUsage(std::cout);
    return ExitSuccess;
  }
  const KernelSuperpositionOptions options = ParseKernelSuperpositionOptions(args);
  CheckImageOutput(options.Output);
  FilterInput input = DescribeFilterInput(options.Input, CommandName);
  CheckTypedImageOutput(options.Output, PixelKind::Float, input.Dimension, "OUT");
  CheckSigmaFileHeaders(options, input);
  const bool doubleInput = input.Information.ComponentType == "double";
  if (doubleInput)
  {
    input.ConvertedToFloat = false; // kept as double
  }
  if (options.ExecutionMode == itk::CudaExecutionMode::GPU)
  {
    CheckGPUAvailable();
  }
  PrintFilterInputNotes(options.Input, input, options.Quiet);
  if (doubleInput)
  {
    return input.Dimension == 2 ? RunKernelSuperposition<double, double, 2>(options)
                                : RunKernelSuperposition<double, double, 3>(options);
  }
  return DispatchPixelAndDimension(input.Pixel,
                                   input.Dimension,
                                   [&](auto pixel, auto dimension)
                                   {
                                     using T = typename decltype(pixel)::Type;
                                     constexpr unsigned int D = decltype(dimension)::value;
                                     return RunKernelSuperposition<T, float, D>(options);
                                   });
}

} // namespace tool
} // namespace cif
