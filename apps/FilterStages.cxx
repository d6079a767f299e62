/*=========================================================================
 *  CudaImageFilters: the stages of the filtering and segmentation
 *  subcommands, and their --verify references (non-template parts).
 *=========================================================================*/
#include "FilterStages.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>

namespace cif
{
namespace tool
{

void
PrintStageCheck(const StageCheck & check)
{
  std::cout << "verify: " << check.Line << ": "
            << (!check.Checked ? "reported, not checked"
                : check.Passed ? "passed"
                               : "FAILED")
            << std::endl;
}

int
StageChecksStatus(const std::vector<StageCheck> & checks)
{
  for (const auto & check : checks)
  {
    if (check.Checked && !check.Passed)
    {
      PrintError("--verify: " + check.Line);
      return ExitFailure;
    }
  }
  return ExitSuccess;
}

std::string
IterationsToString(unsigned int iterations)
{
  return std::to_string(iterations) + (iterations == 1 ? " iteration" : " iterations");
}

void
UpdateReference(itk::ProcessObject * filter, const std::string & name)
{
  try
  {
    filter->Update();
  }
  catch (const itk::ExceptionObject & e)
  {
    throw RuntimeFailure("--verify: " + name + " failed: " + ExceptionMessage(e));
  }
}

namespace
{
std::vector<std::vector<MaskOffset>>
MakeSubRegions2D()
{
  // Nagao & Matsuyama's nine regions of the 5 x 5 window, in the order of
  // the class documentation: the centre square, the pentagons -y, +x, +y,
  // -x, the hexagons -x-y, +x-y, +x+y, -x+y.
  std::vector<std::vector<MaskOffset>> regions;
  std::vector<MaskOffset>              square;
  for (int dy = -1; dy <= 1; ++dy)
  {
    for (int dx = -1; dx <= 1; ++dx)
    {
      square.push_back({ { dx, dy, 0 } });
    }
  }
  regions.push_back(square);
  const int lists[8][7][2] = {
    { { -1, -2 }, { 0, -2 }, { 1, -2 }, { -1, -1 }, { 0, -1 }, { 1, -1 }, { 0, 0 } },   // -y
    { { 2, -1 }, { 2, 0 }, { 2, 1 }, { 1, -1 }, { 1, 0 }, { 1, 1 }, { 0, 0 } },         // +x
    { { -1, 2 }, { 0, 2 }, { 1, 2 }, { -1, 1 }, { 0, 1 }, { 1, 1 }, { 0, 0 } },         // +y
    { { -2, -1 }, { -2, 0 }, { -2, 1 }, { -1, -1 }, { -1, 0 }, { -1, 1 }, { 0, 0 } },   // -x
    { { -2, -2 }, { -1, -2 }, { -2, -1 }, { -1, -1 }, { 0, -1 }, { -1, 0 }, { 0, 0 } }, // -x-y
    { { 2, -2 }, { 1, -2 }, { 2, -1 }, { 1, -1 }, { 0, -1 }, { 1, 0 }, { 0, 0 } },      // +x-y
    { { 2, 2 }, { 1, 2 }, { 2, 1 }, { 1, 1 }, { 0, 1 }, { 1, 0 }, { 0, 0 } },           // +x+y
    { { -2, 2 }, { -1, 2 }, { -2, 1 }, { -1, 1 }, { 0, 1 }, { -1, 0 }, { 0, 0 } },      // -x+y
  };
  for (const auto & list : lists)
  {
    std::vector<MaskOffset> region;
    for (const auto & offset : list)
    {
      region.push_back({ { offset[0], offset[1], 0 } });
    }
    regions.push_back(region);
  }
  return regions;
}

std::vector<std::vector<MaskOffset>>
MakeSubRegions3D()
{
  // Six 3 x 3 x 3 half-masks: along axis a and direction s, the offsets
  // with component a in s {0, 1, 2} and the others in {-1, 0, 1}; in the
  // order +x, -x, +y, -y, +z, -z.
  std::vector<std::vector<MaskOffset>> regions;
  for (int axis = 0; axis < 3; ++axis)
  {
    for (const int sign : { 1, -1 })
    {
      std::vector<MaskOffset> region;
      for (int along = 0; along <= 2; ++along)
      {
        for (int u = -1; u <= 1; ++u)
        {
          for (int v = -1; v <= 1; ++v)
          {
            MaskOffset offset{ { 0, 0, 0 } };
            offset[axis] = sign * along;
            offset[(axis + 1) % 3] = u;
            offset[(axis + 2) % 3] = v;
            region.push_back(offset);
          }
        }
      }
      regions.push_back(region);
    }
  }
  return regions;
}
} // namespace

const std::vector<std::vector<MaskOffset>> &
RotatingMaskSubRegions(unsigned int dimension)
{
  static const std::vector<std::vector<MaskOffset>> regions2D = MakeSubRegions2D();
  static const std::vector<std::vector<MaskOffset>> regions3D = MakeSubRegions3D();
  return dimension == 2 ? regions2D : regions3D;
}

std::size_t
CountRotatingMaskFloatMismatches(const float *               in,
                                 const float *               result,
                                 const std::array<long, 3> & n,
                                 unsigned int                dimension,
                                 std::size_t &               firstBad)
{
  const auto &             regions = RotatingMaskSubRegions(dimension);
  const auto               rows = static_cast<itk::SizeValueType>(n[1] * n[2]);
  std::vector<std::size_t> badPerRow(rows, 0);
  std::vector<std::size_t> firstPerRow(rows, 0);
  auto                     threader = itk::MultiThreaderBase::New();
  threader->ParallelizeArray(
    0,
    rows,
    [&](itk::SizeValueType row)
    {
      const long               y = static_cast<long>(row) % n[1];
      const long               z = static_cast<long>(row) / n[1];
      std::vector<long double> dispersion(regions.size());
      std::vector<long double> mean(regions.size());
      for (long x = 0; x < n[0]; ++x)
      {
        const std::size_t index = static_cast<std::size_t>((z * n[1] + y) * n[0] + x);
        const long double centre = in[index];
        const double      out = result[index];
        bool              finite = std::isfinite(static_cast<double>(centre));
        long double       spread = 0.0L;
        for (std::size_t r = 0; r < regions.size(); ++r)
        {
          long double sum = 0.0L, squares = 0.0L;
          for (const auto & o : regions[r])
          {
            const float v = in[ClampedIndex(x + o[0], y + o[1], z + o[2], n)];
            finite = finite && std::isfinite(v);
            const long double d = static_cast<long double>(v) - centre;
            sum += d;
            squares += d * d;
            spread = std::max(spread, std::fabs(d));
          }
          const long double count = static_cast<long double>(regions[r].size());
          dispersion[r] = (squares - sum * sum / count) / count;
          mean[r] = centre + sum / count;
        }
        bool good = false;
        if (!finite)
        {
          good = std::isnan(out);
        }
        else
        {
          const long double smallest = *std::min_element(dispersion.begin(), dispersion.end());
          const long double slack = 1e-9L * spread * spread;
          for (std::size_t r = 0; r < regions.size() && !good; ++r)
          {
            // 2^-22 relative; the spacing of subnormal floats (a mean below FLT_MIN
            // rounds to a multiple of it); 1e-15 of the magnitudes for the double
            // arithmetic of the filter on differences to the centre
            const long double tolerance = std::ldexp(std::fabs(mean[r]), -22) +
                                          std::numeric_limits<float>::denorm_min() +
                                          1e-15L * (std::fabs(centre) + spread);
            good = dispersion[r] <= smallest + slack && std::fabs(static_cast<long double>(out) - mean[r]) <= tolerance;
          }
        }
        if (!good)
        {
          if (badPerRow[row] == 0)
          {
            firstPerRow[row] = index;
          }
          ++badPerRow[row];
        }
      }
    },
    nullptr);
  std::size_t bad = 0;
  for (itk::SizeValueType row = 0; row < rows; ++row)
  {
    if (badPerRow[row] != 0 && bad == 0)
    {
      firstBad = firstPerRow[row];
    }
    bad += badPerRow[row];
  }
  return bad;
}

} // namespace tool
} // namespace cif
