// Register-tiled SGEMM/DGEMM/HGEMM templates with heavy unrolling (several tile configurations).
// (no __half instantiation: cuda_fp16 static helpers get per-run module-id names in -G/-lineinfo debug info)

namespace ptx2py { namespace gemm {

template <typename T, typename Acc, int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
gemm_regtile(int M, int N, int K, Acc alpha, const T* __restrict__ A, const T* __restrict__ B, Acc beta, T* __restrict__ C) {
  constexpr int THREADS = (BM / TM) * (BN / TN);
  __shared__ T As[BK][BM + 4];
  __shared__ T Bs[BK][BN + 4];
  const int tx = threadIdx.x % (BN / TN), ty = threadIdx.x / (BN / TN);
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  Acc acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = Acc(0);
  for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
    for (int l = threadIdx.x; l < BM * BK; l += THREADS) {
      int r = l / BK, c = l % BK;
      As[c][r] = (row0 + r < M && k0 + c < K) ? A[(size_t)(row0 + r) * K + k0 + c] : T(0);
    }
#pragma unroll
    for (int l = threadIdx.x; l < BK * BN; l += THREADS) {
      int r = l / BN, c = l % BN;
      Bs[r][c] = (k0 + r < K && col0 + c < N) ? B[(size_t)(k0 + r) * N + col0 + c] : T(0);
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      Acc a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM; ++i) a[i] = (Acc)As[kk][ty * TM + i];
#pragma unroll
      for (int j = 0; j < TN; ++j) b[j] = (Acc)Bs[kk][tx * TN + j];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      int r = row0 + ty * TM + i, c = col0 + tx * TN + j;
      if (r < M && c < N) C[(size_t)r * N + c] = (T)(alpha * acc[i][j] + beta * (Acc)C[(size_t)r * N + c]);
    }
}

template __global__ void gemm_regtile<float, float, 64, 64, 8, 4, 4>(int, int, int, float, const float*, const float*, float, float*);
template __global__ void gemm_regtile<float, float, 128, 128, 8, 8, 8>(int, int, int, float, const float*, const float*, float, float*);
template __global__ void gemm_regtile<float, float, 128, 64, 16, 8, 4>(int, int, int, float, const float*, const float*, float, float*);
template __global__ void gemm_regtile<double, double, 64, 64, 8, 4, 4>(int, int, int, double, const double*, const double*, double, double*);
template __global__ void gemm_regtile<double, double, 64, 64, 16, 8, 8>(int, int, int, double, const double*, const double*, double, double*);

}}  // namespace ptx2py::gemm
