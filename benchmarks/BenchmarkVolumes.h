/*=========================================================================
 *  CudaImageFilters: the registration benchmarks' volumes (ITK's example
 *  volume resampled onto an N^3 grid of the same extent).
 *=========================================================================*/
#ifndef BenchmarkVolumes_h
#define BenchmarkVolumes_h

#include "itkAffineTransform.h"
#include "itkCudaFactorylessTwin.h"
#include "itkImage.h"
#include "itkResampleImageFilter.h"
#include "itkTransform.h"

namespace cif_bench
{

/** `volume` through `transform` onto N^3 pixels covering its extent (its
 * origin and direction), linearly interpolated by ITK's own resampler. */
inline itk::Image<float, 3>::Pointer
ResampledVolume(const itk::Image<float, 3> * volume, unsigned int n, const itk::Transform<double, 3, 3> * transform)
{
  using F3 = itk::Image<float, 3>;
  auto resample = itk::CudaFactorylessTwin<itk::ResampleImageFilter<F3, F3>>::New();
  resample->SetInput(volume);
  resample->SetTransform(transform);
  F3::SizeType    size;
  F3::SpacingType spacing;
  for (unsigned int a = 0; a < 3; ++a)
  {
    size[a] = n;
    spacing[a] = volume->GetSpacing()[a] * volume->GetLargestPossibleRegion().GetSize()[a] / n;
  }
  resample->SetSize(size);
  resample->SetOutputSpacing(spacing);
  resample->SetOutputOrigin(volume->GetOrigin());
  resample->SetOutputDirection(volume->GetDirection());
  resample->Update();
  return resample->GetOutput();
}

/** The registration benchmarks' moving map: a small affine map (about 2%
 * scale and shear, a translation of (1.5, -2, 1) mm) about the volume's
 * centre. */
inline itk::AffineTransform<double, 3>::Pointer
BenchmarkAffineWarp(const itk::Image<float, 3> * volume)
{
  auto                            warp = itk::AffineTransform<double, 3>::New();
  itk::Point<double, 3>           center;
  itk::ContinuousIndex<double, 3> middle;
  for (unsigned int a = 0; a < 3; ++a)
  {
    middle[a] = 0.5 * (volume->GetLargestPossibleRegion().GetSize()[a] - 1);
  }
  volume->TransformContinuousIndexToPhysicalPoint(middle, center);
  warp->SetCenter(center);
  auto         p = warp->GetParameters();
  const double values[12] = { 1.02, 0.02, -0.01, -0.015, 0.99, 0.03, 0.01, -0.02, 1.01, 1.5, -2.0, 1.0 };
  for (unsigned int i = 0; i < 12; ++i)
  {
    p[i] = values[i];
  }
  warp->SetParameters(p);
  return warp;
}

} // namespace cif_bench

#endif
