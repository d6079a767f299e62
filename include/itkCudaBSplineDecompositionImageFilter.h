/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaBSplineDecompositionImageFilter_h
#define itkCudaBSplineDecompositionImageFilter_h

#include "itkBSplineDecompositionImageFilter.h"
#include "itkCudaDescribedImageFilter.h"
#include "itkCudaFilterImage.h"
#include "cif/BSplinePrefilter.h"
#include <ostream>

namespace itk
{

/** How CudaBSplineDecompositionImageFilter computes the cubic coefficients. */
enum class CudaBSplinePrefilterMethod : std::uint8_t
{
  /** Exact causal/anticausal recursion over whole lines, ITK's algorithm. */
  Recursive,
  /** Direct convolution with 2K + 1 taps b(k) = sqrt(3) (sqrt(3) - 2)^|k|,
   * renormalised to sum 1 (Champagnat & Le Sant). Local, so it streams. */
  FIR
};
inline std::ostream &
operator<<(std::ostream & os, CudaBSplinePrefilterMethod method)
{
  return os << (method == CudaBSplinePrefilterMethod::FIR ? "FIR" : "Recursive");
}

/** \class CudaBSplineDecompositionImageFilter
 * \brief B-spline coefficients of an image, on the GPU (CUDA) or the CPU:
 * a drop-in for itk::BSplineDecompositionImageFilter.
 *
 * Computes the coefficients c of the B-spline of the given order that
 * interpolates the input at every pixel, with ITK's boundary condition: the
 * whole-sample symmetric mirror (scipy.ndimage's mode='mirror'). An axis of
 * length 1 is left unchanged, as ITK does. The public API and the results are
 * those of itk::BSplineDecompositionImageFilter; registering
 * CudaBSplineDecompositionImageFilterFactory makes that class's New() return
 * this one.
 *
 * Two methods (SetMethod):
 * - Recursive (default): the exact causal and anticausal recursion of Unser,
 *   with ITK's initialisation (causal sum truncated at ceil(log(1e-10) /
 *   log|z|) terms). Needs the whole image: the output requested region is
 *   enlarged to the largest possible region, as in ITK.
 * - FIR (cubic only): direct convolution with the 2K + 1 taps of the exact
 *   prefilter's impulse response, renormalised to sum 1. K comes from
 *   SetFIRTolerance (default 1e-7 gives K = 13) or SetFIRHalfWidth (K = 7 is
 *   the seed paper's FIR15). The truncation changes each axis pass by at most
 *   2 sqrt(3) |z|^(K+1) / (1 - |z|) times the largest input magnitude. The
 *   filter is local: the input requested region is the output requested
 *   region grown by K, so the filter streams (itk::StreamingImageFilter) and
 *   volumes larger than GPU memory can be processed piecewise.
 *
 * Where it runs (SetExecutionMode): automatic (default), GPU only or CPU
 * only; GetLastExecutionReport() says where the last update ran and why.
 * The GPU path handles spline order 3, 1 to 3 dimensions, input pixels
 * unsigned char, short, unsigned short, float or double, and float or double
 * output; other requests run on the CPU in automatic mode (the module's core,
 * which also takes signed char, int and unsigned int, else ITK's own
 * implementation). A device out-of-memory falls back to the CPU in automatic
 * mode (reported, with a warning) and throws in GPU mode; host images too
 * large for the device run in the prefilter's exact slabs. With
 * CudaFilterImage input and output the data stays on the device between
 * consecutive GPU filters. The settings are checked by the core's
 * description ("bspline-prefilter", cif/Filter.h), as the Python function
 * and the command line check them.
 *
 * Accuracy: both paths compute in double precision and round to the output
 * type after each axis pass, as ITK does. The GPU restarts the recursion on
 * segments of a line from sums truncated at |z|^18 < 1e-10 (ITK's own
 * truncation of the first coefficient). For float output it agrees with
 * ITK's CPU filter within 1e-6 of the input's dynamic range (tested on
 * synthetic volumes and real images). Non-finite input values propagate as
 * in ITK: with the recursive method a NaN or Inf reaches every coefficient
 * of every line through it (so, after all passes, the whole image); with the
 * FIR only the (2K + 1)^N neighbourhood.
 *
 * \ingroup CudaImageFilters
 */
template <typename TInputImage, typename TOutputImage>
class ITK_TEMPLATE_EXPORT CudaBSplineDecompositionImageFilter
  : public CudaDescribedImageFilter<CudaBSplineDecompositionImageFilter<TInputImage, TOutputImage>,
                                    BSplineDecompositionImageFilter<TInputImage, TOutputImage>>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaBSplineDecompositionImageFilter);

  using Self = CudaBSplineDecompositionImageFilter;
  using Twin = BSplineDecompositionImageFilter<TInputImage, TOutputImage>;
  using Superclass = CudaDescribedImageFilter<Self, Twin>;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  itkNewMacro(Self);
  itkTypeMacro(CudaBSplineDecompositionImageFilter, BSplineDecompositionImageFilter);

  using InputImageType = TInputImage;
  using OutputImageType = TOutputImage;
  using InputPixelType = typename TInputImage::PixelType;
  using OutputPixelType = typename TOutputImage::PixelType;
  using OutputImageRegionType = typename TOutputImage::RegionType;
  static constexpr unsigned int ImageDimension = TInputImage::ImageDimension;

  itkSetEnumMacro(Method, CudaBSplinePrefilterMethod);
  itkGetEnumMacro(Method, CudaBSplinePrefilterMethod);

  /** FIR half-width K (2K + 1 taps), at most 32. Setting it overrides the tolerance. */
  void
  SetFIRHalfWidth(unsigned int halfWidth);
  /** Tolerance on the per-axis truncation error, relative to the input's
   * largest magnitude; K is the smallest half-width that meets it. Setting it
   * overrides an explicit half-width. Default 1e-7 (K = 13). */
  void
  SetFIRTolerance(double tolerance);
  itkGetConstMacro(FIRTolerance, double);
  /** The K the FIR method uses with the current settings. */
  unsigned int
  GetFIRHalfWidth() const;

  /** The core's description of the filter (cif/Filter.h). */
  static const cif::FilterDescriptor &
  Description()
  {
    return cif::FindFilter("bspline-prefilter");
  }
  /** The filter's settings as the description's parameters. */
  static cif::Parameters
  DescribedParameters(const Self * filter)
  {
    const bool fir = filter->GetMethod() == CudaBSplinePrefilterMethod::FIR;
    return { { "spline_order", { static_cast<double>(filter->GetSplineOrder()) } },
             { "method", { fir ? 1.0 : 0.0 } },
             { "fir_half_width",
               fir ? std::vector<double>{ static_cast<double>(filter->GetFIRHalfWidth()) } : std::vector<double>{} },
             { "fir_tolerance", {} } };
  }

  /** What runs the requests the described cores do not take: the module's
   * CPU core for the pixel types it is written for beyond the
   * description's (signed char, int, unsigned int), else ITK's own
   * implementation (which has no FIR: that throws). */
  std::string
  TwinName() const;
  void
  TwinGenerateData();

protected:
  CudaBSplineDecompositionImageFilter() = default;
  ~CudaBSplineDecompositionImageFilter() override = default;

  void
  PrintSelf(std::ostream & os, Indent indent) const override;
  void
  GenerateInputRequestedRegion() override;
  void
  EnlargeOutputRequestedRegion(DataObject * output) override;

private:
  /** The module's CPU core takes this pixel pair (src/core/bspline_prefilter/BSplinePrefilterCPU.cxx). */
  static constexpr bool CoreWritesThisPair =
    ImageDimension <= 3 &&
    CudaIsOneOf<InputPixelType, unsigned char, signed char, short, unsigned short, int, unsigned int, float, double> &&
    CudaIsOneOf<OutputPixelType, float, double>;

  CudaBSplinePrefilterMethod m_Method{ CudaBSplinePrefilterMethod::Recursive };
  double                     m_FIRTolerance{ 1e-7 };
  unsigned int               m_FIRHalfWidth{ 0 };
  bool                       m_FIRHalfWidthFromTolerance{ true };
};

} // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#  include "itkCudaBSplineDecompositionImageFilter.hxx"
#endif

#endif
