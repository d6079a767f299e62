/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
#ifndef itkCudaBSplineDecompositionImageFilter_hxx
#define itkCudaBSplineDecompositionImageFilter_hxx

#include "itkCudaBSplineDecompositionImageFilter.h"
#include "cifClampedNeighborhood.h"
#include "itkCudaSlabs.h"
#include "cifBSplinePrefilter.h"
#include "itkMultiThreaderBase.h"
#include <ostream>
#include <sstream>
#include <type_traits>

namespace itk
{

namespace CudaBSplinePrefilterDetail
{
/** Pixel types the CPU core is instantiated for (src/BSplinePrefilterCPU.cxx). */
template <typename TIn, typename TOut>
constexpr bool CPUCoreSupports =
  CudaIsOneOf<TIn, unsigned char, signed char, short, unsigned short, int, unsigned int, float, double> &&
    CudaIsOneOf<TOut, float, double>;

/** Pixel types the GPU core is instantiated for (src/BSplinePrefilter.cu). */
template <typename TIn, typename TOut>
constexpr bool                                                             GPUCoreSupports =
  CudaIsOneOf<TIn, unsigned char, short, unsigned short, float, double> && CudaIsOneOf<TOut, float, double>;
} // namespace CudaBSplinePrefilterDetail

template <typename TInputImage, typename TOutputImage>
void
CudaBSplineDecompositionImageFilter<TInputImage, TOutputImage>::SetFIRHalfWidth(unsigned int halfWidth)
{
  if (halfWidth > static_cast<unsigned int>(cif::MaxFIRHalfWidth))
  {
    itkExceptionMacro(<< "FIR half-width " << halfWidth << " is larger than the supported " << cif::MaxFIRHalfWidth);
  }
  if (m_FIRHalfWidthFromTolerance || halfWidth != m_FIRHalfWidth)
  {
    m_FIRHalfWidth = halfWidth;
    m_FIRHalfWidthFromTolerance = false;
    this->Modified();
  }
}

template <typename TInputImage, typename TOutputImage>
void
CudaBSplineDecompositionImageFilter<TInputImage, TOutputImage>::SetFIRTolerance(double tolerance)
{
  if (!(tolerance > 0.0) || !(tolerance < 1.0))
  {
    itkExceptionMacro(<< "FIR tolerance must lie in (0, 1), got " << tolerance);
  }
  if (!m_FIRHalfWidthFromTolerance || tolerance != m_FIRTolerance)
  {
    m_FIRTolerance = tolerance;
    m_FIRHalfWidthFromTolerance = true;
    this->Modified();
  }
}

template <typename TInputImage, typename TOutputImage>
unsigned int
CudaBSplineDecompositionImageFilter<TInputImage, TOutputImage>::GetFIRHalfWidth() const
{
  return m_FIRHalfWidthFromTolerance ? static_cast<unsigned int>(cif::CubicFIRHalfWidthForTolerance(m_FIRTolerance))
                                     : m_FIRHalfWidth;
}

template <typename TInputImage, typename TOutputImage>
std::string
CudaBSplineDecompositionImageFilter<TInputImage, TOutputImage>::GetGPUUnsupportedReason() const
{
  std::ostringstream why;
  if (!cif::PrefilterCUDAIsCompiled())
  {
    why << "this build has no CUDA code";
  }
  else if (ImageDimension > 3)
  {
    why << "the GPU path handles 1 to 3 dimensions, not " << ImageDimension;
  }
  else if (this->GetSplineOrder() != 3)
  {
    why << "the GPU path handles spline order 3 only, not " << this->GetSplineOrder();
  }
  else if (!CudaBSplinePrefilterDetail::GPUCoreSupports<InputPixelType, OutputPixelType>)
  {
    why << "the GPU path does not handle input pixels of type " << CudaPixelTypeName<InputPixelType>()
        << " with output pixels of type " << CudaPixelTypeName<OutputPixelType>()
        << " (it handles unsigned char, short, unsigned short, float or double in, float or double out)";
  }
  return why.str();
}

template <typename TInputImage, typename TOutputImage>
void
CudaBSplineDecompositionImageFilter<TInputImage, TOutputImage>::GenerateInputRequestedRegion()
{
  if (m_Method == CudaBSplinePrefilterMethod::Recursive)
  {
    Superclass::GenerateInputRequestedRegion(); // the whole image
    return;
  }
  // FIR: the output requested region grown by K on every axis.
  auto * input = const_cast<TInputImage *>(this->GetInput());
  if (input == nullptr)
  {
    return;
  }
  typename TInputImage::RegionType region = this->GetOutput()->GetRequestedRegion();
  region.PadByRadius(static_cast<typename TInputImage::SizeValueType>(this->GetFIRHalfWidth()));
  region.Crop(input->GetLargestPossibleRegion());
  input->SetRequestedRegion(region);
}

template <typename TInputImage, typename TOutputImage>
void
CudaBSplineDecompositionImageFilter<TInputImage, TOutputImage>::EnlargeOutputRequestedRegion(DataObject * output)
{
  if (m_Method == CudaBSplinePrefilterMethod::Recursive)
  {
    Superclass::EnlargeOutputRequestedRegion(output);
  }
}

template <typename TInputImage, typename TOutputImage>
void
CudaBSplineDecompositionImageFilter<TInputImage, TOutputImage>::GenerateData()
{
  using namespace CudaBSplinePrefilterDetail;
  const TInputImage * input = this->GetInput();
  this->CheckInputNotEmpty(input);
  TOutputImage * output = this->GetOutput();
  output->SetBufferedRegion(output->GetRequestedRegion());
  output->Allocate();

  if (m_Method == CudaBSplinePrefilterMethod::FIR)
  {
    if (this->GetSplineOrder() != 3)
    {
      itkExceptionMacro(<< "The FIR method is defined for cubic splines only; spline order is "
                        << this->GetSplineOrder());
    }
    if (ImageDimension > 3 || !CPUCoreSupports<InputPixelType, OutputPixelType>)
    {
      itkExceptionMacro(<< "The FIR method handles 1 to 3 dimensions with float or double output");
    }
  }

  this->RunOnGPUOrCPU(
    this->GetGPUUnsupportedReason(), [this] { this->GPUGenerateData(); }, [this] { this->CPUGenerateData(); });
}

namespace CudaBSplinePrefilterDetail
{
template <typename TFilter>
cif::PrefilterGeometry
MakeGeometry(const TFilter * filter)
{
  constexpr unsigned int D = TFilter::ImageDimension;
  const auto *           input = filter->GetInput();
  const auto *           output = filter->GetOutput();
  const auto             whole = input->GetLargestPossibleRegion();
  const auto             in = input->GetBufferedRegion();
  const auto             out = output->GetBufferedRegion();
  cif::PrefilterGeometry g;
  for (unsigned int a = 0; a < D && a < 3; ++a)
  {
    g.imageSize[a] = static_cast<std::int64_t>(whole.GetSize(a));
    g.inputStart[a] = in.GetIndex(a) - whole.GetIndex(a);
    g.inputSize[a] = static_cast<std::int64_t>(in.GetSize(a));
    g.outputStart[a] = out.GetIndex(a) - whole.GetIndex(a);
    g.outputSize[a] = static_cast<std::int64_t>(out.GetSize(a));
  }
  return g;
}

template <typename TFilter>
cif::PrefilterParameters
MakeParameters(const TFilter * filter)
{
  cif::PrefilterParameters p;
  p.method = filter->GetMethod() == CudaBSplinePrefilterMethod::FIR ? cif::PrefilterMethod::FIR
                                                                    : cif::PrefilterMethod::Recursive;
  p.poles = filter->GetSplinePoles();
  p.tolerance = 1e-10; // ITK's fixed tolerance for the causal initialisation
  p.firHalfWidth = static_cast<int>(filter->GetFIRHalfWidth());
  return p;
}
} // namespace CudaBSplinePrefilterDetail

template <typename TInputImage, typename TOutputImage>
void
CudaBSplineDecompositionImageFilter<TInputImage, TOutputImage>::GPUGenerateData()
{
  using namespace CudaBSplinePrefilterDetail;
  if constexpr (GPUCoreSupports<InputPixelType, OutputPixelType> && ImageDimension <= 3)
  {
    const auto geometry = MakeGeometry(this);
    const auto parameters = MakeParameters(this);
    this->CheckCoreJob(cif::ValidatePrefilterJob(geometry, parameters));
    auto whole = [&]
    {
      CudaInputBuffer<TInputImage>   input(this->GetInput());
      CudaOutputBuffer<TOutputImage> output(this->GetOutput());
      cif::PrefilterCUDA(input.Get(),
                         output.Get(),
                         geometry,
                         parameters,
                         [this](double f) { this->UpdateProgress(static_cast<float>(f)); });
      output.Commit();
    };
    const bool hostImages = CudaHostImages(this->GetInput(), this->GetOutput());
    int        axis = 0; // the slowest axis of more than one sample
    for (int a = 1; a < 3; ++a)
    {
      axis = geometry.imageSize[a] > 1 ? a : axis;
    }
    if (parameters.method == cif::PrefilterMethod::FIR)
    {
      // FIR: local, so slabs along the slowest axis with a halo of K planes
      // give the one-piece result bit for bit
      cif::ClampedNeighborhoodGeometry box;
      for (int a = 0; a < 3; ++a)
      {
        box.inputSize[a] = geometry.inputSize[a];
        box.outputStart[a] = geometry.outputStart[a] - geometry.inputStart[a];
        box.outputSize[a] = geometry.outputSize[a];
      }
      cif::SlabLayout layout =
        cif::SlabLayoutOf(box, axis, sizeof(InputPixelType), sizeof(OutputPixelType), parameters.firHalfWidth);
      layout.workBytesPerPlane = 2 * sizeof(OutputPixelType) * (layout.inputPlaneBytes[0] / sizeof(InputPixelType));
      this->SetLastSlabs(cif::RunWholeOrInSlabsCUDA(
        hostImages,
        layout,
        [&]() -> std::vector<const void *> { return { this->GetInput()->GetBufferPointer() }; },
        [&]() -> void * { return this->GetOutput()->GetBufferPointer(); },
        cif::SlabAxisName(axis),
        [&](const void * const * in, void * out, const cif::Slab & slab)
        {
          cif::PrefilterGeometry g = geometry;
          g.inputStart[axis] = geometry.inputStart[axis] + slab.inputFirst;
          g.inputSize[axis] = slab.inputCount;
          g.outputStart[axis] = geometry.outputStart[axis] + slab.outputFirst;
          g.outputSize[axis] = slab.outputCount;
          cif::PrefilterCUDA(
            static_cast<const InputPixelType *>(in[0]), static_cast<OutputPixelType *>(out), g, parameters);
        },
        whole));
    }
    else
    {
      // Recursive: every line must be filtered whole. Two slab passes keep
      // it exact (bit for bit): the faster axes on slabs along the slowest
      // axis, then the slowest axis on slabs along the next one (each slab
      // holds whole lines of the slowest axis), in place in the output.
      cif::ClampedNeighborhoodGeometry box;
      for (int a = 0; a < 3; ++a)
      {
        box.inputSize[a] = box.outputSize[a] = geometry.imageSize[a];
      }
      const cif::SlabLayout first = cif::SlabLayoutOf(box, axis, sizeof(InputPixelType), sizeof(OutputPixelType), 0);
      this->SetLastSlabs(cif::RunWholeOr(
        hostImages && axis > 0,
        cif::WholeJobDeviceBytes(first),
        whole,
        [&]
        {
          auto * out = this->GetOutput()->GetBufferPointer();
          auto   along = [&](int filtered, int cut)
          {
            return [&, filtered, cut](const void * const * in, void * o, const cif::Slab & slab)
            {
              cif::PrefilterGeometry g = geometry;
              g.imageSize[cut] = g.inputSize[cut] = g.outputSize[cut] = slab.inputCount;
              cif::PrefilterParameters p = parameters;
              for (int a = 0; a < 3; ++a)
              {
                p.filterAxis[a] = filtered < 0 ? a != axis : a == filtered;
              }
              if (filtered < 0)
              {
                cif::PrefilterCUDA(static_cast<const InputPixelType *>(in[0]), static_cast<OutputPixelType *>(o), g, p);
              }
              else
              {
                cif::PrefilterCUDA(
                  static_cast<const OutputPixelType *>(in[0]), static_cast<OutputPixelType *>(o), g, p);
              }
            };
          };
          const cif::SlabReport a =
            cif::RunInSlabsCUDA({ this->GetInput()->GetBufferPointer() }, out, first, 0, along(-1, axis));
          this->UpdateProgress(0.5f);
          // the slowest axis, on slabs along the next one: [axis planes][slab][faster axes]
          cif::SlabLayout second;
          second.outer = geometry.imageSize[axis];
          second.inputPlanes = second.outputPlanes = geometry.imageSize[axis - 1];
          std::size_t plane = sizeof(OutputPixelType);
          for (int k = 0; k < axis - 1; ++k)
          {
            plane *= static_cast<std::size_t>(geometry.imageSize[k]);
          }
          second.inputPlaneBytes = { plane };
          second.outputPlaneBytes = plane;
          const cif::SlabReport b = cif::RunInSlabsCUDA({ out }, out, second, 0, along(axis, axis - 1));
          return "two slab passes, exact: the axes before " + std::string(cif::SlabAxisName(axis)) + ' ' +
                 a.Describe(cif::SlabAxisName(axis)) + ", then " + cif::SlabAxisName(axis) + ' ' +
                 b.Describe(cif::SlabAxisName(axis - 1));
        }));
    }
    this->UpdateProgress(1.0f);
  }
  else
  {
    itkExceptionMacro(<< "GPU path called for an unsupported request");
  }
}

template <typename TInputImage, typename TOutputImage>
void
CudaBSplineDecompositionImageFilter<TInputImage, TOutputImage>::CPUGenerateData()
{
  using namespace CudaBSplinePrefilterDetail;
  if constexpr (CPUCoreSupports<InputPixelType, OutputPixelType> && ImageDimension <= 3)
  {
    const auto geometry = MakeGeometry(this);
    const auto parameters = MakeParameters(this);
    this->CheckCoreJob(cif::ValidatePrefilterJob(geometry, parameters));
    const int threads = static_cast<int>(this->GetMultiThreader()->GetMaximumNumberOfThreads());
    cif::PrefilterCPU(this->GetInput()->GetBufferPointer(),
                      this->GetOutput()->GetBufferPointer(),
                      geometry,
                      parameters,
                      threads,
                      [this](double f) { this->UpdateProgress(static_cast<float>(f)); });
  }
  else
  {
    // Dimensions or pixel types outside the core: ITK's own implementation.
    Superclass::GenerateData();
  }
}

template <typename TInputImage, typename TOutputImage>
void
CudaBSplineDecompositionImageFilter<TInputImage, TOutputImage>::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "Method: " << m_Method << '\n';
  os << indent << "FIRTolerance: " << m_FIRTolerance << '\n';
  os << indent << "FIRHalfWidth: " << this->GetFIRHalfWidth()
     << (m_FIRHalfWidthFromTolerance ? " (from the tolerance)" : " (set)") << '\n';
  this->PrintExecution(os, indent);
}

} // namespace itk

#endif
