/*=========================================================================
 *  CudaImageFilters: accuracy tables of the resampling family (an
 *  executable; the README's tables come from its output on the GPU). The
 *  protocols are in include/itkCudaResampleAccuracyProtocol.h, which the resample
 *  test also runs to assert the documented bounds.
 *
 *    ResampleAccuracy [IMAGE2D [VOLUME3D]]
 *=========================================================================*/
#include "itkCudaResampleAccuracyProtocol.h"
#include "itkImageFileReader.h"

#include <cstdio>

using namespace cif_accuracy;

int
main(int argc, char * argv[])
{
  const std::string data = "/usr/share/doc/insighttoolkit5-examples/examples/Data/";
  const std::string path2d = argc > 1 ? argv[1] : data + "BrainProtonDensitySlice.png";
  const std::string path3d = argc > 2 ? argv[2] : data + "KmeansTest_T1UCharRaw.nii.gz";
  const bool        gpu = cif::Runtime::IsDeviceAvailable();

  auto reader2 = itk::ImageFileReader<F2>::New();
  reader2->SetFileName(path2d);
  reader2->Update();
  F2::Pointer original = reader2->GetOutput();
  auto        reader3 = itk::ImageFileReader<F3>::New();
  reader3->SetFileName(path3d);
  reader3->Update();
  F3::Pointer volume = reader3->GetOutput();

  std::printf("Device: %s\n\n", cif::Runtime::GetDeviceDescription().c_str());
  std::printf("1. %s rotated 36 times by 10 degrees (each step resamples the previous result);\n"
              "   RMS and max error against the original over the central disk, grey levels (range %.0f)\n\n",
              path2d.c_str(),
              Range(original.GetPointer()));
  std::printf("%-58s %10s %10s\n", "method", "RMS", "max");
  for (const auto & m : Methods())
  {
    if (m.gpu && !gpu)
    {
      std::printf("%-58s %10s %10s\n", m.name.c_str(), "no GPU", "");
      continue;
    }
    double rms, maxAbs;
    ThirtySixRotations(original.GetPointer(), m, rms, maxAbs);
    std::printf("%-58s %10.4f %10.4f\n", m.name.c_str(), rms, maxAbs);
  }

  std::printf("\n2. One cubic resample (rotation + sub-pixel shift) against ITK's float64 CPU filter;\n"
              "   max and RMS error over the central disk/ball, relative to the input range\n\n");
  std::printf("%-58s %10s %10s %10s %10s\n", "method", "2D max", "2D RMS", "3D max", "3D RMS");
  const SingleResample single(original.GetPointer(), volume.GetPointer());
  std::vector<Method>  methods = Methods();
  // ITK's own float pipeline, for scale
  methods.push_back({ "ITK CPU cubic (float image, double coefficients)", false, true, false, -1, false });
  for (const auto & m : methods)
  {
    if (!m.cubic || m.itkDouble)
    {
      continue;
    }
    if (m.gpu && !gpu)
    {
      std::printf("%-58s %10s\n", m.name.c_str(), "no GPU");
      continue;
    }
    double e[4];
    single.Errors(m, e);
    std::printf("%-58s %10.2e %10.2e %10.2e %10.2e\n", m.name.c_str(), e[0], e[1], e[2], e[3]);
  }
  return 0;
}
