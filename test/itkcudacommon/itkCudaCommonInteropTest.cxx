// An image passes between ITKCudaCommon's itk::CudaImage (RTK's CUDA image)
// and this module's itk::CudaFilterImage on the GPU without a host copy, both
// ways (itkCudaCommonInterop.h), in the chain an RTK user writes:
//
//   ITKCudaCommon GPU filter (CudaSquareImageFilter, standing in for an RTK
//   reconstruction) -> view -> this module's CudaMedianImageFilter on the GPU
//   -> view -> ITKCudaCommon GPU filter again.
//
// Transfers are counted on both sides:
// - this module's: its transfer counters (every upload and download it makes)
//   must stay at zero through the chain;
// - ITKCudaCommon's: it has no counters, so the host buffer of the first
//   filter's output is filled with a sentinel after that filter ran, and must
//   still hold it at the end (no download into it), and its data managers'
//   dirty flags must say the device copy is the current one (no upload on the
//   next read).
// The values are checked against ITK's CPU MedianImageFilter, exactly (our
// median is ITK-exact, and a float square is one rounding on both devices).
// Sources are released early on purpose: each view must keep the other
// side's device buffer alive (run it under compute-sanitizer memcheck).
//
// Without a GPU it says so and passes, unless CUDAIMAGEFILTERS_REQUIRE_GPU is
// 1 or more, then it fails.
#include "interop/itkCudaCommonInterop.h"
#include "itkCudaImageFiltersFactory.h"
#include "itkCudaMedianImageFilter.h"
#include "itkCudaSquareImageFilter.h"
#include "itkImageRegionIterator.h"
#include "itkMedianImageFilter.h"
#include "cif/Runtime.h"

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>

namespace
{
int failures = 0;

void
Check(bool condition, const std::string & what)
{
  std::cout << (condition ? "  ok    " : "  FAIL  ") << what << '\n';
  if (!condition)
  {
    ++failures;
  }
}

std::string
Counters()
{
  const auto c = cif::Runtime::GetTransferCounters();
  return std::to_string(c.HostToDeviceCount) + " uploads, " + std::to_string(c.DeviceToHostCount) + " downloads";
}

bool
NoTransfers()
{
  const auto c = cif::Runtime::GetTransferCounters();
  return c.HostToDeviceCount == 0 && c.DeviceToHostCount == 0;
}
} // namespace

int
main()
{
  const char * required = std::getenv("CUDAIMAGEFILTERS_REQUIRE_GPU");
  const bool   requireGpu = required != nullptr && std::atoi(required) >= 1;
  if (!cif::Runtime::IsDeviceAvailable())
  {
    std::cout << "no GPU: " << cif::Runtime::GetUnavailableReason() << '\n';
    return requireGpu ? EXIT_FAILURE : EXIT_SUCCESS;
  }
  std::cout << "GPU: " << cif::Runtime::GetDeviceDescription() << '\n';

  constexpr unsigned int Dimension = 3;
  using Theirs = itk::CudaImage<float, Dimension>;
  using Ours = itk::CudaFilterImage<float, Dimension>;
  using Plain = itk::Image<float, Dimension>;

  // the input: integers 0..63 (exact squares), on ITKCudaCommon's image
  Theirs::RegionType region;
  region.SetSize({ { 48, 40, 32 } });
  auto input = Theirs::New();
  input->SetRegions(region);
  input->SetSpacing(itk::MakeVector(0.7, 0.7, 2.5));
  input->Allocate();
  auto plainSquare = Plain::New(); // the CPU reference of the first step
  plainSquare->CopyInformation(input);
  plainSquare->SetRegions(region);
  plainSquare->Allocate();
  std::mt19937 random(7);
  {
    float *             host = input->GetBufferPointer(); // (ITKCudaCommon: the host copy is the current one)
    float *             reference = plainSquare->GetBufferPointer();
    const std::size_t   n = region.GetNumberOfPixels();
    for (std::size_t i = 0; i < n; ++i)
    {
      host[i] = static_cast<float>(random() % 64);
      reference[i] = host[i] * host[i];
    }
  }

  // 1. ITKCudaCommon on the GPU (an RTK reconstruction in a real program)
  auto producer = itk::CudaSquareImageFilter<Theirs>::New();
  producer->SetInput(input);
  producer->Update();
  Theirs::Pointer produced = producer->GetOutput();
  // a sentinel in its host buffer (the raw pointer, past ITKCudaCommon's
  // flags; the container is held, since the image itself is released below)
  Plain::PixelContainerPointer producedHostContainer = produced->Plain::GetPixelContainer();
  float *                      producedHost = producedHostContainer->GetBufferPointer();
  for (std::size_t i = 0; i < region.GetNumberOfPixels(); ++i)
  {
    producedHost[i] = -7.0f;
  }
  Check(!produced->GetCudaDataManager()->IsGPUBufferDirty() && produced->GetCudaDataManager()->IsCPUBufferDirty(),
        "ITKCudaCommon's output is current on the GPU only");

  // 2. their image -> ours, no copy
  cif::Runtime::ResetTransferCounters();
  Ours::Pointer view = itk::MakeCudaFilterImageView(produced.GetPointer());
  producer = nullptr; // the view keeps their buffer alive
  produced = nullptr;
  Check(view->GetCudaFilterDataManager()->IsDeviceBufferBorrowed() &&
          view->GetCudaFilterDataManager()->IsDeviceCurrent() && !view->GetCudaFilterDataManager()->IsHostCurrent(),
        "the view borrows ITKCudaCommon's device buffer as its current copy");
  Check(view->GetSpacing() == plainSquare->GetSpacing() && view->GetBufferedRegion() == region,
        "the view has the image's geometry");

  // 3. this module's median on the GPU
  auto median = itk::CudaMedianImageFilter<Ours, Ours>::New();
  median->SetRadius(1);
  median->SetExecutionMode(itk::CudaExecutionMode::GPU);
  median->SetInput(view);
  median->Update();
  std::cout << "  median: " << median->GetLastExecutionReport().Message << '\n';
  Check(median->GetLastExecutionReport().Device == cif::ExecutedOn::GPU, "our median ran on the GPU");
  Ours::Pointer filtered = median->GetOutput();
  Check(NoTransfers(), "their image -> our median on the GPU: " + Counters());

  // 4. ours -> their image, no copy; the median's output and filter let go
  Theirs::Pointer back = itk::MakeCudaImageView(filtered.GetPointer());
  median = nullptr;
  Check(NoTransfers(), "our median's output -> their image: " + Counters());
  Check(!back->GetCudaDataManager()->IsGPUBufferDirty() && back->GetCudaDataManager()->IsCPUBufferDirty(),
        "their image takes our device buffer as its current copy (no upload on their next read)");

  // 5. ITKCudaCommon on the GPU again, reading our buffer in place
  auto consumer = itk::CudaSquareImageFilter<Theirs>::New();
  consumer->SetInput(back);
  consumer->Update();
  Check(NoTransfers(), "their GPU filter on it: " + Counters());

  // the sentinel: nothing was downloaded into their first image's host buffer
  bool sentinelKept = true;
  for (std::size_t i = 0; i < region.GetNumberOfPixels(); ++i)
  {
    sentinelKept = sentinelKept && producedHost[i] == -7.0f;
  }
  Check(sentinelKept, "ITKCudaCommon downloaded nothing into its first image's host buffer");

  // 6. the values, against ITK's CPU median (exact); the module's factory
  //    overrides are turned off, or MedianImageFilter::New() would be ours
  itk::CudaImageFiltersFactory::SetOverridesEnabled(false);
  auto itkMedian = itk::MedianImageFilter<Plain, Plain>::New();
  Check(std::string(itkMedian->GetNameOfClass()) == "MedianImageFilter", "the reference is ITK's own MedianImageFilter");
  itkMedian->SetRadius(1);
  itkMedian->SetInput(plainSquare);
  itkMedian->Update();
  Check(NoTransfers(), "ITK's CPU median moved nothing: " + Counters());
  const float * expected = itkMedian->GetOutput()->GetBufferPointer();
  const float * theirs = consumer->GetOutput()->GetBufferPointer(); // ITKCudaCommon's download
  // CudaSquareImageFilter is an in-place filter: it squared our median's
  // buffer itself, through the view, and our image sees that (the view made
  // its host copy stale), with one download of ours
  const Ours *  constFiltered = filtered.GetPointer();
  const float * ours = constFiltered->GetBufferPointer();
  Check(cif::Runtime::GetTransferCounters().DeviceToHostCount == 1 &&
          cif::Runtime::GetTransferCounters().HostToDeviceCount == 0,
        "reading our image on the host: " + Counters());
  std::size_t chainMismatches = 0;
  std::size_t inPlaceMismatches = 0;
  for (std::size_t i = 0; i < region.GetNumberOfPixels(); ++i)
  {
    chainMismatches += theirs[i] != expected[i] * expected[i];
    inPlaceMismatches += ours[i] != expected[i] * expected[i];
  }
  Check(chainMismatches == 0, "the chain's end equals ITK's median squared (" + std::to_string(chainMismatches) +
                                " of " + std::to_string(region.GetNumberOfPixels()) + " pixels differ)");
  Check(inPlaceMismatches == 0, "our image holds what their in-place filter wrote into its buffer (" +
                                  std::to_string(inPlaceMismatches) + " pixels differ)");
  // our median before the in-place square: the chain is median-then-square, so
  // a wrong median would show above; also check it alone on a fresh view
  {
    auto again = itk::CudaMedianImageFilter<Ours, Ours>::New();
    again->SetRadius(1);
    again->SetExecutionMode(itk::CudaExecutionMode::GPU);
    again->SetInput(view);
    again->Update();
    const Ours *  out = again->GetOutput();
    const float * values = out->GetBufferPointer();
    std::size_t   mismatches = 0;
    for (std::size_t i = 0; i < region.GetNumberOfPixels(); ++i)
    {
      mismatches += values[i] != expected[i];
    }
    Check(mismatches == 0, "our median of the view equals ITK's median (" + std::to_string(mismatches) +
                             " pixels differ)");
  }

  std::cout << (failures == 0 ? "PASS" : "FAIL") << '\n';
  return failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
