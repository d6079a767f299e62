/*=========================================================================
 *  CudaImageFilters: the seed's block mode of GRBF interpolation on the CPU
 *  (see GrbfBlockJob in cifGaussianRBF.h): every block's dense system solved
 *  by Eigen's LU with partial pivoting in float32 or double, then each
 *  output evaluated from its one or two blocks per axis, blended across
 *  their overlap.
 *=========================================================================*/
#include "cif/GaussianRBF.h"
#include "cifGaussianRBFDetail.h"
#include "cifParallelFor.h"
#include "cifPixelLists.h"

#include <Eigen/Dense>

#include <cmath>
#include <stdexcept>
#include <vector>

namespace cif
{

std::string
ValidateGrbfBlockJob(const GrbfBlockJob & job)
{
  if (job.dimension < 1 || job.dimension > 3)
  {
    return "the dimension must be 1, 2 or 3";
  }
  std::int64_t nodes = 1;
  for (int a = 0; a < job.dimension; ++a)
  {
    if (job.inputSize[a] < 1 || job.outputSize[a] < 1)
    {
      return "the input and output sizes must be at least 1 on every axis";
    }
    if (!(job.sigma[a] > 0.0) || !std::isfinite(job.sigma[a]))
    {
      return "sigma must be positive and finite on every axis";
    }
    if (!std::isfinite(job.first[a]) || !std::isfinite(job.step[a]))
    {
      return "the output positions must be finite";
    }
    if (job.blockSize[a] < 1)
    {
      return "the block size must be at least 1 on every axis";
    }
    const int B = static_cast<int>(std::min<std::int64_t>(job.blockSize[a], job.inputSize[a]));
    if (job.overlap[a] < 0 || 2 * job.overlap[a] > B)
    {
      return "the overlap must be between 0 and half the block size on every axis (axis " + std::to_string(a) +
             ": overlap " + std::to_string(job.overlap[a]) + ", block " + std::to_string(B) + ")";
    }
    nodes *= B;
  }
  if (nodes > 8192)
  {
    return "a block holds " + std::to_string(nodes) +
           " nodes; block mode solves a dense system of that order and takes at most 8192";
  }
  if (!(job.outputMin <= job.outputMax))
  {
    return "outputMin must not exceed outputMax";
  }
  return {};
}

template <typename TAcc>
std::vector<TAcc>
GrbfBlockGram(const GrbfBlockJob & job, const GrbfBlockAxis ax[3])
{
  const int         N = ax[0].B * ax[1].B * ax[2].B;
  std::vector<TAcc> gram(static_cast<std::size_t>(N) * N);
  auto              node = [&](int i, int a)
  { return a == 0 ? i % ax[0].B : (a == 1 ? (i / ax[0].B) % ax[1].B : i / (ax[0].B * ax[1].B)); };
  for (int j = 0; j < N; ++j)
  {
    for (int i = 0; i < N; ++i)
    {
      double e = 0;
      for (int a = 0; a < job.dimension; ++a)
      {
        const double d = static_cast<double>(node(i, a) - node(j, a));
        e += d * d / (2.0 * job.sigma[a] * job.sigma[a]);
      }
      gram[static_cast<std::size_t>(j) * N + i] = static_cast<TAcc>(std::exp(-e));
    }
  }
  return gram;
}
template std::vector<float>
GrbfBlockGram<float>(const GrbfBlockJob &, const GrbfBlockAxis[3]);
template std::vector<double>
GrbfBlockGram<double>(const GrbfBlockJob &, const GrbfBlockAxis[3]);

namespace
{

/** Block b's nodes gathered into a column (x fastest within the block). */
template <typename T, typename TAcc>
void
GatherBlocks(const T * input, const GrbfBlockJob & job, const GrbfBlockAxis ax[3], Eigen::Matrix<TAcc, -1, -1> & F)
{
  const std::int64_t nx = job.inputSize[0], ny = job.dimension > 1 ? job.inputSize[1] : 1;
  int                b = 0;
  for (int kz = 0; kz < ax[2].count; ++kz)
  {
    for (int ky = 0; ky < ax[1].count; ++ky)
    {
      for (int kx = 0; kx < ax[0].count; ++kx, ++b)
      {
        const long long sx = GrbfBlockStart(ax[0], kx), sy = GrbfBlockStart(ax[1], ky), sz = GrbfBlockStart(ax[2], kz);
        int             i = 0;
        for (int z = 0; z < ax[2].B; ++z)
        {
          for (int y = 0; y < ax[1].B; ++y)
          {
            for (int x = 0; x < ax[0].B; ++x, ++i)
            {
              F(i, b) = static_cast<TAcc>(input[((sz + z) * ny + (sy + y)) * nx + (sx + x)]);
            }
          }
        }
      }
    }
  }
}

template <typename T, typename TAcc>
void
RunBlocks(const T * input, T * output, const GrbfBlockJob & job, int threads)
{
  using Matrix = Eigen::Matrix<TAcc, -1, -1>;
  GrbfBlockAxis ax[3];
  for (int a = 0; a < 3; ++a)
  {
    ax[a] = MakeGrbfBlockAxis(job, a);
  }
  const int N = ax[0].B * ax[1].B * ax[2].B;
  const int blocks = ax[0].count * ax[1].count * ax[2].count;

  const std::vector<TAcc> gram = GrbfBlockGram<TAcc>(job, ax);
  const Matrix            Phi = Eigen::Map<const Matrix>(gram.data(), N, N);
  Matrix                  F(N, blocks);
  GatherBlocks<T, TAcc>(input, job, ax, F);
  const Matrix A = Phi.partialPivLu().solve(F); // Gaussian elimination with partial pivoting

  const std::int64_t ox = job.outputSize[0], oy = job.outputSize[1], oz = job.outputSize[2];
  ParallelFor(
    oz * oy,
    threads,
    [&](std::int64_t begin, std::int64_t end)
    {
      std::vector<TAcc> g[3] = { std::vector<TAcc>(ax[0].B), std::vector<TAcc>(ax[1].B), std::vector<TAcc>(ax[2].B) };
      for (std::int64_t line = begin; line < end; ++line)
      {
        const std::int64_t z = line / oy, y = line % oy;
        for (std::int64_t x = 0; x < ox; ++x)
        {
          const std::int64_t idx[3] = { x, y, z };
          double             p[3];
          int                k[3][2] = {};
          double             w[3][2] = { { 1, 0 }, { 1, 0 }, { 1, 0 } };
          int                nk[3] = { 1, 1, 1 };
          bool               inside = true;
          for (int a = 0; a < 3; ++a)
          {
            p[a] = a < job.dimension ? job.first[a] + static_cast<double>(idx[a]) * job.step[a] : 0.0;
            if (a < job.dimension)
            {
              nk[a] = GrbfBlocksAt(ax[a], p[a], k[a], w[a]);
              inside = inside && nk[a] > 0;
            }
          }
          T & out = output[(z * oy + y) * ox + x];
          if (!inside)
          {
            out = static_cast<T>(job.defaultValue);
            continue;
          }
          double value = 0;
          for (int cz = 0; cz < nk[2]; ++cz)
          {
            for (int cy = 0; cy < nk[1]; ++cy)
            {
              for (int cx = 0; cx < nk[0]; ++cx)
              {
                const int kk[3] = { k[0][cx], k[1][cy], k[2][cz] };
                for (int a = 0; a < 3; ++a)
                {
                  const double s = static_cast<double>(GrbfBlockStart(ax[a], kk[a]));
                  for (int i = 0; i < ax[a].B; ++i)
                  {
                    const double d = a < job.dimension ? p[a] - (s + i) : 0.0;
                    g[a][i] = static_cast<TAcc>(
                      a < job.dimension ? std::exp(-d * d / (2.0 * job.sigma[a] * job.sigma[a])) : 1.0);
                  }
                }
                const int    b = (kk[2] * ax[1].count + kk[1]) * ax[0].count + kk[0];
                const TAcc * coefficients = A.data() + static_cast<std::int64_t>(b) * N;
                TAcc         sz = 0;
                int          i = 0;
                for (int iz = 0; iz < ax[2].B; ++iz)
                {
                  TAcc sy = 0;
                  for (int iy = 0; iy < ax[1].B; ++iy)
                  {
                    TAcc sx = 0;
                    for (int ix = 0; ix < ax[0].B; ++ix, ++i)
                    {
                      sx += g[0][ix] * coefficients[i];
                    }
                    sy += g[1][iy] * sx;
                  }
                  sz += g[2][iz] * sy;
                }
                value += w[0][cx] * w[1][cy] * w[2][cz] * static_cast<double>(sz);
              }
            }
          }
          out = GrbfConvertValue<T>(value, job.outputMin, job.outputMax, job.defaultValue);
        }
      }
    });
}

} // namespace

template <typename T>
void
GrbfBlockCPU(const T * input, T * output, const GrbfBlockJob & job, int numberOfThreads)
{
  const std::string problem = ValidateGrbfBlockJob(job);
  if (!problem.empty())
  {
    throw std::invalid_argument("GrbfBlockCPU: " + problem);
  }
  if (job.doublePrecision)
  {
    RunBlocks<T, double>(input, output, job, numberOfThreads);
  }
  else
  {
    RunBlocks<T, float>(input, output, job, numberOfThreads);
  }
}

#define CIF_INSTANTIATE_GRBF_BLOCK_CPU(T) template void GrbfBlockCPU<T>(const T *, T *, const GrbfBlockJob &, int);
CIF_GRBF_PIXELS(CIF_INSTANTIATE_GRBF_BLOCK_CPU)

} // namespace cif
