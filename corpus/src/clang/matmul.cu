#include "prelude.h"

namespace corpus { namespace gemm {
template <int TILE, int TM>
__global__ void sgemm(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C) {
  __shared__ float As[TILE][TILE * TM];
  __shared__ float Bs[TILE][TILE];
  int tx = tid_x(), ty = tid_y();
  int row = ctaid_y() * TILE * TM + ty * TM, col = ctaid_x() * TILE + tx;
  float acc[TM];
#pragma unroll
  for (int i = 0; i < TM; ++i) acc[i] = 0.f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
#pragma unroll
    for (int i = 0; i < TM; ++i) As[tx][ty * TM + i] = A[(row + i) * K + k0 + tx];
    Bs[ty][tx] = B[(k0 + ty) * N + col];
    sync_threads();
#pragma unroll
    for (int k = 0; k < TILE; ++k)
#pragma unroll
      for (int i = 0; i < TM; ++i) acc[i] += As[k][ty * TM + i] * Bs[k][tx];
    sync_threads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i)
    if (row + i < M && col < N) C[(row + i) * N + col] = acc[i];
}
template __global__ void sgemm<16, 4>(int, int, int, const float*, const float*, float*);
template __global__ void sgemm<32, 8>(int, int, int, const float*, const float*, float*);
}}  // namespace corpus::gemm
