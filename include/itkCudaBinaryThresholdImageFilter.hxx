/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaBinaryThresholdImageFilter_hxx
#define itkCudaBinaryThresholdImageFilter_hxx

#include "itkCudaBinaryThresholdImageFilter.h"
#include "itkCudaSlabs.h"
#include "itkCudaMaskFilterDetail.h"
#include "itkMultiThreaderBase.h"

namespace itk
{

namespace CudaBinaryThresholdDetail
{
template <typename TIn, typename TOut, unsigned int D>
constexpr bool                              CoreSupports =
  CudaMaskFilterDetail::IsCorePixel<TIn> && CudaMaskFilterDetail::IsCorePixel<TOut> && D >= 1 && D <= 3;

/** The output region's samples inside the input buffer: offset of its first sample and the pitches. */
template <unsigned int D>
std::int64_t
MakeGeometry(const ImageRegion<D> & inputBuffered, const ImageRegion<D> & output, cif::ElementwiseGeometry & g)
{
  std::int64_t offset = 0, stride = 1;
  for (unsigned int a = 0; a < D; ++a)
  {
    offset += (output.GetIndex(a) - inputBuffered.GetIndex(a)) * stride;
    if (a < 3)
    {
      g.size[a] = static_cast<std::int64_t>(output.GetSize(a));
    }
    if (a == 0)
    {
      g.inputRowPitch = static_cast<std::int64_t>(inputBuffered.GetSize(0));
    }
    if (a == 1)
    {
      g.inputSlicePitch = g.inputRowPitch * static_cast<std::int64_t>(inputBuffered.GetSize(1));
    }
    stride *= static_cast<std::int64_t>(inputBuffered.GetSize(a));
  }
  return offset;
}
} // namespace CudaBinaryThresholdDetail

template <typename TInputImage, typename TOutputImage>
std::string
CudaBinaryThresholdImageFilter<TInputImage, TOutputImage>::GetGPUUnsupportedReason() const
{
  if (!CudaBinaryThresholdDetail::CoreSupports<InputPixelType, OutputPixelType, ImageDimension>)
  {
    return std::string("the GPU thresholds 1 to 3 dimensions, with input and output pixels among unsigned char, "
                       "short, unsigned short and float (here ") +
           CudaPixelTypeName<InputPixelType>() + " to " + CudaPixelTypeName<OutputPixelType>() + ")";
  }
  if (!cif::PackedMaskCUDAIsCompiled())
  {
    return "this build has no CUDA code";
  }
  return {};
}

template <typename TInputImage, typename TOutputImage>
void
CudaBinaryThresholdImageFilter<TInputImage, TOutputImage>::GenerateData()
{
  this->CheckInputNotEmpty(this->GetInput());
  // ITK's own checks (lower > upper throws) and functor set-up
  this->BeforeThreadedGenerateData();
  this->RunOnGPUOrCPU(
    this->GetGPUUnsupportedReason(), [this] { this->GPUGenerateData(); }, [this] { this->CPUGenerateData(); });
}

template <typename TInputImage, typename TOutputImage>
void
CudaBinaryThresholdImageFilter<TInputImage, TOutputImage>::GPUGenerateData()
{
  if constexpr (CudaBinaryThresholdDetail::CoreSupports<InputPixelType, OutputPixelType, ImageDimension>)
  {
    this->AllocateOutputs(); // grafts the input when running in place
    cif::ElementwiseGeometry g;
    const std::int64_t       offset = CudaBinaryThresholdDetail::MakeGeometry<ImageDimension>(
      this->GetInput()->GetBufferedRegion(), this->GetOutput()->GetBufferedRegion(), g);
    auto run = [this](const InputPixelType * in, OutputPixelType * out, const cif::ElementwiseGeometry & job)
    {
      cif::ThresholdCUDA(in,
                         out,
                         job,
                         this->GetLowerThreshold(),
                         this->GetUpperThreshold(),
                         this->GetInsideValue(),
                         this->GetOutsideValue());
    };
    // slabs (no halo) when the input buffer is the output region, also in
    // place: each slab reads its planes before any of them is written
    const bool      dense = this->GetInput()->GetBufferedRegion() == this->GetOutput()->GetBufferedRegion();
    cif::MaskExtent extent;
    for (int a = 0; a < 3; ++a)
    {
      extent.size[a] = g.size[a];
    }
    this->SetLastSlabs(cif::RunMaskJobCUDA(
      dense && CudaHostImages(this->GetInput(), this->GetOutput()),
      extent,
      { sizeof(InputPixelType) },
      sizeof(OutputPixelType),
      [&]() -> std::vector<const void *> { return { this->GetInput()->GetBufferPointer() }; },
      [&]() -> void * { return this->GetOutput()->GetBufferPointer(); },
      [&](const void * const * in, void * out, const cif::MaskExtent & slabExtent)
      {
        cif::ElementwiseGeometry job = g;
        for (int a = 0; a < 3; ++a)
        {
          job.size[a] = slabExtent.size[a];
        }
        run(static_cast<const InputPixelType *>(in[0]), static_cast<OutputPixelType *>(out), job);
      },
      [&]
      {
        // the input first: in place, its device copy must be current before the output claims it for writing
        CudaInputBuffer<TInputImage>   input(this->GetInput());
        CudaOutputBuffer<TOutputImage> output(this->GetOutput());
        run(input.Get() + offset, output.Get(), g);
        output.Commit();
      }));
  }
  else
  {
    itkExceptionMacro(<< "GPU path called for an unsupported request");
  }
}

template <typename TInputImage, typename TOutputImage>
void
CudaBinaryThresholdImageFilter<TInputImage, TOutputImage>::CPUGenerateData()
{
  if constexpr (CudaBinaryThresholdDetail::CoreSupports<InputPixelType, OutputPixelType, ImageDimension>)
  {
    this->AllocateOutputs();
    cif::ElementwiseGeometry g;
    const std::int64_t       offset = CudaBinaryThresholdDetail::MakeGeometry<ImageDimension>(
      this->GetInput()->GetBufferedRegion(), this->GetOutput()->GetBufferedRegion(), g);
    const InputPixelType * in = this->GetInput()->GetBufferPointer();
    OutputPixelType *      out = this->GetOutput()->GetBufferPointer();
    cif::ThresholdCPU(in + offset,
                      out,
                      g,
                      this->GetLowerThreshold(),
                      this->GetUpperThreshold(),
                      this->GetInsideValue(),
                      this->GetOutsideValue(),
                      static_cast<int>(this->GetMultiThreader()->GetMaximumNumberOfThreads()));
  }
  else
  {
    Superclass::GenerateData(); // ITK's implementation
  }
}

template <typename TInputImage, typename TOutputImage>
void
CudaBinaryThresholdImageFilter<TInputImage, TOutputImage>::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  this->PrintExecution(os, indent);
}

} // namespace itk

#endif
