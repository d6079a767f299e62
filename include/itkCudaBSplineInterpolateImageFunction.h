/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaBSplineInterpolateImageFunction_h
#define itkCudaBSplineInterpolateImageFunction_h

#include "cif/BSplineEvaluate.h"
#include "itkBSplineInterpolateImageFunction.h"
#include "itkCudaBSplineDecompositionImageFilter.h"
#include "itkCudaExecution.h"
#include "itkCudaFilterImage.h"
#include <cstdint>
#include <mutex>
#include <vector>

namespace itk
{

/** \class CudaBSplineInterpolateImageFunction
 * \brief itk::BSplineInterpolateImageFunction whose coefficients come from
 * CudaBSplineDecompositionImageFilter, with a batch evaluation of values and
 * gradients at many points on the GPU in one launch.
 *
 * <b>Per-point API: ITK's.</b> The class derives from
 * itk::BSplineInterpolateImageFunction and does not override any per-point
 * method, so Evaluate, EvaluateAtContinuousIndex, EvaluateDerivative,
 * EvaluateDerivativeAtContinuousIndex, EvaluateValueAndDerivative(...)
 * (with or without a thread id), SetSplineOrder, UseImageDirection and
 * SetNumberOfWorkUnits are ITK's code, with ITK's conventions (no bounds
 * check; thread-safe without a thread id). They read the coefficients from
 * the host copy of the coefficient image, which SetInputImage keeps current.
 * Only the coefficients differ from ITK's: they are computed by
 * CudaBSplineDecompositionImageFilter (on the GPU for spline order 3 when
 * possible, else with the module's CPU core), which agrees with ITK's
 * BSplineDecompositionImageFilter within 1e-6 of the input range for float
 * coefficients (CPU: identical in the tests) and within 1e-9 for double.
 *
 * <b>How SetInputImage hooks in.</b> In ITK 5.2,
 * BSplineInterpolateImageFunction keeps its decomposition filter
 * (m_CoefficientFilter) private, but the members its evaluation code reads
 * are protected: m_Coefficients (the coefficient image), m_DataLength (the
 * buffered size) and m_SplineOrder. SetInputImage therefore runs a
 * CudaBSplineDecompositionImageFilter itself, stores its output in
 * m_Coefficients, sets m_DataLength, and calls ImageFunction::SetInputImage
 * (the grandparent's; it records the image and its buffered start and end
 * indices) instead of BSplineInterpolateImageFunction::SetInputImage, which
 * would run ITK's decomposition as well. That is everything ITK's
 * SetInputImage does, in the same order. (Registering
 * CudaBSplineDecompositionImageFilterFactory would also work, but it is
 * process-wide, must happen before the interpolator is constructed, and
 * would not let this class set the execution mode and the method of the
 * private filter.) As in ITK, set the spline order and the prefilter
 * options before the image: SetSplineOrder after SetInputImage does not
 * recompute the coefficients.
 *
 * The coefficient image is an itk::CudaFilterImage: when the GPU computed it, the
 * device copy stays on the device for the batch calls, and a host copy is
 * downloaded once at SetInputImage for the per-point calls (ITK's code reads
 * it through itk::Image::GetPixel, which does not synchronise). When the CPU
 * computed it, the first GPU batch uploads it once. ReleaseDeviceMemory()
 * frees the device copy.
 *
 * <b>Batch evaluation.</b> EvaluateBatch (physical points) and
 * EvaluateBatchAtContinuousIndex (continuous indices) evaluate N points in
 * one call: the values, and optionally the gradients, which are the
 * physical-space gradients of EvaluateDerivative (index-space derivative
 * divided by the spacing, then multiplied by the direction matrix when
 * UseImageDirection is on). Three forms each: std::vector in and out;
 * host raw pointers (D doubles per point, D doubles per gradient), suited to
 * registration metrics that keep their own arrays; and EvaluateBatchOnDevice
 * with device pointers (GPU only), for code that keeps its points on the GPU.
 *
 * <b>Points outside the image.</b> ITK's Evaluate does not check bounds (the
 * caller is expected to test IsInsideBuffer, as ResampleImageFilter and the
 * v4 metrics do). The batch calls test every point with ITK's
 * IsInsideBuffer rule: inside when every continuous index component c
 * satisfies start - 0.5 <= c < end + 0.5, start and end being the first and
 * last index of the buffered region (NaN is outside). An outside point gets
 * value 0 and a zero gradient, and its inside flag is 0; an inside point
 * gets the interpolated value, which equals ITK's per-point result, and
 * flag 1. The flags are optional outputs; the calls return the number of
 * inside points.
 *
 * <b>Where a batch runs</b> (SetExecutionMode, also used for the
 * coefficients at SetInputImage): the GPU handles spline order 3 in 2 and 3
 * dimensions with float or double coefficients; the sums run in the
 * coefficient type (float or double), the index map and the gradient's
 * physical mapping in double. Everything else (other spline orders or
 * dimensions, CPU mode, no GPU) runs on the CPU as a multi-threaded loop
 * over ITK's per-point calls, so the CPU batch equals the per-point results
 * exactly. Automatic mode falls back to the CPU with the reason in
 * GetLastExecutionReport(); GPU mode throws an itk::ExceptionObject when the
 * GPU cannot serve the request. A device out-of-memory falls back to the
 * CPU in automatic mode. Accuracy of the GPU batch against ITK's per-point
 * calls: 1e-9 relative for double coefficients, 1e-5 relative for float
 * coefficients (the gradient relative to the coefficient magnitude divided
 * by the spacing, since float sums lose digits in proportion to it).
 *
 * Boundary cases where ITK reads outside its buffer and this class does not:
 * an axis of length 2 (one reflection can leave [0, 1]; the batch folds the
 * index with the full mirror) and an axis of length 1 with a non-zero start
 * index (ITK reads index 0; the batch reads the one sample).
 *
 * <b>Use in registration.</b> A metric that evaluates the moving image at
 * the mapped fixed-image points can gather the N mapped points once per
 * iteration and call EvaluateBatch(points, values, &gradients, &inside)
 * instead of N calls of IsInsideBuffer and EvaluateValueAndDerivative: the
 * values and gradients are those of ITK's interpolator, the inside flags
 * those of IsInsideBuffer, and the coefficients are computed once per moving
 * image. Batch calls are thread-safe (a mutex serialises the GPU ones).
 *
 * \ingroup CudaImageFilters
 */
template <typename TImageType, typename TCoordRep = double, typename TCoefficientType = double>
class ITK_TEMPLATE_EXPORT CudaBSplineInterpolateImageFunction
  : public BSplineInterpolateImageFunction<TImageType, TCoordRep, TCoefficientType>
  , public CudaExecutionSettings
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaBSplineInterpolateImageFunction);

  using Self = CudaBSplineInterpolateImageFunction;
  using Superclass = BSplineInterpolateImageFunction<TImageType, TCoordRep, TCoefficientType>;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  itkNewMacro(Self);
  itkTypeMacro(CudaBSplineInterpolateImageFunction, BSplineInterpolateImageFunction);

  using OutputType = typename Superclass::OutputType;
  using InputImageType = typename Superclass::InputImageType;
  using IndexType = typename Superclass::IndexType;
  using SizeType = typename Superclass::SizeType;
  using ContinuousIndexType = typename Superclass::ContinuousIndexType;
  using PointType = typename Superclass::PointType;
  using CoefficientDataType = typename Superclass::CoefficientDataType;
  using CoefficientImageType = typename Superclass::CoefficientImageType;
  using CovariantVectorType = typename Superclass::CovariantVectorType;
  static constexpr unsigned int ImageDimension = Superclass::ImageDimension;

  /** The coefficient image: an itk::Image of TCoefficientType that can live on the GPU. */
  using CudaCoefficientImageType = CudaFilterImage<TCoefficientType, ImageDimension>;
  using PrefilterType = CudaBSplineDecompositionImageFilter<TImageType, CudaCoefficientImageType>;

  /** Computes the coefficients with CudaBSplineDecompositionImageFilter
   * (spline order, execution mode and prefilter method as set now) and
   * records the image, as ITK's SetInputImage does. nullptr releases the
   * coefficients and the image (ITK keeps a reference to the image). */
  void
  SetInputImage(const TImageType * inputData) override;

  // SetExecutionMode / GetExecutionMode (CudaExecutionSettings): where the
  // coefficients and the batch calls run (default Automatic). Takes effect
  // for the coefficients at the next SetInputImage and for the batch calls
  // at once.

  /** The prefilter's method (default Recursive, ITK's). FIR is cubic only
   * and approximate (see CudaBSplineDecompositionImageFilter). Takes effect
   * at the next SetInputImage. */
  itkSetEnumMacro(PrefilterMethod, CudaBSplinePrefilterMethod);
  itkGetEnumMacro(PrefilterMethod, CudaBSplinePrefilterMethod);
  /** FIR half-width K (2K + 1 taps), at most 32; overrides the tolerance. */
  void
  SetPrefilterFIRHalfWidth(unsigned int halfWidth);
  /** FIR truncation tolerance (default 1e-7, K = 13); overrides a half-width. */
  void
  SetPrefilterFIRTolerance(double tolerance);
  itkGetConstMacro(PrefilterFIRTolerance, double);

  /** Where and how the coefficients were computed at the last SetInputImage. */
  const CudaExecutionReport &
  GetCoefficientsExecutionReport() const
  {
    return m_CoefficientsExecutionReport;
  }
  /** Where the last batch call ran, and why there (Device None before any). */
  CudaExecutionReport
  GetLastExecutionReport() const;
  CudaExecutedOn
  GetLastExecutedOn() const
  {
    return this->GetLastExecutionReport().Device;
  }
  /** Why a batch call cannot run on the GPU now (empty if it can, device
   * availability aside). */
  std::string
  GetGPUUnsupportedReason() const;

  /** The coefficient image (host copy current); nullptr before SetInputImage. */
  const CoefficientImageType *
  GetCoefficients() const
  {
    return this->m_Coefficients.GetPointer();
  }

  /** Frees the device copy of the coefficients (the next GPU batch uploads it again). */
  void
  ReleaseDeviceMemory();

  /** Values, and optionally physical gradients and inside flags (1 inside,
   * 0 outside: value 0, zero gradient), at physical points. The vectors are
   * resized to the number of points. Returns the number of inside points. */
  SizeValueType
  EvaluateBatch(const std::vector<PointType> &     points,
                std::vector<OutputType> &          values,
                std::vector<CovariantVectorType> * gradients = nullptr,
                std::vector<std::uint8_t> *        inside = nullptr) const;

  /** The same at continuous indices. */
  SizeValueType
  EvaluateBatchAtContinuousIndex(const std::vector<ContinuousIndexType> & indices,
                                 std::vector<OutputType> &                values,
                                 std::vector<CovariantVectorType> *       gradients = nullptr,
                                 std::vector<std::uint8_t> *              inside = nullptr) const;

  /** Raw host arrays: `points` holds ImageDimension doubles per point
   * (physical coordinates), `gradients` receives ImageDimension values per
   * point. `values`, `gradients` and `inside` may each be null. */
  SizeValueType
  EvaluateBatch(SizeValueType  count,
                const double * points,
                OutputType *   values,
                OutputType *   gradients = nullptr,
                std::uint8_t * inside = nullptr) const;

  /** Raw host arrays of continuous indices. */
  SizeValueType
  EvaluateBatchAtContinuousIndex(SizeValueType  count,
                                 const double * indices,
                                 OutputType *   values,
                                 OutputType *   gradients = nullptr,
                                 std::uint8_t * inside = nullptr) const;

  /** Device arrays (GPU only: throws an itk::ExceptionObject when the GPU
   * cannot serve the request or the execution mode is CPU). `devicePoints`
   * holds physical points, or continuous indices when
   * `pointsAreContinuousIndices`. Any output may be null. Returns after the
   * device finished. */
  void
  EvaluateBatchOnDevice(SizeValueType  count,
                        const double * devicePoints,
                        bool           pointsAreContinuousIndices,
                        double *       deviceValues,
                        double *       deviceGradients = nullptr,
                        std::uint8_t * deviceInside = nullptr) const;

protected:
  CudaBSplineInterpolateImageFunction() = default;
  ~CudaBSplineInterpolateImageFunction() override = default;
  void
  PrintSelf(std::ostream & os, Indent indent) const override;

private:
  /** The std::vector forms of EvaluateBatch and EvaluateBatchAtContinuousIndex. */
  template <typename TCoordinates>
  SizeValueType
  EvaluateBatchOfVectors(const std::vector<TCoordinates> &  coordinates,
                         bool                               areIndices,
                         std::vector<OutputType> &          values,
                         std::vector<CovariantVectorType> * gradients,
                         std::vector<std::uint8_t> *        inside) const;
  /** The one implementation behind the host batch calls. */
  SizeValueType
  EvaluateBatchInternal(SizeValueType  count,
                        const double * points,
                        bool           pointsAreIndices,
                        OutputType *   values,
                        OutputType *   gradients,
                        std::uint8_t * inside) const;
  void
  CPUEvaluateBatch(SizeValueType  count,
                   const double * points,
                   bool           pointsAreIndices,
                   OutputType *   values,
                   OutputType *   gradients,
                   std::uint8_t * inside) const;
  void
  GPUEvaluateBatch(SizeValueType  count,
                   const double * points,
                   bool           pointsAreIndices,
                   OutputType *   values,
                   OutputType *   gradients,
                   std::uint8_t * inside) const;
  void
  CheckReadyForBatch() const;
  cif::BSplineEvaluateGeometry
  MakeEvaluateGeometry() const;

  CudaBSplinePrefilterMethod                 m_PrefilterMethod{ CudaBSplinePrefilterMethod::Recursive };
  double                                     m_PrefilterFIRTolerance{ 1e-7 };
  int                                        m_PrefilterFIRHalfWidth{ -1 }; // -1: from the tolerance
  CudaExecutionReport                        m_CoefficientsExecutionReport;
  typename CudaCoefficientImageType::Pointer m_CudaCoefficients;

  // Batch state: the last report and the device scratch buffers, reused
  // between calls (grown when needed). Guarded by m_BatchMutex.
  mutable std::mutex          m_BatchMutex;
  mutable CudaExecutionReport m_LastExecutionReport;
  mutable cif::DeviceBuffer    m_DevicePoints;
  mutable cif::DeviceBuffer    m_DeviceValues;
  mutable cif::DeviceBuffer    m_DeviceGradients;
  mutable cif::DeviceBuffer    m_DeviceInside;
};

} // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#  include "itkCudaBSplineInterpolateImageFunction.hxx"
#endif

#endif
