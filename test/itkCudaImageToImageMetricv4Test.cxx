/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
// The module's v4 metrics against ITK's own, on ITK's example images: per
// evaluation, the number of valid points, the value (1e-5 relative) and the
// derivative (1e-4 relative in norm), for each transform the core takes,
// in 2D (BrainProtonDensitySliceBorder20 against ...Shifted13x17y) and 3D
// (KmeansTest_T1UCharRaw against itself under a transform). CPU suites run
// the module's CPU core; the Gpu suites the CUDA core (label gpu).
#include "CudaImageFiltersTestUtilities.h"
#include "itkAffineTransform.h"
#include "itkBSplineTransform.h"
#include "itkBSplineTransformInitializer.h"
#include "itkCompositeTransform.h"
#include "itkDisplacementFieldTransform.h"
#include "itkGaussianSmoothingOnUpdateDisplacementFieldTransform.h"
#include "itkGradientDescentOptimizerv4.h"
#include "itkImageRegistrationMethodv4.h"
#include "itkBSplineInterpolateImageFunction.h"
#include "itkCudaBSplineInterpolateImageFunction.h"
#include "itkCudaFactorylessTwin.h"
#include "itkCudaCorrelationImageToImageMetricv4.h"
#include "itkCudaImageFiltersFactory.h"
#include "itkCudaMattesMutualInformationImageToImageMetricv4.h"
#include "itkCudaMeanSquaresImageToImageMetricv4.h"
#include "itkEuler2DTransform.h"
#include "itkEllipseSpatialObject.h"
#include "itkEuler3DTransform.h"
#include "itkImageMaskSpatialObject.h"
#include "itkImageRegionIteratorWithIndex.h"
#include "itkNearestNeighborInterpolateImageFunction.h"
#include "itkVectorNearestNeighborInterpolateImageFunction.h"
#include "itkShrinkImageFilter.h"
#include "itkSimilarity2DTransform.h"
#include "itkSimilarity3DTransform.h"
#include "itkTranslationTransform.h"
#include "itkVersorRigid3DTransform.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <sstream>
#include <string>

namespace
{
using F2 = itk::Image<float, 2>;
using F3 = itk::Image<float, 3>;
using cif_test::ExampleData;
using cif_test::ReadImage;

template <typename TImage>
using ItkMeanSquares = itk::CudaFactorylessTwin<itk::MeanSquaresImageToImageMetricv4<TImage, TImage>>;
template <typename TImage>
using CudaMeanSquares = itk::CudaMeanSquaresImageToImageMetricv4<TImage, TImage>;
template <typename TImage>
using ItkCorrelation = itk::CudaFactorylessTwin<itk::CorrelationImageToImageMetricv4<TImage, TImage>>;
template <typename TImage>
using CudaCorrelation = itk::CudaCorrelationImageToImageMetricv4<TImage, TImage>;

/** A metric of ITK and the module's twin of it. */
template <template <typename> class TItk, template <typename> class TOurs>
struct MetricPair
{
  template <typename TImage>
  using Itk = TItk<TImage>;
  template <typename TImage>
  using Ours = TOurs<TImage>;
};
using MeanSquaresPair = MetricPair<ItkMeanSquares, CudaMeanSquares>;
using CorrelationPair = MetricPair<ItkCorrelation, CudaCorrelation>;
template <typename TImage>
using ItkMattes = itk::CudaFactorylessTwin<itk::MattesMutualInformationImageToImageMetricv4<TImage, TImage>>;
template <typename TImage>
using CudaMattes = itk::CudaMattesMutualInformationImageToImageMetricv4<TImage, TImage>;
using MattesPair = MetricPair<ItkMattes, CudaMattes>;

struct Evaluation
{
  double               value{ 0 };
  itk::Array<double>   derivative;
  itk::SizeValueType   valid{ 0 };
  std::string          report;
};

/** Off: the gradients by ITK's central differences instead of the gradient
 * filter (UseMovingImageGradientFilter), for ITK's metric and the module's. */
bool g_GradientFilter = true;

/** On: a sampled point set (a fifth of the fixed image's pixels, at random
 * positions, fixed seed) instead of the dense domain, for both metrics. */
bool g_SampledPoints = false;

/** 1: both metrics interpolate the fixed and the moving image with ITK's
 * BSplineInterpolateImageFunction (order 3, double coefficients); 2: the
 * moving image with the module's CudaBSplineInterpolateImageFunction (float
 * coefficients, computed on the CPU). */
int g_Cubic = 0;

/** 1: a fixed image mask, 2: a moving image mask, 3: both (FixedMask,
 * MovingMask), for ITK's metric and the module's. */
int g_Masks = 0;

/** A fixed image mask: an ImageMaskSpatialObject of unsigned char (ITK's
 * default) on the fixed image's grid, on where the fixed pixel is above 50
 * (the brain, roughly). */
template <typename TImage>
typename itk::ImageMaskSpatialObject<TImage::ImageDimension>::Pointer
FixedMask(const TImage * fixed)
{
  constexpr unsigned int D = TImage::ImageDimension;
  using MaskImage = itk::Image<unsigned char, D>;
  auto image = MaskImage::New();
  image->CopyInformation(fixed);
  image->SetRegions(fixed->GetBufferedRegion());
  image->Allocate();
  itk::ImageRegionIteratorWithIndex<MaskImage> out(image, image->GetBufferedRegion());
  for (; !out.IsAtEnd(); ++out)
  {
    out.Set(fixed->GetPixel(out.GetIndex()) > 50 ? 1 : 0);
  }
  auto mask = itk::ImageMaskSpatialObject<D>::New();
  mask->SetImage(image);
  mask->Update();
  return mask;
}

/** A moving image mask that exercises ITK's whole test: an
 * ImageMaskSpatialObject of short on another grid than the moving image
 * (spacing 1.5 times, origin at the moving image's index 0.7, rotated by
 * 0.08 rad, buffer starting at index 2, covering about 90% of the moving
 * image) with
 * stripes of zeros, moved by an ObjectToParentTransform (a rotation and a
 * translation). */
template <typename TImage>
typename itk::ImageMaskSpatialObject<TImage::ImageDimension, short>::Pointer
MovingMask(const TImage * moving)
{
  constexpr unsigned int D = TImage::ImageDimension;
  using MaskImage = itk::Image<short, D>;
  auto                           image = MaskImage::New();
  typename MaskImage::SpacingType spacing;
  typename MaskImage::PointType   origin;
  typename MaskImage::RegionType  region;
  itk::ContinuousIndex<double, D> corner;
  for (unsigned int a = 0; a < D; ++a)
  {
    spacing[a] = 1.5 * moving->GetSpacing()[a];
    corner[a] = 0.7;
    region.SetIndex(a, 2);
    region.SetSize(a, static_cast<itk::SizeValueType>(0.6 * moving->GetLargestPossibleRegion().GetSize()[a]));
  }
  moving->TransformContinuousIndexToPhysicalPoint(corner, origin);
  typename MaskImage::DirectionType rotation;
  rotation.SetIdentity();
  rotation[0][0] = std::cos(0.08);
  rotation[0][1] = -std::sin(0.08);
  rotation[1][0] = std::sin(0.08);
  rotation[1][1] = std::cos(0.08);
  const typename MaskImage::DirectionType direction = moving->GetDirection() * rotation;
  image->SetSpacing(spacing);
  image->SetOrigin(origin);
  image->SetDirection(direction);
  image->SetRegions(region);
  image->Allocate();
  itk::ImageRegionIteratorWithIndex<MaskImage> out(image, region);
  for (; !out.IsAtEnd(); ++out)
  {
    out.Set(((out.GetIndex()[0] / 8 + out.GetIndex()[1] / 8) % 3 == 0) ? 0 : 7);
  }
  using Mask = itk::ImageMaskSpatialObject<D, short>;
  auto mask = Mask::New();
  mask->SetImage(image);
  auto                              placement = Mask::TransformType::New();
  typename Mask::TransformType::OutputVectorType offset;
  for (unsigned int a = 0; a < D; ++a)
  {
    offset[a] = 2.5 - 1.25 * a;
  }
  placement->Rotate(0, 1, -0.03);
  placement->Translate(offset);
  mask->SetObjectToParentTransform(placement);
  mask->Update();
  return mask;
}

template <typename TMetric, typename TImage>
void
SetSampledPoints(TMetric * metric, const TImage * fixed)
{
  using PointSetType = typename TMetric::FixedSampledPointSetType;
  auto                                   points = PointSetType::New();
  std::mt19937                           random(20261128);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const auto                             region = fixed->GetLargestPossibleRegion();
  const auto                             n = region.GetNumberOfPixels() / 5;
  for (itk::SizeValueType i = 0; i < n; ++i)
  {
    itk::ContinuousIndex<double, TImage::ImageDimension> index;
    for (unsigned int a = 0; a < TImage::ImageDimension; ++a)
    {
      index[a] = region.GetIndex()[a] - 0.5 + unit(random) * region.GetSize()[a];
    }
    typename PointSetType::PointType point;
    fixed->TransformContinuousIndexToPhysicalPoint(index, point);
    points->SetPoint(i, point);
  }
  metric->SetFixedSampledPointSet(points);
  metric->SetUseSampledPointSet(true);
}

template <typename TMetric, typename TImage, typename TTransform>
Evaluation
RunMetric(TMetric * metric, const TImage * fixed, const TImage * moving, TTransform * transform)
{
  metric->SetUseMovingImageGradientFilter(g_GradientFilter);
  if (g_SampledPoints)
  {
    SetSampledPoints(metric, fixed);
  }
  if (g_Cubic == 1)
  {
    metric->SetFixedInterpolator(itk::BSplineInterpolateImageFunction<TImage, double, double>::New());
    metric->SetMovingInterpolator(itk::BSplineInterpolateImageFunction<TImage, double, double>::New());
  }
  else if (g_Cubic == 2)
  {
    auto interpolator = itk::CudaBSplineInterpolateImageFunction<TImage, double, float>::New();
    interpolator->SetExecutionMode(itk::CudaExecutionMode::CPU);
    metric->SetMovingInterpolator(interpolator);
  }
  if ((g_Masks & 1) != 0)
  {
    metric->SetFixedImageMask(FixedMask(fixed));
  }
  if ((g_Masks & 2) != 0)
  {
    metric->SetMovingImageMask(MovingMask(moving));
  }
  metric->SetFixedImage(fixed);
  metric->SetMovingImage(moving);
  metric->SetMovingTransform(transform);
  metric->Initialize();
  Evaluation e;
  metric->GetValueAndDerivative(e.value, e.derivative);
  e.valid = metric->GetNumberOfValidPoints();
  return e;
}

template <typename TPair, typename TImage, typename TTransform>
void
ExpectItksAnswer(const TImage * fixed, const TImage * moving, TTransform * transform, itk::CudaExecutionMode mode)
{
  auto       itkMetric = TPair::template Itk<TImage>::New();
  const auto expected = RunMetric(itkMetric.GetPointer(), fixed, moving, transform);
  auto       ours = TPair::template Ours<TImage>::New();
  ours->SetExecutionMode(mode);
  const auto got = RunMetric(ours.GetPointer(), fixed, moving, transform);
  const auto & report = ours->GetLastExecutionReport();
  // the module's core ran (not ITK's code), on the device asked for
  if (mode == itk::CudaExecutionMode::GPU)
  {
    EXPECT_EQ(report.Device, itk::CudaExecutedOn::GPU) << report.Message;
  }
  else
  {
    EXPECT_EQ(report.Message.rfind("CPU (the module's metric core)", 0), 0u) << report.Message;
  }
  ASSERT_GT(expected.valid, 0u);
  EXPECT_EQ(got.valid, expected.valid) << transform->GetNameOfClass() << " ITK " << expected.valid;
  if (g_Masks != 0)
  {
    // the masks take points away (so a core that ignored them would fail)
    const int masks = g_Masks;
    g_Masks = 0;
    auto       unmaskedMetric = TPair::template Itk<TImage>::New();
    const auto unmasked = RunMetric(unmaskedMetric.GetPointer(), fixed, moving, transform);
    g_Masks = masks;
    EXPECT_LT(expected.valid, unmasked.valid) << "masks " << masks << " leave every point valid";
  }
  EXPECT_LE(std::abs(got.value - expected.value), 1e-5 * std::abs(expected.value))
    << transform->GetNameOfClass() << ": value " << got.value << ", ITK " << expected.value;
  ASSERT_EQ(got.derivative.GetSize(), expected.derivative.GetSize());
  double difference = 0;
  double norm = 0;
  for (unsigned int p = 0; p < expected.derivative.GetSize(); ++p)
  {
    difference += (got.derivative[p] - expected.derivative[p]) * (got.derivative[p] - expected.derivative[p]);
    norm += expected.derivative[p] * expected.derivative[p];
  }
  ASSERT_GT(norm, 0.0);
  // (central differences or the gradient filter, as asked)
  EXPECT_EQ(ours->GetUseMovingImageGradientFilter(), g_GradientFilter);
  std::ostringstream both;
  if (expected.derivative.GetSize() <= 200)
  {
    both << ": derivative " << got.derivative << ", ITK " << expected.derivative;
  }
  EXPECT_LE(std::sqrt(difference), 1e-4 * std::sqrt(norm)) << transform->GetNameOfClass() << both.str();
  // GetValue alone gives the same value
  EXPECT_EQ(ours->GetValue(), got.value);
  std::cout << ours->GetNameOfClass() << ", " << transform->GetNameOfClass() << ": " << got.valid << " valid points, value " << got.value
            << " (ITK " << expected.value << ", relative difference "
            << std::abs(got.value - expected.value) / std::abs(expected.value) << "), derivative relative difference "
            << std::sqrt(difference / norm) << "; " << report.Message << "\n";
}

template <typename TPair>
void
Transforms2D(itk::CudaExecutionMode mode)
{
  const auto fixed = ReadImage<F2>(ExampleData("BrainProtonDensitySliceBorder20.png"));
  const auto moving = ReadImage<F2>(ExampleData("BrainProtonDensitySliceShifted13x17y.png"));
  itk::Point<double, 2> center;
  center[0] = 110.5;
  center[1] = 128.25;
  {
    auto t = itk::TranslationTransform<double, 2>::New();
    itk::TranslationTransform<double, 2>::ParametersType p(2);
    p[0] = 9.25;
    p[1] = 11.5;
    t->SetParameters(p);
    ExpectItksAnswer<TPair>(fixed.GetPointer(), moving.GetPointer(), t.GetPointer(), mode);
  }
  {
    auto t = itk::Euler2DTransform<double>::New();
    t->SetCenter(center);
    t->SetAngle(0.06);
    itk::Vector<double, 2> translation;
    translation[0] = 11.0;
    translation[1] = 15.5;
    t->SetTranslation(translation);
    ExpectItksAnswer<TPair>(fixed.GetPointer(), moving.GetPointer(), t.GetPointer(), mode);
  }
  {
    auto t = itk::Similarity2DTransform<double>::New();
    t->SetCenter(center);
    t->SetScale(1.04);
    t->SetAngle(-0.05);
    itk::Vector<double, 2> translation;
    translation[0] = 12.5;
    translation[1] = 16.0;
    t->SetTranslation(translation);
    ExpectItksAnswer<TPair>(fixed.GetPointer(), moving.GetPointer(), t.GetPointer(), mode);
  }
  {
    auto t = itk::AffineTransform<double, 2>::New();
    t->SetCenter(center);
    auto parameters = t->GetParameters();
    const double values[6] = { 1.03, 0.04, -0.02, 0.96, 13.5, 17.25 };
    for (unsigned int i = 0; i < 6; ++i)
    {
      parameters[i] = values[i];
    }
    t->SetParameters(parameters);
    ExpectItksAnswer<TPair>(fixed.GetPointer(), moving.GetPointer(), t.GetPointer(), mode);
  }
  {
    // as ImageRegistrationMethodv4 passes it: a composite whose last
    // transform is optimised (here after a fixed initial translation: the
    // map and the Jacobian are probed)
    auto initial = itk::TranslationTransform<double, 2>::New();
    itk::TranslationTransform<double, 2>::ParametersType p(2);
    p[0] = 4.0;
    p[1] = -2.5;
    initial->SetParameters(p);
    auto euler = itk::Euler2DTransform<double>::New();
    euler->SetCenter(center);
    euler->SetAngle(0.03);
    itk::Vector<double, 2> translation;
    translation[0] = 8.0;
    translation[1] = 19.0;
    euler->SetTranslation(translation);
    auto composite = itk::CompositeTransform<double, 2>::New();
    composite->AddTransform(initial);
    composite->AddTransform(euler);
    composite->SetOnlyMostRecentTransformToOptimizeOn();
    ExpectItksAnswer<TPair>(fixed.GetPointer(), moving.GetPointer(), composite.GetPointer(), mode);
  }
}

template <typename TPair>
void
Transforms3D(itk::CudaExecutionMode mode)
{
  const auto volume = ReadImage<F3>(ExampleData("KmeansTest_T1UCharRaw.nii.gz"));
  itk::Point<double, 3> center;
  {
    itk::ContinuousIndex<double, 3> middle;
    for (unsigned int a = 0; a < 3; ++a)
    {
      middle[a] = 0.5 * (volume->GetLargestPossibleRegion().GetSize()[a] - 1);
    }
    volume->TransformContinuousIndexToPhysicalPoint(middle, center);
  }
  {
    auto t = itk::TranslationTransform<double, 3>::New();
    itk::TranslationTransform<double, 3>::ParametersType p(3);
    p[0] = 2.5;
    p[1] = -3.25;
    p[2] = 1.75;
    t->SetParameters(p);
    ExpectItksAnswer<TPair>(volume.GetPointer(), volume.GetPointer(), t.GetPointer(), mode);
  }
  {
    auto t = itk::Euler3DTransform<double>::New();
    t->SetCenter(center);
    t->SetRotation(0.05, -0.03, 0.08);
    itk::Vector<double, 3> translation;
    translation[0] = 2.0;
    translation[1] = -1.5;
    translation[2] = 3.0;
    t->SetTranslation(translation);
    ExpectItksAnswer<TPair>(volume.GetPointer(), volume.GetPointer(), t.GetPointer(), mode);
  }
  {
    auto t = itk::VersorRigid3DTransform<double>::New();
    t->SetCenter(center);
    itk::Vector<double, 3> axis;
    axis[0] = 0.3;
    axis[1] = 1.0;
    axis[2] = -0.2;
    t->SetRotation(axis, 0.07);
    itk::Vector<double, 3> translation;
    translation[0] = -2.0;
    translation[1] = 1.25;
    translation[2] = 2.5;
    t->SetTranslation(translation);
    ExpectItksAnswer<TPair>(volume.GetPointer(), volume.GetPointer(), t.GetPointer(), mode);
  }
  {
    auto t = itk::Similarity3DTransform<double>::New();
    t->SetCenter(center);
    itk::Vector<double, 3> axis;
    axis[0] = -0.5;
    axis[1] = 0.2;
    axis[2] = 1.0;
    t->SetRotation(axis, -0.05);
    t->SetScale(0.97);
    ExpectItksAnswer<TPair>(volume.GetPointer(), volume.GetPointer(), t.GetPointer(), mode);
  }
  {
    auto t = itk::AffineTransform<double, 3>::New();
    t->SetCenter(center);
    auto         parameters = t->GetParameters();
    const double values[12] = { 1.02, 0.03, -0.01, -0.02, 0.98, 0.04, 0.01, -0.03, 1.01, 1.5, -2.0, 0.75 };
    for (unsigned int i = 0; i < 12; ++i)
    {
      parameters[i] = values[i];
    }
    t->SetParameters(parameters);
    ExpectItksAnswer<TPair>(volume.GetPointer(), volume.GetPointer(), t.GetPointer(), mode);
  }
}

/** A B-spline transform of order 3 over `image`'s domain (ITK's
 * BSplineTransformInitializer, `mesh` cells per axis), or over the middle
 * half of it (`partial`: points outside the grid have no Jacobian), with
 * random coefficients in [-amplitude, amplitude] (fixed seed). */
template <typename TImage>
typename itk::BSplineTransform<double, TImage::ImageDimension, 3>::Pointer
RandomBSpline(const TImage * image, unsigned int mesh, double amplitude, bool partial = false)
{
  constexpr unsigned int D = TImage::ImageDimension;
  using TransformType = itk::BSplineTransform<double, D, 3>;
  auto                                 transform = TransformType::New();
  typename TransformType::MeshSizeType meshSize;
  meshSize.Fill(mesh);
  auto initializer = itk::BSplineTransformInitializer<TransformType, TImage>::New();
  initializer->SetTransform(transform);
  initializer->SetImage(image);
  initializer->SetTransformDomainMeshSize(meshSize);
  initializer->InitializeTransform();
  if (partial)
  {
    auto origin = transform->GetTransformDomainOrigin();
    auto dimensions = transform->GetTransformDomainPhysicalDimensions();
    for (unsigned int a = 0; a < D; ++a)
    {
      origin[a] += 0.25 * dimensions[a];
      dimensions[a] *= 0.5;
    }
    transform->SetTransformDomainOrigin(origin);
    transform->SetTransformDomainPhysicalDimensions(dimensions);
  }
  std::mt19937                           random(1128 + mesh);
  std::uniform_real_distribution<double> unit(-amplitude, amplitude);
  typename TransformType::ParametersType parameters(transform->GetNumberOfParameters());
  for (unsigned int p = 0; p < parameters.GetSize(); ++p)
  {
    parameters[p] = unit(random);
  }
  transform->SetParameters(parameters);
  return transform;
}

/** The fixed initial transforms the composites' tests put before a
 * B-spline or a displacement field: a 2D affine, and a 3D rigid. */
itk::AffineTransform<double, 2>::Pointer
InitialAffine2D()
{
  auto         initial = itk::AffineTransform<double, 2>::New();
  auto         parameters = initial->GetParameters();
  const double values[6] = { 0.97, 0.05, -0.03, 1.02, 2.5, -1.75 };
  for (unsigned int i = 0; i < 6; ++i)
  {
    parameters[i] = values[i];
  }
  initial->SetParameters(parameters);
  return initial;
}

itk::Euler3DTransform<double>::Pointer
InitialRigid3D()
{
  auto initial = itk::Euler3DTransform<double>::New();
  initial->SetRotation(0.03, -0.02, 0.05);
  itk::Vector<double, 3> translation;
  translation[0] = 1.5;
  translation[1] = -2.0;
  translation[2] = 0.75;
  initial->SetTranslation(translation);
  return initial;
}

/** KmeansTest_T1UCharRaw shrunk by 2 (64 x 64 x 31: ITK's metric forms
 * the full Jacobian of a B-spline at every point, so the whole volume
 * takes it long). */
F3::Pointer
SmallVolume()
{
  const auto volume = ReadImage<F3>(ExampleData("KmeansTest_T1UCharRaw.nii.gz"));
  auto       shrink = itk::ShrinkImageFilter<F3, F3>::New();
  shrink->SetInput(volume);
  shrink->SetShrinkFactors(2);
  shrink->Update();
  F3::Pointer small = shrink->GetOutput();
  small->DisconnectPipeline();
  return small;
}

/** B-spline moving transforms in 2D: BrainProtonDensitySliceBorder20
 * against ...BSplined10 (the images of ITK's DeformableRegistration
 * examples): an 8 x 8 mesh, a grid over the middle half of the image, a
 * 5 x 5 mesh inside a composite (as ImageRegistrationMethodv4 passes it),
 * and 6 x 6 meshes after fixed initial transforms in a composite. */
template <typename TPair>
void
BSplineTransforms2D(itk::CudaExecutionMode mode)
{
  const auto fixed = ReadImage<F2>(ExampleData("BrainProtonDensitySliceBorder20.png"));
  const auto moving = ReadImage<F2>(ExampleData("BrainProtonDensitySliceBSplined10.png"));
  auto       full = RandomBSpline(fixed.GetPointer(), 8, 2.0);
  ExpectItksAnswer<TPair>(fixed.GetPointer(), moving.GetPointer(), full.GetPointer(), mode);
  auto partial = RandomBSpline(fixed.GetPointer(), 6, 3.0, true);
  ExpectItksAnswer<TPair>(fixed.GetPointer(), moving.GetPointer(), partial.GetPointer(), mode);
  auto composite = itk::CompositeTransform<double, 2>::New();
  composite->AddTransform(RandomBSpline(fixed.GetPointer(), 5, 1.5));
  ExpectItksAnswer<TPair>(fixed.GetPointer(), moving.GetPointer(), composite.GetPointer(), mode);
  {
    // after a moving initial transform, as ImageRegistrationMethodv4 composes
    // them: an affine (exact map), then a translation and an affine (probed)
    auto initial = InitialAffine2D();
    auto after = itk::CompositeTransform<double, 2>::New();
    after->AddTransform(initial);
    after->AddTransform(RandomBSpline(fixed.GetPointer(), 6, 2.0));
    after->SetOnlyMostRecentTransformToOptimizeOn();
    ExpectItksAnswer<TPair>(fixed.GetPointer(), moving.GetPointer(), after.GetPointer(), mode);
    auto shift = itk::TranslationTransform<double, 2>::New();
    itk::TranslationTransform<double, 2>::ParametersType p(2);
    p[0] = -1.5;
    p[1] = 3.25;
    shift->SetParameters(p);
    auto two = itk::CompositeTransform<double, 2>::New();
    two->AddTransform(shift);
    two->AddTransform(initial);
    two->AddTransform(RandomBSpline(fixed.GetPointer(), 6, 2.0, true));
    two->SetOnlyMostRecentTransformToOptimizeOn();
    ExpectItksAnswer<TPair>(fixed.GetPointer(), moving.GetPointer(), two.GetPointer(), mode);
  }
}

/** A B-spline moving transform in 3D (4 x 4 x 4 mesh, 3 mm; and a 3 x 3 x 3
 * mesh after a rigid initial transform) on
 * KmeansTest_T1UCharRaw shrunk by 2 (64 x 64 x 31; ITK's metric forms the
 * full Jacobian at every point, so the whole volume takes it long). */
template <typename TPair>
void
BSplineTransforms3D(itk::CudaExecutionMode mode)
{
  const F3::Pointer small = SmallVolume();
  auto              t = RandomBSpline(small.GetPointer(), 4, 3.0);
  ExpectItksAnswer<TPair>(small.GetPointer(), small.GetPointer(), t.GetPointer(), mode);
  // after a rigid moving initial transform
  auto initial = InitialRigid3D();
  auto composite = itk::CompositeTransform<double, 3>::New();
  composite->AddTransform(initial);
  composite->AddTransform(RandomBSpline(small.GetPointer(), 3, 2.0));
  composite->SetOnlyMostRecentTransformToOptimizeOn();
  ExpectItksAnswer<TPair>(small.GetPointer(), small.GetPointer(), composite.GetPointer(), mode);
}

/** A smooth displacement field transform of class TField on `image`'s grid
 * (ITK requires the virtual domain's): on each axis a sum of two sines of
 * random wave vectors and phases, up to `amplitude` pixels in all (fixed
 * seed). `nudge`: the field's origin moved by that fraction of a spacing
 * (ITK accepts 1e-6 of it), so that the field is interpolated between
 * samples. */
template <template <typename, unsigned int> class TField, typename TImage>
typename TField<double, TImage::ImageDimension>::Pointer
SmoothField(const TImage * image, double amplitude, unsigned int seed, double nudge = 0.0)
{
  constexpr unsigned int D = TImage::ImageDimension;
  using FieldTransform = TField<double, D>;
  using Field = typename FieldTransform::DisplacementFieldType;
  auto field = Field::New();
  field->CopyInformation(image);
  field->SetRegions(image->GetLargestPossibleRegion());
  field->Allocate();
  auto origin = field->GetOrigin();
  for (unsigned int a = 0; a < D; ++a)
  {
    origin[a] += nudge * field->GetSpacing()[a];
  }
  field->SetOrigin(origin);
  std::mt19937                           random(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  double                                 wave[D][2][D];
  double                                 phase[D][2];
  for (unsigned int a = 0; a < D; ++a)
  {
    for (int k = 0; k < 2; ++k)
    {
      for (unsigned int b = 0; b < D; ++b)
      {
        wave[a][k][b] = 2.0 * 3.141592653589793 * (0.5 + 1.5 * unit(random)) /
                        static_cast<double>(image->GetLargestPossibleRegion().GetSize()[b]);
      }
      phase[a][k] = 6.283185307179586 * unit(random);
    }
  }
  itk::ImageRegionIteratorWithIndex<Field> it(field, field->GetBufferedRegion());
  for (; !it.IsAtEnd(); ++it)
  {
    typename Field::PixelType u;
    for (unsigned int a = 0; a < D; ++a)
    {
      double sum = 0.0;
      for (int k = 0; k < 2; ++k)
      {
        double argument = phase[a][k];
        for (unsigned int b = 0; b < D; ++b)
        {
          argument += wave[a][k][b] * it.GetIndex()[b];
        }
        sum += 0.5 * amplitude * std::sin(argument);
      }
      u[a] = sum * field->GetSpacing()[a];
    }
    it.Set(u);
  }
  auto transform = FieldTransform::New();
  transform->SetDisplacementField(field);
  return transform;
}

/** Displacement field moving transforms (ITK's local-support path: D
 * parameters per virtual point), in 2D on BrainProtonDensitySliceBorder20
 * against ...BSplined10: a field alone, one read between its samples, and
 * a GaussianSmoothingOnUpdateDisplacementFieldTransform after a fixed
 * affine initial transform in a composite (as ImageRegistrationMethodv4
 * composes them); in 3D on KmeansTest_T1UCharRaw shrunk by 2, alone and
 * after a rigid initial transform. */
template <typename TPair>
void
FieldTransforms(itk::CudaExecutionMode mode)
{
  {
    const auto fixed = ReadImage<F2>(ExampleData("BrainProtonDensitySliceBorder20.png"));
    const auto moving = ReadImage<F2>(ExampleData("BrainProtonDensitySliceBSplined10.png"));
    auto       alone = SmoothField<itk::DisplacementFieldTransform>(fixed.GetPointer(), 4.0, 11);
    ExpectItksAnswer<TPair>(fixed.GetPointer(), moving.GetPointer(), alone.GetPointer(), mode);
    auto between = SmoothField<itk::DisplacementFieldTransform>(fixed.GetPointer(), 4.0, 12, 4e-7);
    ExpectItksAnswer<TPair>(fixed.GetPointer(), moving.GetPointer(), between.GetPointer(), mode);
    auto initial = InitialAffine2D();
    auto composite = itk::CompositeTransform<double, 2>::New();
    composite->AddTransform(initial);
    composite->AddTransform(
      SmoothField<itk::GaussianSmoothingOnUpdateDisplacementFieldTransform>(fixed.GetPointer(), 3.0, 13));
    composite->SetOnlyMostRecentTransformToOptimizeOn();
    ExpectItksAnswer<TPair>(fixed.GetPointer(), moving.GetPointer(), composite.GetPointer(), mode);
  }
  const F3::Pointer small = SmallVolume();
  auto alone = SmoothField<itk::DisplacementFieldTransform>(small.GetPointer(), 3.0, 14);
  ExpectItksAnswer<TPair>(small.GetPointer(), small.GetPointer(), alone.GetPointer(), mode);
  auto initial = InitialRigid3D();
  auto composite = itk::CompositeTransform<double, 3>::New();
  composite->AddTransform(initial);
  composite->AddTransform(SmoothField<itk::DisplacementFieldTransform>(small.GetPointer(), 2.0, 15));
  composite->SetOnlyMostRecentTransformToOptimizeOn();
  ExpectItksAnswer<TPair>(small.GetPointer(), small.GetPointer(), composite.GetPointer(), mode);
}

/** ITK's answer when no point is valid: value max, zero derivative. */
template <typename TMetric>
void
NoValidPoints(TMetric * metric)
{
  const auto fixed = ReadImage<F2>(ExampleData("BrainProtonDensitySliceBorder20.png"));
  auto       t = itk::TranslationTransform<double, 2>::New();
  itk::TranslationTransform<double, 2>::ParametersType p(2);
  p[0] = 1e5;
  p[1] = 0;
  t->SetParameters(p);
  const bool warnings = itk::Object::GetGlobalWarningDisplay();
  itk::Object::SetGlobalWarningDisplay(false);
  const auto e = RunMetric(metric, fixed.GetPointer(), fixed.GetPointer(), t.GetPointer());
  itk::Object::SetGlobalWarningDisplay(warnings);
  EXPECT_EQ(e.valid, 0u);
  EXPECT_EQ(e.value, std::numeric_limits<double>::max());
  ASSERT_EQ(e.derivative.GetSize(), 2u);
  EXPECT_EQ(e.derivative[0], 0.0);
  EXPECT_EQ(e.derivative[1], 0.0);
}

} // namespace

TEST(MeanSquaresMetric, CpuCoreGivesItksAnswerIn2D)
{
  Transforms2D<MeanSquaresPair>(itk::CudaExecutionMode::CPU);
}

TEST(MeanSquaresMetric, CpuCoreGivesItksAnswerIn3D)
{
  Transforms3D<MeanSquaresPair>(itk::CudaExecutionMode::CPU);
}

/** The tests of `body` with `setting` (one of the g_ switches above) set
 * to `value`, restored after. */
template <typename T, typename TBody>
void
With(T & setting, T value, TBody body)
{
  const T saved = setting;
  setting = value;
  body();
  setting = saved;
}

/** Every metric with both masks (2D: every transform; 3D: the rigid and
 * affine ones and a B-spline), each mask alone, and masks with a sampled
 * point set. */
void
MasksAsItk(itk::CudaExecutionMode mode)
{
  With(g_Masks, 3,
            [mode]
            {
              Transforms2D<MeanSquaresPair>(mode);
              Transforms2D<CorrelationPair>(mode);
              Transforms2D<MattesPair>(mode);
              Transforms3D<MattesPair>(mode);
              BSplineTransforms2D<MeanSquaresPair>(mode);
              BSplineTransforms3D<CorrelationPair>(mode);
              With(g_SampledPoints, true, [mode] { Transforms2D<CorrelationPair>(mode); });
            });
  With(g_Masks, 1, [mode] { Transforms2D<MeanSquaresPair>(mode); });
  With(g_Masks, 2, [mode] { BSplineTransforms2D<MattesPair>(mode); });
}

/** Every metric with ITK's cubic B-spline interpolators (2D: every
 * transform; 3D: the rigid and affine ones; a B-spline transform; central
 * differences; masks), and the module's interpolator. */
void
CubicAsItk(itk::CudaExecutionMode mode)
{
  With(g_Cubic, 1,
            [mode]
            {
              Transforms2D<MeanSquaresPair>(mode);
              Transforms2D<MattesPair>(mode);
              Transforms3D<CorrelationPair>(mode);
              BSplineTransforms2D<MeanSquaresPair>(mode);
              With(g_GradientFilter, false, [mode] { Transforms2D<CorrelationPair>(mode); });
              With(g_Masks, 3, [mode] { Transforms2D<MattesPair>(mode); });
            });
  With(g_Cubic, 2, [mode] { Transforms2D<CorrelationPair>(mode); });
}

TEST(MetricCubic, EveryMetricAsItk)
{
  CubicAsItk(itk::CudaExecutionMode::CPU);
}

TEST(MetricCubicGpu, EveryMetricAsItk)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  CubicAsItk(itk::CudaExecutionMode::GPU);
}

TEST(MetricMasks, EveryMetricAsItk)
{
  MasksAsItk(itk::CudaExecutionMode::CPU);
}

TEST(MetricMasksGpu, EveryMetricAsItk)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  MasksAsItk(itk::CudaExecutionMode::GPU);
}

TEST(MetricSampledPoints, EveryMetricAsItk)
{
  With(g_SampledPoints, true,
    []
    {
      Transforms2D<MeanSquaresPair>(itk::CudaExecutionMode::CPU);
      Transforms2D<CorrelationPair>(itk::CudaExecutionMode::CPU);
      Transforms2D<MattesPair>(itk::CudaExecutionMode::CPU);
      Transforms3D<MattesPair>(itk::CudaExecutionMode::CPU);
    });
}

TEST(BSplineMetric, EveryMetricAsItkIn2D)
{
  BSplineTransforms2D<MeanSquaresPair>(itk::CudaExecutionMode::CPU);
  BSplineTransforms2D<CorrelationPair>(itk::CudaExecutionMode::CPU);
  BSplineTransforms2D<MattesPair>(itk::CudaExecutionMode::CPU);
}

TEST(BSplineMetric, EveryMetricAsItkIn3D)
{
  BSplineTransforms3D<MeanSquaresPair>(itk::CudaExecutionMode::CPU);
  BSplineTransforms3D<CorrelationPair>(itk::CudaExecutionMode::CPU);
  BSplineTransforms3D<MattesPair>(itk::CudaExecutionMode::CPU);
}

TEST(BSplineMetric, SampledPointsAndCentralDifferencesAsItk)
{
  With(g_SampledPoints, true, [] { BSplineTransforms2D<MattesPair>(itk::CudaExecutionMode::CPU); });
  With(g_GradientFilter, false, [] { BSplineTransforms2D<MeanSquaresPair>(itk::CudaExecutionMode::CPU); });
}

TEST(BSplineMetricGpu, EveryMetricAsItkIn2D)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  BSplineTransforms2D<MeanSquaresPair>(itk::CudaExecutionMode::GPU);
  BSplineTransforms2D<CorrelationPair>(itk::CudaExecutionMode::GPU);
  BSplineTransforms2D<MattesPair>(itk::CudaExecutionMode::GPU);
}

TEST(BSplineMetricGpu, EveryMetricAsItkIn3D)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  BSplineTransforms3D<MeanSquaresPair>(itk::CudaExecutionMode::GPU);
  BSplineTransforms3D<CorrelationPair>(itk::CudaExecutionMode::GPU);
  BSplineTransforms3D<MattesPair>(itk::CudaExecutionMode::GPU);
}

TEST(BSplineMetricGpu, SampledPointsAndCentralDifferencesAsItk)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  With(g_SampledPoints, true, [] { BSplineTransforms2D<MattesPair>(itk::CudaExecutionMode::GPU); });
  With(g_GradientFilter, false, [] { BSplineTransforms2D<MeanSquaresPair>(itk::CudaExecutionMode::GPU); });
}

TEST(MetricSampledPointsGpu, EveryMetricAsItk)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  With(g_SampledPoints, true,
    []
    {
      Transforms2D<MeanSquaresPair>(itk::CudaExecutionMode::GPU);
      Transforms2D<CorrelationPair>(itk::CudaExecutionMode::GPU);
      Transforms2D<MattesPair>(itk::CudaExecutionMode::GPU);
      Transforms3D<MattesPair>(itk::CudaExecutionMode::GPU);
    });
}

TEST(MeanSquaresMetric, CentralDifferencesAsItk)
{
  With(g_GradientFilter, false,
    []
    {
      Transforms2D<MeanSquaresPair>(itk::CudaExecutionMode::CPU);
      Transforms3D<MeanSquaresPair>(itk::CudaExecutionMode::CPU);
    });
}

TEST(CorrelationMetric, CentralDifferencesAsItk)
{
  With(g_GradientFilter, false,
    []
    {
      Transforms2D<CorrelationPair>(itk::CudaExecutionMode::CPU);
      Transforms3D<CorrelationPair>(itk::CudaExecutionMode::CPU);
    });
}

TEST(MeanSquaresMetricGpu, CentralDifferencesAsItk)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  With(g_GradientFilter, false,
    []
    {
      Transforms2D<MeanSquaresPair>(itk::CudaExecutionMode::GPU);
      Transforms3D<MeanSquaresPair>(itk::CudaExecutionMode::GPU);
    });
}

TEST(CorrelationMetricGpu, CentralDifferencesAsItk)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  With(g_GradientFilter, false,
    []
    {
      Transforms2D<CorrelationPair>(itk::CudaExecutionMode::GPU);
      Transforms3D<CorrelationPair>(itk::CudaExecutionMode::GPU);
    });
}

TEST(MattesMetric, CpuCoreGivesItksAnswerIn2D)
{
  Transforms2D<MattesPair>(itk::CudaExecutionMode::CPU);
}

TEST(MattesMetric, CpuCoreGivesItksAnswerIn3D)
{
  Transforms3D<MattesPair>(itk::CudaExecutionMode::CPU);
}

TEST(MattesMetric, CentralDifferencesAsItk)
{
  With(g_GradientFilter, false,
    []
    {
      Transforms2D<MattesPair>(itk::CudaExecutionMode::CPU);
      Transforms3D<MattesPair>(itk::CudaExecutionMode::CPU);
    });
}

/** ITK's Mattes metric throws when no point is valid; so does the module's. */
void
MattesNoValidPointsThrows(itk::CudaExecutionMode mode)
{
  const auto fixed = ReadImage<F2>(ExampleData("BrainProtonDensitySliceBorder20.png"));
  auto       t = itk::TranslationTransform<double, 2>::New();
  itk::TranslationTransform<double, 2>::ParametersType p(2);
  p[0] = 1e5;
  p[1] = 0;
  t->SetParameters(p);
  auto metric = CudaMattes<F2>::New();
  metric->SetExecutionMode(mode);
  try
  {
    RunMetric(metric.GetPointer(), fixed.GetPointer(), fixed.GetPointer(), t.GetPointer());
    ADD_FAILURE() << "no exception";
  }
  catch (const itk::ExceptionObject & e)
  {
    EXPECT_NE(std::string(e.GetDescription()).find("All samples map outside moving image buffer"), std::string::npos)
      << e.GetDescription();
  }
}

TEST(MattesMetric, NoValidPointsThrowsAsItk)
{
  MattesNoValidPointsThrows(itk::CudaExecutionMode::CPU);
}

TEST(MattesMetricGpu, GivesItksAnswerIn2D)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  Transforms2D<MattesPair>(itk::CudaExecutionMode::GPU);
}

TEST(MattesMetricGpu, GivesItksAnswerIn3D)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  Transforms3D<MattesPair>(itk::CudaExecutionMode::GPU);
}

TEST(MattesMetricGpu, CentralDifferencesAsItk)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  With(g_GradientFilter, false,
    []
    {
      Transforms2D<MattesPair>(itk::CudaExecutionMode::GPU);
      Transforms3D<MattesPair>(itk::CudaExecutionMode::GPU);
    });
}

TEST(MattesMetricGpu, NoValidPointsThrowsAsItk)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  MattesNoValidPointsThrows(itk::CudaExecutionMode::GPU);
}

TEST(MeanSquaresMetric, NoValidPointsAsItk)
{
  auto metric = CudaMeanSquares<F2>::New();
  metric->SetExecutionMode(itk::CudaExecutionMode::CPU);
  NoValidPoints(metric.GetPointer());
}

TEST(CorrelationMetric, CpuCoreGivesItksAnswerIn2D)
{
  Transforms2D<CorrelationPair>(itk::CudaExecutionMode::CPU);
}

TEST(CorrelationMetric, CpuCoreGivesItksAnswerIn3D)
{
  Transforms3D<CorrelationPair>(itk::CudaExecutionMode::CPU);
}

TEST(CorrelationMetric, NoValidPointsAsItk)
{
  auto metric = CudaCorrelation<F2>::New();
  metric->SetExecutionMode(itk::CudaExecutionMode::CPU);
  NoValidPoints(metric.GetPointer());
}

TEST(CorrelationMetric, ConstantImageGivesZeroAsItk)
{
  // f2 m2 <= epsilon: ITK returns value 0 and a zero derivative
  auto constant = F2::New();
  constant->SetRegions(cif_test::MakeSize<F2>({ 64, 48 }));
  constant->Allocate();
  constant->FillBuffer(7.0f);
  auto t = itk::TranslationTransform<double, 2>::New();
  for (const auto mode : { itk::CudaExecutionMode::CPU, itk::CudaExecutionMode::Automatic })
  {
    auto metric = CudaCorrelation<F2>::New();
    metric->SetExecutionMode(mode);
    const auto e = RunMetric(metric.GetPointer(), constant.GetPointer(), constant.GetPointer(), t.GetPointer());
    auto       itkMetric = ItkCorrelation<F2>::New();
    const auto expected = RunMetric(itkMetric.GetPointer(), constant.GetPointer(), constant.GetPointer(), t.GetPointer());
    EXPECT_EQ(e.valid, expected.valid);
    EXPECT_EQ(e.value, expected.value);
    EXPECT_EQ(e.value, 0.0);
    EXPECT_EQ(e.derivative, expected.derivative);
  }
}

TEST(MeanSquaresMetric, UnsupportedConfigurationsRunItksCode)
{
  const auto fixed = ReadImage<F2>(ExampleData("BrainProtonDensitySliceBorder20.png"));
  const auto moving = ReadImage<F2>(ExampleData("BrainProtonDensitySliceShifted13x17y.png"));
  auto       t = itk::TranslationTransform<double, 2>::New();
  itk::TranslationTransform<double, 2>::ParametersType p(2);
  p[0] = 10;
  p[1] = 14;
  t->SetParameters(p);

  // a nearest-neighbour moving interpolator: ITK's code, identical results
  auto ours = CudaMeanSquares<F2>::New();
  ours->SetMovingInterpolator(itk::NearestNeighborInterpolateImageFunction<F2, double>::New());
  auto itkMetric = ItkMeanSquares<F2>::New();
  itkMetric->SetMovingInterpolator(itk::NearestNeighborInterpolateImageFunction<F2, double>::New());
  const auto expected = RunMetric(itkMetric.GetPointer(), fixed.GetPointer(), moving.GetPointer(), t.GetPointer());
  const auto got = RunMetric(ours.GetPointer(), fixed.GetPointer(), moving.GetPointer(), t.GetPointer());
  EXPECT_EQ(got.value, expected.value);
  EXPECT_EQ(got.derivative, expected.derivative);
  EXPECT_NE(ours->GetLastExecutionReport().Message.find("ITK's own metric code"), std::string::npos);
  EXPECT_NE(ours->GetCoreUnsupportedReason().find("NearestNeighborInterpolateImageFunction"), std::string::npos);

  // central differences through another calculator than ITK's default: ITK's code
  auto calculator = itk::CentralDifferenceImageFunction<F2, double>::New();
  calculator->SetInterpolator(itk::NearestNeighborInterpolateImageFunction<F2, double>::New());
  calculator->UseImageDirectionOn();
  auto custom = CudaMeanSquares<F2>::New();
  custom->SetMovingImageGradientCalculator(calculator);
  custom->SetUseMovingImageGradientFilter(false);
  custom->SetFixedImage(fixed);
  custom->SetMovingImage(moving);
  custom->SetMovingTransform(t);
  custom->Initialize();
  double             customValue;
  itk::Array<double> customDerivative;
  custom->GetValueAndDerivative(customValue, customDerivative);
  EXPECT_NE(custom->GetLastExecutionReport().Message.find("gradient calculator"), std::string::npos)
    << custom->GetLastExecutionReport().Message;

  // a mask that is not an ImageMaskSpatialObject (an ellipse around the
  // image): ITK's code; in GPU mode an exception that says why
  auto mask = itk::EllipseSpatialObject<2>::New();
  mask->SetRadiusInObjectSpace(1000.0);
  mask->Update();
  auto masked = CudaMeanSquares<F2>::New();
  masked->SetFixedImageMask(mask);
  masked->SetExecutionMode(itk::CudaExecutionMode::GPU);
  try
  {
    RunMetric(masked.GetPointer(), fixed.GetPointer(), moving.GetPointer(), t.GetPointer());
    ADD_FAILURE() << "a masked metric in GPU mode did not throw";
  }
  catch (const itk::ExceptionObject & e)
  {
    EXPECT_NE(std::string(e.GetDescription()).find("mask EllipseSpatialObject"), std::string::npos)
      << e.GetDescription();
  }
  masked->SetExecutionMode(itk::CudaExecutionMode::Automatic);
  const auto maskedResult = RunMetric(masked.GetPointer(), fixed.GetPointer(), moving.GetPointer(), t.GetPointer());
  EXPECT_EQ(maskedResult.valid, expected.valid);
  EXPECT_NE(masked->GetLastExecutionReport().Message.find("ITK's own metric code"), std::string::npos)
    << masked->GetLastExecutionReport().Message;

  // a composite whose affine before the B-spline is optimised too: ITK's code
  auto both = itk::CompositeTransform<double, 2>::New();
  both->AddTransform(itk::AffineTransform<double, 2>::New());
  both->AddTransform(RandomBSpline(fixed.GetPointer(), 4, 1.0));
  both->SetAllTransformsToOptimizeOn();
  auto       joint = CudaMeanSquares<F2>::New();
  auto       jointItk = ItkMeanSquares<F2>::New();
  const auto jointExpected = RunMetric(jointItk.GetPointer(), fixed.GetPointer(), moving.GetPointer(), both.GetPointer());
  const auto jointGot = RunMetric(joint.GetPointer(), fixed.GetPointer(), moving.GetPointer(), both.GetPointer());
  EXPECT_EQ(jointGot.value, jointExpected.value);
  EXPECT_EQ(jointGot.derivative, jointExpected.derivative);
  EXPECT_NE(joint->GetCoreUnsupportedReason().find("optimised"), std::string::npos)
    << joint->GetCoreUnsupportedReason();
}

TEST(FieldMetric, MeanSquaresAsItk)
{
  FieldTransforms<MeanSquaresPair>(itk::CudaExecutionMode::CPU);
}

TEST(FieldMetric, MattesAsItk)
{
  FieldTransforms<MattesPair>(itk::CudaExecutionMode::CPU);
}

TEST(FieldMetric, MasksAsItk)
{
  With(g_Masks, 3, [] { FieldTransforms<MeanSquaresPair>(itk::CudaExecutionMode::CPU); });
}

TEST(FieldMetricGpu, MeanSquaresAsItk)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  FieldTransforms<MeanSquaresPair>(itk::CudaExecutionMode::GPU);
}

TEST(FieldMetricGpu, MattesAsItk)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  FieldTransforms<MattesPair>(itk::CudaExecutionMode::GPU);
}

TEST(FieldMetricGpu, MasksAndCentralDifferencesAsItk)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  With(g_Masks, 3, [] { FieldTransforms<MattesPair>(itk::CudaExecutionMode::GPU); });
  With(g_GradientFilter, false, [] { FieldTransforms<MeanSquaresPair>(itk::CudaExecutionMode::GPU); });
}

/** A displacement field registration as ITK's tests run one:
 * ImageRegistrationMethodv4 with a GaussianSmoothingOnUpdateDisplacementFieldTransform
 * (zero field on the fixed image's grid), mean squares, gradient descent
 * for 15 iterations, one level, on BrainProtonDensitySliceBorder20 against
 * ...BSplined10; with ITK's metric and with the module's. Returns the final
 * field, the metric's last report and the final value. */
struct FieldRun
{
  itk::DisplacementFieldTransform<double, 2>::DisplacementFieldType::Pointer field;
  std::string                                                             report;
  double                                                                  value{ 0 };
};

template <typename TMetric>
FieldRun
RegisterField(itk::CudaExecutionMode mode)
{
  const auto fixed = ReadImage<F2>(ExampleData("BrainProtonDensitySliceBorder20.png"));
  const auto moving = ReadImage<F2>(ExampleData("BrainProtonDensitySliceBSplined10.png"));
  using Transform = itk::GaussianSmoothingOnUpdateDisplacementFieldTransform<double, 2>;
  auto initial = SmoothField<itk::GaussianSmoothingOnUpdateDisplacementFieldTransform>(fixed.GetPointer(), 0.0, 31);
  initial->SetGaussianSmoothingVarianceForTheUpdateField(3.0);
  initial->SetGaussianSmoothingVarianceForTheTotalField(0.5);
  auto metric = TMetric::New();
  if constexpr (std::is_base_of<itk::CudaExecutionSettings, TMetric>::value)
  {
    metric->SetExecutionMode(mode);
  }
  auto optimizer = itk::GradientDescentOptimizerv4::New();
  optimizer->SetLearningRate(2e-4);
  optimizer->SetNumberOfIterations(15);
  optimizer->SetConvergenceWindowSize(100);
  optimizer->SetDoEstimateLearningRateAtEachIteration(false);
  optimizer->SetDoEstimateLearningRateOnce(false);
  using Registration = itk::ImageRegistrationMethodv4<F2, F2, Transform>;
  auto registration = Registration::New();
  registration->SetFixedImage(fixed);
  registration->SetMovingImage(moving);
  registration->SetInitialTransform(initial);
  registration->InPlaceOn();
  registration->SetMetric(metric);
  registration->SetOptimizer(optimizer);
  registration->SetNumberOfLevels(1);
  typename Registration::ShrinkFactorsArrayType shrink(1);
  shrink[0] = 1;
  registration->SetShrinkFactorsPerLevel(shrink);
  typename Registration::SmoothingSigmasArrayType sigmas(1);
  sigmas[0] = 0;
  registration->SetSmoothingSigmasPerLevel(sigmas);
  registration->Update();
  FieldRun run;
  run.field = const_cast<Transform *>(registration->GetOutput()->Get())->GetModifiableDisplacementField();
  run.value = optimizer->GetValue();
  EXPECT_EQ(optimizer->GetCurrentIteration(), 15u);
  if constexpr (std::is_base_of<itk::CudaExecutionSettings, TMetric>::value)
  {
    run.report = metric->GetLastExecutionReport().Message;
  }
  return run;
}

void
ExpectItksField(itk::CudaExecutionMode mode)
{
  const auto expected = RegisterField<ItkMeanSquares<F2>>(mode);
  const auto got = RegisterField<CudaMeanSquares<F2>>(mode);
  if (mode == itk::CudaExecutionMode::GPU)
  {
    EXPECT_EQ(got.report.rfind("GPU", 0), 0u) << got.report;
  }
  else
  {
    EXPECT_EQ(got.report.rfind("CPU (the module's metric core)", 0), 0u) << got.report;
  }
  itk::ImageRegionConstIterator<std::remove_reference_t<decltype(*expected.field)>> e(
    expected.field, expected.field->GetBufferedRegion());
  itk::ImageRegionConstIterator<std::remove_reference_t<decltype(*got.field)>> g(got.field,
                                                                                 got.field->GetBufferedRegion());
  double difference = 0;
  double norm = 0;
  double count = 0;
  for (; !e.IsAtEnd(); ++e, ++g)
  {
    difference += (e.Get() - g.Get()).GetSquaredNorm();
    norm += e.Get().GetSquaredNorm();
    count += 1;
  }
  // the registration moved the field (ITK's), and ours went the same way
  EXPECT_GT(std::sqrt(norm / count), 0.1);
  EXPECT_LE(std::sqrt(difference / count), 1e-6) << "RMS field difference, mm";
  EXPECT_LE(std::abs(got.value - expected.value), 1e-6 * std::abs(expected.value));
  std::cout << "displacement field registration: RMS field " << std::sqrt(norm / count) << " mm, RMS difference "
            << std::sqrt(difference / count) << " mm, value " << got.value << " (ITK " << expected.value << "); "
            << got.report << "\n";
}

/** What the core leaves to ITK with a displacement field: the correlation
 * metric (ITK's does not support fields; the module runs ITK's code and
 * gives its answer), a sampled point set, another interpolator; and ITK's
 * exception for a field on another grid than the virtual domain. */
TEST(FieldMetric, RegistrationMethodAsItk)
{
  ExpectItksField(itk::CudaExecutionMode::CPU);
}

TEST(FieldMetricGpu, RegistrationMethodAsItk)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  ExpectItksField(itk::CudaExecutionMode::GPU);
}

TEST(FieldMetric, UnsupportedConfigurationsRunItksCode)
{
  const auto fixed = ReadImage<F2>(ExampleData("BrainProtonDensitySliceBorder20.png"));
  const auto moving = ReadImage<F2>(ExampleData("BrainProtonDensitySliceBSplined10.png"));
  auto       field = SmoothField<itk::DisplacementFieldTransform>(fixed.GetPointer(), 2.0, 21);
  {
    auto       ours = CudaCorrelation<F2>::New();
    auto       itkMetric = ItkCorrelation<F2>::New();
    const auto expected = RunMetric(itkMetric.GetPointer(), fixed.GetPointer(), moving.GetPointer(), field.GetPointer());
    const auto got = RunMetric(ours.GetPointer(), fixed.GetPointer(), moving.GetPointer(), field.GetPointer());
    EXPECT_EQ(got.value, expected.value);
    EXPECT_EQ(got.derivative, expected.derivative);
    EXPECT_NE(ours->GetLastExecutionReport().Message.find("correlation"), std::string::npos)
      << ours->GetLastExecutionReport().Message;
  }
  {
    auto ours = CudaMeanSquares<F2>::New();
    With(g_SampledPoints,
         true,
         [&] { RunMetric(ours.GetPointer(), fixed.GetPointer(), moving.GetPointer(), field.GetPointer()); });
    EXPECT_NE(ours->GetLastExecutionReport().Message.find("sampled point set"), std::string::npos)
      << ours->GetLastExecutionReport().Message;
  }
  {
    auto other = SmoothField<itk::DisplacementFieldTransform>(fixed.GetPointer(), 2.0, 22);
    using Field = itk::DisplacementFieldTransform<double, 2>::DisplacementFieldType;
    other->SetInterpolator(itk::VectorNearestNeighborInterpolateImageFunction<Field, double>::New());
    auto       ours = CudaMeanSquares<F2>::New();
    auto       itkMetric = ItkMeanSquares<F2>::New();
    const auto expected = RunMetric(itkMetric.GetPointer(), fixed.GetPointer(), moving.GetPointer(), other.GetPointer());
    const auto got = RunMetric(ours.GetPointer(), fixed.GetPointer(), moving.GetPointer(), other.GetPointer());
    EXPECT_EQ(got.value, expected.value);
    EXPECT_EQ(got.derivative, expected.derivative);
    EXPECT_NE(ours->GetCoreUnsupportedReason().find("VectorLinearInterpolateImageFunction"), std::string::npos)
      << ours->GetCoreUnsupportedReason();
  }
  {
    // a field on a coarser grid than the virtual domain: ITK's exception
    auto shrink = itk::ShrinkImageFilter<F2, F2>::New();
    shrink->SetInput(fixed);
    shrink->SetShrinkFactors(2);
    shrink->Update();
    auto coarse = SmoothField<itk::DisplacementFieldTransform>(shrink->GetOutput(), 2.0, 23);
    auto ours = CudaMeanSquares<F2>::New();
    EXPECT_THROW(RunMetric(ours.GetPointer(), fixed.GetPointer(), moving.GetPointer(), coarse.GetPointer()),
                 itk::ExceptionObject);
  }
}

TEST(MeanSquaresMetric, FactoryGivesTheModulesMetric)
{
  itk::CudaImageFiltersFactory::RegisterOneFactory();
  auto metric = itk::MeanSquaresImageToImageMetricv4<F3, F3>::New();
  EXPECT_NE(dynamic_cast<CudaMeanSquares<F3> *>(metric.GetPointer()), nullptr) << metric->GetNameOfClass();
  using DoubleImage2 = itk::Image<double, 2>;
  auto metric2 = itk::MeanSquaresImageToImageMetricv4<DoubleImage2, DoubleImage2>::New();
  using D2 = itk::Image<double, 2>;
  EXPECT_NE(dynamic_cast<CudaMeanSquares<D2> *>(metric2.GetPointer()), nullptr);
  auto mattes = itk::MattesMutualInformationImageToImageMetricv4<F3, F3>::New();
  EXPECT_NE(dynamic_cast<CudaMattes<F3> *>(mattes.GetPointer()), nullptr) << mattes->GetNameOfClass();
  auto correlation = itk::CorrelationImageToImageMetricv4<F2, F2>::New();
  EXPECT_NE(dynamic_cast<CudaCorrelation<F2> *>(correlation.GetPointer()), nullptr) << correlation->GetNameOfClass();
  itk::CudaImageFiltersFactory::UnRegisterOneFactory();
  auto plain = itk::MeanSquaresImageToImageMetricv4<F3, F3>::New();
  EXPECT_EQ(dynamic_cast<CudaMeanSquares<F3> *>(plain.GetPointer()), nullptr);
}

TEST(MeanSquaresMetricGpu, GivesItksAnswerIn2D)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  Transforms2D<MeanSquaresPair>(itk::CudaExecutionMode::GPU);
}

TEST(MeanSquaresMetricGpu, GivesItksAnswerIn3D)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  Transforms3D<MeanSquaresPair>(itk::CudaExecutionMode::GPU);
}

TEST(CorrelationMetricGpu, GivesItksAnswerIn2D)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  Transforms2D<CorrelationPair>(itk::CudaExecutionMode::GPU);
}

TEST(CorrelationMetricGpu, GivesItksAnswerIn3D)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  Transforms3D<CorrelationPair>(itk::CudaExecutionMode::GPU);
}

TEST(CorrelationMetricGpu, NoValidPointsAsItk)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto metric = CudaCorrelation<F2>::New();
  metric->SetExecutionMode(itk::CudaExecutionMode::GPU);
  NoValidPoints(metric.GetPointer());
}

TEST(MeanSquaresMetricGpu, NoValidPointsAsItk)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto metric = CudaMeanSquares<F2>::New();
  metric->SetExecutionMode(itk::CudaExecutionMode::GPU);
  NoValidPoints(metric.GetPointer());
}

TEST(MeanSquaresMetricGpu, DeviceMemoryIsFlatOverIterationsAndLevels)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  const auto volume = ReadImage<F3>(ExampleData("KmeansTest_T1UCharRaw.nii.gz"));
  auto       metric = CudaMeanSquares<F3>::New();
  metric->SetExecutionMode(itk::CudaExecutionMode::GPU);
  auto t = itk::Euler3DTransform<double>::New();
  metric->SetFixedImage(volume);
  metric->SetMovingImage(volume);
  metric->SetMovingTransform(t);
  std::size_t held = 0;
  for (int level = 0; level < 3; ++level)
  {
    metric->Initialize();
    for (int iteration = 0; iteration < 50; ++iteration)
    {
      t->SetRotation(0.001 * iteration, 0, 0);
      double             value;
      itk::Array<double> derivative;
      metric->GetValueAndDerivative(value, derivative);
    }
    if (level == 0)
    {
      held = cif::Runtime::GetBytesAllocated();
    }
    EXPECT_EQ(cif::Runtime::GetBytesAllocated(), held) << "level " << level;
  }
  metric->ReleaseDeviceMemory();
  EXPECT_LT(cif::Runtime::GetBytesAllocated(), held);
}

namespace
{
/** The "a pair too large for the device ... falls back with a
 * message": with no device memory left, automatic mode evaluates on the
 * module's CPU core (the same value and derivative as CPU mode), the report
 * and ITK's warning say the GPU ran out of memory, GPU mode throws, and once
 * memory is back the GPU runs again and returns what it took. */
template <template <typename> class TOurs, typename TTransform>
void
ExpectOutOfMemoryFallBack(const F3 * volume, TTransform * transform)
{
  auto cpu = TOurs<F3>::New();
  cpu->SetExecutionMode(itk::CudaExecutionMode::CPU);
  const Evaluation expected = RunMetric(cpu.GetPointer(), volume, volume, transform);

  const std::size_t before = cif::Runtime::GetBytesAllocated();
  cif::Runtime::SetAllocationLimit(before + 64);
  auto             automatic = TOurs<F3>::New();
  const Evaluation fellBack = RunMetric(automatic.GetPointer(), volume, volume, transform);
  const auto &     report = automatic->GetLastExecutionReport();
  EXPECT_EQ(report.Device, itk::CudaExecutedOn::CPU) << report.Message;
  EXPECT_TRUE(report.FellBackAfterOutOfMemory) << report.Message;
  EXPECT_NE(report.Message.find("out of memory"), std::string::npos) << report.Message;
  EXPECT_EQ(fellBack.value, expected.value);
  ASSERT_EQ(fellBack.derivative.GetSize(), expected.derivative.GetSize());
  for (unsigned int p = 0; p < expected.derivative.GetSize(); ++p)
  {
    EXPECT_EQ(fellBack.derivative[p], expected.derivative[p]) << "parameter " << p;
  }
  auto gpu = TOurs<F3>::New();
  gpu->SetExecutionMode(itk::CudaExecutionMode::GPU);
  EXPECT_THROW(RunMetric(gpu.GetPointer(), volume, volume, transform), itk::ExceptionObject);
  cif::Runtime::SetAllocationLimit(0);

  auto again = TOurs<F3>::New();
  again->SetExecutionMode(itk::CudaExecutionMode::GPU);
  RunMetric(again.GetPointer(), volume, volume, transform);
  EXPECT_EQ(again->GetLastExecutionReport().Device, itk::CudaExecutedOn::GPU);
  again->ReleaseDeviceMemory();
  automatic->ReleaseDeviceMemory();
  gpu->ReleaseDeviceMemory();
  EXPECT_EQ(cif::Runtime::GetBytesAllocated(), before);
}
} // namespace

TEST(MetricGpu, OutOfDeviceMemoryFallsBackToTheCpuCoreWithAMessageOrThrows)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  const auto volume = ReadImage<F3>(ExampleData("KmeansTest_T1UCharRaw.nii.gz"));
  auto       rigid = itk::Euler3DTransform<double>::New();
  rigid->SetRotation(0.02, -0.01, 0.03);
  ExpectOutOfMemoryFallBack<CudaMeanSquares>(volume.GetPointer(), rigid.GetPointer());
  // the largest records: a B-spline transform with Mattes
  const auto bspline = RandomBSpline(volume.GetPointer(), 4, 1.0);
  ExpectOutOfMemoryFallBack<CudaMattes>(volume.GetPointer(), bspline.GetPointer());
}
