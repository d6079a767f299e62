/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaRotatingMaskImageFilter_h
#define itkCudaRotatingMaskImageFilter_h

#include "cif/RotatingMask.h"
#include "itkCudaDescribedImageFilter.h"
#include "itkCudaFilterImage.h"
#include "itkImageToImageFilter.h"
#include <type_traits>

namespace itk
{

/** \class CudaRotatingMaskImageFilter
 * \brief Edge-preserving rotating-mask (Nagao-Matsuyama) smoothing on the GPU
 * (CUDA) or the CPU.
 *
 * For every pixel the 5 x 5 (2D) or 5 x 5 x 5 (3D) mask around it is divided
 * into sub-regions; for each sub-region S the mean and the dispersion
 * (variance) sigma^2[S] = (sum f^2 - (sum f)^2 / N_S) / N_S (seed paper 002,
 * eq. 4) are computed, and the output is the mean of the sub-region with the
 * smallest dispersion. Ties go to the first sub-region in the order below
 * (comparison with a strict <).
 *
 * Sub-regions, as offsets (dx, dy[, dz]) from the centre:
 * - 2D, Nagao & Matsuyama (1979), nine regions of the 5 x 5 window:
 *   0 the centre 3 x 3 square (9 pixels: dx, dy in {-1, 0, 1});
 *   1-4 pentagons (7 pixels: the three pixels two steps away in one axis
 *   direction, the three one step away, and the centre), in the order
 *   1 -y: (-1,-2) (0,-2) (1,-2) (-1,-1) (0,-1) (1,-1) (0,0),
 *   2 +x: (2,-1) (2,0) (2,1) (1,-1) (1,0) (1,1) (0,0),
 *   3 +y: (-1,2) (0,2) (1,2) (-1,1) (0,1) (1,1) (0,0),
 *   4 -x: (-2,-1) (-2,0) (-2,1) (-1,-1) (-1,0) (-1,1) (0,0);
 *   5-8 hexagons (7 pixels: a 2 x 2 corner block of the window, the two
 *   pixels between it and the centre, and the centre), in the order
 *   5 -x-y: (-2,-2) (-1,-2) (-2,-1) (-1,-1) (0,-1) (-1,0) (0,0),
 *   6 +x-y: (2,-2) (1,-2) (2,-1) (1,-1) (0,-1) (1,0) (0,0),
 *   7 +x+y: (2,2) (1,2) (2,1) (1,1) (0,1) (1,0) (0,0),
 *   8 -x+y: (-2,2) (-1,2) (-2,1) (-1,1) (0,1) (-1,0) (0,0).
 *   The regions have different sizes, so the true dispersion (with 1/N_S)
 *   is compared.
 * - 3D, six regions of 27 voxels (seed paper, figure 9): the 3 x 3 x 3 blocks
 *   that contain the centre in the middle of one face and extend two voxels
 *   along one axis direction, in the order
 *   0 +x: dx in {0,1,2}, dy and dz in {-1,0,1};  1 -x: dx in {-2,-1,0}, ...;
 *   2 +y: dy in {0,1,2}, dx and dz in {-1,0,1};  3 -y: dy in {-2,-1,0};
 *   4 +z: dz in {0,1,2}, dx and dy in {-1,0,1};  5 -z: dz in {-2,-1,0}.
 *   Their union is 81 voxels of the 5 x 5 x 5 box.
 *
 * Boundary: zero-flux Neumann (clamp-to-edge) at the input's buffered
 * region, as ITK's neighbourhood filters; images smaller than the mask and
 * axes of size 1 are well defined.
 *
 * Output: the mean of the chosen sub-region. Integer outputs: the nearest
 * integer, floor(mean + 1/2) (sub-region sizes are odd, so the exact mean is
 * never halfway), clamped to the type's range. Floating outputs: the mean
 * rounded to the type.
 *
 * Accuracy: integer inputs of at most 16 bits use exact integer arithmetic
 * on both devices (sums of f - f(centre) and of their squares), so the
 * choice of sub-region, ties included, is exact and CPU and GPU agree
 * bit for bit. Float, double and 32-bit integer inputs use double precision
 * on the differences to the centre on both devices (relative error of a
 * dispersion about 1e-16 of its sum of squares); the tests require the
 * output to be, within 2^-22 relative, the mean of a sub-region whose
 * float64 dispersion exceeds the smallest by at most 1e-9 times the squared
 * spread of the mask (max |f - f(centre)|), i.e. a near-tie may be decided
 * either way, and CPU and GPU (which may fuse multiply-adds) agree except
 * at such near-ties. NaN propagates: a
 * NaN or infinity anywhere in a sub-region (that is, in the 25 or 81 samples
 * of the mask) makes the output NaN.
 *
 * SetNumberOfIterations(n) (default 1) applies the filter n times, each time
 * to the previous result in the output pixel type; on the GPU the
 * intermediate results stay on the device; with n > 1 the whole image is
 * processed.
 *
 * Where it runs (SetExecutionMode): automatic (default), GPU only or CPU
 * only; GetLastExecutionReport() says where the last update ran and why. The
 * GPU handles uchar -> uchar, short -> short, ushort -> ushort,
 * float -> float and uchar/short/ushort -> float. The CPU core handles
 * signed/unsigned char, short, int, float and double inputs with the same,
 * float or double output, so every request this class accepts has a CPU
 * path (other pixel types fail to compile); other requests run there in
 * automatic mode and throw in GPU mode. A device out-of-memory falls back to
 * the CPU in automatic mode. With itk::CudaFilterImage input and output the data
 * stays on the device between GPU filters.
 *
 * Performance: see benchmarks/EdgePreservingBenchmark.cxx.
 *
 * \ingroup CudaImageFilters
 */
template <typename TInputImage, typename TOutputImage = TInputImage>
class ITK_TEMPLATE_EXPORT CudaRotatingMaskImageFilter
  : public CudaDescribedImageFilter<CudaRotatingMaskImageFilter<TInputImage, TOutputImage>,
                                    ImageToImageFilter<TInputImage, TOutputImage>>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaRotatingMaskImageFilter);

  using Self = CudaRotatingMaskImageFilter;
  using Superclass = CudaDescribedImageFilter<Self, ImageToImageFilter<TInputImage, TOutputImage>>;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  itkNewMacro(Self);
  itkTypeMacro(CudaRotatingMaskImageFilter, ImageToImageFilter);

  using InputImageType = TInputImage;
  using OutputImageType = TOutputImage;
  using InputPixelType = typename TInputImage::PixelType;
  using OutputPixelType = typename TOutputImage::PixelType;
  using OutputImageRegionType = typename TOutputImage::RegionType;
  static constexpr unsigned int ImageDimension = TOutputImage::ImageDimension;

  static_assert(TInputImage::ImageDimension == TOutputImage::ImageDimension,
                "CudaRotatingMaskImageFilter: input and output must have the same dimension");
  static_assert(ImageDimension == 2 || ImageDimension == 3,
                "CudaRotatingMaskImageFilter is defined for 2D (Nagao's nine masks) and 3D (six half-masks) images");
  static_assert(std::is_same<InputPixelType, signed char>::value ||
                  std::is_same<InputPixelType, unsigned char>::value || std::is_same<InputPixelType, short>::value ||
                  std::is_same<InputPixelType, unsigned short>::value || std::is_same<InputPixelType, int>::value ||
                  std::is_same<InputPixelType, unsigned int>::value || std::is_same<InputPixelType, float>::value ||
                  std::is_same<InputPixelType, double>::value,
                "CudaRotatingMaskImageFilter: input pixels must be signed/unsigned char, short, int, float or double");
  static_assert(std::is_same<InputPixelType, OutputPixelType>::value || std::is_same<OutputPixelType, float>::value ||
                  std::is_same<OutputPixelType, double>::value,
                "CudaRotatingMaskImageFilter: the output pixel type must be the input's, float or double");

  /** Half-width of the mask: 2 (5 x 5 [x 5]). */
  static constexpr unsigned int MaskRadius = 2;
  /** Number of sub-regions: 9 in 2D, 6 in 3D. */
  static constexpr unsigned int NumberOfSubRegions = ImageDimension == 2 ? 9 : 6;

  /** How often the filter is applied (default 1, at least 1). */
  itkSetMacro(NumberOfIterations, unsigned int);
  itkGetConstMacro(NumberOfIterations, unsigned int);

  /** The core's description of the filter (cif/Filter.h). */
  static const cif::FilterDescriptor &
  Description()
  {
    return cif::FindFilter("rotating-mask");
  }
  /** The filter's settings as the description's parameters. */
  static cif::Parameters
  DescribedParameters(const Self * filter)
  {
    return { { "number_of_iterations", { static_cast<double>(filter->GetNumberOfIterations()) } } };
  }
  /** The pixel types the described cores do not take (signed char, int,
   * unsigned int, double, or outputs of another type) run the module's CPU
   * core, which is written for all of them. */
  std::string
  TwinName() const
  {
    return "the module's CPU core for these pixel types";
  }
  void
  TwinGenerateData();

protected:
  CudaRotatingMaskImageFilter() = default;
  ~CudaRotatingMaskImageFilter() override = default;

  void
  PrintSelf(std::ostream & os, Indent indent) const override;
  void
  GenerateInputRequestedRegion() override;
  void
  EnlargeOutputRequestedRegion(DataObject * output) override;

private:
  unsigned int m_NumberOfIterations{ 1 };
};

} // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#  include "itkCudaRotatingMaskImageFilter.hxx"
#endif

#endif
