/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaBSplineDecompositionImageFilter_hxx
#define itkCudaBSplineDecompositionImageFilter_hxx

#include "itkCudaBSplineDecompositionImageFilter.h"
#include "itkCudaSlabs.h"
#include "cif/BSplinePrefilter.h"
#include "itkMultiThreaderBase.h"
#include <ostream>
#include <sstream>
#include <type_traits>

namespace itk
{

namespace CudaBSplinePrefilterDetail
{
/** Pixel types the CPU core is instantiated for (src/core/bspline_prefilter/BSplinePrefilterCPU.cxx). */
template <typename TIn, typename TOut>
constexpr bool CPUCoreSupports =
  CudaIsOneOf<TIn, unsigned char, signed char, short, unsigned short, int, unsigned int, float, double> &&
    CudaIsOneOf<TOut, float, double>;

/** Pixel types the GPU core is instantiated for (src/core/bspline_prefilter/BSplinePrefilter.cu). */
template <typename TIn, typename TOut>
constexpr bool                                                             GPUCoreSupports =
  CudaIsOneOf<TIn, unsigned char, short, unsigned short, float, double> && CudaIsOneOf<TOut, float, double>;
} // namespace CudaBSplinePrefilterDetail

template <typename TInputImage, typename TOutputImage>
void
CudaBSplineDecompositionImageFilter<TInputImage, TOutputImage>::SetFIRHalfWidth(unsigned int halfWidth)
{
  if (halfWidth > static_cast<unsigned int>(cif::MaxFIRHalfWidth))
  {
    itkExceptionMacro(<< "FIR half-width " << halfWidth << " is larger than the supported " << cif::MaxFIRHalfWidth);
  }
  if (m_FIRHalfWidthFromTolerance || halfWidth != m_FIRHalfWidth)
  {
    m_FIRHalfWidth = halfWidth;
    m_FIRHalfWidthFromTolerance = false;
    this->Modified();
  }
}

template <typename TInputImage, typename TOutputImage>
void
CudaBSplineDecompositionImageFilter<TInputImage, TOutputImage>::SetFIRTolerance(double tolerance)
{
  if (!(tolerance > 0.0) || !(tolerance < 1.0))
  {
    itkExceptionMacro(<< "FIR tolerance must lie in (0, 1), got " << tolerance);
  }
  if (!m_FIRHalfWidthFromTolerance || tolerance != m_FIRTolerance)
  {
    m_FIRTolerance = tolerance;
    m_FIRHalfWidthFromTolerance = true;
    this->Modified();
  }
}

template <typename TInputImage, typename TOutputImage>
unsigned int
CudaBSplineDecompositionImageFilter<TInputImage, TOutputImage>::GetFIRHalfWidth() const
{
  return m_FIRHalfWidthFromTolerance ? static_cast<unsigned int>(cif::CubicFIRHalfWidthForTolerance(m_FIRTolerance))
                                     : m_FIRHalfWidth;
}

template <typename TInputImage, typename TOutputImage>
std::string
CudaBSplineDecompositionImageFilter<TInputImage, TOutputImage>::GetGPUUnsupportedReason() const
{
  std::ostringstream why;
  if (!cif::PrefilterCUDAIsCompiled())
  {
    why << "this build has no CUDA code";
  }
  else if (ImageDimension > 3)
  {
    why << "the GPU path handles 1 to 3 dimensions, not " << ImageDimension;
  }
  else if (this->GetSplineOrder() != 3)
  {
    why << "the GPU path handles spline order 3 only, not " << this->GetSplineOrder();
  }
  else if (!CudaBSplinePrefilterDetail::GPUCoreSupports<InputPixelType, OutputPixelType>)
  {
    why << "the GPU path does not handle input pixels of type " << CudaPixelTypeName<InputPixelType>()
        << " with output pixels of type " << CudaPixelTypeName<OutputPixelType>()
        << " (it handles unsigned char, short, unsigned short, float or double in, float or double out)";
  }
  return why.str();
}

template <typename TInputImage, typename TOutputImage>
void
CudaBSplineDecompositionImageFilter<TInputImage, TOutputImage>::GenerateInputRequestedRegion()
{
  if (m_Method == CudaBSplinePrefilterMethod::Recursive)
  {
    Superclass::GenerateInputRequestedRegion(); // the whole image
    return;
  }
  // FIR: the output requested region grown by K on every axis.
  auto * input = const_cast<TInputImage *>(this->GetInput());
  if (input == nullptr)
  {
    return;
  }
  typename TInputImage::RegionType region = this->GetOutput()->GetRequestedRegion();
  region.PadByRadius(static_cast<typename TInputImage::SizeValueType>(this->GetFIRHalfWidth()));
  region.Crop(input->GetLargestPossibleRegion());
  input->SetRequestedRegion(region);
}

template <typename TInputImage, typename TOutputImage>
void
CudaBSplineDecompositionImageFilter<TInputImage, TOutputImage>::EnlargeOutputRequestedRegion(DataObject * output)
{
  if (m_Method == CudaBSplinePrefilterMethod::Recursive)
  {
    Superclass::EnlargeOutputRequestedRegion(output);
  }
}

template <typename TInputImage, typename TOutputImage>
void
CudaBSplineDecompositionImageFilter<TInputImage, TOutputImage>::GenerateData()
{
  using namespace CudaBSplinePrefilterDetail;
  const TInputImage * input = this->GetInput();
  this->CheckInputNotEmpty(input);
  TOutputImage * output = this->GetOutput();
  output->SetBufferedRegion(output->GetRequestedRegion());
  output->Allocate();

  if (m_Method == CudaBSplinePrefilterMethod::FIR)
  {
    if (this->GetSplineOrder() != 3)
    {
      itkExceptionMacro(<< "The FIR method is defined for cubic splines only; spline order is "
                        << this->GetSplineOrder());
    }
    if (ImageDimension > 3 || !CPUCoreSupports<InputPixelType, OutputPixelType>)
    {
      itkExceptionMacro(<< "The FIR method handles 1 to 3 dimensions with float or double output");
    }
  }

  this->RunOnGPUOrCPU(
    this->GetGPUUnsupportedReason(), [this] { this->GPUGenerateData(); }, [this] { this->CPUGenerateData(); });
}

namespace CudaBSplinePrefilterDetail
{
template <typename TFilter>
cif::PrefilterGeometry
MakeGeometry(const TFilter * filter)
{
  constexpr unsigned int D = TFilter::ImageDimension;
  const auto *           input = filter->GetInput();
  const auto *           output = filter->GetOutput();
  const auto             whole = input->GetLargestPossibleRegion();
  const auto             in = input->GetBufferedRegion();
  const auto             out = output->GetBufferedRegion();
  cif::PrefilterGeometry g;
  for (unsigned int a = 0; a < D && a < 3; ++a)
  {
    g.imageSize[a] = static_cast<std::int64_t>(whole.GetSize(a));
    g.inputStart[a] = in.GetIndex(a) - whole.GetIndex(a);
    g.inputSize[a] = static_cast<std::int64_t>(in.GetSize(a));
    g.outputStart[a] = out.GetIndex(a) - whole.GetIndex(a);
    g.outputSize[a] = static_cast<std::int64_t>(out.GetSize(a));
  }
  return g;
}

template <typename TFilter>
cif::PrefilterParameters
MakeParameters(const TFilter * filter)
{
  cif::PrefilterParameters p;
  p.method = filter->GetMethod() == CudaBSplinePrefilterMethod::FIR ? cif::PrefilterMethod::FIR
                                                                    : cif::PrefilterMethod::Recursive;
  p.poles = filter->GetSplinePoles();
  p.tolerance = 1e-10; // ITK's fixed tolerance for the causal initialisation
  p.firHalfWidth = static_cast<int>(filter->GetFIRHalfWidth());
  return p;
}
} // namespace CudaBSplinePrefilterDetail

template <typename TInputImage, typename TOutputImage>
void
CudaBSplineDecompositionImageFilter<TInputImage, TOutputImage>::GPUGenerateData()
{
  using namespace CudaBSplinePrefilterDetail;
  if constexpr (GPUCoreSupports<InputPixelType, OutputPixelType> && ImageDimension <= 3)
  {
    const auto geometry = MakeGeometry(this);
    const auto parameters = MakeParameters(this);
    this->CheckCoreJob(cif::ValidatePrefilterJob(geometry, parameters));
    auto whole = [&]
    {
      CudaInputBuffer<TInputImage>   input(this->GetInput());
      CudaOutputBuffer<TOutputImage> output(this->GetOutput());
      cif::PrefilterCUDA(input.Get(),
                         output.Get(),
                         geometry,
                         parameters,
                         [this](double f) { this->UpdateProgress(static_cast<float>(f)); });
      output.Commit();
    };
    // a host image larger than the device runs in exact slabs (FIR: a halo
    // of K planes; recursive: two passes, see cif::RunPrefilterJobCUDA)
    this->SetLastSlabs(cif::RunPrefilterJobCUDA<InputPixelType, OutputPixelType>(
      CudaHostImages(this->GetInput(), this->GetOutput()),
      [this] { return this->GetInput()->GetBufferPointer(); },
      [this] { return this->GetOutput()->GetBufferPointer(); },
      geometry,
      parameters,
      whole,
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
CudaBSplineDecompositionImageFilter<TInputImage, TOutputImage>::CPUGenerateData()
{
  using namespace CudaBSplinePrefilterDetail;
  if constexpr (CPUCoreSupports<InputPixelType, OutputPixelType> && ImageDimension <= 3)
  {
    const auto geometry = MakeGeometry(this);
    const auto parameters = MakeParameters(this);
    this->CheckCoreJob(cif::ValidatePrefilterJob(geometry, parameters));
    const int threads = static_cast<int>(this->GetMultiThreader()->GetMaximumNumberOfThreads());
    cif::PrefilterCPU(this->GetInput()->GetBufferPointer(),
                      this->GetOutput()->GetBufferPointer(),
                      geometry,
                      parameters,
                      threads,
                      [this](double f) { this->UpdateProgress(static_cast<float>(f)); });
  }
  else
  {
    // Dimensions or pixel types outside the core: ITK's own implementation.
    Superclass::GenerateData();
  }
}

template <typename TInputImage, typename TOutputImage>
void
CudaBSplineDecompositionImageFilter<TInputImage, TOutputImage>::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "Method: " << m_Method << '\n';
  os << indent << "FIRTolerance: " << m_FIRTolerance << '\n';
  os << indent << "FIRHalfWidth: " << this->GetFIRHalfWidth()
     << (m_FIRHalfWidthFromTolerance ? " (from the tolerance)" : " (set)") << '\n';
  this->PrintExecution(os, indent);
}

} // namespace itk

#endif
