/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaDescribedImageFilter_h
#define itkCudaDescribedImageFilter_h

#include "cif/Filter.h"
#include "itkCudaCompanionImage.h"
#include "itkCudaExecution.h"
#include "itkCudaSlabs.h"
#include "itkFixedArray.h"
#include "itkMultiThreaderBase.h"
#include "itkSize.h"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace itk
{

/** itk::ShrinkImageFilter's map from the output's index to the input's:
 * along axis a, output index i samples input index i f[a] + offset[a],
 * where the offsets put the output's first index on the input index nearest
 * to the same physical point (ITK's TransformIndexToPhysicalPoint and
 * TransformPhysicalPointToIndex, once for all axes), each at least 0 (ITK's
 * arithmetic, so the grids agree with ITK's wherever its rounding lands).
 * `factor(a)` gives the factor of axis a. */
template <typename TInputImage, typename TOutputImage, typename TFactor>
typename TInputImage::IndexType
CudaShrinkOffsets(const TInputImage * input, const TOutputImage * output, TFactor factor)
{
  const typename TOutputImage::IndexType first = output->GetLargestPossibleRegion().GetIndex();
  typename TOutputImage::PointType       point;
  output->TransformIndexToPhysicalPoint(first, point);
  const typename TInputImage::IndexType inputIndex = input->TransformPhysicalPointToIndex(point);
  typename TInputImage::IndexType       offsets;
  for (unsigned int a = 0; a < TInputImage::ImageDimension; ++a)
  {
    const IndexValueType offset = inputIndex[a] - first[a] * static_cast<IndexValueType>(factor(a));
    offsets[a] = offset > 0 ? offset : 0;
  }
  return offsets;
}


/** A radius, shrink factors or any per-axis setting of D values as a
 * description's per-axis values. */
template <unsigned int D, typename TArray>
std::vector<double>
CudaPerAxisValues(const TArray & perAxis)
{
  std::vector<double> values;
  for (unsigned int a = 0; a < D; ++a)
  {
    values.push_back(static_cast<double>(perAxis[a]));
  }
  return values;
}
/** A D x D matrix (an image's direction) as a described parameter's values,
 * row by row. */
template <unsigned int D, typename TMatrix>
std::vector<double>
CudaMatrixValues(const TMatrix & matrix)
{
  std::vector<double> values;
  for (unsigned int a = 0; a < D; ++a)
  {
    for (unsigned int b = 0; b < D; ++b)
    {
      values.push_back(static_cast<double>(matrix[a][b]));
    }
  }
  return values;
}
template <unsigned int D>
std::vector<double>
CudaRadiusValues(const Size<D> & radius)
{
  return CudaPerAxisValues<D>(radius);
}

/** \class CudaDescribedImageFilter
 * \brief The GenerateData of every module filter described in the core
 * (cif::FilterDescriptor): its ITK twin's API, the module's GPU and CPU
 * cores, slabs, and ITK's own implementation for requests the cores do not
 * take.
 *
 * A filter derives from this class with itself and its ITK twin:
 *
 * \code
 * template <typename TIn, typename TOut>
 * class CudaBinShrinkImageFilter
 *   : public CudaDescribedImageFilter<CudaBinShrinkImageFilter<TIn, TOut>, BinShrinkImageFilter<TIn, TOut>>
 * \endcode
 *
 * and gives `Description()`, the core's descriptor (static, or a member
 * for a class that runs any description), and the static
 * `DescribedParameters(const Self *)`, the twin's settings as the
 * descriptor's parameters (its Get methods, in the descriptor's names). It
 * may hide `CoreProblem(const Self *)` (static): why the cores cannot take
 * a setting of the twin that the description does not know (a structuring
 * element that is not a box, say; empty if they can); and `TwinName()` with
 * `TwinGenerateData()`, what runs such requests when the twin has no
 * implementation of its own (a filter with no ITK twin derives from
 * ImageToImageFilter and runs its own CPU core there). Everything else is the
 * twin's: its Set/Get methods, its output information and requested regions
 * (the output grid and the input region are ITK's, and the job follows the
 * buffered regions), PrintSelf.
 *
 * The update: the parameters are checked once (cif::CheckParameters:
 * invalid ones throw an itk::ExceptionObject before any work); the GPU or
 * the CPU runs as the execution mode decides (GetLastExecutionReport() says
 * where and why); host images too large for the device run in slabs where
 * the descriptor allows it; itk::CudaFilterImage data stays on the device.
 * Pixel types, dimensions or settings the cores do not take run the twin's
 * own GenerateData, and the report says why. Input and output pixels are
 * one type, or an integer input written as float where the description has
 * float-output entries, or any pair of the description's input and output
 * types where it chooses the output's apart (outputPixels: the threshold).
 * A twin that filters in place (InPlaceImageFilter) does so on both
 * devices: AllocateOutputs grafts the input, and the GPU reads it before
 * the output claims the buffer.
 *
 * \ingroup CudaImageFilters
 */
template <typename TSelf, typename TTwin>
class ITK_TEMPLATE_EXPORT CudaDescribedImageFilter
  : public TTwin
  , public CudaExecutionControl
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaDescribedImageFilter);

  using Superclass = TTwin;
  using InputImageType = typename TTwin::InputImageType;
  using OutputImageType = typename TTwin::OutputImageType;
  using InputPixelType = typename InputImageType::PixelType;
  using OutputPixelType = typename OutputImageType::PixelType;
  static constexpr unsigned int ImageDimension = InputImageType::ImageDimension;
  /** The output's component type: the pixel type itself, or the component
   * of a vector pixel (a gradient's CovariantVector). */
  using OutputComponentType = typename NumericTraits<OutputPixelType>::ValueType;
  /** Whether the output pixel is a fixed vector (CovariantVector, Vector:
   * FixedArrays) of one component per axis in an itk::Image
   * (FilterDescriptor::vectorOutput); not a VariableLengthVector. */
  static constexpr bool VectorOutput =
    std::is_base_of<FixedArray<OutputComponentType, ImageDimension>, OutputPixelType>::value &&
    sizeof(OutputPixelType) == ImageDimension * sizeof(OutputComponentType) &&
    std::is_base_of<Image<OutputPixelType, ImageDimension>, OutputImageType>::value;

  /** Why the module's cores cannot take the current request at all (then
   * ITK's own implementation runs); empty if they can. */
  std::string
  GetCoreUnsupportedReason() const
  {
    const std::string types = CoreTypesReason(this->Derived().Description());
    if (!types.empty())
    {
      return types;
    }
    const std::string companion = this->CompanionReason();
    return companion.empty() ? TSelf::CoreProblem(&this->Derived()) : companion;
  }

  /** For a description with a companion image (the mask filter's mask,
   * input 1): why the cores cannot take it (empty if they can, or while it
   * is not set: ITK's check of the required inputs speaks at the update).
   * It must be an itk::Image of one of the description's companion pixel
   * types whose buffered region, once buffered, is the image's; anything
   * else (a decorated constant, a mask buffered larger than the image)
   * runs the twin's implementation. */
  std::string
  CompanionReason() const
  {
    const cif::FilterDescriptor & description = this->Derived().Description();
    if (!description.HasCompanion())
    {
      return {};
    }
    const DataObject * object = this->ProcessObject::GetInput(1);
    if (object == nullptr)
    {
      return {};
    }
    const CudaCompanionImage<ImageDimension> companion(object);
    const std::string                        name = description.companion.name;
    if (!companion.IsImage())
    {
      return "the " + name + " is no itk::Image of unsigned char, short, unsigned short, float or double pixels in " +
             std::to_string(ImageDimension) + " dimensions (here " + object->GetNameOfClass() + ")";
    }
    const std::string pixel = cif::CompanionPixelProblem(description, companion.GetPixel());
    if (!pixel.empty())
    {
      return pixel;
    }
    const auto * input = this->GetInput();
    if (input != nullptr && input->GetBufferedRegion().GetNumberOfPixels() > 0 &&
        companion.GetImage()->GetBufferedRegion().GetNumberOfPixels() > 0 &&
        companion.GetImage()->GetBufferedRegion() != input->GetBufferedRegion())
    {
      return "the " + name + "'s buffered region differs from the image's";
    }
    return {};
  }

  /** Why the module's cores cannot take this class's pixel types and
   * dimension, whatever its settings (empty if they can): what the object
   * factory asks before it overrides the twin's instantiation. */
  static std::string
  CoreTypesReason(const cif::FilterDescriptor & description)
  {
    (void)description;
    if constexpr (!CoreTypes)
    {
      return std::string("the module's cores take images of 1 to 3 dimensions of unsigned char, short, unsigned "
                         "short, float or double pixels (or vectors of them, one component per axis, for a gradient) "
                         "(here ") +
             std::to_string(ImageDimension) + " dimensions, " + CudaPixelTypeName<InputPixelType>() + " to " +
             CudaPixelTypeName<OutputPixelType>() + ")";
    }
    else
    {
      const cif::Pixel              in = cif::PixelTypeOf<InputPixelType>();
      const cif::Pixel              out = cif::PixelTypeOf<OutputComponentType>();
      if (description.vectorOutput != VectorOutput)
      {
        return description.vectorOutput ? std::string("the module's cores write an itk::Image of vectors of ") +
                                            std::to_string(ImageDimension) + " components for this filter (here " +
                                            CudaPixelTypeName<OutputPixelType>() + ")"
                                        : std::string("the module's cores write scalar pixels for this filter (here ") +
                                            CudaPixelTypeName<OutputPixelType>() + ")";
      }
      const bool                    chosenOutput = !description.outputPixels.empty();
      const bool                    sameType = !chosenOutput && in == out && cif::HasPixel(description.cpuPixels, in);
      const bool                    toFloat = !chosenOutput && in != out && out == cif::Pixel::Float32 &&
                           cif::HasPixel(description.floatOutputPixels, in) && description.cpuFloatOutput;
      const bool anyOutput =
        chosenOutput && cif::HasPixel(description.cpuPixels, in) && cif::HasPixel(description.outputPixels, out);
      if (!sameType && !toFloat && !anyOutput)
      {
        const auto names = [](const std::vector<cif::Pixel> & pixels)
        {
          std::string types;
          for (cif::Pixel p : pixels)
          {
            types += std::string(types.empty() ? "" : ", ") + cif::PixelName(p);
          }
          return types;
        };
        return "the module's cores take " + names(description.cpuPixels) + " pixels into " +
               (chosenOutput ? names(description.outputPixels) : std::string("the same type")) +
               (description.floatOutputPixels.empty() ? std::string() : " (or integer pixels into float)") + " (here " +
               CudaPixelTypeName<InputPixelType>() + " to " + CudaPixelTypeName<OutputPixelType>() + ")";
      }
      if (static_cast<int>(ImageDimension) < description.minDimension ||
          static_cast<int>(ImageDimension) > description.maxDimension)
      {
        return "the module's cores take " + std::to_string(description.minDimension) + " to " +
               std::to_string(description.maxDimension) + " dimensions";
      }
      return {};
    }
  }

  /** Why the GPU cannot run the current request (empty if it can). */
  std::string
  GetGPUUnsupportedReason() const
  {
    const std::string core = this->GetCoreUnsupportedReason();
    if (!core.empty())
    {
      return core;
    }
    if constexpr (CoreTypes)
    {
      const cif::FilterDescriptor & description = this->Derived().Description();
      const auto *                  input = this->GetInput();
      cif::Parameters               parameters = TSelf::DescribedParameters(&this->Derived());
      cif::Extent                   extent = ExtentOf(typename InputImageType::RegionType());
      try
      {
        if (input != nullptr && input->GetLargestPossibleRegion().GetNumberOfPixels() > 0)
        {
          extent = ExtentOf(input->GetLargestPossibleRegion());
          Check(description, parameters, extent, cif::PixelTypeOf<InputPixelType>());
        }
        else
        {
          // no image yet: the parameters alone, on a nominal image
          cif::CompleteParameters(description, parameters, static_cast<int>(ImageDimension));
          for (unsigned int a = 0; a < ImageDimension; ++a)
          {
            extent.size[a] = 1;
          }
        }
      }
      catch (const std::invalid_argument & e)
      {
        return e.what();
      }
      return GpuProblemOf(parameters, extent);
    }
    return {};
  }

  /** The default: the cores take every setting the description knows. */
  static std::string
  CoreProblem(const TSelf *)
  {
    return {};
  }

  /** What runs the requests the cores do not take: by default the twin's
   * own GenerateData ("ITK's implementation"). A filter whose twin has none
   * (a plain ImageToImageFilter), or whose core is instantiated for more
   * pixel types than the description lists, hides both with its own
   * (TwinName may then depend on the request). */
  std::string
  TwinName() const
  {
    return "ITK's implementation";
  }
  void
  TwinGenerateData()
  {
    Superclass::GenerateData();
  }

protected:
  CudaDescribedImageFilter() = default;
  ~CudaDescribedImageFilter() override = default;

  void
  PrintSelf(std::ostream & os, Indent indent) const override
  {
    Superclass::PrintSelf(os, indent);
    this->PrintExecution(os, indent);
  }

  void
  GenerateData() override
  {
    this->CheckInputNotEmpty(this->GetInput());
    m_LastAlgorithm = -1;
    const std::string core = this->GetCoreUnsupportedReason();
    if (!core.empty())
    {
      this->RunOnGPUOrCPU(
        core,
        [] {},
        [this] { static_cast<TSelf *>(this)->TwinGenerateData(); },
        [this, &core](CudaExecutionReport & report)
        { report.AddNote(std::string(static_cast<const TSelf *>(this)->TwinName()) + ", because " + core); });
      return;
    }
    if constexpr (CoreTypes)
    {
      this->GenerateDescribedData();
    }
  }

  /** The algorithm the last GPU run took, as the index of the
   * description's algorithm choice (cif::EntryResult; -1: none, or the
   * CPU ran). */
  int
  GetLastCoreAlgorithm() const
  {
    return m_LastAlgorithm;
  }

  /** The settings as the description's parameters, checked on the whole
   * input as every face checks them (cif::CheckParameters; an invalid one
   * throws an itk::ExceptionObject). A pixel type the description does
   * not list (for a TwinGenerateData whose core is written for more types)
   * is checked as the description's first CPU type (the checks of the
   * filters that do this do not depend on it). */
  cif::Parameters
  CheckedParameters() const
  {
    const cif::FilterDescriptor & description = this->Derived().Description();
    cif::Pixel                    pixel = cif::PixelTypeOf<InputPixelType>();
    if (!CoreTypes || !cif::HasPixel(description.cpuPixels, pixel))
    {
      pixel = description.cpuPixels.front();
    }
    cif::Parameters parameters = TSelf::DescribedParameters(&this->Derived());
    try
    {
      Check(description, parameters, ExtentOf(this->GetInput()->GetLargestPossibleRegion()), pixel);
      if (description.HasCompanion() && this->ProcessObject::GetInput(1) != nullptr)
      {
        const CudaCompanionImage<ImageDimension> companion(this->ProcessObject::GetInput(1));
        if (companion.IsImage())
        {
          cif::CheckCompanion(description, parameters, companion.GetPixel());
        }
      }
    }
    catch (const std::invalid_argument & e)
    {
      itkExceptionMacro(<< e.what());
    }
    return parameters;
  }

  /** The job of this update: the input's buffered region, the output's
   * requested region (on the output grid for the Bin grid), with the
   * filter's progress events. */
  cif::Job
  RequestedJob(const cif::Parameters & parameters)
  {
    const auto inRegion = this->GetInput()->GetBufferedRegion();
    const auto outRegion = this->GetOutput()->GetRequestedRegion();
    cif::Job   job;
    job.dimension = static_cast<int>(ImageDimension);
    const cif::OutputGrid grid = this->Derived().Description().grid;
    const auto factor = [&](unsigned int a) { return cif::Value(parameters, "shrink_factors", static_cast<int>(a)); };
    typename InputImageType::IndexType offsets;
    offsets.Fill(0);
    if (grid == cif::OutputGrid::Subsample)
    {
      offsets = CudaShrinkOffsets(this->GetInput(), this->GetOutput(), factor);
    }
    for (unsigned int a = 0; a < ImageDimension && a < 3; ++a)
    {
      job.inputSize[a] = static_cast<std::int64_t>(inRegion.GetSize(a));
      job.outputSize[a] = static_cast<std::int64_t>(outRegion.GetSize(a));
      IndexValueType first = outRegion.GetIndex(a);
      if (grid != cif::OutputGrid::Same)
      {
        first = first * static_cast<IndexValueType>(factor(a)) + offsets[a];
      }
      job.outputStart[a] = first - inRegion.GetIndex(a);
    }
    job.progress = [this](double f) { this->UpdateProgress(static_cast<float>(f)); };
    if (!this->Derived().Description().outputPixels.empty())
    {
      job.outputPixel = cif::PixelTypeOf<OutputComponentType>();
    }
    return job;
  }

  /** The extent (dimension, size per axis) of a region of the images. */
  template <typename TRegion>
  static cif::Extent
  ExtentOf(const TRegion & region)
  {
    cif::Extent extent;
    extent.dimension = static_cast<int>(ImageDimension);
    for (unsigned int a = 0; a < ImageDimension && a < 3; ++a)
    {
      extent.size[a] = static_cast<std::int64_t>(region.GetSize(a));
    }
    return extent;
  }

  /** The CPU cores' thread count: the filter's multi-threader's. */
  int
  CoreThreads() const
  {
    const int threads = static_cast<int>(this->GetMultiThreader()->GetMaximumNumberOfThreads());
    return threads > 0 ? threads : 1;
  }

private:
  /** The filter itself (Description() may be static or a member). */
  const TSelf &
  Derived() const
  {
    return static_cast<const TSelf &>(*this);
  }

  /** The pixel types the cores are written for, in 1 to 3 dimensions. */
  static constexpr bool CoreTypes =
    ImageDimension <= 3 && CudaIsOneOf<InputPixelType, unsigned char, short, unsigned short, float, double> &&
    CudaIsOneOf<OutputComponentType, unsigned char, short, unsigned short, float, double> &&
    (std::is_same<OutputPixelType, OutputComponentType>::value || VectorOutput);

  /** cif::CheckParameters, with the output's pixel type for a filter
   * whose output type is chosen apart from the input's. */
  static void
  Check(const cif::FilterDescriptor & description,
        cif::Parameters &             parameters,
        const cif::Extent &           extent,
        cif::Pixel                    pixel)
  {
    if (description.outputPixels.empty())
    {
      cif::CheckParameters(description, parameters, extent, pixel);
    }
    else
    {
      cif::CheckParameters(description, parameters, extent, pixel, cif::PixelTypeOf<OutputComponentType>());
    }
  }

  /** Why the GPU cannot run checked parameters on an image of `extent`
   * (with `hostImages`, in automatic mode, also why host images stay on
   * the CPU: cif::GpuProblem). */
  std::string
  GpuProblemOf(const cif::Parameters & parameters, const cif::Extent & extent, bool hostImages = false) const
  {
    const cif::FilterDescriptor & description = this->Derived().Description();
    if (!std::is_same<InputPixelType, OutputPixelType>::value && description.outputPixels.empty() &&
        !description.cudaFloatOutput)
    {
      return "the GPU does not write float from integer pixels for this filter";
    }
    return cif::GpuProblem(
      description, cif::PixelTypeOf<InputPixelType>(), parameters, extent, this->GetExecutionMode(), hostImages);
  }

  void
  GenerateDescribedData()
  {
    const cif::FilterDescriptor & description = this->Derived().Description();
    const InputImageType *        input = this->GetInput();
    OutputImageType *             output = this->GetOutput();
    const cif::Pixel              pixel = cif::PixelTypeOf<InputPixelType>();
    const cif::Parameters         parameters = this->CheckedParameters();
    const cif::Extent             largest = ExtentOf(input->GetLargestPossibleRegion());
    if (description.warning)
    {
      // ITK's warning for valid but doubtful settings (an unstable time step)
      const std::string warning = description.warning(parameters, largest);
      if (!warning.empty())
      {
        itkWarningMacro(<< warning);
      }
    }
    this->AllocateOutputs();
    cif::Job job = this->RequestedJob(parameters);
    // the companion image (the mask), of the input's buffered region (CompanionReason)
    std::unique_ptr<CudaCompanionImage<ImageDimension>> companion;
    if (description.HasCompanion())
    {
      // (no std::make_unique: ITK 5.2's Python wrapping parses this header as C++11)
      companion.reset(new CudaCompanionImage<ImageDimension>(this->ProcessObject::GetInput(1)));
      job.companionPixel = companion->GetPixel();
    }
    // one type in and out (or an output type the filter chooses apart), or integers into float
    const bool sameType = std::is_same<InputPixelType, OutputPixelType>::value || !description.outputPixels.empty();
    const cif::Entry & cpu = sameType ? description.cpu : description.cpuFloatOutput;
    const cif::Entry & cuda = sameType ? description.cuda : description.cudaFloatOutput;
    const std::string  gpuProblem = GpuProblemOf(parameters, largest, CudaHostImages(input, output));
    cif::EntryResult   result;
    this->RunOnGPUOrCPU(
      gpuProblem,
      [&]
      {
        const auto core = [&](const InputPixelType * in, OutputPixelType * out, const cif::Job & piece)
        { result = cuda(pixel, in, out, piece, parameters, 0); };
        const cif::SlabPolicy policy = description.slabPolicy
                                         ? description.slabPolicy(parameters, cif::PixelTypeOf<OutputComponentType>())
                                         : cif::SlabPolicy{};
        const auto onePiece = [&]
        {
          CudaInputBuffer<InputImageType>   in(input);
          CudaOutputBuffer<OutputImageType> out(output);
          cif::Job                          whole = job;
          if (companion)
          {
            whole.companion = companion->GetDeviceBuffer();
          }
          core(in.Get(), out.Get(), whole);
          out.Commit();
        };
        if (description.cudaOnHost)
        {
          // the filter's own pieces (the prefilter's exact passes)
          this->SetLastSlabs(description.cudaOnHost(
            CudaHostImages(input, output),
            pixel,
            [input]() -> const void * { return input->GetBufferPointer(); },
            [output]() -> void * { return output->GetBufferPointer(); },
            job,
            parameters,
            onePiece));
        }
        else if (!VectorOutput && policy.slabs && description.grid == cif::OutputGrid::Same)
        {
          this->RunSlabs(input, output, job, parameters, policy, companion.get(), core, onePiece);
        }
        else
        {
          onePiece();
        }
        m_LastAlgorithm = result.algorithm;
      },
      [&]
      {
        cif::Job onHost = job;
        if (companion)
        {
          onHost.companion = companion->GetHostBuffer();
        }
        result =
          cpu(pixel, input->GetBufferPointer(), output->GetBufferPointer(), onHost, parameters, this->CoreThreads());
        m_LastAlgorithm = -1;
      },
      [&](CudaExecutionReport & report) { report.AddNote(result.note); });
    this->UpdateProgress(1.0f);
  }

  /** Host images too large for the device in slabs (the companion cut with
   * the input): filters on the input's grid with scalar outputs. */
  template <typename TCore, typename TOnePiece>
  void
  RunSlabs(const InputImageType *                     input,
           OutputImageType *                          output,
           const cif::Job &                           job,
           const cif::Parameters &                    parameters,
           const cif::SlabPolicy &                    policy,
           const CudaCompanionImage<ImageDimension> * companion,
           const TCore &                              core,
           const TOnePiece &                          onePiece)
  {
    if constexpr (!VectorOutput)
    {
      const cif::FilterDescriptor & description = this->Derived().Description();
      this->SetLastSlabs(cif::RunNeighbourhoodJobCUDA<InputPixelType, OutputPixelType>(
        CudaHostImages(input, output) && (companion == nullptr || companion->IsHost()),
        [input] { return input->GetBufferPointer(); },
        [output] { return output->GetBufferPointer(); },
        job,
        description.halo ? description.halo(parameters, job.dimension) : std::array<std::int64_t, 3>{ 0, 0, 0 },
        policy.kernelWritesInputPlanes,
        policy.workBytesPerInputPixel,
        core,
        onePiece,
        [this](double f) { this->UpdateProgress(static_cast<float>(f)); },
        companion != nullptr ? cif::PixelBytes(companion->GetPixel()) : 0,
        [companion] { return companion->GetHostBuffer(); }));
    }
    else
    {
      (void)input, (void)output, (void)job, (void)parameters, (void)policy, (void)companion, (void)core;
      onePiece();
    }
  }

  int m_LastAlgorithm{ -1 };
};

} // namespace itk

#endif
