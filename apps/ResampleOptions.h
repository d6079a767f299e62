/*=========================================================================
 *  CudaImageFilters: the command line of `cudaimagefilters resample`: its
 *  options as parsed (ResampleOptions), their limits and the --verify
 *  tolerances.
 *=========================================================================*/
#ifndef ResampleOptions_h
#define ResampleOptions_h

#include "FilterCommon.h"
#include "ToolCommon.h"

#include "cif/BSplinePrefilter.h"
#include "cif/Runtime.h"
#include "itkBSplineInterpolateImageFunction.h"
#include "itkCompositeTransform.h"
#include "itkContinuousIndex.h"
#include "itkCudaExecution.h"
#include "itkCudaGaussianRBFInterpolateImageFunction.h"
#include "itkCudaResampleImageFilter.h"
#include "itkEuler2DTransform.h"
#include "itkEuler3DTransform.h"
#include "itkIdentityTransform.h"
#include "itkImage.h"
#include "itkLinearInterpolateImageFunction.h"
#include "itkMath.h"
#include "itkNearestNeighborInterpolateImageFunction.h"
#include "itkObjectFactoryBase.h"
#include "itkResampleImageFilter.h"
#include "itkTransformFileReader.h"
#include "itkTxtTransformIOFactory.h"
#include "itksys/SystemTools.hxx"

#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace cif
{
namespace tool
{
namespace resample
{

inline constexpr const char * CommandName = "resample";

/** --verify fails above this largest difference, relative to the input's
 * range (float output), */
inline constexpr double VerifyTolerance = 1e-5;
/** ... or above this many grey levels (unsigned char output, .png). */
inline constexpr double VerifyToleranceUnsignedChar = 1.0;
/** The fast texture mode's floor (docs/ResamplePerformance.md: up to 6e-3 of
 * the range on real images, 1.6e-2 on noise). */
inline constexpr double VerifyToleranceFast = 2e-2;

/** Largest output size along an axis that --zoom may ask for. */
inline constexpr double MaxZoomedAxisSize = 1e9;


enum class InterpolationKind
{
  Nearest,
  Linear,
  Cubic,
  GaussianRBF
};

/** --mode: how the GPU interpolates. Fast (texture hardware) is still to
 * come in the filter; the tool refuses it for now. */
enum class ResampleMode
{
  Accurate,
  Fast
};

struct ResampleOptions
{
  std::string                     Input;
  std::string                     Output;
  std::string                     RotateText; ///< as given, for messages
  std::vector<double>             RotateDegrees;
  std::string                     TranslateText;
  std::vector<double>             Translation;
  std::string                     TransformFile;
  bool                            HasZoom{ false };
  std::string                     ZoomText;
  double                          Zoom{ 1.0 };
  std::string                     Reference;
  InterpolationKind               Interpolation{ InterpolationKind::Cubic };
  std::vector<double>             Sigma; ///< grbf: sigma per axis (physical); empty: one spacing
  bool                            HasPrefilter{ false };
  itk::CudaBSplinePrefilterMethod Prefilter{ itk::CudaBSplinePrefilterMethod::Recursive };
  bool                            HasFIRHalfWidth{ false };
  unsigned int                    FIRHalfWidth{ 0 };
  ResampleMode                    Mode{ ResampleMode::Accurate };
  double                          DefaultValue{ 0.0 };
  itk::CudaExecutionMode          ExecutionMode{ itk::CudaExecutionMode::Automatic };
  bool                            Verify{ false };
  bool                            Quiet{ false };

  bool
  HasRotate() const
  {
    return !RotateDegrees.empty();
  }
  bool
  HasTranslate() const
  {
    return !Translation.empty();
  }
  bool
  HasTransformFile() const
  {
    return !TransformFile.empty();
  }
  bool
  HasReference() const
  {
    return !Reference.empty();
  }
};


/** "nearest neighbour", "linear", "cubic B-spline", "Gaussian RBF (...)". */
const char *
InterpolationName(InterpolationKind kind);

/** Parses and checks the arguments after "resample" (throws UsageError). */
ResampleOptions
ParseResampleOptions(const std::vector<std::string> & args);

/** Output size along one axis for --zoom: the input's size times the zoom,
 * rounded to the nearest integer (halves up). */
inline double
ZoomedAxisSize(std::size_t inputSize, double zoom)
{
  return std::floor(static_cast<double>(inputSize) * zoom + 0.5);
}

} // namespace resample
} // namespace tool
} // namespace cif

#endif
