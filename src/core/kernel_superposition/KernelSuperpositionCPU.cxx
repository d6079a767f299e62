/*=========================================================================
 *  CudaImageFilters: CPU core of the spatially varying Gaussian kernel
 *  superposition (seed paper 004).
 *
 *  Scatter, as the seed's CPU reference, made parallel without races: the
 *  output is cut into slabs of planes along the slowest used axis; each
 *  thread owns one slab at a time (a private double buffer), visits every
 *  input pixel whose kernel reaches the slab, evaluates its 1D weights once
 *  (std::erf / std::erfc in double) and adds v w_z w_y w_x to the slab.
 *  A pixel near a slab's edge is visited by two slabs, so slabs are made
 *  several radii thick.
 *=========================================================================*/
#include "cif/KernelSuperposition.h"
#include "cifKernelSuperpositionMath.h"
#include "cifParallelFor.h"
#include "cifPixelLists.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace cif
{

const char *
ToString(KernelSuperpositionMethod method)
{
  switch (method)
  {
    case KernelSuperpositionMethod::Automatic:
      return "automatic";
    case KernelSuperpositionMethod::Scatter:
      return "scatter";
    case KernelSuperpositionMethod::ScatterWarpSynchronous:
      return "scatter-warp-synchronous";
    case KernelSuperpositionMethod::ScatterGlobalAtomics:
      return "scatter-global-atomics";
    case KernelSuperpositionMethod::Gather:
      return "gather";
  }
  return "unknown";
}

bool
KernelSuperpositionMethodFromString(const std::string & text, KernelSuperpositionMethod & method)
{
  for (auto m : { KernelSuperpositionMethod::Automatic,
                  KernelSuperpositionMethod::Scatter,
                  KernelSuperpositionMethod::ScatterWarpSynchronous,
                  KernelSuperpositionMethod::ScatterGlobalAtomics,
                  KernelSuperpositionMethod::Gather })
  {
    if (text == ToString(m))
    {
      method = m;
      return true;
    }
  }
  if (text == "auto")
  {
    method = KernelSuperpositionMethod::Automatic;
    return true;
  }
  return false;
}

int
KernelSuperpositionRadiusOf(double sigmaInSamples, double cutoff)
{
  return ks::RadiusOf(sigmaInSamples, cutoff, KernelSuperpositionMaxRadius);
}

std::string
ValidateKernelSuperpositionJob(const KernelSuperpositionGeometry & g, const KernelSuperpositionParameters & p)
{
  std::ostringstream why;
  if (g.dimension < 1 || g.dimension > 3)
  {
    why << "the cores handle 1 to 3 dimensions, not " << g.dimension;
    return why.str();
  }
  for (int a = 0; a < 3; ++a)
  {
    if (g.inputSize[a] < 1 || g.outputSize[a] < 1)
    {
      why << "empty extent on axis " << a << " (input " << g.inputSize[a] << ", output " << g.outputSize[a] << ")";
      return why.str();
    }
    if (a >= g.dimension && (g.inputSize[a] != 1 || g.outputSize[a] != 1 || g.outputStart[a] != 0))
    {
      why << "axis " << a << " is beyond the dimension " << g.dimension << " but has size " << g.inputSize[a];
      return why.str();
    }
  }
  if (!(p.cutoff > 0.0) || !(p.cutoff <= 100.0))
  {
    why << "the cut-off must be positive and at most 100 sigmas, not " << p.cutoff;
    return why.str();
  }
  for (int a = 0; a < g.dimension; ++a)
  {
    if (!(p.pixelsPerUnit[a] > 0.0) || !std::isfinite(p.pixelsPerUnit[a]))
    {
      why << "the samples per physical unit on axis " << a << " (1 / spacing) must be positive and finite, not "
          << p.pixelsPerUnit[a];
      return why.str();
    }
  }
  return {};
}

void
ThrowBadKernelSuperpositionSigma(std::int64_t                          pixel,
                                 int                                   axis,
                                 double                                sigma,
                                 double                                samples,
                                 const KernelSuperpositionParameters & p)
{
  std::ostringstream why;
  why << "sigma";
  if (axis >= 0)
  {
    why << " (axis " << axis << " map)";
  }
  why << " at pixel " << pixel << " is " << sigma;
  if (std::isfinite(sigma) && sigma >= 0)
  {
    why << ", whose radius ceil(" << p.cutoff << " x " << samples << " samples) exceeds the largest accepted, "
        << KernelSuperpositionMaxRadius;
  }
  else
  {
    why << "; sigmas must be finite and not negative";
  }
  throw std::invalid_argument(why.str());
}

KernelSuperpositionGeometry
PaddedKernelSuperpositionGeometry(int dimension, const std::int64_t inputSize[3], const KernelSuperpositionRadius & r)
{
  KernelSuperpositionGeometry g;
  g.dimension = dimension;
  for (int a = 0; a < 3; ++a)
  {
    g.inputSize[a] = inputSize[a];
    const std::int64_t pad = a < dimension ? r.radius[a] : 0;
    g.outputStart[a] = -pad;
    g.outputSize[a] = inputSize[a] + 2 * pad;
  }
  return g;
}

template <typename TSigma>
KernelSuperpositionRadius
KernelSuperpositionLargestRadiusCPU(const SigmaMaps<TSigma> &             sigma,
                                    const KernelSuperpositionGeometry &   g,
                                    const KernelSuperpositionParameters & p,
                                    int                                   numberOfThreads)
{
  const std::string why = ValidateKernelSuperpositionJob(g, p);
  if (!why.empty())
  {
    throw std::invalid_argument(why);
  }
  if (sigma.axis[0] == nullptr)
  {
    throw std::invalid_argument("no sigma map");
  }
  const bool         perAxis = sigma.axis[1] != nullptr || sigma.axis[2] != nullptr;
  const std::int64_t count = g.InputCount();
  std::mutex         mutex;
  int                largest[3] = { 0, 0, 0 };
  std::int64_t       firstBad = std::numeric_limits<std::int64_t>::max();
  int                badAxis = 0;
  ParallelFor(count,
              numberOfThreads,
              [&](std::int64_t first, std::int64_t last)
              {
                int          local[3] = { 0, 0, 0 };
                std::int64_t bad = std::numeric_limits<std::int64_t>::max();
                int          axisOfBad = 0;
                for (int a = 0; a < g.dimension; ++a)
                {
                  const TSigma * s = sigma.Get(a);
                  for (std::int64_t i = first; i < last && i < bad; ++i)
                  {
                    const int r = ks::RadiusOf(
                      static_cast<double>(s[i]) * p.pixelsPerUnit[a], p.cutoff, KernelSuperpositionMaxRadius);
                    if (r < 0)
                    {
                      bad = i;
                      axisOfBad = a;
                      break;
                    }
                    local[a] = std::max(local[a], r);
                  }
                }
                std::lock_guard<std::mutex> lock(mutex);
                for (int a = 0; a < 3; ++a)
                {
                  largest[a] = std::max(largest[a], local[a]);
                }
                if (bad < firstBad)
                {
                  firstBad = bad;
                  badAxis = axisOfBad;
                }
              });
  if (firstBad != std::numeric_limits<std::int64_t>::max())
  {
    const TSigma v = sigma.Get(badAxis)[firstBad];
    ThrowBadKernelSuperpositionSigma(
      firstBad, perAxis ? badAxis : -1, static_cast<double>(v), static_cast<double>(v) * p.pixelsPerUnit[badAxis], p);
  }
  KernelSuperpositionRadius r;
  for (int a = 0; a < 3; ++a)
  {
    r.radius[a] = a < g.dimension ? largest[a] : 0;
  }
  return r;
}

namespace
{

/** One pixel's weights along one axis: w[d] for d = 0..r (symmetric). */
struct AxisWeights
{
  int                 r{ 0 };
  std::vector<double> w;

  void
  Set(double s, double cutoff, CutoffMass mass)
  {
    r = ks::RadiusOf(s, cutoff, KernelSuperpositionMaxRadius);
    w.resize(static_cast<std::size_t>(r) + 1);
    if (r == 0)
    {
      w[0] = 1.0; // s = 0 (or so small that ceil(cutoff s) = 0): the identity
      return;
    }
    // w(d) = (E(d) - E(d - 1)) / 2 with E(d) = erf((d + 1/2) k), E(-1) = -E(0):
    // one erf per offset; in double the differences lose at most a few
    // 1e-17 absolute, far below the tolerance of any sum of weights.
    const double k = ks::InverseWidth(s);
    double       previous = std::erf(0.5 * k);
    w[0] = previous;
    for (int d = 1; d <= r; ++d)
    {
      const double e = std::erf((d + 0.5) * k);
      w[static_cast<std::size_t>(d)] = 0.5 * (e - previous);
      previous = e;
    }
    if (mass == CutoffMass::Renormalize)
    {
      const double norm = 1.0 / previous; // erf((r + 1/2) k), the mass within the cut-off
      for (double & v : w)
      {
        v *= norm;
      }
    }
  }
};

} // namespace

template <typename TIn, typename TSigma, typename TOut>
void
KernelSuperpositionCPU(const TIn *                           input,
                       const SigmaMaps<TSigma> &             sigma,
                       TOut *                                output,
                       const KernelSuperpositionGeometry &   g,
                       const KernelSuperpositionParameters & p,
                       int                                   numberOfThreads,
                       const KernelSuperpositionProgress &   progress)
{
  const KernelSuperpositionRadius largest = KernelSuperpositionLargestRadiusCPU(sigma, g, p, numberOfThreads);

  // Roles: axes (u, v) of a plane and the slab axis c (the slowest used
  // axis); unused roles are size-1 axes with radius 0.
  const int  c = g.dimension - 1;
  int        u = 0, v = 1;
  const int  others[2][2] = { { 1, 2 }, { 0, 2 } };
  const bool hasU = g.dimension >= 2;
  const bool hasV = g.dimension >= 3;
  if (!hasU)
  {
    u = others[0][0];
    v = others[0][1];
  }
  else if (!hasV)
  {
    u = others[1][0];
    v = others[1][1];
  }
  const std::int64_t inU = g.inputSize[u], inV = g.inputSize[v], inC = g.inputSize[c];
  const std::int64_t outU = g.outputSize[u], outV = g.outputSize[v], outC = g.outputSize[c];
  const std::int64_t startU = g.outputStart[u], startV = g.outputStart[v], startC = g.outputStart[c];
  const std::int64_t inStride[3] = { 1, g.inputSize[0], g.inputSize[0] * g.inputSize[1] };
  const std::int64_t outStride[3] = { 1, g.outputSize[0], g.outputSize[0] * g.outputSize[1] };
  const std::int64_t outPlane = outU * outV; // output samples per plane of the slab axis
  const int          rc = largest.radius[c];

  // Slabs: about one radius thick or more (a pixel's weights are evaluated
  // once per slab it reaches, so thinner slabs repeat erf work), two per
  // thread where the image allows, and at most 32 MiB of buffer each.
  const std::int64_t threads = std::max(1, numberOfThreads);
  std::int64_t       thickness = std::max<std::int64_t>({ 1, rc, (outC + 2 * threads - 1) / (2 * threads) });
  thickness = std::min(thickness, std::max<std::int64_t>(1, (std::int64_t{ 4 } << 20) / outPlane));
  const std::int64_t slabs = (outC + thickness - 1) / thickness;

  std::atomic<std::int64_t> done{ 0 };
  std::mutex                progressMutex;

  ParallelFor(slabs,
              numberOfThreads,
              [&](std::int64_t firstSlab, std::int64_t lastSlab)
              {
                std::vector<double> buffer;
                AxisWeights         wu, wv, wc;
                for (std::int64_t slab = firstSlab; slab < lastSlab; ++slab)
                {
                  const std::int64_t o0 = slab * thickness;
                  const std::int64_t o1 = std::min(outC, o0 + thickness); // output planes [o0, o1)
                  buffer.assign(static_cast<std::size_t>((o1 - o0) * outPlane), 0.0);
                  // input planes whose kernels can reach [o0, o1)
                  const std::int64_t i0 = std::max<std::int64_t>(0, startC + o0 - rc);
                  const std::int64_t i1 = std::min<std::int64_t>(inC, startC + o1 + rc);
                  for (std::int64_t ic = i0; ic < i1; ++ic)
                  {
                    for (std::int64_t iv = 0; iv < inV; ++iv)
                    {
                      for (std::int64_t iu = 0; iu < inU; ++iu)
                      {
                        const std::int64_t index = iu * inStride[u] + iv * inStride[v] + ic * inStride[c];
                        const double       value = static_cast<double>(input[index]);
                        if (value == 0.0)
                        {
                          continue; // contributes nothing (a NaN is not skipped)
                        }
                        const double sc = static_cast<double>(sigma.Get(c)[index]) * p.pixelsPerUnit[c];
                        const int    rcPixel = KernelSuperpositionRadiusOf(sc, p.cutoff);
                        // output planes of this slab that the pixel reaches
                        const std::int64_t oc0 = std::max(o0, ic - rcPixel - startC);
                        const std::int64_t oc1 = std::min(o1, ic + rcPixel + 1 - startC);
                        if (oc0 >= oc1)
                        {
                          continue;
                        }
                        wc.Set(sc, p.cutoff, p.cutoffMass);
                        const double su = hasU ? static_cast<double>(sigma.Get(u)[index]) * p.pixelsPerUnit[u] : 0.0;
                        const double sv = hasV ? static_cast<double>(sigma.Get(v)[index]) * p.pixelsPerUnit[v] : 0.0;
                        wu.Set(su, p.cutoff, p.cutoffMass);
                        wv.Set(sv, p.cutoff, p.cutoffMass);
                        // output ranges along u and v (clipped to the output box)
                        const std::int64_t ou0 = std::max<std::int64_t>(0, iu - wu.r - startU);
                        const std::int64_t ou1 = std::min<std::int64_t>(outU, iu + wu.r + 1 - startU);
                        const std::int64_t ov0 = std::max<std::int64_t>(0, iv - wv.r - startV);
                        const std::int64_t ov1 = std::min<std::int64_t>(outV, iv + wv.r + 1 - startV);
                        for (std::int64_t oc = oc0; oc < oc1; ++oc)
                        {
                          const double a = value * wc.w[static_cast<std::size_t>(std::abs(oc + startC - ic))];
                          double *     planeOut = buffer.data() + (oc - o0) * outPlane;
                          for (std::int64_t ov = ov0; ov < ov1; ++ov)
                          {
                            const double b = a * wv.w[static_cast<std::size_t>(std::abs(ov + startV - iv))];
                            double *     row = planeOut + ov * outU;
                            for (std::int64_t ou = ou0; ou < ou1; ++ou)
                            {
                              row[ou] += b * wu.w[static_cast<std::size_t>(std::abs(ou + startU - iu))];
                            }
                          }
                        }
                      }
                    }
                  }
                  // write the slab (u fastest in the buffer)
                  for (std::int64_t oc = o0; oc < o1; ++oc)
                  {
                    for (std::int64_t ov = 0; ov < outV; ++ov)
                    {
                      const double * row = buffer.data() + (oc - o0) * outPlane + ov * outU;
                      for (std::int64_t ou = 0; ou < outU; ++ou)
                      {
                        output[ou * outStride[u] + ov * outStride[v] + oc * outStride[c]] = static_cast<TOut>(row[ou]);
                      }
                    }
                  }
                  const std::int64_t finished = ++done;
                  if (progress)
                  {
                    std::lock_guard<std::mutex> lock(progressMutex);
                    progress(static_cast<double>(finished) / static_cast<double>(slabs));
                  }
                }
              });
}

#define CIF_INSTANTIATE_KS_CPU(TIn, TSigma, TOut)                                                                      \
  template void KernelSuperpositionCPU<TIn, TSigma, TOut>(const TIn *,                                                 \
                                                          const SigmaMaps<TSigma> &,                                   \
                                                          TOut *,                                                      \
                                                          const KernelSuperpositionGeometry &,                         \
                                                          const KernelSuperpositionParameters &,                       \
                                                          int,                                                         \
                                                          const KernelSuperpositionProgress &);
#define CIF_INSTANTIATE_KS_CPU_IN(TIn)                                                                                 \
  CIF_INSTANTIATE_KS_CPU(TIn, float, float)                                                                            \
  CIF_INSTANTIATE_KS_CPU(TIn, float, double)                                                                           \
  CIF_INSTANTIATE_KS_CPU(TIn, double, float)                                                                           \
  CIF_INSTANTIATE_KS_CPU(TIn, double, double)
CIF_KERNEL_SUPERPOSITION_CPU_PIXELS(CIF_INSTANTIATE_KS_CPU_IN)

template KernelSuperpositionRadius
KernelSuperpositionLargestRadiusCPU<float>(const SigmaMaps<float> &,
                                           const KernelSuperpositionGeometry &,
                                           const KernelSuperpositionParameters &,
                                           int);
template KernelSuperpositionRadius
KernelSuperpositionLargestRadiusCPU<double>(const SigmaMaps<double> &,
                                            const KernelSuperpositionGeometry &,
                                            const KernelSuperpositionParameters &,
                                            int);

} // namespace cif
