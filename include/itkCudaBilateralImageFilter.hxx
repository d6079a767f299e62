/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaBilateralImageFilter_hxx
#define itkCudaBilateralImageFilter_hxx

#include "itkCudaBilateralImageFilter.h"
#include "itkCudaSlabs.h"
#include "cif/Bilateral.h"
#include "itkMultiThreaderBase.h"
#include <algorithm>
#include <cmath>
#include <sstream>
#include <type_traits>

namespace itk
{

namespace CudaBilateralDetail
{
/** Pixel pairs the CPU core is instantiated for (src/core/bilateral/BilateralCPU.cxx). */
template <typename TIn, typename TOut>
constexpr bool CPUCoreSupports =
  CudaIsOneOf<TIn, signed char, unsigned char, short, unsigned short, int, unsigned int, float, double> &&
  (std::is_same<TIn, TOut>::value || CudaIsOneOf<TOut, float, double>);

/** Pixel pairs the GPU core is instantiated for (src/core/bilateral/Bilateral.cu). */
template <typename TIn, typename TOut>
constexpr bool GPUCoreSupports = (CudaIsOneOf<TIn, unsigned char, short, unsigned short, float> &&
                                  std::is_same<TIn, TOut>::value) ||
                                 (CudaIsOneOf<TIn, unsigned char, short, unsigned short> &&
                                  std::is_same<TOut, float>::value);

/** Largest radius per axis accepted before the tap count is checked. */
constexpr double MaxRadius = 1 << 20;
} // namespace CudaBilateralDetail

template <typename TInputImage, typename TOutputImage>
std::string
CudaBilateralImageFilter<TInputImage, TOutputImage>::ParameterProblems() const
{
  std::ostringstream why;
  const double       rangeSigma = this->GetRangeSigma();
  if (!(rangeSigma > 0.0) || !std::isfinite(rangeSigma))
  {
    why << "RangeSigma must be positive and finite, not " << rangeSigma;
    return why.str();
  }
  const auto domainSigma = this->GetDomainSigma();
  for (unsigned int i = 0; i < ImageDimension; ++i)
  {
    if (!(domainSigma[i] > 0.0) || !std::isfinite(domainSigma[i]))
    {
      why << "DomainSigma[" << i << "] must be positive and finite, not " << domainSigma[i];
      return why.str();
    }
  }
  if (this->GetAutomaticKernelSize())
  {
    const double mu = this->GetDomainMu();
    if (!(mu > 0.0) || !std::isfinite(mu))
    {
      why << "DomainMu must be positive and finite, not " << mu;
      return why.str();
    }
  }
  if (m_NumberOfIterations < 1)
  {
    return "NumberOfIterations must be at least 1";
  }
  if (this->GetNumberOfRangeGaussianSamples() < 1)
  {
    return "NumberOfRangeGaussianSamples must be at least 1";
  }
  return {};
}

template <typename TInputImage, typename TOutputImage>
auto
CudaBilateralImageFilter<TInputImage, TOutputImage>::GetKernelRadius() const -> SizeType
{
  const std::string problems = this->ParameterProblems();
  if (!problems.empty())
  {
    itkExceptionMacro(<< problems);
  }
  SizeType radius;
  if (!this->GetAutomaticKernelSize())
  {
    radius = this->GetRadius();
  }
  else
  {
    const TInputImage * input = this->GetInput();
    if (input == nullptr)
    {
      itkExceptionMacro(<< "The automatic kernel radius depends on the input's spacing: set the input first");
    }
    const auto spacing = input->GetSpacing();
    for (unsigned int i = 0; i < ImageDimension; ++i)
    {
      const double r = std::ceil(this->GetDomainMu() * this->GetDomainSigma()[i] / spacing[i]);
      if (!(spacing[i] > 0.0) || !(r <= CudaBilateralDetail::MaxRadius))
      {
        itkExceptionMacro(<< "The automatic kernel radius on axis " << i << " (DomainMu " << this->GetDomainMu()
                          << " x DomainSigma " << this->GetDomainSigma()[i] << " / spacing " << spacing[i]
                          << ") is not a usable size");
      }
      radius[i] = static_cast<typename SizeType::SizeValueType>(r);
    }
  }
  double taps = 1.0;
  for (unsigned int i = 0; i < ImageDimension; ++i)
  {
    taps *= 2.0 * static_cast<double>(radius[i]) + 1.0;
  }
  if (taps > static_cast<double>(cif::BilateralMaxTaps))
  {
    itkExceptionMacro(<< "The kernel radius " << radius << " gives " << taps << " taps, more than the "
                      << cif::BilateralMaxTaps << " the filter accepts");
  }
  return radius;
}

template <typename TInputImage, typename TOutputImage>
std::string
CudaBilateralImageFilter<TInputImage, TOutputImage>::GetCPUCoreUnsupportedReason() const
{
  std::ostringstream why;
  if (ImageDimension > 3)
  {
    why << "the module's core handles 1 to 3 dimensions, not " << ImageDimension;
  }
  else if (!CudaBilateralDetail::CPUCoreSupports<InputPixelType, OutputPixelType>)
  {
    why << "the module's core does not handle " << CudaPixelTypeName<InputPixelType>() << " -> "
        << CudaPixelTypeName<OutputPixelType>() << " pixels";
  }
  return why.str();
}

template <typename TInputImage, typename TOutputImage>
std::string
CudaBilateralImageFilter<TInputImage, TOutputImage>::GetGPUUnsupportedReason() const
{
  std::ostringstream why;
  if (!cif::BilateralCUDAIsCompiled())
  {
    why << "this build has no CUDA code";
  }
  else if (ImageDimension > 3)
  {
    why << "the GPU path handles 1 to 3 dimensions, not " << ImageDimension;
  }
  else if (!CudaBilateralDetail::GPUCoreSupports<InputPixelType, OutputPixelType>)
  {
    why << "the GPU path does not handle " << CudaPixelTypeName<InputPixelType>() << " -> "
        << CudaPixelTypeName<OutputPixelType>()
        << " pixels (it handles unsigned char, short, unsigned short and float to the same type, and the "
           "three integer types to float)";
  }
  return why.str();
}

template <typename TInputImage, typename TOutputImage>
void
CudaBilateralImageFilter<TInputImage, TOutputImage>::VerifyPreconditions() ITKv5_CONST
{
  Superclass::VerifyPreconditions();
  const std::string problems = this->ParameterProblems();
  if (!problems.empty())
  {
    itkExceptionMacro(<< problems);
  }
}

template <typename TInputImage, typename TOutputImage>
void
CudaBilateralImageFilter<TInputImage, TOutputImage>::GenerateInputRequestedRegion()
{
  auto * input = const_cast<TInputImage *>(this->GetInput());
  if (input == nullptr)
  {
    return;
  }
  if (input->GetLargestPossibleRegion().GetNumberOfPixels() == 0)
  {
    itkExceptionMacro(<< "The input image is empty (size " << input->GetLargestPossibleRegion().GetSize() << ")");
  }
  this->GetKernelRadius(); // throws for unusable parameters before ITK pads by the radius
  if (m_NumberOfIterations > 1)
  {
    ImageToImageFilter<TInputImage, TOutputImage>::GenerateInputRequestedRegion();
    input->SetRequestedRegionToLargestPossibleRegion();
    return;
  }
  Superclass::GenerateInputRequestedRegion();
}

template <typename TInputImage, typename TOutputImage>
void
CudaBilateralImageFilter<TInputImage, TOutputImage>::EnlargeOutputRequestedRegion(DataObject * output)
{
  Superclass::EnlargeOutputRequestedRegion(output);
  if (m_NumberOfIterations > 1 && output != nullptr)
  {
    output->SetRequestedRegionToLargestPossibleRegion(); // each iteration needs the previous one everywhere
  }
}

template <typename TInputImage, typename TOutputImage>
void
CudaBilateralImageFilter<TInputImage, TOutputImage>::GenerateData()
{
  const TInputImage * input = this->GetInput();
  this->CheckInputNotEmpty(input);
  const std::string problems = this->ParameterProblems();
  if (!problems.empty())
  {
    itkExceptionMacro(<< problems);
  }
  TOutputImage * output = this->GetOutput();
  output->SetBufferedRegion(output->GetRequestedRegion());
  output->Allocate();

  m_LastNote.clear();
  this->RunOnGPUOrCPU(
    this->GetGPUUnsupportedReason(),
    [this] { this->GPUGenerateData(); },
    [this]
    {
      if (this->GetCPUCoreUnsupportedReason().empty())
      {
        this->CPUGenerateData();
      }
      else
      {
        this->ITKGenerateData();
      }
    },
    [this](CudaExecutionReport & report) { report.AddNote(m_LastNote); });
}

namespace CudaBilateralDetail
{
template <typename TFilter>
cif::ClampedNeighborhoodGeometry
MakeGeometry(const TFilter * filter)
{
  constexpr unsigned int           D = TFilter::ImageDimension;
  const auto                       in = filter->GetInput()->GetBufferedRegion();
  const auto                       out = filter->GetOutput()->GetBufferedRegion();
  cif::ClampedNeighborhoodGeometry g;
  for (unsigned int a = 0; a < D && a < 3; ++a)
  {
    g.inputSize[a] = static_cast<std::int64_t>(in.GetSize(a));
    g.outputStart[a] = out.GetIndex(a) - in.GetIndex(a);
    g.outputSize[a] = static_cast<std::int64_t>(out.GetSize(a));
  }
  return g;
}

template <typename TFilter>
cif::BilateralParameters
MakeParameters(const TFilter * filter)
{
  constexpr unsigned int   D = TFilter::ImageDimension;
  cif::BilateralParameters p;
  const auto               radius = filter->GetKernelRadius();
  const auto               spacing = filter->GetInput()->GetSpacing();
  const auto               sigma = filter->GetDomainSigma();
  double                   s[3] = { 1.0, 1.0, 1.0 }, h[3] = { 1.0, 1.0, 1.0 };
  for (unsigned int a = 0; a < 3; ++a)
  {
    p.radius[a] = a < D ? static_cast<int>(radius[a]) : 0;
    if (a < D)
    {
      s[a] = sigma[a];
      h[a] = spacing[a];
    }
  }
  p.domainWeights = cif::BilateralDomainWeights(p.radius, s, h);
  p.rangeSigma = filter->GetRangeSigma();
  p.rangeCutoff = TFilter::RangeCutoffInSigmas * p.rangeSigma;
  p.iterations = static_cast<int>(filter->GetNumberOfIterations());
  return p;
}
} // namespace CudaBilateralDetail

template <typename TInputImage, typename TOutputImage>
void
CudaBilateralImageFilter<TInputImage, TOutputImage>::GPUGenerateData()
{
  using namespace CudaBilateralDetail;
  if constexpr (GPUCoreSupports<InputPixelType, OutputPixelType> && ImageDimension <= 3)
  {
    const auto geometry = MakeGeometry(this);
    const auto parameters = MakeParameters(this);
    this->CheckCoreJob(cif::ValidateBilateralJob(geometry, parameters));
    // slabs: the halo grows with the iterations, and an iterated kernel
    // filters its whole slab (the intermediate, one temporary of the output
    // type), of which the slab's own planes are kept
    const std::int64_t it = parameters.iterations;
    this->SetLastSlabs(CudaRunNeighbourhoodJob(
      this->GetInput(),
      this->GetOutput(),
      geometry,
      { parameters.radius[0] * it, parameters.radius[1] * it, parameters.radius[2] * it },
      it > 1,
      it > 1 ? sizeof(OutputPixelType) : 0,
      [&](const InputPixelType * in, OutputPixelType * out, const cif::ClampedNeighborhoodGeometry & job)
      { m_LastNote = cif::BilateralCUDA(in, out, job, parameters); },
      [this](double f) { this->UpdateProgress(static_cast<float>(f)); }));
    this->UpdateProgress(1.0f);
  }
  else
  {
    itkExceptionMacro(<< "GPU path called for an unsupported request");
  }
}

template <typename TInputImage, typename TOutputImage>
void
CudaBilateralImageFilter<TInputImage, TOutputImage>::CPUGenerateData()
{
  using namespace CudaBilateralDetail;
  if constexpr (CPUCoreSupports<InputPixelType, OutputPixelType> && ImageDimension <= 3)
  {
    const auto geometry = MakeGeometry(this);
    const auto parameters = MakeParameters(this);
    this->CheckCoreJob(cif::ValidateBilateralJob(geometry, parameters));
    const int threads = static_cast<int>(this->GetMultiThreader()->GetMaximumNumberOfThreads());
    cif::BilateralCPU(this->GetInput()->GetBufferPointer(),
                      this->GetOutput()->GetBufferPointer(),
                      geometry,
                      parameters,
                      threads,
                      [this](double f) { this->UpdateProgress(static_cast<float>(f)); });
    m_LastNote = "the module's CPU core (exact range Gaussian)";
  }
  else
  {
    itkExceptionMacro(<< "CPU core called for an unsupported request");
  }
}

template <typename TInputImage, typename TOutputImage>
void
CudaBilateralImageFilter<TInputImage, TOutputImage>::ITKGenerateData()
{
  // First iteration: ITK's own algorithm into this filter's output.
  Superclass::GenerateData();
  // Further iterations: ITK's filter on the previous result.
  for (unsigned int i = 1; i < m_NumberOfIterations; ++i)
  {
    auto previous = TOutputImage::New();
    previous->Graft(this->GetOutput());
    using Inner = BilateralImageFilter<TOutputImage, TOutputImage>;
    auto inner = Inner::New();
    inner->SetInput(previous);
    inner->SetDomainSigma(this->GetDomainSigma());
    inner->SetDomainMu(this->GetDomainMu());
    inner->SetRangeSigma(this->GetRangeSigma());
    inner->SetAutomaticKernelSize(this->GetAutomaticKernelSize());
    inner->SetRadius(this->GetRadius());
    inner->SetNumberOfRangeGaussianSamples(this->GetNumberOfRangeGaussianSamples());
    inner->SetNumberOfWorkUnits(this->GetNumberOfWorkUnits());
    inner->Update();
    const auto * source = inner->GetOutput()->GetBufferPointer();
    std::copy(source,
              source + this->GetOutput()->GetBufferedRegion().GetNumberOfPixels(),
              this->GetOutput()->GetBufferPointer());
  }
  m_LastNote = "ITK's BilateralImageFilter (range lookup table of " +
               std::to_string(this->GetNumberOfRangeGaussianSamples()) + " samples), because " +
               this->GetCPUCoreUnsupportedReason();
}

template <typename TInputImage, typename TOutputImage>
void
CudaBilateralImageFilter<TInputImage, TOutputImage>::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "NumberOfIterations: " << m_NumberOfIterations << '\n';
  this->PrintExecution(os, indent);
}

} // namespace itk

#endif
