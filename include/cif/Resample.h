/*=========================================================================
 *  CudaImageFilters: the resampling core (plain types only).
 *
 *  An affine map from output indices to input continuous indices, and an
 *  interpolation rule with ITK's semantics. The ITK filter builds the map
 *  from the transform and the two images' geometry.
 *=========================================================================*/
#ifndef cifResample_h
#define cifResample_h

#include "cif/GaussianRBF.h"

#include <cstdint>

namespace cif
{

/** Interpolation rules, each with the boundary behaviour of its ITK class. */
enum class Interpolation
{
  /** itk::NearestNeighborInterpolateImageFunction: the sample at floor(c + 0.5). */
  NearestNeighbor,
  /** itk::LinearInterpolateImageFunction: (bi/tri)linear, edge samples repeated. */
  Linear,
  /** itk::BSplineInterpolateImageFunction of order 3 evaluated from its
   * coefficients, mirror boundary (the input is the coefficient image). */
  CubicBSpline,
  /** Gaussian radial basis function interpolation (cifGaussianRBF.h, the
   * point evaluation): `input` holds the GRBF coefficient image (double,
   * GrbfCoefficientsCUDA) and ResampleParameters::grbf the rule, whose
   * inverse pointers are device memory. No mirror: the Gaussian sum runs
   * over the nodes only. */
  GaussianRBF
};

/** Non-linear transforms the GPU follows, each given on a grid. */
enum class GridTransformKind
{
  None,
  /** itk::DisplacementFieldTransform with its default
   * itk::VectorLinearInterpolateImageFunction: displacement d interpolated
   * linearly (edge values repeated) where the point falls inside the
   * field's buffer, else 0; the transformed point is p + d. */
  DisplacementField,
  /** itk::BSplineTransform of order 3: the displacement is the cubic
   * B-spline of the grid's coefficients, with ITK's weights and its
   * InsideValidRegion test (outside it, or for a non-finite grid index, the
   * displacement is 0); the transformed point is p + d. */
  CubicBSpline
};

/** The grid of a non-linear transform, replayed per output pixel as
 * itk::ResampleImageFilter does for non-linear transforms: output point p,
 * its continuous index in the grid, the displacement d there, and the input
 * point p + d. The grid's buffer must be its largest possible region. */
struct TransformGrid
{
  GridTransformKind kind{ GridTransformKind::None };
  const double *    values{ nullptr }; ///< device memory: `dimension` doubles per grid point, x fastest
  std::int64_t      size[3]{ 1, 1, 1 };
  std::int64_t      start[3]{ 0, 0, 0 };
  double            origin[3]{ 0, 0, 0 };
  double            pointToIndex[3][3]{};
};

/** Extents (x fastest, unused axes 1) and the map from an output index o,
 * relative to the output buffer's first index, to the input continuous index
 * c = matrix o + offset, relative to the input buffer's first index. */
struct ResampleGeometry
{
  std::int64_t inputSize[3]{ 1, 1, 1 };
  std::int64_t outputSize[3]{ 1, 1, 1 };
  double       matrix[3][3]{ { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } };
  double       offset[3]{ 0, 0, 0 };

  /** The part of the input buffer that the input pointer holds (optional):
   * the samples (or coefficients) of the box [sampleBoxStart, sampleBoxStart
   * + sampleBoxSize), relative to the input buffer, x fastest. A zero size
   * means the whole buffer. The filter uses it to resample in output chunks
   * when the input does not fit the device: the box must hold every tap of
   * the chunk's inside points (taps outside it are clamped to it, so memory
   * stays safe). Not with the fast texture mode. */
  std::int64_t sampleBoxStart[3]{ 0, 0, 0 };
  std::int64_t sampleBoxSize[3]{ 0, 0, 0 };

  /** ITK-exact coordinates (optional). When set, matrix and offset are
   * ignored and c is computed the way itk::ResampleImageFilter computes it
   * for linear transforms, operation for operation in double precision
   * without fused multiply-adds: for each output line, the continuous
   * indices of its first pixel and of one past its last pixel go through
   * output index -> physical point -> transform -> input continuous index,
   * and the pixels in between interpolate linearly. Points that fall on the
   * inside/outside boundary then decide as ITK decides. Indices here are
   * absolute (not relative to the buffers). */
  bool         itkExact{ false };
  int          dimension{ 3 };
  double       outputOrigin[3]{ 0, 0, 0 };
  double       outputIndexToPoint[3][3]{};
  double       transformMatrix[3][3]{};
  double       transformOffset[3]{ 0, 0, 0 };
  double       inputOrigin[3]{ 0, 0, 0 };
  double       inputPointToIndex[3][3]{};
  std::int64_t outputStart[3]{ 0, 0, 0 }; ///< absolute index of the output buffer's first pixel
  std::int64_t inputStart[3]{ 0, 0, 0 };  ///< absolute index of the input buffer's first pixel
  std::int64_t lineFirst{ 0 };            ///< first x index of the output's largest region
  std::int64_t lineLength{ 1 };           ///< its x size

  /** A non-linear transform given on a grid (optional, with itkExact). */
  TransformGrid grid;
};

/** One image grid, for ResampleGeometryFor (x fastest; unused axes have
 * size 1 and identity rows). */
struct ResampleGrid
{
  double origin[3]{ 0, 0, 0 };
  /** Direction times diag(spacing): index to physical offset. */
  double indexToPoint[3][3]{ { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } };
  /** Its inverse, as the caller computes it (ITK: the image's
   * PhysicalPointToIndex matrix, vnl's inverse), so that continuous indices
   * are the ones ITK computes. */
  double pointToIndex[3][3]{ { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } };
  /** The buffer: index of its first sample and its size. */
  std::int64_t bufferStart[3]{ 0, 0, 0 };
  std::int64_t bufferSize[3]{ 1, 1, 1 };
  /** x extent of the largest possible region (output grids: ITK interpolates
   * the continuous index along whole lines of it). */
  std::int64_t lineFirst{ 0 };
  std::int64_t lineLength{ 1 };
};

/** The geometry of itk::ResampleImageFilter resampling `input` onto
 * `output` through the affine map p_in = A p_out + b between physical
 * points (identity and translation transforms included): ITK-exact
 * coordinates (itkExact), and the equivalent index map (matrix, offset),
 * which output chunks use to find the part of the input they read. For a
 * grid transform, pass A = I and b = 0 and set the result's `grid`. */
ResampleGeometry
ResampleGeometryFor(int                  dimension,
                    const ResampleGrid & input,
                    const ResampleGrid & output,
                    const double         A[3][3],
                    const double         b[3]);

struct ResampleParameters
{
  Interpolation interpolation{ Interpolation::Linear };
  /** Written where c falls outside [-0.5, size - 0.5) on some axis (ITK's
   * IsInsideBuffer), and for non-finite c. */
  double defaultValue{ 0.0 };
  /** Interpolated values are clamped to [outputMin, outputMax], then converted
   * with static_cast, as itk::ResampleImageFilter does. */
  double outputMin{ -1e308 };
  double outputMax{ 1e308 };
  /** CubicBSpline only, float coefficients only: the "fast" evaluation of
   * Ruijters et al., 2^N hardware-linear texture fetches with on-the-fly
   * weights g and h (their eq. 9 and 11) instead of 4^N explicit taps. The
   * texture unit quantises the interpolation fraction (8 bits of fraction on
   * current NVIDIA GPUs), which puts a floor under the accuracy. */
  bool fastTexture{ false };
  /** GaussianRBF only: the evaluation rule (device pointers). */
  GrbfPointsRule grbf;
};

/** GPU core: `input` holds samples (nearest, linear) or cubic coefficients
 * (CubicBSpline) on the device; `output` is device memory. Interpolation
 * weights and sums in single precision (double for double samples), the
 * index map in double. Throws cif::CudaFailure on CUDA errors; returns after
 * the device finished. */
template <typename TSample, typename TOut>
void
ResampleCUDA(const TSample *            input,
             TOut *                     output,
             const ResampleGeometry &   geometry,
             const ResampleParameters & parameters);

/** The GPU core in output chunks, for inputs or outputs larger than the
 * device's free memory. `input` (the whole input buffer) and `output` (the
 * whole output buffer) are HOST memory. The output is cut along its slowest
 * axis into slabs; each slab is resampled from the part of the input that
 * its points can reach (the hull of its corners under the index map, grown
 * by the interpolation's reach; the whole input for grid transforms), which
 * alone is uploaded. A slab's height halves until its buffers fit; when one
 * output plane does not fit, cif::CudaOutOfMemory propagates. Cubic
 * evaluation is the accurate one (the fast texture needs the whole
 * coefficient image). The values equal ResampleCUDA's bit for bit. Returns
 * the number of chunks. */
template <typename TSample, typename TOut>
int
ResampleCUDAInChunks(const TSample *            input,
                     TOut *                     output,
                     const ResampleGeometry &   geometry,
                     const ResampleParameters & parameters);

/** Whether this build has the GPU core. */
bool
ResampleCUDAIsCompiled();

} // namespace cif

#endif
