/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
// The v4 mean squares, correlation and Mattes metrics' GetValueAndDerivative on a
// 256^3 float pair (issue 23's case: affine transform, dense sampling),
// three ways in one
// run: ITK's MeanSquaresImageToImageMetricv4 on all cores, the module's CPU
// core on all cores, and the module's GPU core. The pair is ITK's example
// volume KmeansTest_T1UCharRaw resampled onto 256^3 (fixed) and the same
// under an affine map (moving). Prints ms per evaluation, points per
// second, and for the GPU the fraction of the device's copy bandwidth that
// the least traffic (fixed, moving and the float gradient image read once:
// 20 bytes per point) would take; also Initialize (ITK's gradient filter,
// on the CPU for both) and the one-time upload. Checks the module's value
// and derivative against ITK's in the same run.
//
//   MetricBenchmark [--size N] [--reps R] [--itk-reps R] [--skip-itk]
#include "BenchmarkCommon.h"
#include "itkAffineTransform.h"
#include "itkCudaFactorylessTwin.h"
#include "itkCudaCorrelationImageToImageMetricv4.h"
#include "itkCudaMattesMutualInformationImageToImageMetricv4.h"
#include "itkCudaMeanSquaresImageToImageMetricv4.h"
#include "itkImageFileReader.h"
#include "itkLinearInterpolateImageFunction.h"
#include "itkMultiThreaderBase.h"
#include "itkResampleImageFilter.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

namespace
{
using F3 = itk::Image<float, 3>;

F3::Pointer
Resampled(const F3 * volume, unsigned int n, const itk::Transform<double, 3, 3> * transform)
{
  auto resample = itk::CudaFactorylessTwin<itk::ResampleImageFilter<F3, F3>>::New();
  resample->SetInput(volume);
  resample->SetTransform(transform);
  F3::SizeType    size;
  F3::SpacingType spacing;
  for (unsigned int a = 0; a < 3; ++a)
  {
    size[a] = n;
    spacing[a] = volume->GetSpacing()[a] * volume->GetLargestPossibleRegion().GetSize()[a] / n;
  }
  resample->SetSize(size);
  resample->SetOutputSpacing(spacing);
  resample->SetOutputOrigin(volume->GetOrigin());
  resample->SetOutputDirection(volume->GetDirection());
  resample->Update();
  return resample->GetOutput();
}

} // namespace

int
main(int argc, char * argv[])
{
  unsigned int n = 256;
  int          reps = 20;
  int          itkReps = 3;
  bool         skipItk = false;
  for (int i = 1; i < argc; ++i)
  {
    const std::string a = argv[i];
    if (a == "--size" && i + 1 < argc)
      n = static_cast<unsigned int>(std::atoi(argv[++i]));
    else if (a == "--reps" && i + 1 < argc)
      reps = std::atoi(argv[++i]);
    else if (a == "--itk-reps" && i + 1 < argc)
      itkReps = std::atoi(argv[++i]);
    else if (a == "--skip-itk")
      skipItk = true;
    else
    {
      std::cerr << "usage: " << argv[0] << " [--size N] [--reps R] [--itk-reps R] [--skip-itk]\n";
      return 2;
    }
  }
  const double copy = cif_bench::CopyBandwidth();
  const int    threads = static_cast<int>(itk::MultiThreaderBase::GetGlobalDefaultNumberOfThreads());
  cif_bench::PrintDeviceLine("v4 metrics, GetValueAndDerivative, dense, affine", copy);
  std::printf("CPU: %d threads (ITK's global default)\n", threads);

  const auto volume = itk::ReadImage<F3>(std::string(CIF_EXAMPLES_DATA) + "/KmeansTest_T1UCharRaw.nii.gz");
  auto       identity = itk::AffineTransform<double, 3>::New();
  auto       warp = itk::AffineTransform<double, 3>::New();
  {
    itk::Point<double, 3> center;
    itk::ContinuousIndex<double, 3> middle;
    for (unsigned int a = 0; a < 3; ++a)
    {
      middle[a] = 0.5 * (volume->GetLargestPossibleRegion().GetSize()[a] - 1);
    }
    volume->TransformContinuousIndexToPhysicalPoint(middle, center);
    warp->SetCenter(center);
    auto         p = warp->GetParameters();
    const double values[12] = { 1.02, 0.02, -0.01, -0.015, 0.99, 0.03, 0.01, -0.02, 1.01, 1.5, -2.0, 1.0 };
    for (unsigned int i = 0; i < 12; ++i)
    {
      p[i] = values[i];
    }
    warp->SetParameters(p);
  }
  const auto fixed = Resampled(volume, n, identity);
  const auto moving = Resampled(volume, n, warp);
  const double points = static_cast<double>(fixed->GetLargestPossibleRegion().GetNumberOfPixels());
  std::printf("pair: %u^3 float (%.1f M points), from KmeansTest_T1UCharRaw\n", n, points * 1e-6);

  // the transform being evaluated: near the warp's inverse
  auto t = itk::AffineTransform<double, 3>::New();
  t->SetCenter(warp->GetCenter());
  {
    auto p = t->GetParameters();
    const double values[12] = { 0.985, -0.015, 0.012, 0.016, 1.005, -0.028, -0.01, 0.021, 0.99, -1.2, 1.8, -0.9 };
    for (unsigned int i = 0; i < 12; ++i)
    {
      p[i] = values[i];
    }
    t->SetParameters(p);
  }

  std::vector<cif_bench::Row> rows;
  std::vector<std::pair<std::string, double>> speedups;
  auto run = [&](auto itkMetricNew, auto ourMetricNew, const std::string & caseName)
  {
    double             itkValue = 0;
    itk::Array<double> itkDerivative;
    double             itkMs = 0;
    if (!skipItk)
    {
      auto metric = itkMetricNew();
      metric->SetFixedImage(fixed);
      metric->SetMovingImage(moving);
      metric->SetMovingTransform(t);
      const double init = cif_bench::TimeWallOnce([&] { metric->Initialize(); });
      rows.push_back({ caseName, "ITK Initialize (gradient filter)", init, 0, false, "once per level" });
      itkMs = cif_bench::TimeWall([&] { metric->GetValueAndDerivative(itkValue, itkDerivative); }, itkReps);
      rows.push_back({ caseName, "ITK GetValueAndDerivative", itkMs, 20.0 * points, false, "", points });
    }
    for (const auto mode : { itk::CudaExecutionMode::CPU, itk::CudaExecutionMode::GPU })
    {
      const bool gpu = mode == itk::CudaExecutionMode::GPU;
      if (gpu && !cif::Runtime::IsDeviceAvailable())
      {
        std::printf("no GPU: %s\n", cif::Runtime::GetUnavailableReason().c_str());
        continue;
      }
      auto metric = ourMetricNew();
      metric->SetExecutionMode(mode);
      metric->SetFixedImage(fixed);
      metric->SetMovingImage(moving);
      metric->SetMovingTransform(t);
      metric->Initialize();
      double             value = 0;
      itk::Array<double> derivative;
      // the first evaluation uploads the images (GPU)
      const double first = cif_bench::TimeWallOnce([&] { metric->GetValueAndDerivative(value, derivative); });
      const double ms = cif_bench::TimeWall([&] { metric->GetValueAndDerivative(value, derivative); },
                                            gpu ? reps : std::max(1, reps / 5));
      if (gpu)
      {
        rows.push_back({ caseName, "module GPU first call (upload)", first, 20.0 * points, false, "once per level" });
      }
      std::string note = metric->GetLastExecutionReport().Message.substr(0, 40);
      if (!skipItk)
      {
        double d = 0, norm = 0;
        for (unsigned int p = 0; p < derivative.GetSize(); ++p)
        {
          d += (derivative[p] - itkDerivative[p]) * (derivative[p] - itkDerivative[p]);
          norm += itkDerivative[p] * itkDerivative[p];
        }
        char text[160];
        std::snprintf(text,
                      sizeof(text),
                      "value rel. diff %.1e, derivative %.1e vs ITK",
                      std::abs(value - itkValue) / std::abs(itkValue),
                      std::sqrt(d / norm));
        note = text;
        speedups.emplace_back(caseName + (gpu ? ", module GPU" : ", module CPU core"), itkMs / ms);
      }
      rows.push_back({ caseName,
                       gpu ? "module GPU GetValueAndDerivative" : "module CPU core GetValueAndDerivative",
                       ms,
                       20.0 * points,
                       gpu,
                       note,
                       points });
    }
  };
  run([] { return itk::CudaFactorylessTwin<itk::MeanSquaresImageToImageMetricv4<F3, F3>>::New(); },
      [] { return itk::CudaMeanSquaresImageToImageMetricv4<F3, F3>::New(); },
      std::to_string(n) + "^3 affine mean squares");
  run([] { return itk::CudaFactorylessTwin<itk::CorrelationImageToImageMetricv4<F3, F3>>::New(); },
      [] { return itk::CudaCorrelationImageToImageMetricv4<F3, F3>::New(); },
      std::to_string(n) + "^3 affine correlation");
  run([] { return itk::CudaFactorylessTwin<itk::MattesMutualInformationImageToImageMetricv4<F3, F3>>::New(); },
      [] { return itk::CudaMattesMutualInformationImageToImageMetricv4<F3, F3>::New(); },
      std::to_string(n) + "^3 affine Mattes (50 bins)");
  cif_bench::TableLayout layout;
  layout.rateName = "Mpoints/s";
  cif_bench::PrintTable(rows, copy, layout);
  for (const auto & [name, factor] : speedups)
  {
    std::printf("%s: %.1f x ITK on %d threads\n", name.c_str(), factor, threads);
  }
  return 0;
}
