/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaBSplineDecompositionImageFilter_hxx
#define itkCudaBSplineDecompositionImageFilter_hxx

#include "itkCudaBSplineDecompositionImageFilter.h"
#include "itkMultiThreaderBase.h"
#include <ostream>
#include <sstream>
#include <type_traits>

namespace itk
{

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
std::string
CudaBSplineDecompositionImageFilter<TInputImage, TOutputImage>::TwinName() const
{
  return CoreWritesThisPair ? "the module's CPU core" : "ITK's implementation";
}

template <typename TInputImage, typename TOutputImage>
void
CudaBSplineDecompositionImageFilter<TInputImage, TOutputImage>::TwinGenerateData()
{
  if constexpr (CoreWritesThisPair)
  {
    // the description's check, then its CPU core on this pixel pair
    const cif::Parameters parameters = this->CheckedParameters();
    this->AllocateOutputs();
    const cif::Job         job = this->RequestedJob(parameters);
    const cif::PrefilterGeometry   g = cif::PrefilterGeometryOf(job);
    const cif::PrefilterParameters core = cif::PrefilterParametersOf(parameters);
    this->CheckCoreJob(cif::ValidatePrefilterJob(g, core));
    cif::PrefilterCPU(this->GetInput()->GetBufferPointer(),
                      this->GetOutput()->GetBufferPointer(),
                      g,
                      core,
                      this->CoreThreads(),
                      job.progress);
  }
  else
  {
    if (m_Method == CudaBSplinePrefilterMethod::FIR)
    {
      itkExceptionMacro(<< "The FIR method handles 1 to 3 dimensions with float or double output");
    }
    Twin::GenerateData(); // ITK's own checks (its spline order is checked when set)
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
}

} // namespace itk

#endif
