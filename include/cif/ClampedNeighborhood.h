/*=========================================================================
 *  CudaImageFilters: geometry of a neighbourhood filter job with a
 *  clamp-to-edge (zero-flux Neumann) boundary, shared by the bilateral and
 *  the rotating-mask cores.
 *
 *  Plain types only (no ITK, no CUDA headers).
 *=========================================================================*/
#ifndef cifClampedNeighborhood_h
#define cifClampedNeighborhood_h

#include <cstdint>
#include <sstream>
#include <string>

namespace cif
{

/** A job in up to three dimensions (x fastest; unused axes have size 1).
 *
 * The input buffer is a contiguous box of `inputSize` samples. The output
 * buffer is the contiguous box [outputStart, outputStart + outputSize) of
 * the same grid, which must lie inside the input box. A neighbour outside the
 * input box takes the value of the nearest sample inside it (clamp-to-edge,
 * itk::ZeroFluxNeumannBoundaryCondition applied at the input's buffered
 * region, as ITK's neighbourhood filters do), so every radius is well
 * defined, also radii larger than the image. */
struct ClampedNeighborhoodGeometry
{
  std::int64_t inputSize[3]{ 1, 1, 1 };
  std::int64_t outputStart[3]{ 0, 0, 0 };
  std::int64_t outputSize[3]{ 1, 1, 1 };

  std::int64_t
  InputCount() const
  {
    return inputSize[0] * inputSize[1] * inputSize[2];
  }
  std::int64_t
  OutputCount() const
  {
    return outputSize[0] * outputSize[1] * outputSize[2];
  }
  /** True when the output box is the whole input box (needed for iterations > 1). */
  bool
  OutputIsWholeInput() const
  {
    for (int a = 0; a < 3; ++a)
    {
      if (outputStart[a] != 0 || outputSize[a] != inputSize[a])
      {
        return false;
      }
    }
    return true;
  }
};

/** Empty when the geometry is valid, else why not. */
inline std::string
ValidateClampedNeighborhoodGeometry(const ClampedNeighborhoodGeometry & g)
{
  std::ostringstream why;
  for (int a = 0; a < 3; ++a)
  {
    if (g.inputSize[a] < 1 || g.outputSize[a] < 1)
    {
      why << "empty extent on axis " << a << " (input " << g.inputSize[a] << ", output " << g.outputSize[a] << ")";
      return why.str();
    }
    if (g.outputStart[a] < 0 || g.outputStart[a] + g.outputSize[a] > g.inputSize[a])
    {
      why << "the output box lies outside the input buffer on axis " << a;
      return why.str();
    }
  }
  return {};
}

} // namespace cif

#endif
