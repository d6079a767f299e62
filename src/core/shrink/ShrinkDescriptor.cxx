/*=========================================================================
 *  CudaImageFilters: the shrink's description (cif/Filter.h): every f-th
 *  pixel, on itk::ShrinkImageFilter's centred grid (OutputGrid::Subsample).
 *=========================================================================*/
#include "cif/CudaError.h"
#include "cif/Shrink.h"
#include "cifDispatch.h"
#include "cifPixelLists.h"

namespace cif
{
namespace
{
using Pixels = CIF_PIXEL_LIST(CIF_CORE_PIXELS);

ShrinkGeometry
GeometryOf(const Job & job, const Parameters & p)
{
  ShrinkGeometry g;
  AxisValues(p, "shrink_factors", job.dimension, g.factor, 1);
  for (int a = 0; a < 3; ++a)
  {
    g.inputSize[a] = job.inputSize[a];
    g.inputOffset[a] = job.outputStart[a];
    g.outputSize[a] = job.outputSize[a];
  }
  return g;
}

/** The core's check of a job (a piece the faces computed wrongly throws
 * rather than reading past the buffer). */
ShrinkGeometry
CheckedGeometryOf(const Job & job, const Parameters & p)
{
  const ShrinkGeometry g = GeometryOf(job, p);
  const std::string    problem = ValidateShrinkJob(g);
  if (!problem.empty())
  {
    throw std::invalid_argument("shrink: " + problem);
  }
  return g;
}
} // namespace

#ifndef CUDAIMAGEFILTERS_WITH_CUDA
bool
ShrinkCUDAIsCompiled()
{
  return false;
}
template <typename T>
void
ShrinkCUDA(const T *, T *, const ShrinkGeometry &)
{
  throw CudaFailure(-1, "CudaImageFilters was built without CUDA", "ShrinkCUDA");
}
#endif

FilterDescriptor
ShrinkDescriptor()
{
  FilterDescriptor d;
  d.command = "shrink";
  d.function = "shrink_image_filter";
  d.itkClass = "itk::CudaShrinkImageFilter";
  d.itkTwin = "itk::ShrinkImageFilter";
  d.brief = "every F-th pixel per axis (a shrink by subsampling)";
  d.summary = "Shrinks the image by an integer factor per axis, keeping every f-th pixel, on ITK's ShrinkImageFilter "
              "grid (the virtual domain ImageRegistrationMethodv4 shrinks per level).";
  d.details = "Identical to ITK's ShrinkImageFilter (bit for bit: each output pixel is a copy of one input pixel). "
              "Output size floor(n / f) per axis (at least 1); spacing times f; the output's centre on the "
              "input's, so output pixel 0 is input pixel floor((n - f (m - 1)) / 2) of an image indexed from 0. "
              "A factor may exceed the image (one pixel, its centre).";
  ParameterSpec factors;
  factors.name = "shrink_factors";
  factors.kind = ParameterKind::Integer;
  factors.perAxis = true;
  factors.positional = true;
  factors.minimum = 1;
  factors.defaults = { 1 };
  factors.help = "the step: one factor for every axis, or one per axis (x, y, z)";
  d.parameters = { factors };
  d.gpuPixels = d.cpuPixels = PixelsOf(Pixels{});
  d.grid = OutputGrid::Subsample;
  d.halo = [](const Parameters &, int) { return std::array<std::int64_t, 3>{ 0, 0, 0 }; };
  d.slabPolicy = [](const Parameters &, Pixel) { return SlabPolicy{ false, false, 0 }; };
  d.hostCPUReason = [](const Parameters &)
  {
    return std::string("the CPU core is faster for host images: the shrink copies one input pixel in f0 f1 f2, and "
                       "the GPU would upload the whole input first (docs/PyramidFilters.md)");
  };
  d.cudaCompiled = &ShrinkCUDAIsCompiled;
  SetSameTypeEntry(d,
                   false,
                   Pixels{},
                   [](const auto * in, auto * out, const Job & job, const Parameters & p, int threads)
                   {
                     ShrinkCPU(in, out, CheckedGeometryOf(job, p), threads);
                     return "";
                   });
  SetSameTypeEntry(d,
                   true,
                   Pixels{},
                   [](const auto * in, auto * out, const Job & job, const Parameters & p, int)
                   {
                     ShrinkCUDA(in, out, CheckedGeometryOf(job, p));
                     return "one thread per output pixel, a strided copy";
                   });
  return d;
}
} // namespace cif
