/*=========================================================================
 *  CudaImageFilters: benchmark of the resampling family (an executable, not
 *  a test). In one run: the GPU core (cubic with its prefilter, cubic alone,
 *  linear, nearest) on device-resident float32 data, and ITK's CPU
 *  itk::ResampleImageFilter on all cores, for a 3D rotation and for 2D zooms
 *  to a 2048^2 output (seed 001, table 3), and the whole path through
 *  CudaResampleImageFilter with plain itk::Image in and out. Prints ms, GB/s (input read once
 *  plus output written once) and the fraction of the measured copy bandwidth.
 *
 *    ResampleBenchmark [--reps N] [--skip-itk] [--size3d N]
 *=========================================================================*/
#include "BenchmarkCommon.h"
#include "cif/BSplinePrefilter.h"
#include "cif/Resample.h"
#include "itkBSplineInterpolateImageFunction.h"
#include "itkCudaResampleImageFilter.h"
#include "cif/Runtime.h"
#include "itkCudaExecution.h"
#include "itkEuler3DTransform.h"
#include "itkLinearInterpolateImageFunction.h"
#include "itkMultiThreaderBase.h"
#include "itkResampleImageFilter.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace
{
using namespace cif_bench;

/** Index-space rotation about the centre: c = R (o - centre) + centre. */
cif::ResampleGeometry
RotationGeometry(std::int64_t n, double degrees)
{
  cif::ResampleGeometry g;
  const double          a = degrees * 3.14159265358979 / 180.0, b = 0.5 * a;
  // rotation about z by a, then about x by b
  const double rz[3][3] = { { std::cos(a), -std::sin(a), 0 }, { std::sin(a), std::cos(a), 0 }, { 0, 0, 1 } };
  const double rx[3][3] = { { 1, 0, 0 }, { 0, std::cos(b), -std::sin(b) }, { 0, std::sin(b), std::cos(b) } };
  const double centre = 0.5 * (n - 1);
  for (int i = 0; i < 3; ++i)
  {
    g.inputSize[i] = g.outputSize[i] = n;
    g.offset[i] = centre;
    for (int j = 0; j < 3; ++j)
    {
      g.matrix[i][j] = 0;
      for (int k = 0; k < 3; ++k)
      {
        g.matrix[i][j] += rx[i][k] * rz[k][j];
      }
      g.offset[i] -= g.matrix[i][j] * centre;
    }
  }
  return g;
}

/** A 2D zoom by `factor` to an output of n x n. */
cif::ResampleGeometry
ZoomGeometry(std::int64_t n, int factor)
{
  cif::ResampleGeometry g;
  g.inputSize[0] = g.inputSize[1] = n / factor;
  g.outputSize[0] = g.outputSize[1] = n;
  for (int i = 0; i < 3; ++i)
  {
    for (int j = 0; j < 3; ++j)
    {
      g.matrix[i][j] = (i == j && i < 2) ? 1.0 / factor : 0.0;
    }
    g.offset[i] = i < 2 ? 0.5 / factor - 0.5 : 0.0;
  }
  return g;
}

std::vector<float>
RandomVolume(std::size_t count)
{
  std::vector<float>                    v(count);
  std::mt19937                          rng(7);
  std::uniform_real_distribution<float> d(0.f, 1000.f);
  for (auto & x : v)
  {
    x = d(rng);
  }
  return v;
}

} // namespace

int
main(int argc, char * argv[])
{
  int          reps = 20;
  bool         skipItk = false;
  std::int64_t n3 = 512;
  for (int i = 1; i < argc; ++i)
  {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc)
    {
      reps = std::max(1, std::atoi(argv[++i]));
    }
    else if (!std::strcmp(argv[i], "--skip-itk"))
    {
      skipItk = true;
    }
    else if (!std::strcmp(argv[i], "--size3d") && i + 1 < argc)
    {
      n3 = std::max(8, std::atoi(argv[++i]));
    }
    else
    {
      std::printf("usage: %s [--reps N] [--skip-itk] [--size3d N]\n", argv[0]);
      return 2;
    }
  }
  std::vector<Row>  rows;
  double            copy = 0;
  const auto        rotation = RotationGeometry(n3, 10.0);
  const std::string c3 = std::to_string(n3) + "^3 rotation";
  const double      volumeBytes = 4.0 * n3 * n3 * n3;

#ifdef CUDAIMAGEFILTERS_WITH_CUDA
  if (cif::Runtime::IsDeviceAvailable())
  {
    copy = CopyBandwidth();
    const auto            host = RandomVolume(static_cast<std::size_t>(n3 * n3 * n3));
    cif::DeviceBuffer in(host.size() * 4), coef(host.size() * 4), out(host.size() * 4);
    in.CopyFromHost(host.data(), host.size() * 4);
    auto *                 pin = static_cast<const float *>(in.GetPointer());
    auto *                 pcoef = static_cast<float *>(coef.GetPointer());
    auto *                 pout = static_cast<float *>(out.GetPointer());
    cif::PrefilterGeometry pg;
    for (int a = 0; a < 3; ++a)
    {
      pg.imageSize[a] = pg.inputSize[a] = pg.outputSize[a] = n3;
    }
    cif::PrefilterParameters recursive, fir;
    fir.method = cif::PrefilterMethod::FIR;
    cif::ResampleParameters cubic, linear, nearest;
    cubic.interpolation = cif::Interpolation::CubicBSpline;
    linear.interpolation = cif::Interpolation::Linear;
    nearest.interpolation = cif::Interpolation::NearestNeighbor;
    const double io = 2 * volumeBytes;
    rows.push_back({ c3,
                     "GPU cubic: recursive prefilter + resample",
                     TimeGpu(
                       [&]
                       {
                         cif::PrefilterCUDA(pin, pcoef, pg, recursive);
                         cif::ResampleCUDA<float, float>(pcoef, pout, rotation, cubic);
                       },
                       reps),
                     io });
    rows.push_back({ c3,
                     "GPU cubic: resample only (accurate, 64 taps)",
                     TimeGpu([&] { cif::ResampleCUDA<float, float>(pcoef, pout, rotation, cubic); }, reps),
                     io });
    cif::ResampleParameters fast = cubic;
    fast.fastTexture = true;
    rows.push_back({ c3,
                     "GPU cubic: recursive prefilter + fast resample",
                     TimeGpu(
                       [&]
                       {
                         cif::PrefilterCUDA(pin, pcoef, pg, recursive);
                         cif::ResampleCUDA<float, float>(pcoef, pout, rotation, fast);
                       },
                       reps),
                     io });
    rows.push_back({ c3,
                     "GPU cubic: fast resample only (8 texture fetches)",
                     TimeGpu([&] { cif::ResampleCUDA<float, float>(pcoef, pout, rotation, fast); }, reps),
                     io });
    rows.push_back({ c3,
                     "GPU linear resample",
                     TimeGpu([&] { cif::ResampleCUDA<float, float>(pin, pout, rotation, linear); }, reps),
                     io });
    // the same rotation through the ITK-exact coordinate path that
    // CudaResampleImageFilter uses (identity grids, the rotation as the transform)
    cif::ResampleGeometry exact = rotation;
    exact.itkExact = true;
    exact.dimension = 3;
    exact.lineFirst = 0;
    exact.lineLength = n3;
    for (int i = 0; i < 3; ++i)
    {
      exact.transformOffset[i] = rotation.offset[i];
      for (int j = 0; j < 3; ++j)
      {
        exact.outputIndexToPoint[i][j] = exact.inputPointToIndex[i][j] = i == j ? 1.0 : 0.0;
        exact.transformMatrix[i][j] = rotation.matrix[i][j];
      }
    }
    rows.push_back({ c3,
                     "GPU cubic, ITK-exact coordinates (the filter's path)",
                     TimeGpu([&] { cif::ResampleCUDA<float, float>(pcoef, pout, exact, cubic); }, reps),
                     io });
    rows.push_back({ c3,
                     "GPU linear, ITK-exact coordinates (the filter's path)",
                     TimeGpu([&] { cif::ResampleCUDA<float, float>(pin, pout, exact, linear); }, reps),
                     io });
    rows.push_back({ c3,
                     "GPU nearest resample",
                     TimeGpu([&] { cif::ResampleCUDA<float, float>(pin, pout, rotation, nearest); }, reps),
                     io });
    {
      // the whole path a C++ user takes: the ITK class with plain itk::Image
      // in and out and ITK's own cubic interpolator (upload, prefilter,
      // resample, download into the output image); wall time
      using Image = itk::Image<float, 3>;
      auto image = Image::New();
      image->SetRegions(Image::SizeType{ { static_cast<itk::SizeValueType>(n3),
                                           static_cast<itk::SizeValueType>(n3),
                                           static_cast<itk::SizeValueType>(n3) } });
      image->Allocate();
      std::copy(host.begin(), host.end(), image->GetBufferPointer());
      auto             transform = itk::Euler3DTransform<double>::New();
      Image::PointType centre;
      centre.Fill(0.5 * (n3 - 1));
      transform->SetCenter(centre);
      transform->SetRotation(0.5 * 10.0 * 3.14159265358979 / 180.0, 0.0, 10.0 * 3.14159265358979 / 180.0);
      auto filter = itk::CudaResampleImageFilter<Image, Image>::New();
      filter->SetInput(image);
      filter->SetTransform(transform);
      filter->SetSize(image->GetLargestPossibleRegion().GetSize());
      auto interpolator = itk::BSplineInterpolateImageFunction<Image, double, double>::New();
      interpolator->SetSplineOrder(3);
      filter->SetInterpolator(interpolator);
      filter->SetExecutionMode(itk::CudaExecutionMode::GPU);
      rows.push_back({ c3,
                       "GPU CudaResampleImageFilter, plain itk::Image in and out, cubic (wall: upload, prefilter, "
                       "resample, download)",
                       TimeWall(
                         [&]
                         {
                           filter->Modified();
                           filter->Update();
                         },
                         std::min(reps, 5)),
                       io });
    }
    for (int factor : { 2, 4, 8, 16 })
    {
      const auto            zoom = ZoomGeometry(2048, factor);
      const std::size_t     inCount = static_cast<std::size_t>(zoom.inputSize[0] * zoom.inputSize[1]);
      const auto            h2 = RandomVolume(inCount);
      cif::DeviceBuffer zin(inCount * 4), zcoef(inCount * 4), zout(2048 * 2048 * 4);
      zin.CopyFromHost(h2.data(), inCount * 4);
      cif::PrefilterGeometry zg;
      zg.imageSize[0] = zg.inputSize[0] = zg.outputSize[0] = zoom.inputSize[0];
      zg.imageSize[1] = zg.inputSize[1] = zg.outputSize[1] = zoom.inputSize[1];
      const std::string name = "2D zoom x" + std::to_string(factor) + " to 2048^2";
      const double      bytes = 4.0 * (inCount + 2048.0 * 2048.0);
      auto *            zi = static_cast<const float *>(zin.GetPointer());
      auto *            zc = static_cast<float *>(zcoef.GetPointer());
      auto *            zo = static_cast<float *>(zout.GetPointer());
      rows.push_back({ name,
                       "GPU cubic: FIR prefilter + resample",
                       TimeGpu(
                         [&]
                         {
                           cif::PrefilterCUDA(zi, zc, zg, fir);
                           cif::ResampleCUDA<float, float>(zc, zo, zoom, cubic);
                         },
                         reps),
                       bytes });
      rows.push_back({ name,
                       "GPU cubic: recursive prefilter + resample",
                       TimeGpu(
                         [&]
                         {
                           cif::PrefilterCUDA(zi, zc, zg, recursive);
                           cif::ResampleCUDA<float, float>(zc, zo, zoom, cubic);
                         },
                         reps),
                       bytes });
      cif::ResampleParameters zfast = cubic;
      zfast.fastTexture = true;
      rows.push_back({ name,
                       "GPU cubic: recursive prefilter + fast resample",
                       TimeGpu(
                         [&]
                         {
                           cif::PrefilterCUDA(zi, zc, zg, recursive);
                           cif::ResampleCUDA<float, float>(zc, zo, zoom, zfast);
                         },
                         reps),
                       bytes });
      rows.push_back({ name,
                       "GPU linear resample",
                       TimeGpu([&] { cif::ResampleCUDA<float, float>(zi, zo, zoom, linear); }, reps),
                       bytes });
    }
  }
#endif

  if (!skipItk)
  {
    using Image = itk::Image<float, 3>;
    auto image = Image::New();
    image->SetRegions(Image::SizeType{ { static_cast<itk::SizeValueType>(n3),
                                         static_cast<itk::SizeValueType>(n3),
                                         static_cast<itk::SizeValueType>(n3) } });
    image->Allocate();
    const auto host = RandomVolume(static_cast<std::size_t>(n3 * n3 * n3));
    std::copy(host.begin(), host.end(), image->GetBufferPointer());
    auto             transform = itk::Euler3DTransform<double>::New();
    Image::PointType centre;
    centre.Fill(0.5 * (n3 - 1));
    transform->SetCenter(centre);
    transform->SetRotation(0.5 * 10.0 * 3.14159265358979 / 180.0, 0.0, 10.0 * 3.14159265358979 / 180.0);
    for (int cubicInterp = 0; cubicInterp < 2; ++cubicInterp)
    {
      auto filter = itk::ResampleImageFilter<Image, Image>::New();
      filter->SetInput(image);
      filter->SetTransform(transform);
      filter->SetSize(image->GetLargestPossibleRegion().GetSize());
      if (cubicInterp)
      {
        auto interpolator = itk::BSplineInterpolateImageFunction<Image, double, float>::New();
        interpolator->SetSplineOrder(3);
        filter->SetInterpolator(interpolator);
      }
      else
      {
        filter->SetInterpolator(itk::LinearInterpolateImageFunction<Image, double>::New());
      }
      const double ms = TimeWallOnce([&] { filter->Update(); });
      rows.push_back({ c3,
                       std::string("ITK CPU ResampleImageFilter, ") +
                         (cubicInterp ? "cubic (incl. prefilter)" : "linear") + ", " +
                         std::to_string(itk::MultiThreaderBase::GetGlobalDefaultNumberOfThreads()) + " threads",
                       ms,
                       2 * volumeBytes });
    }
  }

  for (auto & r : rows)
  {
    r.gpu = r.method.rfind("GPU", 0) == 0;
  }
  PrintDeviceLine("Resampling, float32", copy);
  std::printf("GB/s = (input read once + output written once) / time; %%copy = GB/s / copy bandwidth\n\n");
  PrintTable(rows, copy);
  return 0;
}
