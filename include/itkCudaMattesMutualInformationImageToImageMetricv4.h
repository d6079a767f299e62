/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaMattesMutualInformationImageToImageMetricv4_h
#define itkCudaMattesMutualInformationImageToImageMetricv4_h

#include <string>

#include "itkCudaImageToImageMetricv4Base.h"
#include "itkMattesMutualInformationImageToImageMetricv4.h"

namespace itk
{

/** \class CudaMattesMutualInformationImageToImageMetricv4
 * \brief itk::MattesMutualInformationImageToImageMetricv4 whose GetValue and
 * GetValueAndDerivative run on the GPU (or on the module's CPU core), for
 * transforms without local support.
 *
 * A drop-in: the same template parameters, API and results as ITK's
 * metric; with the module's factory registered, ITK's
 * MattesMutualInformationImageToImageMetricv4<F, M>::New() returns this
 * class (float and double images, 2 and 3 dimensions).
 *
 * Computed as ITK computes it over the dense virtual domain: ITK's
 * Initialize sets up the histogram (its bins, padded by two, and the
 * images' intensity ranges); a first pass adds every valid point whose
 * moving value lies in the moving range into the joint PDF (ITK's
 * zero-order Parzen window on the fixed value, its cubic B-spline over
 * four moving bins) and the fixed marginal; ITK's ComputeResults then
 * gives the value -sum p log(p / (p_f p_m)) and the ratios log(p / p_m);
 * a second pass sums each point's derivative term, the ratios of its four
 * bins times the cubic B-spline's derivative, times grad m . J, scaled by
 * -1 / (moving bin size x valid points). ITK's exceptions when no point is
 * valid or the joint PDF sums to zero. Devices, transforms, what stays
 * with ITK's code and the accuracy (value within 1e-5 relative, derivative
 * within 1e-4 relative in norm of ITK's metric in the tests) are those of
 * CudaImageToImageMetricv4Base; on the GPU the joint PDF is added in fixed
 * point (64-bit integers, a resolution of 2^-38 up to 2^24 points, 2^-35
 * at 512^3), so it is the same at every run. The
 * histogram accessors of ITK's class (GetJointPDF, ...) are not filled by
 * the module's evaluations.
 *
 * \ingroup CudaImageFilters
 */
template <CIF_METRICV4_TEMPLATE_PARAMETERS>
class ITK_TEMPLATE_EXPORT CudaMattesMutualInformationImageToImageMetricv4
  : public CudaImageToImageMetricv4Base<MattesMutualInformationImageToImageMetricv4<CIF_METRICV4_TEMPLATE_ARGUMENTS>>
{
  CIF_METRICV4_CLASS_MEMBERS(CudaMattesMutualInformationImageToImageMetricv4, MattesMutualInformationImageToImageMetricv4);

  cif::MetricKind
  GetCoreMetricKind() const override
  {
    return cif::MetricKind::MattesMutualInformation;
  }

  /** The histogram ITK's Initialize set up. */
  std::string
  CompleteCoreJob(cif::DenseMetricJob & job) const override
  {
    if (this->m_NumberOfHistogramBins > static_cast<SizeValueType>(cif::kMaxMattesBins))
    {
      return "more than " + std::to_string(cif::kMaxMattesBins) + " histogram bins";
    }
    job.mattes.bins = static_cast<int>(this->m_NumberOfHistogramBins);
    job.mattes.fixedBinSize = this->m_FixedImageBinSize;
    job.mattes.fixedNormalizedMin = this->m_FixedImageNormalizedMin;
    job.mattes.movingBinSize = this->m_MovingImageBinSize;
    job.mattes.movingNormalizedMin = this->m_MovingImageNormalizedMin;
    job.mattes.movingTrueMin = this->m_MovingImageTrueMin;
    job.mattes.movingTrueMax = this->m_MovingImageTrueMax;
    if (!(job.mattes.fixedBinSize > 0) || !(job.mattes.movingBinSize > 0))
    {
      return "an image of one intensity (a histogram bin size of 0)";
    }
    return {};
  }

  /** ITK's ComputeResults (the core ran it) and the derivative's scale. */
  void
  ValueAndDerivativeFromMoments(const cif::MetricMoments & moments,
                                const MomentContraction &  contract,
                                MeasureType &              value,
                                DerivativeType *           derivative) const override
  {
    if (moments.status == 1)
    {
      itkExceptionMacro("All samples map outside moving image buffer. "
                        "The images do not sufficiently "
                        "overlap. They need to be initialized to have more overlap before this "
                        "metric will work. For instance, you can align the image centers by translation."
                        << std::endl);
    }
    if (moments.status == 2)
    {
      itkExceptionMacro("Joint PDF summed to zero");
    }
    value = moments.value;
    if (derivative != nullptr)
    {
      contract(0, *derivative);
      if (!this->HasLocalSupport())
      {
        // (a displacement field's derivative comes from the core scaled)
        *derivative *= -1.0 / (this->m_MovingImageBinSize * moments.count);
      }
    }
  }
};

} // namespace itk

#endif
