/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaBSplineInterpolateImageFunction_hxx
#define itkCudaBSplineInterpolateImageFunction_hxx

#include "itkCudaBSplineInterpolateImageFunction.h"
#include "cif/BSplineEvaluate.h"
#include "cif/BSplinePrefilter.h"
#include "itkMultiThreaderBase.h"
#include <ostream>
#include <sstream>
#include <type_traits>

namespace itk
{

namespace CudaBSplineInterpolateDetail
{
/** Below this many points the CPU batch runs on the calling thread. */
constexpr SizeValueType ParallelThreshold = 512;

inline void
EnsureCapacity(cif::DeviceBuffer & buffer, std::size_t bytes)
{
  // (again on another device than the one it was made on)
  if (buffer.GetSize() < bytes || buffer.GetDevice() != cif::Runtime::GetCurrentDevice())
  {
    buffer.Allocate(bytes);
  }
}
} // namespace CudaBSplineInterpolateDetail

// ---------------------------------------------------------------------------
// Coefficients
// ---------------------------------------------------------------------------
template <typename TImageType, typename TCoordRep, typename TCoefficientType>
void
CudaBSplineInterpolateImageFunction<TImageType, TCoordRep, TCoefficientType>::SetInputImage(
  const TImageType * inputData)
{
  // ImageFunction, the grandparent: records the image and its buffered start
  // and end indices (InterpolateImageFunction does not override it).
  using ImageFunctionType = typename Superclass::Superclass::Superclass;

  if (inputData == nullptr)
  {
    m_CudaCoefficients = nullptr;
    this->m_Coefficients = nullptr;
    // ITK's SetInputImage(nullptr) clears the coefficients only and keeps a
    // reference to the image, which cannot be evaluated any more; clearing
    // it too lets the image go. (itk::ResampleImageFilter calls this after
    // each update.) The coefficients report stays: it describes the last
    // computation.
    ImageFunctionType::SetInputImage(nullptr);
    return;
  }

  // What BSplineInterpolateImageFunction::SetInputImage does, with our filter
  // in place of its private BSplineDecompositionImageFilter.
  auto prefilter = PrefilterType::New();
  prefilter->SetInput(inputData);
  prefilter->SetSplineOrder(static_cast<unsigned int>(this->GetSplineOrder()));
  prefilter->SetExecutionMode(this->GetExecutionMode());
  prefilter->SetCudaDevice(this->GetCudaDevice()); // the coefficients on the device the batches use
  prefilter->SetMethod(m_PrefilterMethod);
  if (m_PrefilterFIRHalfWidth >= 0)
  {
    prefilter->SetFIRHalfWidth(static_cast<unsigned int>(m_PrefilterFIRHalfWidth));
  }
  else
  {
    prefilter->SetFIRTolerance(m_PrefilterFIRTolerance);
  }
  prefilter->Update();

  typename CudaCoefficientImageType::Pointer coefficients = prefilter->GetOutput();
  coefficients->DisconnectPipeline();
  // ITK's per-point code reads the coefficients through itk::Image::GetPixel,
  // which does not synchronise: make the host copy current now (one download
  // when the GPU computed them; the device copy stays current too).
  coefficients->UpdateHostBuffer();

  m_CoefficientsExecutionReport = prefilter->GetLastExecutionReport();
  m_CudaCoefficients = coefficients;
  this->m_Coefficients = coefficients.GetPointer();

  // After the filter, as ITK does, in case it pulled in more of the input.
  ImageFunctionType::SetInputImage(inputData);
  this->m_DataLength = inputData->GetBufferedRegion().GetSize();
}

template <typename TImageType, typename TCoordRep, typename TCoefficientType>
void
CudaBSplineInterpolateImageFunction<TImageType, TCoordRep, TCoefficientType>::SetPrefilterFIRHalfWidth(
  unsigned int halfWidth)
{
  if (halfWidth > static_cast<unsigned int>(cif::MaxFIRHalfWidth))
  {
    itkExceptionMacro(<< "FIR half-width " << halfWidth << " is larger than the supported " << cif::MaxFIRHalfWidth);
  }
  if (m_PrefilterFIRHalfWidth != static_cast<int>(halfWidth))
  {
    m_PrefilterFIRHalfWidth = static_cast<int>(halfWidth);
    this->Modified();
  }
}

template <typename TImageType, typename TCoordRep, typename TCoefficientType>
void
CudaBSplineInterpolateImageFunction<TImageType, TCoordRep, TCoefficientType>::SetPrefilterFIRTolerance(double tolerance)
{
  if (!(tolerance > 0.0) || !(tolerance < 1.0))
  {
    itkExceptionMacro(<< "FIR tolerance must lie in (0, 1), got " << tolerance);
  }
  if (m_PrefilterFIRHalfWidth >= 0 || tolerance != m_PrefilterFIRTolerance)
  {
    m_PrefilterFIRTolerance = tolerance;
    m_PrefilterFIRHalfWidth = -1;
    this->Modified();
  }
}

template <typename TImageType, typename TCoordRep, typename TCoefficientType>
void
CudaBSplineInterpolateImageFunction<TImageType, TCoordRep, TCoefficientType>::ReleaseDeviceMemory()
{
  std::lock_guard<std::mutex> lock(m_BatchMutex);
  m_DevicePoints.Release();
  m_DeviceValues.Release();
  m_DeviceGradients.Release();
  m_DeviceInside.Release();
  if (m_CudaCoefficients.IsNotNull())
  {
    m_CudaCoefficients->ReleaseDeviceMemory();
  }
}

// ---------------------------------------------------------------------------
// Batch evaluation
// ---------------------------------------------------------------------------
template <typename TImageType, typename TCoordRep, typename TCoefficientType>
CudaExecutionReport
CudaBSplineInterpolateImageFunction<TImageType, TCoordRep, TCoefficientType>::GetLastExecutionReport() const
{
  std::lock_guard<std::mutex> lock(m_BatchMutex);
  return m_LastExecutionReport;
}

template <typename TImageType, typename TCoordRep, typename TCoefficientType>
std::string
CudaBSplineInterpolateImageFunction<TImageType, TCoordRep, TCoefficientType>::GetGPUUnsupportedReason() const
{
  std::ostringstream why;
  if (!cif::BSplineEvaluateCUDAIsCompiled())
  {
    why << "this build has no CUDA code";
  }
  else if (ImageDimension != 2 && ImageDimension != 3)
  {
    why << "the GPU batch evaluation handles 2 and 3 dimensions, not " << ImageDimension;
  }
  else if (this->GetSplineOrder() != 3)
  {
    why << "the GPU batch evaluation handles spline order 3 only, not " << this->GetSplineOrder();
  }
  else if (!CudaIsOneOf<TCoefficientType, float, double>)
  {
    why << "the GPU batch evaluation handles float or double coefficients, not "
        << CudaPixelTypeName<TCoefficientType>();
  }
  else if (!std::is_same<OutputType, double>::value)
  {
    why << "the GPU batch evaluation writes double values, and this interpolator's output type is "
        << CudaPixelTypeName<OutputType>();
  }
  else
  {
    why << this->GetCudaDeviceProblem();
  }
  return why.str();
}

template <typename TImageType, typename TCoordRep, typename TCoefficientType>
void
CudaBSplineInterpolateImageFunction<TImageType, TCoordRep, TCoefficientType>::CheckReadyForBatch() const
{
  if (this->GetInputImage() == nullptr || this->m_Coefficients.IsNull() || m_CudaCoefficients.IsNull())
  {
    itkExceptionMacro(<< "No input image: call SetInputImage before evaluating");
  }
}

template <typename TImageType, typename TCoordRep, typename TCoefficientType>
template <typename TCoordinates>
SizeValueType
CudaBSplineInterpolateImageFunction<TImageType, TCoordRep, TCoefficientType>::EvaluateBatchOfVectors(
  const std::vector<TCoordinates> &  coordinates,
  bool                               areIndices,
  std::vector<OutputType> &          values,
  std::vector<CovariantVectorType> * gradients,
  std::vector<std::uint8_t> *        inside) const
{
  static_assert(sizeof(CovariantVectorType) == ImageDimension * sizeof(OutputType),
                "CovariantVector must be ImageDimension contiguous values");
  const SizeValueType n = coordinates.size();
  values.resize(n);
  if (gradients)
  {
    gradients->resize(n);
  }
  if (inside)
  {
    inside->resize(n);
  }
  std::vector<double> converted;
  const double *      raw = nullptr;
  if constexpr (std::is_same<TCoordRep, double>::value && sizeof(TCoordinates) == ImageDimension * sizeof(double))
  {
    raw = n > 0 ? coordinates[0].GetDataPointer() : nullptr;
  }
  else
  {
    converted.resize(n * ImageDimension);
    for (SizeValueType i = 0; i < n; ++i)
    {
      for (unsigned int a = 0; a < ImageDimension; ++a)
      {
        converted[i * ImageDimension + a] = static_cast<double>(coordinates[i][a]);
      }
    }
    raw = converted.data();
  }
  return this->EvaluateBatchInternal(n,
                                     raw,
                                     areIndices,
                                     values.data(),
                                     gradients && n > 0 ? (*gradients)[0].GetDataPointer() : nullptr,
                                     inside ? inside->data() : nullptr);
}

template <typename TImageType, typename TCoordRep, typename TCoefficientType>
SizeValueType
CudaBSplineInterpolateImageFunction<TImageType, TCoordRep, TCoefficientType>::EvaluateBatch(
  const std::vector<PointType> &     points,
  std::vector<OutputType> &          values,
  std::vector<CovariantVectorType> * gradients,
  std::vector<std::uint8_t> *        inside) const
{
  return this->EvaluateBatchOfVectors(points, false, values, gradients, inside);
}

template <typename TImageType, typename TCoordRep, typename TCoefficientType>
SizeValueType
CudaBSplineInterpolateImageFunction<TImageType, TCoordRep, TCoefficientType>::EvaluateBatchAtContinuousIndex(
  const std::vector<ContinuousIndexType> & indices,
  std::vector<OutputType> &                values,
  std::vector<CovariantVectorType> *       gradients,
  std::vector<std::uint8_t> *              inside) const
{
  return this->EvaluateBatchOfVectors(indices, true, values, gradients, inside);
}

template <typename TImageType, typename TCoordRep, typename TCoefficientType>
SizeValueType
CudaBSplineInterpolateImageFunction<TImageType, TCoordRep, TCoefficientType>::EvaluateBatch(SizeValueType  count,
                                                                                            const double * points,
                                                                                            OutputType *   values,
                                                                                            OutputType *   gradients,
                                                                                            std::uint8_t * inside) const
{
  return this->EvaluateBatchInternal(count, points, false, values, gradients, inside);
}

template <typename TImageType, typename TCoordRep, typename TCoefficientType>
SizeValueType
CudaBSplineInterpolateImageFunction<TImageType, TCoordRep, TCoefficientType>::EvaluateBatchAtContinuousIndex(
  SizeValueType  count,
  const double * indices,
  OutputType *   values,
  OutputType *   gradients,
  std::uint8_t * inside) const
{
  return this->EvaluateBatchInternal(count, indices, true, values, gradients, inside);
}

template <typename TImageType, typename TCoordRep, typename TCoefficientType>
SizeValueType
CudaBSplineInterpolateImageFunction<TImageType, TCoordRep, TCoefficientType>::EvaluateBatchInternal(
  SizeValueType  count,
  const double * points,
  bool           pointsAreIndices,
  OutputType *   values,
  OutputType *   gradients,
  std::uint8_t * inside) const
{
  this->CheckReadyForBatch();
  if (count == 0)
  {
    return 0;
  }
  if (points == nullptr)
  {
    itkExceptionMacro(<< "EvaluateBatch: null point array for " << count << " points");
  }

  // The inside flags are always computed: they give the returned count.
  std::vector<std::uint8_t> ownFlags;
  if (inside == nullptr)
  {
    ownFlags.resize(count);
    inside = ownFlags.data();
  }

  const auto                device = this->MakeCudaDeviceScope(); // SetCudaDevice's, for the run
  const CudaExecutionReport report = CudaRunWithFallback(
    this->GetExecutionMode(),
    this->GetGPUUnsupportedReason(),
    this->GetNameOfClass(),
    [&] { this->GPUEvaluateBatch(count, points, pointsAreIndices, values, gradients, inside); },
    [&] { this->CPUEvaluateBatch(count, points, pointsAreIndices, values, gradients, inside); });
  {
    std::lock_guard<std::mutex> lock(m_BatchMutex);
    m_LastExecutionReport = report;
  }
  if (report.FellBackAfterOutOfMemory)
  {
    itkWarningMacro(<< report.Message);
  }

  SizeValueType insideCount = 0;
  for (SizeValueType i = 0; i < count; ++i)
  {
    insideCount += inside[i] != 0 ? 1 : 0;
  }
  return insideCount;
}

template <typename TImageType, typename TCoordRep, typename TCoefficientType>
void
CudaBSplineInterpolateImageFunction<TImageType, TCoordRep, TCoefficientType>::CPUEvaluateBatch(
  SizeValueType  count,
  const double * points,
  bool           pointsAreIndices,
  OutputType *   values,
  OutputType *   gradients,
  std::uint8_t * inside) const
{
  constexpr unsigned int D = ImageDimension;
  const InputImageType * image = this->GetInputImage();

  // ITK's per-point calls without a thread id are thread-safe (their working
  // space is on the stack).
  auto evaluateOne = [=](SizeValueType i)
  {
    const double *      p = points + i * D;
    ContinuousIndexType index;
    if (pointsAreIndices)
    {
      for (unsigned int a = 0; a < D; ++a)
      {
        index[a] = static_cast<TCoordRep>(p[a]);
      }
    }
    else
    {
      PointType point;
      for (unsigned int a = 0; a < D; ++a)
      {
        point[a] = static_cast<TCoordRep>(p[a]);
      }
      image->TransformPhysicalPointToContinuousIndex(point, index); // as ITK's Evaluate(point)
    }
    const bool isInside = this->IsInsideBuffer(index);
    inside[i] = isInside ? 1 : 0;
    if (!isInside)
    {
      if (values)
      {
        values[i] = NumericTraits<OutputType>::ZeroValue();
      }
      if (gradients)
      {
        for (unsigned int a = 0; a < D; ++a)
        {
          gradients[i * D + a] = NumericTraits<OutputType>::ZeroValue();
        }
      }
      return;
    }
    if (gradients)
    {
      OutputType          value;
      CovariantVectorType gradient;
      this->EvaluateValueAndDerivativeAtContinuousIndex(index, value, gradient);
      if (values)
      {
        values[i] = value;
      }
      for (unsigned int a = 0; a < D; ++a)
      {
        gradients[i * D + a] = gradient[a];
      }
    }
    else if (values)
    {
      values[i] = this->EvaluateAtContinuousIndex(index);
    }
  };

  if (count < CudaBSplineInterpolateDetail::ParallelThreshold)
  {
    for (SizeValueType i = 0; i < count; ++i)
    {
      evaluateOne(i);
    }
  }
  else
  {
    MultiThreaderBase::New()->ParallelizeArray(0, count, evaluateOne, nullptr);
  }
}

template <typename TImageType, typename TCoordRep, typename TCoefficientType>
void
CudaBSplineInterpolateImageFunction<TImageType, TCoordRep, TCoefficientType>::GPUEvaluateBatch(
  SizeValueType  count,
  const double * points,
  bool           pointsAreIndices,
  OutputType *   values,
  OutputType *   gradients,
  std::uint8_t * inside) const
{
  if constexpr ((ImageDimension == 2 || ImageDimension == 3) && CudaIsOneOf<TCoefficientType, float, double> &&
                std::is_same<OutputType, double>::value)
  {
    using CudaBSplineInterpolateDetail::EnsureCapacity;
    constexpr unsigned int D = ImageDimension;
    const auto             geometry = this->MakeEvaluateGeometry();

    std::lock_guard<std::mutex> lock(m_BatchMutex);
    // Uploads only if the device copy is stale (the CPU computed the coefficients).
    const TCoefficientType * coefficients = m_CudaCoefficients->GetDeviceBufferPointer();

    const std::size_t pointBytes = count * D * sizeof(double);
    EnsureCapacity(m_DevicePoints, pointBytes);
    if (values)
    {
      EnsureCapacity(m_DeviceValues, count * sizeof(double));
    }
    if (gradients)
    {
      EnsureCapacity(m_DeviceGradients, pointBytes);
    }
    EnsureCapacity(m_DeviceInside, count);
    m_DevicePoints.CopyFromHost(points, pointBytes);

    cif::BSplineEvaluateBatch batch;
    batch.count = static_cast<std::int64_t>(count);
    batch.points = static_cast<const double *>(m_DevicePoints.GetPointer());
    batch.pointsAreIndices = pointsAreIndices;
    batch.values = values ? static_cast<double *>(m_DeviceValues.GetPointer()) : nullptr;
    batch.gradients = gradients ? static_cast<double *>(m_DeviceGradients.GetPointer()) : nullptr;
    batch.inside = static_cast<std::uint8_t *>(m_DeviceInside.GetPointer());
    cif::BSplineEvaluateCUDA(coefficients, geometry, batch);

    if (values)
    {
      m_DeviceValues.CopyToHost(values, count * sizeof(double));
    }
    if (gradients)
    {
      m_DeviceGradients.CopyToHost(gradients, pointBytes);
    }
    m_DeviceInside.CopyToHost(inside, count);
  }
  else
  {
    (void)count;
    (void)points;
    (void)pointsAreIndices;
    (void)values;
    (void)gradients;
    (void)inside;
    itkExceptionMacro(<< "GPU batch called for an unsupported request");
  }
}

template <typename TImageType, typename TCoordRep, typename TCoefficientType>
void
CudaBSplineInterpolateImageFunction<TImageType, TCoordRep, TCoefficientType>::EvaluateBatchOnDevice(
  SizeValueType  count,
  const double * devicePoints,
  bool           pointsAreContinuousIndices,
  double *       deviceValues,
  double *       deviceGradients,
  std::uint8_t * deviceInside) const
{
  this->CheckReadyForBatch();
  if (this->GetExecutionMode() == CudaExecutionMode::CPU)
  {
    itkExceptionMacro(<< "EvaluateBatchOnDevice needs the GPU, and the execution mode is CPU");
  }
  std::string why;
  // GPU mode: throws with the reason when the GPU cannot serve the request.
  CudaDecideGpu(CudaExecutionMode::GPU, this->GetGPUUnsupportedReason(), this->GetNameOfClass(), why);
  if (count == 0)
  {
    return;
  }
  const auto device = this->MakeCudaDeviceScope(); // the device the caller's arrays are on
  if constexpr ((ImageDimension == 2 || ImageDimension == 3) && CudaIsOneOf<TCoefficientType, float, double>)
  {
    try
    {
      const auto                  geometry = this->MakeEvaluateGeometry();
      std::lock_guard<std::mutex> lock(m_BatchMutex);
      cif::BSplineEvaluateBatch   batch;
      batch.count = static_cast<std::int64_t>(count);
      batch.points = devicePoints;
      batch.pointsAreIndices = pointsAreContinuousIndices;
      batch.values = deviceValues;
      batch.gradients = deviceGradients;
      batch.inside = deviceInside;
      cif::BSplineEvaluateCUDA(m_CudaCoefficients->GetDeviceBufferPointer(), geometry, batch);
      m_LastExecutionReport.Device = CudaExecutedOn::GPU;
      m_LastExecutionReport.Message = "GPU: " + cif::Runtime::GetDeviceDescription();
      m_LastExecutionReport.FellBackAfterOutOfMemory = false;
    }
    catch (const cif::CudaFailure & failure)
    {
      CudaThrowAsItkException(failure, this->GetNameOfClass());
    }
  }
}

template <typename TImageType, typename TCoordRep, typename TCoefficientType>
cif::BSplineEvaluateGeometry
CudaBSplineInterpolateImageFunction<TImageType, TCoordRep, TCoefficientType>::MakeEvaluateGeometry() const
{
  constexpr unsigned int D = ImageDimension;
  const InputImageType * image = this->GetInputImage();
  const IndexType        start = this->GetStartIndex();

  // The coefficients must cover exactly the region the evaluation mirrors in.
  const auto coefficientRegion = m_CudaCoefficients->GetBufferedRegion();
  if (coefficientRegion.GetIndex() != start || coefficientRegion.GetSize() != this->m_DataLength)
  {
    itkExceptionMacro(<< "The coefficient image's buffered region " << coefficientRegion
                      << " differs from the input's buffered region (start " << start << ", size " << this->m_DataLength
                      << "); call SetInputImage again after the input changed");
  }

  cif::BSplineEvaluateGeometry g;
  g.dimension = static_cast<int>(D);
  // ITK's m_PhysicalPointToIndex (protected in ImageBase), computed as
  // ImageBase::ComputeIndexToPhysicalPointMatrices does.
  using DirectionType = typename InputImageType::DirectionType;
  DirectionType scale;
  scale.Fill(0.0);
  for (unsigned int a = 0; a < D; ++a)
  {
    scale[a][a] = image->GetSpacing()[a];
  }
  const DirectionType indexToPhysical = image->GetDirection() * scale;
  const DirectionType physicalToIndex(indexToPhysical.GetInverse());
  const bool          useDirection = this->GetUseImageDirection();
  for (unsigned int a = 0; a < D && a < 3; ++a)
  {
    g.size[a] = static_cast<std::int64_t>(this->m_DataLength[a]);
    g.start[a] = static_cast<std::int64_t>(start[a]);
    g.origin[a] = image->GetOrigin()[a];
    g.spacing[a] = image->GetSpacing()[a];
    for (unsigned int b = 0; b < D && b < 3; ++b)
    {
      g.pointToIndex[a][b] = physicalToIndex[a][b];
      g.gradientMatrix[a][b] = useDirection ? image->GetDirection()[a][b] : (a == b ? 1.0 : 0.0);
    }
  }
  return g;
}

template <typename TImageType, typename TCoordRep, typename TCoefficientType>
void
CudaBSplineInterpolateImageFunction<TImageType, TCoordRep, TCoefficientType>::PrintSelf(std::ostream & os,
                                                                                        Indent         indent) const
{
  Superclass::PrintSelf(os, indent);
  this->PrintExecutionMode(os, indent);
  os << indent << "PrefilterMethod: " << m_PrefilterMethod << '\n';
  os << indent << "PrefilterFIRTolerance: " << m_PrefilterFIRTolerance << '\n';
  os << indent << "PrefilterFIRHalfWidth: ";
  if (m_PrefilterFIRHalfWidth >= 0)
  {
    os << m_PrefilterFIRHalfWidth << " (set)\n";
  }
  else
  {
    os << cif::CubicFIRHalfWidthForTolerance(m_PrefilterFIRTolerance) << " (from the tolerance)\n";
  }
  os << indent << "CoefficientsExecutionReport: " << m_CoefficientsExecutionReport.Message << '\n';
  os << indent << "LastExecutionReport: " << this->GetLastExecutionReport().Message << '\n';
}

} // namespace itk

#endif
