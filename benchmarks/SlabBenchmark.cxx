/*=========================================================================
 *  CudaImageFilters: images larger than the device, in slabs.
 *
 *  SlabBenchmark [--size NXxNYxNZ] [--cap-gib G] [--reps N]
 *
 *  A float32 volume (default 1024x1024x4096, 16 GiB) in host memory, and
 *  the module's ITK filters run on it on the GPU: once in one piece (the
 *  device holds the whole volume: upload, kernel, download), once with the
 *  device memory capped (default 4 GiB), so that the filter streams the
 *  volume through the device in slabs. Prints both times, their ratio,
 *  the slab report, and the one-piece time split into the host-to-device
 *  copy, the device-to-host copy and the rest (the kernels); the copies are
 *  timed alone with the same pageable host buffers. Median r = 1,
 *  bilateral r = 2 (domain sigma 1), the recursive cubic prefilter. The
 *  slabbed results are checked equal to the one-piece results.
 *=========================================================================*/
#include "BenchmarkCommon.h"
#include "itkCudaBSplineDecompositionImageFilter.h"
#include "itkCudaBilateralImageFilter.h"
#include "itkCudaMedianImageFilter.h"
#include "cif/Runtime.h"
#include "itkCudaExecution.h"

#include <cstring>
#include <iostream>
#include <sstream>
#include <thread>

namespace
{
using Image = itk::Image<float, 3>;

Image::Pointer
MakeVolume(const Image::SizeType & size)
{
  auto image = Image::New();
  image->SetRegions(size);
  image->Allocate();
  float *                  p = image->GetBufferPointer();
  const std::int64_t       plane = static_cast<std::int64_t>(size[0] * size[1]);
  const std::int64_t       nz = static_cast<std::int64_t>(size[2]);
  const unsigned           threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
  {
    pool.emplace_back(
      [=]
      {
        for (std::int64_t z = t; z < nz; z += threads)
        {
          std::uint32_t h = static_cast<std::uint32_t>(z) * 2654435761u + 12345u;
          for (std::int64_t i = 0; i < plane; ++i)
          {
            h ^= h << 13;
            h ^= h >> 17;
            h ^= h << 5;
            // a smooth ramp plus noise: realistic for the median's key span
            p[z * plane + i] = static_cast<float>((i % 1024) * 0.05 + z * 0.01) + static_cast<float>(h % 1000) * 0.01f;
          }
        }
      });
  }
  for (auto & th : pool)
  {
    th.join();
  }
  return image;
}

template <typename TFilter>
void
Run(const char * name, TFilter * filter, const Image * input, std::size_t cap, double h2dMs, double d2hMs)
{
  filter->SetInput(input);
  filter->SetExecutionMode(itk::CudaExecutionMode::GPU);
  filter->Modified();
  const double      whole = cif_bench::TimeWallOnce([&] { filter->Update(); });
  const std::string wholeMessage = filter->GetLastExecutionReport().Message;
  Image::Pointer    reference = filter->GetOutput();
  reference->DisconnectPipeline();
  cif::Runtime::SetAllocationLimit(cap);
  filter->Modified();
  const double slabs = cif_bench::TimeWallOnce([&] { filter->Update(); });
  cif::Runtime::SetAllocationLimit(0);
  const std::string message = filter->GetLastExecutionReport().Message;
  const bool        same = std::memcmp(filter->GetOutput()->GetBufferPointer(),
                                reference->GetBufferPointer(),
                                reference->GetBufferedRegion().GetNumberOfPixels() * sizeof(float)) == 0;
  const double      kernels = std::max(0.0, whole - h2dMs - d2hMs);
  std::cout << name << "\n"
            << "  one piece: " << whole << " ms (H2D " << h2dMs << " ms = " << 100 * h2dMs / whole << "%, D2H " << d2hMs
            << " ms = " << 100 * d2hMs / whole << "%, kernels and the rest " << kernels
            << " ms = " << 100 * kernels / whole << "%)\n"
            << "  slabs:     " << slabs << " ms, " << slabs / whole << "x the one-piece time\n"
            << "  identical to the one-piece result: " << (same ? "yes" : "NO") << "\n"
            << "  report: " << message << "\n"
            << "  one-piece report: " << wholeMessage << "\n";
}
} // namespace

int
main(int argc, char * argv[])
{
  Image::SizeType size{ { 1024, 1024, 4096 } };
  double          capGiB = 4.0;
  for (int i = 1; i + 1 < argc; i += 2)
  {
    const std::string option = argv[i];
    if (option == "--size")
    {
      char x;
      std::istringstream(argv[i + 1]) >> size[0] >> x >> size[1] >> x >> size[2];
    }
    else if (option == "--cap-gib")
    {
      capGiB = std::stod(argv[i + 1]);
    }
  }
  if (!cif::Runtime::IsDeviceAvailable())
  {
    std::cerr << "SlabBenchmark: no GPU: " << cif::Runtime::GetUnavailableReason() << '\n';
    return 0;
  }
  const std::size_t bytes = size[0] * size[1] * size[2] * sizeof(float);
  const std::size_t cap = static_cast<std::size_t>(capGiB * (1u << 30));
  std::cout << "SlabBenchmark on " << cif::Runtime::GetDeviceDescription() << "\n"
            << "volume " << size[0] << 'x' << size[1] << 'x' << size[2] << " float32 = " << bytes / 1e9
            << " GB in host memory; device memory capped at " << capGiB << " GiB for the slabbed runs\n";
  const auto input = MakeVolume(size);
  // the copies alone, with the same pageable buffers
  double h2d = 0, d2h = 0;
  {
    auto out = Image::New();
    out->SetRegions(size);
    out->Allocate();
    cif::DeviceBuffer device(bytes);
    h2d = cif_bench::TimeWallOnce([&] { device.CopyFromHost(input->GetBufferPointer(), bytes); });
    d2h = cif_bench::TimeWallOnce([&] { device.CopyToHost(out->GetBufferPointer(), bytes); });
    std::cout << "pageable copies: H2D " << bytes / h2d / 1e6 << " GB/s, D2H " << bytes / d2h / 1e6 << " GB/s\n";
  }
  {
    auto f = itk::CudaMedianImageFilter<Image, Image>::New();
    f->SetRadius(1);
    Run("median r = 1", f.GetPointer(), input, cap, h2d, d2h);
  }
  {
    auto f = itk::CudaBilateralImageFilter<Image, Image>::New();
    f->SetAutomaticKernelSize(false);
    f->SetRadius(2);
    f->SetDomainSigma(1.0);
    f->SetRangeSigma(5.0);
    Run("bilateral r = 2", f.GetPointer(), input, cap, h2d, d2h);
  }
  {
    auto f = itk::CudaBSplineDecompositionImageFilter<Image, Image>::New();
    f->SetSplineOrder(3);
    Run("cubic prefilter, recursive", f.GetPointer(), input, cap, h2d, d2h);
  }
  return 0;
}
