/*=========================================================================
 *  CudaImageFilters Python extension: the spatially varying Gaussian kernel
 *  superposition (cifKernelSuperposition.h, seed paper 004). The Python
 *  layer gives the sigma maps (one, or one per axis, x first), the samples
 *  per physical unit (1 / spacing) and the output box's start (negative
 *  when padded; its size is the output array's); these bindings check the
 *  arrays, build the core's job and run it through RunJob.
 *=========================================================================*/
#include "cifPythonArrays.h"

#include "cif/KernelSuperposition.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <stdexcept>
#include <type_traits>

namespace cifpy
{
namespace
{

cif::CutoffMass
ParseCutoffMass(const std::string & text, const char * name)
{
  if (text == "renormalize")
  {
    return cif::CutoffMass::Renormalize;
  }
  if (text == "discard")
  {
    return cif::CutoffMass::Discard;
  }
  throw std::invalid_argument(std::string(name) + ": cutoff_mass must be 'renormalize' or 'discard', not '" + text +
                              "'");
}

/** The sigma maps' layouts: 1 map, or one per axis of the image; float32
 * or float64, all of one type, each of the image's shape. */
std::vector<ArrayInfo>
InspectSigmaMaps(const std::vector<InArray> & maps, const ArrayInfo & image, const char * name)
{
  if (maps.empty() || (maps.size() != 1 && maps.size() != static_cast<std::size_t>(image.ndim)))
  {
    throw std::invalid_argument(std::string(name) + ": give 1 sigma map or " + std::to_string(image.ndim) +
                                " (one per axis), not " + std::to_string(maps.size()));
  }
  std::vector<ArrayInfo> info;
  for (std::size_t k = 0; k < maps.size(); ++k)
  {
    info.push_back(Inspect(maps[k], maps.size() == 1 ? "sigma map" : ("sigma map " + std::to_string(k)).c_str()));
    const ArrayInfo & s = info.back();
    RequireSameShape(image, s, name);
    if (s.pixel != Pixel::Float32 && s.pixel != Pixel::Float64)
    {
      throw nb::type_error((std::string(name) + ": sigma maps are float32 or float64, not " + s.dtype).c_str());
    }
    if (s.pixel != info.front().pixel)
    {
      throw nb::type_error((std::string(name) + ": the sigma maps must share one type").c_str());
    }
  }
  return info;
}

cif::KernelSuperpositionParameters
ParametersOf(const ArrayInfo & image, const std::vector<double> & pixelsPerUnit, double cutoff, const char * name)
{
  if (pixelsPerUnit.size() != static_cast<std::size_t>(image.ndim))
  {
    throw std::invalid_argument(std::string(name) + ": pixels_per_unit needs one value per axis (x first)");
  }
  cif::KernelSuperpositionParameters p;
  p.cutoff = cutoff;
  for (int a = 0; a < image.ndim; ++a)
  {
    p.pixelsPerUnit[a] = pixelsPerUnit[static_cast<std::size_t>(a)];
  }
  return p;
}

void
Validate(const cif::KernelSuperpositionGeometry & g, const cif::KernelSuperpositionParameters & p, const char * name)
{
  const std::string problem = cif::ValidateKernelSuperpositionJob(g, p);
  if (!problem.empty())
  {
    throw std::invalid_argument(std::string(name) + ": " + problem);
  }
}

template <typename TSigma>
cif::SigmaMaps<TSigma>
MapsOf(const JobPointers & p, std::size_t first, std::size_t count)
{
  cif::SigmaMaps<TSigma> maps;
  for (std::size_t k = 0; k < count; ++k)
  {
    maps.axis[k] = static_cast<const TSigma *>(p.in[first + k]);
  }
  return maps;
}

/** Calls f(T{}) with T the C++ type of a float32 or float64 array. */
template <typename F>
void
DispatchReal(const ArrayInfo & a, F && f)
{
  if (a.pixel == Pixel::Float64)
  {
    f(0.0);
  }
  else
  {
    f(0.0f);
  }
}

template <typename T>
constexpr bool IsGpuInput = std::is_same<T, unsigned char>::value || std::is_same<T, short>::value ||
                            std::is_same<T, unsigned short>::value || std::is_same<T, float>::value;

Report
KernelSuperposition(const InArray &                   input,
                    const std::vector<InArray> &      sigmaMaps,
                    const OutArray &                  output,
                    const std::vector<std::int64_t> & outputStart,
                    const std::vector<double> &       pixelsPerUnit,
                    double                            cutoff,
                    const std::string &               cutoffMass,
                    const std::string &               method,
                    const std::string &               device,
                    std::uintptr_t                    stream,
                    int                               threads)
{
  const char * name = "kernel_superposition_image_filter";
  const auto   in = Inspect(input, "image");
  const auto   out = Inspect(output, "output");
  RequireImageDimension(in, name);
  const auto sigma = InspectSigmaMaps(sigmaMaps, in, name);
  if (out.ndim != in.ndim)
  {
    throw std::invalid_argument(std::string(name) + ": the output must have the image's dimension");
  }
  if (out.pixel != Pixel::Float32 && out.pixel != Pixel::Float64)
  {
    throw nb::type_error((std::string(name) + ": the output is float32 or float64, not " + out.dtype).c_str());
  }
  if (outputStart.size() != static_cast<std::size_t>(in.ndim))
  {
    throw std::invalid_argument(std::string(name) + ": output_start needs one value per axis (x first)");
  }
  cif::KernelSuperpositionGeometry g;
  g.dimension = in.ndim;
  for (int a = 0; a < in.ndim; ++a)
  {
    g.inputSize[a] = in.Size(a);
    g.outputStart[a] = outputStart[static_cast<std::size_t>(a)];
    g.outputSize[a] = out.Size(a);
  }
  auto p = ParametersOf(in, pixelsPerUnit, cutoff, name);
  p.cutoffMass = ParseCutoffMass(cutoffMass, name);
  if (!cif::KernelSuperpositionMethodFromString(method, p.method))
  {
    throw std::invalid_argument(std::string(name) +
                                ": method must be 'automatic', 'scatter', 'scatter-warp-synchronous', "
                                "'scatter-global-atomics' or 'gather', not '" +
                                method + "'");
  }
  Validate(g, p, name);

  std::string gpuProblem = cif::KernelSuperpositionCUDAIsCompiled() ? "" : "this build has no CUDA code";
  if (gpuProblem.empty() && in.pixel == Pixel::Float64)
  {
    gpuProblem = "the GPU core takes uint8, int16, uint16 and float32 images, not float64";
  }
  if (gpuProblem.empty() && sigma.front().pixel != Pixel::Float32)
  {
    gpuProblem = "the GPU core takes float32 sigma maps, not " + sigma.front().dtype;
  }
  if (gpuProblem.empty() && out.pixel != Pixel::Float32)
  {
    gpuProblem = "the GPU core writes float32 outputs, not " + out.dtype;
  }

  std::vector<ArrayInfo> inputs{ in };
  inputs.insert(inputs.end(), sigma.begin(), sigma.end());
  const std::size_t maps = sigma.size();
  std::string       note;
  Report            report;
  auto              run = [&](auto tagIn, auto tagSigma, auto tagOut)
  {
    using TIn = decltype(tagIn);
    using TSigma = decltype(tagSigma);
    using TOut = decltype(tagOut);
    report = RunJob(
      name,
      device,
      gpuProblem,
      inputs,
      { out },
      stream,
      [&](const JobPointers & q)
      {
        if constexpr (IsGpuInput<TIn> && std::is_same<TSigma, float>::value && std::is_same<TOut, float>::value)
        {
          note = cif::KernelSuperpositionCUDA<TIn>(
            static_cast<const TIn *>(q.in[0]), MapsOf<float>(q, 1, maps), static_cast<float *>(q.out[0]), g, p);
        }
        else
        {
          throw std::logic_error("kernel superposition: no GPU core for these types"); // gpuProblem said so
        }
      },
      [&](const JobPointers & q)
      {
        cif::KernelSuperpositionCPU<TIn, TSigma, TOut>(static_cast<const TIn *>(q.in[0]),
                                                       MapsOf<TSigma>(q, 1, maps),
                                                       static_cast<TOut *>(q.out[0]),
                                                       g,
                                                       p,
                                                       Threads(threads));
        note = "the CPU core (double precision scatter)";
      });
  };
  auto withTypes = [&](auto tagIn)
  {
    DispatchReal(sigma.front(),
                 [&](auto tagSigma) { DispatchReal(out, [&](auto tagOut) { run(tagIn, tagSigma, tagOut); }); });
  };
  switch (in.pixel)
  {
    case Pixel::UInt8:
      withTypes(static_cast<unsigned char>(0));
      break;
    case Pixel::Int16:
      withTypes(static_cast<short>(0));
      break;
    case Pixel::UInt16:
      withTypes(static_cast<unsigned short>(0));
      break;
    case Pixel::Float32:
      withTypes(0.0f);
      break;
    case Pixel::Float64:
      withTypes(0.0);
      break;
    default:
      throw nb::type_error((std::string(name) + ": pixel type " + in.dtype +
                            " is not supported; use uint8, int16, uint16, float32 or float64")
                             .c_str());
  }
  if (!note.empty())
  {
    std::get<1>(report) += "; " + note;
  }
  return report;
}

/** The largest kernel radius per axis (x first) of sigma maps: host maps
 * are scanned on the CPU (an upload would cost more than the scan), GPU
 * maps where they are (float32) or through a host copy. Raises ValueError
 * for a bad sigma, naming the first. */
std::vector<int>
LargestRadius(const std::vector<InArray> & sigmaMaps,
              const std::vector<double> &  pixelsPerUnit,
              double                       cutoff,
              const std::string &          device,
              std::uintptr_t               stream,
              int                          threads)
{
  const char * name = "kernel_superposition_radius";
  if (sigmaMaps.empty())
  {
    throw std::invalid_argument(std::string(name) + ": no sigma map");
  }
  const auto first = Inspect(sigmaMaps.front(), "sigma map");
  RequireImageDimension(first, name);
  const auto                       sigma = InspectSigmaMaps(sigmaMaps, first, name);
  cif::KernelSuperpositionGeometry g;
  g.dimension = first.ndim;
  for (int a = 0; a < first.ndim; ++a)
  {
    g.inputSize[a] = g.outputSize[a] = first.Size(a);
  }
  const auto p = ParametersOf(first, pixelsPerUnit, cutoff, name);
  Validate(g, p, name);
  std::string gpuProblem = cif::KernelSuperpositionCUDAIsCompiled() ? "" : "this build has no CUDA code";
  if (gpuProblem.empty() && first.pixel != Pixel::Float32)
  {
    gpuProblem = "the GPU scans float32 sigma maps, not " + first.dtype;
  }
  const std::size_t              maps = sigma.size();
  cif::KernelSuperpositionRadius r;
  DispatchReal(first,
               [&](auto tag)
               {
                 using TSigma = decltype(tag);
                 RunJob(
                   name,
                   first.onGpu ? device : std::string("cpu"),
                   gpuProblem,
                   sigma,
                   {},
                   stream,
                   [&](const JobPointers & q)
                   {
                     if constexpr (std::is_same<TSigma, float>::value)
                     {
                       r = cif::KernelSuperpositionLargestRadiusCUDA(MapsOf<float>(q, 0, maps), g, p);
                     }
                     else
                     {
                       throw std::logic_error("kernel superposition: the GPU scans float32 maps only");
                     }
                   },
                   [&](const JobPointers & q) {
                     r = cif::KernelSuperpositionLargestRadiusCPU(MapsOf<TSigma>(q, 0, maps), g, p, Threads(threads));
                   });
               });
  return std::vector<int>(r.radius, r.radius + first.ndim);
}

} // namespace

void
RegisterKernelSuperposition(nb::module_ & m)
{
  using namespace nb::literals;
  m.def("kernel_superposition",
        &KernelSuperposition,
        "image"_a,
        "sigma_maps"_a,
        "output"_a,
        "output_start"_a,
        "pixels_per_unit"_a,
        "cutoff"_a,
        "cutoff_mass"_a,
        "method"_a,
        "device"_a,
        "stream"_a,
        "threads"_a,
        "Spatially varying Gaussian kernel superposition (cif::KernelSuperpositionCPU / CUDA): sigma maps (1, or one "
        "per axis, x first) of the image's shape in physical units, pixels_per_unit = 1 / spacing and the output "
        "box's start in input indices (x first); the output's shape is its size.");
  m.def("kernel_superposition_radius",
        &LargestRadius,
        "sigma_maps"_a,
        "pixels_per_unit"_a,
        "cutoff"_a,
        "device"_a,
        "stream"_a,
        "threads"_a,
        "The largest kernel radius ceil(cutoff sigma pixels_per_unit) per axis (x first) over the sigma maps; "
        "ValueError for a negative, NaN or infinite sigma or a radius beyond 4096.");
  m.attr("kernel_superposition_max_radius") = cif::KernelSuperpositionMaxRadius;
}

} // namespace cifpy
