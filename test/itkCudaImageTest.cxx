/*=========================================================================
 *  Tests of CudaFilterImage and its CudaFilterDataManager: residency, lazy copies,
 *  grafting, memory release, and data staying on the GPU along a pipeline.
 *=========================================================================*/
#include "CudaImageFiltersTestUtilities.h"
#include "cif/CudaError.h"
#include "itkChangeInformationImageFilter.h"
#include "itkCudaBSplineDecompositionImageFilter.h"
#include "itkCudaFilterImage.h"
#include "itkShiftScaleImageFilter.h"

#include <gtest/gtest.h>
#include <algorithm>
#include <random>
#include <vector>

namespace
{
using namespace cif_test;
using CudaF3 = itk::CudaFilterImage<float, 3>;
using F3 = itk::Image<float, 3>;
using Prefilter = itk::CudaBSplineDecompositionImageFilter<CudaF3, CudaF3>;

CudaF3::Pointer
MakeCudaImage(unsigned seed, itk::SizeValueType n = 24)
{
  auto plain = RandomImage<F3>({ n, n - 3, n - 5 }, -10.0, 10.0, seed);
  auto image = CudaF3::New();
  image->SetRegions(plain->GetLargestPossibleRegion());
  image->SetSpacing(plain->GetSpacing());
  image->Allocate();
  std::copy(plain->GetBufferPointer(),
            plain->GetBufferPointer() + plain->GetBufferedRegion().GetNumberOfPixels(),
            image->GetBufferPointer());
  return image;
}

std::vector<float>
HostCopy(const CudaF3 * image)
{
  const float * p = image->GetBufferPointer(); // const: synchronises
  return std::vector<float>(p, p + image->GetBufferedRegion().GetNumberOfPixels());
}

// ===========================================================================
// CPU (no device needed)
// ===========================================================================

TEST(CudaImageCpu, BehavesAsAnItkImage)
{
  cif::Runtime::ResetTransferCounters();
  auto image = MakeCudaImage(1);
  image->FillBuffer(2.5f);
  image->SetPixel({ 1, 2, 3 }, 7.0f);
  EXPECT_EQ(image->GetPixel({ 1, 2, 3 }), 7.0f);
  const CudaF3::IndexType origin{ { 0, 0, 0 } };
  EXPECT_EQ((*image)[origin], 2.5f);
  // a CPU filter reads and writes it like any image
  auto scale = itk::ShiftScaleImageFilter<CudaF3, CudaF3>::New();
  scale->SetInput(image);
  scale->SetScale(2.0);
  scale->Update();
  EXPECT_EQ(scale->GetOutput()->GetPixel({ 1, 2, 3 }), 14.0f);
  EXPECT_EQ(scale->GetOutput()->GetPixel({ 5, 5, 5 }), 5.0f);
  // nothing went to a device
  const auto counters = cif::Runtime::GetTransferCounters();
  EXPECT_EQ(counters.HostToDeviceCount + counters.DeviceToHostCount, 0u);
  EXPECT_TRUE(image->IsHostBufferCurrent());
  EXPECT_FALSE(image->IsDeviceBufferCurrent());
}

TEST(CudaImageCpu, GraftSharesTheResidencyState)
{
  auto source = MakeCudaImage(2);
  auto target = CudaF3::New();
  target->Graft(source);
  EXPECT_EQ(target->GetCudaFilterDataManager(), source->GetCudaFilterDataManager());
  EXPECT_EQ(target->GetBufferPointer(), source->GetBufferPointer());
  // grafting a plain image gives a fresh state bound to that buffer
  auto plain = RandomImage<F3>({ 4, 4, 4 }, 0.0, 1.0, 3);
  target->Graft(plain);
  EXPECT_NE(target->GetCudaFilterDataManager(), source->GetCudaFilterDataManager());
  EXPECT_TRUE(target->IsHostBufferCurrent());
}

TEST(CudaImageCpu, NewPixelContainerStartsFreshState)
{
  auto                          image = MakeCudaImage(4);
  itk::CudaFilterDataManager::Pointer before = image->GetCudaFilterDataManager(); // kept alive
  auto                          container = CudaF3::PixelContainer::New();
  container->Reserve(image->GetBufferedRegion().GetNumberOfPixels());
  image->SetPixelContainer(container);
  EXPECT_NE(image->GetCudaFilterDataManager(), before.GetPointer());
  image->Initialize();
  EXPECT_EQ(image->GetBufferedRegion().GetNumberOfPixels(), 0u);
}

TEST(CudaImageCpu, DeviceAccessWithoutDeviceThrows)
{
  if (cif::Runtime::IsDeviceAvailable())
  {
    GTEST_SKIP() << "this machine has a GPU";
  }
  auto image = MakeCudaImage(5);
  EXPECT_THROW(image->GetDeviceBufferPointer(), cif::CudaFailure);
  EXPECT_FALSE(cif::Runtime::GetUnavailableReason().empty());
}

// ===========================================================================
// GPU (CTest label "gpu")
// ===========================================================================

TEST(CudaImageGpu, UploadsOnceAndKeepsTheHostCopyCurrent)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto image = MakeCudaImage(10);
  cif::Runtime::ResetTransferCounters();
  const float * first = image->GetDeviceBufferPointer();
  const float * second = image->GetDeviceBufferPointer();
  EXPECT_EQ(first, second);
  const float * host = static_cast<const CudaF3 *>(image.GetPointer())->GetBufferPointer();
  EXPECT_NE(host, nullptr);
  auto counters = cif::Runtime::GetTransferCounters();
  EXPECT_EQ(counters.HostToDeviceCount, 1u);
  EXPECT_EQ(counters.DeviceToHostCount, 0u);
  EXPECT_TRUE(image->IsHostBufferCurrent());
  EXPECT_TRUE(image->IsDeviceBufferCurrent());
  // a write through the host makes the device copy stale: the next device read uploads again
  image->SetPixel({ 0, 0, 0 }, 1.0f);
  EXPECT_FALSE(image->IsDeviceBufferCurrent());
  image->GetDeviceBufferPointer();
  EXPECT_EQ(cif::Runtime::GetTransferCounters().HostToDeviceCount, 2u);
}

TEST(CudaImageGpu, DeviceWriteIsDownloadedOnceOnHostAccess)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto               image = MakeCudaImage(11);
  const std::size_t  count = image->GetBufferedRegion().GetNumberOfPixels();
  std::vector<float> values(count);
  for (std::size_t i = 0; i < count; ++i)
  {
    values[i] = static_cast<float>(i % 1000) - 3.0f;
  }
  cif::DeviceBuffer staging(count * sizeof(float));
  staging.CopyFromHost(values.data(), count * sizeof(float));
  cif::Runtime::ResetTransferCounters();

  float * device = image->GetDeviceBufferPointerForWrite();
  EXPECT_FALSE(image->IsHostBufferCurrent());
  staging.CopyToDevice(device, count * sizeof(float)); // the device now holds `values`
  EXPECT_EQ(cif::Runtime::GetTransferCounters().DeviceToHostCount, 0u);

  EXPECT_EQ(HostCopy(image.GetPointer()), values); // const access downloads
  const CudaF3 & constImage = *image;
  EXPECT_EQ(constImage.GetPixel({ 3, 2, 1 }), values[3 + 24 * (2 + 21 * 1)]);
  const auto counters = cif::Runtime::GetTransferCounters();
  EXPECT_EQ(counters.DeviceToHostCount, 1u);
  EXPECT_EQ(counters.DeviceToHostBytes, count * sizeof(float));
  EXPECT_TRUE(image->IsDeviceBufferCurrent()) << "reading on the host leaves the device copy current";
}

TEST(CudaImageCpu, AdoptingANullDeviceBufferThrows)
{
  auto image = MakeCudaImage(6);
  EXPECT_THROW(image->GetCudaFilterDataManager()->AdoptDeviceBuffer(nullptr, 0, nullptr), itk::ExceptionObject);
  EXPECT_FALSE(image->GetCudaFilterDataManager()->IsDeviceBufferBorrowed());
  EXPECT_TRUE(image->IsHostBufferCurrent());
}

// Another library's device buffer (itkCudaCommonInterop.h's path): used in
// place, with no upload; never freed by the image; its owner kept alive
// until the image lets go of it.
TEST(CudaImageGpu, BorrowedDeviceBufferIsUsedInPlaceAndNotFreed)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto               image = MakeCudaImage(12);
  const std::size_t  count = image->GetBufferedRegion().GetNumberOfPixels();
  std::vector<float> values(count);
  for (std::size_t i = 0; i < count; ++i)
  {
    values[i] = static_cast<float>(i % 977) * 0.5f - 7.0f;
  }
  cif::DeviceBuffer theirs(count * sizeof(float)); // "their" buffer
  theirs.CopyFromHost(values.data(), count * sizeof(float));
  auto owner = itk::Object::New(); // stands for their data manager
  const auto referencesBefore = owner->GetReferenceCount();
  cif::Runtime::ResetTransferCounters();

  image->GetCudaFilterDataManager()->AdoptDeviceBuffer(theirs.GetPointer(), cif::Runtime::GetCurrentDevice(),
                                                        owner.GetPointer());
  EXPECT_TRUE(image->GetCudaFilterDataManager()->IsDeviceBufferBorrowed());
  EXPECT_EQ(owner->GetReferenceCount(), referencesBefore + 1) << "the owner is kept alive";
  EXPECT_TRUE(image->IsDeviceBufferCurrent());
  EXPECT_FALSE(image->IsHostBufferCurrent());
  EXPECT_EQ(image->GetDeviceBufferPointer(), static_cast<const float *>(theirs.GetPointer())) << "no copy";

  // a GPU filter reads it in place: no upload
  auto prefilter = Prefilter::New();
  prefilter->SetExecutionMode(itk::CudaExecutionMode::GPU);
  prefilter->SetInput(image);
  prefilter->Update();
  EXPECT_EQ(cif::Runtime::GetTransferCounters().HostToDeviceCount, 0u);
  // the host copy is downloaded from it once
  EXPECT_EQ(HostCopy(image.GetPointer()), values);
  EXPECT_EQ(cif::Runtime::GetTransferCounters().DeviceToHostCount, 1u);

  // in-place device access: the host copy becomes stale, the device pointer is theirs
  EXPECT_EQ(image->GetCudaFilterDataManager()->GetDeviceReadWritePointer(), theirs.GetPointer());
  EXPECT_FALSE(image->IsHostBufferCurrent());

  // letting go (ReleaseDeviceMemory downloads, then forgets the pointer): the
  // buffer stays theirs and usable, the owner is released
  image->ReleaseDeviceMemory();
  EXPECT_FALSE(image->GetCudaFilterDataManager()->IsDeviceBufferBorrowed());
  EXPECT_EQ(owner->GetReferenceCount(), referencesBefore);
  std::vector<float> still(count);
  theirs.CopyToHost(still.data(), count * sizeof(float));
  EXPECT_EQ(still, values) << "the borrowed buffer was not freed or overwritten";
  // the image allocates its own device copy from now on
  EXPECT_NE(image->GetDeviceBufferPointer(), static_cast<const float *>(theirs.GetPointer()));
}

// A device copy lent to another library (MakeCudaImageView's path) is never
// freed or reused by the image: ReleaseDeviceMemory and a new device write
// set it aside, and it still holds the values.
TEST(CudaImageGpu, LentDeviceBufferOutlivesReleaseAndRewrite)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto               image = MakeCudaImage(13);
  const auto         values = HostCopy(image.GetPointer());
  const std::size_t  bytes = values.size() * sizeof(float);
  void *             lent = image->GetCudaFilterDataManager()->LendDeviceBuffer();
  ASSERT_NE(lent, nullptr);
  EXPECT_FALSE(image->IsHostBufferCurrent()) << "the borrower may write it";
  image->ReleaseDeviceMemory();              // downloads, then sets the lent buffer aside
  float * rewritten = image->GetDeviceBufferPointerForWrite();
  EXPECT_NE(static_cast<void *>(rewritten), lent) << "a lent buffer is not reused";
  std::vector<float> still(values.size());
  cif::DeviceBuffer::Borrow(lent, bytes, cif::Runtime::GetCurrentDevice()).CopyToHost(still.data(), bytes);
  EXPECT_EQ(still, values) << "the lent buffer was freed or overwritten";
}

TEST(CudaImageGpu, TwoFilterChainKeepsDataOnTheDevice)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto input = MakeCudaImage(12, 40);
  auto first = Prefilter::New();
  first->SetInput(input);
  first->SetExecutionMode(itk::CudaExecutionMode::GPU);
  auto second = Prefilter::New();
  second->SetInput(first->GetOutput());
  second->SetExecutionMode(itk::CudaExecutionMode::GPU);
  second->SetMethod(itk::CudaBSplinePrefilterMethod::FIR);

  cif::Runtime::ResetTransferCounters();
  second->Update();
  auto counters = cif::Runtime::GetTransferCounters();
  EXPECT_EQ(counters.HostToDeviceCount, 1u) << "only the input is uploaded";
  EXPECT_EQ(counters.HostToDeviceBytes, input->GetBufferedRegion().GetNumberOfPixels() * sizeof(float));
  EXPECT_EQ(counters.DeviceToHostCount, 0u) << "nothing comes back between or after the filters";
  EXPECT_FALSE(first->GetOutput()->IsHostBufferCurrent());
  EXPECT_FALSE(second->GetOutput()->IsHostBufferCurrent());

  const double range = DynamicRange(static_cast<const CudaF3 *>(first->GetOutput()));
  EXPECT_EQ(cif::Runtime::GetTransferCounters().DeviceToHostCount, 1u) << "the test itself read the first output";
  const auto gpu = HostCopy(second->GetOutput());
  EXPECT_EQ(cif::Runtime::GetTransferCounters().DeviceToHostCount, 2u) << "one download when the host reads";

  // same chain on the CPU
  auto cpuFirst = Prefilter::New();
  cpuFirst->SetInput(input);
  cpuFirst->SetExecutionMode(itk::CudaExecutionMode::CPU);
  auto cpuSecond = Prefilter::New();
  cpuSecond->SetInput(cpuFirst->GetOutput());
  cpuSecond->SetExecutionMode(itk::CudaExecutionMode::CPU);
  cpuSecond->SetMethod(itk::CudaBSplinePrefilterMethod::FIR);
  cpuSecond->Update();
  const auto cpu = HostCopy(cpuSecond->GetOutput());
  double     worst = 0.0;
  for (std::size_t i = 0; i < cpu.size(); ++i)
  {
    worst = std::max(worst, std::fabs(static_cast<double>(gpu[i]) - cpu[i]));
  }
  EXPECT_LE(worst, 1e-6 * range); // the documented tolerance, on the second filter's input range
}

TEST(CudaImageGpu, MetadataOnlyFilterBetweenGpuFiltersStaysInSync)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto input = MakeCudaImage(13, 32);
  auto first = Prefilter::New();
  first->SetInput(input);
  first->SetExecutionMode(itk::CudaExecutionMode::GPU);
  auto change = itk::ChangeInformationImageFilter<CudaF3>::New();
  change->SetInput(first->GetOutput());
  CudaF3::PointType newOrigin;
  newOrigin[0] = 1.0;
  newOrigin[1] = 2.0;
  newOrigin[2] = 3.0;
  change->SetOutputOrigin(newOrigin);
  change->ChangeOriginOn();
  auto second = Prefilter::New();
  second->SetInput(change->GetOutput());
  second->SetExecutionMode(itk::CudaExecutionMode::GPU);
  second->Update();
  EXPECT_EQ(second->GetOutput()->GetOrigin(), newOrigin);

  auto reference = Prefilter::New();
  reference->SetInput(first->GetOutput());
  reference->SetExecutionMode(itk::CudaExecutionMode::CPU);
  reference->Update();
  EXPECT_LE(MaxAbsDifference(second->GetOutput(), reference->GetOutput()),
            1e-6 * DynamicRange(static_cast<const CudaF3 *>(first->GetOutput())));
}

TEST(CudaImageGpu, HostEditsReachTheNextGpuRun)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto input = MakeCudaImage(14);
  auto filter = Prefilter::New();
  filter->SetInput(input);
  filter->SetExecutionMode(itk::CudaExecutionMode::GPU);
  filter->Update();
  input->SetPixel({ 5, 6, 7 }, 1000.0f); // host write: the device copy is now stale
  input->Modified();
  filter->Update();
  auto check = itk::CudaBSplineDecompositionImageFilter<CudaF3, F3>::New();
  check->SetInput(input);
  check->SetExecutionMode(itk::CudaExecutionMode::CPU);
  check->Update();
  EXPECT_LE(MaxAbsDifference(filter->GetOutput(), check->GetOutput()), 1e-6 * 1010.0);
}

TEST(CudaImageGpu, DeviceMemoryIsReleased)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  const std::size_t baseline = cif::Runtime::GetBytesAllocated();
  {
    auto image = MakeCudaImage(15);
    image->GetDeviceBufferPointer();
    EXPECT_EQ(cif::Runtime::GetBytesAllocated(), baseline + image->GetBufferedRegion().GetNumberOfPixels() * 4);
    image->ReleaseDeviceMemory();
    EXPECT_EQ(cif::Runtime::GetBytesAllocated(), baseline);
    image->GetDeviceBufferPointer();
    image->Initialize(); // as the pipeline does when it releases data
    EXPECT_EQ(cif::Runtime::GetBytesAllocated(), baseline);
    auto again = MakeCudaImage(16);
    again->GetDeviceBufferPointer();
  }
  EXPECT_EQ(cif::Runtime::GetBytesAllocated(), baseline) << "destroying the image frees its device copy";
}

TEST(CudaImageCpu, StagingSettingsAreKept)
{
  // the settings of the staged copies (no device needed)
  cif::Runtime::SetStagingLanes(3);
  EXPECT_EQ(cif::Runtime::GetStagingLanes(), 3);
  cif::Runtime::SetStagingChunkBytes(std::size_t{ 2 } << 20);
  EXPECT_EQ(cif::Runtime::GetStagingChunkBytes(), std::size_t{ 2 } << 20);
  cif::Runtime::SetStagingLanes(0);
  cif::Runtime::SetStagingChunkBytes(0);
  EXPECT_GE(cif::Runtime::GetStagingLanes(), 1);
  EXPECT_LE(cif::Runtime::GetStagingLanes(), 16);
  EXPECT_EQ(cif::Runtime::GetStagingChunkBytes(), std::size_t{ 4 } << 20);
}

TEST(CudaImageGpu, StagedCopiesCarryEveryByte)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  // sizes around the direct-copy threshold (256 KiB), the pinned chunk (8 MiB)
  // and many chunks per lane; unaligned host pointers; 1, 3 and the default lanes
  const std::size_t sizes[] = { 1, (256u << 10) - 1, 256u << 10, (24u << 20) + 12345, (100u << 20) + 3 };
  std::mt19937      random(23);
  for (int lanes : { 1, 3, 0 })
  {
    cif::Runtime::SetStagingLanes(lanes);
    for (std::size_t n : sizes)
    {
      std::vector<unsigned char> source(n + 1), back(n + 1, 0x5A);
      for (auto & b : source)
      {
        b = static_cast<unsigned char>(random());
      }
      cif::DeviceBuffer device(n);
      device.FillBytes(0xA5); // poison
      device.CopyFromHost(source.data() + 1, n);
      device.CopyToHost(back.data() + 1, n);
      EXPECT_EQ(back[0], 0x5A) << n << " bytes, " << lanes << " lanes: the byte before the copy was written";
      EXPECT_TRUE(std::equal(source.begin() + 1, source.end(), back.begin() + 1))
        << n << " bytes, " << lanes << " lanes";
    }
  }
  cif::Runtime::SetStagingLanes(0);
}

TEST(CudaImageGpu, PlainImagesAreUploadedAndDownloadedOnce)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  auto input = RandomImage<F3>({ 30, 20, 10 }, 0.0, 1.0, 17);
  auto filter = itk::CudaBSplineDecompositionImageFilter<F3, F3>::New();
  filter->SetInput(input);
  filter->SetExecutionMode(itk::CudaExecutionMode::GPU);
  cif::Runtime::ResetTransferCounters();
  filter->Update();
  const auto counters = cif::Runtime::GetTransferCounters();
  EXPECT_EQ(counters.HostToDeviceCount, 1u);
  EXPECT_EQ(counters.DeviceToHostCount, 1u);
}

} // namespace
