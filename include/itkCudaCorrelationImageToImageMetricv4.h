/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaCorrelationImageToImageMetricv4_h
#define itkCudaCorrelationImageToImageMetricv4_h

#include "itkCudaImageToImageMetricv4Base.h"
#include "itkCorrelationImageToImageMetricv4.h"

namespace itk
{

/** \class CudaCorrelationImageToImageMetricv4
 * \brief itk::CorrelationImageToImageMetricv4 whose GetValue and
 * GetValueAndDerivative run on the GPU (or on the module's CPU core).
 *
 * A drop-in: the same template parameters, API and results as ITK's
 * metric; with the module's factory registered, ITK's
 * CorrelationImageToImageMetricv4<F, M>::New() returns this class (float
 * and double images, 2 and 3 dimensions).
 *
 * Computed as ITK computes it, in two passes over the dense virtual domain:
 * the means of the fixed and moving values over the valid points (ITK's
 * helper threader), then with f1 = f - mean f and m1 = m - mean m the sums
 * fm, f2 = sum f1^2, m2 = sum m1^2, fdm = sum f1 grad m . J and mdm =
 * sum m1 grad m . J; value -fm^2 / (f2 m2), derivative
 * 2 fm / (f2 m2) (fdm - fm / m2 mdm); value 0 and a zero derivative when
 * f2 m2 is at most the machine epsilon, as in ITK. Devices, transforms,
 * what stays with ITK's code and the accuracy (value within 1e-5 relative,
 * derivative within 1e-4 relative in norm of ITK's metric in the tests)
 * are those of CudaImageToImageMetricv4Base.
 *
 * \ingroup CudaImageFilters
 */
template <CIF_METRICV4_TEMPLATE_PARAMETERS>
class ITK_TEMPLATE_EXPORT CudaCorrelationImageToImageMetricv4
  : public CudaImageToImageMetricv4Base<CorrelationImageToImageMetricv4<CIF_METRICV4_TEMPLATE_ARGUMENTS>>
{
  CIF_METRICV4_CLASS_MEMBERS(CudaCorrelationImageToImageMetricv4, CorrelationImageToImageMetricv4);

  cif::MetricKind
  GetCoreMetricKind() const override
  {
    return cif::MetricKind::Correlation;
  }

  /** ITK's AfterThreadedExecution of the correlation threader. */
  void
  ValueAndDerivativeFromMoments(const cif::MetricMoments & moments,
                                const MomentContraction &  contract,
                                MeasureType &              value,
                                DerivativeType *           derivative) const override
  {
    if (moments.count == 0)
    {
      this->ValueForNoValidPoints(value, derivative);
      return;
    }
    const double fm = moments.value;
    const double f2 = moments.fixedSquares;
    const double m2 = moments.movingSquares;
    value = 0.0;
    const double m2f2 = m2 * f2;
    if (m2f2 <= NumericTraits<double>::epsilon())
    {
      return;
    }
    value = -1.0 * fm * fm / m2f2;
    if (derivative != nullptr)
    {
      DerivativeType fdm(derivative->GetSize());
      DerivativeType mdm(derivative->GetSize());
      contract(0, fdm);
      contract(1, mdm);
      *derivative += 2.0 * fm / (f2 * m2) * (fdm - fm / m2 * mdm);
    }
  }
};

} // namespace itk

#endif
