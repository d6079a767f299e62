/*=========================================================================
 *  CudaImageFilters
 *=========================================================================*/
// Demons registration (itk::DemonsRegistrationFilter's iterations: field
// smoothing sd 1, update, add) on an N^3 float pair, 50 iterations (issue
// 23's case: 256^3, at most 0.5 s), in one run:
//   - ITK's DemonsRegistrationFilter on all cores;
//   - the module's CudaDemonsRegistrationFilter in CPU mode (its CPU core,
//     all cores);
//   - CudaDemonsRegistrationFilter on the GPU with plain itk::Image inputs:
//     the whole path a user takes (upload, iterations, field download);
//   - the GPU core alone: the iterations on device-resident data.
// ITK takes seconds per iteration at 256^3: --itk-iterations K runs ITK's
// and the CPU core's rows for K iterations and scales them to all ("ms
// full" marked ~). The GPU's field after K iterations is compared with
// ITK's in the same run. The pair is ITK's example volume
// KmeansTest_T1UCharRaw resampled onto N^3 (fixed) and the same under a
// small affine map (moving).
//
// Bytes per iteration, the least traffic (3D, float): the smoothing's three
// passes read and write the field (2 x 3 x 12 bytes per voxel), the update
// reads the fixed and moving samples (8) and reads and writes the field
// (24): 104 bytes per voxel.
//
// --diffeomorphic: the same rows for ITK's DiffeomorphicDemonsRegistrationFilter
// and CudaDiffeomorphicDemonsRegistrationFilter (ITK's defaults: symmetric
// forces, step 0.5, one squaring). Its least traffic: the moving warp reads
// the field and writes the warped image (16; the moving gather in cache),
// the update reads the fixed and warped images and writes the update (20),
// the exponential scales the update (24) and squares it once (read twice,
// write: 36), the composition reads the field and the exponential and
// writes the field (36), the smoothing 72: 204 bytes per voxel.
//
//   DemonsBenchmark [--size N] [--iterations I] [--itk-iterations K] [--reps R] [--skip-itk] [--diffeomorphic]
#include "BenchmarkCommon.h"
#include "BenchmarkVolumes.h"
#include "cif/Demons.h"
#include "itkAffineTransform.h"
#include "itkCudaDemonsRegistrationFilter.h"
#include "itkCudaDiffeomorphicDemonsRegistrationFilter.h"
#include "itkCudaFactorylessTwin.h"
#include "itkCudaImageGeometry.h"
#include "itkDemonsRegistrationFilter.h"
#include "itkDiffeomorphicDemonsRegistrationFilter.h"
#include "itkImageFileReader.h"
#include "itkMultiThreaderBase.h"
#include "itkResampleImageFilter.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace
{
using F3 = itk::Image<float, 3>;
using Field = itk::Image<itk::Vector<float, 3>, 3>;

/** ITK's filter and the module's: Thirion's, or the diffeomorphic ones. */
template <bool Diffeomorphic>
struct Filters
{
  using Itk = itk::CudaFactorylessTwin<itk::DemonsRegistrationFilter<F3, F3, Field>>;
  using Ours = itk::CudaDemonsRegistrationFilter<F3, F3, Field>;
  static constexpr const char * name = "demons";
  static constexpr double       bytesPerVoxel = 104.0;
};
template <>
struct Filters<true>
{
  using Itk = itk::CudaFactorylessTwin<itk::DiffeomorphicDemonsRegistrationFilter<F3, F3, Field>>;
  using Ours = itk::CudaDiffeomorphicDemonsRegistrationFilter<F3, F3, Field>;
  static constexpr const char * name = "diffeomorphic demons";
  static constexpr double       bytesPerVoxel = 204.0;
};

template <typename TFilter>
Field::Pointer
Run(TFilter * filter, const F3 * fixed, const F3 * moving, unsigned int iterations)
{
  filter->SetFixedImage(fixed);
  filter->SetMovingImage(moving);
  filter->SetNumberOfIterations(iterations);
  filter->SetStandardDeviations(1.0);
  filter->Modified();
  filter->Update();
  Field::Pointer out = filter->GetOutput();
  return out;
}

double
RmsDifference(const Field * a, const Field * b)
{
  const auto * p = a->GetBufferPointer();
  const auto * q = b->GetBufferPointer();
  const auto   n = a->GetBufferedRegion().GetNumberOfPixels();
  double       sum = 0.0;
  for (std::size_t i = 0; i < n; ++i)
  {
    sum += (p[i] - q[i]).GetSquaredNorm();
  }
  return std::sqrt(sum / static_cast<double>(n));
}
double
FieldRms(const Field * a)
{
  const auto * p = a->GetBufferPointer();
  const auto   n = a->GetBufferedRegion().GetNumberOfPixels();
  double       sum = 0.0;
  for (std::size_t i = 0; i < n; ++i)
  {
    sum += p[i].GetSquaredNorm();
  }
  return std::sqrt(sum / static_cast<double>(n));
}
template <bool Diffeomorphic>
void
Benchmark(unsigned int size, unsigned int iterations, unsigned int itkIterations, int reps, bool skipItk)
{
  using cif_bench::Row;
  const bool   gpu = cif::Runtime::IsDeviceAvailable();
  const double copy = gpu ? cif_bench::CopyBandwidth() : 0.0;
  char         title[160];
  std::snprintf(title,
                sizeof(title),
                "%s registration, %u^3 float, %u iterations (sd 1)",
                Filters<Diffeomorphic>::name,
                size,
                iterations);
  cif_bench::PrintDeviceLine(title, copy);
  std::printf("ITK threads: %u\n", itk::MultiThreaderBase::GetGlobalDefaultNumberOfThreads());

  auto reader = itk::ImageFileReader<F3>::New();
  reader->SetFileName(std::string(CIF_EXAMPLES_DATA) + "/KmeansTest_T1UCharRaw.nii.gz");
  reader->Update();
  auto identity = itk::AffineTransform<double, 3>::New();
  auto affine = itk::AffineTransform<double, 3>::New();
  auto parameters = affine->GetParameters();
  parameters[0] = 1.02;
  parameters[4] = 0.98;
  parameters[9] = 1.5;
  parameters[10] = -2.0;
  affine->SetParameters(parameters);
  const F3::Pointer fixed = cif_bench::ResampledVolume(reader->GetOutput(), size, identity);
  const F3::Pointer moving = cif_bench::ResampledVolume(reader->GetOutput(), size, affine);
  const double      voxels = static_cast<double>(size) * size * size;
  const double      bytesPerIteration = Filters<Diffeomorphic>::bytesPerVoxel * voxels;
  std::vector<Row>  rows;

  Field::Pointer itkField;
  if (!skipItk)
  {
    auto   itkFilter = Filters<Diffeomorphic>::Itk::New();
    double ms = cif_bench::TimeWallOnce([&] { itkField = Run(itkFilter.GetPointer(), fixed, moving, itkIterations); });
    Row    r{ Filters<Diffeomorphic>::name, "ITK (all cores)", ms, bytesPerIteration * itkIterations, false, "",
           voxels * itkIterations };
    r.fullMs = ms * iterations / itkIterations;
    r.note = std::to_string(itkIterations) + " iterations timed";
    rows.push_back(r);
    auto cpu = Filters<Diffeomorphic>::Ours::New();
    cpu->SetExecutionMode(itk::CudaExecutionMode::CPU);
    Field::Pointer cpuField;
    ms = cif_bench::TimeWallOnce([&] { cpuField = Run(cpu.GetPointer(), fixed, moving, itkIterations); });
    r = Row{ Filters<Diffeomorphic>::name, "module CPU core", ms, bytesPerIteration * itkIterations, false, "",
             voxels * itkIterations };
    r.fullMs = ms * iterations / itkIterations;
    char note[160];
    std::snprintf(note, sizeof(note), "%u iterations timed; field RMS vs ITK %.3g", itkIterations,
                  RmsDifference(cpuField, itkField));
    r.note = note;
    rows.push_back(r);
  }
  if (gpu)
  {
    auto ours = Filters<Diffeomorphic>::Ours::New();
    ours->SetExecutionMode(itk::CudaExecutionMode::GPU);
    if (itkField)
    {
      const Field::Pointer f = Run(ours.GetPointer(), fixed, moving, itkIterations);
      std::printf("GPU field after %u iterations vs ITK's: RMS difference %.3g (ITK's field RMS %.3g)\n",
                  itkIterations,
                  RmsDifference(f, itkField),
                  FieldRms(itkField));
    }
    const double whole = cif_bench::TimeWall([&] { Run(ours.GetPointer(), fixed, moving, iterations); }, reps);
    const double transfers = (2.0 * 4.0 + 12.0) * voxels;
    rows.push_back(Row{ Filters<Diffeomorphic>::name,
                        "GPU, ITK class, plain itk::Image",
                        whole,
                        bytesPerIteration * iterations + transfers,
                        true,
                        "upload, " + std::to_string(iterations) + " iterations, field download",
                        voxels * iterations });

    // the core alone on device-resident data: the iterations
    cif::DemonsJob job;
    job.dimension = 3;
    for (unsigned a = 0; a < 3; ++a)
    {
      job.size[a] = size;
      job.moving.size[a] = size;
      job.spacing[a] = fixed->GetSpacing()[a];
      job.origin[a] = fixed->GetOrigin()[a];
      job.moving.origin[a] = moving->GetOrigin()[a];
      for (unsigned b = 0; b < 3; ++b)
      {
        job.direction[a][b] = fixed->GetDirection()[a][b];
      }
    }
    itk::CudaImageGeometry::DescribeImage(moving.GetPointer(), job.moving);
    F3::DirectionType indexToPoint;
    F3::DirectionType pointToIndex;
    itk::CudaImageGeometry::IndexMatrices(fixed.GetPointer(), indexToPoint, pointToIndex);
    for (unsigned a = 0; a < 3; ++a)
    {
      for (unsigned b = 0; b < 3; ++b)
      {
        job.indexToPoint[a][b] = indexToPoint[a][b];
        job.pointToIndex[a][b] = pointToIndex[a][b];
        job.movingInverseDirection[a][b] = moving->GetInverseDirection()[a][b];
      }
      job.movingSpacing[a] = moving->GetSpacing()[a];
    }
    if (Diffeomorphic)
    {
      job.variant = cif::DemonsVariant::Diffeomorphic;
    }
    std::vector<double> perRun;
    for (int r = 0; r < reps + 1; ++r)
    {
      auto solver = cif::MakeDemonsSolverCUDA(job, fixed->GetBufferPointer(), moving->GetBufferPointer(), nullptr);
      const double ms = cif_bench::TimeWallOnce(
        [&]
        {
          for (unsigned i = 0; i < iterations; ++i)
          {
            solver->Iterate();
          }
        });
      if (r > 0)
      {
        perRun.push_back(ms);
      }
    }
    rows.push_back(Row{ Filters<Diffeomorphic>::name,
                        "GPU core, resident",
                        cif_bench::MedianOf(perRun),
                        bytesPerIteration * iterations,
                        true,
                        "the iterations alone (each reads back its 3 sums)",
                        voxels * iterations });
  }
  cif_bench::TableLayout layout;
  layout.rateName = "Gvox-it/s";
  layout.rateUnit = 1e9;
  layout.fullColumn = true;
  cif_bench::PrintTable(rows, copy, layout);
}

} // namespace

int
main(int argc, char * argv[])
{
  unsigned int size = 256;
  unsigned int iterations = 50;
  unsigned int itkIterations = 3;
  int          reps = 5;
  bool         skipItk = false;
  bool         diffeomorphic = false;
  for (int i = 1; i < argc; ++i)
  {
    const std::string a = argv[i];
    if (a == "--size" && i + 1 < argc)
      size = static_cast<unsigned int>(std::atoi(argv[++i]));
    else if (a == "--iterations" && i + 1 < argc)
      iterations = static_cast<unsigned int>(std::atoi(argv[++i]));
    else if (a == "--itk-iterations" && i + 1 < argc)
      itkIterations = static_cast<unsigned int>(std::atoi(argv[++i]));
    else if (a == "--reps" && i + 1 < argc)
      reps = std::atoi(argv[++i]);
    else if (a == "--skip-itk")
      skipItk = true;
    else if (a == "--diffeomorphic")
      diffeomorphic = true;
    else
    {
      std::fprintf(stderr,
                   "usage: DemonsBenchmark [--size N] [--iterations I] [--itk-iterations K] [--reps R] [--skip-itk] "
                   "[--diffeomorphic]\n");
      return 2;
    }
  }
  if (diffeomorphic)
  {
    Benchmark<true>(size, iterations, itkIterations, reps, skipItk);
  }
  else
  {
    Benchmark<false>(size, iterations, itkIterations, reps, skipItk);
  }
  return 0;
}
