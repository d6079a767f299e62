/*=========================================================================
 *  CudaImageFilters: the whole path a C++ user takes (an executable, not a
 *  test). For every ITK class of the module, in one run on one GPU:
 *
 *  - "resident": the class with itk::CudaFilterImage input and output whose data
 *    is already on the device (the device work plus the class's own
 *    overhead: allocation of the output, launches);
 *  - "whole": the same class with plain itk::Image input and output (the
 *    upload, the device work, the download into the output image);
 *  - the pinned host-device bandwidth measured in the same run (cudaMemcpy
 *    between cudaHostAlloc'd memory and the device, 1 GiB, each way);
 *  - the floor: resident + input bytes / pinned up + output bytes / pinned
 *    down, and whole / floor (target: at most 1.3).
 *
 *  Every whole-path output is checked equal to the resident output.
 *  Float32 volumes of n^3 (uniform noise in [0, 1000)), median of --reps
 *  updates after a warm-up update (Modified() before each).
 *
 *    WholeImageBenchmark [--sizes 512,1024] [--reps N] [--only NAME[,NAME]]
 *                        [--lanes N] [--chunk-mib M] [--staging-sweep] [--skip-itk]
 *                        [--breakdown]
 *
 *  --breakdown first times the steps of the mask's one-piece path (device
 *  blocks, each copy, the kernel, the frees) and the same job in slabs.
 *=========================================================================*/
#include "BenchmarkCommon.h"
#include "cif/Execution.h"
#include "cif/Mask.h"
#include "cif/PooledBuffer.h"
#include "cif/Slabs.h"
#include "itkBSplineInterpolateImageFunction.h"
#include "itkCudaBSplineDecompositionImageFilter.h"
#include "itkCudaBinShrinkImageFilter.h"
#include "itkCudaSmoothingRecursiveGaussianImageFilter.h"
#include "itkCudaDiscreteGaussianImageFilter.h"
#include "itkCudaShrinkImageFilter.h"
#include "itkDiscreteGaussianImageFilter.h"
#include "itkShrinkImageFilter.h"
#include "itkSmoothingRecursiveGaussianImageFilter.h"
#include "itkCudaGradientAnisotropicDiffusionImageFilter.h"
#include "itkBinShrinkImageFilter.h"
#include "itkMultiThreaderBase.h"
#include "itkCudaBilateralImageFilter.h"
#include "itkCudaBinaryThresholdImageFilter.h"
#include "itkCudaGrayscaleErodeImageFilter.h"
#include "itkCudaFactorylessTwin.h"
#include "itkCudaFilterImage.h"
#include "itkCudaMaskImageFilter.h"
#include "itkCudaMeanImageFilter.h"
#include "itkCudaMedianImageFilter.h"
#include "itkCudaResampleImageFilter.h"
#include "itkCudaRotatingMaskImageFilter.h"
#include "itkCudaThresholdToPackedMaskImageFilter.h"
#include "itkEuler3DTransform.h"
#include "itkFlatStructuringElement.h"
#include "itkLinearInterpolateImageFunction.h"

#include <sys/mman.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace
{
using namespace cif_bench;
using Mode = itk::CudaExecutionMode;

struct PinnedBandwidth
{
  double up{ 0 };   ///< GB/s host to device
  double down{ 0 }; ///< GB/s device to host
};

#ifdef CUDAIMAGEFILTERS_WITH_CUDA
/** cudaMemcpy of 1 GiB between pinned host memory and the device, median of 5 each way. */
PinnedBandwidth
MeasurePinnedBandwidth()
{
  const std::size_t bytes = std::size_t{ 1 } << 30;
  void *            host = nullptr;
  CIF_CUDA_CHECK(cudaHostAlloc(&host, bytes, cudaHostAllocDefault));
  std::memset(host, 0x3C, bytes);
  cif::DeviceBuffer device(bytes);
  CudaEventTimer        timer;
  std::vector<double>   up, down;
  for (int i = 0; i < 6; ++i)
  {
    timer.Start();
    CIF_CUDA_CHECK(cudaMemcpy(device.GetPointer(), host, bytes, cudaMemcpyHostToDevice));
    const double u = timer.Stop();
    timer.Start();
    CIF_CUDA_CHECK(cudaMemcpy(host, device.GetPointer(), bytes, cudaMemcpyDeviceToHost));
    const double d = timer.Stop();
    if (i > 0)
    {
      up.push_back(u);
      down.push_back(d);
    }
  }
  CIF_CUDA_CHECK(cudaFreeHost(host));
  return { GBps(static_cast<double>(bytes), MedianOf(up)), GBps(static_cast<double>(bytes), MedianOf(down)) };
}
#endif

/** The module's own staged copy of a pageable buffer (what plain images
 * use), GB/s each way; `fresh`: down into newly allocated memory each time
 * (its pages are first touched by the copy, as a new output image's are). */
PinnedBandwidth
MeasureStagedBandwidth(std::size_t bytes, bool fresh = false)
{
  std::vector<unsigned char> host(bytes, 0x5A);
  cif::DeviceBuffer      device(bytes);
  std::vector<double>        up, down;
  for (int i = 0; i < 4; ++i)
  {
    const double u = TimeWallOnce([&] { device.CopyFromHost(host.data(), bytes); });
    double       d = 0;
    if (fresh)
    {
      std::unique_ptr<unsigned char[]> target(new unsigned char[bytes]); // not touched
      d = TimeWallOnce([&] { device.CopyToHost(target.get(), bytes); });
    }
    else
    {
      d = TimeWallOnce([&] { device.CopyToHost(host.data(), bytes); });
    }
    if (i > 0)
    {
      up.push_back(u);
      down.push_back(d);
    }
  }
  return { GBps(static_cast<double>(bytes), MedianOf(up)), GBps(static_cast<double>(bytes), MedianOf(down)) };
}

/** Down into fresh memory three ways: as it comes, after
 * madvise(MADV_HUGEPAGE), and after populating it (MADV_POPULATE_WRITE, 8
 * threads; the populate time is printed apart). */
void
FreshTargetStudy()
{
  const std::size_t     bytes = std::size_t{ 1 } << 30;
  std::vector<char>     host(bytes, 1);
  cif::DeviceBuffer device(bytes);
  device.CopyFromHost(host.data(), bytes);
  std::FILE * thp = std::fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
  char        mode[128] = "unknown";
  if (thp)
  {
    if (!std::fgets(mode, sizeof mode, thp))
    {
      std::strcpy(mode, "unreadable");
    }
    std::fclose(thp);
  }
  std::printf("transparent huge pages: %s", mode);
  for (int variant = 0; variant < 3; ++variant)
  {
    std::vector<double> down, populate;
    for (int i = 0; i < 4; ++i)
    {
      void * p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED)
      {
        std::printf("mmap failed\n");
        return;
      }
      double pop = 0;
      if (variant == 1)
      {
        madvise(p, bytes, MADV_HUGEPAGE);
      }
      if (variant == 2)
      {
        pop = TimeWallOnce(
          [&]
          {
            std::vector<std::thread> threads;
            for (int t = 0; t < 8; ++t)
            {
              threads.emplace_back(
                [&, t]
                {
                  const std::size_t part = bytes / 8;
                  madvise(static_cast<char *>(p) + t * part, part, 23 /* MADV_POPULATE_WRITE */);
                });
            }
            for (auto & th : threads)
            {
              th.join();
            }
          });
      }
      const double d = TimeWallOnce([&] { device.CopyToHost(p, bytes); });
      munmap(p, bytes);
      if (i > 0)
      {
        down.push_back(d);
        populate.push_back(pop);
      }
    }
    std::printf("  fresh target, %s: down %.1f GB/s%s",
                variant == 0 ? "as it comes" : variant == 1 ? "MADV_HUGEPAGE" : "populated first",
                GBps(static_cast<double>(bytes), MedianOf(down)),
                variant == 2 ? "" : "\n");
    if (variant == 2)
    {
      std::printf(" (populating took %.1f ms = %.1f GB/s)\n",
                  MedianOf(populate),
                  GBps(static_cast<double>(bytes), MedianOf(populate)));
    }
  }
}

/** The staged copy's rate for several lane counts and chunk sizes. */
void
StagingSweep()
{
  std::printf("staged copies of a pageable 1 GiB buffer: lanes x chunk -> up, down (warm target), down (fresh target) GB/s\n");
  for (int lanes : { 4, 8, 12, 16 })
  {
    for (std::size_t chunk : { std::size_t{ 4 } << 20, std::size_t{ 8 } << 20, std::size_t{ 16 } << 20 })
    {
      cif::Runtime::SetStagingLanes(lanes);
      cif::Runtime::SetStagingChunkBytes(chunk);
      const PinnedBandwidth warm = MeasureStagedBandwidth(std::size_t{ 1 } << 30);
      const PinnedBandwidth fresh = MeasureStagedBandwidth(std::size_t{ 1 } << 30, true);
      std::printf("  %2d lanes x %2zu MiB: up %.1f, down %.1f, down fresh %.1f\n",
                  lanes,
                  chunk >> 20,
                  warm.up,
                  warm.down,
                  fresh.down);
    }
  }
  cif::Runtime::SetStagingLanes(0);
  cif::Runtime::SetStagingChunkBytes(0);
}

#ifdef CUDAIMAGEFILTERS_WITH_CUDA
/** Where the mask's whole-image time goes at n^3: the steps of its one-piece
 * path on plain host buffers (device blocks from cudaMalloc or from the
 * stream-ordered pool, the staged copies, the kernel, the frees), and the
 * same job in double-buffered slabs, whose uploads and downloads overlap.
 * Medians of --reps after a warm-up. */
void
MaskBreakdown(std::size_t n, int reps)
{
  const std::size_t  voxels = n * n * n;
  std::vector<float> image(voxels), output(voxels);
  std::vector<unsigned char> mask(voxels);
  std::mt19937       random(7);
  std::uniform_real_distribution<float> uniform(0.0f, 1000.0f);
  for (std::size_t i = 0; i < voxels; ++i)
  {
    image[i] = uniform(random);
    mask[i] = image[i] > 500.0f ? 1 : 0;
  }
  cif::MaskGeometry g;
  for (int a = 0; a < 3; ++a)
  {
    g.inputSize[a] = g.outputSize[a] = static_cast<std::int64_t>(n);
  }
  const std::size_t bytes = voxels * sizeof(float);
  std::vector<double> alloc, up, upMask, kernel, down, release, pooled, pooledRelease, slabs;
  for (int r = 0; r <= reps; ++r)
  {
    cif::DeviceBuffer in, m, out;
    const double      a = TimeWallOnce(
      [&]
      {
        in.Allocate(bytes);
        m.Allocate(voxels);
        out.Allocate(bytes);
      });
    const double u = TimeWallOnce([&] { in.CopyFromHost(image.data(), bytes); });
    const double um = TimeWallOnce([&] { m.CopyFromHost(mask.data(), voxels); });
    const double k = TimeWallOnce(
      [&]
      {
        cif::MaskCUDA(static_cast<const float *>(in.GetPointer()),
                      static_cast<const unsigned char *>(m.GetPointer()),
                      static_cast<float *>(out.GetPointer()),
                      g,
                      static_cast<unsigned char>(0),
                      -1.0f);
      });
    const double d = TimeWallOnce([&] { out.CopyToHost(output.data(), bytes); });
    const double f = TimeWallOnce(
      [&]
      {
        in.Release();
        m.Release();
        out.Release();
      });
    double p = 0, pf = 0;
    {
      std::unique_ptr<cif::PooledBuffer> pin, pm, pout;
      p = TimeWallOnce(
        [&]
        {
          pin.reset(new cif::PooledBuffer(bytes, cif::CurrentStream()));
          pm.reset(new cif::PooledBuffer(voxels, cif::CurrentStream()));
          pout.reset(new cif::PooledBuffer(bytes, cif::CurrentStream()));
          cif::Runtime::Synchronize();
        });
      pf = TimeWallOnce(
        [&]
        {
          pin.reset();
          pm.reset();
          pout.reset();
          cif::Runtime::Synchronize();
        });
    }
    cif::SlabLayout layout;
    layout.outer = 1;
    layout.inputPlanes = layout.outputPlanes = static_cast<std::int64_t>(n);
    layout.inputPlaneBytes = { n * n * sizeof(float), n * n };
    layout.outputPlaneBytes = n * n * sizeof(float);
    const double s = TimeWallOnce(
      [&]
      {
        cif::RunInSlabsCUDA(
          { image.data(), mask.data() },
          output.data(),
          layout,
          0,
          [&](const void * const * inputs, void * o, const cif::Slab & slab)
          {
            cif::MaskGeometry piece = g;
            piece.inputSize[2] = piece.outputSize[2] = slab.inputCount;
            cif::MaskCUDA(static_cast<const float *>(inputs[0]),
                          static_cast<const unsigned char *>(inputs[1]),
                          static_cast<float *>(o),
                          piece,
                          static_cast<unsigned char>(0),
                          -1.0f);
          },
          std::size_t{ 64 } << 20);
      });
    if (r > 0)
    {
      alloc.push_back(a);
      up.push_back(u);
      upMask.push_back(um);
      kernel.push_back(k);
      down.push_back(d);
      release.push_back(f);
      pooled.push_back(p);
      pooledRelease.push_back(pf);
      slabs.push_back(s);
    }
  }
  std::printf("mask %zu^3 float32 by uint8, one piece on plain host buffers, step by step (ms, median of %d):\n"
              "  cudaMalloc x3 %.2f | up image %.2f (%.1f GB/s) | up mask %.2f (%.1f GB/s) | kernel %.2f | "
              "down %.2f (%.1f GB/s) | cudaFree x3 %.2f | sum %.2f\n"
              "  the same blocks from the stream-ordered pool: take x3 %.3f, give back x3 %.3f\n"
              "  the same job in double-buffered slabs of 64 MiB (uploads and downloads overlap): %.2f\n",
              n,
              reps,
              MedianOf(alloc),
              MedianOf(up),
              GBps(static_cast<double>(bytes), MedianOf(up)),
              MedianOf(upMask),
              GBps(static_cast<double>(voxels), MedianOf(upMask)),
              MedianOf(kernel),
              MedianOf(down),
              GBps(static_cast<double>(bytes), MedianOf(down)),
              MedianOf(release),
              MedianOf(alloc) + MedianOf(up) + MedianOf(upMask) + MedianOf(kernel) + MedianOf(down) +
                MedianOf(release),
              MedianOf(pooled),
              MedianOf(pooledRelease),
              MedianOf(slabs));
  std::fflush(stdout);
}
#endif

template <typename TImage>
typename TImage::Pointer
MakeImage(std::size_t n, const std::vector<float> & values)
{
  using Pixel = typename TImage::PixelType;
  auto                      image = TImage::New();
  typename TImage::SizeType size;
  size.Fill(n);
  image->SetRegions(size);
  image->Allocate();
  Pixel * p = image->GetBufferPointer();
  for (std::size_t i = 0; i < values.size(); ++i)
  {
    p[i] = static_cast<Pixel>(values[i]);
  }
  return image;
}

struct Result
{
  std::string name;
  std::size_t n{ 0 };
  double      resident{ 0 };
  double      whole{ 0 };
  double      inBytes{ 0 };
  double      outBytes{ 0 };
  bool        equal{ false };
  std::string ranOn;
};

/** Times filter class TFilter<In, Out> both ways on n^3 voxels; `configure`
 * sets its parameters (a generic lambda taking the filter pointer). */
template <template <typename, typename> class TFilter, typename TIn, typename TOut, typename TConfigure>
Result
Measure(const std::string & name, std::size_t n, const std::vector<float> & values, int reps, TConfigure configure)
{
  using PlainIn = itk::Image<TIn, 3>;
  using PlainOut = itk::Image<TOut, 3>;
  using DeviceIn = itk::CudaFilterImage<TIn, 3>;
  using DeviceOut = itk::CudaFilterImage<TOut, 3>;
  Result r;
  r.name = name;
  r.n = n;
  const double voxels = static_cast<double>(n) * n * n;
  r.inBytes = voxels * sizeof(TIn);
  std::size_t outVoxels = 0; // from the output (a shrink has fewer)

  std::vector<TOut> residentOutput;
  {
    auto input = MakeImage<DeviceIn>(n, values);
    input->GetDeviceBufferPointer(); // uploaded before the timing
    auto filter = TFilter<DeviceIn, DeviceOut>::New();
    filter->SetInput(input);
    filter->SetExecutionMode(Mode::GPU);
    configure(filter.GetPointer());
    r.resident = TimeWall(
      [&]
      {
        filter->Modified();
        filter->Update();
        cif::Runtime::Synchronize();
      },
      reps);
    const TOut * p = filter->GetOutput()->GetBufferPointer(); // downloads, outside the timing
    outVoxels = filter->GetOutput()->GetBufferedRegion().GetNumberOfPixels();
    residentOutput.assign(p, p + outVoxels);
    r.outBytes = static_cast<double>(outVoxels) * sizeof(TOut);
  }
  auto input = MakeImage<PlainIn>(n, values);
  auto filter = TFilter<PlainIn, PlainOut>::New();
  filter->SetInput(input);
  filter->SetExecutionMode(Mode::GPU);
  configure(filter.GetPointer());
  r.whole = TimeWall(
    [&]
    {
      filter->Modified();
      filter->Update();
    },
    reps);
  r.ranOn = filter->GetLastExecutionReport().Message;
  const TOut * p = filter->GetOutput()->GetBufferPointer();
  r.equal = std::memcmp(p, residentOutput.data(), residentOutput.size() * sizeof(TOut)) == 0;
  return r;
}

/** ITK's own filter TItk<Image, Image> (made without the factory) on all
 * cores, for the job of the row before it: "ITK <label>, T threads, n^3
 * float: ms". */
template <template <typename, typename> class TItk, typename TConfigure>
void
ItkRow(const char * label, std::size_t n, const std::vector<float> & values, int reps, TConfigure configure)
{
  using Image = itk::Image<float, 3>;
  auto image = MakeImage<Image>(n, values);
  auto filter = itk::CudaFactorylessTwin<TItk<Image, Image>>::New();
  filter->SetInput(image);
  configure(filter.GetPointer());
  const double ms = TimeWall(
    [&]
    {
      filter->Modified();
      filter->Update();
    },
    reps);
  std::printf("  ITK %s, %u threads, %zu^3 float: %.1f ms\n",
              label,
              itk::MultiThreaderBase::GetGlobalDefaultNumberOfThreads(),
              n,
              ms);
}

template <typename TIn, typename TOut>
using Median = itk::CudaMedianImageFilter<TIn, TOut>;
template <typename TIn, typename TOut>
using Mean = itk::CudaMeanImageFilter<TIn, TOut>;
template <typename TIn, typename TOut>
using Erode = itk::CudaGrayscaleErodeImageFilter<TIn, TOut, itk::FlatStructuringElement<3>>;
template <typename TIn, typename TOut>
using Bilateral = itk::CudaBilateralImageFilter<TIn, TOut>;
template <typename TIn, typename TOut>
using RotatingMask = itk::CudaRotatingMaskImageFilter<TIn, TOut>;
template <typename TIn, typename TOut>
using Threshold = itk::CudaBinaryThresholdImageFilter<TIn, TOut>;
template <typename TIn, typename TOut>
using Prefilter = itk::CudaBSplineDecompositionImageFilter<TIn, TOut>;
template <typename TIn, typename TOut>
using Resample = itk::CudaResampleImageFilter<TIn, TOut>;
template <typename TIn, typename TOut>
using BinShrink = itk::CudaBinShrinkImageFilter<TIn, TOut>;
template <typename TIn, typename TOut>
using Smoothing = itk::CudaSmoothingRecursiveGaussianImageFilter<TIn, TOut>;
template <typename TIn, typename TOut>
using DiscreteGaussian = itk::CudaDiscreteGaussianImageFilter<TIn, TOut>;
template <typename TIn, typename TOut>
using Shrink = itk::CudaShrinkImageFilter<TIn, TOut>;
template <typename TIn, typename TOut>
using GradientDiffusion = itk::CudaGradientAnisotropicDiffusionImageFilter<TIn, TOut>;
/** The mask filter with a mask of unsigned char on the input's side: a
 * CudaFilterImage for device-resident inputs, a plain image otherwise. */
template <typename TIn, typename TOut>
using Mask = itk::CudaMaskImageFilter<
  TIn,
  std::conditional_t<std::is_base_of<itk::CudaFilterImage<float, 3>, TIn>::value,
                     itk::CudaFilterImage<unsigned char, 3>,
                     itk::Image<unsigned char, 3>>,
  TOut>;

/** The rotation of ResampleBenchmark: 10 degrees about z, 5 about x, about the centre. */
template <typename TFilter>
void
SetRotation(TFilter * filter, std::size_t n)
{
  using Image = typename TFilter::InputImageType;
  auto               transform = itk::Euler3DTransform<double>::New();
  itk::Point<double, 3> centre;
  centre.Fill(0.5 * (static_cast<double>(n) - 1));
  transform->SetCenter(centre);
  transform->SetRotation(0.5 * 10.0 * 3.14159265358979 / 180.0, 0.0, 10.0 * 3.14159265358979 / 180.0);
  filter->SetTransform(transform);
  typename Image::SizeType size;
  size.Fill(n);
  filter->SetSize(size);
}

bool
Wanted(const std::vector<std::string> & only, const std::string & name)
{
  if (only.empty())
  {
    return true;
  }
  for (const auto & o : only)
  {
    if (name.rfind(o, 0) == 0)
    {
      return true;
    }
  }
  return false;
}

std::vector<std::string>
Split(const std::string & text)
{
  std::vector<std::string> parts;
  std::stringstream        in(text);
  for (std::string part; std::getline(in, part, ',');)
  {
    if (!part.empty())
    {
      parts.push_back(part);
    }
  }
  return parts;
}
} // namespace

int
main(int argc, char * argv[])
{
  std::vector<std::size_t> sizes{ 512, 1024 };
  std::vector<std::string> only;
  int                      reps = 3;
  bool                     sweep = false;
  bool                     itkRows = true;
  bool                     breakdown = false;
  for (int i = 1; i < argc; ++i)
  {
    if (!std::strcmp(argv[i], "--sizes") && i + 1 < argc)
    {
      sizes.clear();
      for (const auto & s : Split(argv[++i]))
      {
        sizes.push_back(static_cast<std::size_t>(std::stoul(s)));
      }
    }
    else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc)
    {
      reps = std::max(1, std::atoi(argv[++i]));
    }
    else if (!std::strcmp(argv[i], "--only") && i + 1 < argc)
    {
      only = Split(argv[++i]);
    }
    else if (!std::strcmp(argv[i], "--lanes") && i + 1 < argc)
    {
      cif::Runtime::SetStagingLanes(std::atoi(argv[++i]));
    }
    else if (!std::strcmp(argv[i], "--chunk-mib") && i + 1 < argc)
    {
      cif::Runtime::SetStagingChunkBytes(static_cast<std::size_t>(std::atoi(argv[++i])) << 20);
    }
    else if (!std::strcmp(argv[i], "--skip-itk"))
    {
      itkRows = false;
    }
    else if (!std::strcmp(argv[i], "--breakdown"))
    {
      breakdown = true;
    }
    else if (!std::strcmp(argv[i], "--staging-sweep"))
    {
      sweep = true;
    }
    else
    {
      std::printf("usage: %s [--sizes 512,1024] [--reps N] [--only NAME[,NAME]] [--lanes N] [--chunk-mib M] "
                  "[--staging-sweep] [--skip-itk] [--breakdown]\n", argv[0]);
      return 2;
    }
  }
  if (!cif::Runtime::IsDeviceAvailable())
  {
    std::printf("WholeImageBenchmark: no GPU (%s)\n", cif::Runtime::GetUnavailableReason().c_str());
    return 0;
  }
  PinnedBandwidth pinned;
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
  pinned = MeasurePinnedBandwidth();
#endif
#ifdef CUDAIMAGEFILTERS_WITH_CUDA
  if (breakdown)
  {
    for (std::size_t n : sizes)
    {
      MaskBreakdown(n, reps);
    }
  }
#endif
  if (sweep)
  {
    FreshTargetStudy();
    StagingSweep();
  }
  const PinnedBandwidth staged = MeasureStagedBandwidth(std::size_t{ 1 } << 30);
  PrintDeviceLine("Whole images through the ITK classes, float32", CopyBandwidth());
  std::printf("pinned cudaMemcpy, 1 GiB: up %.1f GB/s, down %.1f GB/s\n", pinned.up, pinned.down);
  std::printf("the module's staged copy of a pageable 1 GiB buffer (%d lanes, %zu MiB chunks): up %.1f GB/s, down %.1f GB/s\n",
              cif::Runtime::GetStagingLanes(),
              cif::Runtime::GetStagingChunkBytes() >> 20,
              staged.up,
              staged.down);
  std::printf("floor = resident + input bytes / pinned up + output bytes / pinned down; target whole / floor <= 1.3\n\n");

  std::vector<Result> results;
  for (std::size_t n : sizes)
  {
    std::vector<float> values(n * n * n);
    std::mt19937       random(7);
    std::uniform_real_distribution<float> uniform(0.0f, 1000.0f);
    for (auto & v : values)
    {
      v = uniform(random);
    }
    const auto run = [&](const std::string & name, auto measure)
    {
      if (Wanted(only, name))
      {
        results.push_back(measure(name));
        const Result & r = results.back();
        std::printf("  %s %zu^3: resident %.1f ms, whole %.1f ms\n", r.name.c_str(), r.n, r.resident, r.whole);
        std::fflush(stdout);
      }
    };
    run("median r=1",
        [&](const std::string & name)
        {
          return Measure<Median, float, float>(name, n, values, reps, [](auto * f) { f->SetRadius(1); });
        });
    run("mean r=1",
        [&](const std::string & name)
        { return Measure<Mean, float, float>(name, n, values, reps, [](auto * f) { f->SetRadius(1); }); });
    run("erode r=1",
        [&](const std::string & name)
        {
          return Measure<Erode, float, float>(
            name,
            n,
            values,
            reps,
            [](auto * f)
            {
              itk::FlatStructuringElement<3>::RadiusType radius;
              radius.Fill(1);
              f->SetKernel(itk::FlatStructuringElement<3>::Box(radius));
            });
        });
    run("bilateral r=2",
        [&](const std::string & name)
        {
          return Measure<Bilateral, float, float>(name,
                                                  n,
                                                  values,
                                                  reps,
                                                  [](auto * f)
                                                  {
                                                    f->SetDomainSigma(0.8);
                                                    f->SetRangeSigma(200.0);
                                                  });
        });
    run("rotating mask",
        [&](const std::string & name)
        { return Measure<RotatingMask, float, float>(name, n, values, reps, [](auto *) {}); });
    run("binary threshold to uint8",
        [&](const std::string & name)
        {
          return Measure<Threshold, float, unsigned char>(name,
                                                          n,
                                                          values,
                                                          reps,
                                                          [](auto * f)
                                                          {
                                                            f->SetLowerThreshold(250.0f);
                                                            f->SetUpperThreshold(750.0f);
                                                          });
        });
    run("prefilter (recursive)",
        [&](const std::string & name)
        { return Measure<Prefilter, float, float>(name, n, values, reps, [](auto *) {}); });
    run("resample cubic, ITK's BSplineInterpolateImageFunction",
        [&](const std::string & name)
        {
          return Measure<Resample, float, float>(name,
                                                 n,
                                                 values,
                                                 reps,
                                                 [n](auto * f)
                                                 {
                                                   using Image = typename std::remove_pointer<decltype(f)>::type::InputImageType;
                                                   auto cubic = itk::BSplineInterpolateImageFunction<Image, double, double>::New();
                                                   cubic->SetSplineOrder(3);
                                                   f->SetInterpolator(cubic);
                                                   SetRotation(f, n);
                                                 });
        });
    run("bin shrink 2x2x2",
        [&](const std::string & name)
        {
          return Measure<BinShrink, float, float>(name, n, values, reps, [](auto * f) { f->SetShrinkFactors(2u); });
        });
    if (Wanted(only, "bin shrink 2x2x2") && itkRows)
    {
      ItkRow<itk::BinShrinkImageFilter>("BinShrinkImageFilter 2x2x2", n, values, reps, [](auto * f) { f->SetShrinkFactors(2u); });
    }
    run("shrink 2x2x2",
        [&](const std::string & name)
        { return Measure<Shrink, float, float>(name, n, values, reps, [](auto * f) { f->SetShrinkFactors(2u); }); });
    if (Wanted(only, "shrink 2x2x2") && itkRows)
    {
      ItkRow<itk::ShrinkImageFilter>("ShrinkImageFilter 2x2x2", n, values, reps, [](auto * f) { f->SetShrinkFactors(2u); });
    }
    run("smoothing recursive Gaussian sigma 2",
        [&](const std::string & name)
        { return Measure<Smoothing, float, float>(name, n, values, reps, [](auto * f) { f->SetSigma(2.0); }); });
    if (Wanted(only, "smoothing recursive Gaussian sigma 2") && itkRows)
    {
      ItkRow<itk::SmoothingRecursiveGaussianImageFilter>(
        "SmoothingRecursiveGaussianImageFilter sigma 2", n, values, reps, [](auto * f) { f->SetSigma(2.0); });
    }
    run("discrete Gaussian variance 4",
        [&](const std::string & name)
        { return Measure<DiscreteGaussian, float, float>(name, n, values, reps, [](auto * f) { f->SetVariance(4.0); }); });
    if (Wanted(only, "discrete Gaussian variance 4") && itkRows)
    {
      ItkRow<itk::DiscreteGaussianImageFilter>(
        "DiscreteGaussianImageFilter variance 4", n, values, reps, [](auto * f) { f->SetVariance(4.0); });
    }
    run("gradient anisotropic diffusion, 5 iterations",
        [&](const std::string & name)
        {
          return Measure<GradientDiffusion, float, float>(name,
                                                          n,
                                                          values,
                                                          reps,
                                                          [](auto * f)
                                                          {
                                                            f->SetNumberOfIterations(5);
                                                            f->SetTimeStep(0.0625);
                                                          });
        });
    run("mask by a uint8 mask",
        [&](const std::string & name)
        {
          Result r = Measure<Mask, float, float>(name,
                                                 n,
                                                 values,
                                                 reps,
                                                 [&](auto * f)
                                                 {
                                                   using MaskImage =
                                                     typename std::remove_pointer<decltype(f)>::type::MaskImageType;
                                                   auto mask = MakeImage<MaskImage>(n, {});
                                                   unsigned char * m = mask->GetBufferPointer();
                                                   for (std::size_t i = 0; i < values.size(); ++i)
                                                   {
                                                     m[i] = values[i] > 500.0f ? 1 : 0;
                                                   }
                                                   if constexpr (!std::is_same<MaskImage, itk::Image<unsigned char, 3>>::value)
                                                   {
                                                     mask->GetDeviceBufferPointer(); // resident: uploaded before the timing
                                                   }
                                                   f->SetMaskImage(mask);
                                                   f->SetOutsideValue(-1.0f);
                                                 });
          r.inBytes += static_cast<double>(n) * n * n; // the mask moves too
          return r;
        });
    if (Wanted(only, "mask by a uint8 mask") && itkRows)
    {
      // ITK's own filter on all cores, for the same job
      using Image = itk::Image<float, 3>;
      using MaskImage = itk::Image<unsigned char, 3>;
      auto image = MakeImage<Image>(n, values);
      auto mask = MakeImage<MaskImage>(n, {});
      for (std::size_t i = 0; i < values.size(); ++i)
      {
        mask->GetBufferPointer()[i] = values[i] > 500.0f ? 1 : 0;
      }
      auto itkMask = itk::MaskImageFilter<Image, MaskImage>::New();
      itkMask->SetInput(image);
      itkMask->SetMaskImage(mask);
      itkMask->SetOutsideValue(-1.0f);
      const double ms = TimeWall(
        [&]
        {
          itkMask->Modified();
          itkMask->Update();
        },
        reps);
      std::printf("  ITK MaskImageFilter, %u threads, %zu^3 float, uint8 mask: %.1f ms\n",
                  itk::MultiThreaderBase::GetGlobalDefaultNumberOfThreads(),
                  n,
                  ms);
    }
    run("resample linear",
        [&](const std::string & name)
        {
          return Measure<Resample, float, float>(name,
                                                 n,
                                                 values,
                                                 reps,
                                                 [n](auto * f)
                                                 {
                                                   using Image = typename std::remove_pointer<decltype(f)>::type::InputImageType;
                                                   f->SetInterpolator(itk::LinearInterpolateImageFunction<Image, double>::New());
                                                   SetRotation(f, n);
                                                 });
        });
  }

  std::printf("\n| filter | size | resident ms | whole ms | transfers at pinned speed ms | floor ms | whole / floor | "
              "whole GB/s (in + out) | equal |\n|---|---|---|---|---|---|---|---|---|\n");
  for (const auto & r : results)
  {
    const double transfer = pinned.up > 0 ? r.inBytes / (pinned.up * 1e6) + r.outBytes / (pinned.down * 1e6) : 0;
    const double floor = r.resident + transfer;
    std::printf("| %s | %zu^3 | %.1f | %.1f | %.1f | %.1f | %.2f | %.1f | %s |\n",
                r.name.c_str(),
                r.n,
                r.resident,
                r.whole,
                transfer,
                floor,
                r.whole / floor,
                GBps(r.inBytes + r.outBytes, r.whole),
                r.equal ? "yes" : "NO");
  }
  std::printf("\nlast report: %s\n", results.empty() ? "" : results.back().ranOn.c_str());
  return 0;
}
