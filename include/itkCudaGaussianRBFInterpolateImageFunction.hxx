/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaGaussianRBFInterpolateImageFunction_hxx
#define itkCudaGaussianRBFInterpolateImageFunction_hxx

#include "itkCudaGaussianRBFInterpolateImageFunction.h"
#include "itkImageRegionConstIterator.h"
#include "itkMultiThreaderBase.h"

#include <cmath>

namespace itk
{

template <typename TInputImage, typename TCoordRep>
CudaGaussianRBFInterpolateImageFunction<TInputImage, TCoordRep>::CudaGaussianRBFInterpolateImageFunction()
{
  m_Sigma.Fill(0.0);
}

template <typename TInputImage, typename TCoordRep>
cif::GrbfPointsPlan
CudaGaussianRBFInterpolateImageFunction<TInputImage, TCoordRep>::MakePlan(const TInputImage * image) const
{
  static_assert(ImageDimension >= 1, "GRBF needs at least one dimension");
  if constexpr (ImageDimension > 3)
  {
    itkExceptionMacro(<< "GRBF interpolation takes 1D to 3D images");
  }
  else
  {
    if (image == nullptr || image->GetBufferedRegion().GetNumberOfPixels() == 0)
    {
      itkExceptionMacro(<< "the input image is missing or empty");
    }
    std::int64_t size[3] = { 1, 1, 1 };
    double       sigma[3] = { 1, 1, 1 };
    for (unsigned int d = 0; d < ImageDimension; ++d)
    {
      size[d] = static_cast<std::int64_t>(image->GetBufferedRegion().GetSize(d));
      const double s = m_Sigma[d] == 0.0 ? image->GetSpacing()[d] : m_Sigma[d];
      if (!(s > 0.0) || !std::isfinite(s))
      {
        itkExceptionMacro(<< "sigma must be positive and finite (axis " << d << ": " << m_Sigma[d] << ")");
      }
      sigma[d] = s / image->GetSpacing()[d];
    }
    try
    {
      return cif::MakeGrbfPointsPlan(
        static_cast<int>(ImageDimension), size, sigma, cif::GrbfOptions{ m_Tolerance, m_Ridge });
    }
    catch (const std::exception & e)
    {
      itkExceptionMacro(<< e.what());
    }
  }
}

template <typename TInputImage, typename TCoordRep>
void
CudaGaussianRBFInterpolateImageFunction<TInputImage, TCoordRep>::SetInputImage(const TInputImage * image)
{
  Superclass::SetInputImage(image);
  m_Coefficients.clear();
  m_Rule = cif::GrbfPointsRule{};
  if (image == nullptr)
  {
    return;
  }
  m_Plan = this->MakePlan(image);
  const auto          region = image->GetBufferedRegion();
  std::vector<double> samples(region.GetNumberOfPixels());
  std::size_t         k = 0;
  for (ImageRegionConstIterator<TInputImage> it(image, region); !it.IsAtEnd(); ++it)
  {
    samples[k++] = static_cast<double>(it.Get());
  }
  m_Coefficients.resize(samples.size());
  cif::GrbfCoefficientsCPU<double>(samples.data(),
                                   m_Coefficients.data(),
                                   m_Plan,
                                   static_cast<int>(MultiThreaderBase::GetGlobalDefaultNumberOfThreads()));
  m_Rule = cif::GrbfHostRule(m_Plan);
}

template <typename TInputImage, typename TCoordRep>
auto
CudaGaussianRBFInterpolateImageFunction<TInputImage, TCoordRep>::EvaluateAtContinuousIndex(
  const ContinuousIndexType & index) const -> OutputType
{
  if (m_Coefficients.empty())
  {
    itkExceptionMacro(<< "no input image (SetInputImage)");
  }
  double     c[3] = { 0, 0, 0 };
  const auto start = this->GetInputImage()->GetBufferedRegion().GetIndex();
  for (unsigned int d = 0; d < ImageDimension && d < 3; ++d)
  {
    c[d] = static_cast<double>(index[d]) - static_cast<double>(start[d]);
  }
  return static_cast<OutputType>(cif::GrbfEvaluateCPU(m_Coefficients.data(), m_Rule, c));
}

template <typename TInputImage, typename TCoordRep>
auto
CudaGaussianRBFInterpolateImageFunction<TInputImage, TCoordRep>::GetRadius() const -> SizeType
{
  SizeType radius;
  for (unsigned int d = 0; d < ImageDimension; ++d)
  {
    radius[d] = d < 3 && m_Rule.dimension > 0 ? static_cast<SizeValueType>(m_Rule.Reach(static_cast<int>(d))) : 1;
  }
  return radius;
}

template <typename TInputImage, typename TCoordRep>
void
CudaGaussianRBFInterpolateImageFunction<TInputImage, TCoordRep>::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "Sigma: " << m_Sigma << std::endl;
  os << indent << "Tolerance: " << m_Tolerance << std::endl;
  os << indent << "Ridge: " << m_Ridge << std::endl;
  for (int a = 0; a < m_Plan.dimension && m_Rule.dimension > 0; ++a)
  {
    os << indent << "Axis " << a << ": " << (m_Plan.axis[a].cardinal ? "cardinal" : "coefficient") << ", radius "
       << m_Rule.Reach(a) - 1 << std::endl;
  }
}

} // namespace itk

#endif
