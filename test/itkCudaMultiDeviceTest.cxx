/*=========================================================================
 *  Tests of the CUDA device choice (issue 22, "any GPU"):
 *  - the ITK classes' SetCudaDevice(): the default (the current device), a
 *    device that does not exist (the CPU in automatic mode with the reason,
 *    an exception in GPU mode), the PrintSelf line;
 *  - on a machine with two GPUs (suites "MultiGpu", which skip with fewer
 *    devices unless CUDAIMAGEFILTERS_REQUIRE_GPU=2): every kind of filter on
 *    device 1 gives what it gives on device 0, bit for bit, and the caller's
 *    current device is left as it was; a device-resident image moves to the
 *    other device without a host copy; two threads, each driving its own
 *    device at once, give the one-device results; device memory is freed
 *    from either device.
 *  References: ITK's own filters (median, mean, bilateral, resample,
 *  B-spline decomposition, mask), and the same class on device 0.
 *=========================================================================*/
#include "CudaImageFiltersTestUtilities.h"
#include "cif/Execution.h"
#include "cif/Runtime.h"
#include "itkCudaBSplineDecompositionImageFilter.h"
#include "itkCudaBilateralImageFilter.h"
#include "itkCudaFilterImage.h"
#include "itkCudaGaussianRBFInterpolationImageFilter.h"
#include "itkCudaMaskImageFilter.h"
#include "itkCudaMeanImageFilter.h"
#include "itkCudaMedianImageFilter.h"
#include "itkCudaResampleImageFilter.h"
#include "itkEuler3DTransform.h"
#include "itkLinearInterpolateImageFunction.h"
#include "itkMedianImageFilter.h"

#include <gtest/gtest.h>

#include <sstream>
#include <thread>

namespace
{
using namespace cif_test;
using Mode = itk::CudaExecutionMode;
using F2 = itk::Image<float, 2>;
using F3 = itk::Image<float, 3>;
using US3 = itk::Image<unsigned short, 3>;
using UC3 = itk::Image<unsigned char, 3>;

/** For tests of two devices: skip with fewer, or fail when two are required. */
#define CIF_REQUIRE_TWO_GPUS_OR_SKIP()                                                                              \
  do                                                                                                               \
  {                                                                                                                \
    CIF_REQUIRE_GPU_OR_SKIP();                                                                                     \
    if (cif::Runtime::GetDeviceCount() < 2)                                                                        \
    {                                                                                                              \
      if (GpusRequired() >= 2)                                                                                     \
      {                                                                                                            \
        FAIL() << "CUDAIMAGEFILTERS_REQUIRE_GPU=" << GpusRequired() << " but this machine has "                    \
               << cif::Runtime::GetDeviceCount() << " CUDA device(s)";                                            \
      }                                                                                                            \
      GTEST_SKIP() << "needs two GPUs; this machine has " << cif::Runtime::GetDeviceCount();                       \
    }                                                                                                              \
  } while (false)

int
CurrentDevice()
{
  return cif::Runtime::GetCurrentDevice();
}

template <typename TImage>
std::size_t
Differing(const TImage * a, const TImage * b)
{
  EXPECT_EQ(a->GetBufferedRegion(), b->GetBufferedRegion());
  std::size_t n = 0;
  for (itk::ImageRegionConstIterator<TImage> it(a, a->GetBufferedRegion()), jt(b, b->GetBufferedRegion());
       !it.IsAtEnd();
       ++it, ++jt)
  {
    n += it.Get() != jt.Get();
  }
  return n;
}

/** Runs `filter` on `device` in GPU mode; checks where it ran and that the
 * caller's current device is unchanged; returns its output. */
template <typename TFilter>
typename TFilter::OutputImageType::Pointer
OnDevice(TFilter * filter, int device)
{
  const int before = CurrentDevice();
  filter->SetExecutionMode(Mode::GPU);
  filter->SetCudaDevice(device);
  filter->Update();
  EXPECT_EQ(filter->GetLastExecutedOn(), itk::CudaExecutedOn::GPU);
  if (cif::Runtime::GetDeviceCount() > 1)
  {
    const std::string message = filter->GetLastExecutionReport().Message;
    const int ran = device >= 0 ? device : before; // CudaCurrentDevice: the caller's
    EXPECT_NE(message.find("device " + std::to_string(ran)), std::string::npos) << message;
  }
  EXPECT_EQ(CurrentDevice(), before);
  return TakeOutput(filter);
}

/** Runs the filter `make()` returns on device 0 and, made again, on device
 * 1; their outputs must be equal bit for bit. */
template <typename TMake>
void
ExpectDeviceOneEqualsDeviceZero(TMake make, const char * what)
{
  auto       zero = make();
  auto       one = make();
  const auto a = OnDevice(zero.GetPointer(), 0);
  const auto b = OnDevice(one.GetPointer(), 1);
  EXPECT_EQ(Differing(a.GetPointer(), b.GetPointer()), 0u) << what;
}

/** A CudaFilterImage holding a copy of `plain`'s pixels and grid. */
template <typename TCuda, typename TPlain>
typename TCuda::Pointer
CudaCopyOf(const TPlain * plain)
{
  auto image = TCuda::New();
  image->SetRegions(plain->GetLargestPossibleRegion());
  image->CopyInformation(plain);
  image->Allocate();
  std::copy(plain->GetBufferPointer(),
            plain->GetBufferPointer() + plain->GetBufferedRegion().GetNumberOfPixels(),
            image->GetBufferPointer());
  return image;
}

F3::Pointer
Volume(unsigned seed)
{
  return RandomImage<F3>(MakeSize<F3>({ 61, 47, 23 }), -100.0, 400.0, seed);
}

// ---------------------------------------------------------------------------
// The device setting, on any machine
// ---------------------------------------------------------------------------
TEST(CudaDevice, DefaultIsTheCurrentDevice)
{
  auto filter = itk::CudaMedianImageFilter<F3, F3>::New();
  EXPECT_EQ(filter->GetCudaDevice(), itk::CudaCurrentDevice);
  const auto time = filter->GetMTime();
  filter->SetCudaDevice(-7); // any negative value means the current device
  EXPECT_EQ(filter->GetCudaDevice(), itk::CudaCurrentDevice);
  EXPECT_EQ(filter->GetMTime(), time);
  filter->SetCudaDevice(1);
  EXPECT_EQ(filter->GetCudaDevice(), 1);
  EXPECT_GT(filter->GetMTime(), time);
  std::ostringstream printed;
  filter->Print(printed);
  EXPECT_NE(printed.str().find("CudaDevice: 1"), std::string::npos) << printed.str();
  filter->SetCudaDevice(itk::CudaCurrentDevice);
  printed.str("");
  filter->Print(printed);
  EXPECT_NE(printed.str().find("CudaDevice: the current device"), std::string::npos) << printed.str();
}

TEST(CudaDevice, AMissingDeviceRunsOnTheCpuOrThrowsInGpuMode)
{
  const auto input = Volume(3);
  auto       itkMedian = itk::MedianImageFilter<F3, F3>::New();
  itkMedian->SetInput(input);
  itkMedian->SetRadius(1);
  itkMedian->Update();

  auto filter = itk::CudaMedianImageFilter<F3, F3>::New();
  filter->SetInput(input);
  filter->SetRadius(1);
  filter->SetCudaDevice(1000);
  filter->Update();
  EXPECT_EQ(filter->GetLastExecutedOn(), itk::CudaExecutedOn::CPU);
  const std::string message = filter->GetLastExecutionReport().Message;
  const std::string reason = cif::Runtime::IsDeviceAvailable()
                               ? "CUDA device 1000 does not exist: this machine has " +
                                   std::to_string(cif::Runtime::GetDeviceCount())
                               : cif::Runtime::GetUnavailableReason();
  EXPECT_NE(message.find(reason), std::string::npos) << message;
  EXPECT_EQ(Differing(filter->GetOutput(), itkMedian->GetOutput()), 0u);

  filter->SetExecutionMode(Mode::GPU);
  try
  {
    filter->Update();
    FAIL() << "GPU mode on a device that does not exist must throw";
  }
  catch (const itk::ExceptionObject & e)
  {
    EXPECT_NE(std::string(e.GetDescription()).find(reason), std::string::npos) << e.GetDescription();
  }
}

TEST(CudaDeviceGpu, DeviceZeroByIndexEqualsTheCurrentDevice)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  const auto input = Volume(5);
  auto       a = itk::CudaMedianImageFilter<F3, F3>::New();
  a->SetInput(input);
  a->SetRadius(2);
  const auto byIndex = OnDevice(a.GetPointer(), 0);
  auto       b = itk::CudaMedianImageFilter<F3, F3>::New();
  b->SetInput(input);
  b->SetRadius(2);
  const auto current = OnDevice(b.GetPointer(), itk::CudaCurrentDevice);
  EXPECT_EQ(Differing(byIndex.GetPointer(), current.GetPointer()), 0u);
}

TEST(CudaDeviceGpu, DeviceScopeSwitchesAndRestores)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  const int last = cif::Runtime::GetDeviceCount() - 1;
  const int before = CurrentDevice();
  {
    cif::StreamScope outer(reinterpret_cast<void *>(0x1)); // a stream of the current device (not used)
    {
      cif::DeviceScope scope(last);
      EXPECT_EQ(CurrentDevice(), last);
      // a stream belongs to one device: another device starts on its default stream
      EXPECT_EQ(cif::CurrentStream(), last == before ? reinterpret_cast<void *>(0x1) : nullptr);
    }
    EXPECT_EQ(cif::CurrentStream(), reinterpret_cast<void *>(0x1));
  }
  EXPECT_EQ(CurrentDevice(), before);
  EXPECT_THROW(cif::DeviceScope(cif::Runtime::GetDeviceCount()), cif::CudaFailure);
  EXPECT_EQ(CurrentDevice(), before);
}

// ---------------------------------------------------------------------------
// Two GPUs
// ---------------------------------------------------------------------------
TEST(MultiGpu, EveryKindOfFilterOnDeviceOneEqualsDeviceZero)
{
  CIF_REQUIRE_TWO_GPUS_OR_SKIP();
  const auto input = Volume(7);
  const auto brain = ReadImage<F2>(ExampleData("BrainProtonDensitySlice.png"));

  // a described filter (the median), against ITK's too
  {
    auto itkMedian = itk::MedianImageFilter<F3, F3>::New();
    itkMedian->SetInput(input);
    itkMedian->SetRadius(2);
    itkMedian->Update();
    std::vector<F3::Pointer> out;
    for (int device : { 0, 1 })
    {
      auto f = itk::CudaMedianImageFilter<F3, F3>::New();
      f->SetInput(input);
      f->SetRadius(2);
      out.push_back(OnDevice(f.GetPointer(), device));
    }
    EXPECT_EQ(Differing(out[0].GetPointer(), itkMedian->GetOutput()), 0u);
    EXPECT_EQ(Differing(out[0].GetPointer(), out[1].GetPointer()), 0u);
  }
  // the box mean, the bilateral filter (a constant buffer per device), the
  // mask (a companion image), the B-spline decomposition, the resampler and
  // the GRBF interpolation (cuBLAS and cuSOLVER handles per device)
  ExpectDeviceOneEqualsDeviceZero(
    [&]
    {
      auto f = itk::CudaMeanImageFilter<F3, F3>::New();
      f->SetInput(input);
      f->SetRadius(3);
      return f;
    },
    "mean");
  ExpectDeviceOneEqualsDeviceZero(
    [&]
    {
      auto f = itk::CudaBilateralImageFilter<F3, F3>::New();
      f->SetInput(input);
      f->SetDomainSigma(1.5);
      f->SetRangeSigma(80.0);
      return f;
    },
    "bilateral");
  const auto mask = RandomImage<UC3>(input->GetLargestPossibleRegion().GetSize(), 0.0, 2.0, 11);
  ExpectDeviceOneEqualsDeviceZero(
    [&]
    {
      auto f = itk::CudaMaskImageFilter<F3, UC3>::New();
      f->SetInput(input);
      f->SetMaskImage(mask);
      return f;
    },
    "mask");
  ExpectDeviceOneEqualsDeviceZero(
    [&]
    {
      auto f = itk::CudaBSplineDecompositionImageFilter<F3, F3>::New();
      f->SetInput(input);
      f->SetSplineOrder(3);
      return f;
    },
    "B-spline decomposition");
  auto transform = itk::Euler3DTransform<double>::New();
  transform->SetRotation(0.0, 0.0, 0.17);
  ExpectDeviceOneEqualsDeviceZero(
    [&]
    {
      auto f = itk::CudaResampleImageFilter<F3, F3>::New();
      f->SetInput(input);
      f->SetTransform(transform);
      f->SetInterpolator(itk::LinearInterpolateImageFunction<F3, double>::New());
      f->SetOutputParametersFromImage(input);
      return f;
    },
    "resample");
  {
    F2::RegionType crop;
    crop.SetIndex(0, 80);
    crop.SetIndex(1, 90);
    crop.SetSize(0, 26);
    crop.SetSize(1, 26);
    auto small = F2::New();
    small->SetRegions(crop.GetSize());
    small->Allocate();
    for (itk::ImageRegionIterator<F2> it(small, small->GetBufferedRegion()); !it.IsAtEnd(); ++it)
    {
      auto index = it.GetIndex();
      index[0] += 80;
      index[1] += 90;
      it.Set(brain->GetPixel(index));
    }
    ExpectDeviceOneEqualsDeviceZero(
      [&]
      {
        auto                       f = itk::CudaGaussianRBFInterpolationImageFilter<F2>::New();
        itk::FixedArray<double, 2> zoom;
        zoom.Fill(2.0);
        f->SetInput(small);
        f->SetZoomFactors(zoom);
        return f;
      },
      "GRBF");
  }
}

TEST(MultiGpu, AResidentImageMovesToTheOtherDeviceWithoutTheHost)
{
  CIF_REQUIRE_TWO_GPUS_OR_SKIP();
  using C3 = itk::CudaFilterImage<unsigned short, 3>;
  const auto plain = RandomImage<US3>(MakeSize<US3>({ 64, 48, 20 }), 0.0, 4096.0, 13);
  const auto input = CudaCopyOf<C3>(plain.GetPointer());

  auto first = itk::CudaMedianImageFilter<C3, C3>::New();
  first->SetInput(input);
  first->SetRadius(1);
  first->SetExecutionMode(Mode::GPU);
  first->SetCudaDevice(0);
  auto second = itk::CudaMedianImageFilter<C3, C3>::New();
  second->SetInput(first->GetOutput());
  second->SetRadius(2);
  second->SetExecutionMode(Mode::GPU);
  second->SetCudaDevice(1);
  cif::Runtime::ResetTransferCounters();
  second->Update();
  const auto counters = cif::Runtime::GetTransferCounters();
  EXPECT_EQ(counters.HostToDeviceCount, 1u); // the input, once, to device 0
  EXPECT_EQ(counters.DeviceToHostCount, 0u); // device 0 to device 1 is peer to peer
  EXPECT_FALSE(second->GetOutput()->IsHostBufferCurrent());
  EXPECT_NE(second->GetLastExecutionReport().Message.find("device 1"), std::string::npos);

  auto r1 = itk::MedianImageFilter<US3, US3>::New();
  r1->SetInput(plain);
  r1->SetRadius(1);
  auto r2 = itk::MedianImageFilter<US3, US3>::New();
  r2->SetInput(r1->GetOutput());
  r2->SetRadius(2);
  r2->Update();
  const C3 * result = second->GetOutput();
  result->UpdateHostBuffer(); // GetPixel is not virtual: bring the result down first
  std::size_t differing = 0;
  for (itk::ImageRegionConstIterator<US3> it(r2->GetOutput(), r2->GetOutput()->GetBufferedRegion());
       !it.IsAtEnd();
       ++it)
  {
    differing += result->GetPixel(it.GetIndex()) != it.Get();
  }
  EXPECT_EQ(differing, 0u);
}

TEST(MultiGpu, TwoThreadsEachDrivingItsOwnDeviceAtOnce)
{
  CIF_REQUIRE_TWO_GPUS_OR_SKIP();
  const F3::Pointer inputs[2] = { Volume(21), Volume(22) };
  // one chain: median, bilateral, B-spline decomposition, mean
  const auto chain = [](const F3 * input, int device) -> F3::Pointer
  {
    auto median = itk::CudaMedianImageFilter<F3, F3>::New();
    median->SetInput(input);
    median->SetRadius(1);
    auto bilateral = itk::CudaBilateralImageFilter<F3, F3>::New();
    bilateral->SetInput(median->GetOutput());
    bilateral->SetDomainSigma(1.0);
    bilateral->SetRangeSigma(50.0);
    auto bspline = itk::CudaBSplineDecompositionImageFilter<F3, F3>::New();
    bspline->SetInput(bilateral->GetOutput());
    auto mean = itk::CudaMeanImageFilter<F3, F3>::New();
    mean->SetInput(bspline->GetOutput());
    mean->SetRadius(2);
    for (itk::CudaExecutionSettings * f : std::initializer_list<itk::CudaExecutionSettings *>{
           median.GetPointer(), bilateral.GetPointer(), bspline.GetPointer(), mean.GetPointer() })
    {
      f->SetExecutionMode(Mode::GPU);
      f->SetCudaDevice(device);
    }
    mean->Update();
    return TakeOutput(mean.GetPointer());
  };
  // the one-device results, one after the other on device 0
  F3::Pointer expected[2] = { chain(inputs[0], 0), chain(inputs[1], 0) };

  constexpr int rounds = 8;
  std::vector<std::size_t> differing(2, 0);
  std::vector<int>         threadDeviceAfter(2, -1);
  std::vector<std::string> failures(2);
  std::vector<std::thread> threads;
  for (int k = 0; k < 2; ++k)
  {
    threads.emplace_back(
      [&, k]
      {
        try
        {
          for (int r = 0; r < rounds; ++r)
          {
            const auto out = chain(inputs[k], k);
            differing[k] += Differing(out.GetPointer(), expected[k].GetPointer());
          }
          threadDeviceAfter[k] = CurrentDevice();
        }
        catch (const std::exception & e)
        {
          failures[k] = e.what();
        }
      });
  }
  for (auto & t : threads)
  {
    t.join();
  }
  for (int k = 0; k < 2; ++k)
  {
    EXPECT_EQ(failures[k], "") << "thread " << k;
    EXPECT_EQ(differing[k], 0u) << "thread " << k;
    EXPECT_EQ(threadDeviceAfter[k], 0) << "a new thread's current device (0) is left as it was";
  }
}

TEST(MultiGpu, DeviceMemoryIsFreedFromEitherDevice)
{
  CIF_REQUIRE_TWO_GPUS_OR_SKIP();
  const std::size_t before = cif::Runtime::GetBytesAllocated();
  cif::DeviceBuffer onOne;
  {
    cif::DeviceScope scope(1);
    onOne.Allocate(std::size_t{ 64 } << 20);
    EXPECT_EQ(onOne.GetDevice(), 1);
    onOne.FillBytes(0x5A);
  }
  // a copy to the host and a peer copy with device 0 current
  std::vector<unsigned char> host(16);
  onOne.CopyToHost(host.data(), host.size());
  EXPECT_EQ(host[0], 0x5A);
  EXPECT_EQ(CurrentDevice(), 0);
  cif::DeviceBuffer onZero(onOne.GetSize());
  EXPECT_EQ(onZero.GetDevice(), 0);
  onZero.CopyFromPeer(onOne, onOne.GetSize());
  std::fill(host.begin(), host.end(), 0);
  onZero.CopyToHost(host.data(), host.size());
  EXPECT_EQ(host[15], 0x5A);
  onOne.Release(); // from device 0
  onZero.Release();
  EXPECT_EQ(cif::Runtime::GetBytesAllocated(), before);
}

} // namespace
