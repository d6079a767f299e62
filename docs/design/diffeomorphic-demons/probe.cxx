// Verification probe (not module code): runs ITK 5.2's DiffeomorphicDemonsRegistrationFilter and a
// plain-array re-implementation of ITK52-update.md (beside this file), and compares the fields.
#include "itkDiffeomorphicDemonsRegistrationFilter.h"
#include "itkImageFileReader.h"
#include "itkResampleImageFilter.h"
#include "itkAffineTransform.h"
#include "itkCastImageFilter.h"
#include "itkMultiThreaderBase.h"
#include "itkGaussianOperator.h"
#include "itkMath.h"
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

template <unsigned D>
struct Geo
{
  long   size[D];
  double origin[D], spacing[D], IP[D][D], PI[D][D], dir[D][D], invdir[D][D];
  long   n() const
  {
    long k = 1;
    for (unsigned d = 0; d < D; ++d)
      k *= size[d];
    return k;
  }
  void point(const long * idx, double * p) const
  {
    for (unsigned r = 0; r < D; ++r)
    {
      p[r] = origin[r];
      for (unsigned c = 0; c < D; ++c)
        p[r] += IP[r][c] * static_cast<double>(idx[c]);
    }
  }
  void cindex(const double * p, double * ci) const
  {
    double v[D];
    for (unsigned k = 0; k < D; ++k)
      v[k] = p[k] - origin[k];
    for (unsigned r = 0; r < D; ++r)
    {
      double s = 0;
      for (unsigned k = 0; k < D; ++k)
        s += PI[r][k] * v[k];
      ci[r] = s;
    }
  }
  long lin(const long * idx) const
  {
    long o = 0, st = 1;
    for (unsigned d = 0; d < D; ++d)
    {
      o += idx[d] * st;
      st *= size[d];
    }
    return o;
  }
  void unlin(long o, long * idx) const
  {
    for (unsigned d = 0; d < D; ++d)
    {
      idx[d] = o % size[d];
      o /= size[d];
    }
  }
};

template <typename TImage>
Geo<TImage::ImageDimension>
GetGeo(const TImage * im)
{
  constexpr unsigned D = TImage::ImageDimension;
  Geo<D>             g;
  typename TImage::DirectionType scale;
  scale.Fill(0);
  for (unsigned d = 0; d < D; ++d)
  {
    g.size[d] = im->GetBufferedRegion().GetSize()[d];
    g.origin[d] = im->GetOrigin()[d];
    g.spacing[d] = im->GetSpacing()[d];
    scale[d][d] = im->GetSpacing()[d];
  }
  typename TImage::DirectionType ip = im->GetDirection() * scale;
  typename TImage::DirectionType pi(ip.GetInverse());
  for (unsigned r = 0; r < D; ++r)
    for (unsigned c = 0; c < D; ++c)
    {
      g.IP[r][c] = ip[r][c];
      g.PI[r][c] = pi[r][c];
      g.dir[r][c] = im->GetDirection()[r][c];
      g.invdir[r][c] = im->GetInverseDirection()[r][c];
    }
  return g;
}

struct Settings
{
  int      gradType = 0; // 0 sym 1 fixed 2 warped 3 mapped
  bool     firstOrder = false;
  double   thr = 0.001;
  double   maxStep = 0.5;
  unsigned iters = 10;
  double   sd = 1.0, sdUp = 1.0;
  bool     smoothField = true, smoothUpdate = false;
  double   maxErr = 0.1;
  unsigned maxKW = 30;
};

// ITK's LinearInterpolateImageFunction (2D/3D optimized), written generically: x, then y, then z lerps
template <unsigned D, typename TPix>
double
LinearInterp(const Geo<D> & g, const std::vector<TPix> & im, const double * ci)
{
  long   b[D], b1[D];
  double t[D];
  for (unsigned d = 0; d < D; ++d)
  {
    b[d] = itk::Math::Floor<long>(ci[d]);
    if (b[d] < 0)
      b[d] = 0;
    t[d] = ci[d] - static_cast<double>(b[d]);
    b1[d] = b[d] + 1;
    if (t[d] <= 0.0 || b1[d] > g.size[d] - 1)
    {
      t[d] = 0.0;
      b1[d] = b[d];
    }
  }
  // corner values
  double v[1 << D];
  for (unsigned c = 0; c < (1u << D); ++c)
  {
    long idx[D];
    for (unsigned d = 0; d < D; ++d)
      idx[d] = ((c >> d) & 1) ? b1[d] : b[d];
    v[c] = static_cast<double>(im[g.lin(idx)]);
  }
  // lerp along x (bit 0), then y (bit 1), then z (bit 2)
  unsigned n = 1u << D;
  for (unsigned d = 0; d < D; ++d)
  {
    n >>= 1;
    for (unsigned c = 0; c < n; ++c)
    {
      const double a = v[2 * c], bb = v[2 * c + 1];
      v[c] = a + (bb - a) * t[d];
    }
  }
  return v[0];
}

template <unsigned D>
void
VecInterpNN(const Geo<D> & g, const std::vector<float> & f, const double * ci, double * out)
{
  long   base[D];
  double dist[D];
  for (unsigned d = 0; d < D; ++d)
  {
    base[d] = itk::Math::Floor<long>(ci[d]);
    if (base[d] >= 0)
    {
      if (base[d] < g.size[d] - 1)
        dist[d] = ci[d] - static_cast<double>(base[d]);
      else
      {
        base[d] = g.size[d] - 1;
        dist[d] = 0.0;
      }
    }
    else
    {
      base[d] = 0;
      dist[d] = 0.0;
    }
  }
  for (unsigned k = 0; k < D; ++k)
    out[k] = 0.0;
  double total = 0.0;
  for (unsigned c = 0; c < (1u << D); ++c)
  {
    double   ov = 1.0;
    unsigned up = c;
    long     ni[D];
    for (unsigned d = 0; d < D; ++d)
    {
      if (up & 1)
      {
        ni[d] = base[d] + 1;
        ov *= dist[d];
      }
      else
      {
        ni[d] = base[d];
        ov *= 1.0 - dist[d];
      }
      up >>= 1;
    }
    if (ov != 0.0)
    {
      const float * px = &f[D * g.lin(ni)];
      for (unsigned k = 0; k < D; ++k)
        out[k] += ov * static_cast<double>(px[k]);
      total += ov;
    }
    if (total == 1.0)
      break;
  }
}

// out(x) = (float) interp(in, phys(x) + disp(x)), same grid
template <unsigned D>
void
WarpVector(const Geo<D> & g, const std::vector<float> & in, const std::vector<float> & disp, std::vector<float> & out)
{
  const long N = g.n();
  out.resize(in.size());
  for (long o = 0; o < N; ++o)
  {
    long   idx[D];
    double p[D], ci[D], val[D];
    g.unlin(o, idx);
    g.point(idx, p);
    for (unsigned j = 0; j < D; ++j)
      p[j] += static_cast<double>(disp[D * o + j]);
    g.cindex(p, ci);
    VecInterpNN<D>(g, in, ci, val);
    for (unsigned k = 0; k < D; ++k)
      out[D * o + k] = static_cast<float>(val[k]);
  }
}

template <unsigned D>
void
SmoothField(const Geo<D> & g, std::vector<float> & f, double sd, double maxErr, unsigned maxKW)
{
  const long N = g.n();
  for (unsigned a = 0; a < D; ++a)
  {
    itk::GaussianOperator<float, D> op;
    op.SetDirection(a);
    op.SetVariance(sd * sd);
    op.SetMaximumError(maxErr);
    op.SetMaximumKernelWidth(maxKW);
    op.CreateDirectional();
    const long         r = static_cast<long>(op.GetRadius()[a]);
    std::vector<float> k(op.Size());
    for (unsigned i = 0; i < op.Size(); ++i)
      k[i] = op[i];
    std::vector<float> out(f.size());
    for (long o = 0; o < N; ++o)
    {
      long idx[D];
      g.unlin(o, idx);
      float sum[D];
      for (unsigned j = 0; j < D; ++j)
        sum[j] = 0.0f;
      for (long t = -r; t <= r; ++t)
      {
        long q[D];
        for (unsigned d = 0; d < D; ++d)
          q[d] = idx[d];
        q[a] += t;
        if (q[a] < 0)
          q[a] = 0;
        if (q[a] > g.size[a] - 1)
          q[a] = g.size[a] - 1;
        const float * px = &f[D * g.lin(q)];
        const float   kk = k[t + r];
        for (unsigned j = 0; j < D; ++j)
        {
          volatile float prod = kk * px[j];
          sum[j] += prod;
        }
      }
      for (unsigned j = 0; j < D; ++j)
        out[D * o + j] = sum[j];
    }
    f.swap(out);
  }
}

template <typename TPix, unsigned D>
struct Reference
{
  Settings           S;
  Geo<D>             gf, gm;
  std::vector<TPix>  F, M;
  std::vector<float> s; // field, D per pixel
  double             metric = 0, rms = 0;
  unsigned           exps = 0;

  void Iterate()
  {
    const long N = gf.n();
    const TPix PAD = std::numeric_limits<TPix>::max();
    // 1. warp moving
    std::vector<TPix> W(N);
    for (long o = 0; o < N; ++o)
    {
      long   idx[D];
      double p[D], ci[D];
      gf.unlin(o, idx);
      gf.point(idx, p);
      for (unsigned j = 0; j < D; ++j)
        p[j] += static_cast<double>(s[D * o + j]);
      gm.cindex(p, ci);
      bool inside = true;
      for (unsigned d = 0; d < D; ++d)
        if (!(ci[d] >= -0.5 && ci[d] < static_cast<double>(gm.size[d] - 1) + 0.5))
          inside = false;
      W[o] = inside ? static_cast<TPix>(LinearInterp<D, TPix>(gm, M, ci)) : PAD;
    }
    // 2. normalizer
    double K = 0;
    if (S.maxStep > 0)
    {
      for (unsigned k = 0; k < D; ++k)
        K += gf.spacing[k] * gf.spacing[k];
      K *= S.maxStep * S.maxStep / static_cast<double>(D);
    }
    else
      K = -1;
    std::vector<float> u(D * N);
    double             ssd = 0, ssc = 0;
    long               npix = 0;
    for (long o = 0; o < N; ++o)
    {
      long idx[D];
      gf.unlin(o, idx);
      float * up = &u[D * o];
      const double f = static_cast<double>(F[o]);
      TPix         mv = W[o];
      if (mv == PAD)
      {
        for (unsigned j = 0; j < D; ++j)
          up[j] = 0.0f;
        continue;
      }
      const double m = static_cast<double>(mv);
      double       g[D];
      auto         fixedGrad = [&](double * fg) {
        for (unsigned d = 0; d < D; ++d)
        {
          if (idx[d] < 1 || idx[d] > gf.size[d] - 2)
          {
            fg[d] = 0.0;
            continue;
          }
          long q[D];
          for (unsigned e = 0; e < D; ++e)
            q[e] = idx[e];
          q[d] += 1;
          double v = static_cast<double>(F[gf.lin(q)]);
          q[d] -= 2;
          v -= static_cast<double>(F[gf.lin(q)]);
          v *= 0.5 / gf.spacing[d];
          fg[d] = v;
        }
      };
      if (S.gradType == 0 || S.gradType == 2)
      {
        double wg[D];
        for (unsigned d = 0; d < D; ++d)
        {
          const long first = 0, last = gf.size[d];
          long       q[D];
          for (unsigned e = 0; e < D; ++e)
            q[e] = idx[e];
          if (first == last || idx[d] < first || idx[d] >= last)
          {
            wg[d] = 0.0;
            continue;
          }
          if (idx[d] == first)
          {
            q[d] += 1;
            TPix pv = W[gf.lin(q)];
            if (pv == PAD)
              wg[d] = 0.0;
            else
            {
              wg[d] = static_cast<double>(pv) - m;
              wg[d] /= gf.spacing[d];
            }
            continue;
          }
          if (idx[d] == last - 1)
          {
            q[d] -= 1;
            TPix pv = W[gf.lin(q)];
            if (pv == PAD)
              wg[d] = 0.0;
            else
            {
              wg[d] = m - static_cast<double>(pv);
              wg[d] /= gf.spacing[d];
            }
            continue;
          }
          q[d] += 1;
          TPix pv = W[gf.lin(q)];
          if (pv == PAD)
          {
            wg[d] = m;
            q[d] -= 2;
            pv = W[gf.lin(q)];
            if (pv == PAD)
              wg[d] = 0.0;
            else
            {
              wg[d] -= static_cast<double>(pv);
              wg[d] /= gf.spacing[d];
            }
          }
          else
          {
            wg[d] = static_cast<double>(pv);
            q[d] -= 2;
            pv = W[gf.lin(q)];
            if (pv == PAD)
            {
              wg[d] -= m;
              wg[d] /= gf.spacing[d];
            }
            else
            {
              wg[d] -= static_cast<double>(pv);
              wg[d] *= 0.5 / gf.spacing[d];
            }
          }
        }
        if (S.gradType == 0)
        {
          double fg[D];
          fixedGrad(fg);
          for (unsigned d = 0; d < D; ++d)
            g[d] = fg[d] + wg[d];
        }
        else
          for (unsigned d = 0; d < D; ++d)
            g[d] = wg[d] + wg[d];
      }
      else if (S.gradType == 1)
      {
        double fg[D];
        fixedGrad(fg);
        for (unsigned d = 0; d < D; ++d)
          g[d] = fg[d] + fg[d];
      }
      else
      {
        double p[D];
        gf.point(idx, p);
        for (unsigned j = 0; j < D; ++j)
          p[j] += static_cast<double>(s[D * o + j]);
        double od[D];
        for (unsigned d = 0; d < D; ++d)
        {
          const double off = 0.5 * gm.spacing[d];
          double       p1[D], p2[D], c1[D], c2[D];
          for (unsigned e = 0; e < D; ++e)
            p1[e] = p2[e] = p[e];
          p1[d] = p[d] - off;
          p2[d] = p[d] + off;
          auto inside = [&](const double * pp, double * cc) {
            gm.cindex(pp, cc);
            for (unsigned e = 0; e < D; ++e)
              if (!(cc[e] >= -0.5 && cc[e] < static_cast<double>(gm.size[e] - 1) + 0.5))
                return false;
            return true;
          };
          if (!inside(p1, c1) || !inside(p2, c2))
          {
            od[d] = 0.0;
            continue;
          }
          const double delta = p2[d] - p1[d];
          if (delta > 10.0 * std::numeric_limits<double>::epsilon())
            od[d] = (LinearInterp<D, TPix>(gm, M, c2) - LinearInterp<D, TPix>(gm, M, c1)) / delta;
          else
            od[d] = 0.0;
        }
        double loc[D];
        for (unsigned r = 0; r < D; ++r)
        {
          double sum = 0;
          for (unsigned c = 0; c < D; ++c)
            sum += gm.invdir[r][c] * od[c];
          loc[r] = sum;
        }
        for (unsigned d = 0; d < D; ++d)
          g[d] = loc[d] + loc[d];
      }
      double G[D];
      for (unsigned r = 0; r < D; ++r)
      {
        double sum = 0;
        for (unsigned c = 0; c < D; ++c)
          sum += gf.dir[r][c] * g[c];
        G[r] = sum;
      }
      double G2 = 0;
      for (unsigned d = 0; d < D; ++d)
        G2 += G[d] * G[d];
      const double sp = f - m;
      if (std::abs(sp) < S.thr)
      {
        for (unsigned j = 0; j < D; ++j)
          up[j] = 0.0f;
      }
      else
      {
        double denom = (K > 0.0) ? G2 + (sp * sp) / K : G2;
        if (denom < 1e-9)
          for (unsigned j = 0; j < D; ++j)
            up[j] = 0.0f;
        else
        {
          const double factor = 2.0 * sp / denom;
          for (unsigned j = 0; j < D; ++j)
            up[j] = static_cast<float>(factor * G[j]);
        }
      }
      ssd += sp * sp;
      npix += 1;
      double n2 = 0;
      for (unsigned j = 0; j < D; ++j)
        n2 += static_cast<double>(up[j]) * static_cast<double>(up[j]);
      ssc += n2;
    }
    if (npix)
    {
      metric = ssd / npix;
      rms = std::sqrt(ssc / npix);
    }
    // 3. apply update
    if (S.smoothUpdate)
      SmoothField<D>(gf, u, S.sdUp, S.maxErr, S.maxKW);
    std::vector<float> E;
    if (S.firstOrder)
      E = u;
    else
    {
      unsigned numiter = 0;
      if (S.maxStep > 0.0)
      {
        const double nf = 2.0 + std::log(S.maxStep) / itk::Math::ln2;
        if (nf > 0.0)
          numiter = itk::Math::Ceil<unsigned int>(nf);
      }
      else
      {
        double maxn2 = 0, minsp = gf.spacing[0];
        for (unsigned i = 1; i < D; ++i)
          if (gf.spacing[i] < minsp)
            minsp = gf.spacing[i];
        for (long o = 0; o < N; ++o)
        {
          double n2 = 0;
          for (unsigned j = 0; j < D; ++j)
          {
            const double v = u[D * o + j];
            n2 += v * v;
          }
          if (n2 > maxn2)
            maxn2 = n2;
        }
        maxn2 /= minsp * minsp;
        double nf = (maxn2 > 0) ? 2.0 + 0.5 * std::log(maxn2) / itk::Math::ln2 : std::numeric_limits<double>::min();
        if (nf >= 0.0)
          numiter = std::min(static_cast<unsigned>(nf + 1.0), 2000u);
      }
      exps = numiter;
      E.resize(u.size());
      if (numiter == 0)
        E = u;
      else
      {
        const double div = static_cast<double>(1 << numiter);
        for (size_t i = 0; i < u.size(); ++i)
          E[i] = static_cast<float>(static_cast<double>(u[i]) / div);
        std::vector<float> w;
        for (unsigned it = 0; it < numiter; ++it)
        {
          WarpVector<D>(gf, E, E, w);
          for (size_t i = 0; i < E.size(); ++i)
            E[i] = E[i] + w[i];
        }
      }
    }
    std::vector<float> ws;
    WarpVector<D>(gf, s, E, ws);
    for (size_t i = 0; i < s.size(); ++i)
      s[i] = ws[i] + E[i];
    if (S.smoothField)
      SmoothField<D>(gf, s, S.sd, S.maxErr, S.maxKW);
  }
};

template <typename TPix, unsigned D>
int
RunCase(const char * name, typename itk::Image<TPix, D>::Pointer fixed, typename itk::Image<TPix, D>::Pointer moving,
        const Settings & S, unsigned threads)
{
  using ImageType = itk::Image<TPix, D>;
  using FieldType = itk::Image<itk::Vector<float, D>, D>;
  using Reg = itk::DiffeomorphicDemonsRegistrationFilter<ImageType, ImageType, FieldType>;
  auto reg = Reg::New();
  reg->SetFixedImage(fixed);
  reg->SetMovingImage(moving);
  reg->SetNumberOfIterations(S.iters);
  reg->SetStandardDeviations(S.sd);
  reg->SetUpdateFieldStandardDeviations(S.sdUp);
  reg->SetSmoothDisplacementField(S.smoothField);
  reg->SetSmoothUpdateField(S.smoothUpdate);
  reg->SetMaximumError(S.maxErr);
  reg->SetMaximumKernelWidth(S.maxKW);
  reg->SetIntensityDifferenceThreshold(S.thr);
  reg->SetMaximumUpdateStepLength(S.maxStep);
  reg->SetUseFirstOrderExp(S.firstOrder);
  using GE = typename Reg::GradientType;
  reg->SetUseGradientType(static_cast<GE>(S.gradType));
  if (threads)
    reg->SetNumberOfWorkUnits(threads);
  std::vector<double> itkMetric;
  reg->Update();
  const FieldType * out = reg->GetOutput();

  Reference<TPix, D> R;
  R.S = S;
  R.gf = GetGeo(fixed.GetPointer());
  R.gm = GetGeo(moving.GetPointer());
  R.F.assign(fixed->GetBufferPointer(), fixed->GetBufferPointer() + R.gf.n());
  R.M.assign(moving->GetBufferPointer(), moving->GetBufferPointer() + R.gm.n());
  R.s.assign(D * R.gf.n(), 0.0f);
  for (unsigned i = 0; i < S.iters; ++i)
    R.Iterate();
  const float * itkf = reinterpret_cast<const float *>(out->GetBufferPointer());
  double        maxd = 0, sum2 = 0, maxabs = 0;
  long          ndiff = 0;
  for (size_t i = 0; i < R.s.size(); ++i)
  {
    const double d = std::abs(static_cast<double>(itkf[i]) - R.s[i]);
    if (itkf[i] != R.s[i])
      ++ndiff;
    maxd = std::max(maxd, d);
    sum2 += d * d;
    maxabs = std::max(maxabs, std::abs(static_cast<double>(itkf[i])));
  }
  std::printf("%-34s iters=%u exps=%u  max|field|=%.4f  components differing=%ld/%zu  maxdiff=%.3g  rmsdiff=%.3g  "
              "metric itk=%.17g ref=%.17g  rms itk=%.17g ref=%.17g\n",
              name, S.iters, R.exps, maxabs, ndiff, R.s.size(), maxd, std::sqrt(sum2 / R.s.size()), reg->GetMetric(),
              R.metric, reg->GetRMSChange(), R.rms);
  return ndiff == 0 ? 0 : 1;
}

int
main(int argc, char * argv[])
{
  std::printf("MultiThreader: %s, global default threads %u, work units of a new filter: ",
              itk::MultiThreaderBase::New()->GetNameOfClass(),
              itk::MultiThreaderBase::GetGlobalDefaultNumberOfThreads());
  {
    using I2 = itk::Image<float, 2>;
    using F2 = itk::Image<itk::Vector<float, 2>, 2>;
    auto r = itk::DiffeomorphicDemonsRegistrationFilter<I2, I2, F2>::New();
    std::printf("%u\n", r->GetNumberOfWorkUnits());
  }
  // PhysicalPointToIndex exactness
  for (double sp : { 1.0, 0.9375, 1.2, 0.7, 3.0, 0.5859375, 2.0 / 3.0 })
  {
    using I3 = itk::Image<float, 3>;
    auto im = I3::New();
    I3::SpacingType s;
    s.Fill(sp);
    s[2] = 1.3;
    im->SetSpacing(s);
    I3::DirectionType sc;
    sc.Fill(0);
    for (int d = 0; d < 3; ++d)
      sc[d][d] = s[d];
    I3::DirectionType ip = im->GetDirection() * sc;
    I3::DirectionType pi(ip.GetInverse());
    std::printf("spacing %.17g: PI[0][0]=%.17g 1/s=%.17g %s, offdiag=%.3g, PI[2][2]-1/1.3=%.3g\n", sp, pi[0][0], 1.0 / sp,
                pi[0][0] == 1.0 / sp ? "equal" : "DIFFERENT", pi[0][1], pi[2][2] - 1.0 / 1.3);
  }

  const std::string dataDir = "/usr/share/doc/insighttoolkit5-examples/examples/Data/";
  using UC2 = itk::Image<unsigned char, 2>;
  using F2 = itk::Image<float, 2>;
  auto r1 = itk::ImageFileReader<UC2>::New();
  r1->SetFileName(dataDir + "RatLungSlice1.mha");
  r1->Update();
  auto r2 = itk::ImageFileReader<UC2>::New();
  r2->SetFileName(dataDir + "RatLungSlice2.mha");
  r2->Update();
  UC2::Pointer fu = r1->GetOutput(), mu = r2->GetOutput();
  auto         c1 = itk::CastImageFilter<UC2, F2>::New();
  c1->SetInput(fu);
  c1->Update();
  auto c2 = itk::CastImageFilter<UC2, F2>::New();
  c2->SetInput(mu);
  c2->Update();
  F2::Pointer ff = c1->GetOutput(), mf = c2->GetOutput();

  const unsigned its = argc > 1 ? std::atoi(argv[1]) : 50;
  int            fails = 0;
  Settings       S;
  S.iters = its;
  fails += RunCase<float, 2>("ratlung float default", ff, mf, S, 0);
  fails += RunCase<float, 2>("ratlung float default 1 work unit", ff, mf, S, 1);
  {
    Settings T = S;
    T.firstOrder = true;
    fails += RunCase<float, 2>("ratlung float firstorder", ff, mf, T, 0);
  }
  for (int gt = 1; gt <= 3; ++gt)
  {
    Settings T = S;
    T.gradType = gt;
    char nm[64];
    std::snprintf(nm, sizeof nm, "ratlung float gradtype %d", gt);
    fails += RunCase<float, 2>(nm, ff, mf, T, 0);
  }
  {
    Settings T = S;
    T.maxStep = 0.0;
    fails += RunCase<float, 2>("ratlung float maxstep 0 (auto exp)", ff, mf, T, 0);
  }
  {
    Settings T = S;
    T.maxStep = 2.0;
    T.smoothUpdate = true;
    T.sdUp = 1.5;
    T.sd = 2.0;
    fails += RunCase<float, 2>("ratlung float step2 smoothupd sd2", ff, mf, T, 0);
  }
  {
    Settings T = S;
    T.maxStep = 0.1; // ITK test 07 settings
    T.maxErr = 0.08;
    T.maxKW = 10;
    fails += RunCase<float, 2>("ratlung float test07 (step 0.1)", ff, mf, T, 0);
  }
  fails += RunCase<unsigned char, 2>("ratlung uchar default", fu, mu, S, 0);

  // 3D: KmeansTest_T1 with a rotated direction, spacing, origin; moving = affine-resampled copy
  using F3 = itk::Image<float, 3>;
  auto r3 = itk::ImageFileReader<F3>::New();
  r3->SetFileName(dataDir + "KmeansTest_T1UCharRaw.nii.gz");
  r3->Update();
  F3::Pointer f3 = r3->GetOutput();
  f3->DisconnectPipeline();
  {
    F3::SpacingType sp;
    sp[0] = 1.2;
    sp[1] = 0.9375;
    sp[2] = 2.5;
    f3->SetSpacing(sp);
    F3::PointType org;
    org[0] = -71.3;
    org[1] = 12.25;
    org[2] = -40.1;
    f3->SetOrigin(org);
    F3::DirectionType dir;
    const double      a = 0.3;
    dir.SetIdentity();
    dir[0][0] = std::cos(a);
    dir[0][1] = -std::sin(a);
    dir[1][0] = std::sin(a);
    dir[1][1] = std::cos(a);
    f3->SetDirection(dir);
  }
  auto tr = itk::AffineTransform<double, 3>::New();
  {
    itk::AffineTransform<double, 3>::OutputVectorType t;
    t[0] = 1.5;
    t[1] = -0.8;
    t[2] = 1.1;
    tr->Translate(t);
    tr->Rotate(0, 1, 0.03);
  }
  auto rs = itk::ResampleImageFilter<F3, F3>::New();
  rs->SetInput(f3);
  rs->SetTransform(tr);
  rs->SetReferenceImage(f3);
  rs->UseReferenceImageOn();
  rs->Update();
  F3::Pointer m3 = rs->GetOutput();
  std::printf("3D size %lu %lu %lu\n", f3->GetBufferedRegion().GetSize()[0], f3->GetBufferedRegion().GetSize()[1],
              f3->GetBufferedRegion().GetSize()[2]);
  Settings S3;
  S3.iters = argc > 2 ? std::atoi(argv[2]) : 10;
  fails += RunCase<float, 3>("kmeans3D float default", f3, m3, S3, 0);
  {
    Settings T = S3;
    T.gradType = 3;
    T.maxStep = 0.0;
    fails += RunCase<float, 3>("kmeans3D mapped auto-exp", f3, m3, T, 0);
  }
  std::printf("cases with differences: %d\n", fails);
  return 0;
}
