/*=========================================================================
 *  CudaImageFilters: the resampling geometry (output index -> physical
 *  point -> transform -> input continuous index), computed once for the ITK
 *  filter and the Python package with itk::ResampleImageFilter's
 *  operations.
 *=========================================================================*/
#include "cif/Resample.h"

namespace cif
{

ResampleGeometry
ResampleGeometryFor(int                  dimension,
                    const ResampleGrid & input,
                    const ResampleGrid & output,
                    const double         A[3][3],
                    const double         b[3])
{
  const int D = dimension;
  // map = inPointToIndex * A * outIndexToPoint, in the order itk::Matrix
  // (vnl) multiplies: (inPointToIndex * A) * outIndexToPoint
  double inA[3][3]{}, map[3][3]{};
  for (int i = 0; i < D; ++i)
  {
    for (int j = 0; j < D; ++j)
    {
      double sum = input.pointToIndex[i][0] * A[0][j];
      for (int k = 1; k < D; ++k)
      {
        sum += input.pointToIndex[i][k] * A[k][j];
      }
      inA[i][j] = sum;
    }
  }
  for (int i = 0; i < D; ++i)
  {
    for (int j = 0; j < D; ++j)
    {
      double sum = inA[i][0] * output.indexToPoint[0][j];
      for (int k = 1; k < D; ++k)
      {
        sum += inA[i][k] * output.indexToPoint[k][j];
      }
      map[i][j] = sum;
    }
  }
  // the physical point of the first output sample, through the transform,
  // to a continuous index of the input
  double firstOut[3]{}, mapped[3]{}, firstIn[3]{};
  for (int i = 0; i < D; ++i)
  {
    firstOut[i] = output.origin[i];
    for (int j = 0; j < D; ++j)
    {
      firstOut[i] += output.indexToPoint[i][j] * static_cast<double>(output.bufferStart[j]);
    }
  }
  for (int i = 0; i < D; ++i)
  {
    mapped[i] = b[i] - input.origin[i];
    for (int j = 0; j < D; ++j)
    {
      mapped[i] += A[i][j] * firstOut[j];
    }
  }
  for (int i = 0; i < D; ++i)
  {
    double sum = 0.0;
    for (int j = 0; j < D; ++j)
    {
      sum += input.pointToIndex[i][j] * mapped[j];
    }
    firstIn[i] = sum;
  }

  ResampleGeometry g;
  for (int i = 0; i < 3; ++i)
  {
    for (int j = 0; j < 3; ++j)
    {
      g.matrix[i][j] = (i < D && j < D) ? map[i][j] : 0.0;
    }
    g.offset[i] = i < D ? firstIn[i] - static_cast<double>(input.bufferStart[i]) : 0.0;
    g.inputSize[i] = i < D ? input.bufferSize[i] : 1;
    g.outputSize[i] = i < D ? output.bufferSize[i] : 1;
  }
  g.itkExact = true;
  g.dimension = D;
  g.lineFirst = output.lineFirst;
  g.lineLength = output.lineLength;
  for (int i = 0; i < D; ++i)
  {
    g.outputOrigin[i] = output.origin[i];
    g.inputOrigin[i] = input.origin[i];
    g.transformOffset[i] = b[i];
    g.outputStart[i] = output.bufferStart[i];
    g.inputStart[i] = input.bufferStart[i];
    for (int j = 0; j < D; ++j)
    {
      g.outputIndexToPoint[i][j] = output.indexToPoint[i][j];
      g.transformMatrix[i][j] = A[i][j];
      g.inputPointToIndex[i][j] = input.pointToIndex[i][j];
    }
  }
  return g;
}

} // namespace cif
