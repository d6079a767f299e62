/*=========================================================================
 *  CudaImageFilters Python extension: resampling on the GPU (the CPU path
 *  is ITK's own filter, called from Python) and the cubic B-spline
 *  coefficients with batch evaluation of values and gradients.
 *=========================================================================*/
#include "cifPythonArrays.h"

#include "cif/BSplineEvaluate.h"
#include "cif/BSplinePrefilter.h"
#include "cif/Resample.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <limits>
#include <optional>

namespace cifpy
{
namespace
{

/** A 3 x 3 matrix from 9 numbers, row-major. */
void
Matrix3(const std::vector<double> & values, double out[3][3], const char * what)
{
  if (values.size() != 9)
  {
    throw std::invalid_argument(std::string(what) + ": 9 numbers (a 3 x 3 matrix, row-major)");
  }
  for (int i = 0; i < 3; ++i)
  {
    for (int j = 0; j < 3; ++j)
    {
      out[i][j] = values[3 * i + j];
    }
  }
}

void
Vector3(const std::vector<double> & values, double out[3], const char * what)
{
  Axes(values, out, 0.0, what);
}

cif::Interpolation
ParseInterpolation(const std::string & text)
{
  if (text == "nearest")
    return cif::Interpolation::NearestNeighbor;
  if (text == "linear")
    return cif::Interpolation::Linear;
  if (text == "bspline")
    return cif::Interpolation::CubicBSpline;
  throw std::invalid_argument("interpolator must be 'nearest', 'linear' or 'bspline', not '" + text + "'");
}

/** Copies of device arrays on the host, for the chunked path. */
std::vector<unsigned char>
HostCopy(const ArrayInfo & a)
{
  std::vector<unsigned char> host(a.bytes);
  if (a.onGpu)
  {
    cif::Runtime::CopyDeviceToHost(host.data(), a.data, a.bytes);
  }
  else
  {
    std::copy_n(static_cast<const unsigned char *>(a.data), a.bytes, host.data());
  }
  return host;
}

/** The resample of one pixel type on the GPU, whole or, when the device is
 * too small, in output chunks (as itk::CudaResampleImageFilter). Returns the
 * number of chunks (0: in one piece). */
template <typename T>
int
ResampleOnGpu(const ArrayInfo &                in,
              const ArrayInfo &                out,
              cif::ResampleGeometry            g,
              const cif::ResampleParameters &  p,
              const cif::PrefilterParameters & pp,
              const ArrayInfo *                gridValues)
{
  using Coefficient = std::conditional_t<std::is_same<T, double>::value, double, float>;
  const bool             cubic = p.interpolation == cif::Interpolation::CubicBSpline;
  cif::PrefilterGeometry pg;
  for (int a = 0; a < 3; ++a)
  {
    pg.imageSize[a] = pg.inputSize[a] = pg.outputSize[a] = g.inputSize[a];
  }
  const std::size_t pixels = static_cast<std::size_t>(in.Count());
  cif::DeviceBuffer grid;
  if (gridValues != nullptr)
  {
    if (gridValues->onGpu)
    {
      g.grid.values = static_cast<const double *>(gridValues->data);
    }
    else
    {
      grid.Allocate(gridValues->bytes);
      grid.CopyFromHost(gridValues->data, gridValues->bytes);
      g.grid.values = static_cast<const double *>(grid.GetPointer());
    }
  }
  cif::DeviceBuffer coefficients;
  bool              coefficientsReady = false;
  try
  {
    cif::DeviceBuffer inBuffer, outBuffer;
    const T *         source = static_cast<const T *>(in.data);
    T *               target = static_cast<T *>(out.data);
    if (!in.onGpu)
    {
      inBuffer.Allocate(in.bytes);
      inBuffer.CopyFromHost(in.data, in.bytes);
      source = static_cast<const T *>(inBuffer.GetPointer());
    }
    if (cubic)
    {
      coefficients.Allocate(pixels * sizeof(Coefficient));
      auto * c = static_cast<Coefficient *>(coefficients.GetPointer());
      cif::PrefilterCUDA(source, c, pg, pp);
      coefficientsReady = true;
      inBuffer.Release();
      if (!out.onGpu)
      {
        outBuffer.Allocate(out.bytes);
        target = static_cast<T *>(outBuffer.GetPointer());
      }
      cif::ResampleCUDA(static_cast<const Coefficient *>(c), target, g, p);
    }
    else
    {
      if (!out.onGpu)
      {
        outBuffer.Allocate(out.bytes);
        target = static_cast<T *>(outBuffer.GetPointer());
      }
      cif::ResampleCUDA(source, target, g, p);
    }
    if (!out.onGpu)
    {
      outBuffer.CopyToHost(out.data, out.bytes);
    }
    return 0;
  }
  catch (const cif::CudaOutOfMemory &)
  {
    // output chunks, each uploading only the part of the input it reads
    std::vector<unsigned char> hostOut(out.onGpu ? out.bytes : 0);
    T *                        target = out.onGpu ? reinterpret_cast<T *>(hostOut.data()) : static_cast<T *>(out.data);
    int                        chunks = 0;
    if (cubic)
    {
      std::vector<Coefficient> host(pixels);
      if (coefficientsReady)
      {
        coefficients.CopyToHost(host.data(), coefficients.GetSize());
      }
      else
      {
        const auto source = HostCopy(in);
        cif::PrefilterCPU(reinterpret_cast<const T *>(source.data()), host.data(), pg, pp, Threads(0));
      }
      coefficients.Release();
      chunks = cif::ResampleCUDAInChunks(static_cast<const Coefficient *>(host.data()), target, g, p);
    }
    else if (in.onGpu)
    {
      const auto source = HostCopy(in);
      chunks = cif::ResampleCUDAInChunks(reinterpret_cast<const T *>(source.data()), target, g, p);
    }
    else
    {
      chunks = cif::ResampleCUDAInChunks(static_cast<const T *>(in.data), target, g, p);
    }
    if (out.onGpu)
    {
      cif::Runtime::CopyHostToDevice(out.data, hostOut.data(), out.bytes);
    }
    return chunks;
  }
}

Report
ResampleGpu(const InArray &             input,
            const OutArray &            output,
            const std::vector<double> & inputOrigin,
            const std::vector<double> & inputIndexToPoint,
            const std::vector<double> & inputPointToIndex,
            const std::vector<double> & outputOrigin,
            const std::vector<double> & outputIndexToPoint,
            const std::vector<double> & matrix,
            const std::vector<double> & offset,
            const std::string &         gridKind,
            std::optional<InArray>      gridValues,
            const std::vector<double> & gridOrigin,
            const std::vector<double> & gridPointToIndex,
            const std::string &         interpolator,
            double                      defaultValue,
            const std::string &         prefilter,
            int                         firHalfWidth,
            bool                        fast,
            std::uintptr_t              stream)
{
  const char * name = "resample_image_filter";
  const auto   in = Inspect(input, "image");
  const auto   out = Inspect(output, "output");
  if (in.ndim != 2 && in.ndim != 3)
  {
    throw std::invalid_argument(std::string(name) + ": the GPU resamples 2D and 3D images");
  }
  if (out.ndim != in.ndim || in.Count() == 0 || out.Count() == 0)
  {
    throw std::invalid_argument(std::string(name) + ": empty image or output grid, or a different dimension");
  }
  RequirePixel(out, in.pixel, name);
  if (in.onGpu != out.onGpu)
  {
    throw std::invalid_argument(std::string(name) + ": the arrays must all be on the GPU or all in host memory");
  }
  const int         D = in.ndim;
  cif::ResampleGrid inGrid, outGrid;
  Vector3(inputOrigin, inGrid.origin, "input origin");
  Matrix3(inputIndexToPoint, inGrid.indexToPoint, "input index-to-point");
  Matrix3(inputPointToIndex, inGrid.pointToIndex, "input point-to-index");
  Vector3(outputOrigin, outGrid.origin, "output origin");
  Matrix3(outputIndexToPoint, outGrid.indexToPoint, "output index-to-point");
  for (int a = 0; a < 3; ++a)
  {
    inGrid.bufferSize[a] = in.Size(a);
    outGrid.bufferSize[a] = out.Size(a);
  }
  outGrid.lineFirst = 0;
  outGrid.lineLength = out.Size(0);
  double A[3][3], b[3];
  Matrix3(matrix, A, "matrix");
  Vector3(offset, b, "offset");
  cif::ResampleGeometry g = cif::ResampleGeometryFor(D, inGrid, outGrid, A, b);

  std::optional<ArrayInfo> grid;
  if (gridKind != "none")
  {
    if (!gridValues)
    {
      throw std::invalid_argument(std::string(name) + ": a grid transform needs its values");
    }
    grid = Inspect(*gridValues, "transform grid");
    RequirePixel(*grid, Pixel::Float64, name);
    if (grid->ndim != D + 1 || grid->shape[D] != D)
    {
      throw std::invalid_argument(std::string(name) + ": the transform grid holds D doubles per grid point");
    }
    if (grid->onGpu != in.onGpu)
    {
      throw std::invalid_argument(std::string(name) + ": the transform grid must be on the image's side");
    }
    g.grid.kind = gridKind == "displacement_field" ? cif::GridTransformKind::DisplacementField
                  : gridKind == "bspline"          ? cif::GridTransformKind::CubicBSpline
                                                   : throw std::invalid_argument("unknown grid transform");
    for (int a = 0; a < 3; ++a)
    {
      // the grid array is (..., D): its image axes are the first D
      g.grid.size[a] = a < D ? grid->shape[D - 1 - a] : 1;
      g.grid.start[a] = 0;
    }
    Vector3(gridOrigin, g.grid.origin, "grid origin");
    Matrix3(gridPointToIndex, g.grid.pointToIndex, "grid point-to-index");
  }

  cif::ResampleParameters p;
  p.interpolation = ParseInterpolation(interpolator);
  p.defaultValue = defaultValue;
  cif::PrefilterParameters pp;
  if (prefilter == "recursive")
    pp.method = cif::PrefilterMethod::Recursive;
  else if (prefilter == "fir")
    pp.method = cif::PrefilterMethod::FIR;
  else
    throw std::invalid_argument(std::string(name) + ": prefilter must be 'recursive' or 'fir'");
  pp.firHalfWidth = firHalfWidth;

  int  chunks = 0;
  auto run = [&](auto tag)
  {
    using T = decltype(tag);
    p.outputMin = static_cast<double>(std::numeric_limits<T>::lowest());
    p.outputMax = static_cast<double>(std::numeric_limits<T>::max());
    p.fastTexture = fast && p.interpolation == cif::Interpolation::CubicBSpline && !std::is_same<T, double>::value;
    const int              device = CommonGpuDevice(name, { &in, &out, grid ? &*grid : nullptr });
    nb::gil_scoped_release release;
    GpuCallScope           scope(device, in.onGpu ? reinterpret_cast<void *>(stream) : nullptr);
    chunks = ResampleOnGpu<T>(in, out, g, p, pp, grid ? &*grid : nullptr);
  };
  if (!cif::ResampleCUDAIsCompiled() || !cif::Runtime::IsDeviceAvailable())
  {
    throw cif::GpuUnavailable(std::string(name) + ": GPU execution was requested but is impossible: " +
                              (cif::ResampleCUDAIsCompiled() ? cif::Runtime::GetUnavailableReason()
                                                             : std::string("this build has no CUDA code")));
  }
  switch (in.pixel)
  {
    case Pixel::UInt8:
      run(static_cast<unsigned char>(0));
      break;
    case Pixel::Int16:
      run(static_cast<short>(0));
      break;
    case Pixel::UInt16:
      run(static_cast<unsigned short>(0));
      break;
    case Pixel::Float32:
      run(0.0f);
      break;
    case Pixel::Float64:
      run(0.0);
      break;
    default:
      throw nb::type_error(
        (std::string(name) + ": the GPU resamples uint8, int16, uint16, float32 and float64").c_str());
  }
  std::string message = "GPU: " + cif::Runtime::GetDeviceDescription();
  if (chunks > 0)
  {
    message += " (in " + std::to_string(chunks) + " output chunks: the whole job did not fit the device memory" +
               (fast ? "; cubic evaluated in the accurate mode, which chunks need)" : ")");
  }
  // the Python side decided the device (decide_gpu): the run's line is said here
  cif::ExecutionReport report;
  report.Device = cif::ExecutedOn::GPU;
  report.Message = message;
  cif::ReportRunIfVerbose(name, report);
  return Report("GPU", message, false);
}

/** Cubic B-spline coefficients of an image, kept where they were computed
 * (device memory or host memory), for repeated batch evaluations. */
class Coefficients
{
public:
  Coefficients(const InArray &     image,
               const std::string & device,
               const std::string & method,
               int                 firHalfWidth,
               bool                doublePrecision,
               std::uintptr_t      stream,
               int                 threads)
  {
    const char * name = "BSplineInterpolator";
    const auto   in = Inspect(image, "image");
    if (in.ndim != 2 && in.ndim != 3)
    {
      throw std::invalid_argument(std::string(name) + ": 2D and 3D images");
    }
    RequireImageDimension(in, name);
    m_Dimension = in.ndim;
    m_Double = doublePrecision;
    cif::PrefilterGeometry   g;
    cif::PrefilterParameters p;
    for (int a = 0; a < 3; ++a)
    {
      m_Size[a] = in.Size(a);
      g.imageSize[a] = g.inputSize[a] = g.outputSize[a] = in.Size(a);
    }
    p.method = method == "fir" ? cif::PrefilterMethod::FIR : cif::PrefilterMethod::Recursive;
    if (method != "fir" && method != "recursive")
    {
      throw std::invalid_argument(std::string(name) + ": prefilter must be 'recursive' or 'fir'");
    }
    p.firHalfWidth = firHalfWidth;
    const std::string problem = cif::ValidatePrefilterJob(g, p);
    if (!problem.empty())
    {
      throw std::invalid_argument(std::string(name) + ": " + problem);
    }
    const std::size_t count = static_cast<std::size_t>(in.Count());
    const std::size_t bytes = count * (m_Double ? sizeof(double) : sizeof(float));
    auto              withInput = [&](auto tag)
    {
      using TIn = decltype(tag);
      auto withOutput = [&](auto tagOut)
      {
        using TOut = decltype(tagOut);
        nb::gil_scoped_release release;
        // on the image's device (a host image: the current device)
        GpuCallScope           scope(in.device, in.onGpu ? reinterpret_cast<void *>(stream) : nullptr);
        auto                   gpu = [&]
        {
          m_Device.Allocate(bytes);
          if (in.onGpu)
          {
            cif::PrefilterCUDA(static_cast<const TIn *>(in.data), static_cast<TOut *>(m_Device.GetPointer()), g, p);
          }
          else
          {
            cif::DeviceBuffer source(in.bytes);
            source.CopyFromHost(in.data, in.bytes);
            cif::PrefilterCUDA(
              static_cast<const TIn *>(source.GetPointer()), static_cast<TOut *>(m_Device.GetPointer()), g, p);
          }
          m_OnGpu = true;
        };
        auto cpu = [&]
        {
          m_Device.Release();
          m_Host.assign(bytes, 0);
          if (in.onGpu)
          {
            std::vector<unsigned char> host(in.bytes);
            cif::Runtime::CopyDeviceToHost(host.data(), in.data, in.bytes);
            cif::PrefilterCPU(reinterpret_cast<const TIn *>(host.data()),
                              reinterpret_cast<TOut *>(m_Host.data()),
                              g,
                              p,
                              Threads(threads));
          }
          else
          {
            cif::PrefilterCPU(
              static_cast<const TIn *>(in.data), reinterpret_cast<TOut *>(m_Host.data()), g, p, Threads(threads));
          }
          m_OnGpu = false;
        };
        const bool cudaCompiled = cif::PrefilterCUDAIsCompiled() && cif::BSplineEvaluateCUDAIsCompiled();
        m_Report =
          cif::RunWithFallback(ParseMode(device), cudaCompiled ? "" : "this build has no CUDA code", name, gpu, cpu);
      };
      if (m_Double)
        withOutput(0.0);
      else
        withOutput(0.0f);
    };
    switch (in.pixel)
    {
      case Pixel::UInt8:
        withInput(static_cast<unsigned char>(0));
        break;
      case Pixel::Int16:
        withInput(static_cast<short>(0));
        break;
      case Pixel::UInt16:
        withInput(static_cast<unsigned short>(0));
        break;
      case Pixel::Float32:
        withInput(0.0f);
        break;
      case Pixel::Float64:
        withInput(0.0);
        break;
      default:
        throw nb::type_error((std::string(name) + ": pixel type " + in.dtype +
                              " is not supported; use uint8, int16, uint16, float32 or float64")
                               .c_str());
    }
  }

  bool
  OnGpu() const
  {
    return m_OnGpu;
  }
  Report
  ConstructionReport() const
  {
    return ToReport(m_Report);
  }

  /** Values, gradients and inside flags at N points (N x D doubles). The
   * outputs may be None; they and the points are host arrays or GPU arrays
   * (all on one side), moved to the coefficients' side when needed. */
  Report
  Evaluate(const InArray &             points,
           std::optional<OutArray>     values,
           std::optional<OutArray>     gradients,
           std::optional<OutArray>     inside,
           bool                        pointsAreIndices,
           const std::vector<double> & origin,
           const std::vector<double> & pointToIndex,
           const std::vector<double> & spacing,
           const std::vector<double> & gradientMatrix,
           std::uintptr_t              stream,
           int                         threads)
  {
    const char * name = "BSplineInterpolator.evaluate";
    const auto   pts = Inspect(points, "points");
    RequirePixel(pts, Pixel::Float64, name);
    if (pts.ndim != 2 || pts.shape[1] != m_Dimension)
    {
      throw std::invalid_argument(std::string(name) + ": points must be an (N, " + std::to_string(m_Dimension) +
                                  ") array");
    }
    const std::int64_t     n = pts.shape[0];
    std::vector<ArrayInfo> outs;
    auto                   check = [&](const std::optional<OutArray> & a, const char * what, Pixel pixel, int perPoint)
    {
      if (!a)
      {
        return;
      }
      ArrayInfo info = Inspect(*a, what);
      RequirePixel(info, pixel, name);
      if (info.Count() != n * perPoint || info.onGpu != pts.onGpu)
      {
        throw std::invalid_argument(std::string(name) + ": " + what + " must hold " + std::to_string(perPoint) +
                                    " values per point, on the points' side");
      }
      outs.push_back(info);
    };
    check(values, "values", Pixel::Float64, 1);
    check(gradients, "gradients", Pixel::Float64, m_Dimension);
    check(inside, "inside", Pixel::UInt8, 1);

    cif::BSplineEvaluateGeometry g;
    g.dimension = m_Dimension;
    for (int a = 0; a < 3; ++a)
    {
      g.size[a] = m_Size[a];
      g.start[a] = 0;
    }
    Vector3(origin, g.origin, "origin");
    Matrix3(pointToIndex, g.pointToIndex, "point-to-index");
    Vector3(spacing, g.spacing, "spacing");
    Matrix3(gradientMatrix, g.gradientMatrix, "gradient matrix");

    // on the coefficients' device: GPU points must be there too
    const int coefficientDevice = m_OnGpu ? m_Device.GetDevice() : -1;
    if (pts.onGpu && m_OnGpu && pts.device != coefficientDevice)
    {
      throw std::invalid_argument(std::string(name) + ": the points are on CUDA device " + std::to_string(pts.device) +
                                  " and the coefficients on CUDA device " + std::to_string(coefficientDevice) +
                                  "; they must be on one device");
    }
    std::vector<const ArrayInfo *> all{ &pts };
    for (const auto & o : outs)
    {
      all.push_back(&o);
    }
    const int arraysDevice = CommonGpuDevice(name, all);
    nb::gil_scoped_release release;
    // CPU coefficients with GPU points: the points' device, with the points' stream
    GpuCallScope scope(m_OnGpu ? coefficientDevice : arraysDevice, pts.onGpu ? reinterpret_cast<void *>(stream) : nullptr);
    // the batch's pointers on the coefficients' side
    std::vector<cif::DeviceBuffer>          device;
    std::vector<std::vector<unsigned char>> host;
    auto                                    stage = [&](const ArrayInfo & a, bool copyIn) -> void *
    {
      if (a.onGpu == m_OnGpu)
      {
        return a.data;
      }
      if (m_OnGpu)
      {
        device.emplace_back(a.bytes);
        if (copyIn)
        {
          device.back().CopyFromHost(a.data, a.bytes);
        }
        return device.back().GetPointer();
      }
      host.emplace_back(a.bytes);
      if (copyIn)
      {
        cif::Runtime::CopyDeviceToHost(host.back().data(), a.data, a.bytes);
      }
      return host.back().data();
    };
    device.reserve(4);
    host.reserve(4);
    cif::BSplineEvaluateBatch b;
    b.count = n;
    b.points = static_cast<const double *>(stage(pts, true));
    b.pointsAreIndices = pointsAreIndices;
    std::vector<void *> staged;
    for (const auto & o : outs)
    {
      staged.push_back(stage(o, false));
    }
    std::size_t k = 0;
    if (values)
      b.values = static_cast<double *>(staged[k++]);
    if (gradients)
      b.gradients = static_cast<double *>(staged[k++]);
    if (inside)
      b.inside = static_cast<std::uint8_t *>(staged[k++]);

    if (m_OnGpu)
    {
      if (m_Double)
        cif::BSplineEvaluateCUDA(static_cast<const double *>(m_Device.GetPointer()), g, b);
      else
        cif::BSplineEvaluateCUDA(static_cast<const float *>(m_Device.GetPointer()), g, b);
    }
    else
    {
      if (m_Double)
        cif::BSplineEvaluateCPU(reinterpret_cast<const double *>(m_Host.data()), g, b, Threads(threads));
      else
        cif::BSplineEvaluateCPU(reinterpret_cast<const float *>(m_Host.data()), g, b, Threads(threads));
    }
    // results back to the caller's side
    for (std::size_t i = 0; i < outs.size(); ++i)
    {
      if (outs[i].onGpu == m_OnGpu)
      {
        continue;
      }
      if (m_OnGpu)
      {
        cif::Runtime::CopyDeviceToHost(outs[i].data, staged[i], outs[i].bytes);
      }
      else
      {
        cif::Runtime::CopyHostToDevice(outs[i].data, staged[i], outs[i].bytes);
      }
    }
    return Report(m_OnGpu ? "GPU" : "CPU", m_Report.Message, false);
  }

private:
  int                        m_Dimension{ 3 };
  bool                       m_Double{ true };
  bool                       m_OnGpu{ false };
  std::int64_t               m_Size[3]{ 1, 1, 1 };
  cif::DeviceBuffer          m_Device;
  std::vector<unsigned char> m_Host;
  cif::ExecutionReport       m_Report;
};

} // namespace

void
RegisterResample(nb::module_ & m)
{
  using namespace nb::literals;
  m.def("resample_gpu",
        &ResampleGpu,
        "image"_a,
        "output"_a,
        "input_origin"_a,
        "input_index_to_point"_a,
        "input_point_to_index"_a,
        "output_origin"_a,
        "output_index_to_point"_a,
        "matrix"_a,
        "offset"_a,
        "grid_kind"_a,
        "grid_values"_a.none(),
        "grid_origin"_a,
        "grid_point_to_index"_a,
        "interpolator"_a,
        "default_value"_a,
        "prefilter"_a,
        "fir_half_width"_a,
        "fast"_a,
        "stream"_a,
        "Resamples on the GPU through p_in = matrix p_out + offset (physical points) or a grid transform.");
  nb::class_<Coefficients>(m, "Coefficients")
    .def(nb::init<const InArray &, const std::string &, const std::string &, int, bool, std::uintptr_t, int>(),
         "image"_a,
         "device"_a,
         "method"_a,
         "fir_half_width"_a,
         "double_precision"_a,
         "stream"_a,
         "threads"_a)
    .def_prop_ro("on_gpu", &Coefficients::OnGpu)
    .def("report", &Coefficients::ConstructionReport)
    .def("evaluate",
         &Coefficients::Evaluate,
         "points"_a,
         "values"_a.none(),
         "gradients"_a.none(),
         "inside"_a.none(),
         "points_are_indices"_a,
         "origin"_a,
         "point_to_index"_a,
         "spacing"_a,
         "gradient_matrix"_a,
         "stream"_a,
         "threads"_a);
}

} // namespace cifpy
