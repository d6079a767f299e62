/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaImageToImageMetricv4Base_h
#define itkCudaImageToImageMetricv4Base_h

#include "cif/RegistrationMetric.h"
#include "cif/Runtime.h"
#include "itkCudaExecution.h"
#include "itkIntTypes.h"
#include "itkMacro.h"
#include "itkSmartPointer.h"

#include <string>
#include <vector>

namespace itk
{

/** \class CudaImageToImageMetricv4Base
 * \brief What the module's v4 image metrics share: ITK's metric TMetric
 * (for example MeanSquaresImageToImageMetricv4<F, M>) whose GetValue and
 * GetValueAndDerivative run on the module's metric core (cif/
 * RegistrationMetric.h), on the GPU or on the CPU.
 *
 * <b>What is computed.</b> ITK's value and derivative over the dense virtual
 * domain, or over the virtual sampled point set (UseSampledPointSet, as
 * ImageRegistrationMethodv4's RANDOM and REGULAR sampling set it), as
 * ITK's dense and sparse threaders compute them: for every virtual point,
 * the virtual point, its images under the fixed and the moving transform,
 * ITK's IsInsideBuffer test in both images, both values by ITK's linear
 * interpolation or, for an itk::BSplineInterpolateImageFunction of order 3
 * (ITK's, or the module's CudaBSplineInterpolateImageFunction), by its
 * cubic B-spline from the interpolator's own coefficients (uploaded once
 * per Initialize), and the moving image gradient as ITK's metric gets it:
 * by linear interpolation of the gradient image that ITK's Initialize
 * computed (UseMovingImageGradientFilter on, the default: the metric's
 * moving gradient filter, by default GradientRecursiveGaussianImageFilter
 * with sigma the largest spacing), or by ITK's default calculator with the
 * filter off (CentralDifferenceImageFunction: central differences of
 * linear interpolations half a spacing either side along each physical
 * axis). The number of valid points, the value and the
 * derivative follow ITK, including its answer when no point is valid
 * (value NumericTraits::max(), zero derivative, ITK's warning).
 *
 * <b>Masks.</b> The fixed and the moving image mask, when each is an
 * itk::ImageMaskSpatialObject (of unsigned char, unsigned short, short or
 * float pixels): a point is valid only inside both, tested as ITK's
 * IsInsideInWorldSpace tests it (the mask's ObjectToWorldTransformInverse,
 * then the nearest pixel by ITK's rounding, inside the mask image's buffer
 * and not zero). The masks are read (one byte per mask pixel, uploaded
 * once) after each Initialize and again when a mask or its image is
 * modified.
 *
 * <b>Transforms.</b> Those of ITK's "Linear" category (Translation, Euler2D
 * and 3D, VersorRigid3D, Similarity, Affine, and composites of them, as
 * ImageRegistrationMethodv4 passes them): their point map is affine, read
 * exactly from a MatrixOffsetTransformBase or a TranslationTransform, and
 * from a composite of up to four of them map by map (so that each step
 * rounds as ITK's does), else probed. Their Jacobian
 * with respect to the parameters is affine in the point, so the core
 * returns sums of the per-point weights times the point and the class
 * contracts them with the Jacobian that ITK's transform reports at D + 1
 * points (the transform's own ComputeJacobianWithRespectToParameters, so
 * every parameterisation is ITK's). Both maps are checked at another point
 * before use.
 *
 * itk::BSplineTransform of order 3 (alone, or the one transform of a
 * composite, as ImageRegistrationMethodv4 passes it, or the last transform
 * of a composite whose other transforms are fixed and of the Linear
 * category, as ImageRegistrationMethodv4 passes a B-spline after a moving
 * initial transform: their affine map is applied to the B-spline's output
 * and their matrix multiplies its Jacobian, as in ITK's
 * CompositeTransform): the core evaluates
 * ITK's TransformPoint (the support inside the grid, else the point itself)
 * and its sparse Jacobian, the point's 4^D B-spline weights, and sums each
 * parameter's derivative terms (on the GPU per grid cell, then per control
 * point, in a fixed order). Per evaluation the coefficients go up and the
 * derivative (one double per parameter and weight set) comes down.
 *
 * itk::DisplacementFieldTransform (and its Gaussian and B-spline
 * smoothing-on-update subclasses) with its default
 * VectorLinearInterpolateImageFunction, alone or as the last transform of
 * a composite after fixed Linear ones, over the dense virtual domain:
 * ITK's local-support path (D derivative entries per virtual point,
 * written in place by the core; mean squares not averaged, Mattes with
 * ITK's pRatioArray). Per evaluation the field goes up and the derivative
 * comes down.
 *
 * <b>Devices and data.</b> On the GPU, the fixed image, the moving image and
 * the moving gradient image (as float) are uploaded once after each
 * Initialize (ImageRegistrationMethodv4 calls it once per level); an
 * evaluation sends the job (a kernel argument) and reads back 2 + D (D + 1)
 * doubles. The device copies are replaced at the next Initialize and freed
 * by ReleaseDeviceMemory() or the destructor. Without a usable GPU (or in
 * CPU mode) the module's CPU core evaluates the same arithmetic on all
 * cores; an out-of-memory on the device falls back to it in automatic mode
 * and says so.
 *
 * <b>What stays with ITK's code.</b> Configurations the core does not cover
 * run ITK's own GetValue / GetValueAndDerivative, and the execution report
 * says why (GetCoreUnsupportedReason()): masks of other spatial object
 * types, interpolators other than ITK's LinearInterpolateImageFunction and
 * cubic BSplineInterpolateImageFunction, a
 * gradient calculator other than ITK's default, floating
 * point correction, transforms outside the Linear category other than
 * BSplineTransform of order 3 and DisplacementFieldTransform (B-splines of
 * other orders, composites of several transforms other than a B-spline or
 * a field after fixed Linear ones), a displacement field with a sampled
 * point set, the correlation metric or another interpolator, 4
 * dimensions, pixel types other than float and double. In GPU mode those
 * throw instead.
 *
 * <b>Accuracy.</b> The per-point arithmetic is ITK's, in double, without
 * fused multiply-adds on either device; the gradient image is read as
 * float (relative error 6e-8 per component) and the sums are added in a
 * different order than ITK's threads add them. Against ITK's metric on the
 * same points (tests on ITK's example images, 2D and 3D): the value within
 * 1e-5 relative and the derivative within 1e-4 relative in norm (the tests'
 * tolerance; the measured differences are far smaller and listed in
 * docs/Registration.md).
 *
 * \ingroup CudaImageFilters
 */
template <typename TMetric>
class ITK_TEMPLATE_EXPORT CudaImageToImageMetricv4Base
  : public TMetric
  , public CudaExecutionSettings
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaImageToImageMetricv4Base);

  using Self = CudaImageToImageMetricv4Base;
  using Superclass = TMetric;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  itkTypeMacro(CudaImageToImageMetricv4Base, TMetric);

  using typename Superclass::MeasureType;
  using typename Superclass::DerivativeType;
  using typename Superclass::FixedImageType;
  using typename Superclass::MovingImageType;
  using typename Superclass::VirtualImageType;
  using typename Superclass::FixedImagePixelType;
  using typename Superclass::MovingImagePixelType;
  static constexpr unsigned int ImageDimension = Superclass::VirtualImageDimension;

  /** ITK's Initialize, then marks the device copies stale (they are
   * uploaded at the next GPU evaluation). */
  void
  Initialize() override;

  MeasureType
  GetValue() const override;

  void
  GetValueAndDerivative(MeasureType & value, DerivativeType & derivative) const override;

  /** Why the current configuration runs ITK's own code instead of the
   * module's core (empty when the core takes it). Valid after Initialize. */
  std::string
  GetCoreUnsupportedReason() const;

  /** Where the last evaluation ran, and why there. */
  const CudaExecutionReport &
  GetLastExecutionReport() const
  {
    return m_LastExecutionReport;
  }
  CudaExecutedOn
  GetLastExecutedOn() const
  {
    return m_LastExecutionReport.Device;
  }

  /** Frees the device copies of the images (a later GPU evaluation uploads
   * them again). */
  void
  ReleaseDeviceMemory();

protected:
  CudaImageToImageMetricv4Base() = default;
  ~CudaImageToImageMetricv4Base() override = default;

  /** The metric the core evaluates for this class. */
  virtual cif::MetricKind
  GetCoreMetricKind() const = 0;

  /** Turns the core's sums of a weight set (0: cif::MetricMoments::weighted,
   * 1: movingWeighted) into ITK's per-parameter sums of the weights times
   * grad m . J: for an affine-map transform the contraction of the moments
   * with the moving transform's Jacobian, for a B-spline transform the
   * per-parameter sums the core returned, for a displacement field nothing
   * (the core wrote its per-point terms into the derivative). */
  class MomentContraction
  {
  public:
    MomentContraction(const cif::MetricMoments & moments, const std::vector<double> & atOrigin,
                      const std::vector<double> & steps, const std::vector<double> & bsplineSums,
                      const std::vector<double> & bsplineOuter, unsigned int parameters, bool inPlace = false)
      : m_Moments(moments)
      , m_AtOrigin(atOrigin)
      , m_Steps(steps)
      , m_BSplineSums(bsplineSums)
      , m_BSplineOuter(bsplineOuter)
      , m_Parameters(parameters)
      , m_InPlace(inPlace)
    {}
    /** Affine: out[p] = sum_r J_rp(x0) w[r][D] + sum_k sum_r G_rpk w[r][k]
     * with w the set's moments. */
    void
    operator()(int set, DerivativeType & out) const;

  private:
    const cif::MetricMoments &  m_Moments;
    const std::vector<double> & m_AtOrigin;
    const std::vector<double> & m_Steps;
    const std::vector<double> & m_BSplineSums;
    const std::vector<double> & m_BSplineOuter;
    unsigned int                m_Parameters;
    /** A displacement field: `out` already holds the sums. */
    bool m_InPlace;
  };

  /** Adds what the metric's kind needs to the job (the Mattes histogram);
   * empty, or why the core cannot take the metric's settings. */
  virtual std::string
  CompleteCoreJob(cif::DenseMetricJob &) const
  {
    return {};
  }

  /** ITK's answer when no point is valid (VerifyNumberOfValidPoints: value
   * NumericTraits::max(), zero derivative, ITK's warning), for the metrics
   * that do not throw then. */
  void
  ValueForNoValidPoints(MeasureType & value, DerivativeType * derivative) const
  {
    DerivativeType scratch(this->GetNumberOfParameters());
    this->VerifyNumberOfValidPoints(value, derivative != nullptr ? *derivative : scratch);
  }

  /** ITK's value, and with `derivative` its derivative (sized to the
   * number of parameters and zeroed by the caller), from the core's sums,
   * with ITK's answer or exception when no point is valid: the metric's
   * AfterThreadedExecution. */
  virtual void
  ValueAndDerivativeFromMoments(const cif::MetricMoments &  moments,
                                const MomentContraction &   contract,
                                MeasureType &               value,
                                DerivativeType *            derivative) const = 0;

  void
  PrintSelf(std::ostream & os, Indent indent) const override;

private:
  using PixelType = FixedImagePixelType;

  /** One evaluation: the module's core, or ITK's code with the reason. */
  void
  Evaluate(bool wantDerivative, MeasureType & value, DerivativeType * derivative) const;

  /** The job's geometry and maps; empty, or why the core cannot take it. */
  std::string
  BuildJob(bool wantDerivative, cif::DenseMetricJob & job, std::vector<double> & jacobianAtOrigin,
           std::vector<double> & jacobianSteps) const;

  /** Uploads the images after an Initialize (GPU runs). */
  void
  UploadImages() const;

  /** The report and the verbose line (once per Initialize). */
  void
  Report(const CudaExecutionReport & report) const;

  /** A host array derived from an ITK object (a mask's flags, an
   * interpolator's coefficients), its device copy, and what it was read
   * from: rebuilt when the object, its modified time or its buffer changes,
   * and after each Initialize. */
  template <typename T>
  struct DerivedArray
  {
    const void *     object{ nullptr };
    ModifiedTimeType time{ 0 };
    const void *     buffer{ nullptr };
    /** The array when it had to be computed or converted. */
    std::vector<T>    owned;
    const T *         data{ nullptr };
    std::size_t       count{ 0 };
    cif::DeviceBuffer device;

    bool
    Matches(const void * o, ModifiedTimeType t, const void * b) const
    {
      return data != nullptr && object == o && time == t && buffer == b;
    }
    void
    Reset(const void * o = nullptr, ModifiedTimeType t = 0, const void * b = nullptr)
    {
      object = o;
      time = t;
      buffer = b;
      owned.clear();
      data = nullptr;
      count = 0;
      device.Release();
    }
    /** The device copy (uploaded when missing or on another device). */
    const void *
    OnDevice()
    {
      if (device.GetSize() != count * sizeof(T) || device.GetDevice() != cif::Runtime::GetCurrentDevice())
      {
        device.Allocate(count * sizeof(T));
        device.CopyFromHost(data, count * sizeof(T));
      }
      return device.GetPointer();
    }
  };
  /** 0: the fixed image mask's flags (one byte per pixel of its image), 1:
   * the moving image mask's. */
  mutable DerivedArray<unsigned char> m_Masks[2];
  /** 0: the fixed interpolator's cubic B-spline coefficients (in double), 1:
   * the moving interpolator's (empty for linear interpolators). */
  mutable DerivedArray<double> m_Cubic[2];

  mutable std::vector<float>  m_HostGradient;
  /** A B-spline moving transform: its coefficients (D x grid), and the
   * core's per-parameter sums (weight sets x D x grid). */
  mutable std::vector<double> m_HostCoefficients;
  /** A B-spline inside a composite: the D x D matrix (row major) of the
   * transforms applied after it; empty otherwise. */
  mutable std::vector<double> m_BSplineOuter;
  /** On the device: a B-spline's coefficients or a displacement field's
   * vectors, and the core's per-parameter sums (B-spline) or derivative
   * (displacement field). */
  mutable cif::DeviceBuffer   m_DeviceTransformValues;
  mutable cif::DeviceBuffer   m_DeviceDerivativeSums;
  std::vector<double>         m_HostPoints;
  mutable cif::DeviceBuffer   m_DevicePoints;
  mutable cif::DeviceBuffer   m_DeviceFixed;
  mutable cif::DeviceBuffer   m_DeviceMoving;
  mutable cif::DeviceBuffer   m_DeviceGradient;
  mutable bool                m_DeviceCurrent{ false };
  mutable bool                m_ReportedSinceInitialize{ false };
  mutable CudaExecutionReport m_LastExecutionReport;
};

} // namespace itk

/** The template parameters of ITK's v4 image metrics, with ITK's defaults,
 * and the arguments that pass them on: a module metric declares
 * `template <CIF_METRICV4_TEMPLATE_PARAMETERS> class CudaXImageToImageMetricv4
 * : public CudaImageToImageMetricv4Base<XImageToImageMetricv4<CIF_METRICV4_TEMPLATE_ARGUMENTS>>`. */
#define CIF_METRICV4_TEMPLATE_PARAMETERS                                                                               \
  typename TFixedImage, typename TMovingImage, typename TVirtualImage = TFixedImage,                                  \
           typename TInternalComputationValueType = double,                                                           \
           typename TMetricTraits = itk::DefaultImageToImageMetricTraitsv4<TFixedImage, TMovingImage, TVirtualImage,  \
                                                                           TInternalComputationValueType>
#define CIF_METRICV4_TEMPLATE_ARGUMENTS                                                                                \
  TFixedImage, TMovingImage, TVirtualImage, TInternalComputationValueType, TMetricTraits

/** The members every module metric declares alike: Self, Twin (ITK's
 * metric), Superclass, the pointers, New (through ITK's factory), the type
 * macro and the types the overrides use. */
#define CIF_METRICV4_CLASS_MEMBERS(name, twin)                                                                         \
public:                                                                                                                \
  ITK_DISALLOW_COPY_AND_MOVE(name);                                                                                    \
  using Self = name;                                                                                                   \
  using Twin = twin<CIF_METRICV4_TEMPLATE_ARGUMENTS>;                                                                  \
  using Superclass = itk::CudaImageToImageMetricv4Base<Twin>;                                                          \
  using Pointer = itk::SmartPointer<Self>;                                                                             \
  using ConstPointer = itk::SmartPointer<const Self>;                                                                  \
  itkNewMacro(Self);                                                                                                   \
  itkTypeMacro(name, twin);                                                                                            \
                                                                                                                       \
protected:                                                                                                             \
  name() = default;                                                                                                    \
  ~name() override = default;                                                                                          \
  using typename Superclass::MeasureType;                                                                              \
  using typename Superclass::DerivativeType;                                                                           \
  using typename Superclass::MomentContraction

#ifndef ITK_MANUAL_INSTANTIATION
#  include "itkCudaImageToImageMetricv4Base.hxx"
#endif

#endif
