/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaKernelSuperpositionImageFilter_hxx
#define itkCudaKernelSuperpositionImageFilter_hxx

#include "itkCudaKernelSuperpositionImageFilter.h"
#include "itkMultiThreaderBase.h"

#include <cmath>
#include <sstream>
#include <type_traits>

namespace itk
{

namespace CudaKernelSuperpositionDetail
{
/** Pixel types the CPU core is instantiated for (src/core/kernel_superposition/KernelSuperpositionCPU.cxx). */
template <typename TIn, typename TSigma>
constexpr bool                                                             CPUCoreSupports =
  CudaIsOneOf<TIn, unsigned char, short, unsigned short, float, double> && CudaIsOneOf<TSigma, float, double>;

/** Pixel types the GPU core is instantiated for (src/core/kernel_superposition/KernelSuperposition.cu). */
template <typename TIn, typename TSigma, typename TOut>
constexpr bool GPUCoreSupports = CudaIsOneOf<TIn, unsigned char, short, unsigned short, float> &&
  std::is_same<TSigma, float>::value && std::is_same<TOut, float>::value;

inline std::string
AxisInputName(unsigned int axis)
{
  return "SigmaMapAxis" + std::to_string(axis);
}
} // namespace CudaKernelSuperpositionDetail

template <typename TInputImage, typename TOutputImage, typename TSigmaImage>
CudaKernelSuperpositionImageFilter<TInputImage, TOutputImage, TSigmaImage>::CudaKernelSuperpositionImageFilter()
{
  this->AddOptionalInputName("SigmaMap");
  for (unsigned int a = 0; a < ImageDimension; ++a)
  {
    this->AddOptionalInputName(CudaKernelSuperpositionDetail::AxisInputName(a).c_str());
  }
}

template <typename TInputImage, typename TOutputImage, typename TSigmaImage>
void
CudaKernelSuperpositionImageFilter<TInputImage, TOutputImage, TSigmaImage>::SetSigmaMap(const SigmaImageType * sigma)
{
  this->ProcessObject::SetInput("SigmaMap", const_cast<SigmaImageType *>(sigma));
}

template <typename TInputImage, typename TOutputImage, typename TSigmaImage>
auto
CudaKernelSuperpositionImageFilter<TInputImage, TOutputImage, TSigmaImage>::GetSigmaMap() const
  -> const SigmaImageType *
{
  return itkDynamicCastInDebugMode<const SigmaImageType *>(this->ProcessObject::GetInput("SigmaMap"));
}

template <typename TInputImage, typename TOutputImage, typename TSigmaImage>
void
CudaKernelSuperpositionImageFilter<TInputImage, TOutputImage, TSigmaImage>::SetSigmaMapForAxis(
  unsigned int           axis,
  const SigmaImageType * sigma)
{
  if (axis >= ImageDimension)
  {
    itkExceptionMacro(<< "SetSigmaMapForAxis: axis " << axis << " of a " << ImageDimension << "-D image");
  }
  this->ProcessObject::SetInput(CudaKernelSuperpositionDetail::AxisInputName(axis),
                                const_cast<SigmaImageType *>(sigma));
}

template <typename TInputImage, typename TOutputImage, typename TSigmaImage>
auto
CudaKernelSuperpositionImageFilter<TInputImage, TOutputImage, TSigmaImage>::GetSigmaMapForAxis(unsigned int axis) const
  -> const SigmaImageType *
{
  if (axis >= ImageDimension)
  {
    return nullptr;
  }
  return itkDynamicCastInDebugMode<const SigmaImageType *>(
    this->ProcessObject::GetInput(CudaKernelSuperpositionDetail::AxisInputName(axis)));
}

template <typename TInputImage, typename TOutputImage, typename TSigmaImage>
auto
CudaKernelSuperpositionImageFilter<TInputImage, TOutputImage, TSigmaImage>::SigmaMapsInUse() const
  -> std::vector<const SigmaImageType *>
{
  std::vector<const SigmaImageType *> perAxis;
  for (unsigned int a = 0; a < ImageDimension; ++a)
  {
    if (this->GetSigmaMapForAxis(a) != nullptr)
    {
      perAxis.push_back(this->GetSigmaMapForAxis(a));
    }
  }
  const SigmaImageType * isotropic = this->GetSigmaMap();
  if (isotropic != nullptr && !perAxis.empty())
  {
    itkExceptionMacro(<< "Both an isotropic sigma map (SetSigmaMap) and per-axis maps (SetSigmaMapForAxis) are set; "
                         "use one or the other");
  }
  if (isotropic != nullptr)
  {
    return { isotropic };
  }
  if (perAxis.empty())
  {
    itkExceptionMacro(<< "No sigma map: call SetSigmaMap (isotropic) or SetSigmaMapForAxis for every axis");
  }
  if (perAxis.size() != ImageDimension)
  {
    itkExceptionMacro(<< "Per-axis sigma maps: " << perAxis.size() << " of " << ImageDimension
                      << " axes are set; set one for every axis");
  }
  return perAxis;
}

template <typename TInputImage, typename TOutputImage, typename TSigmaImage>
cif::KernelSuperpositionParameters
CudaKernelSuperpositionImageFilter<TInputImage, TOutputImage, TSigmaImage>::MakeParameters() const
{
  cif::KernelSuperpositionParameters p;
  p.cutoff = m_Cutoff;
  p.cutoffMass = m_CutoffMass;
  p.method = m_Method;
  const auto spacing = this->GetInput()->GetSpacing();
  for (unsigned int a = 0; a < ImageDimension && a < 3; ++a)
  {
    p.pixelsPerUnit[a] = 1.0 / spacing[a];
  }
  return p;
}

template <typename TInputImage, typename TOutputImage, typename TSigmaImage>
auto
CudaKernelSuperpositionImageFilter<TInputImage, TOutputImage, TSigmaImage>::ComputeLargestRadius() const -> SizeType
{
  using namespace CudaKernelSuperpositionDetail;
  SizeType radius;
  radius.Fill(0);
  if constexpr (CPUCoreSupports<InputPixelType, SigmaPixelType> && ImageDimension <= 3)
  {
    const auto                               maps = this->SigmaMapsInUse();
    cif::KernelSuperpositionGeometry         g;
    cif::SigmaMaps<SigmaPixelType>           sigma;
    const cif::KernelSuperpositionParameters p = this->MakeParameters();
    const auto                               size = maps[0]->GetBufferedRegion().GetSize();
    g.dimension = static_cast<int>(ImageDimension);
    for (unsigned int a = 0; a < ImageDimension; ++a)
    {
      g.inputSize[a] = g.outputSize[a] = static_cast<std::int64_t>(size[a]);
    }
    for (std::size_t m = 0; m < maps.size(); ++m)
    {
      if (maps[m]->GetBufferedRegion() != maps[0]->GetBufferedRegion() ||
          maps[m]->GetBufferedRegion().GetNumberOfPixels() == 0)
      {
        itkExceptionMacro(<< "The sigma maps are not up to date (buffered regions "
                          << maps[0]->GetBufferedRegion().GetSize() << " and " << maps[m]->GetBufferedRegion().GetSize()
                          << "): update them first");
      }
      sigma.axis[m] = maps[m]->GetBufferPointer();
    }
    try
    {
      const int  threads = static_cast<int>(MultiThreaderBase::GetGlobalDefaultNumberOfThreads());
      const auto r = cif::KernelSuperpositionLargestRadiusCPU(sigma, g, p, threads);
      for (unsigned int a = 0; a < ImageDimension; ++a)
      {
        radius[a] = static_cast<typename SizeType::SizeValueType>(r.radius[a]);
      }
    }
    catch (const std::invalid_argument & bad)
    {
      itkExceptionMacro(<< bad.what());
    }
  }
  else
  {
    itkExceptionMacro(<< this->CPUUnsupportedReason());
  }
  return radius;
}

template <typename TInputImage, typename TOutputImage, typename TSigmaImage>
std::string
CudaKernelSuperpositionImageFilter<TInputImage, TOutputImage, TSigmaImage>::CPUUnsupportedReason() const
{
  std::ostringstream why;
  if (ImageDimension > 3)
  {
    why << "the filter handles 1 to 3 dimensions, not " << ImageDimension;
  }
  else if (!CudaKernelSuperpositionDetail::CPUCoreSupports<InputPixelType, SigmaPixelType>)
  {
    why << "the filter handles unsigned char, short, unsigned short, float and double images with float or double "
           "sigma maps, not "
        << CudaPixelTypeName<InputPixelType>() << " images with " << CudaPixelTypeName<SigmaPixelType>()
        << " sigma maps";
  }
  return why.str();
}

template <typename TInputImage, typename TOutputImage, typename TSigmaImage>
std::string
CudaKernelSuperpositionImageFilter<TInputImage, TOutputImage, TSigmaImage>::GetGPUUnsupportedReason() const
{
  std::ostringstream why;
  if (!cif::KernelSuperpositionCUDAIsCompiled())
  {
    why << "this build has no CUDA code";
  }
  else if (ImageDimension > 3)
  {
    why << "the GPU path handles 1 to 3 dimensions, not " << ImageDimension;
  }
  else if (!CudaKernelSuperpositionDetail::GPUCoreSupports<InputPixelType, SigmaPixelType, OutputPixelType>)
  {
    why << "the GPU path handles unsigned char, short, unsigned short and float images with float sigma maps and "
           "float output, not "
        << CudaPixelTypeName<InputPixelType>() << " -> " << CudaPixelTypeName<OutputPixelType>() << " with "
        << CudaPixelTypeName<SigmaPixelType>() << " sigma maps";
  }
  return why.str();
}

template <typename TInputImage, typename TOutputImage, typename TSigmaImage>
void
CudaKernelSuperpositionImageFilter<TInputImage, TOutputImage, TSigmaImage>::VerifyPreconditions() ITKv5_CONST
{
  Superclass::VerifyPreconditions();
  this->SigmaMapsInUse(); // throws when the maps are missing or mixed
  if (!(m_Cutoff > 0.0) || !(m_Cutoff <= 100.0))
  {
    itkExceptionMacro(<< "Cutoff must be positive and at most 100 sigmas, not " << m_Cutoff);
  }
  const std::string cpu = this->CPUUnsupportedReason();
  if (!cpu.empty())
  {
    itkExceptionMacro(<< cpu);
  }
}

template <typename TInputImage, typename TOutputImage, typename TSigmaImage>
void
CudaKernelSuperpositionImageFilter<TInputImage, TOutputImage, TSigmaImage>::VerifyInputInformation() ITKv5_CONST
{
  Superclass::VerifyInputInformation(); // origin, spacing and direction agree
  const auto region = this->GetInput()->GetLargestPossibleRegion();
  for (const SigmaImageType * map : this->SigmaMapsInUse())
  {
    if (map->GetLargestPossibleRegion() != region)
    {
      itkExceptionMacro(<< "The sigma map's region (index " << map->GetLargestPossibleRegion().GetIndex() << ", size "
                        << map->GetLargestPossibleRegion().GetSize() << ") differs from the image's (index "
                        << region.GetIndex() << ", size " << region.GetSize()
                        << "); the sigma maps must be on the image's grid");
    }
  }
  const auto spacing = this->GetInput()->GetSpacing();
  for (unsigned int a = 0; a < ImageDimension; ++a)
  {
    if (!(spacing[a] > 0.0) || !std::isfinite(spacing[a]))
    {
      itkExceptionMacro(<< "The image's spacing must be positive and finite, not " << spacing);
    }
  }
}

template <typename TInputImage, typename TOutputImage, typename TSigmaImage>
void
CudaKernelSuperpositionImageFilter<TInputImage, TOutputImage, TSigmaImage>::GenerateOutputInformation()
{
  Superclass::GenerateOutputInformation();
  const TInputImage * input = this->GetInput();
  if (input == nullptr)
  {
    return;
  }
  const auto region = input->GetLargestPossibleRegion();
  if (region.GetNumberOfPixels() == 0)
  {
    itkExceptionMacro(<< "The input image is empty (size " << region.GetSize() << ")");
  }
  if (!m_PadOutput)
  {
    return;
  }
  // The padding depends on the sigma values: bring the maps up to date.
  for (const SigmaImageType * map : this->SigmaMapsInUse())
  {
    auto * writable = const_cast<SigmaImageType *>(map);
    writable->SetRequestedRegionToLargestPossibleRegion();
    writable->Update();
  }
  const SizeType radius = this->ComputeLargestRadius();
  auto           padded = region;
  for (unsigned int a = 0; a < ImageDimension; ++a)
  {
    padded.SetIndex(a, region.GetIndex(a) - static_cast<IndexValueType>(radius[a]));
    padded.SetSize(a, region.GetSize(a) + 2 * radius[a]);
  }
  this->GetOutput()->SetLargestPossibleRegion(padded);
}

template <typename TInputImage, typename TOutputImage, typename TSigmaImage>
void
CudaKernelSuperpositionImageFilter<TInputImage, TOutputImage, TSigmaImage>::GenerateInputRequestedRegion()
{
  Superclass::GenerateInputRequestedRegion();
  for (itk::DataObject * object : this->GetInputs())
  {
    if (auto * image = dynamic_cast<ImageBase<ImageDimension> *>(object))
    {
      image->SetRequestedRegionToLargestPossibleRegion();
    }
  }
}

template <typename TInputImage, typename TOutputImage, typename TSigmaImage>
void
CudaKernelSuperpositionImageFilter<TInputImage, TOutputImage, TSigmaImage>::EnlargeOutputRequestedRegion(
  DataObject * output)
{
  Superclass::EnlargeOutputRequestedRegion(output);
  if (output != nullptr)
  {
    output->SetRequestedRegionToLargestPossibleRegion();
  }
}

template <typename TInputImage, typename TOutputImage, typename TSigmaImage>
cif::KernelSuperpositionGeometry
CudaKernelSuperpositionImageFilter<TInputImage, TOutputImage, TSigmaImage>::MakeGeometry() const
{
  const auto                       in = this->GetInput()->GetBufferedRegion();
  const auto                       out = this->GetOutput()->GetBufferedRegion();
  cif::KernelSuperpositionGeometry g;
  g.dimension = static_cast<int>(ImageDimension);
  for (unsigned int a = 0; a < ImageDimension && a < 3; ++a)
  {
    g.inputSize[a] = static_cast<std::int64_t>(in.GetSize(a));
    g.outputStart[a] = out.GetIndex(a) - in.GetIndex(a);
    g.outputSize[a] = static_cast<std::int64_t>(out.GetSize(a));
  }
  return g;
}

template <typename TInputImage, typename TOutputImage, typename TSigmaImage>
void
CudaKernelSuperpositionImageFilter<TInputImage, TOutputImage, TSigmaImage>::GenerateData()
{
  const TInputImage * input = this->GetInput();
  this->CheckInputNotEmpty(input);
  for (const SigmaImageType * map : this->SigmaMapsInUse())
  {
    if (map->GetBufferedRegion() != input->GetBufferedRegion())
    {
      itkExceptionMacro(<< "The sigma map's buffered region " << map->GetBufferedRegion()
                        << " differs from the image's " << input->GetBufferedRegion());
    }
  }
  TOutputImage * output = this->GetOutput();
  output->SetBufferedRegion(output->GetRequestedRegion());
  output->Allocate();

  m_LastNote.clear();
  this->RunOnGPUOrCPU(
    this->GetGPUUnsupportedReason(),
    [this] { this->GPUGenerateData(); },
    [this] { this->CPUGenerateData(); },
    [this](CudaExecutionReport & report) { report.AddNote(m_LastNote); });
}

template <typename TInputImage, typename TOutputImage, typename TSigmaImage>
void
CudaKernelSuperpositionImageFilter<TInputImage, TOutputImage, TSigmaImage>::GPUGenerateData()
{
  using namespace CudaKernelSuperpositionDetail;
  if constexpr (GPUCoreSupports<InputPixelType, SigmaPixelType, OutputPixelType> && ImageDimension <= 3)
  {
    const auto geometry = this->MakeGeometry();
    const auto parameters = this->MakeParameters();
    this->CheckCoreJob(cif::ValidateKernelSuperpositionJob(geometry, parameters));
    const auto                                                 maps = this->SigmaMapsInUse();
    std::vector<std::unique_ptr<CudaInputBuffer<TSigmaImage>>> sigmaBuffers;
    cif::SigmaMaps<float>                                      sigma;
    for (std::size_t m = 0; m < maps.size(); ++m)
    {
      sigmaBuffers.push_back(std::make_unique<CudaInputBuffer<TSigmaImage>>(maps[m]));
      sigma.axis[m] = sigmaBuffers.back()->Get();
    }
    CudaInputBuffer<TInputImage>   input(this->GetInput());
    CudaOutputBuffer<TOutputImage> output(this->GetOutput());
    try
    {
      m_LastNote = cif::KernelSuperpositionCUDA(input.Get(), sigma, output.Get(), geometry, parameters);
    }
    catch (const std::invalid_argument & bad)
    {
      itkExceptionMacro(<< bad.what());
    }
    output.Commit();
    this->UpdateProgress(1.0f);
  }
  else
  {
    itkExceptionMacro(<< "GPU path called for an unsupported request");
  }
}

template <typename TInputImage, typename TOutputImage, typename TSigmaImage>
void
CudaKernelSuperpositionImageFilter<TInputImage, TOutputImage, TSigmaImage>::CPUGenerateData()
{
  using namespace CudaKernelSuperpositionDetail;
  if constexpr (CPUCoreSupports<InputPixelType, SigmaPixelType> && ImageDimension <= 3)
  {
    const auto geometry = this->MakeGeometry();
    const auto parameters = this->MakeParameters();
    this->CheckCoreJob(cif::ValidateKernelSuperpositionJob(geometry, parameters));
    const auto                     maps = this->SigmaMapsInUse();
    cif::SigmaMaps<SigmaPixelType> sigma;
    for (std::size_t m = 0; m < maps.size(); ++m)
    {
      sigma.axis[m] = maps[m]->GetBufferPointer();
    }
    const int threads = static_cast<int>(this->GetMultiThreader()->GetMaximumNumberOfThreads());
    try
    {
      cif::KernelSuperpositionCPU(this->GetInput()->GetBufferPointer(),
                                  sigma,
                                  this->GetOutput()->GetBufferPointer(),
                                  geometry,
                                  parameters,
                                  threads,
                                  [this](double f) { this->UpdateProgress(static_cast<float>(f)); });
    }
    catch (const std::invalid_argument & bad)
    {
      itkExceptionMacro(<< bad.what());
    }
    m_LastNote = "the module's CPU core (scatter by output slabs, double precision)";
  }
  else
  {
    itkExceptionMacro(<< this->CPUUnsupportedReason());
  }
}

template <typename TInputImage, typename TOutputImage, typename TSigmaImage>
void
CudaKernelSuperpositionImageFilter<TInputImage, TOutputImage, TSigmaImage>::PrintSelf(std::ostream & os,
                                                                                      Indent         indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "Cutoff: " << m_Cutoff << '\n';
  os << indent << "CutoffMass: " << m_CutoffMass << '\n';
  os << indent << "PadOutput: " << (m_PadOutput ? "On" : "Off") << '\n';
  os << indent << "Method: " << m_Method << '\n';
  this->PrintExecution(os, indent);
}

} // namespace itk

#endif
