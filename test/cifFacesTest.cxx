/*=========================================================================
 *  Every filter the core describes (cif::Filters()) has every face: its ITK
 *  class header and .wrap file, a command-line subcommand generated from
 *  the description (no described filter has a hand-written one) whose help
 *  names the ITK class, and (pytest, python/tests/test_described.py) a
 *  Python function. The generated subcommands equal ITK's own filters on a
 *  real image: bit for bit, the prefilter's within 1e-6 of the range on the
 *  GPU.
 *=========================================================================*/
#include "CudaImageFiltersTestUtilities.h"
#include "cif/Filter.h"
#include "cif/PackedMask.h"
#include "itkBSplineDecompositionImageFilter.h"
#include "itkBinShrinkImageFilter.h"
#include "itkShrinkImageFilter.h"
#include "itkDiscreteGaussianImageFilter.h"
#include "itkRecursiveGaussianImageFilter.h"
#include "itkCurvatureAnisotropicDiffusionImageFilter.h"
#include "itkGradientAnisotropicDiffusionImageFilter.h"
#include "itkGradientRecursiveGaussianImageFilter.h"
#include "itkImageFileWriter.h"
#include "itkBinaryThresholdImageFilter.h"
#include "itkFlatStructuringElement.h"
#include "itkGrayscaleErodeImageFilter.h"
#include "itkMaskImageFilter.h"
#include "itkMeanImageFilter.h"
#include "itkSmoothingRecursiveGaussianImageFilter.h"

#include <gtest/gtest.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include <unistd.h>

namespace
{
using namespace cif_test;
using Image = itk::Image<short, 3>; // the example volume holds short pixels

bool
FileExists(const std::string & path)
{
  return std::ifstream(path).good();
}

/** Runs the tool; returns its exit status and fills `output` with stdout. */
int
RunTool(const std::string & arguments, std::string & output)
{
  // one file per test process and call: CTest runs the tests of this file side by side
  static int        calls = 0;
  const std::string out =
    std::string(CIF_TEST_OUTPUT) + "/faces_stdout_" + std::to_string(getpid()) + "_" + std::to_string(calls++) + ".txt";
  const std::string command = std::string("\"") + CIF_TOOL + "\" " + arguments + " > \"" + out + "\" 2>&1";
  const int         status = std::system(command.c_str());
  std::ifstream     in(out);
  std::stringstream text;
  text << in.rdbuf();
  output = text.str();
  std::remove(out.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/** "itk::CudaMeanImageFilter" -> "itkCudaMeanImageFilter". */
std::string
FileStem(const std::string & itkClass)
{
  return "itk" + itkClass.substr(itkClass.find("::") + 2);
}

TEST(FacesCpu, EveryDescribedFilterHasEveryFace)
{
  ASSERT_GE(cif::Filters().size(), 5u);
  for (const cif::FilterDescriptor * d : cif::Filters())
  {
    SCOPED_TRACE(d->command);
    EXPECT_TRUE(FileExists(std::string(CIF_SOURCE_DIR) + "/include/" + FileStem(d->itkClass) + ".h"));
    EXPECT_TRUE(FileExists(std::string(CIF_SOURCE_DIR) + "/wrapping/" + FileStem(d->itkClass) + ".wrap"));
    std::string help;
    EXPECT_EQ(RunTool(d->command + " --help", help), 0) << help;
    EXPECT_NE(help.find(d->command), std::string::npos) << help;
    // generated from the description (its footer), not hand-written
    EXPECT_NE(help.find(d->itkClass + "; the Python function cudaimagefilters." + d->function), std::string::npos)
      << help;
    std::string list;
    EXPECT_EQ(RunTool("--help", list), 0);
    EXPECT_NE(list.find("  " + d->command + " "), std::string::npos) << "the tool's command list lacks " << d->command;
    // every parameter is an option of the subcommand
    for (const auto & p : d->parameters)
    {
      std::string option = "--" + p.name;
      for (auto & c : option)
      {
        c = c == '_' ? '-' : c;
      }
      EXPECT_NE(help.find(option), std::string::npos) << option << " in\n" << help;
    }
  }
}

TEST(FacesCpu, EveryPackedMaskOperationHasItsItkClass)
{
  ASSERT_EQ(cif::MaskOperations().size(), 3u);
  for (const cif::MaskOperationDescriptor * d : cif::MaskOperations())
  {
    SCOPED_TRACE(d->function);
    EXPECT_EQ(&cif::FindMaskOperation(d->function), d);
    EXPECT_TRUE(FileExists(std::string(CIF_SOURCE_DIR) + "/include/" + FileStem(d->itkClass) + ".h"));
    EXPECT_TRUE(FileExists(std::string(CIF_SOURCE_DIR) + "/wrapping/" + FileStem(d->itkClass) + ".wrap"));
    EXPECT_FALSE(d->values.empty());
    EXPECT_TRUE(d->cpu && d->cuda);
    // its subcommand (generated, or the threshold's --packed) names the class and every value
    std::string help;
    EXPECT_EQ(RunTool(d->command + " --help", help), 0) << help;
    EXPECT_NE(help.find(d->itkClass), std::string::npos) << help;
    for (const auto & value : d->values)
    {
      std::string option = "--" + value.name;
      for (auto & c : option)
      {
        c = c == '_' ? '-' : c;
      }
      EXPECT_NE(help.find(option), std::string::npos) << option << " in\n" << help;
    }
    std::string list;
    EXPECT_EQ(RunTool("--help", list), 0);
    EXPECT_NE(list.find("  " + d->command + " "), std::string::npos) << "the tool's command list lacks " << d->command;
  }
  // the one check of a call: the values in the pixel type, then ITK's lower <= upper
  const auto & threshold = cif::FindMaskOperation("threshold_to_packed_mask");
  EXPECT_NO_THROW(cif::CheckMaskValues(threshold, cif::Pixel::UInt8, { 0, 255 }));
  EXPECT_THROW(cif::CheckMaskValues(threshold, cif::Pixel::UInt8, { 0, 256 }), std::invalid_argument);
  EXPECT_THROW(cif::CheckMaskValues(threshold, cif::Pixel::Int16, { 2, 1 }), std::invalid_argument);
  EXPECT_THROW(cif::CheckMaskValues(threshold, cif::Pixel::Float32, { 0 }), std::invalid_argument);
  EXPECT_THROW(cif::CheckMaskValues(threshold, cif::Pixel::Float64, { 0, 1 }), std::invalid_argument);
  EXPECT_NO_THROW(cif::CheckMaskValues(threshold, cif::Pixel::Float32, { std::nan(""), 1 })); // ITK: all outside
  EXPECT_THROW(cif::FindMaskOperation("threshold"), std::invalid_argument);
}

TEST(FacesCpu, TheBilateralSubcommandSaysWhatItsAutomaticRadiusCameTo)
{
  // ITK's automatic size: ceil(domain_mu domain_sigma / spacing) per axis
  const std::string input = ExampleData("KmeansTest_T1UCharRaw.nii.gz");
  const auto        image = ReadImage<Image>(input);
  std::string       expected;
  for (unsigned int a = 0; a < 3; ++a)
  {
    expected += (a ? "x" : "") + std::to_string(static_cast<int>(std::ceil(2.5 * 2.0 / image->GetSpacing()[a])));
  }
  const std::string output = std::string(CIF_TEST_OUTPUT) + "/faces_bilateral_auto_" + std::to_string(getpid()) + ".nrrd";
  std::string       text;
  EXPECT_EQ(RunTool("bilateral \"" + input + "\" \"" + output + "\" --domain-sigma 2 --range-sigma 20 --device cpu", text),
            0)
    << text;
  EXPECT_NE(text.find("radius automatic (" + expected + ")"), std::string::npos) << expected << " in\n" << text;
  std::remove(output.c_str());
}

/** The tool's result for `arguments` (IN and OUT added), read back as
 * TOutput. */
template <typename TOutput = Image>
typename TOutput::Pointer
ToolResult(const std::string & command, const std::string & options, const std::string & device)
{
  const std::string input = ExampleData("KmeansTest_T1UCharRaw.nii.gz");
  const std::string output =
    std::string(CIF_TEST_OUTPUT) + "/faces_" + command + "_" + device + "_" + std::to_string(getpid()) + ".nrrd";
  std::remove(output.c_str());
  std::string text;
  const int   status =
    RunTool(command + " \"" + input + "\" \"" + output + "\" " + options + " --device " + device + " --quiet", text);
  EXPECT_EQ(status, 0) << text;
  EXPECT_NE(text.find(device == "gpu" ? "ran on GPU" : "ran on CPU"), std::string::npos) << text;
  typename TOutput::Pointer result = status == 0 ? ReadImage<TOutput>(output) : nullptr;
  std::remove(output.c_str()); // read: the file is not needed any more
  return result;
}

void
ExpectSame(const Image * ours, const Image * itk, const std::string & what)
{
  ASSERT_NE(ours, nullptr) << what;
  ASSERT_EQ(ours->GetLargestPossibleRegion().GetSize(), itk->GetLargestPossibleRegion().GetSize()) << what;
  for (unsigned int a = 0; a < 3; ++a)
  {
    EXPECT_NEAR(ours->GetSpacing()[a], itk->GetSpacing()[a], 1e-6) << what; // through a file's text
    EXPECT_NEAR(ours->GetOrigin()[a], itk->GetOrigin()[a], 1e-5) << what;
  }
  EXPECT_EQ(MaxAbsDifference(ours, itk), 0.0) << what;
}

void
ExpectToolEqualsItk(const std::string & device)
{
  const auto input = ReadImage<Image>(ExampleData("KmeansTest_T1UCharRaw.nii.gz"));

  auto shrink = itk::BinShrinkImageFilter<Image, Image>::New();
  shrink->SetInput(input);
  itk::BinShrinkImageFilter<Image, Image>::ShrinkFactorsType f;
  f[0] = 2;
  f[1] = 3;
  f[2] = 2;
  shrink->SetShrinkFactors(f);
  shrink->Update();
  ExpectSame(
    ToolResult("bin-shrink", "--shrink-factors 2,3,2", device).GetPointer(), shrink->GetOutput(), "bin-shrink");

  // the shrink: every f-th pixel on ITK's centred grid (its origin, its offset)
  auto subsample = itk::ShrinkImageFilter<Image, Image>::New();
  subsample->SetInput(input);
  subsample->SetShrinkFactors(f);
  subsample->Update();
  ExpectSame(ToolResult("shrink", "--shrink-factors 2,3,2", device).GetPointer(), subsample->GetOutput(), "shrink");

  // the smoothing recursive Gaussian: sigma in mm, the file's spacing
  auto smoothing = itk::SmoothingRecursiveGaussianImageFilter<Image, Image>::New();
  smoothing->SetInput(input);
  smoothing->SetSigma(1.5);
  smoothing->Update();
  ExpectSame(ToolResult("smoothing-recursive-gaussian", "--sigma 1.5", device).GetPointer(),
             smoothing->GetOutput(),
             "smoothing-recursive-gaussian");

  // the discrete Gaussian: variance in mm^2, the file's spacing
  auto discrete = itk::DiscreteGaussianImageFilter<Image, Image>::New();
  discrete->SetInput(input);
  discrete->SetVariance(2.5);
  discrete->Update();
  ExpectSame(ToolResult("discrete-gaussian", "--variance 2.5", device).GetPointer(),
             discrete->GetOutput(),
             "discrete-gaussian");

  // the recursive Gaussian's second derivative along y
  auto recursive = itk::RecursiveGaussianImageFilter<Image, Image>::New();
  recursive->SetInput(input);
  recursive->SetSigma(2.0);
  recursive->SetDirection(1);
  recursive->SetSecondOrder();
  recursive->Update();
  ExpectSame(ToolResult("recursive-gaussian", "--sigma 2 --direction 1 --order second", device).GetPointer(),
             recursive->GetOutput(),
             "recursive-gaussian");

  // the gradient of the smoothed image: float vectors of 3 (ITK's CovariantVector), within 1e-6 of the largest
  // component (the description's accuracy), on a copy of the volume with a rotated direction (the file's
  // spacing and direction reach the filter)
  {
    using GradientImage = itk::Image<itk::CovariantVector<float, 3>, 3>;
    auto rotated = Image::New();
    rotated->Graft(input);
    Image::DirectionType direction;
    const double         angle = 0.35;
    direction.SetIdentity();
    direction[0][0] = std::cos(angle);
    direction[0][2] = -std::sin(angle);
    direction[2][0] = std::sin(angle);
    direction[2][2] = std::cos(angle);
    rotated->SetDirection(direction);
    const std::string stem = std::string(CIF_TEST_OUTPUT) + "/faces_gradient_" + device + "_" + std::to_string(getpid());
    auto              writer = itk::ImageFileWriter<Image>::New();
    writer->SetInput(rotated);
    writer->SetFileName(stem + "_in.nrrd");
    writer->Update();
    auto gradient = itk::GradientRecursiveGaussianImageFilter<Image, GradientImage>::New();
    gradient->SetInput(ReadImage<Image>(stem + "_in.nrrd")); // the direction as the file holds it
    gradient->SetSigma(1.5);
    gradient->Update();
    std::string text;
    ASSERT_EQ(RunTool("gradient-recursive-gaussian \"" + stem + "_in.nrrd\" \"" + stem + "_out.nrrd\" --sigma 1.5 --device " +
                        device,
                      text),
              0)
      << text;
    EXPECT_NE(text.find(device == "gpu" ? "ran on GPU" : "ran on CPU"), std::string::npos) << text;
    EXPECT_NE(text.find("(float vectors of 3)"), std::string::npos) << text;
    const auto            ours = ReadImage<GradientImage>(stem + "_out.nrrd");
    const GradientImage * reference = gradient->GetOutput();
    ASSERT_EQ(ours->GetLargestPossibleRegion().GetSize(), reference->GetLargestPossibleRegion().GetSize());
    EXPECT_EQ(ours->GetDirection(), reference->GetDirection());
    const auto [largest, difference] = LargestComponentAndDifference(ours.GetPointer(), reference);
    EXPECT_GT(largest, 0.0);
    EXPECT_LE(difference, 1e-6 * largest) << "gradient-recursive-gaussian";
    std::remove((stem + "_in.nrrd").c_str());
    std::remove((stem + "_out.nrrd").c_str());
  }

  auto mean = itk::MeanImageFilter<Image, Image>::New();
  mean->SetInput(input);
  mean->SetRadius(Radius<Image>({ 1, 2, 1 }));
  mean->Update();
  ExpectSame(ToolResult("mean", "--radius 1,2,1", device).GetPointer(), mean->GetOutput(), "mean");

  using Kernel = itk::FlatStructuringElement<3>;
  auto erode = itk::GrayscaleErodeImageFilter<Image, Image, Kernel>::New();
  erode->SetInput(input);
  Kernel::RadiusType r;
  r.Fill(1);
  erode->SetKernel(Kernel::Box(r));
  erode->Update();
  ExpectSame(ToolResult("erode", "--radius 1", device).GetPointer(), erode->GetOutput(), "erode");

  // the prefilter: short pixels into float coefficients, equal to ITK's
  // (whose recursion runs in double) on the CPU, within 1e-6 of the range on
  // the GPU (float arithmetic between the axis passes)
  using FloatImage = itk::Image<float, 3>;
  auto prefilter = itk::BSplineDecompositionImageFilter<Image, FloatImage>::New();
  prefilter->SetInput(input);
  prefilter->SetSplineOrder(3);
  prefilter->Update();
  const auto coefficients = ToolResult<FloatImage>("bspline-prefilter", "--method iir", device);
  ASSERT_NE(coefficients, nullptr);
  short lowest = input->GetBufferPointer()[0];
  short highest = lowest;
  for (itk::SizeValueType i = 0; i < input->GetLargestPossibleRegion().GetNumberOfPixels(); ++i)
  {
    lowest = std::min(lowest, input->GetBufferPointer()[i]);
    highest = std::max(highest, input->GetBufferPointer()[i]);
  }
  EXPECT_LE(MaxAbsDifference(coefficients.GetPointer(), prefilter->GetOutput()),
            device == "gpu" ? 1e-6 * (highest - lowest) : 0.0)
    << "bspline-prefilter";

  // the anisotropic diffusions: integer pixels into float, ITK's output on the CPU (the same arithmetic), within
  // 1e-5 of the range on the GPU (the update in float)
  const auto diffused = [&](auto filter)
  {
    filter->SetInput(input);
    filter->SetNumberOfIterations(3);
    filter->SetTimeStep(0.05);
    filter->SetConductanceParameter(2.0);
    filter->Update();
    return FloatImage::Pointer(filter->GetOutput());
  };
  for (const bool curvature : { false, true })
  {
    const FloatImage::Pointer reference =
      curvature ? diffused(itk::CurvatureAnisotropicDiffusionImageFilter<Image, FloatImage>::New())
                : diffused(itk::GradientAnisotropicDiffusionImageFilter<Image, FloatImage>::New());
    const std::string command = curvature ? "curvature-anisotropic-diffusion" : "gradient-anisotropic-diffusion";
    const auto        ours =
      ToolResult<FloatImage>(command, "--iterations 3 --time-step 0.05 --conductance-parameter 2", device);
    ASSERT_NE(ours, nullptr);
    EXPECT_LE(MaxAbsDifference(ours.GetPointer(), reference.GetPointer()),
              device == "gpu" ? 1e-5 * DynamicRange(reference.GetPointer()) : 0.0)
      << command;
  }

  // the threshold: its real bounds on the command line (--lower 49.5 selects as 50 on integer pixels), the
  // description's names and the tool's spellings
  auto threshold = itk::BinaryThresholdImageFilter<Image, Image>::New();
  threshold->SetInput(input);
  threshold->SetLowerThreshold(50);
  threshold->SetUpperThreshold(150);
  threshold->SetInsideValue(1);
  threshold->Update();
  ExpectSame(ToolResult("threshold", "--lower-threshold 49.5 --upper 150.9 --inside-value 1", device).GetPointer(),
             threshold->GetOutput(),
             "threshold");
}

/** threshold --packed, then the generated unpack-mask and apply-packed-mask
 * on its mask file, against ITK's BinaryThresholdImageFilter and
 * MaskImageFilter on the same volume. */
void
ExpectMaskCommandsEqualItk(const std::string & device)
{
  const std::string input = ExampleData("KmeansTest_T1UCharRaw.nii.gz");
  const auto        image = ReadImage<Image>(input);
  const std::string stem = std::string(CIF_TEST_OUTPUT) + "/faces_mask_" + device + "_" + std::to_string(getpid());
  const std::string ran = device == "gpu" ? "ran on GPU" : "ran on CPU";
  std::string       text;
  ASSERT_EQ(RunTool("threshold \"" + input + "\" \"" + stem + ".nrrd\" --lower 50 --upper 150 --packed --device " +
                      device,
                    text),
            0)
    << text;
  EXPECT_EQ(RunTool("unpack-mask \"" + stem + ".nrrd\" \"" + stem + "_labels.nrrd\" --inside-value 7 --outside-value -2 " +
                      "--output-type int16 --device " + device,
                    text),
            0)
    << text;
  EXPECT_NE(text.find(ran), std::string::npos) << text;
  EXPECT_EQ(RunTool("apply-packed-mask \"" + input + "\" \"" + stem + ".nrrd\" \"" + stem +
                      "_masked.nrrd\" --outside-value -3 --device " + device,
                    text),
            0)
    << text;
  EXPECT_NE(text.find(ran), std::string::npos) << text;

  auto threshold = itk::BinaryThresholdImageFilter<Image, Image>::New();
  threshold->SetInput(image);
  threshold->SetLowerThreshold(50);
  threshold->SetUpperThreshold(150);
  threshold->SetInsideValue(7);
  threshold->SetOutsideValue(-2);
  threshold->Update();
  ExpectSame(ReadImage<Image>(stem + "_labels.nrrd").GetPointer(), threshold->GetOutput(), "unpack-mask");
  auto mask = itk::MaskImageFilter<Image, Image, Image>::New();
  mask->SetInput(image);
  mask->SetMaskImage(threshold->GetOutput());
  mask->SetMaskingValue(-2); // the labels' outside
  mask->SetOutsideValue(-3);
  mask->Update();
  ExpectSame(ReadImage<Image>(stem + "_masked.nrrd").GetPointer(), mask->GetOutput(), "apply-packed-mask");
  // the generated mask subcommand (a companion image: IN MASK OUT) on the int16 labels
  EXPECT_EQ(RunTool("mask \"" + input + "\" \"" + stem + "_labels.nrrd\" \"" + stem +
                      "_mask.nrrd\" --outside-value -3 --masking-value -2 --device " + device,
                    text),
            0)
    << text;
  EXPECT_NE(text.find(ran), std::string::npos) << text;
  ExpectSame(ReadImage<Image>(stem + "_mask.nrrd").GetPointer(), mask->GetOutput(), "mask");
  for (const char * suffix : { ".nrrd", "_labels.nrrd", "_masked.nrrd", "_mask.nrrd" })
  {
    std::remove((stem + suffix).c_str());
  }
}

TEST(FacesCpu, GeneratedSubcommandsEqualItk)
{
  ExpectToolEqualsItk("cpu");
  ExpectMaskCommandsEqualItk("cpu");
}

TEST(FacesCpu, MaskSubcommandsRefuseBadInput)
{
  std::string       text;
  const std::string input = ExampleData("KmeansTest_T1UCharRaw.nii.gz");
  const std::string stem = std::string(CIF_TEST_OUTPUT) + "/faces_maskbad_" + std::to_string(getpid());
  ASSERT_EQ(RunTool("threshold \"" + input + "\" \"" + stem + ".nrrd\" --lower 50 --upper 150 --packed --device cpu", text),
            0)
    << text;
  EXPECT_EQ(RunTool("unpack-mask \"" + stem + ".nrrd\" \"" + stem + "_o.nrrd\" --inside-value 256", text), 2) << text;
  EXPECT_NE(text.find("--inside-value: 256 is not a value of the image's pixel type"), std::string::npos) << text;
  EXPECT_EQ(RunTool("unpack-mask \"" + stem + ".nrrd\" \"" + stem + "_o.nrrd\" --output-type int32", text), 2) << text;
  EXPECT_NE(text.find("--output-type: unknown type 'int32'"), std::string::npos) << text;
  EXPECT_EQ(RunTool("apply-packed-mask \"" + input + "\" \"" + stem + "_o.nrrd\"", text), 2) << text;
  EXPECT_NE(text.find("apply-packed-mask needs IN MASK OUT"), std::string::npos) << text;
  // a mask of another grid: the image, not a mask, as MASK
  EXPECT_EQ(RunTool("apply-packed-mask \"" + input + "\" \"" + input + "\" \"" + stem + "_o.nrrd\"", text), 1) << text;
  EXPECT_NE(text.find("cannot read the packed mask"), std::string::npos) << text;
  EXPECT_FALSE(FileExists(stem + "_o.nrrd"));
  // the described mask: three operands, MASK of IN's size, values its types hold
  EXPECT_EQ(RunTool("mask \"" + input + "\" \"" + stem + "_o.nrrd\"", text), 2) << text;
  EXPECT_NE(text.find("mask needs IN, MASK and OUT file names"), std::string::npos) << text;
  EXPECT_EQ(RunTool("mask \"" + input + "\" \"" + ExampleData("BrainProtonDensitySlice.png") + "\" \"" + stem +
                      "_o.nrrd\"",
                    text),
            2)
    << text;
  EXPECT_NE(text.find("has 2 dimensions, IN has 3"), std::string::npos) << text;
  EXPECT_EQ(RunTool("mask \"" + input + "\" \"" + input + "\" \"" + stem + "_o.nrrd\" --masking-value 0.5", text), 2)
    << text;
  EXPECT_NE(text.find("masking_value = 0.5 is not a value of the mask's pixel type"), std::string::npos) << text;
  EXPECT_EQ(RunTool("mask --help", text), 0) << text;
  EXPECT_NE(text.find("mask IN MASK OUT"), std::string::npos) << text;
  EXPECT_FALSE(FileExists(stem + "_o.nrrd"));
  std::remove((stem + ".nrrd").c_str());
}

/** mask --stream reads IN and MASK in the same pieces (both MetaImage),
 * equal to the whole run; a MASK that ITK reads whole is refused. */
TEST(FacesCpu, MaskSubcommandStreamsItsMaskWithTheImage)
{
  std::string       text;
  const std::string stem = std::string(CIF_TEST_OUTPUT) + "/faces_maskstream_" + std::to_string(getpid());
  const std::string input = ExampleData("KmeansTest_T1UCharRaw.nii.gz");
  ASSERT_EQ(RunTool("mean \"" + input + "\" \"" + stem + "_in.mha\" --radius 0 --quiet", text), 0) << text;
  ASSERT_EQ(RunTool("threshold \"" + input + "\" \"" + stem + "_labels.mha\" --lower 50 --upper 150 --quiet", text), 0)
    << text;
  ASSERT_EQ(RunTool("threshold \"" + input + "\" \"" + stem + "_labels.nrrd\" --lower 50 --upper 150 --quiet", text), 0)
    << text;
  const std::string run = "mask \"" + stem + "_in.mha\" \"" + stem + "_labels.mha\" \"" + stem;
  ASSERT_EQ(RunTool(run + "_whole.mha\" --outside-value 7 --device cpu --quiet", text), 0) << text;
  ASSERT_EQ(RunTool(run + "_pieces.mha\" --outside-value 7 --device cpu --stream --stream-memory 100K", text), 0) << text;
  EXPECT_NE(text.find("streamed in"), std::string::npos) << text;
  const auto whole = ReadImage<Image>(stem + "_whole.mha");
  ExpectSame(ReadImage<Image>(stem + "_pieces.mha").GetPointer(), whole.GetPointer(), "mask --stream");
  EXPECT_EQ(RunTool("mask \"" + stem + "_in.mha\" \"" + stem + "_labels.nrrd\" \"" + stem + "_never.mha\" --stream", text), 2)
    << text;
  EXPECT_NE(text.find("--stream: MASK: ITK reads"), std::string::npos) << text;
  for (const char * suffix : { "_in.mha", "_labels.mha", "_labels.nrrd", "_whole.mha", "_pieces.mha" })
  {
    std::remove((stem + suffix).c_str());
  }
}

TEST(FacesCpu, GeneratedSubcommandsRefuseBadParameters)
{
  std::string       text;
  const std::string input = ExampleData("KmeansTest_T1UCharRaw.nii.gz");
  const std::string output = std::string(CIF_TEST_OUTPUT) + "/faces_never_" + std::to_string(getpid()) + ".nrrd";
  std::remove(output.c_str());
  EXPECT_EQ(RunTool("bin-shrink \"" + input + "\" \"" + output + "\" --shrink-factors 0", text), 2) << text;
  EXPECT_NE(text.find("--shrink-factors: 0 is out of range"), std::string::npos) << text;
  EXPECT_EQ(RunTool("mean \"" + input + "\" \"" + output + "\" --radius 1,2", text), 2) << text;
  EXPECT_NE(text.find("--radius 1,2 has 2 values, but"), std::string::npos) << text;
  EXPECT_EQ(RunTool("erode \"" + input + "\" \"" + output + "\" --boundary 100000", text), 2) << text;
  EXPECT_NE(text.find("not a value of the image's pixel type"), std::string::npos) << text;
  EXPECT_EQ(RunTool("mean \"" + input + "\" \"" + output + "\" --sigma 2", text), 2) << text;
  EXPECT_NE(text.find("unknown option '--sigma'"), std::string::npos) << text;
  EXPECT_FALSE(FileExists(output));
}

TEST(FacesGpu, GeneratedSubcommandsEqualItk)
{
  CIF_REQUIRE_GPU_OR_SKIP();
  ExpectToolEqualsItk("gpu");
  ExpectMaskCommandsEqualItk("gpu");
}

} // namespace
