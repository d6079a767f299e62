/*=========================================================================
 *  CudaImageFilters: the separable passes of a box-filter job (private to
 *  src/, shared by the CPU core and the CUDA launcher).
 *=========================================================================*/
#ifndef cifBoxPlan_h
#define cifBoxPlan_h

#include "cif/BoxFilters.h"

#include <cstdint>
#include <vector>

namespace cif
{

/** One pass along `axis`: the source has srcSize samples; the pass produces
 * the same extent except along `axis`, where it produces `count` samples, the
 * i-th centred on source index start + i, with a window of 2 radius + 1
 * samples clamped to [0, srcSize[axis] - 1]. */
struct BoxPass
{
  int          axis{ 0 };
  std::int64_t srcSize[3]{ 1, 1, 1 };
  std::int64_t start{ 0 };
  std::int64_t count{ 1 };
  int          radius{ 0 };

  std::int64_t
  DstSize(int a) const
  {
    return a == axis ? count : srcSize[a];
  }
  std::int64_t
  DstCount() const
  {
    return DstSize(0) * DstSize(1) * DstSize(2);
  }
};

/** The passes of a job: one per axis that has a radius or is cropped (x, then
 * y, then z), at least one. Each pass crops its own axis only, so the window
 * of a pass always sees the whole input extent along its axis. */
inline std::vector<BoxPass>
PlanBoxPasses(const BoxGeometry & g)
{
  std::vector<BoxPass> passes;
  std::int64_t         size[3] = { g.inputSize[0], g.inputSize[1], g.inputSize[2] };
  for (int a = 0; a < 3; ++a)
  {
    const bool cropped = g.outputStart[a] != 0 || g.outputSize[a] != g.inputSize[a];
    if (g.radius[a] == 0 && !cropped && !(a == 2 && passes.empty()))
    {
      continue;
    }
    BoxPass p;
    p.axis = a;
    for (int b = 0; b < 3; ++b)
    {
      p.srcSize[b] = size[b];
    }
    p.start = g.outputStart[a];
    p.count = g.outputSize[a];
    p.radius = g.radius[a];
    passes.push_back(p);
    size[a] = g.outputSize[a];
  }
  return passes;
}

} // namespace cif

#endif
