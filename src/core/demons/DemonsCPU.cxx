/*=========================================================================
 *  CudaImageFilters: the demons core's job check, kernels and CPU solver.
 *=========================================================================*/
#include "cif/DiscreteGaussian.h"
#include "cifDemonsPoint.h"
#include "cifParallelFor.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace cif
{

std::string
ValidateDemonsJob(const DemonsJob & job)
{
  if (job.dimension != 2 && job.dimension != 3)
  {
    return "the demons core takes 2 and 3 dimensions";
  }
  for (int a = 0; a < 3; ++a)
  {
    const bool used = a < job.dimension;
    if (job.size[a] < 1 || job.moving.size[a] < 1 || (!used && (job.size[a] != 1 || job.moving.size[a] != 1)))
    {
      return "the fixed and the moving image must hold pixels (sizes of at least 1; unused axes 1)";
    }
    if (used && !(job.spacing[a] > 0.0 && std::isfinite(job.spacing[a])))
    {
      return "the fixed image's spacing must be finite and positive";
    }
    if (used && (!std::isfinite(job.standardDeviations[a]) || job.standardDeviations[a] < 0.0 ||
                 !std::isfinite(job.updateStandardDeviations[a]) || job.updateStandardDeviations[a] < 0.0))
    {
      return "the standard deviations must be finite and at least 0";
    }
    if (!std::isfinite(job.origin[a]) || !std::isfinite(job.moving.origin[a]))
    {
      return "the images' origins must be finite";
    }
    for (int b = 0; b < 3; ++b)
    {
      if (!std::isfinite(job.indexToPoint[a][b]) || !std::isfinite(job.direction[a][b]) ||
          !std::isfinite(job.moving.pointToIndex[a][b]))
      {
        return "the images' directions must be finite";
      }
    }
  }
  if (!(job.maximumError > 0.0 && job.maximumError < 1.0))
  {
    return "the maximum error must lie in (0, 1)";
  }
  if (job.maximumKernelWidth < 1)
  {
    return "the maximum kernel width must be at least 1";
  }
  if (std::isnan(job.intensityDifferenceThreshold) || std::isnan(job.denominatorThreshold))
  {
    return "the thresholds must not be NaN";
  }
  if (job.variant == DemonsVariant::Diffeomorphic)
  {
    for (int a = 0; a < job.dimension; ++a)
    {
      if (job.size[a] < 2)
      {
        return "the diffeomorphic demons need at least 2 pixels along each axis of the fixed image (ITK's "
               "warped-image differences would read outside a single pixel)";
      }
      if (!(job.movingSpacing[a] > 0.0 && std::isfinite(job.movingSpacing[a])))
      {
        return "the moving image's spacing must be finite and positive";
      }
      for (int b = 0; b < 3; ++b)
      {
        if (!std::isfinite(job.pointToIndex[a][b]) || !std::isfinite(job.movingInverseDirection[a][b]))
        {
          return "the images' directions must be finite and invertible";
        }
      }
    }
    if (std::isnan(job.maximumUpdateStepLength) || std::isinf(job.maximumUpdateStepLength))
    {
      return "the maximum update step length must be finite (0 or less: ITK's automatic exponential)";
    }
    const int gradient = static_cast<int>(job.gradient);
    if (gradient < 0 || gradient > 3)
    {
      return "the gradient type must be 0 (symmetric), 1 (fixed), 2 (warped moving) or 3 (mapped moving)";
    }
  }
  return {};
}

namespace demons
{

std::vector<float>
SmoothingKernel(double standardDeviation, const DemonsJob & job)
{
  // ITK's NeighborhoodOperator computes the coefficients in double and
  // stores them as its pixel type
  const std::vector<double> coefficients =
    GaussianOperatorCoefficients(standardDeviation * standardDeviation, job.maximumError, job.maximumKernelWidth);
  return std::vector<float>(coefficients.begin(), coefficients.end());
}

unsigned
SquaringCount(const DemonsJob & job, double maximumSquaredNorm)
{
  // itk::Math::ln2
  constexpr double ln2 = 0.69314718055994530942;
  if (job.useFirstOrderExp)
  {
    return 0;
  }
  const double step = job.maximumUpdateStepLength;
  if (step > 0.0)
  {
    // DiffeomorphicDemonsRegistrationFilter::ApplyUpdate; Math::Ceil as
    // ITK rounds it on x86-64: -((round half even of -0.5 - 2x) >> 1)
    const double count = 2.0 + std::log(step) / ln2;
    if (!(count > 0.0))
    {
      return 0;
    }
    return static_cast<unsigned>(-(static_cast<std::int64_t>(std::llrint(-0.5 - 2.0 * count)) >> 1));
  }
  // ExponentialDisplacementFieldImageFilter's automatic count (at most
  // 2000, the filter's setting)
  double smallest = job.spacing[0];
  for (int a = 1; a < job.dimension; ++a)
  {
    if (job.spacing[a] < smallest)
    {
      smallest = job.spacing[a];
    }
  }
  const double norm = maximumSquaredNorm / (smallest * smallest);
  const double count = norm > 0 ? 2.0 + 0.5 * std::log(norm) / ln2 : std::numeric_limits<double>::min();
  if (!(count >= 0.0))
  {
    return 0;
  }
  return std::min(static_cast<unsigned>(count + 1.0), 2000u);
}

void
CheckSumsFinite(const DemonsSums & sums)
{
  if (!std::isfinite(sums.sumOfSquaredDifference) || !std::isfinite(sums.sumOfSquaredChange))
  {
    throw std::runtime_error("the demons iteration met NaN or infinite values: the fixed image, the moving image or "
                             "the initial displacement field holds them");
  }
}

namespace
{

/** Pixels per piece of the sums (fixed pieces: the sums do not depend on
 * the number of threads). */
constexpr std::int64_t kPiece = 4096;

template <int D>
class DemonsCPU final : public DemonsSolver
{
public:
  DemonsCPU(const DemonsJob & job, const float * fixed, const float * moving, const float * initialField, int threads)
    : m_Job(job)
    , m_Fixed(fixed)
    , m_Moving(moving)
    , m_Threads(std::max(1, threads))
  {
    m_Count = job.size[0] * job.size[1] * job.size[2];
    m_Field.assign(static_cast<std::size_t>(m_Count) * D, 0.0f);
    if (initialField != nullptr)
    {
      std::copy(initialField, initialField + m_Count * D, m_Field.begin());
    }
    m_Scratch.resize(m_Field.size());
    for (int a = 0; a < D; ++a)
    {
      if (job.smoothField)
      {
        m_FieldKernels[a] = SmoothingKernel(job.standardDeviations[a], job);
      }
      if (job.smoothUpdate)
      {
        m_UpdateKernels[a] = SmoothingKernel(job.updateStandardDeviations[a], job);
      }
    }
    m_Diffeomorphic = job.variant == DemonsVariant::Diffeomorphic;
    if (job.smoothUpdate || m_Diffeomorphic)
    {
      m_Update.resize(m_Field.size());
    }
    if (m_Diffeomorphic)
    {
      m_Warped.resize(static_cast<std::size_t>(m_Count));
      m_Exponential.resize(m_Field.size());
    }
    m_Normalizer = m_Diffeomorphic ? EsmNormalizer<D>(job) : Normalizer<D>(job);
  }

  DemonsSums
  Iterate() override
  {
    if (m_Diffeomorphic)
    {
      return this->IterateDiffeomorphic();
    }
    if (m_Job.smoothField)
    {
      this->Smooth(m_Field, m_FieldKernels);
    }
    const bool       inPlace = !m_Job.smoothUpdate;
    float *          updates = inPlace ? nullptr : m_Update.data();
    const DemonsSums total = this->SumUpdates(
      [&](std::int64_t i)
      {
        float *         u = m_Field.data() + i * D;
        float           update[D];
        const PixelSums s = UpdateAt<D>(m_Job, m_Normalizer, m_Fixed, m_Moving, u, i, update);
        for (int a = 0; a < D; ++a)
        {
          if (inPlace)
          {
            // the update reads the field at its own pixel only
            u[a] += update[a];
          }
          else
          {
            updates[i * D + a] = update[a];
          }
        }
        return s;
      });
    if (!inPlace)
    {
      this->Smooth(m_Update, m_UpdateKernels);
      ParallelFor(m_Count * D,
                  m_Threads,
                  [&](std::int64_t first, std::int64_t last)
                  {
                    for (std::int64_t i = first; i < last; ++i)
                    {
                      m_Field[static_cast<std::size_t>(i)] += m_Update[static_cast<std::size_t>(i)];
                    }
                  });
    }
    CheckSumsFinite(total);
    return total;
  }

  void
  ReadField(float * field, bool onDevice) const override
  {
    if (onDevice)
    {
      throw std::invalid_argument("the CPU demons solver writes its field to host memory");
    }
    std::copy(m_Field.begin(), m_Field.end(), field);
  }

private:
  /** The update of every pixel (`update` returns a pixel's sums and writes
   * its update), summed in fixed pieces. */
  template <typename TUpdate>
  DemonsSums
  SumUpdates(TUpdate && update)
  {
    const std::int64_t      pieces = (m_Count + kPiece - 1) / kPiece;
    std::vector<DemonsSums> partial(static_cast<std::size_t>(pieces));
    ParallelFor(pieces,
                m_Threads,
                [&](std::int64_t first, std::int64_t last)
                {
                  for (std::int64_t piece = first; piece < last; ++piece)
                  {
                    DemonsSums &       sums = partial[static_cast<std::size_t>(piece)];
                    const std::int64_t end = std::min(m_Count, (piece + 1) * kPiece);
                    for (std::int64_t i = piece * kPiece; i < end; ++i)
                    {
                      const PixelSums s = update(i);
                      if (s.counted)
                      {
                        sums.sumOfSquaredDifference += s.squaredDifference;
                        sums.pixelsProcessed += 1;
                        sums.sumOfSquaredChange += s.squaredChange;
                      }
                    }
                  }
                });
    DemonsSums total;
    for (const DemonsSums & s : partial)
    {
      total.sumOfSquaredDifference += s.sumOfSquaredDifference;
      total.pixelsProcessed += s.pixelsProcessed;
      total.sumOfSquaredChange += s.sumOfSquaredChange;
    }
    return total;
  }

  /** sample(i) for every sample i of the fixed grid, on the threads. */
  template <typename TSample>
  void
  ForEachSample(TSample && sample)
  {
    ParallelFor(m_Count,
                m_Threads,
                [&](std::int64_t first, std::int64_t last)
                {
                  for (std::int64_t i = first; i < last; ++i)
                  {
                    sample(i);
                  }
                });
  }

  /** One diffeomorphic iteration (cif/Demons.h, steps 1 to 6). */
  DemonsSums
  IterateDiffeomorphic()
  {
    const float * field = m_Field.data();
    float *       warped = m_Warped.data();
    ForEachSample([&](std::int64_t i) { warped[i] = WarpedMovingAt<D>(m_Job, m_Moving, field, i); });
    float *          updates = m_Update.data();
    const DemonsSums total = this->SumUpdates(
      [&](std::int64_t i)
      { return EsmUpdateAt<D>(m_Job, m_Normalizer, m_Fixed, warped, m_Moving, field, i, updates + i * D); });
    if (m_Job.smoothUpdate)
    {
      this->Smooth(m_Update, m_UpdateKernels);
    }
    double largest = 0.0;
    if (NeedsMaximumNorm(m_Job))
    {
      for (std::int64_t i = 0; i < m_Count; ++i)
      {
        largest = std::max(largest, SquaredNorm<D>(m_Update.data(), i));
      }
    }
    const unsigned       squarings = SquaringCount(m_Job, largest);
    std::vector<float> * exponential = &m_Update;
    if (squarings > 0)
    {
      // ExponentialDisplacementFieldImageFilter: u / 2^n in double, then
      // n times E = E + E o (Id + E)
      const double divisor = std::ldexp(1.0, static_cast<int>(squarings));
      for (std::size_t k = 0; k < m_Update.size(); ++k)
      {
        m_Exponential[k] = static_cast<float>(static_cast<double>(m_Update[k]) / divisor);
      }
      for (unsigned n = 0; n < squarings; ++n)
      {
        const float * e = m_Exponential.data();
        float *       out = m_Scratch.data();
        ForEachSample([&](std::int64_t i) { WarpVectorAddAt<D>(m_Job, e, e, e, out, i); });
        m_Exponential.swap(m_Scratch);
      }
      exponential = &m_Exponential;
    }
    // the composition u = u o (Id + E) + E
    {
      const float * e = exponential->data();
      float *       out = m_Scratch.data();
      ForEachSample([&](std::int64_t i) { WarpVectorAddAt<D>(m_Job, field, e, e, out, i); });
      m_Field.swap(m_Scratch);
    }
    if (m_Job.smoothField)
    {
      this->Smooth(m_Field, m_FieldKernels);
    }
    CheckSumsFinite(total);
    return total;
  }

  /** Passes along x, y (and z), each from `data` into the scratch buffer,
   * which then becomes `data`. */
  void
  Smooth(std::vector<float> & data, const std::vector<float> (&kernels)[3])
  {
    for (int axis = 0; axis < D; ++axis)
    {
      const Kernel kernel{ kernels[axis].data(), static_cast<int>(kernels[axis].size()) };
      const float * in = data.data();
      float *       out = m_Scratch.data();
      ForEachSample([&](std::int64_t i) { SmoothSample<D>(in, out, m_Job.size, axis, kernel, i); });
      data.swap(m_Scratch);
    }
  }

  DemonsJob          m_Job;
  const float *      m_Fixed;
  const float *      m_Moving;
  int                m_Threads;
  std::int64_t       m_Count{ 0 };
  double             m_Normalizer{ 1 };
  std::vector<float> m_Field;
  std::vector<float> m_Scratch;
  std::vector<float> m_Update;
  std::vector<float> m_Warped;
  std::vector<float> m_Exponential;
  bool               m_Diffeomorphic{ false };
  std::vector<float> m_FieldKernels[3];
  std::vector<float> m_UpdateKernels[3];
};

} // namespace
} // namespace demons

std::unique_ptr<DemonsSolver>
MakeDemonsSolverCPU(const DemonsJob & job, const float * fixed, const float * moving, const float * initialField,
                    int numberOfThreads)
{
  const std::string problem = ValidateDemonsJob(job);
  if (!problem.empty())
  {
    throw std::invalid_argument(problem);
  }
  if (job.dimension == 2)
  {
    return std::make_unique<demons::DemonsCPU<2>>(job, fixed, moving, initialField, numberOfThreads);
  }
  return std::make_unique<demons::DemonsCPU<3>>(job, fixed, moving, initialField, numberOfThreads);
}

} // namespace cif
