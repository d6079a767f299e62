/*=========================================================================
 *  CudaImageFilters: benchmark of the anisotropic diffusion filters (an
 *  executable, not a test): ITK's gradient and curvature diffusion, 5
 *  iterations, default settings (time step 1/16, conductance 1), on a
 *  512 x 512 x 72 float32 volume (the case) and 512^3.
 *
 *  Bytes and flops first (per iteration, n voxels of 4 bytes): the average
 *  gradient reads the image once (4n), the update reads it and writes the
 *  next (8n): 12n bytes, 0.9 GB for 5 iterations at 512x512x72, about
 *  0.2 ms at 4.5 TB/s. Arithmetic per voxel and iteration: 19 reads, 6
 *  exponentials and about 100 float operations (gradient), 6 square roots
 *  and 6 divisions more (curvature); about 4 GFLOP for 5 iterations, 0.1 ms
 *  at H200's float rate. Floor: about 0.3 ms.
 *
 *  Timed, in one run:
 *  - the GPU core on device-resident data (CUDA events, median of --reps);
 *  - the ITK class with plain itk::Image in and out in GPU mode (the whole
 *    path: upload, 5 iterations, download);
 *  - the ITK class on the CPU (the module's CPU core) and ITK's own filter,
 *    on all cores (one run each).
 *  The GPU rows' error against ITK's filter is printed (max |ours - ITK's|
 *  over ITK's range).
 *
 *    AnisotropicDiffusionBenchmark [--reps N] [--skip-itk] [--large]
 *=========================================================================*/
#include "BenchmarkCommon.h"
#include "cif/AnisotropicDiffusion.h"
#include "cif/Runtime.h"
#include "itkCudaCurvatureAnisotropicDiffusionImageFilter.h"
#include "itkCudaFactorylessTwin.h"
#include "itkCudaGradientAnisotropicDiffusionImageFilter.h"
#include "itkImage.h"
#include "itkImageRegionConstIterator.h"
#include "itkMultiThreaderBase.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace
{
using namespace cif_bench;
using Image = itk::Image<float, 3>;

/** An MR-like volume: smooth bands and spheres with noise, in [0, 1000]. */
Image::Pointer
MakeVolume(const std::int64_t n[3])
{
  auto image = Image::New();
  image->SetRegions(Image::SizeType{ { static_cast<itk::SizeValueType>(n[0]),
                                       static_cast<itk::SizeValueType>(n[1]),
                                       static_cast<itk::SizeValueType>(n[2]) } });
  image->Allocate();
  std::mt19937                    random(11);
  std::normal_distribution<float> noise(0.0f, 25.0f);
  float *                         p = image->GetBufferPointer();
  for (std::int64_t z = 0; z < n[2]; ++z)
  {
    for (std::int64_t y = 0; y < n[1]; ++y)
    {
      for (std::int64_t x = 0; x < n[0]; ++x)
      {
        const double r = std::hypot(x - n[0] / 2.0, y - n[1] / 2.0) / n[0];
        const float  tissue = r < 0.2 ? 800.0f : (r < 0.35 ? 450.0f : (r < 0.45 ? 150.0f : 20.0f));
        *p++ = tissue + 50.0f * static_cast<float>(std::sin(0.05 * z)) + noise(random);
      }
    }
  }
  return image;
}

template <typename TFilter>
void
Configure(TFilter * f, const Image * input)
{
  f->SetInput(input);
  f->SetNumberOfIterations(5);
  f->SetTimeStep(0.0625);
  f->SetConductanceParameter(1.0);
}

double
RelativeError(const Image * a, const Image * reference)
{
  double lo = INFINITY, hi = -INFINITY, worst = 0.0;
  itk::ImageRegionConstIterator<Image> jt(reference, reference->GetBufferedRegion());
  for (itk::ImageRegionConstIterator<Image> it(a, a->GetBufferedRegion()); !it.IsAtEnd(); ++it, ++jt)
  {
    lo = std::min<double>(lo, jt.Get());
    hi = std::max<double>(hi, jt.Get());
    worst = std::max(worst, std::fabs(static_cast<double>(it.Get()) - jt.Get()));
  }
  return worst / (hi - lo);
}

template <typename TCudaFilter>
void
RunCase(const std::string & name, const std::string & kind, const std::int64_t n[3], int reps, bool skipItk,
        std::vector<Row> & rows)
{
  using Twin = typename TCudaFilter::Twin;
  const auto   input = MakeVolume(n);
  const double voxels = static_cast<double>(n[0] * n[1] * n[2]);
  const double bytes = voxels * 4.0 * (3.0 * 5 + 2.0); // 5 iterations of 12n, the first cast 8n
  Row          base;
  base.caseName = name;
  base.voxels = voxels * 5;
  base.bytes = bytes;
  Image::Pointer reference;
  if (!skipItk)
  {
    auto itkFilter = itk::CudaFactorylessTwin<Twin>::New();
    Configure(itkFilter.GetPointer(), input.GetPointer());
    Row r = base;
    r.method = "ITK " + kind + " filter";
    r.ms = TimeWallOnce([&] { itkFilter->Update(); });
    r.note = std::to_string(itk::MultiThreaderBase::GetGlobalDefaultNumberOfThreads()) + " threads";
    rows.push_back(r);
    reference = itkFilter->GetOutput();
    auto cpu = TCudaFilter::New();
    Configure(cpu.GetPointer(), input.GetPointer());
    cpu->SetExecutionMode(itk::CudaExecutionMode::CPU);
    r.method = "our CPU " + kind + " (ITK class)";
    r.ms = TimeWallOnce([&] { cpu->Update(); });
    r.note = "error vs ITK " + std::to_string(RelativeError(cpu->GetOutput(), reference)) + " of the range";
    rows.push_back(r);
  }
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
  if (cif::Runtime::IsDeviceAvailable())
  {
    cif::ClampedNeighborhoodGeometry g;
    for (int a = 0; a < 3; ++a)
    {
      g.inputSize[a] = g.outputSize[a] = n[a];
    }
    cif::AnisotropicDiffusionParameters p;
    p.kind = kind == "gradient" ? cif::DiffusionKind::Gradient : cif::DiffusionKind::Curvature;
    p.dimension = 3;
    p.iterations = 5;
    const std::size_t n4 = static_cast<std::size_t>(voxels) * 4;
    cif::DeviceBuffer in(n4), out(n4);
    in.CopyFromHost(input->GetBufferPointer(), n4);
    std::string note;
    Row         r = base;
    r.method = "GPU " + kind + ", device-resident";
    r.gpu = true;
    r.ms = TimeGpu([&] { note = cif::AnisotropicDiffusionCUDA(static_cast<const float *>(in.GetPointer()),
                                                              static_cast<float *>(out.GetPointer()), g, p); },
                   reps);
    r.note = note;
    rows.push_back(r);
    auto gpu = TCudaFilter::New();
    Configure(gpu.GetPointer(), input.GetPointer());
    gpu->SetExecutionMode(itk::CudaExecutionMode::GPU);
    gpu->Update();
    r = base;
    r.method = "GPU " + kind + " (ITK class, plain itk::Image)";
    r.ms = TimeWall([&] { gpu->Modified(); gpu->Update(); }, reps);
    r.note = reference ? "error vs ITK " + std::to_string(RelativeError(gpu->GetOutput(), reference)) + " of the range"
                       : std::string("host to host");
    rows.push_back(r);
  }
#endif
}

} // namespace

int
main(int argc, char * argv[])
{
  int  reps = 10;
  bool skipItk = false, large = false;
  for (int i = 1; i < argc; ++i)
  {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc)
    {
      reps = std::max(1, std::atoi(argv[++i]));
    }
    else if (!std::strcmp(argv[i], "--skip-itk"))
    {
      skipItk = true;
    }
    else if (!std::strcmp(argv[i], "--large"))
    {
      large = true;
    }
    else
    {
      std::printf("usage: %s [--reps N] [--skip-itk] [--large (adds 512^3, GPU rows only)]\n", argv[0]);
      return 2;
    }
  }
  const double       copy = CopyBandwidth();
  std::vector<Row>   rows;
  const std::int64_t liver[3] = { 512, 512, 72 }, cube[3] = { 512, 512, 512 };
  RunCase<itk::CudaGradientAnisotropicDiffusionImageFilter<Image, Image>>("512x512x72 float32", "gradient", liver, reps,
                                                                          skipItk, rows);
  RunCase<itk::CudaCurvatureAnisotropicDiffusionImageFilter<Image, Image>>("512x512x72 float32", "curvature", liver,
                                                                           reps, skipItk, rows);
  if (large)
  {
    RunCase<itk::CudaGradientAnisotropicDiffusionImageFilter<Image, Image>>("512^3 float32", "gradient", cube, reps,
                                                                            true, rows);
    RunCase<itk::CudaCurvatureAnisotropicDiffusionImageFilter<Image, Image>>("512^3 float32", "curvature", cube, reps,
                                                                             true, rows);
  }
  PrintDeviceLine("Anisotropic diffusion, 5 iterations, time step 1/16, conductance 1", copy);
  std::printf("Mvox/s = voxels x iterations / time; GB/s counts 12 bytes per voxel and iteration (the average\n"
              "gradient's read, the update's read and write) plus the first cast; %%copy = GB/s / copy bandwidth.\n\n");
  TableLayout layout;
  layout.rateName = "Mvox/s";
  PrintTable(rows, copy, layout);
  return 0;
}
