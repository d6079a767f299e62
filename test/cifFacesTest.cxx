/*=========================================================================
 *  Every filter the core describes (cif::Filters()) has every face: its ITK
 *  class header and .wrap file, a command-line subcommand (generated or
 *  hand-written) whose help names the ITK class, and (pytest,
 *  python/tests/test_described.py) a Python function. The generated
 *  subcommands equal ITK's own filters on a real image, bit for bit.
 *=========================================================================*/
#include "CudaImageFiltersTestUtilities.h"
#include "cif/Filter.h"
#include "itkBinShrinkImageFilter.h"
#include "itkBinaryThresholdImageFilter.h"
#include "itkFlatStructuringElement.h"
#include "itkGrayscaleErodeImageFilter.h"
#include "itkMeanImageFilter.h"

#include <gtest/gtest.h>
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

/** The tool's result for `arguments` (IN and OUT added), read back. */
Image::Pointer
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
  return status == 0 ? ReadImage<Image>(output) : nullptr;
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

  // the threshold's subcommand is hand-written (--packed, real bounds) over the described ITK class
  auto threshold = itk::BinaryThresholdImageFilter<Image, Image>::New();
  threshold->SetInput(input);
  threshold->SetLowerThreshold(50);
  threshold->SetUpperThreshold(150);
  threshold->SetInsideValue(1);
  threshold->Update();
  ExpectSame(ToolResult("threshold", "--lower-threshold 50 --upper 150 --inside-value 1", device).GetPointer(),
             threshold->GetOutput(),
             "threshold");
}

TEST(FacesCpu, GeneratedSubcommandsEqualItk)
{
  ExpectToolEqualsItk("cpu");
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
}

} // namespace
