/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaDescribedImageFilter_h
#define itkCudaDescribedImageFilter_h

#include "cif/Filter.h"
#include "itkCudaExecution.h"
#include "itkCudaSlabs.h"

#include <stdexcept>
#include <string>
#include <type_traits>

namespace itk
{

/** \class CudaDescribedImageFilter
 * \brief The GenerateData of every module filter described in the core
 * (cif::FilterDescriptor): its ITK twin's API, the module's GPU and CPU
 * cores, slabs, and ITK's own implementation for pixel types the cores do
 * not take.
 *
 * A filter derives from this class with itself and its ITK twin:
 *
 * \code
 * template <typename TIn, typename TOut>
 * class CudaBinShrinkImageFilter
 *   : public CudaDescribedImageFilter<CudaBinShrinkImageFilter<TIn, TOut>, BinShrinkImageFilter<TIn, TOut>>
 * \endcode
 *
 * and gives two static members: `Description()`, the core's descriptor,
 * and `DescribedParameters(const Self *)`, the twin's settings as the
 * descriptor's parameters (its Get methods, in the descriptor's names).
 * Everything else is the twin's: its Set/Get methods, its output
 * information and requested regions (the output grid and the input region
 * are ITK's, and the job follows the buffered regions), PrintSelf.
 *
 * The update: the parameters are checked once (cif::CheckParameters:
 * invalid ones throw an itk::ExceptionObject before any work); the GPU or
 * the CPU runs as the execution mode decides (GetLastExecutionReport() says
 * where and why); host images too large for the device run in slabs where
 * the descriptor allows it; itk::CudaFilterImage data stays on the device.
 * Pixel types or dimensions the cores do not take run the twin's own
 * GenerateData, and the report says so.
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

  /** True when the module's cores take these images (else the twin runs). */
  static constexpr bool CoresTakeTheseImages =
    std::is_same<InputPixelType, OutputPixelType>::value && ImageDimension <= 3 &&
    CudaIsOneOf<InputPixelType, unsigned char, short, unsigned short, float, double>;

  /** Why the GPU cannot run the current request (empty if it can). */
  std::string
  GetGPUUnsupportedReason() const
  {
    if constexpr (!CoresTakeTheseImages)
    {
      return std::string("the module's cores take images of 1 to 3 dimensions whose input and output pixels are "
                         "the same scalar type (here ") +
             CudaPixelTypeName<InputPixelType>() + " to " + CudaPixelTypeName<OutputPixelType>() + ")";
    }
    else
    {
      const auto * input = this->GetInput();
      cif::Extent  extent = ExtentOf(input ? input->GetLargestPossibleRegion() : typename InputImageType::RegionType());
      cif::Parameters parameters = TSelf::DescribedParameters(static_cast<const TSelf *>(this));
      try
      {
        cif::CheckParameters(TSelf::Description(), parameters, extent, PixelOf());
      }
      catch (const std::invalid_argument & e)
      {
        return e.what();
      }
      return cif::GpuProblem(TSelf::Description(), PixelOf(), parameters, extent);
    }
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
    if constexpr (!CoresTakeTheseImages)
    {
      this->RunOnGPUOrCPU(
        this->GetGPUUnsupportedReason(),
        [] {},
        [this] { Superclass::GenerateData(); },
        [](CudaExecutionReport & report) { report.AddNote("ITK's own implementation"); });
    }
    else
    {
      this->GenerateDescribedData();
    }
  }

private:
  static cif::Pixel
  PixelOf()
  {
    if constexpr (std::is_same<InputPixelType, unsigned char>::value)
      return cif::Pixel::UInt8;
    else if constexpr (std::is_same<InputPixelType, short>::value)
      return cif::Pixel::Int16;
    else if constexpr (std::is_same<InputPixelType, unsigned short>::value)
      return cif::Pixel::UInt16;
    else if constexpr (std::is_same<InputPixelType, float>::value)
      return cif::Pixel::Float32;
    else
      return cif::Pixel::Float64;
  }

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

  void
  GenerateDescribedData()
  {
    const cif::FilterDescriptor & description = TSelf::Description();
    const InputImageType *        input = this->GetInput();
    OutputImageType *             output = this->GetOutput();
    // the whole image's parameters are checked, as every face checks them
    cif::Parameters parameters = TSelf::DescribedParameters(static_cast<const TSelf *>(this));
    const cif::Extent whole = ExtentOf(input->GetLargestPossibleRegion());
    try
    {
      cif::CheckParameters(description, parameters, whole, PixelOf());
    }
    catch (const std::invalid_argument & e)
    {
      itkExceptionMacro(<< e.what());
    }
    this->AllocateOutputs();
    // the job: the input's buffered region, the output's requested region
    const auto inRegion = input->GetBufferedRegion();
    const auto outRegion = output->GetRequestedRegion();
    cif::Job   job;
    job.dimension = static_cast<int>(ImageDimension);
    for (unsigned int a = 0; a < ImageDimension; ++a)
    {
      job.inputSize[a] = static_cast<std::int64_t>(inRegion.GetSize(a));
      job.outputSize[a] = static_cast<std::int64_t>(outRegion.GetSize(a));
      const auto first = description.grid == cif::OutputGrid::Bin
                           ? outRegion.GetIndex(a) * static_cast<IndexValueType>(cif::Value(parameters, "shrink_factors", a))
                           : outRegion.GetIndex(a);
      job.outputStart[a] = first - inRegion.GetIndex(a);
    }
    const cif::Extent buffered = ExtentOf(inRegion);
    const cif::Pixel  pixel = PixelOf();
    std::string       note;
    this->RunOnGPUOrCPU(
      cif::GpuProblem(description, pixel, parameters, buffered),
      [&]
      {
        const auto core = [&](const InputPixelType * in, OutputPixelType * out, const cif::Job & piece)
        { note = description.cuda(pixel, in, out, piece, parameters, 0); };
        const cif::SlabPolicy policy =
          description.slabPolicy ? description.slabPolicy(parameters, pixel) : cif::SlabPolicy{};
        if (policy.slabs && description.grid == cif::OutputGrid::Same)
        {
          this->SetLastSlabs(CudaRunNeighbourhoodJob(input,
                                                     output,
                                                     job,
                                                     description.halo ? description.halo(parameters, job.dimension)
                                                                      : std::array<std::int64_t, 3>{ 0, 0, 0 },
                                                     policy.kernelWritesInputPlanes,
                                                     policy.workBytesPerInputPixel,
                                                     core,
                                                     [this](double f) { this->UpdateProgress(static_cast<float>(f)); }));
        }
        else
        {
          CudaInputBuffer<InputImageType>   in(input);
          CudaOutputBuffer<OutputImageType> out(output);
          core(in.Get(), out.Get(), job);
          out.Commit();
        }
      },
      [&]
      {
        const int threads = static_cast<int>(this->GetMultiThreader()->GetMaximumNumberOfThreads());
        note = description.cpu(
          pixel, input->GetBufferPointer(), output->GetBufferPointer(), job, parameters, threads > 0 ? threads : 1);
      },
      [&](CudaExecutionReport & report) { report.AddNote(note); });
  }
};

} // namespace itk

#endif
