/*=========================================================================
 *  CudaImageFilters Python extension: Gaussian RBF interpolation (the
 *  exact separable method of cifGaussianRBF.h). The Python layer turns the
 *  images' geometry into per-axis output positions (first + k * step, in
 *  input continuous indices) and sigmas in pixels; this binding builds the
 *  operators and runs the core.
 *=========================================================================*/
#include "cifPythonArrays.h"

#include "cif/GaussianRBF.h"
#include "cif/Resample.h"
#include "cif/Runtime.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
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

/** Point plans of recent calls (sizes, sigma, tolerance, ridge), the 8 most recent. */
struct CachedPoints
{
  int                 dimension{ 0 };
  std::int64_t        size[3]{ 1, 1, 1 };
  double              sigma[3]{ 1, 1, 1 };
  cif::GrbfOptions    options;
  cif::GrbfPointsPlan plan;
};

std::shared_ptr<CachedPoints>
CachedPointsFor(int dimension, const std::int64_t size[3], const double sigma[3], const cif::GrbfOptions & options)
{
  static std::mutex                               m;
  static std::list<std::shared_ptr<CachedPoints>> cache;
  auto                                            same = [&](const CachedPoints & c)
  {
    bool equal =
      c.dimension == dimension && c.options.tolerance == options.tolerance && c.options.ridge == options.ridge;
    for (int a = 0; a < dimension && equal; ++a)
    {
      equal = c.size[a] == size[a] && c.sigma[a] == sigma[a];
    }
    return equal;
  };
  {
    std::lock_guard<std::mutex> lock(m);
    for (auto it = cache.begin(); it != cache.end(); ++it)
    {
      if (same(**it))
      {
        auto hit = *it;
        cache.erase(it);
        cache.push_front(hit);
        return hit;
      }
    }
  }
  auto entry = std::make_shared<CachedPoints>();
  entry->dimension = dimension;
  entry->options = options;
  for (int a = 0; a < 3; ++a)
  {
    entry->size[a] = size[a];
    entry->sigma[a] = sigma[a];
  }
  entry->plan = cif::MakeGrbfPointsPlan(dimension, size, sigma, options);
  std::lock_guard<std::mutex> lock(m);
  cache.push_front(entry);
  while (cache.size() > 8)
  {
    cache.pop_back();
  }
  return entry;
}

/** GRBF at arbitrary points: `points` (N x D float64 continuous indices, x
 * first) of `input`'s interpolant into `values` (N float64); outside points
 * get the default value. */
Report
GaussianRBFPoints(const InArray &             input,
                  const InArray &             points,
                  const OutArray &            values,
                  const std::vector<double> & sigma,
                  double                      tolerance,
                  double                      ridge,
                  double                      defaultValue,
                  const std::string &         device,
                  std::uintptr_t              stream,
                  int                         threads)
{
  const char * name = "gaussian_rbf_evaluate";
  const auto   in = Inspect(input, "image");
  const auto   pts = Inspect(points, "points");
  const auto   out = Inspect(values, "values");
  RequireImageDimension(in, name);
  RequirePixel(pts, Pixel::Float64, name);
  RequirePixel(out, Pixel::Float64, name);
  const int D = in.ndim;
  if (pts.ndim != 2 || pts.shape[1] != D || out.Count() != pts.shape[0])
  {
    throw std::invalid_argument(std::string(name) + ": points must be (N, " + std::to_string(D) + ") and values (N,)");
  }
  if (sigma.size() != static_cast<std::size_t>(D))
  {
    throw std::invalid_argument(std::string(name) + ": sigma needs one value per axis");
  }
  std::int64_t size[3] = { 1, 1, 1 };
  double       s[3] = { 1, 1, 1 };
  for (int a = 0; a < D; ++a)
  {
    size[a] = in.Size(a);
    s[a] = sigma[a];
  }
  const auto                  cached = CachedPointsFor(D, size, s, cif::GrbfOptions{ tolerance, ridge });
  const cif::GrbfPointsPlan & plan = cached->plan;
  const std::int64_t          count = pts.shape[0];
  const std::string           problem = cif::GrbfCUDAIsCompiled() ? "" : "this build has no CUDA code";
  std::string                 note = "GRBF at " + std::to_string(count) + " points, axes ";
  for (int a = 0; a < D; ++a)
  {
    note += plan.axis[a].cardinal ? "L" : "a";
  }
  note += " (a: coefficients, L: cardinal weights)";
  Report report;
  DispatchGrbf(in,
               name,
               [&](auto tag)
               {
                 using T = decltype(tag);
                 report = RunJob(
                   name,
                   device,
                   problem,
                   { in, pts },
                   { out },
                   stream,
                   [&](const JobPointers & p)
                   {
                     cif::DeviceBuffer       coefficients(static_cast<std::size_t>(in.Count()) * sizeof(double));
                     const cif::GrbfDeviceRule   device = cif::MakeGrbfDeviceRule(plan);
                     const cif::GrbfPointsRule & rule = device.rule;
                     cif::GrbfCoefficientsCUDA<T>(
                       static_cast<const T *>(p.in[0]), static_cast<double *>(coefficients.GetPointer()), plan);
                     cif::GrbfEvaluatePointsCUDA(static_cast<const double *>(coefficients.GetPointer()),
                                                 rule,
                                                 static_cast<const double *>(p.in[1]),
                                                 count,
                                                 defaultValue,
                                                 static_cast<double *>(p.out[0]));
                   },
                   [&](const JobPointers & p)
                   {
                     std::vector<double> coefficients(static_cast<std::size_t>(in.Count()));
                     cif::GrbfCoefficientsCPU<T>(
                       static_cast<const T *>(p.in[0]), coefficients.data(), plan, Threads(threads));
                     cif::GrbfEvaluatePointsCPU(coefficients.data(),
                                                cif::GrbfHostRule(plan),
                                                static_cast<const double *>(p.in[1]),
                                                count,
                                                defaultValue,
                                                static_cast<double *>(p.out[0]),
                                                Threads(threads));
                   },
                   &note);
               });
  return report;
}

/** GRBF at every pixel of `output` through the affine index map c =
 * matrix o + offset (x first, 3 x 3 row-major and 3 values, unused axes
 * identity): the point core without point arrays. */
Report
GaussianRBFAffine(const InArray &             input,
                  const OutArray &            output,
                  const std::vector<double> & matrix,
                  const std::vector<double> & offset,
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
  const int D = in.ndim;
  if (out.ndim != D || matrix.size() != 9 || offset.size() != 3 || sigma.size() != static_cast<std::size_t>(D))
  {
    throw std::invalid_argument(std::string(name) + ": inconsistent output, matrix, offset or sigma");
  }
  std::int64_t size[3] = { 1, 1, 1 }, outSize[3] = { 1, 1, 1 };
  double       s[3] = { 1, 1, 1 };
  for (int a = 0; a < D; ++a)
  {
    size[a] = in.Size(a);
    outSize[a] = out.Size(a);
    s[a] = sigma[a];
  }
  const auto                  cached = CachedPointsFor(D, size, s, cif::GrbfOptions{ tolerance, ridge });
  const cif::GrbfPointsPlan & plan = cached->plan;
  cif::ResampleGeometry       g;
  for (int a = 0; a < 3; ++a)
  {
    g.inputSize[a] = size[a];
    g.outputSize[a] = outSize[a];
    g.offset[a] = offset[a];
    for (int b = 0; b < 3; ++b)
    {
      g.matrix[a][b] = matrix[3 * a + b];
    }
  }
  std::string problem = cif::GrbfCUDAIsCompiled() ? "" : "this build has no CUDA code";
  if (problem.empty() && D < 2)
  {
    problem = "the GPU takes 2D and 3D images";
  }
  std::string note = "GRBF evaluated point by point, axes ";
  for (int a = 0; a < D; ++a)
  {
    note += plan.axis[a].cardinal ? "L" : "a";
  }
  note += " (a: coefficients, L: cardinal weights)";
  Report report;
  DispatchGrbf(
    in,
    name,
    [&](auto tag)
    {
      using T = decltype(tag);
      double lo = -1e308, hi = 1e308;
      if constexpr (std::is_integral<T>::value)
      {
        lo = static_cast<double>(std::numeric_limits<T>::lowest());
        hi = static_cast<double>(std::numeric_limits<T>::max());
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
          cif::DeviceBuffer     coefficients(static_cast<std::size_t>(in.Count()) * sizeof(double));
          const cif::GrbfDeviceRule device = cif::MakeGrbfDeviceRule(plan);
          cif::ResampleParameters   parameters;
          parameters.interpolation = cif::Interpolation::GaussianRBF;
          parameters.defaultValue = defaultValue;
          parameters.outputMin = lo;
          parameters.outputMax = hi;
          parameters.grbf = device.rule;
          cif::GrbfCoefficientsCUDA<T>(
            static_cast<const T *>(p.in[0]), static_cast<double *>(coefficients.GetPointer()), plan);
          if constexpr (std::is_same<T, unsigned char>::value || std::is_same<T, short>::value ||
                        std::is_same<T, unsigned short>::value || std::is_same<T, float>::value ||
                        std::is_same<T, double>::value)
          {
            cif::ResampleCUDA<double, T>(
              static_cast<const double *>(coefficients.GetPointer()), static_cast<T *>(p.out[0]), g, parameters);
          }
        },
        [&](const JobPointers & p)
        {
          std::vector<double> coefficients(static_cast<std::size_t>(in.Count()));
          cif::GrbfCoefficientsCPU<T>(static_cast<const T *>(p.in[0]), coefficients.data(), plan, Threads(threads));
          cif::GrbfEvaluateAffineCPU<T>(coefficients.data(),
                                        cif::GrbfHostRule(plan),
                                        outSize,
                                        g.matrix,
                                        g.offset,
                                        defaultValue,
                                        lo,
                                        hi,
                                        static_cast<T *>(p.out[0]),
                                        Threads(threads));
        },
        &note);
    });
  return report;
}

/** The seed's block mode onto an axis-aligned grid (cif::GrbfBlockJob). */
Report
GaussianRBFBlock(const InArray &                   input,
                 const OutArray &                  output,
                 const std::vector<double> &       first,
                 const std::vector<double> &       step,
                 const std::vector<double> &       sigma,
                 const std::vector<std::int64_t> & blockSize,
                 const std::vector<std::int64_t> & overlap,
                 bool                              doublePrecision,
                 double                            defaultValue,
                 const std::string &               device,
                 std::uintptr_t                    stream,
                 int                               threads)
{
  const char * name = "gaussian_rbf_interpolation_image_filter (block mode)";
  const auto   in = Inspect(input, "image");
  const auto   out = Inspect(output, "output");
  RequireImageDimension(in, name);
  RequirePixel(out, in.pixel, name);
  const auto d = static_cast<std::size_t>(in.ndim);
  if (out.ndim != in.ndim || first.size() != d || step.size() != d || sigma.size() != d || blockSize.size() != d ||
      overlap.size() != d)
  {
    throw std::invalid_argument(std::string(name) + ": one value per axis for first, step, sigma, blocks, overlap");
  }
  cif::GrbfBlockJob job;
  job.dimension = in.ndim;
  for (int a = 0; a < in.ndim; ++a)
  {
    job.inputSize[a] = in.Size(a);
    job.outputSize[a] = out.Size(a);
    job.first[a] = first[a];
    job.step[a] = step[a];
    job.sigma[a] = sigma[a];
    job.blockSize[a] = static_cast<int>(std::clamp<std::int64_t>(blockSize[a], -1, 1 << 20));
    job.overlap[a] = static_cast<int>(std::clamp<std::int64_t>(overlap[a], -1, 1 << 20));
  }
  job.doublePrecision = doublePrecision;
  job.defaultValue = defaultValue;
  const std::string invalid = cif::ValidateGrbfBlockJob(job);
  if (!invalid.empty())
  {
    throw std::invalid_argument(std::string(name) + ": " + invalid);
  }
  std::string problem = cif::GrbfCUDAIsCompiled() ? "" : "this build has no CUDA code";
  if (problem.empty() && in.ndim < 2)
  {
    problem = "the GPU takes 2D and 3D images";
  }
  const std::string note = std::string("the seed's block mode in ") + (doublePrecision ? "double" : "float32");
  Report            report;
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
        { cif::GrbfBlockCUDA<T>(static_cast<const T *>(p.in[0]), static_cast<T *>(p.out[0]), job); },
        [&](const JobPointers & p)
        { cif::GrbfBlockCPU<T>(static_cast<const T *>(p.in[0]), static_cast<T *>(p.out[0]), job, Threads(threads)); },
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
  m.def("gaussian_rbf_points",
        &GaussianRBFPoints,
        nb::arg("input"),
        nb::arg("points"),
        nb::arg("values"),
        nb::arg("sigma"),
        nb::arg("tolerance"),
        nb::arg("ridge"),
        nb::arg("default_value"),
        nb::arg("device"),
        nb::arg("stream"),
        nb::arg("threads"),
        "GRBF at arbitrary points: points (N, D) float64 continuous indices (x first), values (N,) float64; "
        "sigma in pixels per axis (x first).");
  m.def("gaussian_rbf_affine",
        &GaussianRBFAffine,
        nb::arg("input"),
        nb::arg("output"),
        nb::arg("matrix"),
        nb::arg("offset"),
        nb::arg("sigma"),
        nb::arg("tolerance"),
        nb::arg("ridge"),
        nb::arg("default_value"),
        nb::arg("device"),
        nb::arg("stream"),
        nb::arg("threads"),
        "GRBF at every output pixel through the affine index map c = matrix o + offset (x first; 3 x 3 "
        "row-major and 3 values); sigma in pixels.");
  m.def("gaussian_rbf_block",
        &GaussianRBFBlock,
        nb::arg("input"),
        nb::arg("output"),
        nb::arg("first"),
        nb::arg("step"),
        nb::arg("sigma"),
        nb::arg("block_size"),
        nb::arg("overlap"),
        nb::arg("double_precision"),
        nb::arg("default_value"),
        nb::arg("device"),
        nb::arg("stream"),
        nb::arg("threads"),
        "The seed's block mode onto an axis-aligned grid (x first: positions, sigma in pixels, blocks, overlap).");
  m.def("gaussian_rbf_axis_info",
        &GrbfAxisInfo,
        "(taps, condition number, largest row L1, truncated L1) of one axis's operator.");
  m.def("gaussian_rbf_largest_sigma", &cif::GrbfLargestSigma, nb::arg("tolerance"));
}

} // namespace cifpy
