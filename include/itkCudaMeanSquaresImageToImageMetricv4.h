/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaMeanSquaresImageToImageMetricv4_h
#define itkCudaMeanSquaresImageToImageMetricv4_h

#include "itkCudaImageToImageMetricv4Base.h"
#include "itkMeanSquaresImageToImageMetricv4.h"

namespace itk
{

/** \class CudaMeanSquaresImageToImageMetricv4
 * \brief itk::MeanSquaresImageToImageMetricv4 whose GetValue and
 * GetValueAndDerivative run on the GPU (or on the module's CPU core).
 *
 * A drop-in: the same template parameters, API and results as ITK's
 * metric; with the module's factory registered, ITK's
 * MeanSquaresImageToImageMetricv4<F, M>::New() returns this class (float
 * and double images, 2 and 3 dimensions), so ImageRegistrationMethodv4 and
 * ITK's registration examples use it unchanged.
 *
 * Computed: the mean of (f - m)^2 over the valid points of the dense
 * virtual domain, and its derivative, the mean of 2 (f - m) grad m . J
 * (ITK's ProcessPoint; per point and not averaged for a displacement
 * field, ITK's local-support path), where grad m is the linear interpolation of the
 * metric's moving gradient image and J the moving transform's Jacobian.
 * Devices, transforms, what stays with ITK's code and the accuracy (value
 * within 1e-5 relative, derivative within 1e-4 relative in norm of ITK's
 * metric in the tests) are those of CudaImageToImageMetricv4Base.
 *
 * \ingroup CudaImageFilters
 */
template <CIF_METRICV4_TEMPLATE_PARAMETERS>
class ITK_TEMPLATE_EXPORT CudaMeanSquaresImageToImageMetricv4
  : public CudaImageToImageMetricv4Base<MeanSquaresImageToImageMetricv4<CIF_METRICV4_TEMPLATE_ARGUMENTS>>
{
  CIF_METRICV4_CLASS_MEMBERS(CudaMeanSquaresImageToImageMetricv4, MeanSquaresImageToImageMetricv4);

  cif::MetricKind
  GetCoreMetricKind() const override
  {
    return cif::MetricKind::MeanSquares;
  }

  /** ITK's AfterThreadedExecution: the sums divided by the valid points. */
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
    value = moments.value / moments.count;
    if (derivative != nullptr)
    {
      contract(0, *derivative);
      if (!this->HasLocalSupport())
      {
        // ITK averages the derivative of global transforms only
        *derivative /= moments.count;
      }
    }
  }
};

} // namespace itk

#endif
