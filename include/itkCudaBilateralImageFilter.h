/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaBilateralImageFilter_h
#define itkCudaBilateralImageFilter_h

#include "cif/Bilateral.h"
#include "itkBilateralImageFilter.h"
#include "itkCudaDescribedImageFilter.h"
#include "itkCudaFilterImage.h"

namespace itk
{

/** \class CudaBilateralImageFilter
 * \brief Edge-preserving bilateral smoothing on the GPU (CUDA) or the CPU:
 * a drop-in for itk::BilateralImageFilter, with an exact range Gaussian and
 * an optional number of iterations.
 *
 * Computes, for every output pixel x (seed paper 002, eq. 1-3; Tomasi and
 * Manduchi 1998),
 * \f[ g(x) = \frac{\sum_q w_d(q - x)\, w_r(f(q) - f(x))\, f(q)}{\sum_q w_d(q - x)\, w_r(f(q) - f(x))} \f]
 * over the box of the kernel radius around x, with ITK's semantics:
 * - Domain kernel w_d: ITK's normalised Gaussian,
 *   exp(-1/2 sum_i (k_i spacing_i / DomainSigma_i)^2) divided by its sum
 *   over the box; DomainSigma is per axis in physical units.
 * - Radius: with AutomaticKernelSize (default) ceil(DomainMu DomainSigma_i /
 *   spacing_i) per axis (DomainMu defaults to 2.5); otherwise SetRadius().
 *   GetKernelRadius() says which radius the next update uses.
 * - Range kernel w_r(d) = exp(-d^2 / (2 RangeSigma^2)) for |d| < 4 RangeSigma
 *   and 0 beyond (ITK's fixed support of 4 sigmas).
 * - Boundary: zero-flux Neumann (clamp-to-edge) at the input's buffered
 *   region, as itk::ZeroFluxNeumannBoundaryCondition; any radius is valid,
 *   also one larger than the image.
 * - Integer outputs are truncated toward zero, as ITK's static_cast.
 *
 * Differences from itk::BilateralImageFilter:
 * - The range Gaussian is evaluated exactly (CPU: std::exp in double; GPU:
 *   the ex2 unit in float) instead of ITK's table of NumberOfRangeGaussianSamples
 *   values over [0, 4 RangeSigma), which ITK reads at floor(|d| / delta),
 *   delta = 4 RangeSigma / samples. That quantisation overestimates each
 *   range weight by a factor below exp(16 / samples), so ITK's output
 *   differs from the exact filter by at most
 *   2 RangeSigma (exp(16 / samples) - 1)  (0.35 RangeSigma for the default
 *   100 samples; the weighted mean of values within 4 sigma moved by weights
 *   perturbed by that factor), plus one unit for integer outputs
 *   (truncation). The tests check this bound, and with 10^6 samples, where
 *   ITK's quantisation is negligible, agreement within 1e-4 RangeSigma.
 *   NumberOfRangeGaussianSamples therefore only matters when ITK's own
 *   implementation runs (see below).
 * - The value is computed as f(x) + sum h (f(q) - f(x)) / sum h, which
 *   reproduces flat regions exactly (ITK's sum h f / sum h can fall short by
 *   one rounding, which truncation turns into one unit for integer output).
 * - SetNumberOfIterations(n) (default 1) applies the filter n times, each
 *   time to the previous result in the output pixel type (seed paper: 1, 3
 *   and 5 iterations); on the GPU the intermediate results stay on the
 *   device. With n > 1 the whole image is processed (the output requested
 *   region is enlarged to the largest possible region).
 * - Invalid parameters are an itk::ExceptionObject at update: RangeSigma or
 *   a DomainSigma that is not positive and finite, a DomainMu that is not
 *   positive and finite (automatic size), zero iterations, zero range
 *   samples, an empty input, or a kernel of more than 2^22 taps.
 *
 * Accuracy (stated and tested):
 * - CPU: double precision with the exact exponential; it agrees with an
 *   independent long-double evaluation of the definition within 1e-9 of the
 *   input's range (float outputs: plus one float rounding; integer outputs:
 *   the truncation of a value within that distance).
 * - GPU: single precision. Each tap's weight is 2^t with
 *   t = log2(w_domain / max w_domain) - d^2 log2(e) / (2 RangeSigma^2) (one
 *   FFMA and one ex2.approx, 2 ulp; the domain weights' scale cancels in the
 *   quotient). The roundings of t's terms, at most (2 |t| + 24) 2^-24, keep
 *   each weight of at least 2^-20 of the largest within 3e-6 (relative);
 *   smaller weights carry a larger relative error but as small a share of
 *   the sums. With float
 *   accumulation the result differs from the CPU
 *   core by at most 1e-4 RangeSigma + 2^-22 |value| for kernels of up to 343
 *   taps (tested; integer outputs may then differ by one unit where the
 *   exact value lies that close to an integer). For float images a
 *   neighbour whose difference lies within one float rounding of the cutoff
 *   may be included on one device and not on the other.
 * - Non-finite values, as in ITK: a NaN or infinite neighbour is excluded by
 *   the range cutoff; a NaN or infinite centre gives NaN.
 *
 * Where it runs (SetExecutionMode): automatic (default), GPU only or CPU
 * only; GetLastExecutionReport() says where the last update ran and which
 * GPU kernel or CPU implementation was used. The GPU handles 1 to 3
 * dimensions and the pixel pairs (in -> out) uchar -> uchar, short -> short,
 * ushort -> ushort, float -> float and uchar/short/ushort -> float. Its
 * kernel keeps a tile in shared memory with the domain weights in constant
 * memory; radii whose tile does not fit in shared memory, or kernels of more
 * than 8192 taps, use a slower global-memory kernel (the report says so).
 * The module's CPU core runs every other request of 1 to 3 dimensions
 * whose input is signed char, uchar, short, ushort, int, unsigned int,
 * float or double and whose output is the same type, float or double: the
 * filter's description (cif::FindFilter("bilateral")) lists uchar, short,
 * ushort, float and double to the same type and the three integer types to
 * float, and the class runs the same core for the other pairs. Anything
 * else (other pixel types, 4 or more dimensions) runs ITK's own
 * BilateralImageFilter (with its lookup table, so within ITK's table error
 * of the exact filter; iterations by repetition), in automatic and CPU
 * modes, and the report says so. In GPU mode an
 * unsupported request throws. A device out-of-memory falls back to the CPU
 * in automatic mode. With itk::CudaFilterImage input and output the data stays on
 * the device between GPU filters.
 *
 * Performance: see benchmarks/EdgePreservingBenchmark.cxx.
 *
 * \ingroup CudaImageFilters
 */
template <typename TInputImage, typename TOutputImage>
class ITK_TEMPLATE_EXPORT CudaBilateralImageFilter
  : public CudaDescribedImageFilter<CudaBilateralImageFilter<TInputImage, TOutputImage>,
                                    BilateralImageFilter<TInputImage, TOutputImage>>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaBilateralImageFilter);

  using Self = CudaBilateralImageFilter;
  using Twin = BilateralImageFilter<TInputImage, TOutputImage>;
  using Superclass = CudaDescribedImageFilter<Self, Twin>;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  itkNewMacro(Self);
  itkTypeMacro(CudaBilateralImageFilter, BilateralImageFilter);

  using InputImageType = TInputImage;
  using OutputImageType = TOutputImage;
  using InputPixelType = typename TInputImage::PixelType;
  using OutputPixelType = typename TOutputImage::PixelType;
  using SizeType = typename Twin::SizeType;
  using OutputImageRegionType = typename TOutputImage::RegionType;
  static constexpr unsigned int ImageDimension = TOutputImage::ImageDimension;

  /** ITK's fixed support of the range Gaussian, in range sigmas. */
  static constexpr double RangeCutoffInSigmas = cif::BilateralRangeCutoffInSigmas;

  /** How often the filter is applied (default 1, at least 1). */
  itkSetMacro(NumberOfIterations, unsigned int);
  itkGetConstMacro(NumberOfIterations, unsigned int);

  /** The kernel radius the next update uses: ceil(DomainMu DomainSigma_i /
   * spacing_i) with AutomaticKernelSize, else GetRadius(). Needs the input
   * (for its spacing) in automatic mode; throws for invalid parameters (the
   * description's check, cif::BilateralKernelRadius). */
  SizeType
  GetKernelRadius() const;

  /** The core's description of the filter (cif/Filter.h). */
  static const cif::FilterDescriptor &
  Description()
  {
    return cif::FindFilter("bilateral");
  }
  /** The filter's settings as the description's parameters: the radius
   * only without AutomaticKernelSize, the input's spacing when it is set. */
  static cif::Parameters
  DescribedParameters(const Self * filter)
  {
    cif::Parameters p{ { "domain_sigma", CudaPerAxisValues<ImageDimension>(filter->GetDomainSigma()) },
                       { "range_sigma", { filter->GetRangeSigma() } },
                       { "domain_mu", { filter->GetDomainMu() } },
                       { "radius", {} },
                       { "number_of_iterations", { static_cast<double>(filter->GetNumberOfIterations()) } } };
    if (!filter->GetAutomaticKernelSize())
    {
      p["radius"] = CudaRadiusValues(filter->GetRadius());
    }
    if (const TInputImage * input = filter->GetInput())
    {
      p["spacing"] = CudaPerAxisValues<ImageDimension>(input->GetSpacing());
    }
    return p;
  }
  /** Requests the description does not take: the pixel pairs the module's
   * CPU core is also written for (signed char, int and unsigned int inputs;
   * double outputs) run that core, exactly as the described ones; the rest
   * (other pixel types, 4 or more dimensions) runs ITK's
   * BilateralImageFilter, with its range table, repeated for the
   * iterations. */
  std::string
  TwinName() const
  {
    return CoreWritesThisPair ? "the module's CPU core (exact range Gaussian) for these pixel types"
                              : "ITK's BilateralImageFilter (range lookup table; iterations by repetition)";
  }
  void
  TwinGenerateData();

protected:
  CudaBilateralImageFilter() = default;
  ~CudaBilateralImageFilter() override = default;

  void
  PrintSelf(std::ostream & os, Indent indent) const override;
  void
  VerifyPreconditions() ITKv5_CONST override;
  void
  GenerateInputRequestedRegion() override;
  void
  EnlargeOutputRequestedRegion(DataObject * output) override;

private:
  /** The pixel pairs cif::BilateralCPU is instantiated for
   * (src/core/bilateral/BilateralCPU.cxx), in 1 to 3 dimensions. */
  static constexpr bool CoreWritesThisPair =
    ImageDimension <= 3 &&
    CudaIsOneOf<InputPixelType, signed char, unsigned char, short, unsigned short, int, unsigned int, float, double> &&
    (std::is_same<InputPixelType, OutputPixelType>::value || CudaIsOneOf<OutputPixelType, float, double>);

  unsigned int m_NumberOfIterations{ 1 };
};

} // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#  include "itkCudaBilateralImageFilter.hxx"
#endif

#endif
