/*=========================================================================
 *  GaussianRBFAccuracy: the seed's figure 4 on a real image from ITK's
 *  examples. A 120 x 120 crop of BrainProtonDensitySlice.png is decimated
 *  by 2 (the even pixels: a 60 x 60 image, the seed's size), zoomed back by
 *  2 onto the original grid (output pixel k at input index k / 2, the
 *  seed's mapping), and compared with the original crop, for sigma from
 *  0.5 to 2 pixels:
 *    - GRBF exact (this module's separable method, CPU core, double sums);
 *    - the seed's block mode in float32 (one 60 x 60 block: the seed's dense
 *      3600-unknown system, LU with partial pivoting; on the GPU when there
 *      is one, else on the CPU);
 *    - cubic B-spline (CudaResampleImageFilter with ITK's cubic
 *      interpolator) and linear (ITK's linear interpolator), which do not
 *      depend on sigma.
 *  Errors are over the output pixels inside the decimated image's extent
 *  (the last row and column map to 59.5, outside): RMSE and the largest
 *  error, in grey levels (0-255), and the RMSE over the odd (interpolated)
 *  pixels alone.
 *
 *  Then the seed's 120 x 120 example: the crop zoomed x2 (sigma 1 pixel) in
 *  block mode, 4 blocks of 60 x 60 without overlap (the seams of its figure
 *  3b) and 4 blocks of 62 x 62 blended across their overlap (figure 3c), in
 *  float32 and double, against the exact method: the largest difference,
 *  and with --images DIR the exact result and |block - exact| as PNGs.
 *
 *  Usage: GaussianRBFAccuracy [IMAGE] [--x0 X --y0 Y] [--csv FILE] [--images DIR]
 *=========================================================================*/
#include "itkCudaGaussianRBFInterpolationImageFilter.h"
#include "itkCudaResampleImageFilter.h"
#include "cif/Runtime.h"
#include "itkCudaExecution.h"

#include "itkBSplineInterpolateImageFunction.h"
#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"
#include "itkRescaleIntensityImageFilter.h"
#include "itkImageRegionIteratorWithIndex.h"
#include "itkLinearInterpolateImageFunction.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace
{
using ImageType = itk::Image<float, 2>;

struct Errors
{
  double rmse{ 0 }, maxError{ 0 }, rmseOdd{ 0 };
};

Errors
Compare(const ImageType * result, const ImageType * original)
{
  const auto n = original->GetLargestPossibleRegion().GetSize();
  double     sum = 0, sumOdd = 0, worst = 0;
  long       count = 0, countOdd = 0;
  for (unsigned y = 0; y + 1 < n[1]; ++y)
  {
    for (unsigned x = 0; x + 1 < n[0]; ++x)
    {
      ImageType::IndexType i = { { static_cast<long>(x), static_cast<long>(y) } };
      const double         e = static_cast<double>(result->GetPixel(i)) - static_cast<double>(original->GetPixel(i));
      sum += e * e;
      ++count;
      worst = std::max(worst, std::abs(e));
      if (x % 2 == 1 || y % 2 == 1)
      {
        sumOdd += e * e;
        ++countOdd;
      }
    }
  }
  return { std::sqrt(sum / count), worst, std::sqrt(sumOdd / countOdd) };
}

} // namespace

int
main(int argc, char * argv[])
{
  std::string file = "/usr/share/doc/insighttoolkit5-examples/examples/Data/BrainProtonDensitySlice.png";
  long        x0 = 30, y0 = 50;
  std::string csv, images;
  for (int i = 1; i < argc; ++i)
  {
    if (!std::strcmp(argv[i], "--x0") && i + 1 < argc)
      x0 = std::atol(argv[++i]);
    else if (!std::strcmp(argv[i], "--y0") && i + 1 < argc)
      y0 = std::atol(argv[++i]);
    else if (!std::strcmp(argv[i], "--csv") && i + 1 < argc)
      csv = argv[++i];
    else if (!std::strcmp(argv[i], "--images") && i + 1 < argc)
      images = argv[++i];
    else if (argv[i][0] != '-')
      file = argv[i];
    else
    {
      std::fprintf(stderr, "usage: %s [IMAGE] [--x0 X --y0 Y] [--csv FILE] [--images DIR]\n", argv[0]);
      return 2;
    }
  }
  auto reader = itk::ImageFileReader<ImageType>::New();
  reader->SetFileName(file);
  reader->Update();
  const ImageType * full = reader->GetOutput();

  // the 120 x 120 original and its 60 x 60 decimation (unit spacing, origin 0)
  auto original = ImageType::New();
  original->SetRegions(ImageType::SizeType{ { 120, 120 } });
  original->Allocate();
  auto decimated = ImageType::New();
  decimated->SetRegions(ImageType::SizeType{ { 60, 60 } });
  ImageType::SpacingType two;
  two.Fill(2.0);
  decimated->SetSpacing(two); // its pixels sit on the original's even pixels
  decimated->Allocate();
  for (long y = 0; y < 120; ++y)
  {
    for (long x = 0; x < 120; ++x)
    {
      const float v = full->GetPixel({ { x0 + x, y0 + y } });
      original->SetPixel({ { x, y } }, v);
      if (x % 2 == 0 && y % 2 == 0)
      {
        decimated->SetPixel({ { x / 2, y / 2 } }, v);
      }
    }
  }
  const bool gpu = cif::Runtime::IsDeviceAvailable();
  std::printf("GRBF accuracy (the seed's figure 4): %s crop (%ld, %ld) 120x120, decimated to 60x60, zoomed back x2.\n",
              file.c_str(),
              x0,
              y0);
  std::printf("Block mode: one 60x60 block (3600 unknowns), float32 LU, on the %s (%s).\n",
              gpu ? "GPU" : "CPU",
              gpu ? cif::Runtime::GetDeviceDescription().c_str() : "no GPU");
  std::printf("Errors in grey levels over the 119x119 output pixels inside the decimated extent.\n\n");

  // the fixed-kernel peers
  auto resample = [&](bool cubic)
  {
    auto filter = itk::CudaResampleImageFilter<ImageType, ImageType>::New();
    filter->SetInput(decimated);
    filter->SetSize(ImageType::SizeType{ { 120, 120 } });
    filter->SetOutputSpacing(original->GetSpacing());
    filter->SetOutputOrigin(original->GetOrigin());
    if (cubic)
    {
      auto interpolator = itk::BSplineInterpolateImageFunction<ImageType, double, double>::New();
      interpolator->SetSplineOrder(3);
      filter->SetInterpolator(interpolator);
    }
    else
    {
      filter->SetInterpolator(itk::LinearInterpolateImageFunction<ImageType, double>::New());
    }
    filter->SetExecutionMode(itk::CudaExecutionMode::CPU);
    filter->Update();
    return Compare(filter->GetOutput(), original);
  };
  const Errors cubic = resample(true);
  const Errors linear = resample(false);
  std::printf("cubic B-spline: RMSE %.3f, max %.2f, RMSE odd %.3f\n", cubic.rmse, cubic.maxError, cubic.rmseOdd);
  std::printf("linear:         RMSE %.3f, max %.2f, RMSE odd %.3f\n\n", linear.rmse, linear.maxError, linear.rmseOdd);

  std::ofstream out;
  if (!csv.empty())
  {
    out.open(csv);
    out
      << "sigma,exact_rmse,exact_max,exact_rmse_odd,block32_rmse,block32_max,block32_rmse_odd,cubic_rmse,linear_rmse\n";
  }
  std::printf("| sigma (px) | GRBF exact RMSE | exact max | exact RMSE odd | block float32 RMSE | block max | cubic "
              "RMSE | linear RMSE |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  for (int s10 = 5; s10 <= 20; ++s10)
  {
    const double sigma = s10 / 10.0;
    auto         run = [&](itk::CudaGaussianRBFMethod method, itk::CudaExecutionMode mode, std::string & note)
    {
      auto filter = itk::CudaGaussianRBFInterpolationImageFilter<ImageType>::New();
      filter->SetInput(decimated);
      filter->SetSize(ImageType::SizeType{ { 120, 120 } });
      filter->SetOutputSpacing(original->GetSpacing());
      filter->SetOutputOrigin(original->GetOrigin());
      itk::FixedArray<double, 2> s;
      s.Fill(sigma * 2.0); // physical units: the decimated spacing is 2
      filter->SetSigma(s);
      filter->SetMethod(method);
      itk::FixedArray<unsigned int, 2> block;
      block.Fill(60);
      filter->SetBlockSize(block);
      itk::FixedArray<unsigned int, 2> none;
      none.Fill(0);
      filter->SetBlockOverlap(none);
      filter->SetExecutionMode(mode);
      try
      {
        filter->Update();
      }
      catch (const itk::ExceptionObject & e)
      {
        note = e.GetDescription();
        return Errors{ NAN, NAN, NAN };
      }
      return Compare(filter->GetOutput(), original);
    };
    std::string  exactNote, blockNote;
    const Errors exact = run(itk::CudaGaussianRBFMethod::Exact, itk::CudaExecutionMode::CPU, exactNote);
    const Errors block = run(
      itk::CudaGaussianRBFMethod::Block, gpu ? itk::CudaExecutionMode::GPU : itk::CudaExecutionMode::CPU, blockNote);
    std::printf("| %.1f | %s | %s | %s | %.3g | %.3g | %.3f | %.3f |\n",
                sigma,
                std::isnan(exact.rmse) ? "refused (conditioning)" : std::to_string(exact.rmse).substr(0, 6).c_str(),
                std::isnan(exact.rmse) ? "-" : std::to_string(exact.maxError).substr(0, 6).c_str(),
                std::isnan(exact.rmse) ? "-" : std::to_string(exact.rmseOdd).substr(0, 6).c_str(),
                block.rmse,
                block.maxError,
                cubic.rmse,
                linear.rmse);
    if (out)
    {
      out << sigma << ',' << exact.rmse << ',' << exact.maxError << ',' << exact.rmseOdd << ',' << block.rmse << ','
          << block.maxError << ',' << block.rmseOdd << ',' << cubic.rmse << ',' << linear.rmse << '\n';
    }
  }

  // the seed's 120 x 120 example: blocks with and without overlap against the exact method
  std::printf("\nThe 120x120 crop zoomed x2 (sigma 1 px) in block mode against the exact method:\n\n");
  std::printf("| blocks | precision | max abs difference from exact | RMS difference |\n|---|---|---|---|\n");
  auto zoomed = [&](itk::CudaGaussianRBFMethod method, unsigned block, unsigned overlap, bool dp)
  {
    auto filter = itk::CudaGaussianRBFInterpolationImageFilter<ImageType>::New();
    filter->SetInput(original);
    itk::FixedArray<double, 2> zoom;
    zoom.Fill(2);
    filter->SetZoomFactors(zoom);
    filter->SetMethod(method);
    itk::FixedArray<unsigned int, 2> b, o;
    b.Fill(block);
    o.Fill(overlap);
    filter->SetBlockSize(b);
    filter->SetBlockOverlap(o);
    filter->SetBlockDoublePrecision(dp);
    filter->SetExecutionMode(method == itk::CudaGaussianRBFMethod::Block && gpu ? itk::CudaExecutionMode::GPU
                                                                                : itk::CudaExecutionMode::CPU);
    filter->Update();
    ImageType::Pointer out = filter->GetOutput();
    out->DisconnectPipeline();
    return out;
  };
  const auto exactZoom = zoomed(itk::CudaGaussianRBFMethod::Exact, 62, 4, true);
  auto       writePng = [&](const ImageType * image, const std::string & name, bool difference)
  {
    if (images.empty())
    {
      return;
    }
    using PngType = itk::Image<unsigned char, 2>;
    auto rescale = itk::RescaleIntensityImageFilter<ImageType, PngType>::New();
    rescale->SetInput(image);
    rescale->SetOutputMinimum(0);
    rescale->SetOutputMaximum(255);
    auto writer = itk::ImageFileWriter<PngType>::New();
    writer->SetInput(rescale->GetOutput());
    writer->SetFileName(images + "/" + name);
    writer->Update();
    (void)difference;
  };
  writePng(exactZoom, "grbf_exact_x2.png", false);
  struct BlockCase
  {
    unsigned     block, overlap;
    bool         dp;
    const char * label;
    const char * file;
  };
  for (const BlockCase & c :
       { BlockCase{ 60, 0, false, "4 of 60x60, no overlap (figure 3b)", "grbf_blocks60_seams.png" },
         BlockCase{ 62, 4, false, "4 of 62x62, 4 shared, blended (figure 3c)", "grbf_blocks62_blended.png" },
         BlockCase{ 60, 0, true, "4 of 60x60, no overlap", nullptr },
         BlockCase{ 62, 4, true, "4 of 62x62, 4 shared, blended", nullptr } })
  {
    const auto block = zoomed(itk::CudaGaussianRBFMethod::Block, c.block, c.overlap, c.dp);
    auto       diff = ImageType::New();
    diff->SetRegions(block->GetLargestPossibleRegion());
    diff->Allocate();
    double worst = 0, sum = 0;
    long   count = 0;
    for (itk::ImageRegionIteratorWithIndex<ImageType> it(diff, diff->GetLargestPossibleRegion()); !it.IsAtEnd(); ++it)
    {
      const double d = std::abs(static_cast<double>(block->GetPixel(it.GetIndex())) -
                                static_cast<double>(exactZoom->GetPixel(it.GetIndex())));
      it.Set(static_cast<float>(d));
      worst = std::max(worst, d);
      sum += d * d;
      ++count;
    }
    std::printf("| %s | %s | %.3g | %.3g |\n", c.label, c.dp ? "double" : "float32", worst, std::sqrt(sum / count));
    if (c.file != nullptr)
    {
      writePng(diff, c.file, true);
    }
  }
  return 0;
}
