/*=========================================================================
 *  CudaImageFilters: helpers shared by the threshold and packed-mask
 *  filters' ITK layer.
 *=========================================================================*/
#ifndef itkCudaMaskFilterDetail_h
#define itkCudaMaskFilterDetail_h

#include "cif/PackedMask.h"
#include "cif/Slabs.h"
#include "itkCudaExecution.h"
#include "itkCudaFilterImage.h"
#include "itkCudaPackedMask.h"
#include "itkCudaSlabs.h"
#include "itkImageRegion.h"
#include "itkProcessObject.h"

#include <functional>
#include <string>
#include <vector>

namespace itk
{
namespace CudaMaskFilterDetail
{

/** Pixel types the cores are instantiated for (src/PackedMask*.c*). */
template <typename T>
constexpr bool IsCorePixel = CudaIsOneOf<T, unsigned char, short, unsigned short, float>;

/** Why the packed-mask filters cannot run on the GPU (empty if they can). */
inline std::string
GPUUnsupportedReason()
{
  return cif::PackedMaskCUDAIsCompiled() ? std::string() : std::string("this build has no CUDA code");
}

/** The packed-mask filters process whole grids: every input, image or mask,
 * is requested whole (not the superclass's copy of the output region: a
 * mask's buffered region is a word grid). */
inline void
RequestWholeInputs(ProcessObject & filter)
{
  for (const auto & input : filter.GetIndexedInputs())
  {
    if (input)
    {
      input->SetRequestedRegionToLargestPossibleRegion();
    }
  }
}

/** The extent of a region (x fastest, unused axes 1). */
template <unsigned int D>
cif::MaskExtent
ExtentOf(const ImageRegion<D> & region)
{
  cif::MaskExtent extent;
  for (unsigned int a = 0; a < D && a < 3; ++a)
  {
    extent.size[a] = static_cast<std::int64_t>(region.GetSize(a));
  }
  return extent;
}

/** Whether an operand may be cut into slabs: an image in host memory
 * (CudaIsHostImage); a packed mask's words are read through its host
 * buffer for slabs, so a mask never prevents them. */
template <typename TImage>
bool
MayCut(const TImage * image)
{
  return CudaIsHostImage(image);
}
template <unsigned int VDimension>
bool
MayCut(const CudaPackedMask<VDimension> *)
{
  return true;
}
inline bool
AllMayCut()
{
  return true;
}
template <typename TFirst, typename... TRest>
bool
AllMayCut(const TFirst * first, const TRest *... rest)
{
  return MayCut(first) && AllMayCut(rest...);
}

/** The description's CUDA entry on the operands' device buffers (each
 * input uploaded, or handed over by a CudaFilterImage; the output written
 * on the device and committed). */
template <typename TOutput>
void
RunOnDeviceBuffers(const cif::MaskOperationDescriptor & operation,
                   cif::Pixel                           pixel,
                   const cif::MaskExtent &              extent,
                   const std::vector<double> &          values,
                   std::vector<const void *> &          deviceInputs,
                   TOutput *                            output)
{
  CudaOutputBuffer<TOutput> out(output);
  operation.cuda(pixel, deviceInputs.data(), out.Get(), extent, values, 1);
  out.Commit();
}
template <typename TOutput, typename TFirst, typename... TRest>
void
RunOnDeviceBuffers(const cif::MaskOperationDescriptor & operation,
                   cif::Pixel                           pixel,
                   const cif::MaskExtent &              extent,
                   const std::vector<double> &          values,
                   std::vector<const void *> &          deviceInputs,
                   TOutput *                            output,
                   const TFirst *                       first,
                   const TRest *... rest)
{
  CudaInputBuffer<TFirst> in(first); // lives until the entry returned
  deviceInputs.push_back(in.Get());
  RunOnDeviceBuffers(operation, pixel, extent, values, deviceInputs, output, rest...);
}

/** One call of a packed-mask operation (cif::MaskOperationDescriptor) on an
 * ITK class's operands, images or packed masks, in the description's
 * order: the class runs OnGPU() or OnCPU() through RunOnGPUOrCPU. The
 * values are ITK's members in the pixel type, checked by the description
 * (CheckMaskValues) when the run is made. */
class MaskOperationRun
{
public:
  template <typename TOutput, typename... TInputs>
  MaskOperationRun(const char *            function,
                   cif::Pixel              pixel,
                   const cif::MaskExtent & extent,
                   std::vector<double>     values,
                   TOutput *               output,
                   const TInputs *... inputs)
    : m_Operation(cif::FindMaskOperation(function))
    , m_Pixel(pixel)
    , m_Extent(extent)
    , m_Values(std::move(values))
    , m_MayCut(AllMayCut(output, inputs...))
  {
    try
    {
      cif::CheckMaskValues(m_Operation, m_Pixel, m_Values);
    }
    catch (const std::invalid_argument & e)
    {
      itkGenericExceptionMacro(<< e.what());
    }
    // host pointers only when asked for: the host pointer of an image on
    // the device would download it
    m_HostInputs = [=]() { return std::vector<const void *>{ static_cast<const void *>(inputs->GetBufferPointer())... }; };
    m_HostOutput = [=]() -> void * { return output->GetBufferPointer(); };
    const cif::MaskOperationDescriptor * operation = &m_Operation;
    const cif::MaskExtent                e = extent;
    const std::vector<double>            v = m_Values;
    m_Whole = [=]()
    {
      std::vector<const void *> deviceInputs;
      RunOnDeviceBuffers(*operation, pixel, e, v, deviceInputs, output, inputs...);
    };
  }

  /** The GPU run: whole, or in slabs for host images too large for the
   * device. Returns how it cut the job (for SetLastSlabs). */
  std::string
  OnGPU() const
  {
    return cif::RunMaskOperationCUDA(m_Operation, m_MayCut, m_Pixel, m_Extent, m_Values, m_HostInputs, m_HostOutput, m_Whole);
  }

  /** The CPU run with `threads` threads. */
  void
  OnCPU(int threads) const
  {
    const std::vector<const void *> inputs = m_HostInputs();
    m_Operation.cpu(m_Pixel, inputs.data(), m_HostOutput(), m_Extent, m_Values, threads);
  }

private:
  const cif::MaskOperationDescriptor &         m_Operation;
  cif::Pixel                                   m_Pixel;
  cif::MaskExtent                              m_Extent;
  std::vector<double>                          m_Values;
  bool                                         m_MayCut;
  std::function<std::vector<const void *>()>   m_HostInputs;
  std::function<void *()>                      m_HostOutput;
  std::function<void()>                        m_Whole;
};

} // namespace CudaMaskFilterDetail
} // namespace itk

#endif
