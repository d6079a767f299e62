/*=========================================================================
 *  CudaImageFilters: `cudaimagefilters register FIXED MOVING OUT_TRANSFORM`,
 *  intensity-based registration of MOVING onto FIXED through ITK's own
 *  framework (itk::ImageRegistrationMethodv4) with the module's v4 metrics
 *  (mean squares, correlation, Mattes mutual information) on the GPU or on
 *  the module's CPU core: a translation, rigid (Euler) or affine transform
 *  by regular-step gradient descent with scales from physical shifts, or a
 *  cubic B-spline by L-BFGS-B, as ITK's registration examples set them up;
 *  over a pyramid of shrink factors and smoothing sigmas. The transform is
 *  written in ITK's text format (what `resample --transform` reads), and on
 *  request MOVING resampled onto FIXED's grid. --verify evaluates the
 *  module's metric and ITK's own at the initial transform on the first
 *  level's images and compares them before registering.
 *=========================================================================*/
#include "FilterStages.h"
#include "ResampleGrid.h" // (ResampleTransforms.h uses its TupleToString)
#include "ResampleTransforms.h"
#include "ToolCommon.h"

#include "cif/RegistrationMetric.h"
#include "itkAffineTransform.h"
#include "itkBSplineTransform.h"
#include "itkBSplineTransformInitializer.h"
#include "itkCenteredTransformInitializer.h"
#include "itkCompositeTransform.h"
#include "itkCorrelationImageToImageMetricv4.h"
#include "itkCudaCorrelationImageToImageMetricv4.h"
#include "itkCudaImageFiltersFactory.h"
#include "itkCudaMattesMutualInformationImageToImageMetricv4.h"
#include "itkCudaMeanSquaresImageToImageMetricv4.h"
#include "itkCudaResampleImageFilter.h"
#include "itkEuler2DTransform.h"
#include "itkEuler3DTransform.h"
#include "itkIdentityTransform.h"
#include "itkImageRegistrationMethodv4.h"
#include "itkLBFGSBOptimizerv4.h"
#include "itkLinearInterpolateImageFunction.h"
#include "itkMattesMutualInformationImageToImageMetricv4.h"
#include "itkMeanSquaresImageToImageMetricv4.h"
#include "itkRegistrationParameterScalesFromPhysicalShift.h"
#include "itkRegularStepGradientDescentOptimizerv4.h"
#include "itkShrinkImageFilter.h"
#include "itkSmoothingRecursiveGaussianImageFilter.h"
#include "itkTransformFileWriter.h"
#include "itkTranslationTransform.h"
#include "itksys/SystemTools.hxx"

#include <algorithm>
#include <cmath>
#include <functional>
#include <iomanip>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <vector>

namespace cif
{
namespace tool
{
namespace
{
constexpr const char * CommandName = "register";

/** --verify's bounds on one evaluation against ITK's metric (issue 23's). */
constexpr double VerifyValueTolerance = 1e-5;      ///< relative
constexpr double VerifyDerivativeTolerance = 1e-4; ///< relative, in norm

/** The regular-step gradient descent of the linear transforms: its first
 * step in the scaled parameter space (a physical length for translations),
 * its relaxation at each change of direction, and the step and the scaled
 * gradient's magnitude below which it stops. ITK's defaults, relaxation 0.5
 * and gradient tolerance 1e-4, stop rigid runs on ITK's
 * BrainProtonDensitySliceR10X13Y17 pair at 5 to 9.3 degrees of the 10 (the
 * correlation's gradient is small); with these they reach 10.0. */
constexpr double LearningRate = 1.0;
constexpr double RelaxationFactor = 0.8;
constexpr double MinimumStepLength = 1e-3;
constexpr double GradientMagnitudeTolerance = 1e-6;

/** L-BFGS-B for the B-spline, as ITK's DeformableRegistration8 sets it. */
constexpr double       CostFunctionConvergenceFactor = 1e7;
constexpr double       GradientConvergenceTolerance = 1e-6;
constexpr unsigned int MaximumNumberOfCorrections = 5;

enum class TransformKind
{
  Translation,
  Rigid,
  Affine,
  BSpline
};

enum class MetricKind
{
  MeanSquares,
  Correlation,
  Mattes
};

struct RegisterOptions
{
  std::string               Fixed;
  std::string               Moving;
  std::string               Output;
  std::string               Resampled;
  TransformKind             Transform{ TransformKind::Affine };
  MetricKind                Metric{ MetricKind::Mattes };
  unsigned int              Bins{ 50 };
  std::vector<unsigned int> ShrinkFactors{ 1 };
  std::vector<double>       Sigmas{ 0.0 };
  unsigned int              Iterations{ 100 };
  std::vector<double>       GridSpacing;
  bool                      Verify{ false };
  bool                      Quiet{ false };
  itk::CudaExecutionMode    ExecutionMode{ itk::CudaExecutionMode::Automatic };
};

const char *
MetricName(const RegisterOptions & o)
{
  switch (o.Metric)
  {
    case MetricKind::MeanSquares:
      return "mean squares";
    case MetricKind::Correlation:
      return "correlation";
    case MetricKind::Mattes:
      break;
  }
  return "Mattes mutual information";
}

template <typename T>
std::string
ListToString(const std::vector<T> & values)
{
  std::ostringstream text;
  for (std::size_t i = 0; i < values.size(); ++i)
  {
    text << (i == 0 ? "" : ",") << values[i];
  }
  return text.str();
}

template <unsigned int D>
using FloatImage = itk::Image<float, D>;
template <unsigned int D>
using MetricBase = itk::ImageToImageMetricv4<FloatImage<D>, FloatImage<D>>;

/** The module's metric of the command line, and where it last ran. */
template <unsigned int D>
struct ModuleMetric
{
  typename MetricBase<D>::Pointer           Metric;
  std::function<itk::CudaExecutionReport()> Report;
};

template <unsigned int D, typename TMetric>
ModuleMetric<D>
MakeModuleMetricOfType(const RegisterOptions & o)
{
  auto metric = TMetric::New();
  metric->SetExecutionMode(o.ExecutionMode);
  const TMetric * raw = metric.GetPointer();
  return { metric.GetPointer(), [raw] { return raw->GetLastExecutionReport(); } };
}

template <unsigned int D>
ModuleMetric<D>
MakeModuleMetric(const RegisterOptions & o)
{
  using Image = FloatImage<D>;
  switch (o.Metric)
  {
    case MetricKind::MeanSquares:
      return MakeModuleMetricOfType<D, itk::CudaMeanSquaresImageToImageMetricv4<Image, Image>>(o);
    case MetricKind::Correlation:
      return MakeModuleMetricOfType<D, itk::CudaCorrelationImageToImageMetricv4<Image, Image>>(o);
    case MetricKind::Mattes:
      break;
  }
  auto metric = MakeModuleMetricOfType<D, itk::CudaMattesMutualInformationImageToImageMetricv4<Image, Image>>(o);
  dynamic_cast<itk::MattesMutualInformationImageToImageMetricv4<Image, Image> &>(*metric.Metric)
    .SetNumberOfHistogramBins(o.Bins);
  return metric;
}

/** ITK's own metric of the command line, created without the object
 * factory (which may hand out the module's twin): --verify's reference. */
template <unsigned int D>
typename MetricBase<D>::Pointer
MakeItkMetric(const RegisterOptions & o)
{
  using Image = FloatImage<D>;
  switch (o.Metric)
  {
    case MetricKind::MeanSquares:
      return itk::CudaFactorylessTwin<itk::MeanSquaresImageToImageMetricv4<Image, Image>>::New().GetPointer();
    case MetricKind::Correlation:
      return itk::CudaFactorylessTwin<itk::CorrelationImageToImageMetricv4<Image, Image>>::New().GetPointer();
    case MetricKind::Mattes:
      break;
  }
  auto metric = itk::CudaFactorylessTwin<itk::MattesMutualInformationImageToImageMetricv4<Image, Image>>::New();
  metric->SetNumberOfHistogramBins(o.Bins);
  return metric.GetPointer();
}

/** ITK's class name of the reference metric, for messages. */
std::string
ItkMetricClassName(const RegisterOptions & o)
{
  switch (o.Metric)
  {
    case MetricKind::MeanSquares:
      return "MeanSquaresImageToImageMetricv4";
    case MetricKind::Correlation:
      return "CorrelationImageToImageMetricv4";
    case MetricKind::Mattes:
      break;
  }
  return "MattesMutualInformationImageToImageMetricv4";
}

/** |a - b| / |b|, 0 when both are 0. */
double
RelativeDifference(double a, double b)
{
  if (a == b)
  {
    return 0.0;
  }
  return b != 0.0 ? std::fabs(a - b) / std::fabs(b) : std::numeric_limits<double>::infinity();
}

/** --verify: the module's metric and ITK's own, each set up as
 * ImageRegistrationMethodv4 sets up its metric for the first level (FIXED
 * and MOVING smoothed by ITK's SmoothingRecursiveGaussianImageFilter with
 * the level's sigma in physical units, the virtual domain FIXED's grid
 * shrunk by ITK's ShrinkImageFilter, the identity as the fixed transform,
 * the transform to optimise inside a CompositeTransform as the moving one),
 * evaluated once at the initial transform. */
template <unsigned int D>
std::vector<StageCheck>
VerifyFirstLevel(const RegisterOptions &        o,
                 const FloatImage<D> *          fixed,
                 const FloatImage<D> *          moving,
                 itk::Transform<double, D, D> * transform)
{
  using Image = FloatImage<D>;
  typename Image::ConstPointer fixedLevel = fixed;
  typename Image::ConstPointer movingLevel = moving;
  if (o.Sigmas[0] > 0.0)
  {
    const auto smooth = [&o](const Image * image)
    {
      using Smoothing = itk::SmoothingRecursiveGaussianImageFilter<Image, Image>;
      auto                               filter = Smoothing::New();
      typename Smoothing::SigmaArrayType sigmas;
      sigmas.Fill(o.Sigmas[0]);
      filter->SetSigmaArray(sigmas);
      filter->SetInput(image);
      filter->Update();
      typename Image::Pointer smoothed = filter->GetOutput();
      smoothed->DisconnectPipeline();
      return smoothed;
    };
    fixedLevel = smooth(fixed);
    movingLevel = smooth(moving);
  }
  auto shrink = itk::ShrinkImageFilter<Image, Image>::New();
  shrink->SetShrinkFactors(o.ShrinkFactors[0]);
  shrink->SetInput(fixed);
  shrink->Update();
  const typename Image::ConstPointer virtualDomain = shrink->GetOutput();
  auto                               composite = itk::CompositeTransform<double, D>::New();
  composite->AddTransform(transform);
  composite->SetOnlyMostRecentTransformToOptimizeOn();
  auto identity = itk::IdentityTransform<double, D>::New();

  struct Evaluation
  {
    double                                 Value{ 0.0 };
    typename MetricBase<D>::DerivativeType Derivative;
    itk::SizeValueType                     ValidPoints{ 0 };
  };
  const auto evaluate = [&](MetricBase<D> * metric, const std::string & who)
  {
    Evaluation e;
    try
    {
      metric->SetFixedImage(fixedLevel);
      metric->SetMovingImage(movingLevel);
      metric->SetVirtualDomainFromImage(virtualDomain);
      metric->SetFixedTransform(identity);
      metric->SetMovingTransform(composite);
      metric->Initialize();
      metric->GetValueAndDerivative(e.Value, e.Derivative);
      e.ValidPoints = metric->GetNumberOfValidPoints();
    }
    catch (const itk::ExceptionObject & error)
    {
      throw RuntimeFailure("--verify: " + who + " failed: " + ExceptionMessage(error));
    }
    return e;
  };
  const ModuleMetric<D> ours = MakeModuleMetric<D>(o);
  const Evaluation      got = evaluate(ours.Metric, "the module's metric");
  const std::string     itkName = ItkMetricClassName(o);
  const auto            reference = MakeItkMetric<D>(o);
  const Evaluation      expected = evaluate(reference, "ITK's " + itkName);

  const double valueDifference = RelativeDifference(got.Value, expected.Value);
  double       difference = 0.0;
  double       norm = 0.0;
  const bool   sameSize = got.Derivative.GetSize() == expected.Derivative.GetSize();
  for (unsigned int p = 0; sameSize && p < expected.Derivative.GetSize(); ++p)
  {
    difference += (got.Derivative[p] - expected.Derivative[p]) * (got.Derivative[p] - expected.Derivative[p]);
    norm += expected.Derivative[p] * expected.Derivative[p];
  }
  // |got - expected| / |expected| over the parameters (0 when both are 0)
  double derivativeDifference = std::numeric_limits<double>::infinity();
  if (sameSize && (difference == 0.0 || norm > 0.0))
  {
    derivativeDifference = difference == 0.0 ? 0.0 : std::sqrt(difference) / std::sqrt(norm);
  }

  std::vector<StageCheck> checks(2);
  std::ostringstream      value;
  value << std::setprecision(9) << "metric value at the initial transform on the first level's images (shrink "
        << o.ShrinkFactors[0] << ", smoothing " << o.Sigmas[0] << "): " << got.Value << " (" << ours.Report().Message
        << "; " << got.ValidPoints << " valid points) and ITK's " << itkName << ' ' << expected.Value << " ("
        << expected.ValidPoints << " valid points): relative difference " << std::setprecision(3) << valueDifference
        << " (limit " << VerifyValueTolerance << ")";
  checks[0].Passed = valueDifference <= VerifyValueTolerance;
  checks[0].Line = value.str();
  std::ostringstream derivative;
  derivative << std::setprecision(3) << "its derivative (" << expected.Derivative.GetSize()
             << " parameters; ITK's norm " << std::sqrt(norm) << "): relative difference in norm "
             << derivativeDifference << " (limit " << VerifyDerivativeTolerance << ")";
  if (!sameSize)
  {
    derivative << ", but the module's has " << got.Derivative.GetSize() << " parameters";
  }
  checks[1].Passed = derivativeDifference <= VerifyDerivativeTolerance;
  checks[1].Line = derivative.str();
  return checks;
}

/** One value per axis from --grid-spacing (one value, or D). */
template <unsigned int D>
itk::FixedArray<double, D>
GridSpacingPerAxis(const std::vector<double> & values)
{
  if (values.size() != 1 && values.size() != D)
  {
    throw UsageError("--grid-spacing takes one value or " + std::to_string(D) + " (one per axis) for a " +
                     std::to_string(D) + "D image, not " + std::to_string(values.size()));
  }
  itk::FixedArray<double, D> spacing;
  for (unsigned int d = 0; d < D; ++d)
  {
    spacing[d] = values.size() == 1 ? values[0] : values[d];
  }
  return spacing;
}

/** The B-spline's grid as ITK's BSplineTransformInitializer lays it over
 * FIXED (its physical extent: the pixels' outer edges plus 1/8 pixel), with
 * ceil(extent / spacing) cells per axis, so that control points lie at most
 * `spacing` apart; the coefficients zero (the identity). */
template <unsigned int D>
std::string
InitializeBSpline(itk::BSplineTransform<double, D, 3> * transform,
                  const FloatImage<D> *                 fixed,
                  const itk::FixedArray<double, D> &    spacing)
{
  using Transform = itk::BSplineTransform<double, D, 3>;
  auto                             initializer = itk::BSplineTransformInitializer<Transform, FloatImage<D>>::New();
  typename Transform::MeshSizeType mesh;
  mesh.Fill(1);
  initializer->SetTransform(transform);
  initializer->SetImage(fixed);
  initializer->SetTransformDomainMeshSize(mesh);
  initializer->InitializeTransform();
  // the domain's axis d is the image axis nearest to physical axis d
  // (BSplineTransformInitializer permutes the image's axes so): compare with
  // that image axis's pixel spacing
  const auto extent = transform->GetTransformDomainPhysicalDimensions();
  const auto domainDirection = transform->GetTransformDomainDirection();
  const auto imageDirection = fixed->GetDirection();
  for (unsigned int d = 0; d < D; ++d)
  {
    unsigned int axis = 0;
    double       best = -1.0;
    for (unsigned int i = 0; i < D; ++i)
    {
      double cosine = 0.0;
      for (unsigned int k = 0; k < D; ++k)
      {
        cosine += domainDirection[k][d] * imageDirection[k][i];
      }
      if (std::abs(cosine) > best)
      {
        best = std::abs(cosine);
        axis = i;
      }
    }
    if (spacing[d] < fixed->GetSpacing()[axis])
    {
      std::ostringstream why;
      why << "--grid-spacing " << spacing[d] << " is finer than FIXED's pixels along axis " << d
          << " (pixel spacing " << fixed->GetSpacing()[axis] << " along that direction)";
      throw UsageError(why.str());
    }
    mesh[d] = std::max<itk::SizeValueType>(1, static_cast<itk::SizeValueType>(std::ceil(extent[d] / spacing[d])));
  }
  initializer->SetTransformDomainMeshSize(mesh);
  initializer->InitializeTransform();
  transform->SetIdentity();
  std::ostringstream text;
  text << "mesh " << SizeToString(mesh) << " (control points " << std::setprecision(6);
  for (unsigned int d = 0; d < D; ++d)
  {
    text << (d == 0 ? "" : ",") << extent[d] / static_cast<double>(mesh[d]);
  }
  text << " apart)";
  return text.str();
}

/** Checks, before any work, that OUT_TRANSFORM can be written: ITK's text
 * transform format (the one `resample --transform` reads), in an existing
 * folder. */
void
CheckTransformOutput(const std::string & fileName)
{
  if (fileName.empty())
  {
    throw UsageError("the output transform file name is empty");
  }
  const std::string extension = itksys::SystemTools::LowerCase(itksys::SystemTools::GetFilenameLastExtension(fileName));
  if (extension == ".h5" || extension == ".hdf5" || extension == ".mat")
  {
    throw UsageError("cannot write '" + fileName +
                     "': this tool writes ITK's text transform format only (.tfm or .txt, which resample "
                     "--transform reads), not HDF5 or MATLAB transform files");
  }
  if (extension != ".tfm" && extension != ".txt")
  {
    throw UsageError("cannot write '" + fileName +
                     "': unknown transform file type (use .tfm or .txt, ITK's text format)");
  }
  const std::string folder = itksys::SystemTools::GetFilenamePath(fileName);
  if (!folder.empty() && !itksys::SystemTools::FileIsDirectory(folder))
  {
    throw UsageError("cannot write '" + fileName + "': folder '" + folder + "' does not exist");
  }
}

template <unsigned int D>
void
WriteTransformFile(const itk::Transform<double, D, D> * transform, const std::string & fileName)
{
  resample::RegisterTransformFileIO();
  auto writer = itk::TransformFileWriterTemplate<double>::New();
  writer->SetInput(transform);
  writer->SetFileName(fileName);
  try
  {
    writer->Update();
  }
  catch (const itk::ExceptionObject & e)
  {
    throw RuntimeFailure("cannot write '" + fileName + "': " + ExceptionMessage(e));
  }
}

/** The optimiser of a linear transform: regular-step gradient descent with
 * the scales from physical shifts (ITK's RegistrationParameterScalesFromPhysicalShift). */
template <unsigned int D>
typename itk::RegularStepGradientDescentOptimizerv4<double>::Pointer
MakeLinearOptimizer(const RegisterOptions & o, MetricBase<D> * metric)
{
  auto optimizer = itk::RegularStepGradientDescentOptimizerv4<double>::New();
  optimizer->SetLearningRate(LearningRate);
  optimizer->SetRelaxationFactor(RelaxationFactor);
  optimizer->SetMinimumStepLength(MinimumStepLength);
  optimizer->SetGradientMagnitudeTolerance(GradientMagnitudeTolerance);
  optimizer->SetNumberOfIterations(o.Iterations);
  optimizer->SetReturnBestParametersAndValue(false);
  auto scales = itk::RegistrationParameterScalesFromPhysicalShift<MetricBase<D>>::New();
  scales->SetMetric(metric);
  optimizer->SetScalesEstimator(scales);
  return optimizer;
}

/** ITK's LBFGSBOptimizerv4 without its warning that it takes no scales:
 * ImageRegistrationMethodv4 gives its optimiser scales of ones, which
 * L-BFGS-B's SetScales replaces by ones, as here. */
class UnscaledLBFGSBOptimizerv4 : public itk::LBFGSBOptimizerv4
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(UnscaledLBFGSBOptimizerv4);
  using Self = UnscaledLBFGSBOptimizerv4;
  using Superclass = itk::LBFGSBOptimizerv4;
  using Pointer = itk::SmartPointer<Self>;
  itkNewMacro(Self);

  void
  SetScales(const ScalesType &) override
  {
    if (this->m_Metric.IsNotNull())
    {
      this->m_Scales.SetSize(this->m_Metric->GetNumberOfLocalParameters());
      this->m_Scales.Fill(1.0);
      this->m_ScalesAreIdentity = true;
    }
  }

protected:
  UnscaledLBFGSBOptimizerv4() = default;
  ~UnscaledLBFGSBOptimizerv4() override = default;
};

/** The optimiser of the B-spline: L-BFGS-B, unbounded, as ITK's
 * DeformableRegistration8 sets it, with at most --iterations iterations and
 * as many function evaluations per level (DeformableRegistration7). */
itk::LBFGSBOptimizerv4::Pointer
MakeBSplineOptimizer(const RegisterOptions & o, unsigned int parameters)
{
  auto                                       optimizer = UnscaledLBFGSBOptimizerv4::New();
  itk::LBFGSBOptimizerv4::BoundSelectionType bounds(parameters);
  itk::LBFGSBOptimizerv4::BoundValueType     zero(parameters);
  bounds.Fill(itk::LBFGSBOptimizerv4::UNBOUNDED);
  zero.Fill(0.0);
  optimizer->SetBoundSelection(bounds);
  optimizer->SetUpperBound(zero);
  optimizer->SetLowerBound(zero);
  optimizer->SetCostFunctionConvergenceFactor(CostFunctionConvergenceFactor);
  optimizer->SetGradientConvergenceTolerance(GradientConvergenceTolerance);
  optimizer->SetNumberOfIterations(o.Iterations);
  optimizer->SetMaximumNumberOfFunctionEvaluations(o.Iterations);
  optimizer->SetMaximumNumberOfCorrections(MaximumNumberOfCorrections);
  return optimizer;
}

/** Registers MOVING onto FIXED with `transform` (set up, its initial
 * parameters given), writes the result, and with --resampled MOVING on
 * FIXED's grid. */
template <unsigned int D, typename TTransform>
int
Register(const RegisterOptions & o,
         const FloatImage<D> *   fixed,
         const FloatImage<D> *   moving,
         TTransform *            transform,
         const std::string &     transformDescription)
{
  using Image = FloatImage<D>;
  constexpr bool isBSpline = std::is_same<TTransform, itk::BSplineTransform<double, D, 3>>::value;

  std::vector<StageCheck> checks;
  if (o.Verify)
  {
    checks = VerifyFirstLevel<D>(o, fixed, moving, transform);
    for (const auto & check : checks)
    {
      PrintStageCheck(check);
    }
    const int status = StageChecksStatus(checks);
    if (status != ExitSuccess)
    {
      return status;
    }
  }

  if (o.ExecutionMode != itk::CudaExecutionMode::CPU)
  {
    // after --verify (whose reference is ITK's alone): the registration
    // method's smoothing and shrinking per level and the metric's gradient
    // filters (made with the metric, below) through the module's factory,
    // on the GPU (or the CPU where the GPU cannot run them); --device cpu
    // keeps ITK's own
    itk::CudaImageFiltersFactory::RegisterOneFactory();
  }
  const ModuleMetric<D> metric = MakeModuleMetric<D>(o);
  using Method = itk::ImageRegistrationMethodv4<Image, Image, TTransform>;
  auto registration = Method::New();
  registration->SetFixedImage(fixed);
  registration->SetMovingImage(moving);
  registration->SetMetric(metric.Metric);
  registration->SetInitialTransform(transform);
  registration->InPlaceOn();
  const auto                                levels = static_cast<unsigned int>(o.ShrinkFactors.size());
  typename Method::ShrinkFactorsArrayType   shrink(levels);
  typename Method::SmoothingSigmasArrayType sigmas(levels);
  for (unsigned int l = 0; l < levels; ++l)
  {
    shrink[l] = o.ShrinkFactors[l];
    sigmas[l] = o.Sigmas[l];
  }
  registration->SetNumberOfLevels(levels);
  registration->SetShrinkFactorsPerLevel(shrink);
  registration->SetSmoothingSigmasPerLevel(sigmas);
  registration->SetSmoothingSigmasAreSpecifiedInPhysicalUnits(true);

  itk::ObjectToObjectOptimizerBaseTemplate<double>::Pointer optimizer;
  itk::LBFGSBOptimizerv4::Pointer                           lbfgsb;
  if constexpr (isBSpline)
  {
    lbfgsb = MakeBSplineOptimizer(o, transform->GetNumberOfParameters());
    optimizer = lbfgsb.GetPointer();
  }
  else
  {
    optimizer = MakeLinearOptimizer<D>(o, metric.Metric).GetPointer();
  }
  registration->SetOptimizer(optimizer);

  // the iterations of each level (IterationEvent itself: L-BFGS-B also
  // sends its subclasses at every function evaluation), and the progress
  // bar's fraction
  std::vector<unsigned int> iterations;
  Method *                  method = registration.GetPointer();
  registration->AddObserver(itk::MultiResolutionIterationEvent(),
                            [&iterations, method, levels, lbfgsb, transform](const itk::EventObject &)
                            {
                              method->UpdateProgress(static_cast<float>(iterations.size()) / levels);
                              iterations.push_back(0);
                              if (lbfgsb.IsNotNull())
                              {
                                // ITK 5.2's LBFGSBOptimizerv4 keeps the initial position of its
                                // first start, so every level would start again from the first
                                // level's: each level starts from the previous one's result
                                lbfgsb->SetInitialPosition(transform->GetParameters());
                              }
                            });
  registration->AddObserver(itk::EndEvent(), [method](const itk::EventObject &) { method->UpdateProgress(1.0f); });
  optimizer->AddObserver(itk::IterationEvent(),
                         [&iterations, &o, method, levels](const itk::EventObject & event)
                         {
                           if (iterations.empty() || typeid(event) != typeid(itk::IterationEvent))
                           {
                             return;
                           }
                           ++iterations.back();
                           const double level = std::min(1.0, static_cast<double>(iterations.back()) / o.Iterations);
                           method->UpdateProgress(
                             static_cast<float>((static_cast<double>(iterations.size() - 1) + level) / levels));
                         });

  StartDeviceOutsideTiming(o.ExecutionMode);
  const double milliseconds = UpdateTimed(registration, CommandName, o.Quiet);

  // the metric at the result, on the last level's images
  double value = 0.0;
  try
  {
    value = metric.Metric->GetValue();
  }
  catch (const itk::ExceptionObject & e)
  {
    throw RuntimeFailure(std::string(CommandName) + ": the metric at the result failed: " + ExceptionMessage(e));
  }
  std::ostringstream summary;
  summary << CommandName << ": " << SizeToString(fixed->GetLargestPossibleRegion().GetSize()) << " pixels; "
          << transformDescription << ", " << transform->GetNumberOfParameters() << " parameters; " << MetricName(o);
  if (o.Metric == MetricKind::Mattes)
  {
    summary << " (" << o.Bins << " bins)";
  }
  summary << "; " << levels << (levels == 1 ? " level" : " levels") << " (shrink " << ListToString(o.ShrinkFactors)
          << ", smoothing " << ListToString(o.Sigmas) << "); iterations per level " << ListToString(iterations)
          << " (at most " << o.Iterations << "); metric value " << std::setprecision(9) << value
          << " at the result; last level: " << OneLine(optimizer->GetStopConditionDescription()) << "; metric ran on "
          << metric.Report().Message << "; registration time " << std::fixed << std::setprecision(3) << milliseconds
          << " ms";
  std::cout << summary.str() << std::endl;
  if constexpr (!isBSpline)
  {
    std::ostringstream parameters;
    parameters << std::setprecision(9) << CommandName << ": " << transform->GetNameOfClass() << " parameters "
               << transform->GetParameters() << ", fixed parameters " << transform->GetFixedParameters();
    std::cout << parameters.str() << std::endl;
  }

  WriteTransformFile<D>(transform, o.Output);
  if (!o.Resampled.empty())
  {
    // MOVING through the result onto FIXED's grid, linear interpolation
    auto resampler = itk::CudaResampleImageFilter<Image, Image>::New();
    resampler->SetInput(moving);
    resampler->SetTransform(transform);
    resampler->SetInterpolator(itk::LinearInterpolateImageFunction<Image, double>::New());
    resampler->UseReferenceImageOn();
    resampler->SetReferenceImage(fixed);
    resampler->SetDefaultPixelValue(0);
    resampler->SetExecutionMode(o.ExecutionMode);
    try
    {
      resampler->Update();
    }
    catch (const itk::ExceptionObject & e)
    {
      throw RuntimeFailure("--resampled: resampling MOVING failed: " + ExceptionMessage(e));
    }
    WriteImageFile(resampler->GetOutput(), o.Resampled);
  }
  return ExitSuccess;
}

template <unsigned int D>
int
RunRegister(const RegisterOptions & o)
{
  using Image = FloatImage<D>;
  itk::FixedArray<double, D> gridSpacing;
  if (o.Transform == TransformKind::BSpline)
  {
    // the command line's per-axis values, before any pixel is read
    gridSpacing = GridSpacingPerAxis<D>(o.GridSpacing);
  }
  const auto fixed = ReadImageFile<Image>(o.Fixed);
  const auto moving = ReadImageFile<Image>(o.Moving);

  // rigid and affine: the centre at FIXED's geometric centre, the
  // translation between the two images' centres (ITK's
  // CenteredTransformInitializer with GeometryOn, as its examples do)
  const auto centred = [&](auto * transform)
  {
    using Transform = std::remove_pointer_t<decltype(transform)>;
    auto initializer = itk::CenteredTransformInitializer<Transform, Image, Image>::New();
    initializer->SetTransform(transform);
    initializer->SetFixedImage(fixed);
    initializer->SetMovingImage(moving);
    initializer->GeometryOn();
    initializer->InitializeTransform();
  };
  switch (o.Transform)
  {
    case TransformKind::Translation:
    {
      auto transform = itk::TranslationTransform<double, D>::New(); // the identity
      return Register<D>(o, fixed, moving, transform.GetPointer(), "translation");
    }
    case TransformKind::Rigid:
    {
      using Euler = std::conditional_t<D == 2, itk::Euler2DTransform<double>, itk::Euler3DTransform<double>>;
      auto transform = Euler::New();
      centred(transform.GetPointer());
      return Register<D>(
        o, fixed, moving, transform.GetPointer(), std::string("rigid (") + transform->GetNameOfClass() + ")");
    }
    case TransformKind::Affine:
    {
      auto transform = itk::AffineTransform<double, D>::New();
      centred(transform.GetPointer());
      return Register<D>(o, fixed, moving, transform.GetPointer(), "affine");
    }
    case TransformKind::BSpline:
      break;
  }
  auto              transform = itk::BSplineTransform<double, D, 3>::New();
  const std::string grid = InitializeBSpline<D>(transform.GetPointer(), fixed.GetPointer(), gridSpacing);
  return Register<D>(o, fixed, moving, transform.GetPointer(), "cubic B-spline, " + grid);
}

/** "4,2,1": positive integers. */
std::vector<unsigned int>
ParseShrinkFactors(const std::string & text)
{
  std::vector<unsigned int> factors;
  std::size_t               start = 0;
  while (true)
  {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty())
    {
      throw UsageError("--levels: '" + text + "' is not a comma-separated list of shrink factors (an item is empty)");
    }
    factors.push_back(static_cast<unsigned int>(ParseInteger("--levels (a shrink factor)", item, 1, 1024)));
    if (comma == std::string::npos)
    {
      return factors;
    }
    start = comma + 1;
  }
}

} // namespace

void
RegisterUsage(std::ostream & os)
{
  os << "Usage: " << ToolName << " register FIXED MOVING OUT_TRANSFORM [options]\n"
     << "\n"
     << "Registers MOVING onto FIXED (2D or 3D scalar images, read as float) with\n"
     << "ITK's itk::ImageRegistrationMethodv4 and the module's v4 metric, which runs\n"
     << "on the GPU or on the module's CPU core with ITK's arithmetic. OUT_TRANSFORM\n"
     << "gets the transform in ITK's text format (.tfm or .txt; not HDF5): the map\n"
     << "from FIXED's points to MOVING's, as ITK's registration gives it, which\n"
     << "  " << ToolName << " resample MOVING OUT --transform OUT_TRANSFORM --reference FIXED\n"
     << "reads (every transform below).\n"
     << "\n"
     << "Options:\n"
     << "  --transform T          translation (itk::TranslationTransform, from the\n"
     << "                         identity), rigid (Euler2DTransform, Euler3DTransform),\n"
     << "                         affine (AffineTransform; default) or bspline (a cubic\n"
     << "                         BSplineTransform; needs --grid-spacing). rigid and\n"
     << "                         affine start centred on FIXED's centre, translated\n"
     << "                         between the images' centres\n"
     << "                         (CenteredTransformInitializer, GeometryOn)\n"
     << "  --grid-spacing S[,S,S] bspline: the control-point spacing in physical units\n"
     << "                         (one value, or one per axis): ceil(extent / S) cells\n"
     << "                         over FIXED's extent as BSplineTransformInitializer\n"
     << "                         lays the grid; the same grid at every level\n"
     << "  --metric M             meansquares, correlation or mattes (default: Mattes\n"
     << "                         mutual information)\n"
     << "  --bins N               mattes: histogram bins (default 50, at least 5; the\n"
     << "                         GPU takes at most " << cif::kMaxMattesBins << ")\n"
     << "  --levels F[,F...]      the shrink factor of each level, coarse to fine\n"
     << "                         (default 1: one level at full resolution)\n"
     << "  --smoothing S[,S...]   the Gaussian sigma of each level in physical units, one\n"
     << "                         per level (default 0 at every level)\n"
     << "  --iterations N         at most N iterations per level (default 100)\n"
     << "  --resampled OUT_IMAGE  also write MOVING resampled onto FIXED's grid through\n"
     << "                         the result (linear interpolation, float, 0 outside)\n"
     << "  --device auto|gpu|cpu  where the metric runs (default auto); auto and gpu also\n"
     << "                         run the pyramid's smoothing and shrinking and the\n"
     << "                         metric's gradient filter through the module's factory\n"
     << "  --verify               before registering, evaluate the module's metric and\n"
     << "                         ITK's own (created without the module's factory) at\n"
     << "                         the initial transform on the first level's images\n"
     << "                         (made by ITK's smoothing and shrinking); fail, writing\n"
     << "                         nothing, when the values differ by more than 1e-5\n"
     << "                         relative or the derivatives by more than 1e-4\n"
     << "                         relative in norm\n"
     << "  --quiet                no progress bar, no notes\n"
     << "\n"
     << "Optimisers: translation, rigid and affine, RegularStepGradientDescentOptimizerv4\n"
     << "with scales from physical shifts (RegistrationParameterScalesFromPhysicalShift),\n"
     << "first step " << LearningRate << ", relaxation " << RelaxationFactor << ", minimum step " << MinimumStepLength
     << ", gradient tolerance " << GradientMagnitudeTolerance << ";\n"
     << "bspline, LBFGSBOptimizerv4 as ITK's DeformableRegistration8, at most N function\n"
     << "evaluations per level too.\n"
     << "\n"
     << "Prints the size, the transform, the metric, the levels, the iterations of each\n"
     << "level, the metric value at the result, why the last level stopped, where the\n"
     << "metric ran and the registration time (and a linear transform's parameters).\n"
     << "Exit status: 0 done; 1 failure (reading, FIXED and MOVING of different\n"
     << "dimensions, registering, writing, --verify); 2 bad command line (nothing was\n"
     << "done); 77 --device gpu without a usable GPU (1 instead when the environment\n"
     << "sets CUDAIMAGEFILTERS_REQUIRE_GPU=1).\n"
     << "\n"
     << "Examples:\n"
     << "  " << ToolName << " register fixed.png moving.png shift.tfm --transform translation\n"
     << "  " << ToolName << " register t1.nii.gz t2.nii.gz affine.tfm --levels 4,2,1 --smoothing 2,1,0\n"
     << "  " << ToolName << " register a.nii.gz b.nii.gz warp.tfm --transform bspline --grid-spacing 20\n";
}

int
RegisterMain(const std::vector<std::string> & args)
{
  if (HasHelpOption(args))
  {
    RegisterUsage(std::cout);
    return ExitSuccess;
  }
  const ParsedArguments parsed = ParseArguments(args,
                                                { { "--transform", true },
                                                  { "--grid-spacing", true },
                                                  { "--metric", true },
                                                  { "--bins", true },
                                                  { "--levels", true },
                                                  { "--smoothing", true },
                                                  { "--iterations", true },
                                                  { "--resampled", true },
                                                  { "--device", true },
                                                  { "--verify", false },
                                                  { "--quiet", false } });
  if (parsed.Positionals.size() != 3)
  {
    throw UsageError("register takes three arguments, FIXED MOVING OUT_TRANSFORM (got " +
                     std::to_string(parsed.Positionals.size()) + ")");
  }
  RegisterOptions o;
  o.Fixed = parsed.Positionals[0];
  o.Moving = parsed.Positionals[1];
  o.Output = parsed.Positionals[2];

  const std::string transform = parsed.Get("--transform", "affine");
  if (transform == "translation")
  {
    o.Transform = TransformKind::Translation;
  }
  else if (transform == "rigid")
  {
    o.Transform = TransformKind::Rigid;
  }
  else if (transform == "affine")
  {
    o.Transform = TransformKind::Affine;
  }
  else if (transform == "bspline")
  {
    o.Transform = TransformKind::BSpline;
  }
  else
  {
    throw UsageError("--transform: unknown transform '" + transform + "' (translation, rigid, affine or bspline)");
  }
  if (parsed.Has("--grid-spacing"))
  {
    if (o.Transform != TransformKind::BSpline)
    {
      throw UsageError("--grid-spacing is the B-spline's control-point spacing: it needs --transform bspline");
    }
    o.GridSpacing = ParseRealList("--grid-spacing", parsed.Get("--grid-spacing"));
    for (const double s : o.GridSpacing)
    {
      if (!(s > 0.0))
      {
        throw UsageError("--grid-spacing: " + parsed.Get("--grid-spacing") +
                         " has a spacing that is not positive (physical units, greater than 0)");
      }
    }
  }
  else if (o.Transform == TransformKind::BSpline)
  {
    throw UsageError("--transform bspline needs --grid-spacing S[,S,S] (the control-point spacing, physical units)");
  }

  const std::string metric = parsed.Get("--metric", "mattes");
  if (metric == "meansquares")
  {
    o.Metric = MetricKind::MeanSquares;
  }
  else if (metric == "correlation")
  {
    o.Metric = MetricKind::Correlation;
  }
  else if (metric == "mattes")
  {
    o.Metric = MetricKind::Mattes;
  }
  else
  {
    throw UsageError("--metric: unknown metric '" + metric + "' (meansquares, correlation or mattes)");
  }
  if (parsed.Has("--bins"))
  {
    if (o.Metric != MetricKind::Mattes)
    {
      throw UsageError("--bins is the Mattes histogram's: it needs --metric mattes");
    }
    o.Bins = static_cast<unsigned int>(ParseInteger("--bins", parsed.Get("--bins"), 5, 100000));
  }

  if (parsed.Has("--levels"))
  {
    o.ShrinkFactors = ParseShrinkFactors(parsed.Get("--levels"));
  }
  o.Sigmas.assign(o.ShrinkFactors.size(), 0.0);
  if (parsed.Has("--smoothing"))
  {
    o.Sigmas = ParseRealList("--smoothing", parsed.Get("--smoothing"));
    for (const double s : o.Sigmas)
    {
      if (s < 0.0)
      {
        throw UsageError("--smoothing: " + parsed.Get("--smoothing") + " has a negative sigma");
      }
    }
    if (o.Sigmas.size() != o.ShrinkFactors.size())
    {
      throw UsageError("--smoothing has " + std::to_string(o.Sigmas.size()) + " sigmas but --levels " +
                       std::to_string(o.ShrinkFactors.size()) + " shrink factors (" + ListToString(o.ShrinkFactors) +
                       "): give one sigma per level");
    }
  }
  o.Iterations = static_cast<unsigned int>(
    ParseInteger("--iterations", parsed.Get("--iterations", "100"), 1, std::numeric_limits<int>::max()));
  o.Resampled = parsed.Get("--resampled");
  if (parsed.Has("--resampled") && o.Resampled.empty())
  {
    throw UsageError("--resampled: the file name is empty");
  }
  o.ExecutionMode = ParseDeviceOption(parsed);
  o.Verify = parsed.Has("--verify");
  o.Quiet = parsed.Has("--quiet");
  if (o.ExecutionMode == itk::CudaExecutionMode::GPU && o.Metric == MetricKind::Mattes &&
      o.Bins > static_cast<unsigned int>(cif::kMaxMattesBins))
  {
    throw UsageError("--bins " + std::to_string(o.Bins) + ": the GPU takes at most " +
                     std::to_string(cif::kMaxMattesBins) + " bins (--device auto runs ITK's metric beyond)");
  }

  CheckTransformOutput(o.Output);
  if (!o.Resampled.empty())
  {
    const std::string io = CheckImageOutput(o.Resampled);
    if (IsIntegerOnlyImageIO(io))
    {
      throw UsageError("cannot write '" + o.Resampled + "': --resampled writes float (" +
                       std::string(FloatImageFormats) + ")");
    }
  }
  if (o.ExecutionMode == itk::CudaExecutionMode::GPU)
  {
    CheckGPUAvailable();
  }
  const unsigned int fixedDimension = CheckScalarImageInput(o.Fixed, CommandName, o.Quiet);
  const unsigned int movingDimension = CheckScalarImageInput(o.Moving, CommandName, o.Quiet);
  if (fixedDimension != movingDimension)
  {
    throw RuntimeFailure("FIXED '" + o.Fixed + "' is " + std::to_string(fixedDimension) + "D but MOVING '" + o.Moving +
                         "' is " + std::to_string(movingDimension) + "D");
  }
  return fixedDimension == 2 ? RunRegister<2>(o) : RunRegister<3>(o);
}

} // namespace tool
} // namespace cif
