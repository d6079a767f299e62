/*=========================================================================
 *  CudaImageFilters: the module's GPU filters on images larger than the
 *  device (see cifSlabs.h for the slab runner).
 *=========================================================================*/
#ifndef itkCudaSlabs_h
#define itkCudaSlabs_h

#include "cifSlabs.h"
#include "cifCudaError.h"
#include "itkCudaImage.h"

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace itk
{

/** True when neither image is an itk::CudaImage: their pixels live in host
 * memory, so a GPU filter may stream them through the device in slabs. (A
 * CudaImage hands its whole buffer to the device, which is how a GPU
 * pipeline keeps its data there.) */
template <typename TInputImage, typename TOutputImage>
bool
CudaHostImages(const TInputImage * input, const TOutputImage * output)
{
  using CudaInput = CudaImage<typename TInputImage::PixelType, TInputImage::ImageDimension>;
  using CudaOutput = CudaImage<typename TOutputImage::PixelType, TOutputImage::ImageDimension>;
  return dynamic_cast<const CudaInput *>(input) == nullptr && dynamic_cast<const CudaOutput *>(output) == nullptr;
}

/** The name of the slab axis of a geometry (x, y or z). */
inline const char *
CudaSlabAxisName(int axis)
{
  return axis == 0 ? "x" : (axis == 1 ? "y" : "z");
}

/** Runs a filter's GPU job: `whole()` (the one-piece job) when the images
 * may not be streamed (`hostImages` false) or when the one-piece job's
 * `wholeBytes` fit the device memory the module may use
 * (cif::DeviceBytesAvailable); otherwise, or when the one-piece job runs
 * out of device memory, `inSlabs()`, which returns how it cut the job (for
 * the execution report). Returns that description, empty for a one-piece
 * run. Errors propagate as cif exceptions (the caller's
 * CudaRunWithFallback turns them into ITK exceptions, or into the CPU
 * fallback when the device cannot hold even one plane). */
template <typename TWhole, typename TSlabs>
std::string
CudaRunWholeOr(bool hostImages, std::size_t wholeBytes, TWhole && whole, TSlabs && inSlabs)
{
  if (!hostImages)
  {
    whole();
    return {};
  }
  if (wholeBytes <= cif::DeviceBytesAvailable())
  {
    try
    {
      whole();
      return {};
    }
    catch (const cif::CudaOutOfMemory &)
    {
      // the estimate was short: slabs
    }
  }
  return inSlabs();
}

/** CudaRunWholeOr with the slab runner: the job's `layout`, `slabKernel`
 * reading the host buffers `hostInputs()` into `hostOutput()` (asked for
 * only when slabs run: for a CudaImage that synchronises its host copy). */
template <typename TWhole>
std::string
CudaRunWholeOrInSlabs(bool                                               hostImages,
                      const cif::SlabLayout &                            layout,
                      const std::function<std::vector<const void *>()> & hostInputs,
                      const std::function<void *()> &                    hostOutput,
                      const char *                                       axisName,
                      const cif::SlabKernel &                            slabKernel,
                      TWhole &&                                          whole,
                      const cif::SlabProgress &                          progress = {})
{
  const bool valid = cif::ValidateSlabLayout(layout).empty();
  return CudaRunWholeOr(
    hostImages && valid,
    valid ? cif::WholeJobDeviceBytes(layout) : 0,
    whole,
    [&]
    {
      return cif::RunInSlabsCUDA(
               hostInputs(), hostOutput(), layout, 0, slabKernel, cif::DefaultMaxSlabBufferBytes, progress)
        .Describe(axisName);
    });
}

/** The GPU job of a neighbourhood filter whose core takes a geometry with
 * inputSize, outputStart and outputSize (cif's median, box and
 * clamped-neighbourhood jobs): `core(const InPixel *, OutPixel *, geometry)`
 * on the whole buffered regions, or on slabs along the geometry's slowest
 * axis with `halo[axis]` planes on each side (CudaRunWholeOrInSlabs).
 * `wholeSlabs`: the core writes every input plane (iterated filters);
 * `workBytesPerInputPixel`: the core's own temporaries. */
template <typename TInputImage, typename TOutputImage, typename TGeometry, typename TCore>
std::string
CudaRunNeighbourhoodJob(const TInputImage *                 input,
                        TOutputImage *                      output,
                        const TGeometry &                   geometry,
                        const std::array<std::int64_t, 3> & halo,
                        bool                                wholeSlabs,
                        std::size_t                         workBytesPerInputPixel,
                        TCore &&                            core,
                        const cif::SlabProgress &           progress)
{
  using InPixel = typename TInputImage::PixelType;
  using OutPixel = typename TOutputImage::PixelType;
  const int       axis = cif::SlowestAxis(geometry);
  cif::SlabLayout layout = cif::SlabLayoutOf(geometry, axis, sizeof(InPixel), sizeof(OutPixel), halo[axis]);
  layout.kernelWritesInputPlanes = wholeSlabs;
  layout.workBytesPerPlane = workBytesPerInputPixel * (layout.inputPlaneBytes[0] / sizeof(InPixel));
  return CudaRunWholeOrInSlabs(
    CudaHostImages(input, output),
    layout,
    [input]() -> std::vector<const void *> { return { input->GetBufferPointer() }; },
    [output]() -> void * { return output->GetBufferPointer(); },
    CudaSlabAxisName(axis),
    [&](const void * const * in, void * out, const cif::Slab & slab)
    {
      core(static_cast<const InPixel *>(in[0]),
           static_cast<OutPixel *>(out),
           cif::SlabGeometry(geometry, axis, layout, slab));
    },
    [&]
    {
      CudaInputBuffer<TInputImage>   in(input);
      CudaOutputBuffer<TOutputImage> out(output);
      core(in.Get(), out.Get(), geometry);
      out.Commit();
    },
    progress);
}

} // namespace itk

#endif
