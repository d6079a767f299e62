/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaResampleImageFilter_hxx
#define itkCudaResampleImageFilter_hxx

#include "itkCudaResampleImageFilter.h"
#include "cif/BSplinePrefilter.h"
#include "cif/Resample.h"
#include "itkCudaGaussianRBFInterpolateImageFunction.h"
#include "itkBSplineInterpolateImageFunction.h"
#include "itkCudaBSplineInterpolateImageFunction.h"
#include <typeinfo>
#include "itkBSplineTransform.h"
#include "itkDisplacementFieldTransform.h"
#include "itkIdentityTransform.h"
#include "itkVectorLinearInterpolateImageFunction.h"
#include "itkLinearInterpolateImageFunction.h"
#include "itkMatrixOffsetTransformBase.h"
#include "itkMultiThreaderBase.h"
#include "itkNearestNeighborInterpolateImageFunction.h"
#include "itkTranslationTransform.h"
#include <string>
#include <type_traits>
#include <vector>

namespace itk
{

namespace CudaResampleDetail
{
/** Pixel types the GPU core is instantiated for (src/core/resample/Resample.cu). */
template <typename TIn, typename TOut>
constexpr bool                      GPUSupportsPixels =
  std::is_same<TIn, TOut>::value && CudaIsOneOf<TIn, unsigned char, short, unsigned short, float, double>;

/** The interpolation rule of an ITK interpolator, if the GPU has it. ITK's
 * classes exactly (and the module's drop-in B-spline interpolator), not
 * other subclasses: a subclass may evaluate otherwise (ITK's
 * BSplineResampleImageFunction, which BSplineTransformParametersAdaptor
 * uses, takes its input as the coefficients and does not prefilter). */
template <typename TImage, typename TPrecision>
bool
InterpolationOf(const InterpolateImageFunction<TImage, TPrecision> * interpolator, cif::Interpolation & rule)
{
  if (interpolator == nullptr)
  {
    return false;
  }
  const std::type_info & type = typeid(*interpolator);
  if (type == typeid(NearestNeighborInterpolateImageFunction<TImage, TPrecision>))
  {
    rule = cif::Interpolation::NearestNeighbor;
    return true;
  }
  if (type == typeid(LinearInterpolateImageFunction<TImage, TPrecision>))
  {
    rule = cif::Interpolation::Linear;
    return true;
  }
  // ITK's cubic B-spline interpolation, or the module's drop-in for it
  const bool   itkDouble = type == typeid(BSplineInterpolateImageFunction<TImage, TPrecision, double>) ||
                         type == typeid(CudaBSplineInterpolateImageFunction<TImage, TPrecision, double>);
  const bool   itkFloat = type == typeid(BSplineInterpolateImageFunction<TImage, TPrecision, float>) ||
                        type == typeid(CudaBSplineInterpolateImageFunction<TImage, TPrecision, float>);
  const auto * cubicDouble =
    itkDouble ? dynamic_cast<const BSplineInterpolateImageFunction<TImage, TPrecision, double> *>(interpolator)
              : nullptr;
  const auto * cubicFloat =
    itkFloat ? dynamic_cast<const BSplineInterpolateImageFunction<TImage, TPrecision, float> *>(interpolator)
             : nullptr;
  if ((cubicDouble && cubicDouble->GetSplineOrder() == 3) || (cubicFloat && cubicFloat->GetSplineOrder() == 3))
  {
    rule = cif::Interpolation::CubicBSpline;
    return true;
  }
  if (dynamic_cast<const CudaGaussianRBFInterpolateImageFunction<TImage, TPrecision> *>(interpolator))
  {
    rule = cif::Interpolation::GaussianRBF;
    return true;
  }
  return false;
}

/** True for interpolators whose SetInputImage computes coefficients over the
 * whole input image (ITK's B-spline decomposition, the Gaussian RBF solve):
 * their result depends on every input pixel, so the whole input is needed. */
template <typename TImage, typename TPrecision>
bool
HasWholeImageCoefficients(const InterpolateImageFunction<TImage, TPrecision> * interpolator)
{
  return dynamic_cast<const BSplineInterpolateImageFunction<TImage, TPrecision, double> *>(interpolator) != nullptr ||
         dynamic_cast<const BSplineInterpolateImageFunction<TImage, TPrecision, float> *>(interpolator) != nullptr ||
         dynamic_cast<const CudaGaussianRBFInterpolateImageFunction<TImage, TPrecision> *>(interpolator) != nullptr;
}

/** y = A x + b of a transform from output to input physical space, if it is affine. */
template <typename TPrecision, unsigned int D>
bool
AffineOf(const Transform<TPrecision, D, D> * transform, double A[3][3], double b[3])
{
  for (unsigned int i = 0; i < 3; ++i)
  {
    b[i] = 0.0;
    for (unsigned int j = 0; j < 3; ++j)
    {
      A[i][j] = i == j ? 1.0 : 0.0;
    }
  }
  if (const auto * affine = dynamic_cast<const MatrixOffsetTransformBase<TPrecision, D, D> *>(transform))
  {
    for (unsigned int i = 0; i < D; ++i)
    {
      b[i] = affine->GetOffset()[i];
      for (unsigned int j = 0; j < D; ++j)
      {
        A[i][j] = affine->GetMatrix()[i][j];
      }
    }
    return true;
  }
  if (const auto * translation = dynamic_cast<const TranslationTransform<TPrecision, D> *>(transform))
  {
    for (unsigned int i = 0; i < D; ++i)
    {
      b[i] = translation->GetOffset()[i];
    }
    return true;
  }
  return dynamic_cast<const IdentityTransform<TPrecision, D> *>(transform) != nullptr;
}
/** The transform as a displacement field the GPU can follow: double
 * precision, a field set, and the default vector linear interpolator. */
template <typename TPrecision, unsigned int D>
const DisplacementFieldTransform<double, D> *
DisplacementFieldOf(const Transform<TPrecision, D, D> * transform)
{
  if constexpr (std::is_same<TPrecision, double>::value)
  {
    using FieldTransform = DisplacementFieldTransform<double, D>;
    using FieldInterpolator =
      VectorLinearInterpolateImageFunction<typename FieldTransform::DisplacementFieldType, double>;
    const auto * field = dynamic_cast<const FieldTransform *>(transform);
    if (field != nullptr && field->GetDisplacementField() != nullptr &&
        field->GetDisplacementField()->GetBufferedRegion().GetNumberOfPixels() > 0 &&
        dynamic_cast<const FieldInterpolator *>(field->GetInterpolator()) != nullptr)
    {
      return field;
    }
  }
  return nullptr;
}
/** The transform as a cubic B-spline transform the GPU can follow: double
 * precision, coefficients set, whose buffers are their full grids starting
 * at index 0. */
template <typename TPrecision, unsigned int D>
const BSplineTransform<double, D, 3> *
CubicBSplineOf(const Transform<TPrecision, D, D> * transform)
{
  if constexpr (std::is_same<TPrecision, double>::value)
  {
    const auto * bspline = dynamic_cast<const BSplineTransform<double, D, 3> *>(transform);
    if (bspline == nullptr)
    {
      return nullptr;
    }
    for (const auto & image : bspline->GetCoefficientImages())
    {
      const auto region = image->GetLargestPossibleRegion();
      if (image->GetBufferPointer() == nullptr || image->GetBufferedRegion() != region ||
          region.GetNumberOfPixels() == 0 || region.GetIndex() != Index<D>())
      {
        return nullptr;
      }
    }
    return bspline;
  }
  return nullptr;
}

/** The grid of a displacement field or cubic B-spline transform, for the
 * GPU: the geometry in `grid` and the values interleaved (D doubles per grid
 * point) in `values`. False for other transforms. */
template <typename TPrecision, unsigned int D>
bool
TransformGridOf(const Transform<TPrecision, D, D> * transform, cif::TransformGrid & grid, std::vector<double> & values)
{
  const ImageBase<D> * geometry = nullptr;
  if (const auto * field = DisplacementFieldOf<TPrecision, D>(transform))
  {
    const auto * image = field->GetDisplacementField();
    const auto * first = image->GetBufferPointer();
    values.assign(&first[0][0], &first[0][0] + image->GetBufferedRegion().GetNumberOfPixels() * D);
    grid.kind = cif::GridTransformKind::DisplacementField;
    geometry = image;
  }
  else if (const auto * bspline = CubicBSplineOf<TPrecision, D>(transform))
  {
    const auto & images = bspline->GetCoefficientImages();
    const auto   n = images[0]->GetBufferedRegion().GetNumberOfPixels();
    values.resize(n * D);
    for (unsigned int k = 0; k < D; ++k)
    {
      const double * c = images[k]->GetBufferPointer();
      for (std::size_t i = 0; i < n; ++i)
      {
        values[i * D + k] = c[i];
      }
    }
    grid.kind = cif::GridTransformKind::CubicBSpline;
    geometry = images[0];
  }
  else
  {
    return false;
  }
  Matrix<double, D, D> indexToPoint;
  for (unsigned int i = 0; i < D; ++i)
  {
    for (unsigned int j = 0; j < D; ++j)
    {
      indexToPoint[i][j] = geometry->GetDirection()[i][j] * geometry->GetSpacing()[j];
    }
  }
  const Matrix<double, D, D> pointToIndex(indexToPoint.GetInverse());
  const auto                 region = geometry->GetBufferedRegion();
  for (unsigned int i = 0; i < D; ++i)
  {
    grid.size[i] = static_cast<std::int64_t>(region.GetSize(i));
    grid.start[i] = region.GetIndex(i);
    grid.origin[i] = geometry->GetOrigin()[i];
    for (unsigned int j = 0; j < D; ++j)
    {
      grid.pointToIndex[i][j] = pointToIndex[i][j];
    }
  }
  return true;
}
} // namespace CudaResampleDetail

template <typename TInputImage,
          typename TOutputImage,
          typename TInterpolatorPrecisionType,
          typename TTransformPrecisionType>
std::string
CudaResampleImageFilter<TInputImage, TOutputImage, TInterpolatorPrecisionType, TTransformPrecisionType>::
  GetGPUUnsupportedReason() const
{
  using namespace CudaResampleDetail;
  if ((ImageDimension != 2 && ImageDimension != 3) || TInputImage::ImageDimension != ImageDimension)
  {
    return "the GPU resamples 2D and 3D images only";
  }
  if (!GPUSupportsPixels<InputPixelType, OutputPixelType>)
  {
    return std::string("the GPU resamples images whose input and output pixels are the same type among unsigned "
                       "char, short, unsigned short, float and double (here ") +
           CudaPixelTypeName<InputPixelType>() + " to " + CudaPixelTypeName<OutputPixelType>() + ")";
  }
  double             A[3][3], b[3];
  cif::Interpolation rule;
  if (this->GetTransform() == nullptr ||
      (!AffineOf<TTransformPrecisionType, ImageDimension>(this->GetTransform(), A, b) &&
       DisplacementFieldOf<TTransformPrecisionType, ImageDimension>(this->GetTransform()) == nullptr &&
       CubicBSplineOf<TTransformPrecisionType, ImageDimension>(this->GetTransform()) == nullptr))
  {
    return std::string("the GPU evaluates affine, translation and identity transforms, displacement field transforms "
                       "(double precision, default vector linear interpolator) and third-order B-spline transforms "
                       "(double precision, coefficients set), not ") +
           (this->GetTransform() ? this->GetTransform()->GetNameOfClass() : "a missing transform");
  }
  if (this->GetInterpolator() == nullptr || !InterpolationOf(this->GetInterpolator(), rule))
  {
    return std::string("the GPU interpolates nearest neighbour, linear, cubic B-spline and Gaussian RBF "
                       "(CudaGaussianRBFInterpolateImageFunction), not ") +
           (this->GetInterpolator() ? this->GetInterpolator()->GetNameOfClass() : "a missing interpolator");
  }
  if (this->GetExtrapolator() != nullptr)
  {
    return "the GPU does not run extrapolators";
  }
  // last, so that the reasons above are reported in every build
  if (!cif::ResampleCUDAIsCompiled())
  {
    return "this build has no CUDA code";
  }
  return {};
}

template <typename TInputImage,
          typename TOutputImage,
          typename TInterpolatorPrecisionType,
          typename TTransformPrecisionType>
void
CudaResampleImageFilter<TInputImage, TOutputImage, TInterpolatorPrecisionType, TTransformPrecisionType>::
  GenerateInputRequestedRegion()
{
  if (this->GetInterpolator() == nullptr || !CudaResampleDetail::HasWholeImageCoefficients(this->GetInterpolator()))
  {
    Superclass::GenerateInputRequestedRegion(); // throws for a missing interpolator, as ITK does
    return;
  }
  if (auto * input = const_cast<TInputImage *>(this->GetInput()))
  {
    input->SetRequestedRegionToLargestPossibleRegion();
  }
}

template <typename TInputImage,
          typename TOutputImage,
          typename TInterpolatorPrecisionType,
          typename TTransformPrecisionType>
void
CudaResampleImageFilter<TInputImage, TOutputImage, TInterpolatorPrecisionType, TTransformPrecisionType>::GenerateData()
{
  this->CheckInputNotEmpty(this->GetInput());
  if (this->GetOutput()->GetRequestedRegion().GetNumberOfPixels() == 0)
  {
    itkExceptionMacro(<< "The output size is zero (" << this->GetOutput()->GetRequestedRegion().GetSize() << ")");
  }
  m_LastNumberOfChunks = 0;
  this->RunOnGPUOrCPU(
    this->GetGPUUnsupportedReason(),
    [this] { this->GPUGenerateData(); },
    [this] { Superclass::GenerateData(); },
    [this](CudaExecutionReport & report)
    {
      if (report.Device == CudaExecutedOn::GPU && m_LastNumberOfChunks > 0)
      {
        report.Message += " (in " + std::to_string(m_LastNumberOfChunks) +
                          " output chunks: the whole job did not fit the device memory" +
                          (m_EvaluationMode == CudaBSplineEvaluationMode::Fast
                             ? "; cubic evaluated in the accurate mode, which chunks need)"
                             : ")");
        itkWarningMacro(<< report.Message);
      }
    });
}

template <typename TInputImage,
          typename TOutputImage,
          typename TInterpolatorPrecisionType,
          typename TTransformPrecisionType>
void
CudaResampleImageFilter<TInputImage, TOutputImage, TInterpolatorPrecisionType, TTransformPrecisionType>::
  GPUGenerateData()
{
  using namespace CudaResampleDetail;
  if constexpr (GPUSupportsPixels<InputPixelType, OutputPixelType> && (ImageDimension == 2 || ImageDimension == 3) &&
                TInputImage::ImageDimension == ImageDimension)
  {
    constexpr unsigned int D = ImageDimension;
    const TInputImage *    input = this->GetInput();
    TOutputImage *         output = this->GetOutput();
    output->SetBufferedRegion(output->GetRequestedRegion());
    output->Allocate();

    double             A[3][3], b[3];
    cif::Interpolation rule = cif::Interpolation::Linear;
    // a grid transform (displacement field, B-spline): followed per output
    // pixel as ITK's non-linear path does; the affine map is then unused
    cif::TransformGrid  grid;
    std::vector<double> gridValues;
    const bool gridTransform = TransformGridOf<TTransformPrecisionType, D>(this->GetTransform(), grid, gridValues);
    AffineOf<TTransformPrecisionType, D>(gridTransform ? nullptr : this->GetTransform(), A, b);
    InterpolationOf(this->GetInterpolator(), rule);

    // output index -> output physical point -> (transform) -> input
    // continuous index, with ITK's inverse of the input's index-to-point matrix
    using MatrixType = Matrix<double, D, D>;
    MatrixType inIndexToPoint;
    for (unsigned int i = 0; i < D; ++i)
    {
      for (unsigned int j = 0; j < D; ++j)
      {
        inIndexToPoint[i][j] = input->GetDirection()[i][j] * input->GetSpacing()[j];
      }
    }
    const MatrixType  inPointToIndex(inIndexToPoint.GetInverse());
    const auto        outRegion = output->GetBufferedRegion();
    const auto        inRegion = input->GetBufferedRegion();
    cif::ResampleGrid inGrid, outGrid;
    outGrid.lineFirst = output->GetLargestPossibleRegion().GetIndex(0);
    outGrid.lineLength = static_cast<std::int64_t>(output->GetLargestPossibleRegion().GetSize(0));
    for (unsigned int i = 0; i < D; ++i)
    {
      inGrid.origin[i] = input->GetOrigin()[i];
      outGrid.origin[i] = output->GetOrigin()[i];
      inGrid.bufferStart[i] = inRegion.GetIndex(i);
      inGrid.bufferSize[i] = static_cast<std::int64_t>(inRegion.GetSize(i));
      outGrid.bufferStart[i] = outRegion.GetIndex(i);
      outGrid.bufferSize[i] = static_cast<std::int64_t>(outRegion.GetSize(i));
      for (unsigned int j = 0; j < D; ++j)
      {
        inGrid.indexToPoint[i][j] = inIndexToPoint[i][j];
        inGrid.pointToIndex[i][j] = inPointToIndex[i][j];
        outGrid.indexToPoint[i][j] = output->GetDirection()[i][j] * output->GetSpacing()[j];
      }
    }
    // ITK-exact coordinates: the same operations as ResampleImageFilter's
    // LinearThreadedGenerateData, so that points on the inside/outside
    // boundary decide as in ITK.
    cif::ResampleGeometry g = cif::ResampleGeometryFor(static_cast<int>(D), inGrid, outGrid, A, b);
    g.grid = grid;

    cif::DeviceBuffer gridBuffer;
    if (gridTransform)
    {
      gridBuffer.Allocate(gridValues.size() * sizeof(double));
      gridBuffer.CopyFromHost(gridValues.data(), gridBuffer.GetSize());
      g.grid.values = static_cast<const double *>(gridBuffer.GetPointer());
    }

    cif::ResampleParameters p;
    p.interpolation = rule;
    p.defaultValue = static_cast<double>(this->GetDefaultPixelValue());
    p.outputMin = static_cast<double>(NumericTraits<OutputPixelType>::NonpositiveMin());
    p.outputMax = static_cast<double>(NumericTraits<OutputPixelType>::max());

    using Coefficient = typename std::conditional<std::is_same<InputPixelType, double>::value, double, float>::type;
    const bool               cubic = rule == cif::Interpolation::CubicBSpline;
    cif::PrefilterGeometry   pg;
    cif::PrefilterParameters pp;
    for (unsigned int i = 0; i < D; ++i)
    {
      pg.imageSize[i] = pg.inputSize[i] = pg.outputSize[i] = g.inputSize[i];
    }
    pp.method = m_PrefilterMethod == CudaBSplinePrefilterMethod::FIR ? cif::PrefilterMethod::FIR
                                                                     : cif::PrefilterMethod::Recursive;
    pp.firHalfWidth = static_cast<int>(m_FIRHalfWidth);
    p.fastTexture =
      cubic && m_EvaluationMode == CudaBSplineEvaluationMode::Fast && std::is_same<Coefficient, float>::value;

    const std::size_t inputPixels = inRegion.GetNumberOfPixels();
    if (rule == cif::Interpolation::GaussianRBF)
    {
      this->GaussianRBFGenerateData(g, p);
      this->UpdateProgress(1.0f);
      return;
    }
    // the coefficients on the device, kept past an out-of-memory in the
    // resample so that the chunked path downloads them instead of
    // prefiltering again
    cif::DeviceBuffer coefficients;
    bool             coefficientsReady = false;
    try
    {
      // the whole job on the device; the output buffer comes last, so that a
      // CudaFilterImage output is untouched when the device is too small
      CudaInputBuffer<TInputImage> in(input);
      if (cubic)
      {
        coefficients.Allocate(inputPixels * sizeof(Coefficient));
        auto * c = static_cast<Coefficient *>(coefficients.GetPointer());
        cif::PrefilterCUDA(in.Get(), c, pg, pp);
        coefficientsReady = true;
        this->UpdateProgress(0.5f);
        CudaOutputBuffer<TOutputImage> out(output);
        cif::ResampleCUDA(static_cast<const Coefficient *>(c), out.Get(), g, p);
        out.Commit();
      }
      else
      {
        CudaOutputBuffer<TOutputImage> out(output);
        cif::ResampleCUDA(in.Get(), out.Get(), g, p);
        out.Commit();
      }
    }
    catch (const cif::CudaOutOfMemory &)
    {
      // It does not fit: resample in output chunks, each uploading only the
      // part of the input (or of the coefficients) that it reads.
      if (auto * onDevice = dynamic_cast<CudaFilterImage<OutputPixelType, D> *>(output))
      {
        onDevice->GetCudaFilterDataManager()->ReleaseDeviceMemory();
      }
      if (cubic)
      {
        // the GPU prefilter's result if it fitted, else the CPU core's (the
        // GPU prefilter needs the same memory as it did a moment ago)
        std::vector<Coefficient> hostCoefficients(inputPixels);
        if (coefficientsReady)
        {
          coefficients.CopyToHost(hostCoefficients.data(), coefficients.GetSize());
        }
        else
        {
          cif::PrefilterCPU(input->GetBufferPointer(),
                            hostCoefficients.data(),
                            pg,
                            pp,
                            static_cast<int>(MultiThreaderBase::GetGlobalDefaultNumberOfThreads()));
        }
        coefficients.Release();
        this->UpdateProgress(0.5f);
        m_LastNumberOfChunks = cif::ResampleCUDAInChunks(
          static_cast<const Coefficient *>(hostCoefficients.data()), output->GetBufferPointer(), g, p);
      }
      else
      {
        m_LastNumberOfChunks = cif::ResampleCUDAInChunks(input->GetBufferPointer(), output->GetBufferPointer(), g, p);
      }
    }
    this->UpdateProgress(1.0f);
  }
  else
  {
    itkExceptionMacro(<< "GPU path called for an unsupported request");
  }
}

template <typename TInputImage,
          typename TOutputImage,
          typename TInterpolatorPrecisionType,
          typename TTransformPrecisionType>
void
CudaResampleImageFilter<TInputImage, TOutputImage, TInterpolatorPrecisionType, TTransformPrecisionType>::
  GaussianRBFGenerateData(const cif::ResampleGeometry & g, cif::ResampleParameters p)
{
  using namespace CudaResampleDetail;
  if constexpr (GPUSupportsPixels<InputPixelType, OutputPixelType> && (ImageDimension == 2 || ImageDimension == 3) &&
                TInputImage::ImageDimension == ImageDimension)
  {
    using Interpolator = CudaGaussianRBFInterpolateImageFunction<TInputImage, TInterpolatorPrecisionType>;
    const auto *              interpolator = dynamic_cast<const Interpolator *>(this->GetInterpolator());
    const TInputImage *       input = this->GetInput();
    TOutputImage *            output = this->GetOutput();
    const cif::GrbfPointsPlan plan = interpolator->MakePlan(input); // throws for a bad sigma
    const std::size_t         inputPixels = input->GetBufferedRegion().GetNumberOfPixels();
    // the cardinal axes' inverse Gram matrices, then the coefficients (double)
    const cif::GrbfDeviceRule deviceRule = cif::MakeGrbfDeviceRule(plan);
    p.grbf = deviceRule.rule;
    cif::DeviceBuffer coefficients;
    bool             coefficientsReady = false;
    try
    {
      CudaInputBuffer<TInputImage> in(input);
      coefficients.Allocate(inputPixels * sizeof(double));
      cif::GrbfCoefficientsCUDA(in.Get(), static_cast<double *>(coefficients.GetPointer()), plan);
      coefficientsReady = true;
      this->UpdateProgress(0.5f);
      CudaOutputBuffer<TOutputImage> out(output);
      cif::ResampleCUDA(static_cast<const double *>(coefficients.GetPointer()), out.Get(), g, p);
      out.Commit();
    }
    catch (const cif::CudaOutOfMemory &)
    {
      // output chunks, each uploading the part of the coefficients it reads
      if (auto * onDevice = dynamic_cast<CudaFilterImage<OutputPixelType, ImageDimension> *>(output))
      {
        onDevice->GetCudaFilterDataManager()->ReleaseDeviceMemory();
      }
      std::vector<double> hostCoefficients(inputPixels);
      if (coefficientsReady)
      {
        coefficients.CopyToHost(hostCoefficients.data(), coefficients.GetSize());
      }
      else
      {
        cif::GrbfCoefficientsCPU(input->GetBufferPointer(),
                                 hostCoefficients.data(),
                                 plan,
                                 static_cast<int>(MultiThreaderBase::GetGlobalDefaultNumberOfThreads()));
      }
      coefficients.Release();
      m_LastNumberOfChunks = cif::ResampleCUDAInChunks(
        static_cast<const double *>(hostCoefficients.data()), output->GetBufferPointer(), g, p);
    }
  }
  else
  {
    itkExceptionMacro(<< "GPU path called for an unsupported request");
  }
}

template <typename TInputImage,
          typename TOutputImage,
          typename TInterpolatorPrecisionType,
          typename TTransformPrecisionType>
void
CudaResampleImageFilter<TInputImage, TOutputImage, TInterpolatorPrecisionType, TTransformPrecisionType>::PrintSelf(
  std::ostream & os,
  Indent         indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "PrefilterMethod: " << m_PrefilterMethod << '\n';
  os << indent << "FIRHalfWidth: " << m_FIRHalfWidth << '\n';
  os << indent << "EvaluationMode: " << m_EvaluationMode << '\n';
  os << indent << "LastNumberOfChunks: " << m_LastNumberOfChunks << '\n';
  this->PrintExecution(os, indent);
}

} // namespace itk

#endif
