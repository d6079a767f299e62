/*=========================================================================
 *  CudaImageFilters: the rotating-mask (Nagao-Matsuyama) filter core
 *  (seed paper 002, section 4.2.3, eq. 4 and figure 10).
 *
 *  For every sample the mask around it is divided into sub-regions; for each
 *  sub-region S with N_S samples the mean and the dispersion
 *      sigma^2[S] = (sum f^2 - (sum f)^2 / N_S) / N_S          (eq. 4)
 *  are computed, and the output is the mean of the sub-region with the
 *  smallest dispersion; ties go to the first sub-region in the order below.
 *  (Figure 10 of the paper prints `sq_sum + sum*sum/N_S`; eq. 4, used here,
 *  has the minus sign. The 2D masks have different sizes, so the true
 *  dispersion, with the 1/N_S factor, is compared.)
 *
 *  Offsets are (dx, dy[, dz]) from the centre, x fastest, y increasing
 *  downwards in the row-major buffer.
 *
 *  2D (Nagao & Matsuyama 1979, 5 x 5 window, nine sub-regions):
 *    0  centre square, 9 samples: dx, dy in {-1, 0, 1}
 *    1  pentagon -y, 7: (-1,-2) (0,-2) (1,-2) (-1,-1) (0,-1) (1,-1) (0,0)
 *    2  pentagon +x, 7: (2,-1) (2,0) (2,1) (1,-1) (1,0) (1,1) (0,0)
 *    3  pentagon +y, 7: (-1,2) (0,2) (1,2) (-1,1) (0,1) (1,1) (0,0)
 *    4  pentagon -x, 7: (-2,-1) (-2,0) (-2,1) (-1,-1) (-1,0) (-1,1) (0,0)
 *    5  hexagon -x-y, 7: (-2,-2) (-1,-2) (-2,-1) (-1,-1) (0,-1) (-1,0) (0,0)
 *    6  hexagon +x-y, 7: (2,-2) (1,-2) (2,-1) (1,-1) (0,-1) (1,0) (0,0)
 *    7  hexagon +x+y, 7: (2,2) (1,2) (2,1) (1,1) (0,1) (1,0) (0,0)
 *    8  hexagon -x+y, 7: (-2,2) (-1,2) (-2,1) (-1,1) (0,1) (-1,0) (0,0)
 *  (the pentagons: the three samples two steps away in one axis direction,
 *  the three samples one step away, and the centre; the hexagons: a 2 x 2
 *  corner block of the window, the two samples between it and the centre,
 *  and the centre). A 3D buffer with dimension 2 is filtered slice by slice.
 *
 *  3D (six sub-regions of the 5 x 5 x 5 mask, 27 samples each): the 3 x 3 x 3
 *  blocks that contain the centre on one face and extend two samples along
 *  one axis direction:
 *    0  +x: dx in {0, 1, 2},   dy, dz in {-1, 0, 1}
 *    1  -x: dx in {-2, -1, 0}, dy, dz in {-1, 0, 1}
 *    2  +y: dy in {0, 1, 2},   dx, dz in {-1, 0, 1}
 *    3  -y: dy in {-2, -1, 0}, dx, dz in {-1, 0, 1}
 *    4  +z: dz in {0, 1, 2},   dx, dy in {-1, 0, 1}
 *    5  -z: dz in {-2, -1, 0}, dx, dy in {-1, 0, 1}
 *  Their union is 81 samples of the 5 x 5 x 5 box: the centre 3 x 3 x 3 cube
 *  and the 3 x 3 face centres at distance 2 on each side.
 *
 *  Boundary: clamp-to-edge (see cifClampedNeighborhood.h).
 *
 *  Arithmetic:
 *  - integer inputs of at most 16 bits: exact integer arithmetic (sums of
 *    f - f(centre) and of their squares in 32/64-bit integers); ties are
 *    therefore exact and resolved by the order above.
 *  - other inputs (32-bit integers, float, double): double precision on the
 *    differences f - f(centre); the dispersions have a relative error of a
 *    few 1e-16 of sum (f - f(centre))^2, so sub-regions whose dispersions
 *    agree that closely may be chosen either way.
 *  Output: the mean of the chosen sub-region. Integer outputs: rounded to the
 *  nearest integer, floor(mean + 1/2) (all sub-region sizes are odd, so the
 *  exact mean is never halfway between two integers), clamped to the output
 *  type's range. Floating outputs: the mean rounded to the output type.
 *  Non-finite samples: the output is NaN wherever a sub-region contains a
 *  NaN or an infinity (i.e. wherever the 2D window's 25 / the 3D mask's 81
 *  samples, after clamping, contain one); NaN propagates. In double images,
 *  magnitudes beyond ~1e153 overflow the squares and give NaN the same way.
 *
 *  Plain types only (no ITK, no CUDA headers).
 *=========================================================================*/
#ifndef cifRotatingMask_h
#define cifRotatingMask_h

#include "cif/ClampedNeighborhood.h"

#include <functional>
#include <string>

namespace cif
{

struct RotatingMaskParameters
{
  /** 2: Nagao's nine 2D sub-regions (slice by slice); 3: the six 3D sub-regions. */
  int dimension{ 3 };
  /** How often the filter is applied; iteration k > 1 filters the result of
   * iteration k - 1 (in the output pixel type). Needs the whole image when > 1. */
  int iterations{ 1 };
};

/** Half-width of the mask (5 x 5 [x 5]). */
constexpr int RotatingMaskRadius = 2;

/** Empty when the job is valid, else why not. */
std::string
ValidateRotatingMaskJob(const ClampedNeighborhoodGeometry & geometry, const RotatingMaskParameters & parameters);

using RotatingMaskProgress = std::function<void(double)>;

/** CPU core (multi-threaded). Throws std::invalid_argument for an invalid job. */
template <typename TIn, typename TOut>
void
RotatingMaskCPU(const TIn *                         input,
                TOut *                              output,
                const ClampedNeighborhoodGeometry & geometry,
                const RotatingMaskParameters &      parameters,
                int                                 numberOfThreads,
                const RotatingMaskProgress &        progress = {});

/** GPU core: the same contract and the same arithmetic with device pointers
 * (a shared-memory tile per block). Iterations stay on the device. Returns
 * one line that says which kernel ran. Throws cif::CudaFailure on CUDA
 * errors, cif::CudaOutOfMemory when a temporary cannot be allocated,
 * std::invalid_argument for an invalid job. Returns after the device
 * finished. */
template <typename TIn, typename TOut>
std::string
RotatingMaskCUDA(const TIn *                         input,
                 TOut *                              output,
                 const ClampedNeighborhoodGeometry & geometry,
                 const RotatingMaskParameters &      parameters);

/** Whether this build has the GPU core (compiled with nvcc). */
bool
RotatingMaskCUDAIsCompiled();

} // namespace cif

#endif
