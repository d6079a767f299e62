/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaMedianImageFilter_h
#define itkCudaMedianImageFilter_h

#include "cif/Median.h"
#include "itkCudaDescribedImageFilter.h"
#include "itkCudaFilterImage.h"
#include "itkMedianImageFilter.h"
#include <ostream>

namespace itk
{

/** Which GPU algorithm CudaMedianImageFilter uses: the core's enum
 * (cif/Median.h): Automatic (the cheapest that fits, default), Selection
 * (forgetful selection in registers, windows of at most 125 pixels),
 * RadixTile (radix select on a shared-memory tile), RadixGlobal (radix
 * select from global memory over the clamped window), SlidingHistogram
 * (histograms sliding along y or z). */
using CudaMedianKernel = cif::MedianKernel;

/** \class CudaMedianImageFilter
 * \brief Median filter on the GPU (CUDA) or the CPU: a drop-in for
 * itk::MedianImageFilter.
 *
 * Each output pixel is the median of the box of (2 r_x + 1) x (2 r_y + 1)
 * (x (2 r_z + 1)) input pixels around it, SetRadius() per axis as in
 * itk::MedianImageFilter (whose API and pipeline behaviour, streaming
 * included, it inherits). Boundary: ITK's zero-flux Neumann condition,
 * window indices clamped to the input's buffered region (scipy's
 * mode='nearest'); a radius larger than the image is fine.
 *
 * Accuracy: exact. For 8- and 16-bit integers and NaN-free floats the
 * output is identical to ITK's: the (N / 2)-th smallest of the N window
 * values. The one exception is a window holding both -0.0 and +0.0, where
 * ITK may return either zero and this filter orders -0.0 first (the two
 * compare equal). NaN (ITK's result is unspecified, its std::nth_element
 * needs a strict weak order): every NaN counts as larger than +Inf, on both
 * devices, so the median is NaN exactly when more than half of the window
 * is NaN, and it is then the quiet NaN 0x7FFFFFFF.
 *
 * Where it runs (SetExecutionMode): automatic (default), GPU only or CPU
 * only; GetLastExecutionReport() says where the last update ran, why, and
 * on the GPU which algorithm ran. The GPU and the module's CPU core handle
 * 1 to 3 dimensions with input and output pixels of the same type among
 * unsigned char, short, unsigned short and float; other requests run ITK's
 * own CPU implementation in automatic and CPU mode, and throw in GPU mode.
 * A device out-of-memory falls back to the CPU in automatic mode. With
 * CudaFilterImage input and output the data stays on the device.
 *
 * GPU algorithms (SetGPUKernel, default automatic: the cheapest that fits):
 * - forgetful selection in registers on a shared-memory tile, for windows of
 *   at most 125 pixels (3x3, 5x5, 7x7; 3x3x3, 3x3x5, 5x3x3, 5x5x3, 5x5x5 and
 *   smaller, any orientation): each thread computes two outputs that share
 *   the work on the common part of their windows, and for 8- and 16-bit
 *   pixels two more in the other half of 16x2 words;
 * - sliding histograms (Huang's running histogram), for larger windows of
 *   fewer than 2^16 pixels: one warp walks a segment of a line along y or
 *   z, counts the window's keys in shared memory and, per step, only the
 *   plane that leaves the window and the one that enters it, so its work
 *   grows with a plane of the window, not with the window. Keys are counted
 *   from the input's smallest key (measured on the device first): in one
 *   level when they span fewer than 4096 values (8-bit pixels, 12-bit CT
 *   and MR), else in levels of up to 12 bits whose counters are rebuilt
 *   where the digits above them change. Automatic mode takes it from 256
 *   pixels per level, for one or two levels (not for wide float spans).
 *   Float images whose pixels all hold integers spanning fewer than 2^16
 *   values (CT read as float) run these kernels on 16-bit offsets from the
 *   smallest value, which keep the order and so the median;
 * - radix select (seed 002's histogram bisection over the key bits, for 8-,
 *   16- and 32-bit keys) on a shared-memory tile, one pass per bit where the
 *   window's extremes differ: any radius whose tile fits the device's
 *   shared memory;
 * - the same radix select from global memory, over the window clamped to
 *   the image with weights: any radius, used when the tile does not fit or
 *   the window is much larger than the image (the report says so).
 * CPU core (multi-threaded): std::nth_element on each gathered window, or
 * for 8- and 16-bit pixels and windows of 64 pixels or more a histogram
 * sliding along each row.
 *
 * \ingroup CudaImageFilters
 */
template <typename TInputImage, typename TOutputImage = TInputImage>
class ITK_TEMPLATE_EXPORT CudaMedianImageFilter
  : public CudaDescribedImageFilter<CudaMedianImageFilter<TInputImage, TOutputImage>,
                                    MedianImageFilter<TInputImage, TOutputImage>>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaMedianImageFilter);

  using Self = CudaMedianImageFilter;
  using Superclass = CudaDescribedImageFilter<Self, MedianImageFilter<TInputImage, TOutputImage>>;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  itkNewMacro(Self);
  itkTypeMacro(CudaMedianImageFilter, MedianImageFilter);

  /** The GPU algorithm; a choice that cannot serve the request (a window
   * too large for selection, a tile too large for shared memory) falls back
   * to the next one, and the report says so. */
  itkSetEnumMacro(GPUKernel, CudaMedianKernel);
  itkGetEnumMacro(GPUKernel, CudaMedianKernel);

  /** The GPU algorithm of the last update (Automatic if it ran on the CPU). */
  CudaMedianKernel
  GetLastGPUKernel() const
  {
    const int algorithm = this->GetLastCoreAlgorithm();
    return algorithm < 0 ? CudaMedianKernel::Automatic : static_cast<CudaMedianKernel>(algorithm);
  }

  /** The core's description of the filter (cif/Filter.h). */
  static const cif::FilterDescriptor &
  Description()
  {
    return cif::FindFilter("median");
  }
  /** The filter's settings as the description's parameters. */
  static cif::Parameters
  DescribedParameters(const Self * filter)
  {
    return { { "radius", CudaRadiusValues(filter->GetRadius()) },
             { "kernel", { static_cast<double>(static_cast<int>(filter->GetGPUKernel())) } } };
  }

protected:
  CudaMedianImageFilter() = default;
  ~CudaMedianImageFilter() override = default;

  void
  PrintSelf(std::ostream & os, Indent indent) const override
  {
    Superclass::PrintSelf(os, indent);
    os << indent << "GPUKernel: " << m_GPUKernel << '\n';
    os << indent << "LastGPUKernel: " << this->GetLastGPUKernel() << '\n';
  }

private:
  CudaMedianKernel m_GPUKernel{ CudaMedianKernel::Automatic };
};

} // namespace itk

#endif
