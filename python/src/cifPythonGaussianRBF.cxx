/*=========================================================================
 *  CudaImageFilters Python extension: Gaussian RBF interpolation (the
 *  exact separable method of cifGaussianRBF.h). The Python layer turns the
 *  images' geometry into per-axis output positions (first + k * step, in
 *  input continuous indices) and sigmas in pixels; this binding builds the
 *  operators and runs the core.
 *=========================================================================*/
#include "cifPythonArrays.h"

#include "cifGaussianRBF.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <limits>
#include <list>
#include <mutex>
#include <memory>
#include <type_traits>

namespace cifpy
{
namespace
{

template <typename F>
void
DispatchGrbf(const ArrayInfo & a, const char * function, F && f)
{
  if (a.pixel == Pixel::Float64)
  {
    f(0.0);
    return;
  }
  if (a.pixel == Pixel::UInt8 || a.pixel == Pixel::Int16 || a.pixel == Pixel::UInt16 || a.pixel == Pixel::Float32)
  {
    DispatchScalar(a, function, f);
    return;
  }
  throw nb::type_error((std::string(function) + ": pixel type " + a.dtype +
                        " is not supported; use uint8, int16, uint16, float32 or float64")
                         .c_str());
}

/** The grid of one call: positions and sigma per axis (x first), the
 * arrays' sizes and the options. */
cif::GrbfGrid
GridOf(const ArrayInfo &           in,
       const ArrayInfo &           out,
       const std::vector<double> & first,
       const std::vector<double> & step,
       const std::vector<double> & sigma,
       double                      tolerance,
       double                      ridge,
       const char *                name)
{
  const auto d = static_cast<std::size_t>(in.ndim);
  if (first.size() != d || step.size() != d || sigma.size() != d)
  {
    throw std::invalid_argument(std::string(name) + ": first, step and sigma need one value per axis");
  }
  cif::GrbfGrid grid;
  grid.dimension = in.ndim;
  grid.options = cif::GrbfOptions{ tolerance, ridge };
  for (int a = 0; a < in.ndim; ++a)
  {
    grid.inputSize[a] = in.Size(a);
    grid.outputSize[a] = out.Size(a);
    grid.first[a] = first[a];
    grid.step[a] = step[a];
    grid.sigma[a] = sigma[a];
  }
  return grid;
}

/** Operators and device plans of recent calls, so that a loop over images
 * of one geometry (registration, a stack of frames) builds them once: keyed
 * by sizes, positions, sigma, tolerance and ridge; the 8 most recent. */
struct CachedJob
{
  cif::GrbfGrid                        grid;
  cif::GrbfSeparableJob                job;
  std::shared_ptr<cif::GrbfDevicePlan> plan[2]; ///< float, double
};

std::mutex &
CacheMutex()
{
  static std::mutex m;
  return m;
}

std::list<std::shared_ptr<CachedJob>> &
Cache()
{
  static std::list<std::shared_ptr<CachedJob>> cache;
  return cache;
}

std::shared_ptr<CachedJob>
CachedJobFor(const cif::GrbfGrid & grid)
{
  {
    std::lock_guard<std::mutex> lock(CacheMutex());
    auto &                      cache = Cache();
    for (auto it = cache.begin(); it != cache.end(); ++it)
    {
      if ((*it)->grid == grid)
      {
        auto hit = *it;
        cache.erase(it);
        cache.push_front(hit);
        return hit;
      }
    }
  }
  auto entry = std::make_shared<CachedJob>();
  entry->grid = grid;
  entry->job = cif::MakeGrbfSeparableJob(grid);
  std::lock_guard<std::mutex> lock(CacheMutex());
  auto &                      cache = Cache();
  cache.push_front(entry);
  while (cache.size() > 8)
  {
    cache.pop_back();
  }
  return entry;
}

Report
GaussianRBF(const InArray &             input,
            const OutArray &            output,
            const std::vector<double> & first,
            const std::vector<double> & step,
            const std::vector<double> & sigma,
            double                      tolerance,
            double                      ridge,
            double                      defaultValue,
            const std::string &         device,
            std::uintptr_t              stream,
            int                         threads)
{
  const char * name = "gaussian_rbf_interpolation_image_filter";
  const auto   in = Inspect(input, "image");
  const auto   out = Inspect(output, "output");
  RequireImageDimension(in, name);
  RequirePixel(out, in.pixel, name);
  if (out.ndim != in.ndim)
  {
    throw std::invalid_argument(std::string(name) + ": the output must have the image's dimension");
  }
  const auto            cached = CachedJobFor(GridOf(in, out, first, step, sigma, tolerance, ridge, name));
  cif::GrbfSeparableJob job = cached->job; // shares the operators
  job.defaultValue = defaultValue;
  std::string problem = cif::GrbfCUDAIsCompiled() ? "" : "this build has no CUDA code";
  if (problem.empty() && in.ndim < 2)
  {
    problem = "the GPU takes 2D and 3D images";
  }
  std::string note;
  {
    int taps = 0;
    for (int a = 0; a < job.dimension; ++a)
    {
      taps = std::max(taps, job.axis[a]->identity ? 0 : job.axis[a]->taps);
    }
    note = "exact separable GRBF, up to " + std::to_string(taps) + " taps per axis";
  }
  Report report;
  DispatchGrbf(
    in,
    name,
    [&](auto tag)
    {
      using T = decltype(tag);
      if constexpr (std::is_integral<T>::value)
      {
        job.outputMin = static_cast<double>(std::numeric_limits<T>::lowest());
        job.outputMax = static_cast<double>(std::numeric_limits<T>::max());
      }
      report = RunJob(
        name,
        device,
        problem,
        { in },
        { out },
        stream,
        [&](const JobPointers & p)
        {
          constexpr int                        precision = std::is_same<T, double>::value ? 1 : 0;
          std::shared_ptr<cif::GrbfDevicePlan> plan;
          {
            std::lock_guard<std::mutex> lock(CacheMutex());
            plan = cached->plan[precision];
          }
          if (!plan)
          {
            plan = cif::MakeGrbfDevicePlan(job, precision == 1);
            std::lock_guard<std::mutex> lock(CacheMutex());
            cached->plan[precision] = plan;
          }
          cif::GrbfSeparableCUDA<T>(static_cast<const T *>(p.in[0]), static_cast<T *>(p.out[0]), job, plan.get());
        },
        [&](const JobPointers & p) {
          cif::GrbfSeparableCPU<T>(static_cast<const T *>(p.in[0]), static_cast<T *>(p.out[0]), job, Threads(threads));
        },
        &note);
    });
  return report;
}

/** Taps and condition number of one axis's operator (for tests and docs). */
std::tuple<int, double, double, double>
GrbfAxisInfo(std::int64_t inputSize,
             double       sigma,
             std::int64_t outputSize,
             double       first,
             double       step,
             double       tolerance,
             double       ridge)
{
  const auto op =
    cif::BuildGrbfAxisOperator(inputSize, sigma, outputSize, first, step, cif::GrbfOptions{ tolerance, ridge });
  return { op.taps, op.conditionNumber, op.largestRowL1, op.truncatedL1 };
}

} // namespace

void
RegisterGaussianRBF(nb::module_ & m)
{
  m.def("gaussian_rbf",
        &GaussianRBF,
        nb::arg("input"),
        nb::arg("output"),
        nb::arg("first"),
        nb::arg("step"),
        nb::arg("sigma"),
        nb::arg("tolerance"),
        nb::arg("ridge"),
        nb::arg("default_value"),
        nb::arg("device"),
        nb::arg("stream"),
        nb::arg("threads"),
        "Exact separable GRBF interpolation: per axis (x first) the output positions first + k * step in input "
        "continuous indices and sigma in pixels.");
  m.def("gaussian_rbf_axis_info",
        &GrbfAxisInfo,
        "(taps, condition number, largest row L1, truncated L1) of one axis's operator.");
  m.def("gaussian_rbf_largest_sigma", &cif::GrbfLargestSigma, nb::arg("tolerance"));
}

} // namespace cifpy
