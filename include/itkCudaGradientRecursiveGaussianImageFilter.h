/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaGradientRecursiveGaussianImageFilter_h
#define itkCudaGradientRecursiveGaussianImageFilter_h

#include "cif/RecursiveGaussian.h"
#include "cif/Runtime.h"
#include "itkCudaExecution.h"
#include "itkGradientRecursiveGaussianImageFilter.h"

#include <sstream>
#include <type_traits>

namespace itk
{

/** \class CudaGradientRecursiveGaussianImageFilter
 * \brief The gradient of the image smoothed by a Gaussian, by the recursive
 * (IIR) approximation, on the GPU (CUDA) or the CPU: a drop-in for
 * itk::GradientRecursiveGaussianImageFilter, the filter ITK's v4 metrics
 * run in Initialize for their moving (and fixed) image gradients.
 *
 * Computed, as ITK's filter: for each axis d, ITK's RecursiveGaussianImageFilter
 * of order 1 along d (with ITK's sigma of its derivative filter, the last
 * axis's) from the input into float, then order 0 along each other axis in
 * increasing order (the i-th of them with sigma[i], as ITK's smoothing
 * filter i keeps its sigma whichever axis it runs along; the same for the
 * isotropic sigmas the metrics set), in place; component d of the output is
 * that image divided by the spacing along d, rounded to float (as ITK
 * stores it, through a float NthElementImageAdaptor); with UseImageDirection (ITK's
 * default) each gradient is then multiplied by the image's direction
 * matrix, in double. Each line is filtered with ITK's arithmetic in double
 * (cif/RecursiveGaussian.h) on both devices, the GPU without fused
 * multiply-adds, so the result is ITK's up to the order of identical
 * operations (the tests: within 1e-6 of the largest component, on ITK's
 * example images, 2D and 3D).
 *
 * ITK's API, output grid and regions (the whole image is requested and
 * produced); at least 4 pixels along every axis. GPU and module CPU core:
 * uint8, int16, uint16, float and double inputs of 1 to 3 dimensions, and
 * itk::Image outputs of CovariantVector or Vector pixels of D float or
 * double components; other requests (multi-component inputs, VectorImage
 * outputs) run ITK's own filter, and the execution report says so. On the
 * GPU the input goes up, the D passes per component run on the device
 * (one thread per line; one float and one double per pixel of scratch) and
 * the gradient image comes down.
 *
 * \ingroup CudaImageFilters
 */
template <typename TInputImage,
          typename TOutputImage = Image<CovariantVector<typename NumericTraits<typename TInputImage::PixelType>::RealType,
                                                        TInputImage::ImageDimension>,
                                        TInputImage::ImageDimension>>
class ITK_TEMPLATE_EXPORT CudaGradientRecursiveGaussianImageFilter
  : public GradientRecursiveGaussianImageFilter<TInputImage, TOutputImage>
  , public CudaExecutionControl
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaGradientRecursiveGaussianImageFilter);

  using Self = CudaGradientRecursiveGaussianImageFilter;
  using Superclass = GradientRecursiveGaussianImageFilter<TInputImage, TOutputImage>;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  itkNewMacro(Self);
  itkTypeMacro(CudaGradientRecursiveGaussianImageFilter, GradientRecursiveGaussianImageFilter);

  static constexpr unsigned int ImageDimension = TInputImage::ImageDimension;
  using InputPixelType = typename TInputImage::PixelType;
  using OutputPixelType = typename TOutputImage::PixelType;
  using OutputComponentType = typename NumericTraits<OutputPixelType>::ValueType;

  /** Why the module's cores cannot take this filter's types (then ITK's own
   * filter runs); empty if they can. */
  static std::string
  GetCoreUnsupportedReason()
  {
    constexpr bool input = std::is_same<InputPixelType, unsigned char>::value ||
                           std::is_same<InputPixelType, short>::value ||
                           std::is_same<InputPixelType, unsigned short>::value ||
                           std::is_same<InputPixelType, float>::value || std::is_same<InputPixelType, double>::value;
    constexpr bool output =
      (std::is_same<OutputComponentType, float>::value || std::is_same<OutputComponentType, double>::value) &&
      sizeof(OutputPixelType) == ImageDimension * sizeof(OutputComponentType) &&
      std::is_same<TOutputImage, Image<OutputPixelType, ImageDimension>>::value;
    if (ImageDimension < 1 || ImageDimension > 3)
    {
      return "images of 1 to 3 dimensions";
    }
    if (!input)
    {
      return "input pixels of uint8, int16, uint16, float or double";
    }
    if (!output)
    {
      return "an itk::Image output of D float or double components per pixel";
    }
    return {};
  }

protected:
  CudaGradientRecursiveGaussianImageFilter() = default;
  ~CudaGradientRecursiveGaussianImageFilter() override = default;

  void
  PrintSelf(std::ostream & os, Indent indent) const override
  {
    Superclass::PrintSelf(os, indent);
    this->PrintExecution(os, indent);
  }

  void
  GenerateData() override
  {
    const TInputImage * input = this->GetInput();
    this->CheckInputNotEmpty(input);
    const std::string unsupported = GetCoreUnsupportedReason();
    if (!unsupported.empty())
    {
      this->RunOnGPUOrCPU(
        unsupported,
        [] {},
        [this] { Superclass::GenerateData(); },
        [&](CudaExecutionReport & report) { report.AddNote("ITK's implementation, because the cores take " + unsupported); });
      return;
    }
    if constexpr (ImageDimension >= 1 && ImageDimension <= 3)
    {
      cif::GradientRecursiveGaussianJob job;
      job.dimension = static_cast<int>(ImageDimension);
      const auto & region = input->GetBufferedRegion();
      const auto   sigma = this->GetSigmaArray();
      for (unsigned int a = 0; a < ImageDimension; ++a)
      {
        job.size[a] = static_cast<std::int64_t>(region.GetSize(a));
        job.sigma[a] = sigma[a];
        job.spacing[a] = input->GetSpacing()[a];
        for (unsigned int b = 0; b < ImageDimension; ++b)
        {
          job.direction[a][b] = input->GetDirection()[a][b];
        }
      }
      job.useImageDirection = this->GetUseImageDirection();
      job.normalizeAcrossScale = this->GetNormalizeAcrossScale();
      this->CheckCoreJob(cif::ValidateGradientRecursiveGaussianJob(job));
      this->AllocateOutputs();
      TOutputImage * output = this->GetOutput();
      if (output->GetBufferedRegion() != region)
      {
        itkExceptionMacro("the output's buffered region " << output->GetBufferedRegion()
                                                          << " is not the input's " << region);
      }
      using In = std::conditional_t<std::is_same<InputPixelType, unsigned char>::value ||
                                      std::is_same<InputPixelType, short>::value ||
                                      std::is_same<InputPixelType, unsigned short>::value ||
                                      std::is_same<InputPixelType, float>::value ||
                                      std::is_same<InputPixelType, double>::value,
                                    InputPixelType,
                                    float>;
      using Out = std::conditional_t<std::is_same<OutputComponentType, float>::value, float, double>;
      const In *        in = reinterpret_cast<const In *>(input->GetBufferPointer());
      Out *             out = reinterpret_cast<Out *>(output->GetBufferPointer());
      const std::size_t count = region.GetNumberOfPixels();
      this->RunOnGPUOrCPU(
        std::string(),
        [&]
        {
          cif::DeviceBuffer deviceIn;
          cif::DeviceBuffer deviceOut;
          deviceIn.Allocate(count * sizeof(In));
          deviceIn.CopyFromHost(in, count * sizeof(In));
          deviceOut.Allocate(count * ImageDimension * sizeof(Out));
          cif::GradientRecursiveGaussianCUDA(
            static_cast<const In *>(deviceIn.GetPointer()), static_cast<Out *>(deviceOut.GetPointer()), job);
          deviceOut.CopyToHost(out, count * ImageDimension * sizeof(Out));
        },
        [&]
        {
          cif::GradientRecursiveGaussianCPU(
            in, out, job, static_cast<int>(this->GetMultiThreader()->GetMaximumNumberOfThreads()));
        },
        [](CudaExecutionReport & report)
        {
          report.AddNote(report.Device == CudaExecutedOn::GPU ? "one thread per line, ITK's arithmetic in double"
                                                                : "the module's CPU core (ITK's arithmetic)");
        });
    }
  }
};

} // namespace itk

#endif
