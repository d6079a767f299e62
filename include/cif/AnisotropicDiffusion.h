/*=========================================================================
 *  CudaImageFilters: anisotropic diffusion (Perona-Malik), the core of the
 *  drop-ins for itk::GradientAnisotropicDiffusionImageFilter and
 *  itk::CurvatureAnisotropicDiffusionImageFilter. Plain C++: no ITK.
 *
 *  Each iteration computes ITK's update (GradientNDAnisotropicDiffusion-
 *  Function or CurvatureNDAnisotropicDiffusionFunction) at every pixel of
 *  the current image with zero-flux Neumann boundaries and adds time_step
 *  times it, as ITK's DenseFiniteDifferenceImageFilter does. The
 *  conductance K = -2 conductance^2 <|grad|^2> is scaled by the average
 *  squared gradient magnitude of the whole current image (central
 *  differences, every conductance_scaling_update_interval iterations), or by
 *  a fixed average gradient magnitude.
 *=========================================================================*/
#ifndef cifAnisotropicDiffusion_h
#define cifAnisotropicDiffusion_h

#include "cif/ClampedNeighborhood.h"
#include "cif/Filter.h"

#include <cstdint>
#include <string>

namespace cif
{

/** Which of ITK's two diffusion functions. */
enum class DiffusionKind : std::uint8_t
{
  /** GradientNDAnisotropicDiffusionFunction: div(c(|grad f|) grad f) */
  Gradient,
  /** CurvatureNDAnisotropicDiffusionFunction: modified curvature
   * diffusion, |grad f| div(c(|grad f|) grad f / |grad f|) */
  Curvature
};

struct AnisotropicDiffusionParameters
{
  DiffusionKind kind{ DiffusionKind::Gradient };
  int           dimension{ 3 };
  /** Iterations (0: the input cast to the output type). */
  int iterations{ 1 };
  double timeStep{ 0.0625 };
  double conductance{ 1.0 };
  /** The average squared gradient magnitude is computed before iterations
   * 0, interval, 2 interval, ... (at least 1). */
  int interval{ 1 };
  /** Use fixedAverageGradientMagnitude^2 instead of the image's average. */
  bool   fixedAverage{ false };
  double fixedAverageGradientMagnitude{ 1.0 };
  /** The derivatives' scale per axis: 1 / spacing (ITK's UseImageSpacing)
   * or 1. */
  double scale[3]{ 1.0, 1.0, 1.0 };
};

/** ITK's default time step for a dimension: 0.5 / 2^dimension. */
double
AnisotropicDiffusionDefaultTimeStep(int dimension);

/** ITK's stability warnings for these parameters (its texts; empty: none):
 * time_step above min(spacing) / 2^(dimension + 1) (spacing 1 without
 * UseImageSpacing), and for the curvature function above 0.5 / 2^dimension. */
std::string
AnisotropicDiffusionWarning(const AnisotropicDiffusionParameters & parameters, const double spacing[3]);

/** Empty when the job is valid, else why not. The output box may be a part
 * of the input only with a fixed average gradient magnitude (then every
 * pixel's result depends on the pixels within `iterations` of it). */
std::string
ValidateAnisotropicDiffusionJob(const ClampedNeighborhoodGeometry & geometry,
                                const AnisotropicDiffusionParameters & parameters);

/** CPU core: ITK's arithmetic (the update in double, differences of
 * neighbours in the pixel type, the average gradient in double summed per
 * line in a fixed order), multi-threaded. TOut is float or double. */
template <typename TIn, typename TOut>
void
AnisotropicDiffusionCPU(const TIn *                            input,
                        TOut *                                 output,
                        const ClampedNeighborhoodGeometry &    geometry,
                        const AnisotropicDiffusionParameters & parameters,
                        int                                    numberOfThreads,
                        const Progress &                       progress = {});

/** GPU core: the same contract with device pointers, on the current
 * stream; the update in the output's precision (float for float images),
 * the average gradient magnitude in double (cub::DeviceReduce), every
 * iteration on the device. Returns a note for the execution report. */
template <typename TIn, typename TOut>
std::string
AnisotropicDiffusionCUDA(const TIn *                            input,
                         TOut *                                 output,
                         const ClampedNeighborhoodGeometry &    geometry,
                         const AnisotropicDiffusionParameters & parameters);

/** Whether this build has the GPU core. */
bool
AnisotropicDiffusionCUDAIsCompiled();

} // namespace cif

#endif
