/*=========================================================================
 *  CudaImageFilters Python extension: demons registration (cif/Demons.h),
 *  Thirion's and the diffeomorphic ones.
 *  The Python layer gives float32 fixed and moving images, their grids
 *  (the fixed image's origin, spacing and direction; the moving image's
 *  origin and point-to-index matrix; x first), the optional initial field and the output field (float32,
 *  the fixed image's shape plus D components), and ITK's parameters; this
 *  binding runs ITK's iteration loop (its halting on MaximumRMSError too)
 *  and returns the metric and RMS change of every iteration.
 *=========================================================================*/
#include "cifPythonArrays.h"

#include "cif/Demons.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

namespace cifpy
{
namespace
{

using DemonsResult = std::tuple<Report, std::vector<double>, std::vector<double>>;

DemonsResult
Demons(const InArray &                fixed,
       const InArray &                moving,
       const std::optional<InArray> & initial,
       const OutArray &               output,
       const std::vector<double> &    fixedOrigin,
       const std::vector<double> &    fixedSpacing,
       const std::vector<double> &    fixedDirection,
       const std::vector<double> &    movingOrigin,
       const std::vector<double> &    movingPointToIndex,
       int                            iterations,
       const std::vector<double> &    standardDeviations,
       bool                           smoothField,
       bool                           smoothUpdate,
       const std::vector<double> &    updateStandardDeviations,
       double                         maximumError,
       unsigned int                   maximumKernelWidth,
       double                         intensityDifferenceThreshold,
       double                         maximumRMSError,
       const std::string &            device,
       std::uintptr_t                 stream,
       int                            threads,
       bool                           diffeomorphic,
       int                            gradient,
       double                         maximumUpdateStepLength,
       bool                           useFirstOrderExp,
       double                         movingOutside,
       bool                           movingIntegral,
       const std::vector<double> &    fixedPointToIndex,
       const std::vector<double> &    movingSpacing,
       const std::vector<double> &    movingInverseDirection)
{
  const char * name = diffeomorphic ? "diffeomorphic_demons_registration" : "demons_registration";
  const auto   f = Inspect(fixed, "fixed image");
  const auto   m = Inspect(moving, "moving image");
  const auto   out = Inspect(output, "field");
  RequireImageDimension(f, name);
  RequirePixel(f, Pixel::Float32, name);
  RequirePixel(m, Pixel::Float32, name);
  RequirePixel(out, Pixel::Float32, name);
  const int d = f.ndim;
  if (d < 2 || m.ndim != d)
  {
    throw std::invalid_argument(std::string(name) + ": the fixed and moving images must both be 2D or both 3D");
  }
  // the field: the fixed image's shape and D components
  if (out.ndim != d + 1 || out.shape[d] != d)
  {
    throw std::invalid_argument(std::string(name) + ": the field must have the fixed image's shape plus D components");
  }
  for (int a = 0; a < d; ++a)
  {
    if (out.shape[a] != f.shape[a])
    {
      throw std::invalid_argument(std::string(name) + ": the field must have the fixed image's shape");
    }
  }
  std::vector<ArrayInfo> inputs{ f, m };
  if (initial)
  {
    const auto i = Inspect(*initial, "initial field");
    RequirePixel(i, Pixel::Float32, name);
    if (i.ndim != out.ndim || i.Count() != out.Count())
    {
      throw std::invalid_argument(std::string(name) + ": the initial field must have the field's shape");
    }
    for (int a = 0; a < out.ndim; ++a)
    {
      if (i.shape[a] != out.shape[a])
      {
        throw std::invalid_argument(std::string(name) + ": the initial field must have the field's shape");
      }
    }
    inputs.push_back(i);
  }
  if (iterations < 0)
  {
    throw std::invalid_argument(std::string(name) + ": iterations must be at least 0");
  }
  cif::DemonsJob job;
  job.dimension = d;
  double spacing[3]{ 1, 1, 1 };
  double sd[3]{ 1, 1, 1 };
  double usd[3]{ 1, 1, 1 };
  double fo[3]{ 0, 0, 0 };
  double mo[3]{ 0, 0, 0 };
  Axes(standardDeviations, sd, 1.0, "standard_deviations");
  Axes(updateStandardDeviations, usd, 1.0, "update_standard_deviations");
  Axes(fixedSpacing, spacing, 1.0, "fixed spacing");
  Axes(fixedOrigin, fo, 0.0, "fixed origin");
  Axes(movingOrigin, mo, 0.0, "moving origin");
  SquareMatrix(fixedDirection, d, job.direction, name, "the fixed direction");
  SquareMatrix(movingPointToIndex, d, job.moving.pointToIndex, name, "the moving point-to-index matrix");
  for (int a = 0; a < d; ++a)
  {
    job.size[a] = f.Size(a);
    job.moving.size[a] = m.Size(a);
    job.origin[a] = fo[a];
    job.moving.origin[a] = mo[a];
    job.standardDeviations[a] = sd[a];
    job.updateStandardDeviations[a] = usd[a];
    job.spacing[a] = spacing[a];
    // ITK's index-to-point matrix: direction times diag(spacing)
    for (int r = 0; r < d; ++r)
    {
      job.indexToPoint[r][a] = job.direction[r][a] * spacing[a];
    }
  }
  job.smoothField = smoothField;
  job.smoothUpdate = smoothUpdate;
  job.maximumError = maximumError;
  job.maximumKernelWidth = maximumKernelWidth;
  job.intensityDifferenceThreshold = intensityDifferenceThreshold;
  if (diffeomorphic)
  {
    job.variant = cif::DemonsVariant::Diffeomorphic;
    job.gradient = static_cast<cif::DemonsGradient>(gradient);
    job.maximumUpdateStepLength = maximumUpdateStepLength;
    job.useFirstOrderExp = useFirstOrderExp;
    job.movingOutside = static_cast<float>(movingOutside);
    job.movingIntegral = movingIntegral;
    double ms[3]{ 1, 1, 1 };
    Axes(movingSpacing, ms, 1.0, "moving spacing");
    SquareMatrix(fixedPointToIndex, d, job.pointToIndex, name, "the fixed point-to-index matrix");
    SquareMatrix(movingInverseDirection, d, job.movingInverseDirection, name, "the moving inverse direction");
    for (int a = 0; a < d; ++a)
    {
      job.movingSpacing[a] = ms[a];
    }
  }
  const std::string problem = cif::ValidateDemonsJob(job);
  if (!problem.empty())
  {
    throw std::invalid_argument(std::string(name) + ": " + problem);
  }
  if (!std::isfinite(maximumRMSError))
  {
    throw std::invalid_argument(std::string(name) + ": maximum_rms_error must be finite");
  }

  std::vector<double> metrics;
  std::vector<double> changes;
  // ITK's FiniteDifferenceImageFilter loop: Halt before each iteration
  auto loop = [&](cif::DemonsSolver & solver)
  {
    metrics.clear();
    changes.clear();
    double metric = std::numeric_limits<double>::max();
    double rms = std::numeric_limits<double>::max();
    for (int it = 0; it < iterations; ++it)
    {
      if (it > 0 && maximumRMSError > rms)
      {
        break;
      }
      const cif::DemonsSums s = solver.Iterate();
      if (s.pixelsProcessed > 0)
      {
        const double n = static_cast<double>(s.pixelsProcessed);
        metric = s.sumOfSquaredDifference / n;
        rms = std::sqrt(s.sumOfSquaredChange / n);
      }
      metrics.push_back(metric);
      changes.push_back(rms);
    }
  };
  std::string gpuProblem = cif::DemonsCUDAIsCompiled() ? "" : "this build has no CUDA code";
  const bool  hasInitial = initial.has_value();
  Report      report = RunJob(
    name,
    device,
    gpuProblem,
    inputs,
    { out },
    stream,
    [&](const JobPointers & q)
    {
      auto solver = cif::MakeDemonsSolverCUDA(job,
                                              static_cast<const float *>(q.in[0]),
                                              static_cast<const float *>(q.in[1]),
                                              hasInitial ? static_cast<const float *>(q.in[2]) : nullptr,
                                              true);
      loop(*solver);
      solver->ReadField(static_cast<float *>(q.out[0]), true);
    },
    [&](const JobPointers & q)
    {
      auto solver = cif::MakeDemonsSolverCPU(job,
                                             static_cast<const float *>(q.in[0]),
                                             static_cast<const float *>(q.in[1]),
                                             hasInitial ? static_cast<const float *>(q.in[2]) : nullptr,
                                             Threads(threads));
      loop(*solver);
      solver->ReadField(static_cast<float *>(q.out[0]));
    });
  std::get<1>(report) += "; " + std::to_string(metrics.size()) + " iterations";
  return { report, metrics, changes };
}

} // namespace

void
RegisterDemons(nb::module_ & m)
{
  using namespace nb::literals;
  m.def("demons",
        &Demons,
        "fixed"_a,
        "moving"_a,
        "initial"_a.none(),
        "output"_a,
        "fixed_origin"_a,
        "fixed_spacing"_a,
        "fixed_direction"_a,
        "moving_origin"_a,
        "moving_point_to_index"_a,
        "iterations"_a,
        "standard_deviations"_a,
        "smooth_field"_a,
        "smooth_update"_a,
        "update_standard_deviations"_a,
        "maximum_error"_a,
        "maximum_kernel_width"_a,
        "intensity_difference_threshold"_a,
        "maximum_rms_error"_a,
        "device"_a,
        "stream"_a,
        "threads"_a,
        "diffeomorphic"_a = false,
        "gradient"_a = 0,
        "maximum_update_step_length"_a = 0.5,
        "use_first_order_exp"_a = false,
        "moving_outside"_a = 3.4028234663852886e38,
        "moving_integral"_a = false,
        "fixed_point_to_index"_a = std::vector<double>{},
        "moving_spacing"_a = std::vector<double>{},
        "moving_inverse_direction"_a = std::vector<double>{},
        "Demons registration (cif::MakeDemonsSolverCPU / CUDA) with ITK's iteration loop, Thirion's or with "
        "diffeomorphic the diffeomorphic ones: float32 images, their "
        "grids (x first, matrices row by row), the field (float32, the fixed shape plus D components); returns the "
        "report and the metric and RMS change of every iteration.");
}

} // namespace cifpy
