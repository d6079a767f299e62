/*=========================================================================
 *  How fast large outputs are written: a float volume of --gib GiB
 *  (1024 x 1024 x 256 per GiB, a smooth ramp plus a pattern, so that it
 *  compresses like an image, not like zeros) through ITK's writers as the
 *  command-line tool writes it (uncompressed by default, compressed with
 *  --compress), and the cost of the tool's input check
 *  (itk::CudaCheckImageFile) on each file.
 *
 *  WriteThroughputBenchmark [--gib N] [--compressed-gib M] [--dir DIR]
 *  Compressed writes run on the first M GiB only (default 1): gzip and
 *  zlib run on one core at tens of MB/s. Files are deleted afterwards.
 *=========================================================================*/
#include "BenchmarkCommon.h"

#include "itkCudaImageFileCheck.h"
#include "itkImage.h"
#include "itkImageFileWriter.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace
{
using Volume = itk::Image<float, 3>;

Volume::Pointer
MakeVolume(double gib)
{
  auto             image = Volume::New();
  Volume::SizeType size{ { 1024, 1024, static_cast<itk::SizeValueType>(gib * 256) } };
  image->SetRegions(size);
  image->Allocate();
  float *           p = image->GetBufferPointer();
  const std::size_t n = image->GetBufferedRegion().GetNumberOfPixels();
  for (std::size_t i = 0; i < n; ++i)
  {
    const std::size_t x = i % 1024, y = (i / 1024) % 1024, z = i / (1024 * 1024);
    p[i] = 0.1f * static_cast<float>(x + 2 * y + 3 * z) + static_cast<float>((x * 7 + y * 13) % 17);
  }
  return image;
}

void
Time(const Volume * image, const std::string & file, bool compress)
{
  auto writer = itk::ImageFileWriter<Volume>::New();
  writer->SetInput(image);
  writer->SetFileName(file);
  writer->SetUseCompression(compress);
  const double             ms = cif_bench::TimeWallOnce([&] { writer->Update(); });
  const double             bytes = static_cast<double>(image->GetBufferedRegion().GetNumberOfPixels()) * sizeof(float);
  itk::CudaImageFileReport report;
  const double             checkMs = cif_bench::TimeWallOnce([&] { report = itk::CudaCheckImageFile(file); });
  std::printf("%-28s %-12s %7.2f GiB in %9.1f ms: %8.1f MB/s written; input check %8.1f ms (%s)\n",
              file.substr(file.find_last_of('/') + 1).c_str(),
              compress ? "compressed" : "raw",
              bytes / (1 << 30),
              ms,
              bytes / (ms * 1e-3) / 1e6,
              checkMs,
              report.Compressed ? "decompresses the stream" : "file sizes");
  std::fflush(stdout);
  std::remove(file.c_str());
  if (file.size() > 4 && file.compare(file.size() - 4, 4, ".mhd") == 0)
  {
    std::remove((file.substr(0, file.size() - 4) + (compress ? ".zraw" : ".raw")).c_str());
  }
}
} // namespace

int
main(int argc, char * argv[])
{
  double      gib = 8.0, compressedGib = 1.0;
  std::string dir = ".";
  for (int i = 1; i + 1 < argc; i += 2)
  {
    const std::string a = argv[i];
    if (a == "--gib")
      gib = std::atof(argv[i + 1]);
    else if (a == "--compressed-gib")
      compressedGib = std::atof(argv[i + 1]);
    else if (a == "--dir")
      dir = argv[i + 1];
  }
  std::printf("writing float volumes of 1024 x 1024 x 256 per GiB to %s\n", dir.c_str());
  {
    auto image = MakeVolume(gib);
    for (const char * name : { "/write.mha", "/write.mhd", "/write.nrrd", "/write.nii" })
    {
      Time(image, dir + name, false);
    }
  }
  auto image = MakeVolume(compressedGib);
  for (const char * name : { "/write_compressed.mha", "/write_compressed.nrrd", "/write.nii.gz" })
  {
    Time(image, dir + name, true);
  }
  return 0;
}
