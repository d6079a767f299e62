/*=========================================================================
 *  CudaImageFilters: the accuracy protocols of the resampling family, shared
 *  by benchmarks/ResampleAccuracy (which prints the README's tables) and the
 *  resample test (which asserts them, with margin).
 *
 *  1. Seed 001's protocol: a real 2D image rotated 36 times by 10 degrees
 *     about its centre, each time resampling the previous result; the RMS
 *     error against the original over the central disk (radius 0.45 of the
 *     smaller side, where no data leaves the grid), in grey levels.
 *  2. One cubic resample (a rotation plus a sub-pixel shift) against a
 *     float64 CPU reference (ITK's ResampleImageFilter with a double
 *     image, double coefficients and double evaluation): max and RMS error
 *     relative to the input range, in 2D and 3D.
 *=========================================================================*/
#ifndef itkCudaResampleAccuracyProtocol_h
#define itkCudaResampleAccuracyProtocol_h

#include "itkBSplineInterpolateImageFunction.h"
#include "itkCastImageFilter.h"
#include "itkCudaResampleImageFilter.h"
#include "itkEuler2DTransform.h"
#include "itkEuler3DTransform.h"
#include "itkImageRegionConstIterator.h"
#include "itkLinearInterpolateImageFunction.h"

#include <cmath>
#include <string>
#include <vector>

namespace cif_accuracy
{
using F2 = itk::Image<float, 2>;
using D2 = itk::Image<double, 2>;
using F3 = itk::Image<float, 3>;
using D3 = itk::Image<double, 3>;

constexpr double Pi = 3.14159265358979323846;

struct Method
{
  std::string name;
  bool        gpu;   // our filter on the GPU (skipped without one)
  bool        cubic; // else linear
  bool        fast;
  int         firK;      // -1: recursive prefilter
  bool        itkDouble; // ITK's CPU filter on a double image
};

inline std::vector<Method>
Methods()
{
  std::vector<Method> m;
  m.push_back({ "ITK CPU cubic (double)", false, true, false, -1, true });
  m.push_back({ "ours GPU cubic, exact IIR prefilter, accurate", true, true, false, -1, false });
  for (int k : { 3, 5, 7, 9, 13 })
  {
    m.push_back({ "ours GPU cubic, FIR K=" + std::to_string(k) + " (" + std::to_string(2 * k + 1) + " taps), accurate",
                  true,
                  true,
                  false,
                  k,
                  false });
  }
  m.push_back({ "ours GPU cubic, exact IIR prefilter, fast texture", true, true, true, -1, false });
  m.push_back({ "ours GPU linear", true, false, false, -1, false });
  m.push_back({ "ITK CPU linear (double)", false, false, false, -1, true });
  return m;
}

template <typename TImage, typename TTransform>
typename TImage::Pointer
ResampleOnce(const TImage * input, const TTransform * transform, const Method & m)
{
  using Filter = itk::CudaResampleImageFilter<TImage, TImage>;
  auto filter = Filter::New();
  filter->SetInput(input);
  filter->SetTransform(transform);
  filter->SetReferenceImage(input);
  filter->UseReferenceImageOn();
  filter->SetDefaultPixelValue(0);
  if (m.cubic)
  {
    auto interpolator = itk::BSplineInterpolateImageFunction<TImage, double, double>::New();
    interpolator->SetSplineOrder(3);
    filter->SetInterpolator(interpolator);
  }
  else
  {
    filter->SetInterpolator(itk::LinearInterpolateImageFunction<TImage, double>::New());
  }
  filter->SetExecutionMode(m.gpu ? itk::CudaExecutionMode::GPU : itk::CudaExecutionMode::CPU);
  filter->SetEvaluationMode(m.fast ? itk::CudaBSplineEvaluationMode::Fast : itk::CudaBSplineEvaluationMode::Accurate);
  if (m.firK >= 0)
  {
    filter->SetPrefilterMethod(itk::CudaBSplinePrefilterMethod::FIR);
    filter->SetFIRHalfWidth(static_cast<unsigned>(m.firK));
  }
  filter->Update();
  typename TImage::Pointer out = filter->GetOutput();
  out->DisconnectPipeline();
  return out;
}

template <typename TOut, typename TIn>
typename TOut::Pointer
Cast(const TIn * image)
{
  auto cast = itk::CastImageFilter<TIn, TOut>::New();
  cast->SetInput(image);
  cast->Update();
  typename TOut::Pointer out = cast->GetOutput();
  out->DisconnectPipeline();
  return out;
}

/** RMS difference over the central disk (2D) or ball (3D), and max difference there. */
template <typename TA, typename TB>
void
Compare(const TA * a, const TB * b, double & rms, double & maxAbs)
{
  constexpr unsigned int D = TA::ImageDimension;
  const auto             size = a->GetLargestPossibleRegion().GetSize();
  double                 radius = 1e300;
  for (unsigned int d = 0; d < D; ++d)
  {
    radius = std::min(radius, 0.45 * size[d]);
  }
  double      sum = 0;
  std::size_t count = 0;
  maxAbs = 0;
  itk::ImageRegionConstIterator<TB> jt(b, b->GetLargestPossibleRegion());
  for (itk::ImageRegionConstIterator<TA> it(a, a->GetLargestPossibleRegion()); !it.IsAtEnd(); ++it, ++jt)
  {
    double r2 = 0;
    for (unsigned int d = 0; d < D; ++d)
    {
      const double x = it.GetIndex()[d] - 0.5 * (size[d] - 1);
      r2 += x * x;
    }
    if (r2 > radius * radius)
    {
      continue;
    }
    const double diff = static_cast<double>(it.Get()) - static_cast<double>(jt.Get());
    sum += diff * diff;
    maxAbs = std::max(maxAbs, std::fabs(diff));
    ++count;
  }
  rms = std::sqrt(sum / std::max<std::size_t>(count, 1));
}

template <typename TImage>
double
Range(const TImage * image)
{
  double lo = 1e300, hi = -1e300;
  for (itk::ImageRegionConstIterator<TImage> it(image, image->GetLargestPossibleRegion()); !it.IsAtEnd(); ++it)
  {
    lo = std::min(lo, static_cast<double>(it.Get()));
    hi = std::max(hi, static_cast<double>(it.Get()));
  }
  return hi - lo;
}

/** The rotation of protocol 1: `degrees` about the image's centre. */
inline itk::Euler2DTransform<double>::Pointer
RotationAboutCentre(const F2 * image, double degrees)
{
  const auto                      size = image->GetLargestPossibleRegion().GetSize();
  itk::ContinuousIndex<double, 2> middle;
  middle[0] = 0.5 * (size[0] - 1);
  middle[1] = 0.5 * (size[1] - 1);
  F2::PointType centre;
  image->TransformContinuousIndexToPhysicalPoint(middle, centre);
  auto rotation = itk::Euler2DTransform<double>::New();
  rotation->SetCenter(centre);
  rotation->SetAngle(degrees * Pi / 180.0);
  return rotation;
}

/** Protocol 1 with method m: RMS and max error in grey levels. */
inline void
ThirtySixRotations(const F2 * original, const Method & m, double & rms, double & maxAbs)
{
  const auto rotation = RotationAboutCentre(original, 10.0);
  if (m.itkDouble)
  {
    const auto  originalD = Cast<D2>(original);
    D2::Pointer current = originalD;
    for (int step = 0; step < 36; ++step)
    {
      current = ResampleOnce<D2>(current.GetPointer(), rotation.GetPointer(), m);
    }
    Compare(current.GetPointer(), originalD.GetPointer(), rms, maxAbs);
  }
  else
  {
    F2::ConstPointer current = original;
    for (int step = 0; step < 36; ++step)
    {
      current = ResampleOnce<F2>(current.GetPointer(), rotation.GetPointer(), m).GetPointer();
    }
    Compare(current.GetPointer(), original, rms, maxAbs);
  }
}

/** Protocol 2: the float64 references of one 2D and one 3D resample. */
class SingleResample
{
public:
  SingleResample(const F2 * image, const F3 * volume)
    : m_Image(image)
    , m_Volume(volume)
  {
    const auto centre = RotationAboutCentre(image, 0.0)->GetCenter();
    m_Shifted = itk::Euler2DTransform<double>::New();
    m_Shifted->SetCenter(centre);
    m_Shifted->SetAngle(7.0 * Pi / 180.0);
    itk::Euler2DTransform<double>::OutputVectorType shift2;
    shift2[0] = 0.37;
    shift2[1] = -0.21;
    m_Shifted->SetTranslation(shift2);

    const auto                      size3 = volume->GetLargestPossibleRegion().GetSize();
    itk::ContinuousIndex<double, 3> middle3;
    for (unsigned int d = 0; d < 3; ++d)
    {
      middle3[d] = 0.5 * (size3[d] - 1);
    }
    F3::PointType centre3;
    volume->TransformContinuousIndexToPhysicalPoint(middle3, centre3);
    m_Euler = itk::Euler3DTransform<double>::New();
    m_Euler->SetCenter(centre3);
    m_Euler->SetRotation(0.05, -0.08, 0.12);
    itk::Euler3DTransform<double>::OutputVectorType shift3;
    shift3[0] = 0.37;
    shift3[1] = -0.21;
    shift3[2] = 0.44;
    m_Euler->SetTranslation(shift3);

    const Method reference{ "", false, true, false, -1, true };
    m_Reference2 = ResampleOnce<D2>(Cast<D2>(image).GetPointer(), m_Shifted.GetPointer(), reference);
    m_Reference3 = ResampleOnce<D3>(Cast<D3>(volume).GetPointer(), m_Euler.GetPointer(), reference);
    m_Range2 = Range(image);
    m_Range3 = Range(volume);
  }

  /** Max and RMS error of method m relative to the input range: 2D max, 2D RMS, 3D max, 3D RMS. */
  void
  Errors(const Method & m, double errors[4]) const
  {
    double rms, maxAbs;
    auto   out2 = ResampleOnce<F2>(m_Image, m_Shifted.GetPointer(), m);
    Compare(out2.GetPointer(), m_Reference2.GetPointer(), rms, maxAbs);
    errors[0] = maxAbs / m_Range2;
    errors[1] = rms / m_Range2;
    auto out3 = ResampleOnce<F3>(m_Volume, m_Euler.GetPointer(), m);
    Compare(out3.GetPointer(), m_Reference3.GetPointer(), rms, maxAbs);
    errors[2] = maxAbs / m_Range3;
    errors[3] = rms / m_Range3;
  }

private:
  const F2 *                             m_Image;
  const F3 *                             m_Volume;
  itk::Euler2DTransform<double>::Pointer m_Shifted;
  itk::Euler3DTransform<double>::Pointer m_Euler;
  D2::Pointer                            m_Reference2;
  D3::Pointer                            m_Reference3;
  double                                 m_Range2{ 0 }, m_Range3{ 0 };
};

} // namespace cif_accuracy

#endif
