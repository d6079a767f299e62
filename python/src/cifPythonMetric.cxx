/*=========================================================================
 *  CudaImageFilters Python extension: one evaluation of the registration
 *  metric core (cif/RegistrationMetric.h) for metric_value_and_derivative.
 *  The Python layer gives the fixed and moving images (float32 or float64,
 *  one type), the moving image's gradient (D float32 per sample, ITK's
 *  default gradient filter), their grids (x first, matrices row by row),
 *  the virtual domain (by default the fixed image's grid; register() gives
 *  each level's shrunk grid), the moving transform's point map
 *  p' = matrix p + offset, the point the moments are taken from and, for
 *  Mattes mutual information, ITK's histogram set-up; this binding returns
 *  the core's sums (MetricMoments), which the Python layer contracts with
 *  the transform's Jacobian as ITK does. A B-spline moving transform
 *  (itk::BSplineTransform of order 3: its D coefficient arrays and grid)
 *  replaces the point map; its per-parameter sums go to `bspline_sums`.
 *=========================================================================*/
#include "cifPythonArrays.h"

#include "cif/RegistrationMetric.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <stdexcept>

namespace cifpy
{
namespace
{

/** The sums, flattened: count, value, weighted (3 x 4), movingWeighted
 * (3 x 4), fixedSquares, movingSquares, fixedMean, movingMean, status. */
std::vector<double>
Flatten(const cif::MetricMoments & m)
{
  std::vector<double> out{ m.count, m.value };
  for (const auto * w : { &m.weighted, &m.movingWeighted })
  {
    for (int r = 0; r < 3; ++r)
    {
      for (int c = 0; c < 4; ++c)
      {
        out.push_back((*w)[r][c]);
      }
    }
  }
  out.insert(out.end(), { m.fixedSquares, m.movingSquares, m.fixedMean, m.movingMean, static_cast<double>(m.status) });
  return out;
}

std::tuple<Report, std::vector<double>>
MetricMoments(const std::string &             metric,
              const InArray &                 fixed,
              const InArray &                 moving,
              const InArray &                 gradient,
              const std::vector<double> &     fixedOrigin,
              const std::vector<double> &     fixedIndexToPoint,
              const std::vector<double> &     fixedPointToIndex,
              const std::vector<double> &     movingOrigin,
              const std::vector<double> &     movingPointToIndex,
              const std::vector<double> &     matrix,
              const std::vector<double> &     offset,
              const std::vector<double> &     momentOrigin,
              const std::string &             device,
              std::uintptr_t                  stream,
              int                             threads,
              const std::vector<double> &     virtualSize,
              const std::vector<double> &     virtualOrigin,
              const std::vector<double> &     virtualIndexToPoint,
              const std::vector<double> &     mattes,
              const std::optional<InArray> &  bsplineCoefficients,
              const std::vector<double> &     bsplineGrid,
              const std::optional<OutArray> & bsplineSums)
{
  const char * name = "metric_value_and_derivative";
  const auto   f = Inspect(fixed, "fixed image");
  const auto   m = Inspect(moving, "moving image");
  const auto   g = Inspect(gradient, "moving image gradient");
  const int    d = f.ndim;
  if ((d != 2 && d != 3) || m.ndim != d)
  {
    throw std::invalid_argument(std::string(name) + ": the fixed and moving images must both be 2D or both 3D");
  }
  if (f.pixel != m.pixel || (f.pixel != Pixel::Float32 && f.pixel != Pixel::Float64))
  {
    throw nb::type_error((std::string(name) + ": the images must both be float32 or both float64 (got " + f.dtype +
                          " and " + m.dtype + ")")
                           .c_str());
  }
  RequirePixel(g, Pixel::Float32, name);
  if (g.ndim != d + 1 || g.shape[d] != d || g.Count() != m.Count() * d)
  {
    throw std::invalid_argument(std::string(name) + ": the gradient must have the moving image's shape plus D");
  }
  cif::DenseMetricJob job;
  if (metric == "mean_squares")
  {
    job.kind = cif::MetricKind::MeanSquares;
  }
  else if (metric == "correlation")
  {
    job.kind = cif::MetricKind::Correlation;
  }
  else if (metric == "mattes")
  {
    job.kind = cif::MetricKind::MattesMutualInformation;
    // bins, fixed bin size and normalised minimum, moving bin size and
    // normalised minimum, the moving image's true minimum and maximum
    if (mattes.size() != 7 || !(mattes[0] >= 1 && mattes[0] <= cif::kMaxMattesBins))
    {
      throw std::invalid_argument(std::string(name) + ": Mattes needs its histogram set-up (7 values, 1 to " +
                                  std::to_string(cif::kMaxMattesBins) + " bins)");
    }
    job.mattes.bins = static_cast<int>(mattes[0]);
    job.mattes.fixedBinSize = mattes[1];
    job.mattes.fixedNormalizedMin = mattes[2];
    job.mattes.movingBinSize = mattes[3];
    job.mattes.movingNormalizedMin = mattes[4];
    job.mattes.movingTrueMin = mattes[5];
    job.mattes.movingTrueMax = mattes[6];
  }
  else
  {
    throw std::invalid_argument(std::string(name) +
                                ": the core's metric is mean_squares, correlation or mattes, not '" + metric + "'");
  }
  job.dimension = d;
  double fo[3]{ 0, 0, 0 };
  double mo[3]{ 0, 0, 0 };
  double t[3]{ 0, 0, 0 };
  double x0[3]{ 0, 0, 0 };
  Axes(fixedOrigin, fo, 0.0, "fixed origin");
  Axes(movingOrigin, mo, 0.0, "moving origin");
  Axes(offset, t, 0.0, "offset");
  Axes(momentOrigin, x0, 0.0, "moment origin");
  const bool ownVirtual = !virtualSize.empty();
  if (ownVirtual && (virtualSize.size() != static_cast<std::size_t>(d) || virtualOrigin.size() != virtualSize.size()))
  {
    throw std::invalid_argument(std::string(name) + ": the virtual domain needs D sizes and D origin values");
  }
  SquareMatrix(ownVirtual ? virtualIndexToPoint : fixedIndexToPoint,
               d,
               job.virtualIndexToPoint,
               name,
               ownVirtual ? "the virtual index-to-point matrix" : "the fixed index-to-point matrix");
  SquareMatrix(fixedPointToIndex, d, job.fixed.pointToIndex, name, "the fixed point-to-index matrix");
  SquareMatrix(movingPointToIndex, d, job.moving.pointToIndex, name, "the moving point-to-index matrix");
  SquareMatrix(matrix, d, job.movingTransform.maps[0].matrix, name, "the transform matrix");
  job.fixedTransform.count = 0;
  job.movingTransform.count = 1;
  for (int a = 0; a < d; ++a)
  {
    if (ownVirtual)
    {
      if (!(virtualSize[a] >= 1) || virtualSize[a] != static_cast<double>(static_cast<std::int64_t>(virtualSize[a])))
      {
        throw std::invalid_argument(std::string(name) + ": the virtual domain's sizes must be positive integers");
      }
      job.virtualSize[a] = static_cast<std::int64_t>(virtualSize[a]);
      job.virtualOrigin[a] = virtualOrigin[a];
    }
    else
    {
      job.virtualSize[a] = f.Size(a);
      job.virtualOrigin[a] = fo[a];
    }
    job.fixed.size[a] = f.Size(a);
    job.fixed.origin[a] = fo[a];
    job.moving.size[a] = m.Size(a);
    job.moving.origin[a] = mo[a];
    job.movingTransform.maps[0].offset[a] = t[a];
    job.momentOrigin[a] = x0[a];
  }
  job.movingGradient = job.moving;
  job.derivative = true;
  std::vector<ArrayInfo> inputs{ f, m, g };
  std::vector<ArrayInfo> outputs;
  const bool             hasBSpline = bsplineCoefficients.has_value();
  if (hasBSpline != bsplineSums.has_value())
  {
    throw std::invalid_argument(std::string(name) + ": a B-spline needs its coefficients and its sums' array");
  }
  if (hasBSpline)
  {
    // the grid: D sizes, D origin values, the D x D point-to-index matrix
    const auto c = Inspect(*bsplineCoefficients, "B-spline coefficients");
    const auto o = Inspect(*bsplineSums, "B-spline sums");
    RequirePixel(c, Pixel::Float64, name);
    RequirePixel(o, Pixel::Float64, name);
    if (bsplineGrid.size() != static_cast<std::size_t>(2 * d + d * d))
    {
      throw std::invalid_argument(std::string(name) + ": the B-spline grid needs D sizes, D origin values and D x D");
    }
    std::int64_t count = 1;
    for (int a = 0; a < d; ++a)
    {
      const double n = bsplineGrid[a];
      if (!(n >= 4) || n != static_cast<double>(static_cast<std::int64_t>(n)))
      {
        throw std::invalid_argument(std::string(name) + ": the B-spline grid needs 4 or more points per axis");
      }
      job.bspline.gridSize[a] = static_cast<std::int64_t>(n);
      job.bspline.gridOrigin[a] = bsplineGrid[d + a];
      count *= job.bspline.gridSize[a];
    }
    SquareMatrix(std::vector<double>(bsplineGrid.begin() + 2 * d, bsplineGrid.end()),
                 d,
                 job.bspline.gridPointToIndex,
                 name,
                 "the B-spline grid's point-to-index matrix");
    const std::int64_t sets = cif::MetricWeightSets(job.kind);
    if (c.Count() != count * d || o.Count() != count * d * sets)
    {
      throw std::invalid_argument(std::string(name) +
                                  ": the B-spline coefficients must hold D x grid values and the sums sets x D x grid");
    }
    job.movingTransform.count = 0; // the B-spline alone
    inputs.push_back(c);
    outputs.push_back(o);
  }
  const bool isFloat = f.pixel == Pixel::Float32;

  cif::MetricMoments moments;
  const auto         run = [&](const JobPointers & q, bool onGpu)
  {
    cif::DenseMetricJob j = job;
    j.fixed.values = q.in[0];
    j.moving.values = q.in[1];
    j.movingGradient.values = q.in[2];
    if (hasBSpline)
    {
      j.bspline.coefficients = static_cast<const double *>(q.in[3]);
      j.bspline.derivativeSums = static_cast<double *>(q.out[0]);
    }
    const std::string problem = cif::ValidateDenseMetricJob(j);
    if (!problem.empty())
    {
      throw std::invalid_argument(std::string(name) + ": " + problem);
    }
    if (onGpu)
    {
      isFloat ? cif::DenseMetricMomentsCUDA<float>(j, moments) : cif::DenseMetricMomentsCUDA<double>(j, moments);
    }
    else
    {
      isFloat ? cif::DenseMetricMomentsCPU<float>(j, moments, Threads(threads))
              : cif::DenseMetricMomentsCPU<double>(j, moments, Threads(threads));
    }
  };
  const std::string gpuProblem = cif::DenseMetricCUDAIsCompiled() ? "" : "this build has no CUDA code";
  Report            report = RunJob(
    name,
    device,
    gpuProblem,
    inputs,
    outputs,
    stream,
    [&](const JobPointers & q) { run(q, true); },
    [&](const JobPointers & q) { run(q, false); });
  return { report, Flatten(moments) };
}

} // namespace

void
RegisterMetric(nb::module_ & m)
{
  using namespace nb::literals;
  m.def("metric_moments",
        &MetricMoments,
        "metric"_a,
        "fixed"_a,
        "moving"_a,
        "gradient"_a,
        "fixed_origin"_a,
        "fixed_index_to_point"_a,
        "fixed_point_to_index"_a,
        "moving_origin"_a,
        "moving_point_to_index"_a,
        "matrix"_a,
        "offset"_a,
        "moment_origin"_a,
        "device"_a,
        "stream"_a,
        "threads"_a,
        "virtual_size"_a = std::vector<double>{},
        "virtual_origin"_a = std::vector<double>{},
        "virtual_index_to_point"_a = std::vector<double>{},
        "mattes"_a = std::vector<double>{},
        "bspline_coefficients"_a.none() = nb::none(),
        "bspline_grid"_a = std::vector<double>{},
        "bspline_sums"_a.none() = nb::none(),
        "One dense evaluation of the registration metric core (cif::DenseMetricMomentsCPU / CUDA) over the virtual "
        "domain (default: the fixed image's grid) with the moving point map p' = matrix p + offset: returns the report "
        "and the core's sums "
        "(count, value, weighted 3 x 4, movingWeighted 3 x 4, fixedSquares, movingSquares, fixedMean, movingMean, "
        "status).");
}

} // namespace cifpy
