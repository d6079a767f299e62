/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
// The v4 mean squares, correlation and Mattes metrics' GetValueAndDerivative on a
// 256^3 float pair (issue 23's cases: an affine transform with each metric,
// and a B-spline transform of 10^3 control points with mean squares and
// Mattes (50 bins); dense sampling), three ways in one
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
// ITK's metric forms the B-spline transform's full Jacobian (3 x 3000) at
// every point, which takes it minutes at 256^3: --itk-bspline-size M
// runs ITK's B-spline cases on an M^3 pair instead (the module's too, at
// both sizes), and the speed-up is then given per point, saying so.
//
//   MetricBenchmark [--size N] [--reps R] [--itk-reps R] [--skip-itk]
//                   [--cases affine,general,bspline,field] [--itk-bspline-size M]
// (general: affine mean squares with a fixed image mask, and with ITK's
// cubic B-spline moving interpolator: the kernels' general instances;
// field: a displacement field transform with mean squares and Mattes, whose
// derivative has 3 parameters per point)
#include "BenchmarkCommon.h"
#include "BenchmarkVolumes.h"
#include "itkAffineTransform.h"
#include "itkBSplineTransform.h"
#include "itkBSplineTransformInitializer.h"
#include "itkDisplacementFieldTransform.h"
#include "itkImageRegionIteratorWithIndex.h"
#include "itkCudaFactorylessTwin.h"
#include "itkCudaCorrelationImageToImageMetricv4.h"
#include "itkCudaGradientRecursiveGaussianImageFilter.h"
#include "itkCudaMattesMutualInformationImageToImageMetricv4.h"
#include "itkCudaMeanSquaresImageToImageMetricv4.h"
#include "itkBSplineInterpolateImageFunction.h"
#include "itkImageFileReader.h"
#include "itkImageMaskSpatialObject.h"
#include "itkLinearInterpolateImageFunction.h"
#include "itkMultiThreaderBase.h"
#include "itkResampleImageFilter.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <cstdlib>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

namespace
{
using F3 = itk::Image<float, 3>;


} // namespace

int
main(int argc, char * argv[])
{
  unsigned int n = 256;
  int          reps = 20;
  int          itkReps = 3;
  bool         skipItk = false;
  std::string  cases = "affine,general,bspline,field";
  unsigned int itkBSplineSize = 0;
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
    else if (a == "--cases" && i + 1 < argc)
      cases = argv[++i];
    else if (a == "--itk-bspline-size" && i + 1 < argc)
      itkBSplineSize = static_cast<unsigned int>(std::atoi(argv[++i]));
    else
    {
      std::cerr << "usage: " << argv[0]
                << " [--size N] [--reps R] [--itk-reps R] [--skip-itk] [--cases affine,general,bspline]"
                   " [--itk-bspline-size M]\n";
      return 2;
    }
  }
  const double copy = cif_bench::CopyBandwidth();
  const int    threads = static_cast<int>(itk::MultiThreaderBase::GetGlobalDefaultNumberOfThreads());
  cif_bench::PrintDeviceLine("v4 metrics, GetValueAndDerivative, dense, affine, B-spline and displacement field", copy);
  std::printf("CPU: %d threads (ITK's global default)\n", threads);

  const auto volume = itk::ReadImage<F3>(std::string(CIF_EXAMPLES_DATA) + "/KmeansTest_T1UCharRaw.nii.gz");
  auto       identity = itk::AffineTransform<double, 3>::New();
  const auto warp = cif_bench::BenchmarkAffineWarp(volume);
  const auto fixed = cif_bench::ResampledVolume(volume, n, identity);
  const auto moving = cif_bench::ResampledVolume(volume, n, warp);
  std::printf("pair: %u^3 float (%.1f M points), from KmeansTest_T1UCharRaw\n",
              n,
              static_cast<double>(fixed->GetLargestPossibleRegion().GetNumberOfPixels()) * 1e-6);

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

  // a B-spline transform of 10^3 control points (mesh 7) over the fixed
  // image's domain, coefficients in [-2, 2] mm (fixed seed)
  using BSplineType = itk::BSplineTransform<double, 3, 3>;
  auto bsplineOver = [](const F3 * image)
  {
    auto                        b = BSplineType::New();
    BSplineType::MeshSizeType   mesh;
    mesh.Fill(7);
    auto initializer = itk::BSplineTransformInitializer<BSplineType, F3>::New();
    initializer->SetTransform(b);
    initializer->SetImage(image);
    initializer->SetTransformDomainMeshSize(mesh);
    initializer->InitializeTransform();
    std::mt19937                           random(2311);
    std::uniform_real_distribution<double> unit(-2.0, 2.0);
    BSplineType::ParametersType            p(b->GetNumberOfParameters());
    for (unsigned int i = 0; i < p.GetSize(); ++i)
    {
      p[i] = unit(random);
    }
    b->SetParameters(p);
    return b;
  };

  std::vector<cif_bench::Row> rows;
  std::vector<std::pair<std::string, double>> speedups;
  // caseName; the transform at the benchmark's size; ITK's pair and
  // transform (another size for the B-spline cases, or the same)
  auto run = [&](auto itkMetricNew, auto ourMetricNew, const std::string & caseName,
                 itk::Transform<double, 3, 3> * transform, const F3 * itkFixed, const F3 * itkMoving,
                 itk::Transform<double, 3, 3> * itkTransform, double bytesPerPoint = 20.0)
  {
    const double points = static_cast<double>(fixed->GetLargestPossibleRegion().GetNumberOfPixels());
    const double itkPoints = static_cast<double>(itkFixed->GetLargestPossibleRegion().GetNumberOfPixels());
    const bool   sameSize = itkFixed == fixed.GetPointer();
    double             itkValue = 0;
    itk::Array<double> itkDerivative;
    double             itkMs = 0;
    if (!skipItk)
    {
      auto metric = itkMetricNew();
      metric->SetFixedImage(itkFixed);
      metric->SetMovingImage(itkMoving);
      metric->SetMovingTransform(itkTransform);
      const double init = cif_bench::TimeWallOnce([&] { metric->Initialize(); });
      rows.push_back({ caseName, "ITK Initialize (gradient filter)", init, 0, false, "once per level" });
      itkMs = cif_bench::TimeWall([&] { metric->GetValueAndDerivative(itkValue, itkDerivative); }, itkReps);
      char note[96] = "";
      if (!sameSize)
      {
        std::snprintf(note, sizeof(note), "on a %.0f^3 pair", std::cbrt(itkPoints));
      }
      rows.push_back({ caseName, "ITK GetValueAndDerivative", itkMs, bytesPerPoint * itkPoints, false, note, itkPoints });
    }
    for (const auto mode : { itk::CudaExecutionMode::CPU, itk::CudaExecutionMode::GPU })
    {
      const bool gpu = mode == itk::CudaExecutionMode::GPU;
      if (gpu && !cif::Runtime::IsDeviceAvailable())
      {
        std::printf("no GPU: %s\n", cif::Runtime::GetUnavailableReason().c_str());
        continue;
      }
      double             value = 0;
      itk::Array<double> derivative;
      if (!skipItk && !sameSize)
      {
        // the module on ITK's pair: the accuracy check and the per-point
        // comparison
        auto metric = ourMetricNew();
        metric->SetExecutionMode(mode);
        metric->SetFixedImage(itkFixed);
        metric->SetMovingImage(itkMoving);
        metric->SetMovingTransform(itkTransform);
        metric->Initialize();
        metric->GetValueAndDerivative(value, derivative);
        const double small = cif_bench::TimeWall([&] { metric->GetValueAndDerivative(value, derivative); },
                                                 gpu ? reps : std::max(1, reps / 5));
        double d = 0, norm = 0;
        for (unsigned int p = 0; p < derivative.GetSize(); ++p)
        {
          d += (derivative[p] - itkDerivative[p]) * (derivative[p] - itkDerivative[p]);
          norm += itkDerivative[p] * itkDerivative[p];
        }
        char text[200];
        std::snprintf(text,
                      sizeof(text),
                      "on ITK's %.0f^3 pair; value rel. diff %.1e, derivative %.1e vs ITK",
                      std::cbrt(itkPoints),
                      std::abs(value - itkValue) / std::abs(itkValue),
                      std::sqrt(d / norm));
        rows.push_back({ caseName,
                         gpu ? "module GPU GetValueAndDerivative" : "module CPU core GetValueAndDerivative",
                         small,
                         bytesPerPoint * itkPoints,
                         gpu,
                         text,
                         itkPoints });
        speedups.emplace_back(caseName + (gpu ? ", module GPU" : ", module CPU core") + " (both on ITK's " +
                                std::to_string(static_cast<int>(std::lround(std::cbrt(itkPoints)))) + "^3 pair)",
                              itkMs / small);
      }
      auto metric = ourMetricNew();
      metric->SetExecutionMode(mode);
      metric->SetFixedImage(fixed);
      metric->SetMovingImage(moving);
      metric->SetMovingTransform(transform);
      if (gpu)
      {
        // the module's gradient filter with the metric's default settings
        // (what the factory gives ITK's Initialize): sigma the largest
        // spacing, normalized across scale
        using GradientImage = itk::Image<itk::CovariantVector<double, 3>, 3>;
        auto   gradient = itk::CudaGradientRecursiveGaussianImageFilter<F3, GradientImage>::New();
        double largest = 0;
        for (unsigned int a = 0; a < 3; ++a)
        {
          largest = std::max(largest, moving->GetSpacing()[a]);
        }
        gradient->SetSigma(largest);
        gradient->SetNormalizeAcrossScale(true);
        metric->SetMovingImageGradientFilter(gradient);
        const double init = cif_bench::TimeWallOnce([&] { metric->Initialize(); });
        rows.push_back({ caseName, "module GPU Initialize (CUDA gradient filter)", init, 0, false, "once per level" });
      }
      else
      {
        metric->Initialize();
      }
      // the first evaluation uploads the images (GPU)
      const double first = cif_bench::TimeWallOnce([&] { metric->GetValueAndDerivative(value, derivative); });
      const double ms = cif_bench::TimeWall([&] { metric->GetValueAndDerivative(value, derivative); },
                                            gpu ? reps : std::max(1, reps / 5));
      if (gpu)
      {
        rows.push_back({ caseName, "module GPU first call (upload)", first, bytesPerPoint * points, false, "once per level" });
      }
      std::string note = metric->GetLastExecutionReport().Message.substr(0, 40);
      if (!skipItk && !sameSize)
      {
        // per point: ITK's time scaled by the ratio of the points
        speedups.emplace_back(caseName + (gpu ? ", module GPU" : ", module CPU core") +
                                " (per point: ITK's time on its pair times " +
                                std::to_string(static_cast<int>(std::lround(points / itkPoints))) + ")",
                              itkMs * points / itkPoints / ms);
      }
      else if (!skipItk)
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
                       bytesPerPoint * points,
                       gpu,
                       note,
                       points });
    }
  };
  auto itkMeanSquares = [] { return itk::CudaFactorylessTwin<itk::MeanSquaresImageToImageMetricv4<F3, F3>>::New(); };
  auto ourMeanSquares = [] { return itk::CudaMeanSquaresImageToImageMetricv4<F3, F3>::New(); };
  auto itkMattes = []
  { return itk::CudaFactorylessTwin<itk::MattesMutualInformationImageToImageMetricv4<F3, F3>>::New(); };
  auto ourMattes = [] { return itk::CudaMattesMutualInformationImageToImageMetricv4<F3, F3>::New(); };
  const std::string size = std::to_string(n) + "^3 ";
  if (cases.find("affine") != std::string::npos)
  {
    run(itkMeanSquares, ourMeanSquares, size + "affine mean squares", t, fixed, moving, t);
    run([] { return itk::CudaFactorylessTwin<itk::CorrelationImageToImageMetricv4<F3, F3>>::New(); },
        [] { return itk::CudaCorrelationImageToImageMetricv4<F3, F3>::New(); },
        size + "affine correlation",
        t,
        fixed,
        moving,
        t);
    run(itkMattes, ourMattes, size + "affine Mattes (50 bins)", t, fixed, moving, t);
  }
  if (cases.find("general") != std::string::npos)
  {
    // the kernels' general instances: a fixed image mask (the brain: fixed
    // values above 30, unsigned char on the fixed grid), and ITK's cubic
    // B-spline interpolator for the moving image
    using MaskImage = itk::Image<unsigned char, 3>;
    auto maskImage = MaskImage::New();
    maskImage->CopyInformation(fixed);
    maskImage->SetRegions(fixed->GetLargestPossibleRegion());
    maskImage->Allocate();
    {
      const float * in = fixed->GetBufferPointer();
      unsigned char * out = maskImage->GetBufferPointer();
      for (std::size_t i = 0; i < fixed->GetLargestPossibleRegion().GetNumberOfPixels(); ++i)
      {
        out[i] = in[i] > 30.0f ? 1 : 0;
      }
    }
    auto mask = itk::ImageMaskSpatialObject<3>::New();
    mask->SetImage(maskImage);
    mask->Update();
    const auto withMask = [mask](auto make)
    {
      return [mask, make]
      {
        auto metric = make();
        metric->SetFixedImageMask(mask);
        return metric;
      };
    };
    const auto withCubic = [](auto make)
    {
      return [make]
      {
        auto metric = make();
        metric->SetMovingInterpolator(itk::BSplineInterpolateImageFunction<F3, double, double>::New());
        return metric;
      };
    };
    run(withMask(itkMeanSquares), withMask(ourMeanSquares), size + "affine MS, fixed mask", t, fixed, moving, t);
    run(withCubic(itkMeanSquares), withCubic(ourMeanSquares), size + "affine MS, cubic moving", t, fixed, moving, t);
  }
  if (cases.find("bspline") != std::string::npos)
  {
    auto       bspline = bsplineOver(fixed);
    F3::Pointer itkFixed = fixed;
    F3::Pointer itkMoving = moving;
    if (itkBSplineSize > 0 && itkBSplineSize != n)
    {
      itkFixed = cif_bench::ResampledVolume(volume, itkBSplineSize, identity);
      itkMoving = cif_bench::ResampledVolume(volume, itkBSplineSize, warp);
    }
    auto itkBSpline = bsplineOver(itkFixed);
    run(itkMeanSquares, ourMeanSquares, size + "B-spline 10^3 mean squares", bspline, itkFixed, itkMoving, itkBSpline);
    run(itkMattes, ourMattes, size + "B-spline 10^3 Mattes (50 bins)", bspline, itkFixed, itkMoving, itkBSpline);
  }
  if (cases.find("field") != std::string::npos)
  {
    // a displacement field on the fixed grid (ITK requires the virtual
    // domain's): 3 D parameters per point. Per evaluation the field goes up
    // and the derivative comes down (24 + 24 bytes per point over PCIe);
    // the kernel reads 20 + 24 and writes 24 bytes per point (68)
    using FieldTransform = itk::DisplacementFieldTransform<double, 3>;
    using Field = FieldTransform::DisplacementFieldType;
    auto fieldOver = [](const F3 * image)
    {
      auto field = Field::New();
      field->CopyInformation(image);
      field->SetRegions(image->GetLargestPossibleRegion());
      field->Allocate();
      const auto size = image->GetLargestPossibleRegion().GetSize();
      itk::ImageRegionIteratorWithIndex<Field> it(field, field->GetBufferedRegion());
      for (; !it.IsAtEnd(); ++it)
      {
        Field::PixelType u;
        for (unsigned int a = 0; a < 3; ++a)
        {
          const double x = 6.283185307179586 * it.GetIndex()[(a + 1) % 3] / static_cast<double>(size[(a + 1) % 3]);
          u[a] = 1.5 * std::sin(x + a);
        }
        it.Set(u);
      }
      auto transform = FieldTransform::New();
      transform->SetDisplacementField(field);
      return transform;
    };
    auto field = fieldOver(fixed);
    run(itkMeanSquares, ourMeanSquares, size + "displacement field mean squares", field, fixed, moving, field, 68.0);
    run(itkMattes, ourMattes, size + "displacement field Mattes (50 bins)", field, fixed, moving, field, 68.0);
  }
  cif_bench::TableLayout layout;
  layout.rateName = "Mpoints/s";
  cif_bench::PrintTable(rows, copy, layout);
  for (const auto & [name, factor] : speedups)
  {
    std::printf("%s: %.1f x ITK on %d threads\n", name.c_str(), factor, threads);
  }
  return 0;
}
