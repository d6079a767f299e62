/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaDemonsRegistrationBase_hxx
#define itkCudaDemonsRegistrationBase_hxx

#include "itkCudaDemonsRegistrationBase.h"

#include "cif/Demons.h"
#include "itkCudaImageGeometry.h"
#include "itkLinearInterpolateImageFunction.h"
#include "itkMultiThreaderBase.h"

#include <memory>
#include <sstream>
#include <stdexcept>
#include <type_traits>
#include <typeinfo>
#include <vector>

namespace itk
{
namespace CudaDemonsDetail
{
/** Names DemonsRegistrationFunction's protected per-iteration sums, so
 * that the filter hands the core's sums to the function's own
 * ReleaseGlobalDataPointer (which computes ITK's metric and RMS change). */
template <typename TFunction>
struct FunctionAccess : public TFunction
{
  using GlobalData = typename TFunction::GlobalDataStruct;
};

/** The image's pixels as float: its own buffer for float images, else a
 * converted copy in `storage` (exact for the integer types taken). */
template <typename TImage>
const float *
AsFloat(const TImage * image, std::vector<float> & storage)
{
  using Pixel = typename TImage::PixelType;
  const Pixel * values = image->GetBufferPointer();
  if constexpr (std::is_same<Pixel, float>::value)
  {
    return values;
  }
  else
  {
    const std::size_t n = image->GetBufferedRegion().GetNumberOfPixels();
    storage.assign(values, values + n);
    return storage.data();
  }
}

template <typename TImage>
bool
SameGeometry(const TImage * a, const ImageBase<TImage::ImageDimension> * b)
{
  return a->GetOrigin() == b->GetOrigin() && a->GetSpacing() == b->GetSpacing() &&
         a->GetDirection() == b->GetDirection();
}
} // namespace CudaDemonsDetail

template <typename TITKFilter>
std::string
CudaDemonsRegistrationBase<TITKFilter>::GetCoreUnsupportedReason() const
{
  using FieldValue = typename DisplacementFieldType::PixelType::ValueType;
  using FixedPixel = typename FixedImageType::PixelType;
  using MovingPixel = typename MovingImageType::PixelType;
  if constexpr (ImageDimension != 2 && ImageDimension != 3)
  {
    return "images of dimension other than 2 and 3";
  }
  if constexpr (!std::is_same<FieldValue, float>::value)
  {
    return "a displacement field of " + std::string(CudaPixelTypeName<FieldValue>()) + " vectors (it takes float)";
  }
  if constexpr (!CudaIsOneOf<FixedPixel, unsigned char, short, unsigned short, float> ||
                !CudaIsOneOf<MovingPixel, unsigned char, short, unsigned short, float>)
  {
    return "fixed or moving pixels of other types than unsigned char, short, unsigned short and float";
  }
  // (GetMovingImageInterpolator is not const in ITK)
  auto * function =
    dynamic_cast<DemonsRegistrationFunctionType *>(const_cast<Self *>(this)->GetDifferenceFunction().GetPointer());
  if (function == nullptr || typeid(*function) != typeid(DemonsRegistrationFunctionType))
  {
    return std::string("a difference function other than ") + this->GetITKClassName() + "'s default";
  }
  using DefaultInterpolator = LinearInterpolateImageFunction<MovingImageType, double>;
  const auto * interpolator = function->GetMovingImageInterpolator();
  if (interpolator == nullptr || typeid(*interpolator) != typeid(DefaultInterpolator))
  {
    return "a moving image interpolator other than the default LinearInterpolateImageFunction";
  }
  const std::string variant = this->GetVariantUnsupportedReason(function);
  if (!variant.empty())
  {
    return variant;
  }
  if (this->GetManualReinitialization())
  {
    return "ManualReinitialization (iterations continued across updates)";
  }
  const FixedImageType * fixed = this->GetFixedImage();
  const auto *           output = this->GetOutput();
  // (known once the pipeline has propagated the regions: before an update
  // the output's requested region is still empty)
  const bool regionsKnown = output->GetRequestedRegion().GetNumberOfPixels() > 0;
  if (regionsKnown && fixed != nullptr && fixed->GetBufferedRegion() != output->GetRequestedRegion())
  {
    return "an output region other than the fixed image's buffered region";
  }
  const DisplacementFieldType * initial = this->GetInitialDisplacementField();
  if (initial != nullptr && fixed != nullptr &&
      ((regionsKnown && initial->GetBufferedRegion() != output->GetRequestedRegion()) ||
       !CudaDemonsDetail::SameGeometry(fixed, initial)))
  {
    return "an initial displacement field on another grid than the fixed image's";
  }
  return {};
}

template <typename TITKFilter>
void
CudaDemonsRegistrationBase<TITKFilter>::GenerateData()
{
  const FixedImageType *  fixed = this->GetFixedImage();
  const MovingImageType * moving = this->GetMovingImage();
  if (fixed == nullptr || moving == nullptr)
  {
    itkExceptionMacro(<< "Fixed and/or moving image not set");
  }
  this->CheckInputNotEmpty(fixed);
  this->CheckInputNotEmpty(moving);
  const std::string unsupported = this->GetCoreUnsupportedReason();
  bool              itkCode = false;
  this->RunOnGPUOrCPU(
    unsupported,
    [&] { this->RunCore(true); },
    [&]
    {
      if (unsupported.empty())
      {
        this->RunCore(false);
      }
      else
      {
        itkCode = true;
        Superclass::GenerateData();
      }
    },
    [&](CudaExecutionReport & report)
    {
      if (itkCode)
      {
        report.AddNote(std::string("ITK's own ") + this->GetITKClassName() +
                       " code ran (the module's cores do not take " + unsupported + ")");
      }
      else
      {
        std::ostringstream note;
        note << this->GetElapsedIterations() << " iterations";
        report.AddNote(note.str());
      }
    });
}

template <typename TITKFilter>
void
CudaDemonsRegistrationBase<TITKFilter>::RunCore(bool onGpu)
{
  if constexpr (kCoreTypes)
  {
    static_assert(sizeof(typename DisplacementFieldType::PixelType) == ImageDimension * sizeof(float),
                  "a field pixel is D contiguous floats");
    constexpr unsigned int  D = ImageDimension;
    const FixedImageType *  fixed = this->GetFixedImage();
    const MovingImageType * moving = this->GetMovingImage();
    auto * function = dynamic_cast<DemonsRegistrationFunctionType *>(this->GetDifferenceFunction().GetPointer());

    // ITK's preamble (FiniteDifferenceImageFilter::GenerateData)
    this->AllocateOutputs();
    DisplacementFieldType * output = this->GetOutput();
    const auto &            region = output->GetBufferedRegion();

    cif::DemonsJob job;
    job.dimension = static_cast<int>(D);
    typename FixedImageType::DirectionType indexToPoint;
    typename FixedImageType::DirectionType pointToIndex;
    CudaImageGeometry::IndexMatrices(fixed, indexToPoint, pointToIndex);
    CudaImageGeometry::DescribeImage(moving, job.moving);
    const auto movingInverseDirection = moving->GetInverseDirection();
    for (unsigned int a = 0; a < D; ++a)
    {
      job.size[a] = static_cast<std::int64_t>(region.GetSize(a));
      job.start[a] = region.GetIndex(a);
      job.origin[a] = fixed->GetOrigin()[a];
      job.spacing[a] = fixed->GetSpacing()[a];
      job.standardDeviations[a] = this->GetStandardDeviations()[a];
      job.updateStandardDeviations[a] = this->GetUpdateFieldStandardDeviations()[a];
      for (unsigned int b = 0; b < D; ++b)
      {
        job.indexToPoint[a][b] = indexToPoint[a][b];
        job.pointToIndex[a][b] = pointToIndex[a][b];
        job.direction[a][b] = fixed->GetDirection()[a][b];
        job.movingInverseDirection[a][b] = movingInverseDirection[a][b];
      }
      job.movingSpacing[a] = moving->GetSpacing()[a];
    }
    job.smoothField = this->GetSmoothDisplacementField();
    job.smoothUpdate = this->GetSmoothUpdateField();
    job.maximumError = this->GetMaximumError();
    job.maximumKernelWidth = this->GetMaximumKernelWidth();
    job.intensityDifferenceThreshold = function->GetIntensityDifferenceThreshold();
    this->DescribeVariant(job, function);
    this->CheckCoreJob(cif::ValidateDemonsJob(job));

    std::vector<float>            fixedStorage;
    std::vector<float>            movingStorage;
    const float *                 fixedValues = CudaDemonsDetail::AsFloat(fixed, fixedStorage);
    const float *                 movingValues = CudaDemonsDetail::AsFloat(moving, movingStorage);
    const DisplacementFieldType * initial = this->GetInitialDisplacementField();
    const float *                 initialValues =
      initial != nullptr ? reinterpret_cast<const float *>(initial->GetBufferPointer()) : nullptr;

    this->Initialize();
    this->SetElapsedIterations(0);
    std::unique_ptr<cif::DemonsSolver> solver;
    try
    {
      solver = onGpu ? cif::MakeDemonsSolverCUDA(job, fixedValues, movingValues, initialValues)
                     : cif::MakeDemonsSolverCPU(job,
                                                fixedValues,
                                                movingValues,
                                                initialValues,
                                                static_cast<int>(MultiThreaderBase::GetGlobalDefaultNumberOfThreads()));
    }
    catch (const std::invalid_argument & e)
    {
      this->CheckCoreJob(e.what());
    }

    using GlobalData = typename CudaDemonsDetail::FunctionAccess<DemonsRegistrationFunctionType>::GlobalData;
    while (!this->Halt())
    {
      // PDEDeformableRegistrationFilter::InitializeIteration, the smoothing
      // and the warps being the core's: the function's images and
      // per-iteration state
      function->SetFixedImage(fixed);
      function->SetMovingImage(moving);
      this->StartIteration(function);
      cif::DemonsSums sums;
      try
      {
        sums = solver->Iterate();
      }
      catch (const cif::CudaFailure &)
      {
        throw;
      }
      catch (const std::runtime_error & e)
      {
        itkExceptionMacro(<< e.what());
      }
      // ITK's own bookkeeping: the function's metric and RMS change, then
      // the filter's ApplyUpdate's
      auto * global = static_cast<GlobalData *>(function->GetGlobalDataPointer());
      global->m_SumOfSquaredDifference = sums.sumOfSquaredDifference;
      global->m_NumberOfPixelsProcessed = static_cast<SizeValueType>(sums.pixelsProcessed);
      global->m_SumOfSquaredChange = sums.sumOfSquaredChange;
      function->ReleaseGlobalDataPointer(global);
      this->SetRMSChange(function->GetRMSChange());
      this->SetElapsedIterations(this->GetElapsedIterations() + 1);

      this->InvokeEvent(IterationEvent());
      if (this->GetAbortGenerateData())
      {
        this->FinishIterations(function);
        this->InvokeEvent(IterationEvent());
        this->ResetPipeline();
        throw ProcessAborted(__FILE__, __LINE__);
      }
    }
    this->FinishIterations(function);
    solver->ReadField(reinterpret_cast<float *>(output->GetBufferPointer()));
    this->PostProcessOutput();
  }
  else
  {
    (void)onGpu;
  }
}

template <typename TITKFilter>
void
CudaDemonsRegistrationBase<TITKFilter>::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  this->PrintExecution(os, indent);
}

} // namespace itk

#endif
