/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaImageToImageMetricv4Base_hxx
#define itkCudaImageToImageMetricv4Base_hxx

#include "itkBSplineInterpolateImageFunction.h"
#include "itkBSplineTransform.h"
#include "itkCudaBSplineInterpolateImageFunction.h"
#include "itkCudaImageGeometry.h"
#include "itkCompositeTransform.h"
#include "itkBSplineSmoothingOnUpdateDisplacementFieldTransform.h"
#include "itkDisplacementFieldTransform.h"
#include "itkGaussianSmoothingOnUpdateDisplacementFieldTransform.h"
#include "itkVectorLinearInterpolateImageFunction.h"
#include "itkIdentityTransform.h"
#include "itkImageMaskSpatialObject.h"
#include "itkLinearInterpolateImageFunction.h"
#include "itkMatrixOffsetTransformBase.h"
#include "itkTranslationTransform.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <type_traits>
#include <typeinfo>

namespace itk
{

namespace CudaMetricDetail
{

using CudaImageGeometry::DescribeImage;
using CudaImageGeometry::IndexMatrices;

/** Reads the coefficient image of ITK's BSplineInterpolateImageFunction
 * (m_Coefficients, protected; the image its evaluation code reads). */
template <typename TInterpolator>
struct CoefficientAccess : public TInterpolator
{
  static const typename TInterpolator::CoefficientImageType *
  Of(const TInterpolator & interpolator)
  {
    return (interpolator.*(&CoefficientAccess::m_Coefficients)).GetPointer();
  }
};

/** Calls visit(coefficientImage) when `interpolator` is exactly ITK's
 * BSplineInterpolateImageFunction or the module's
 * CudaBSplineInterpolateImageFunction of TImage (double or float
 * coefficients) with spline order 3; false otherwise. */
template <typename TImage, typename TCoordRep, typename TInterpolator, typename TVisit>
bool
VisitCubicCoefficients(const TInterpolator * interpolator, TVisit && visit)
{
  const auto as = [&](auto coefficient)
  {
    using Itk = BSplineInterpolateImageFunction<TImage, TCoordRep, decltype(coefficient)>;
    using Ours = CudaBSplineInterpolateImageFunction<TImage, TCoordRep, decltype(coefficient)>;
    if (typeid(*interpolator) != typeid(Itk) && typeid(*interpolator) != typeid(Ours))
    {
      return false;
    }
    const auto * bspline = dynamic_cast<const Itk *>(interpolator);
    if (bspline == nullptr || bspline->GetSplineOrder() != 3)
    {
      return false;
    }
    visit(CoefficientAccess<Itk>::Of(*bspline));
    return true;
  };
  return as(double{}) || as(float{});
}

/** Calls visit(maskImage) when `mask` is exactly an ImageMaskSpatialObject
 * of one of the pixel types the core reads (a subclass could test points
 * otherwise); false when it is not. */
template <unsigned int D, typename TVisit>
bool
VisitImageMask(const SpatialObject<D> * mask, TVisit && visit)
{
  const auto as = [&](auto pixel)
  {
    using Mask = ImageMaskSpatialObject<D, decltype(pixel)>;
    if (typeid(*mask) != typeid(Mask))
    {
      return false;
    }
    visit(static_cast<const Mask *>(mask)->GetImage());
    return true;
  };
  return as((unsigned char)0) || as((unsigned short)0) || as(short{}) || as(float{});
}

/** Why the core cannot test points against `mask` as ITK's metric does
 * (empty when it can). */
template <unsigned int D>
std::string
MaskUnsupported(const SpatialObject<D> * mask, const char * which)
{
  std::string problem;
  const bool  visited = VisitImageMask<D>(mask,
                                         [&](const auto * image)
                                         {
                                           if (image == nullptr || image->GetBufferPointer() == nullptr ||
                                               image->GetBufferedRegion().GetNumberOfPixels() == 0)
                                           {
                                             problem = std::string("a ") + which + " mask without an image buffer";
                                           }
                                         });
  if (!visited)
  {
    return std::string("the ") + which + " mask " + mask->GetNameOfClass() +
           " (the core tests ImageMaskSpatialObject of unsigned char, unsigned short, short or float)";
  }
  return problem;
}

/** The core's description of an ImageMaskSpatialObject (MaskUnsupported
 * said yes): its world-to-object map and image geometry, and with
 * `flags` non-null one byte per buffered pixel, nonzero where the pixel is
 * not zero (values not set). */
template <unsigned int D>
void
DescribeMask(const SpatialObject<D> * mask, cif::MetricMask & out, std::vector<unsigned char> * flags)
{
  out = cif::MetricMask{};
  const auto * inverse = mask->GetObjectToWorldTransformInverse();
  for (unsigned int r = 0; r < D; ++r)
  {
    for (unsigned int c = 0; c < D; ++c)
    {
      out.worldToObject.matrix[r][c] = inverse->GetMatrix()[r][c];
    }
    out.worldToObject.offset[r] = inverse->GetOffset()[r];
  }
  VisitImageMask<D>(mask,
                    [&](const auto * image)
                    {
                      DescribeImage(image, out.image);
                      if (flags != nullptr)
                      {
                        const std::size_t count = image->GetBufferedRegion().GetNumberOfPixels();
                        const auto *      values = image->GetBufferPointer();
                        flags->resize(count);
                        for (std::size_t i = 0; i < count; ++i)
                        {
                          // ITK's Math::NotExactlyEquals(pixel, 0): NaN is inside
                          (*flags)[i] = !(values[i] == 0) ? 1 : 0;
                        }
                      }
                    });
}

/** The exact map of a MatrixOffsetTransformBase, a TranslationTransform or
 * an IdentityTransform (ITK's TransformPoint arithmetic is then the
 * core's); false for other transforms. */
template <unsigned int D, typename TTransform>
bool
ExactAffineMap(const TTransform * t, cif::MetricAffineMap & map)
{
  using ScalarType = typename TTransform::ScalarType;
  map = cif::MetricAffineMap{};
  if (const auto * affine = dynamic_cast<const MatrixOffsetTransformBase<ScalarType, D, D> *>(t))
  {
    for (unsigned int r = 0; r < D; ++r)
    {
      for (unsigned int c = 0; c < D; ++c)
      {
        map.matrix[r][c] = affine->GetMatrix()[r][c];
      }
      map.offset[r] = affine->GetOffset()[r];
    }
    return true;
  }
  if (const auto * translation = dynamic_cast<const TranslationTransform<ScalarType, D> *>(t))
  {
    for (unsigned int r = 0; r < D; ++r)
    {
      map.offset[r] = translation->GetOffset()[r];
    }
    return true;
  }
  return dynamic_cast<const IdentityTransform<ScalarType, D> *>(t) != nullptr;
}

/** The point map of a Linear-category transform as a chain of affine maps:
 * exact (ExactAffineMap) for such a transform and for a composite of up to
 * cif::kMaxAffineChain of them, one map per transform in the order the
 * composite applies them (so ITK's arithmetic, and ITK's answer at the
 * edges of the images, is the core's); else one map probed at x0 and
 * x0 + e_k. The chain is checked at another point. Empty, or why the
 * transform is not an affine map. */
template <unsigned int D, typename TTransform>
std::string
AffineChainOf(const TTransform * transform, const double x0[D], cif::MetricAffineChain & chain)
{
  using ScalarType = typename TTransform::ScalarType;
  using PointType = typename TTransform::InputPointType;
  chain = cif::MetricAffineChain{};
  bool exact = false;
  if (const auto * composite = dynamic_cast<const CompositeTransform<ScalarType, D> *>(transform))
  {
    const auto count = composite->GetNumberOfTransforms();
    exact = count <= static_cast<SizeValueType>(cif::kMaxAffineChain);
    for (SizeValueType i = 0; exact && i < count; ++i)
    {
      exact = ExactAffineMap<D>(composite->GetNthTransformConstPointer(count - 1 - i), chain.maps[i]);
    }
    chain.count = exact ? static_cast<int>(count) : 1;
  }
  else
  {
    exact = ExactAffineMap<D>(transform, chain.maps[0]);
  }
  if (!exact)
  {
    cif::MetricAffineMap & map = chain.maps[0];
    map = cif::MetricAffineMap{};
    PointType p0;
    for (unsigned int a = 0; a < D; ++a)
    {
      p0[a] = x0[a];
    }
    const PointType y0 = transform->TransformPoint(p0);
    for (unsigned int k = 0; k < D; ++k)
    {
      PointType pk = p0;
      pk[k] += 1.0;
      const PointType yk = transform->TransformPoint(pk);
      for (unsigned int r = 0; r < D; ++r)
      {
        map.matrix[r][k] = yk[r] - y0[r];
      }
    }
    for (unsigned int r = 0; r < D; ++r)
    {
      double sum = 0.0;
      for (unsigned int c = 0; c < D; ++c)
      {
        sum += map.matrix[r][c] * x0[c];
      }
      map.offset[r] = y0[r] - sum;
    }
  }
  // check the chain at another point
  PointType test;
  for (unsigned int a = 0; a < D; ++a)
  {
    test[a] = x0[a] + 17.25 * (a + 1) - 9.5;
  }
  const PointType expected = transform->TransformPoint(test);
  double          mapped[3]{ 0, 0, 0 };
  for (unsigned int a = 0; a < D; ++a)
  {
    mapped[a] = test[a];
  }
  for (int i = 0; i < chain.count; ++i)
  {
    double next[3]{ 0, 0, 0 };
    for (unsigned int r = 0; r < D; ++r)
    {
      double sum = 0.0;
      for (unsigned int c = 0; c < D; ++c)
      {
        sum += chain.maps[i].matrix[r][c] * mapped[c];
      }
      next[r] = sum + chain.maps[i].offset[r];
    }
    std::copy(next, next + 3, mapped);
  }
  for (unsigned int r = 0; r < D; ++r)
  {
    if (!(std::abs(mapped[r] - expected[r]) <= 1e-9 * (1.0 + std::abs(expected[r]))))
    {
      return std::string("the transform ") + transform->GetNameOfClass() + " is not an affine map of the points";
    }
  }
  return {};
}

/** The matrix of a chain: the product of its maps' matrices (the last map's
 * on the left), row major. */
template <unsigned int D>
std::vector<double>
ChainMatrix(const cif::MetricAffineChain & chain)
{
  std::vector<double> product(D * D, 0.0);
  for (unsigned int r = 0; r < D; ++r)
  {
    product[r * D + r] = 1.0;
  }
  for (int i = 0; i < chain.count; ++i)
  {
    std::vector<double> next(D * D, 0.0);
    for (unsigned int r = 0; r < D; ++r)
    {
      for (unsigned int c = 0; c < D; ++c)
      {
        for (unsigned int k = 0; k < D; ++k)
        {
          next[r * D + c] += chain.maps[i].matrix[r][k] * product[k * D + c];
        }
      }
    }
    product = next;
  }
  return product;
}

/** The moving transform as a TTarget (a transform with local support or a
 * sparse Jacobian), or null: the transform itself, the one transform of a
 * composite, or the last transform of a composite (the one it applies
 * first) when the others are not optimised (ImageRegistrationMethodv4's
 * moving initial transform): `leading` then receives a composite of those
 * others, whose map the core applies after the TTarget (else null).
 * `problem` (when given) says why a composite that ends in a TTarget is
 * not taken. */
template <typename TTarget, unsigned int D, typename TTransform>
const TTarget *
AppliedFirstOf(const TTransform *                                                        transform,
               typename CompositeTransform<typename TTransform::ScalarType, D>::Pointer * leading = nullptr,
               std::string *                                                             problem = nullptr)
{
  using CompositeType = CompositeTransform<typename TTransform::ScalarType, D>;
  if (leading != nullptr)
  {
    *leading = nullptr;
  }
  const auto * composite = dynamic_cast<const CompositeType *>(transform);
  if (composite == nullptr)
  {
    return dynamic_cast<const TTarget *>(transform);
  }
  const auto count = composite->GetNumberOfTransforms();
  if (count == 0)
  {
    return nullptr;
  }
  const auto * target = dynamic_cast<const TTarget *>(composite->GetNthTransformConstPointer(count - 1));
  if (target == nullptr || count == 1)
  {
    return target;
  }
  // (the composite of the others only for a caller that asks for it)
  typename CompositeType::Pointer before = leading != nullptr ? CompositeType::New() : nullptr;
  for (SizeValueType n = 0; n + 1 < count; ++n)
  {
    const auto * t = composite->GetNthTransformConstPointer(n);
    if (composite->GetNthTransformToOptimize(n) ||
        t->GetTransformCategory() != TTransform::TransformCategoryEnum::Linear)
    {
      if (problem != nullptr)
      {
        *problem = std::string("a composite whose transforms before its ") + target->GetNameOfClass() +
                   " are optimised or not of the Linear category (" + t->GetNameOfClass() + ")";
      }
      return nullptr;
    }
    if (before.IsNotNull())
    {
      before->AddTransform(composite->GetNthTransform(n));
    }
  }
  if (leading != nullptr)
  {
    *leading = before;
  }
  return target;
}

/** The moving transform's BSplineTransform of order 3 (AppliedFirstOf). */
template <unsigned int D, typename TTransform>
const BSplineTransform<typename TTransform::ScalarType, D, 3> *
BSplineOf(const TTransform *                                                        transform,
          typename CompositeTransform<typename TTransform::ScalarType, D>::Pointer * leading = nullptr,
          std::string *                                                             problem = nullptr)
{
  return AppliedFirstOf<BSplineTransform<typename TTransform::ScalarType, D, 3>, D>(transform, leading, problem);
}

/** The moving transform's DisplacementFieldTransform (AppliedFirstOf). */
template <unsigned int D, typename TTransform>
const DisplacementFieldTransform<typename TTransform::ScalarType, D> *
DisplacementFieldOf(const TTransform *                                                        transform,
                    typename CompositeTransform<typename TTransform::ScalarType, D>::Pointer * leading = nullptr,
                    std::string *                                                             problem = nullptr)
{
  return AppliedFirstOf<DisplacementFieldTransform<typename TTransform::ScalarType, D>, D>(
    transform, leading, problem);
}

/** Why the core cannot evaluate `field` as ITK does (empty when it can):
 * the classes whose TransformPoint and Jacobian are DisplacementFieldTransform's
 * own, with its default vector linear interpolator, double parameters and
 * a buffered field. */
template <unsigned int D, typename TField>
std::string
DisplacementFieldUnsupported(const TField * field)
{
  using ScalarType = typename TField::ScalarType;
  using Plain = DisplacementFieldTransform<ScalarType, D>;
  using Gaussian = GaussianSmoothingOnUpdateDisplacementFieldTransform<ScalarType, D>;
  using BSplineSmoothing = BSplineSmoothingOnUpdateDisplacementFieldTransform<ScalarType, D>;
  using Linear = VectorLinearInterpolateImageFunction<typename Plain::DisplacementFieldType, ScalarType>;
  if (typeid(*field) != typeid(Plain) && typeid(*field) != typeid(Gaussian) && typeid(*field) != typeid(BSplineSmoothing))
  {
    return std::string("the displacement field transform ") + field->GetNameOfClass() +
           " (the core takes DisplacementFieldTransform and its Gaussian and B-spline smoothing-on-update "
           "subclasses)";
  }
  if constexpr (!std::is_same<ScalarType, double>::value)
  {
    return "a displacement field of other than double vectors";
  }
  const auto * interpolator = field->GetInterpolator();
  if (interpolator == nullptr || typeid(*interpolator) != typeid(Linear))
  {
    return "a displacement field transform whose interpolator is not ITK's VectorLinearInterpolateImageFunction";
  }
  const auto * image = field->GetDisplacementField();
  if (image == nullptr || image->GetBufferPointer() == nullptr)
  {
    return "a displacement field transform without a buffered field";
  }
  return {};
}

} // namespace CudaMetricDetail

template <typename TMetric>
void
CudaImageToImageMetricv4Base<TMetric>::Initialize()
{
  Superclass::Initialize();
  // the virtual sampled points (ITK's sparse sampling), D doubles each
  m_HostPoints.clear();
  if (this->GetUseSampledPointSet() && this->m_VirtualSampledPointSet.IsNotNull())
  {
    const auto * points = this->m_VirtualSampledPointSet->GetPoints();
    m_HostPoints.reserve(points->Size() * ImageDimension);
    for (auto it = points->Begin(); it != points->End(); ++it)
    {
      for (unsigned int a = 0; a < ImageDimension; ++a)
      {
        m_HostPoints.push_back(it.Value()[a]);
      }
    }
  }
  m_HostGradient.clear();
  m_HostGradient.shrink_to_fit();
  for (int i = 0; i < 2; ++i)
  {
    // read the masks and the coefficients again at the next evaluation
    m_Masks[i].Reset();
    m_Cubic[i].Reset();
  }
  m_DeviceCurrent = false;
  m_ReportedSinceInitialize = false;
}

template <typename TMetric>
std::string
CudaImageToImageMetricv4Base<TMetric>::GetCoreUnsupportedReason() const
{
  if constexpr (ImageDimension != 2 && ImageDimension != 3)
  {
    return "images of 2 or 3 dimensions";
  }
  else if constexpr (!std::is_same<FixedImagePixelType, MovingImagePixelType>::value ||
                     !CudaIsOneOf<FixedImagePixelType, float, double>)
  {
    return "fixed and moving pixels of one type, float or double";
  }
  else
  {
    using LinearFixed = LinearInterpolateImageFunction<FixedImageType, typename Superclass::CoordinateRepresentationType>;
    using LinearMoving =
      LinearInterpolateImageFunction<MovingImageType, typename Superclass::CoordinateRepresentationType>;
    using Category = typename Superclass::MovingTransformType::TransformCategoryEnum;
    if (this->m_FixedImage.IsNull() || this->m_MovingImage.IsNull() || this->m_FixedTransform.IsNull() ||
        this->m_MovingTransform.IsNull() || this->m_VirtualImage.IsNull())
    {
      return "a metric that has not been initialized";
    }
    const SpatialObject<ImageDimension> * masks[2] = { this->m_FixedImageMask.GetPointer(),
                                                        this->m_MovingImageMask.GetPointer() };
    const char *                          maskNames[2] = { "fixed image", "moving image" };
    for (int m = 0; m < 2; ++m)
    {
      const std::string problem =
        masks[m] != nullptr ? CudaMetricDetail::MaskUnsupported<ImageDimension>(masks[m], maskNames[m]) : "";
      if (!problem.empty())
      {
        return problem;
      }
    }
    // linear, or a cubic B-spline whose coefficients cover the image's buffer
    const auto cubicUsable = [](const auto * interpolator, const auto * image)
    {
      using ImageType = std::remove_cv_t<std::remove_pointer_t<decltype(image)>>;
      bool usable = false;
      CudaMetricDetail::VisitCubicCoefficients<ImageType, typename Superclass::CoordinateRepresentationType>(
        interpolator,
        [&](const auto * coefficients)
        {
          usable = coefficients != nullptr && coefficients->GetBufferPointer() != nullptr &&
                   coefficients->GetBufferedRegion() == image->GetBufferedRegion();
        });
      return usable;
    };
    const char * interpolation =
      " (the core interpolates linearly, or as BSplineInterpolateImageFunction of order 3 with coefficients over "
      "the image's buffer)";
    if (typeid(*this->m_FixedInterpolator) != typeid(LinearFixed) &&
        !cubicUsable(this->m_FixedInterpolator.GetPointer(), this->m_FixedImage.GetPointer()))
    {
      return std::string("the fixed interpolator ") + this->m_FixedInterpolator->GetNameOfClass() + interpolation;
    }
    if (typeid(*this->m_MovingInterpolator) != typeid(LinearMoving) &&
        !cubicUsable(this->m_MovingInterpolator.GetPointer(), this->m_MovingImage.GetPointer()))
    {
      return std::string("the moving interpolator ") + this->m_MovingInterpolator->GetNameOfClass() + interpolation;
    }
    if (!this->GetGradientSourceIncludesMoving())
    {
      return "a gradient source without the moving image";
    }
    if (this->GetUseMovingImageGradientFilter())
    {
      if (this->m_MovingImageGradientImage.IsNull())
      {
        return "a metric without a moving gradient image";
      }
    }
    else
    {
      // ITK's default calculator: CentralDifferenceImageFunction with its
      // linear interpolator and UseImageDirection on
      using Central = typename Superclass::DefaultMovingImageGradientCalculator;
      const auto * central = dynamic_cast<const Central *>(this->m_MovingImageGradientCalculator.GetPointer());
      if (central == nullptr || typeid(*central) != typeid(Central) || !central->GetUseImageDirection() ||
          central->GetInterpolator() == nullptr || typeid(*central->GetInterpolator()) != typeid(LinearMoving))
      {
        return std::string("the moving gradient calculator ") +
               this->m_MovingImageGradientCalculator->GetNameOfClass() +
               " (the core computes ITK's default: central differences of linear interpolations, image "
               "direction on)";
      }
    }
    if (this->GetUseFloatingPointCorrection())
    {
      return "floating point correction";
    }
    std::string  compositeProblem;
    const auto * bspline =
      CudaMetricDetail::BSplineOf<ImageDimension>(this->m_MovingTransform.GetPointer(), nullptr, &compositeProblem);
    if (!compositeProblem.empty())
    {
      return compositeProblem;
    }
    if (bspline != nullptr)
    {
      const auto & coefficients = bspline->GetCoefficientImages();
      for (unsigned int a = 0; a < ImageDimension; ++a)
      {
        if (coefficients[a]->GetBufferPointer() == nullptr ||
            coefficients[a]->GetBufferedRegion() != coefficients[0]->GetLargestPossibleRegion() ||
            coefficients[0]->GetLargestPossibleRegion().GetIndex()[a] != 0)
        {
          return "a B-spline transform whose coefficient images do not start at index 0 or are not buffered";
        }
      }
    }
    const auto * field = bspline != nullptr ? nullptr
                                            : CudaMetricDetail::DisplacementFieldOf<ImageDimension>(
                                                this->m_MovingTransform.GetPointer(), nullptr, &compositeProblem);
    if (!compositeProblem.empty())
    {
      return compositeProblem;
    }
    if (field != nullptr)
    {
      const std::string problem = CudaMetricDetail::DisplacementFieldUnsupported<ImageDimension>(field);
      if (!problem.empty())
      {
        return problem;
      }
      if (this->GetCoreMetricKind() == cif::MetricKind::Correlation)
      {
        return "a displacement field transform with the correlation metric (which ITK's correlation metric does "
               "not support)";
      }
      if (this->GetUseSampledPointSet())
      {
        return "a displacement field transform with a sampled point set (the core takes it over the dense "
               "virtual domain)";
      }
      if (!this->HasLocalSupport())
      {
        return "a displacement field transform inside a composite that is not of the DisplacementField category";
      }
    }
    else if (bspline == nullptr && this->m_MovingTransform->GetTransformCategory() != Category::Linear)
    {
      return std::string("the moving transform ") + this->m_MovingTransform->GetNameOfClass() +
             " (the core takes transforms of the Linear category, BSplineTransform of order 3 and "
             "DisplacementFieldTransform)";
    }
    if (this->m_FixedTransform->GetTransformCategory() != Category::Linear)
    {
      return std::string("the fixed transform ") + this->m_FixedTransform->GetNameOfClass() +
             " (the core takes transforms of the Linear category)";
    }
    if (field == nullptr && this->GetNumberOfLocalParameters() != this->GetNumberOfParameters())
    {
      return "a transform with local parameters";
    }
    if (this->GetUseMovingImageGradientFilter())
    {
      const auto & gradient = *this->m_MovingImageGradientImage;
      const auto & moving = *this->m_MovingImage;
      if (gradient.GetBufferedRegion() != moving.GetBufferedRegion() || gradient.GetOrigin() != moving.GetOrigin() ||
          gradient.GetSpacing() != moving.GetSpacing() || gradient.GetDirection() != moving.GetDirection())
      {
        return "a moving gradient image on another grid than the moving image";
      }
    }
    return {};
  }
}

template <typename TMetric>
std::string
CudaImageToImageMetricv4Base<TMetric>::BuildJob(bool                  wantDerivative,
                                                cif::DenseMetricJob & job,
                                                std::vector<double> & jacobianAtOrigin,
                                                std::vector<double> & jacobianSteps) const
{
  constexpr unsigned int D = ImageDimension;
  job = cif::DenseMetricJob{};
  job.kind = this->GetCoreMetricKind();
  job.dimension = static_cast<int>(D);
  job.derivative = wantDerivative;

  const auto & region = this->GetVirtualRegion();
  const auto * virtualImage = this->m_VirtualImage.GetPointer();
  typename VirtualImageType::DirectionType virtualIndexToPoint;
  typename VirtualImageType::DirectionType virtualPointToIndex;
  CudaMetricDetail::IndexMatrices(virtualImage, virtualIndexToPoint, virtualPointToIndex);
  for (unsigned int r = 0; r < D; ++r)
  {
    job.virtualStart[r] = region.GetIndex()[r];
    job.virtualSize[r] = static_cast<std::int64_t>(region.GetSize()[r]);
    job.virtualOrigin[r] = virtualImage->GetOrigin()[r];
    for (unsigned int c = 0; c < D; ++c)
    {
      job.virtualIndexToPoint[r][c] = virtualIndexToPoint[r][c];
    }
  }
  CudaMetricDetail::DescribeImage(this->m_FixedImage.GetPointer(), job.fixed);
  CudaMetricDetail::DescribeImage(this->m_MovingImage.GetPointer(), job.moving);
  job.centralDifferences = !this->GetUseMovingImageGradientFilter();
  for (unsigned int r = 0; r < D; ++r)
  {
    job.movingSpacing[r] = this->m_MovingImage->GetSpacing()[r];
  }
  if (wantDerivative && !job.centralDifferences)
  {
    CudaMetricDetail::DescribeImage(this->m_MovingImageGradientImage.GetPointer(), job.movingGradient);
  }
  if (this->GetUseSampledPointSet())
  {
    job.points = m_HostPoints.data();
    job.pointCount = static_cast<std::int64_t>(m_HostPoints.size() / D);
  }
  job.fixed.values = this->m_FixedImage->GetBufferPointer();
  job.moving.values = this->m_MovingImage->GetBufferPointer();
  // the masks: geometry per evaluation, flags when the mask or its image changed
  const SpatialObject<D> * masks[2] = { this->m_FixedImageMask.GetPointer(), this->m_MovingImageMask.GetPointer() };
  cif::MetricMask *        jobMasks[2] = { &job.fixedMask, &job.movingMask };
  for (int m = 0; m < 2; ++m)
  {
    DerivedArray<unsigned char> & copy = m_Masks[m];
    if (masks[m] == nullptr)
    {
      copy.Reset();
      continue;
    }
    ModifiedTimeType time = masks[m]->GetMTime();
    const void *     buffer = nullptr;
    CudaMetricDetail::VisitImageMask<D>(masks[m],
                                        [&](const auto * image)
                                        {
                                          time = std::max(time, image->GetMTime());
                                          buffer = image->GetBufferPointer();
                                        });
    const bool current = copy.Matches(masks[m], time, buffer);
    if (!current)
    {
      copy.Reset(masks[m], time, buffer);
    }
    CudaMetricDetail::DescribeMask<D>(masks[m], *jobMasks[m], current ? nullptr : &copy.owned);
    if (!current)
    {
      copy.data = copy.owned.data();
      copy.count = copy.owned.size();
    }
    jobMasks[m]->image.values = copy.data;
  }
  // cubic B-spline interpolators: their coefficients, in double
  const auto cubic = [](const auto * interpolator, const auto * image, cif::MetricImage & out, DerivedArray<double> & copy)
  {
    using ImageType = std::remove_cv_t<std::remove_pointer_t<decltype(image)>>;
    const bool visited = CudaMetricDetail::VisitCubicCoefficients<ImageType, typename Superclass::CoordinateRepresentationType>(
      interpolator,
      [&](const auto * coefficients)
      {
        using Coefficient = typename std::remove_cv_t<std::remove_pointer_t<decltype(coefficients)>>::PixelType;
        const auto * values = coefficients->GetBufferPointer();
        if (!copy.Matches(coefficients, coefficients->GetMTime(), values))
        {
          copy.Reset(coefficients, coefficients->GetMTime(), values);
          copy.count = coefficients->GetBufferedRegion().GetNumberOfPixels();
          if constexpr (std::is_same<Coefficient, double>::value)
          {
            copy.data = values;
          }
          else
          {
            copy.owned.assign(values, values + copy.count);
            copy.data = copy.owned.data();
          }
        }
        out.coefficients = copy.data;
      });
    if (!visited)
    {
      copy.Reset();
    }
  };
  cubic(this->m_FixedInterpolator.GetPointer(), this->m_FixedImage.GetPointer(), job.fixed, m_Cubic[0]);
  cubic(this->m_MovingInterpolator.GetPointer(), this->m_MovingImage.GetPointer(), job.moving, m_Cubic[1]);

  // x0: the middle of the virtual region
  double x0[3]{ 0, 0, 0 };
  for (unsigned int r = 0; r < D; ++r)
  {
    double sum = job.virtualOrigin[r];
    for (unsigned int c = 0; c < D; ++c)
    {
      sum += job.virtualIndexToPoint[r][c] *
             (static_cast<double>(job.virtualStart[c]) + 0.5 * static_cast<double>(job.virtualSize[c] - 1));
    }
    x0[r] = sum;
    job.momentOrigin[r] = sum;
  }
  std::string problem = CudaMetricDetail::AffineChainOf<D>(this->m_FixedTransform.GetPointer(), x0, job.fixedTransform);
  if (!problem.empty())
  {
    return problem;
  }
  typename CompositeTransform<typename Superclass::MovingTransformType::ScalarType, D>::Pointer leading;
  if (const auto * bspline = CudaMetricDetail::BSplineOf<D>(this->m_MovingTransform.GetPointer(), &leading))
  {
    // the transforms a composite applies after the B-spline: an affine map
    // of its output, whose matrix is their Jacobian with respect to the
    // point (ITK's composite Jacobian multiplies the B-spline's by it)
    m_BSplineOuter.clear();
    job.movingTransform.count = 0;
    if (leading.IsNotNull())
    {
      const typename Superclass::MovingTransformType * before = leading.GetPointer();
      problem = CudaMetricDetail::AffineChainOf<D>(before, x0, job.movingTransform);
      if (!problem.empty())
      {
        return problem;
      }
      m_BSplineOuter = CudaMetricDetail::ChainMatrix<D>(job.movingTransform);
    }
    // the coefficient images' grid and values, ITK's parameter order
    const auto &                                 images = bspline->GetCoefficientImages();
    typename VirtualImageType::DirectionType     gridIndexToPoint;
    typename VirtualImageType::DirectionType     gridPointToIndex;
    CudaMetricDetail::IndexMatrices(images[0].GetPointer(), gridIndexToPoint, gridPointToIndex);
    std::int64_t grid = 1;
    for (unsigned int r = 0; r < D; ++r)
    {
      job.bspline.gridSize[r] = static_cast<std::int64_t>(images[0]->GetLargestPossibleRegion().GetSize()[r]);
      job.bspline.gridOrigin[r] = images[0]->GetOrigin()[r];
      for (unsigned int c = 0; c < D; ++c)
      {
        job.bspline.gridPointToIndex[r][c] = gridPointToIndex[r][c];
      }
      grid *= job.bspline.gridSize[r];
    }
    m_HostCoefficients.resize(static_cast<std::size_t>(grid) * D);
    for (unsigned int a = 0; a < D; ++a)
    {
      std::copy(images[a]->GetBufferPointer(),
                images[a]->GetBufferPointer() + grid,
                m_HostCoefficients.begin() + static_cast<std::ptrdiff_t>(a * grid));
    }
    job.bspline.coefficients = m_HostCoefficients.data();
    return {};
  }
  if (const auto * field = CudaMetricDetail::DisplacementFieldOf<D>(this->m_MovingTransform.GetPointer(), &leading))
  {
    // as the B-spline: the transforms a composite applies after the field
    // map its output, and their matrix multiplies its (identity) Jacobian
    job.movingTransform.count = 0;
    if (leading.IsNotNull())
    {
      const typename Superclass::MovingTransformType * before = leading.GetPointer();
      problem = CudaMetricDetail::AffineChainOf<D>(before, x0, job.movingTransform);
      if (!problem.empty())
      {
        return problem;
      }
      const std::vector<double> outer = CudaMetricDetail::ChainMatrix<D>(job.movingTransform);
      for (unsigned int r = 0; r < D; ++r)
      {
        for (unsigned int c = 0; c < D; ++c)
        {
          job.field.outer[r][c] = outer[r * D + c];
        }
      }
    }
    const auto * image = field->GetDisplacementField();
    CudaMetricDetail::DescribeImage(image, job.field.grid);
    // itk::Vector<double, D> pixels: D doubles each
    job.field.displacements = reinterpret_cast<const double *>(image->GetBufferPointer());
    return {};
  }
  problem = CudaMetricDetail::AffineChainOf<D>(this->m_MovingTransform.GetPointer(), x0, job.movingTransform);
  if (!problem.empty() || !wantDerivative)
  {
    return problem;
  }

  // the Jacobian at x0 and its steps along the axes: J(x) = J(x0) + sum_k (x - x0)_k step_k
  const unsigned int                           P = this->GetNumberOfParameters();
  typename Superclass::JacobianType            jacobian;
  typename Superclass::MovingTransformType::InputPointType point;
  auto jacobianAt = [&](const double * at, std::vector<double> & out)
  {
    for (unsigned int a = 0; a < D; ++a)
    {
      point[a] = at[a];
    }
    this->m_MovingTransform->ComputeJacobianWithRespectToParameters(point, jacobian);
    out.assign(static_cast<std::size_t>(D) * P, 0.0);
    for (unsigned int r = 0; r < D; ++r)
    {
      for (unsigned int p = 0; p < P; ++p)
      {
        out[r * P + p] = jacobian(r, p);
      }
    }
  };
  jacobianAt(x0, jacobianAtOrigin);
  if (jacobian.rows() != D || jacobian.cols() != P)
  {
    return "a transform whose Jacobian is not D x (number of parameters)";
  }
  jacobianSteps.assign(static_cast<std::size_t>(D) * D * P, 0.0);
  std::vector<double> at;
  for (unsigned int k = 0; k < D; ++k)
  {
    double xk[3]{ x0[0], x0[1], x0[2] };
    xk[k] += 1.0;
    jacobianAt(xk, at);
    for (std::size_t i = 0; i < at.size(); ++i)
    {
      jacobianSteps[k * D * P + i] = at[i] - jacobianAtOrigin[i];
    }
  }
  // check the reconstruction at another point
  double test[3]{ x0[0], x0[1], x0[2] };
  for (unsigned int a = 0; a < D; ++a)
  {
    test[a] += 13.75 * (a + 1) - 21.0;
  }
  jacobianAt(test, at);
  for (std::size_t i = 0; i < at.size(); ++i)
  {
    double expected = jacobianAtOrigin[i];
    double scale = std::abs(at[i]) + std::abs(expected);
    for (unsigned int k = 0; k < D; ++k)
    {
      expected += (test[k] - x0[k]) * jacobianSteps[k * D * P + i];
      scale += std::abs((test[k] - x0[k]) * jacobianSteps[k * D * P + i]);
    }
    if (!(std::abs(expected - at[i]) <= 1e-9 * (1.0 + scale)))
    {
      return std::string("the moving transform ") + this->m_MovingTransform->GetNameOfClass() +
             " (its Jacobian is not affine in the point)";
    }
  }
  return {};
}

template <typename TMetric>
void
CudaImageToImageMetricv4Base<TMetric>::UploadImages() const
{
  const int device = cif::Runtime::GetCurrentDevice();
  if (m_DeviceCurrent && m_DeviceFixed.GetDevice() == device)
  {
    return;
  }
  m_DeviceCurrent = false;
  const std::size_t fixedBytes = this->m_FixedImage->GetBufferedRegion().GetNumberOfPixels() * sizeof(PixelType);
  const std::size_t movingBytes = this->m_MovingImage->GetBufferedRegion().GetNumberOfPixels() * sizeof(PixelType);
  m_DeviceFixed.Allocate(fixedBytes);
  m_DeviceFixed.CopyFromHost(this->m_FixedImage->GetBufferPointer(), fixedBytes);
  m_DeviceMoving.Allocate(movingBytes);
  m_DeviceMoving.CopyFromHost(this->m_MovingImage->GetBufferPointer(), movingBytes);
  m_DevicePoints.Release();
  if (!m_HostPoints.empty())
  {
    m_DevicePoints.Allocate(m_HostPoints.size() * sizeof(double));
    m_DevicePoints.CopyFromHost(m_HostPoints.data(), m_HostPoints.size() * sizeof(double));
  }
  m_DeviceGradient.Release();
  if (this->GetUseMovingImageGradientFilter() && this->m_MovingImageGradientImage.IsNotNull())
  {
    // the gradient image's double vectors as float, converted in pieces
    const auto *          gradient = this->m_MovingImageGradientImage->GetBufferPointer();
    const std::size_t     count = this->m_MovingImageGradientImage->GetBufferedRegion().GetNumberOfPixels();
    const std::size_t     piece = std::size_t{ 1 } << 20;
    std::vector<float>    staged(std::min(count, piece) * ImageDimension);
    m_DeviceGradient.Allocate(count * ImageDimension * sizeof(float));
    for (std::size_t first = 0; first < count; first += piece)
    {
      const std::size_t n = std::min(piece, count - first);
      for (std::size_t i = 0; i < n; ++i)
      {
        for (unsigned int a = 0; a < ImageDimension; ++a)
        {
          staged[i * ImageDimension + a] = static_cast<float>(gradient[first + i][a]);
        }
      }
      cif::Runtime::CopyHostToDevice(static_cast<float *>(m_DeviceGradient.GetPointer()) + first * ImageDimension,
                                     staged.data(),
                                     n * ImageDimension * sizeof(float));
    }
  }
  m_DeviceCurrent = true;
}

template <typename TMetric>
void
CudaImageToImageMetricv4Base<TMetric>::Report(const CudaExecutionReport & report) const
{
  m_LastExecutionReport = report;
  if (!m_ReportedSinceInitialize)
  {
    // one line per Initialize (per level), not per iteration
    cif::ReportRunIfVerbose(this->GetNameOfClass(), report);
    m_ReportedSinceInitialize = true;
  }
}

template <typename TMetric>
void
CudaImageToImageMetricv4Base<TMetric>::Evaluate(bool wantDerivative, MeasureType & value, DerivativeType * derivative) const
{
  constexpr unsigned int D = ImageDimension;
  cif::DenseMetricJob    job;
  std::vector<double>    jacobianAtOrigin;
  std::vector<double>    jacobianSteps;
  std::string            unsupported = this->GetCoreUnsupportedReason();
  if (unsupported.empty())
  {
    unsupported = this->BuildJob(wantDerivative, job, jacobianAtOrigin, jacobianSteps);
  }
  if (unsupported.empty())
  {
    unsupported = this->CompleteCoreJob(job);
  }
  if (unsupported.empty() && job.points != nullptr && job.pointCount < 1)
  {
    itkExceptionMacro("VirtualSampledPointSet must have 1 or more points.");
  }
  CudaExecutionReport report;
  const char *        name = this->GetNameOfClass();
  if (!unsupported.empty())
  {
    if (this->GetExecutionMode() == CudaExecutionMode::GPU)
    {
      CudaThrowGpuUnavailable(cif::GpuUnavailable(std::string(name) +
                                                  ": GPU execution was requested but is impossible: the module's "
                                                  "metric core does not take " +
                                                  unsupported),
                              name);
    }
    if (wantDerivative)
    {
      Superclass::GetValueAndDerivative(value, *derivative);
    }
    else
    {
      value = Superclass::GetValue();
    }
    report.Device = CudaExecutedOn::CPU;
    report.Message = "CPU (ITK's own metric code), because the module's metric core does not take " + unsupported;
    this->Report(report);
    return;
  }

  std::string                             why;
  const std::unique_ptr<cif::DeviceScope> scope = this->MakeCudaDeviceScope();
  bool gpu = CudaDecideGpu(this->GetExecutionMode(), this->GetCudaDeviceProblem(), name, why);
  cif::MetricMoments  moments;
  std::vector<double> bsplineSums;
  // ITK's bookkeeping: the derivative, sized to the number of parameters;
  // a displacement field's is written in place by the core
  const unsigned int P = this->GetNumberOfParameters();
  const bool         fieldDerivative = job.field.displacements != nullptr && wantDerivative;
  DerivativeType     scratch;
  DerivativeType &   result = derivative != nullptr ? *derivative : scratch;
  if (wantDerivative && result.GetSize() != P)
  {
    result.SetSize(P);
  }
  if (fieldDerivative && static_cast<std::size_t>(P) != static_cast<std::size_t>(job.virtualSize[0] * job.virtualSize[1] * job.virtualSize[2]) * D)
  {
    itkExceptionMacro("the displacement field's parameters do not match the virtual domain");
  }
  const std::size_t   sumCount = job.bspline.coefficients != nullptr && wantDerivative
                                   ? static_cast<std::size_t>(cif::MetricWeightSets(job.kind)) * D *
                                     static_cast<std::size_t>(cif::BSplineGridCount(job.bspline))
                                   : 0;
  if (gpu)
  {
    try
    {
      this->UploadImages();
      cif::DenseMetricJob onDevice = job;
      if (job.bspline.coefficients != nullptr)
      {
        // per evaluation: the coefficients up, the derivative sums down
        const std::size_t bytes = m_HostCoefficients.size() * sizeof(double);
        if (m_DeviceTransformValues.GetSize() != bytes)
        {
          m_DeviceTransformValues.Allocate(bytes);
        }
        m_DeviceTransformValues.CopyFromHost(m_HostCoefficients.data(), bytes);
        onDevice.bspline.coefficients = static_cast<const double *>(m_DeviceTransformValues.GetPointer());
        if (sumCount > 0 && m_DeviceDerivativeSums.GetSize() != sumCount * sizeof(double))
        {
          m_DeviceDerivativeSums.Allocate(sumCount * sizeof(double));
        }
        onDevice.bspline.derivativeSums = static_cast<double *>(m_DeviceDerivativeSums.GetPointer());
      }
      if (job.field.displacements != nullptr)
      {
        // per evaluation: the field up (the optimiser changes it in place),
        // the derivative (D doubles per point) down
        const std::size_t bytes = job.field.grid.size[0] * job.field.grid.size[1] * job.field.grid.size[2] *
                                  static_cast<std::size_t>(D) * sizeof(double);
        if (m_DeviceTransformValues.GetSize() != bytes)
        {
          m_DeviceTransformValues.Allocate(bytes);
        }
        m_DeviceTransformValues.CopyFromHost(job.field.displacements, bytes);
        onDevice.field.displacements = static_cast<const double *>(m_DeviceTransformValues.GetPointer());
        if (fieldDerivative && m_DeviceDerivativeSums.GetSize() != P * sizeof(double))
        {
          m_DeviceDerivativeSums.Allocate(P * sizeof(double));
        }
        onDevice.field.derivative = fieldDerivative ? static_cast<double *>(m_DeviceDerivativeSums.GetPointer()) : nullptr;
      }
      cif::MetricMask * deviceMasks[2] = { &onDevice.fixedMask, &onDevice.movingMask };
      cif::MetricImage * deviceImages[2] = { &onDevice.fixed, &onDevice.moving };
      for (int i = 0; i < 2; ++i)
      {
        if (deviceMasks[i]->image.values != nullptr)
        {
          deviceMasks[i]->image.values = m_Masks[i].OnDevice();
        }
        if (deviceImages[i]->coefficients != nullptr)
        {
          deviceImages[i]->coefficients = static_cast<const double *>(m_Cubic[i].OnDevice());
        }
      }
      onDevice.fixed.values = m_DeviceFixed.GetPointer();
      onDevice.moving.values = m_DeviceMoving.GetPointer();
      onDevice.movingGradient.values = m_DeviceGradient.GetPointer();
      if (onDevice.points != nullptr)
      {
        onDevice.points = static_cast<const double *>(m_DevicePoints.GetPointer());
      }
      cif::DenseMetricMomentsCUDA<PixelType>(onDevice, moments);
      if (sumCount > 0)
      {
        bsplineSums.resize(sumCount);
        m_DeviceDerivativeSums.CopyToHost(bsplineSums.data(), sumCount * sizeof(double));
      }
      if (fieldDerivative)
      {
        m_DeviceDerivativeSums.CopyToHost(result.data_block(), P * sizeof(double));
      }
      report.Device = CudaExecutedOn::GPU;
      report.Message = "GPU: " + cif::Runtime::GetDeviceDescription();
    }
    catch (const cif::CudaOutOfMemory & failure)
    {
      if (this->GetExecutionMode() == CudaExecutionMode::GPU)
      {
        CudaThrowAsItkException(failure, name);
      }
      gpu = false;
      m_DeviceCurrent = false;
      m_DeviceFixed.Release();
      m_DeviceMoving.Release();
      m_DeviceGradient.Release();
      m_DeviceTransformValues.Release();
      m_DeviceDerivativeSums.Release();
      for (int i = 0; i < 2; ++i)
      {
        m_Masks[i].device.Release();
        m_Cubic[i].device.Release();
      }
      report.FellBackAfterOutOfMemory = true;
      why = std::string("the GPU ran out of memory (") + failure.what() + ")";
    }
    catch (const cif::CudaFailure & failure)
    {
      CudaThrowAsItkException(failure, name);
    }
  }
  if (!gpu)
  {
    std::vector<float> & hostGradient = m_HostGradient;
    if (wantDerivative && !job.centralDifferences && hostGradient.empty())
    {
      const auto *      gradient = this->m_MovingImageGradientImage->GetBufferPointer();
      const std::size_t count = this->m_MovingImageGradientImage->GetBufferedRegion().GetNumberOfPixels();
      hostGradient.resize(count * D);
      for (std::size_t i = 0; i < count; ++i)
      {
        for (unsigned int a = 0; a < D; ++a)
        {
          hostGradient[i * D + a] = static_cast<float>(gradient[i][a]);
        }
      }
    }
    job.movingGradient.values = (wantDerivative && !job.centralDifferences) ? hostGradient.data() : nullptr;
    bsplineSums.assign(sumCount, 0.0);
    job.bspline.derivativeSums = sumCount > 0 ? bsplineSums.data() : nullptr;
    job.field.derivative = fieldDerivative ? result.data_block() : nullptr;
    try
    {
      cif::DenseMetricMomentsCPU<PixelType>(job, moments, static_cast<int>(this->GetMaximumNumberOfWorkUnits()));
    }
    catch (const std::exception & failure)
    {
      itkExceptionMacro(<< failure.what());
    }
    report.Device = CudaExecutedOn::CPU;
    report.Message = why.empty() ? std::string("CPU (the module's metric core)")
                                 : "CPU (the module's metric core), because " + why;
  }
  std::ostringstream note;
  if (job.points != nullptr)
  {
    note << job.pointCount << " sampled points, ";
  }
  else
  {
    note << "dense virtual domain of " << this->GetVirtualRegion().GetNumberOfPixels() << " points, ";
  }
  note << this->m_MovingTransform->GetNameOfClass() << " with " << this->GetNumberOfParameters() << " parameters";
  if (job.fixedMask.image.values != nullptr || job.movingMask.image.values != nullptr)
  {
    note << (job.fixedMask.image.values != nullptr ? ", fixed image mask" : "")
         << (job.movingMask.image.values != nullptr ? ", moving image mask" : "");
  }
  report.AddNote(note.str());
  if (report.FellBackAfterOutOfMemory)
  {
    this->WarnAsExecutionOwner(report.Message);
  }
  this->Report(report);

  // ITK's bookkeeping: valid points, value, derivative
  this->m_NumberOfValidPoints = static_cast<SizeValueType>(moments.count);
  if (result.GetSize() != P)
  {
    result.SetSize(P);
  }
  if (!fieldDerivative)
  {
    result.Fill(0.0);
  }
  const MomentContraction contract(
    moments, jacobianAtOrigin, jacobianSteps, bsplineSums, m_BSplineOuter, P, fieldDerivative);
  this->ValueAndDerivativeFromMoments(moments, contract, this->m_Value, wantDerivative ? &result : nullptr);
  value = this->m_Value;
}

template <typename TMetric>
void
CudaImageToImageMetricv4Base<TMetric>::MomentContraction::operator()(int set, DerivativeType & out) const
{
  constexpr unsigned int D = ImageDimension;
  const unsigned int     P = m_Parameters;
  if (m_InPlace)
  {
    // a displacement field: the core wrote the per-point sums into `out`
    return;
  }
  if (!m_BSplineSums.empty())
  {
    const double * sums = m_BSplineSums.data() + static_cast<std::size_t>(set) * P;
    if (m_BSplineOuter.empty())
    {
      for (unsigned int p = 0; p < P; ++p)
      {
        out[p] = sums[p];
      }
      return;
    }
    // a B-spline inside a composite, with A the matrix of the transforms
    // after it: the Jacobian row d of parameter (d', j) is A[d][d'] w_j, so
    // the sum of parameter (d', j) is sum_r A[r][d'] sums[r][j]
    const unsigned int grid = P / D;
    for (unsigned int a = 0; a < D; ++a)
    {
      for (unsigned int j = 0; j < grid; ++j)
      {
        double sum = 0.0;
        for (unsigned int r = 0; r < D; ++r)
        {
          sum += m_BSplineOuter[r * D + a] * sums[r * grid + j];
        }
        out[a * grid + j] = sum;
      }
    }
    return;
  }
  const double(&w)[3][4] = set == 0 ? m_Moments.weighted : m_Moments.movingWeighted;
  for (unsigned int p = 0; p < P; ++p)
  {
    double sum = 0.0;
    for (unsigned int r = 0; r < D; ++r)
    {
      sum += m_AtOrigin[r * P + p] * w[r][D];
      for (unsigned int k = 0; k < D; ++k)
      {
        sum += m_Steps[(k * D + r) * P + p] * w[r][k];
      }
    }
    out[p] = sum;
  }
}

template <typename TMetric>
auto
CudaImageToImageMetricv4Base<TMetric>::GetValue() const -> MeasureType
{
  MeasureType value{};
  this->Evaluate(false, value, nullptr);
  return value;
}

template <typename TMetric>
void
CudaImageToImageMetricv4Base<TMetric>::GetValueAndDerivative(MeasureType & value, DerivativeType & derivative) const
{
  this->Evaluate(true, value, &derivative);
}

template <typename TMetric>
void
CudaImageToImageMetricv4Base<TMetric>::ReleaseDeviceMemory()
{
  m_DeviceCurrent = false;
  m_DeviceFixed.Release();
  m_DeviceMoving.Release();
  m_DeviceGradient.Release();
  m_DevicePoints.Release();
  m_DeviceTransformValues.Release();
  m_DeviceDerivativeSums.Release();
  for (int i = 0; i < 2; ++i)
  {
    m_Masks[i].device.Release();
    m_Cubic[i].device.Release();
  }
}

template <typename TMetric>
void
CudaImageToImageMetricv4Base<TMetric>::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  this->PrintExecutionMode(os, indent);
  os << indent << "LastExecutedOn: " << m_LastExecutionReport.Device << std::endl;
  os << indent << "LastExecutionReport: " << m_LastExecutionReport.Message << std::endl;
}

} // namespace itk

#endif
