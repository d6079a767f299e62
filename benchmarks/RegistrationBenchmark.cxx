/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
// End to end: a DeformableRegistration8-style protocol through ITK's own
// ImageRegistrationMethodv4 (issue 23's end-to-end case: three levels,
// affine then B-spline, Mattes mutual information with 50 bins, dense
// sampling), timed whole (registration->Update() of both stages: the
// pyramids, the metric's Initialize per level with its gradient images, the
// optimiser's iterations), twice in one run:
//   - with the module's factory registered: the v4 metric, the shrink, the
//     smoothing and the gradient filters are the module's (GPU);
//   - ITK alone, on all cores.
// Stage 1: AffineTransform (centred on the fixed image's centre),
// RegularStepGradientDescentOptimizerv4 (learning rate 1, at most
// --affine-iterations per level, scales from physical shifts). Stage 2:
// BSplineTransform of 10^3 control points (mesh 7) over the fixed image,
// after the affine result (the moving initial transform), LBFGSBOptimizerv4
// as DeformableRegistration8 sets it (at most --bspline-evaluations function
// evaluations per level). Levels: shrink 4, 2, 1 with smoothing sigmas 2,
// 1, 0 voxels.
//
// The pair: ITK's example volume KmeansTest_T1UCharRaw resampled onto N^3
// (fixed) and the same under a small affine map (moving), as MetricBenchmark.
// ITK's B-spline metric forms the transform's full Jacobian at every point
// (minutes per evaluation at 256^3), so ITK runs the protocol on an M^3 pair
// (--itk-size, default 64); the module runs both sizes.
//
//   RegistrationBenchmark [--size N] [--itk-size M] [--affine-iterations I]
//                         [--bspline-evaluations E] [--skip-itk]
#include "BenchmarkCommon.h"
#include "BenchmarkVolumes.h"
#include "itkAffineTransform.h"
#include "itkBSplineTransform.h"
#include "itkBSplineTransformInitializer.h"
#include "itkCenteredTransformInitializer.h"
#include "itkCudaImageFiltersFactory.h"
#include "itkCudaMattesMutualInformationImageToImageMetricv4.h"
#include "itkImageFileReader.h"
#include "itkImageRegistrationMethodv4.h"
#include "itkLBFGSBOptimizerv4.h"
#include "itkMattesMutualInformationImageToImageMetricv4.h"
#include "itkMultiThreaderBase.h"
#include "itkRegistrationParameterScalesFromPhysicalShift.h"
#include "itkRegularStepGradientDescentOptimizerv4.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace
{
using F3 = itk::Image<float, 3>;
using Metric = itk::MattesMutualInformationImageToImageMetricv4<F3, F3>;
using Affine = itk::AffineTransform<double, 3>;
using BSpline = itk::BSplineTransform<double, 3, 3>;

struct StageResult
{
  double       ms{ 0 };
  double       metric{ 0 };
  unsigned int iterations{ 0 };
  std::string  ranOn;
};

template <typename TMethod>
void
SetLevels(TMethod * registration)
{
  typename TMethod::ShrinkFactorsArrayType   shrink(3);
  typename TMethod::SmoothingSigmasArrayType sigmas(3);
  shrink[0] = 4;
  shrink[1] = 2;
  shrink[2] = 1;
  sigmas[0] = 2;
  sigmas[1] = 1;
  sigmas[2] = 0;
  registration->SetNumberOfLevels(3);
  registration->SetShrinkFactorsPerLevel(shrink);
  registration->SetSmoothingSigmasPerLevel(sigmas);
  registration->SetSmoothingSigmasAreSpecifiedInPhysicalUnits(false);
}

std::string
WhereMetricRan(const Metric * metric)
{
  const auto * cuda = dynamic_cast<const itk::CudaMattesMutualInformationImageToImageMetricv4<F3, F3> *>(metric);
  return cuda != nullptr ? cuda->GetLastExecutionReport().Message : std::string("ITK's metric");
}

/** The two stages on (fixed, moving); the factory decides whose classes run. */
void
RunProtocol(const F3 * fixed, const F3 * moving, unsigned int affineIterations, unsigned int bsplineEvaluations,
            StageResult & affineStage, StageResult & bsplineStage)
{
  // stage 1: affine
  using AffineMethod = itk::ImageRegistrationMethodv4<F3, F3, Affine>;
  auto metric = Metric::New();
  metric->SetNumberOfHistogramBins(50);
  auto optimizer = itk::RegularStepGradientDescentOptimizerv4<double>::New();
  optimizer->SetLearningRate(1.0);
  optimizer->SetMinimumStepLength(1e-3);
  optimizer->SetNumberOfIterations(affineIterations);
  optimizer->SetReturnBestParametersAndValue(false);
  auto scales = itk::RegistrationParameterScalesFromPhysicalShift<Metric>::New();
  scales->SetMetric(metric);
  optimizer->SetScalesEstimator(scales);
  auto affine = Affine::New();
  auto initializer = itk::CenteredTransformInitializer<Affine, F3, F3>::New();
  initializer->SetTransform(affine);
  initializer->SetFixedImage(fixed);
  initializer->SetMovingImage(moving);
  initializer->GeometryOn();
  initializer->InitializeTransform();
  auto stage1 = AffineMethod::New();
  stage1->SetFixedImage(fixed);
  stage1->SetMovingImage(moving);
  stage1->SetMetric(metric);
  stage1->SetOptimizer(optimizer);
  stage1->SetInitialTransform(affine);
  stage1->InPlaceOn();
  SetLevels(stage1.GetPointer());
  unsigned int affineSteps = 0;
  optimizer->AddObserver(itk::IterationEvent(), [&](const itk::EventObject &) { ++affineSteps; });
  affineStage.ms = cif_bench::TimeWallOnce([&] { stage1->Update(); });
  affineStage.metric = optimizer->GetValue();
  affineStage.iterations = affineSteps;
  affineStage.ranOn = WhereMetricRan(metric);

  // stage 2: B-spline after the affine result
  using BSplineMethod = itk::ImageRegistrationMethodv4<F3, F3, BSpline>;
  auto bspline = BSpline::New();
  auto meshInitializer = itk::BSplineTransformInitializer<BSpline, F3>::New();
  BSpline::MeshSizeType mesh;
  mesh.Fill(10 - 3);
  meshInitializer->SetTransform(bspline);
  meshInitializer->SetImage(fixed);
  meshInitializer->SetTransformDomainMeshSize(mesh);
  meshInitializer->InitializeTransform();
  bspline->SetIdentity();
  auto metric2 = Metric::New();
  metric2->SetNumberOfHistogramBins(50);
  auto                                  lbfgsb = itk::LBFGSBOptimizerv4::New();
  const unsigned int                    n = bspline->GetNumberOfParameters();
  itk::LBFGSBOptimizerv4::BoundSelectionType bounds(n);
  itk::LBFGSBOptimizerv4::BoundValueType     zero(n);
  bounds.Fill(itk::LBFGSBOptimizerv4::UNBOUNDED);
  zero.Fill(0.0);
  lbfgsb->SetBoundSelection(bounds);
  lbfgsb->SetUpperBound(zero);
  lbfgsb->SetLowerBound(zero);
  lbfgsb->SetCostFunctionConvergenceFactor(1.e7);
  lbfgsb->SetGradientConvergenceTolerance(1e-6);
  lbfgsb->SetNumberOfIterations(200);
  lbfgsb->SetMaximumNumberOfFunctionEvaluations(bsplineEvaluations);
  lbfgsb->SetMaximumNumberOfCorrections(5);
  auto stage2 = BSplineMethod::New();
  stage2->SetFixedImage(fixed);
  stage2->SetMovingImage(moving);
  stage2->SetMetric(metric2);
  stage2->SetOptimizer(lbfgsb);
  stage2->SetMovingInitialTransform(stage1->GetModifiableTransform());
  stage2->SetInitialTransform(bspline);
  stage2->InPlaceOn();
  SetLevels(stage2.GetPointer());
  unsigned int bsplineSteps = 0;
  lbfgsb->AddObserver(itk::IterationEvent(), [&](const itk::EventObject &) { ++bsplineSteps; });
  bsplineStage.ms = cif_bench::TimeWallOnce([&] { stage2->Update(); });
  bsplineStage.metric = lbfgsb->GetValue();
  bsplineStage.iterations = bsplineSteps;
  bsplineStage.ranOn = WhereMetricRan(metric2);
}

void
Print(const char * who, unsigned int size, const StageResult & a, const StageResult & b)
{
  std::printf("%-22s %4u^3  affine %10.1f ms (%3u iterations, metric %.5f)  B-spline %10.1f ms (%3u iterations, "
              "metric %.5f)  total %10.1f ms\n",
              who,
              size,
              a.ms,
              a.iterations,
              a.metric,
              b.ms,
              b.iterations,
              b.metric,
              a.ms + b.ms);
  std::printf("%-22s         metric ran on: %s\n", "", b.ranOn.c_str());
}
} // namespace

int
main(int argc, char * argv[])
{
  unsigned int size = 256;
  unsigned int itkSize = 64;
  unsigned int affineIterations = 100;
  unsigned int bsplineEvaluations = 30;
  bool         skipItk = false;
  for (int i = 1; i < argc; ++i)
  {
    const std::string a = argv[i];
    if (a == "--size" && i + 1 < argc)
      size = static_cast<unsigned int>(std::atoi(argv[++i]));
    else if (a == "--itk-size" && i + 1 < argc)
      itkSize = static_cast<unsigned int>(std::atoi(argv[++i]));
    else if (a == "--affine-iterations" && i + 1 < argc)
      affineIterations = static_cast<unsigned int>(std::atoi(argv[++i]));
    else if (a == "--bspline-evaluations" && i + 1 < argc)
      bsplineEvaluations = static_cast<unsigned int>(std::atoi(argv[++i]));
    else if (a == "--skip-itk")
      skipItk = true;
    else
    {
      std::fprintf(stderr,
                   "usage: RegistrationBenchmark [--size N] [--itk-size M] [--affine-iterations I] "
                   "[--bspline-evaluations E] [--skip-itk]\n");
      return 2;
    }
  }
  const bool gpu = cif::Runtime::IsDeviceAvailable();
  std::printf("End-to-end registration (affine then B-spline 10^3, Mattes 50 bins, 3 levels). Device: %s\n",
              gpu ? cif::Runtime::GetDeviceDescription().c_str() : "none");
  std::printf("ITK threads: %u; at most %u affine iterations and %u B-spline evaluations per level\n",
              itk::MultiThreaderBase::GetGlobalDefaultNumberOfThreads(),
              affineIterations,
              bsplineEvaluations);
  const auto volume = itk::ReadImage<F3>(std::string(CIF_EXAMPLES_DATA) + "/KmeansTest_T1UCharRaw.nii.gz");
  const auto warp = cif_bench::BenchmarkAffineWarp(volume);
  auto       identity = Affine::New();

  for (unsigned int n : { size, itkSize })
  {
    const auto  fixed = cif_bench::ResampledVolume(volume, n, identity);
    const auto  moving = cif_bench::ResampledVolume(volume, n, warp);
    StageResult a, b;
    itk::CudaImageFiltersFactory::RegisterOneFactory();
    RunProtocol(fixed, moving, affineIterations, bsplineEvaluations, a, b);
    Print("module (factory)", n, a, b);
    itk::CudaImageFiltersFactory::UnRegisterOneFactory();
    if (n == itkSize && !skipItk)
    {
      RunProtocol(fixed, moving, affineIterations, bsplineEvaluations, a, b);
      Print("ITK (all cores)", n, a, b);
    }
    if (itkSize == size)
    {
      break;
    }
  }
  return 0;
}
