/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaGaussianRBFInterpolationImageFilter_hxx
#define itkCudaGaussianRBFInterpolationImageFilter_hxx

#include "itkCudaGaussianRBFInterpolationImageFilter.h"

#include "itkContinuousIndex.h"
#include "itkCudaGaussianRBFInterpolateImageFunction.h"
#include "itkCudaResampleImageFilter.h"
#include "itkIdentityTransform.h"
#include "itkNumericTraits.h"

#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace itk
{

namespace CudaGaussianRBFDetail
{
template <typename T>
constexpr bool CoreSupports = CudaIsOneOf<T, unsigned char, short, unsigned short, float, double>;
}

template <typename TInputImage, typename TOutputImage>
CudaGaussianRBFInterpolationImageFilter<TInputImage, TOutputImage>::CudaGaussianRBFInterpolationImageFilter()
{
  Self::AddOptionalInputName("ReferenceImage", 1);
  m_Sigma.Fill(0.0);
  m_ZoomFactors.Fill(0.0);
  m_Size.Fill(0);
  m_OutputSpacing.Fill(1.0);
  m_OutputOrigin.Fill(0.0);
  m_OutputDirection.SetIdentity();
  m_OutputStartIndex.Fill(0);
  // the seed's blocks: 62 x 62 sharing 4 nodes (its 120 x 120 example), 16 x 16 x 8 sharing one layer
  m_BlockSize.Fill(ImageDimension == 3 ? 16 : 62);
  m_BlockSize[ImageDimension - 1] = ImageDimension == 3 ? 8 : 62;
  m_BlockOverlap.Fill(ImageDimension == 3 ? 1 : 4);
}

template <typename TInputImage, typename TOutputImage>
std::string
CudaGaussianRBFInterpolationImageFilter<TInputImage, TOutputImage>::GetGPUUnsupportedReason() const
{
  if constexpr (!CudaGaussianRBFDetail::CoreSupports<OutputPixelType>)
  {
    return std::string("pixel type ") + CudaPixelTypeName<OutputPixelType>() +
           " (the GPU takes unsigned char, short, unsigned short, float and double)";
  }
  if (ImageDimension < 2 || ImageDimension > 3)
  {
    return "dimension " + std::to_string(ImageDimension) + " (the GPU takes 2D and 3D images)";
  }
  return {};
}

template <typename TInputImage, typename TOutputImage>
void
CudaGaussianRBFInterpolationImageFilter<TInputImage, TOutputImage>::GenerateOutputInformation()
{
  Superclass::GenerateOutputInformation(); // copies the input's information first
  const TInputImage * input = this->GetInput();
  TOutputImage *      output = this->GetOutput();
  if (input == nullptr || output == nullptr)
  {
    return;
  }
  bool zoom = false;
  for (unsigned int d = 0; d < ImageDimension; ++d)
  {
    zoom = zoom || m_ZoomFactors[d] != 0.0;
  }
  typename TOutputImage::RegionType region;
  if (zoom)
  {
    const auto & inRegion = input->GetLargestPossibleRegion();
    SpacingType  spacing;
    SizeType     size;
    PointType    origin;
    for (unsigned int d = 0; d < ImageDimension; ++d)
    {
      const double z = m_ZoomFactors[d];
      if (!(z > 0.0) || !std::isfinite(z))
      {
        itkExceptionMacro(<< "zoom factors must be positive and finite (axis " << d << ": " << z << ")");
      }
      const double n = static_cast<double>(inRegion.GetSize(d));
      size[d] = static_cast<SizeValueType>(std::max(1.0, std::round(n * z)));
      // the same field of view: n input pixels become size[d] output pixels
      spacing[d] = input->GetSpacing()[d] * n / static_cast<double>(size[d]);
    }
    // the first output pixel's centre, half an output pixel inside the input's first pixel's corner
    ContinuousIndex<double, ImageDimension> first;
    for (unsigned int d = 0; d < ImageDimension; ++d)
    {
      first[d] = static_cast<double>(inRegion.GetIndex(d)) - 0.5 + 0.5 * spacing[d] / input->GetSpacing()[d];
    }
    input->TransformContinuousIndexToPhysicalPoint(first, origin);
    output->SetSpacing(spacing);
    output->SetOrigin(origin);
    output->SetDirection(input->GetDirection());
    region.SetSize(size);
    IndexType start;
    start.Fill(0);
    region.SetIndex(start);
  }
  else if (m_UseReferenceImage && this->GetReferenceImage() != nullptr)
  {
    const ReferenceImageBaseType * reference = this->GetReferenceImage();
    output->SetSpacing(reference->GetSpacing());
    output->SetOrigin(reference->GetOrigin());
    output->SetDirection(reference->GetDirection());
    region = reference->GetLargestPossibleRegion();
  }
  else
  {
    output->SetSpacing(m_OutputSpacing);
    output->SetOrigin(m_OutputOrigin);
    output->SetDirection(m_OutputDirection);
    region.SetSize(m_Size);
    region.SetIndex(m_OutputStartIndex);
  }
  output->SetLargestPossibleRegion(region);
}

template <typename TInputImage, typename TOutputImage>
void
CudaGaussianRBFInterpolationImageFilter<TInputImage, TOutputImage>::GenerateInputRequestedRegion()
{
  // GRBF interpolation is global (its cardinal functions reach far): the whole input
  auto * input = const_cast<TInputImage *>(this->GetInput());
  if (input != nullptr)
  {
    input->SetRequestedRegionToLargestPossibleRegion();
  }
}

template <typename TInputImage, typename TOutputImage>
cif::GrbfGrid
CudaGaussianRBFInterpolationImageFilter<TInputImage, TOutputImage>::PrepareGrid() const
{
  const TInputImage *  input = this->GetInput();
  const TOutputImage * output = this->GetOutput();
  const auto &         inRegion = input->GetBufferedRegion();
  const auto &         outRegion = output->GetRequestedRegion();
  for (unsigned int d = 0; d < ImageDimension; ++d)
  {
    if (outRegion.GetSize(d) == 0)
    {
      itkExceptionMacro(<< "the output size is 0 along axis " << d << " (set Size, a reference image or zoom factors)");
    }
  }
  if (this->NeedsPointEvaluation())
  {
    itkExceptionMacro(<< "the separable methods need an output grid whose axes are parallel to the input's and no "
                      << "transform (output direction " << output->GetDirection() << ", input direction "
                      << input->GetDirection() << (m_Transform ? ", a transform" : "")
                      << "); the exact method evaluates such grids point by point, the block mode cannot");
  }
  const auto M = input->GetInverseDirection() * output->GetDirection();
  // the first requested output pixel, and one step along each axis, in input continuous indices
  PointType p0;
  output->TransformIndexToPhysicalPoint(outRegion.GetIndex(), p0);
  ContinuousIndex<double, ImageDimension> c0;
  input->TransformPhysicalPointToContinuousIndex(p0, c0);
  cif::GrbfGrid grid;
  grid.dimension = static_cast<int>(ImageDimension);
  grid.options = cif::GrbfOptions{ m_Tolerance, m_Ridge };
  for (unsigned int d = 0; d < ImageDimension; ++d)
  {
    grid.inputSize[d] = inRegion.GetSize(d);
    grid.outputSize[d] = outRegion.GetSize(d);
    grid.first[d] = c0[d] - static_cast<double>(inRegion.GetIndex(d));
    grid.step[d] = (M[d][d] > 0 ? 1.0 : -1.0) * output->GetSpacing()[d] / input->GetSpacing()[d];
    const double s = m_Sigma[d] == 0.0 ? input->GetSpacing()[d] : m_Sigma[d];
    if (!(s > 0.0) || !std::isfinite(s))
    {
      itkExceptionMacro(<< "sigma must be positive and finite (axis " << d << ": " << m_Sigma[d] << ")");
    }
    grid.sigma[d] = s / input->GetSpacing()[d];
  }
  return grid;
}

template <typename TInputImage, typename TOutputImage>
bool
CudaGaussianRBFInterpolationImageFilter<TInputImage, TOutputImage>::NeedsPointEvaluation() const
{
  if (m_Transform != nullptr &&
      dynamic_cast<const IdentityTransform<double, ImageDimension> *>(m_Transform.GetPointer()) == nullptr)
  {
    return true;
  }
  // output index -> input continuous index must be diagonal (axis-aligned grids)
  const auto   M = this->GetInput()->GetInverseDirection() * this->GetOutput()->GetDirection();
  const double tol = 1e-9;
  for (unsigned int i = 0; i < ImageDimension; ++i)
  {
    for (unsigned int j = 0; j < ImageDimension; ++j)
    {
      if ((i != j && std::abs(M[i][j]) > tol) || (i == j && std::abs(std::abs(M[i][j]) - 1.0) > tol))
      {
        return true;
      }
    }
  }
  return false;
}

template <typename TInputImage, typename TOutputImage>
void
CudaGaussianRBFInterpolationImageFilter<TInputImage, TOutputImage>::PointsGenerateData()
{
  if constexpr (ImageDimension <= 3)
  {
    using Resampler = CudaResampleImageFilter<TInputImage, TOutputImage, double, double>;
    using Interpolator = CudaGaussianRBFInterpolateImageFunction<TInputImage, double>;
    auto interpolator = Interpolator::New();
    interpolator->SetSigma(m_Sigma);
    interpolator->SetTolerance(m_Tolerance);
    interpolator->SetRidge(m_Ridge);
    interpolator->MakePlan(this->GetInput()); // a bad sigma throws here, before any device work

    auto input = TInputImage::New();
    input->Graft(this->GetInput());
    auto resampler = Resampler::New();
    resampler->SetInput(input);
    if (m_Transform != nullptr)
    {
      resampler->SetTransform(m_Transform);
    }
    else
    {
      resampler->SetTransform(IdentityTransform<double, ImageDimension>::New());
    }
    resampler->SetInterpolator(interpolator);
    resampler->SetOutputParametersFromImage(this->GetOutput());
    resampler->SetDefaultPixelValue(m_DefaultPixelValue);
    resampler->SetNumberOfWorkUnits(this->GetNumberOfWorkUnits());
    const std::string gpuReason = resampler->GetGPUUnsupportedReason();
    auto              run = [&](CudaExecutionMode mode)
    {
      resampler->SetExecutionMode(mode);
      resampler->UpdateOutputInformation();
      resampler->GetOutput()->SetRequestedRegion(this->GetOutput()->GetRequestedRegion());
      resampler->GetOutput()->PropagateRequestedRegion();
      resampler->GetOutput()->UpdateOutputData();
      this->GraftOutput(resampler->GetOutput());
    };
    this->RunOnGPUOrCPU(
      gpuReason,
      [&] { run(CudaExecutionMode::GPU); },
      [&] { run(CudaExecutionMode::CPU); },
      [&](CudaExecutionReport & report)
      {
        report.AddNote(std::string("evaluated point by point (") +
                       (m_Transform != nullptr ? m_Transform->GetNameOfClass() : "a rotated output grid") +
                       "), through CudaResampleImageFilter");
      });
  }
  else
  {
    itkExceptionMacro(<< "GRBF interpolation takes 1D to 3D images");
  }
}

template <typename TInputImage, typename TOutputImage>
cif::GrbfBlockJob
CudaGaussianRBFInterpolationImageFilter<TInputImage, TOutputImage>::MakeBlockJob() const
{
  const cif::GrbfGrid grid = this->PrepareGrid();
  cif::GrbfBlockJob   job;
  job.dimension = grid.dimension;
  for (unsigned int d = 0; d < ImageDimension; ++d)
  {
    job.inputSize[d] = grid.inputSize[d];
    job.outputSize[d] = grid.outputSize[d];
    job.first[d] = grid.first[d];
    job.step[d] = grid.step[d];
    job.sigma[d] = grid.sigma[d];
    job.blockSize[d] = static_cast<int>(std::min<unsigned int>(m_BlockSize[d], 1u << 20));
    job.overlap[d] = static_cast<int>(std::min<unsigned int>(m_BlockOverlap[d], 1u << 20));
  }
  job.doublePrecision = m_BlockDoublePrecision;
  job.defaultValue = static_cast<double>(m_DefaultPixelValue);
  if constexpr (std::is_integral<OutputPixelType>::value)
  {
    job.outputMin = static_cast<double>(NumericTraits<OutputPixelType>::NonpositiveMin());
    job.outputMax = static_cast<double>(NumericTraits<OutputPixelType>::max());
  }
  const std::string problem = cif::ValidateGrbfBlockJob(job);
  if (!problem.empty())
  {
    itkExceptionMacro(<< "block mode: " << problem);
  }
  return job;
}

template <typename TInputImage, typename TOutputImage>
void
CudaGaussianRBFInterpolationImageFilter<TInputImage, TOutputImage>::PrepareJob()
{
  const cif::GrbfGrid grid = this->PrepareGrid();
  if (m_Job.axis[0] != nullptr && grid == m_JobGrid)
  {
    return; // the same operators (and device plan) as the last update
  }
  try
  {
    m_Job = cif::MakeGrbfSeparableJob(grid);
  }
  catch (const std::exception & e)
  {
    itkExceptionMacro(<< e.what());
  }
  m_JobGrid = grid;
  m_DevicePlan.reset();
}

template <typename TInputImage, typename TOutputImage>
void
CudaGaussianRBFInterpolationImageFilter<TInputImage, TOutputImage>::GenerateData()
{
  this->CheckInputNotEmpty(this->GetInput());
  if constexpr (!CudaGaussianRBFDetail::CoreSupports<OutputPixelType> || ImageDimension > 3)
  {
    itkExceptionMacro(<< "pixel type " << CudaPixelTypeName<OutputPixelType>() << " in " << ImageDimension
                      << "D is not supported (scalar unsigned char, short, unsigned short, float or double; 1D to 3D)");
  }
  else
  {
    if (m_Method == CudaGaussianRBFMethod::Exact && this->NeedsPointEvaluation())
    {
      this->PointsGenerateData();
      return;
    }
    if (m_Method == CudaGaussianRBFMethod::Block)
    {
      const cif::GrbfBlockJob job = this->MakeBlockJob();
      this->RunOnGPUOrCPU(
        this->GetGPUUnsupportedReason(),
        [this, &job]
        {
          if constexpr (ImageDimension >= 2)
          {
            this->AllocateOutputs();
            CudaInputBuffer<TInputImage>   input(this->GetInput());
            CudaOutputBuffer<TOutputImage> output(this->GetOutput());
            cif::GrbfBlockCUDA<OutputPixelType>(input.Get(), output.Get(), job);
            output.Commit();
          }
        },
        [this, &job]
        {
          this->AllocateOutputs();
          const int threads = static_cast<int>(this->GetMultiThreader()->GetMaximumNumberOfThreads());
          cif::GrbfBlockCPU<OutputPixelType>(
            this->GetInput()->GetBufferPointer(), this->GetOutput()->GetBufferPointer(), job, threads);
        },
        [&job](CudaExecutionReport & report)
        { report.AddNote(std::string("the seed's block mode in ") + (job.doublePrecision ? "double" : "float32")); });
      return;
    }
    this->PrepareJob();
    m_Job.defaultValue = static_cast<double>(m_DefaultPixelValue);
    if constexpr (std::is_integral<OutputPixelType>::value)
    {
      m_Job.outputMin = static_cast<double>(NumericTraits<OutputPixelType>::NonpositiveMin());
      m_Job.outputMax = static_cast<double>(NumericTraits<OutputPixelType>::max());
    }
    this->RunOnGPUOrCPU(
      this->GetGPUUnsupportedReason(), [this] { this->GPUGenerateData(); }, [this] { this->CPUGenerateData(); });
  }
}

template <typename TInputImage, typename TOutputImage>
void
CudaGaussianRBFInterpolationImageFilter<TInputImage, TOutputImage>::GPUGenerateData()
{
  if constexpr (CudaGaussianRBFDetail::CoreSupports<OutputPixelType> && ImageDimension >= 2 && ImageDimension <= 3)
  {
    this->AllocateOutputs();
    if (!m_DevicePlan)
    {
      m_DevicePlan = cif::MakeGrbfDevicePlan(m_Job, std::is_same<OutputPixelType, double>::value);
    }
    CudaInputBuffer<TInputImage>   input(this->GetInput());
    CudaOutputBuffer<TOutputImage> output(this->GetOutput());
    cif::GrbfSeparableCUDA<OutputPixelType>(input.Get(), output.Get(), m_Job, m_DevicePlan.get());
    output.Commit();
  }
  else
  {
    itkExceptionMacro(<< "GPU path called for an unsupported request");
  }
}

template <typename TInputImage, typename TOutputImage>
void
CudaGaussianRBFInterpolationImageFilter<TInputImage, TOutputImage>::CPUGenerateData()
{
  if constexpr (CudaGaussianRBFDetail::CoreSupports<OutputPixelType> && ImageDimension <= 3)
  {
    this->AllocateOutputs();
    const int threads = static_cast<int>(this->GetMultiThreader()->GetMaximumNumberOfThreads());
    cif::GrbfSeparableCPU<OutputPixelType>(
      this->GetInput()->GetBufferPointer(), this->GetOutput()->GetBufferPointer(), m_Job, threads);
  }
  else
  {
    itkExceptionMacro(<< "unsupported request");
  }
}

template <typename TInputImage, typename TOutputImage>
void
CudaGaussianRBFInterpolationImageFilter<TInputImage, TOutputImage>::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "Sigma: " << m_Sigma << std::endl;
  os << indent << "Method: " << m_Method << std::endl;
  os << indent << "BlockSize: " << m_BlockSize << ", BlockOverlap: " << m_BlockOverlap
     << ", BlockDoublePrecision: " << m_BlockDoublePrecision << std::endl;
  os << indent << "Tolerance: " << m_Tolerance << std::endl;
  os << indent << "Ridge: " << m_Ridge << std::endl;
  os << indent << "ZoomFactors: " << m_ZoomFactors << std::endl;
  os << indent << "Size: " << m_Size << std::endl;
  os << indent << "OutputSpacing: " << m_OutputSpacing << std::endl;
  os << indent << "OutputOrigin: " << m_OutputOrigin << std::endl;
  os << indent << "UseReferenceImage: " << m_UseReferenceImage << std::endl;
  os << indent << "Transform: " << (m_Transform ? m_Transform->GetNameOfClass() : "(none: identity)") << std::endl;
  this->PrintExecution(os, indent);
}

} // namespace itk

#endif
