/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaMeanImageFilter_h
#define itkCudaMeanImageFilter_h

#include "itkCudaDescribedImageFilter.h"
#include "itkCudaFilterImage.h"
#include "itkMeanImageFilter.h"

namespace itk
{

/** \class CudaMeanImageFilter
 * \brief Box mean of an image, on the GPU (CUDA) or the CPU: a drop-in for
 * itk::MeanImageFilter with the same output, bit for bit.
 *
 * Each output pixel is the mean of the (2 r_0 + 1) x ... x (2 r_{D-1} + 1)
 * input pixels of the box centred on it (SetRadius, per axis), with ITK's
 * zero-flux Neumann boundary: indices outside the input's buffered region
 * are clamped to it on each axis. As in ITK, the sum is formed in the
 * input's real type (double), divided by the box volume in double precision
 * and converted to the output type with static_cast (so integer outputs are
 * truncated toward zero).
 *
 * Exactness: the output equals itk::MeanImageFilter's exactly, on both
 * devices.
 * - Integer input (unsigned char, short, unsigned short): the sums are
 *   exact integers (32- or 64-bit accumulators chosen so that they cannot
 *   overflow), and ITK's double sum of integers is exact too, so the
 *   quotients are the same. On the GPU, boxes up to radius 16 along x and
 *   8 along y (and a depth that fits the shared memory, about radius 10
 *   along z for 16-bit input) take one pass that reads the image once and
 *   writes it once; larger boxes take separable passes.
 * - float input: the CPU and (for boxes whose tile fits in shared memory,
 *   about radius 8 per axis in 3D) the GPU add the box's samples in double
 *   precision in ITK's order (x fastest, then y, then z) from 0, so even
 *   the rounding of the sum is ITK's. NaN and Inf propagate as in ITK.
 *   Larger boxes on the GPU are summed separably in double precision (the
 *   execution report says so): identical to ITK whenever the double
 *   partial sums are exact (integer-valued data, or box values within 2^20
 *   of each other in magnitude), otherwise within one unit in the last
 *   place of the float result.
 *
 * Where it runs (SetExecutionMode): automatic (default), GPU only or CPU
 * only; GetLastExecutionReport() says where the last update ran and why.
 * The GPU handles 1 to 3 dimensions, input pixels unsigned char, short,
 * unsigned short or float with output of the same type or float, and radii
 * up to cif::MaxGPUBoxRadius (64) per axis. Other requests run on the CPU
 * in automatic mode: the module's multi-threaded core for those pixel
 * types, else ITK's own implementation. A device out-of-memory falls back
 * to the CPU in automatic mode. With CudaFilterImage input and output the data
 * stays on the device between GPU filters. The filter streams like ITK's.
 *
 * \ingroup CudaImageFilters
 */
template <typename TInputImage, typename TOutputImage = TInputImage>
class ITK_TEMPLATE_EXPORT CudaMeanImageFilter
  : public CudaDescribedImageFilter<CudaMeanImageFilter<TInputImage, TOutputImage>,
                                    MeanImageFilter<TInputImage, TOutputImage>>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaMeanImageFilter);

  using Self = CudaMeanImageFilter;
  using Superclass = CudaDescribedImageFilter<Self, MeanImageFilter<TInputImage, TOutputImage>>;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  itkNewMacro(Self);
  itkTypeMacro(CudaMeanImageFilter, MeanImageFilter);

  /** The core's description of the filter (cif/Filter.h). */
  static const cif::FilterDescriptor &
  Description()
  {
    return cif::FindFilter("mean");
  }
  /** The filter's settings as the description's parameters. */
  static cif::Parameters
  DescribedParameters(const Self * filter)
  {
    return { { "radius", CudaRadiusValues(filter->GetRadius()) } };
  }

protected:
  CudaMeanImageFilter() = default;
  ~CudaMeanImageFilter() override = default;
};

} // namespace itk

#endif
