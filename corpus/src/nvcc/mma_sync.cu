// Tensor-core paths available from sm_80: WMMA API, inline mma.sync/ldmatrix, cp.async pipelines.
#include <mma.h>
#include <cuda_fp16.h>
#include <cuda_pipeline.h>
#include <stdint.h>
using namespace nvcuda;

extern "C" __global__ void wmma_gemm_f16(const half* __restrict__ A, const half* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
  int warpM = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  int warpN = blockIdx.y * blockDim.y + threadIdx.y;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;
  wmma::fill_fragment(c, 0.0f);
  for (int k = 0; k < K; k += 16) {
    int ar = warpM * 16, bc = warpN * 16;
    if (ar < M && bc < N) {
      wmma::load_matrix_sync(a, A + ar * K + k, K);
      wmma::load_matrix_sync(b, B + bc * K + k, K);
      wmma::mma_sync(c, a, b, c);
    }
  }
  if (warpM * 16 < M && warpN * 16 < N) wmma::store_matrix_sync(C + warpM * 16 * N + warpN * 16, c, N, wmma::mem_row_major);
}

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
extern "C" __global__ void wmma_gemm_bf16_tf32(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                                               const float* __restrict__ X, float* __restrict__ C, int K) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;
  wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> ta;
  wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> tb;
  wmma::fill_fragment(c, 0.0f);
  for (int k = 0; k < K; k += 16) {
    wmma::load_matrix_sync(a, A + k, K);
    wmma::load_matrix_sync(b, B + k * 16, 16);
    wmma::mma_sync(c, a, b, c);
  }
  wmma::load_matrix_sync(ta, X, 8);
  wmma::load_matrix_sync(tb, X + 128, 16);
  for (int i = 0; i < ta.num_elements; ++i) ta.x[i] = wmma::__float_to_tf32(ta.x[i]);
  for (int i = 0; i < tb.num_elements; ++i) tb.x[i] = wmma::__float_to_tf32(tb.x[i]);
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> tc;
  wmma::fill_fragment(tc, 0.0f);
  wmma::mma_sync(tc, ta, tb, tc);
  wmma::store_matrix_sync(C, c, 16, wmma::mem_row_major);
  wmma::store_matrix_sync(C + 256, tc, 16, wmma::mem_row_major);
}

__device__ __forceinline__ void mma_m16n8k16(float* d, const uint32_t* a, const uint32_t* b) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t* r, const void* smem) {
  uint32_t addr = (uint32_t)__cvta_generic_to_shared(smem);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x2_trans(uint32_t* r, const void* smem) {
  uint32_t addr = (uint32_t)__cvta_generic_to_shared(smem);
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];\n" : "=r"(r[0]), "=r"(r[1]) : "r"(addr));
}

__device__ __forceinline__ void cp_async_16(void* smem, const void* gmem) {
  uint32_t addr = (uint32_t)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(addr), "l"(gmem));
}

// 64x64 tile per 4 warps, 3-stage cp.async pipeline, mma.sync m16n8k16.
template <int STAGES>
__global__ void __launch_bounds__(128) mma_pipeline_gemm(const half* __restrict__ A, const half* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
  __shared__ __align__(128) half As[STAGES][64][32 + 8];
  __shared__ __align__(128) half Bs[STAGES][32][64 + 8];
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  int wm = (warp / 2) * 32, wn = (warp % 2) * 32;
  float acc[2][4][4] = {};
  auto load_stage = [&](int s, int k0) {
    for (int c = threadIdx.x; c < 64 * 4; c += 128) {
      int r = c / 4, cc = (c % 4) * 8;
      cp_async_16(&As[s][r][cc], A + (size_t)(blockIdx.y * 64 + r) * K + k0 + cc);
    }
    for (int c = threadIdx.x; c < 32 * 8; c += 128) {
      int r = c / 8, cc = (c % 8) * 8;
      cp_async_16(&Bs[s][r][cc], B + (size_t)(k0 + r) * N + blockIdx.x * 64 + cc);
    }
    asm volatile("cp.async.commit_group;\n" ::);
  };
  int ktiles = K / 32;
  for (int s = 0; s < STAGES - 1; ++s) if (s < ktiles) load_stage(s, s * 32);
  for (int kt = 0; kt < ktiles; ++kt) {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2));
    __syncthreads();
    int nk = kt + STAGES - 1;
    if (nk < ktiles) load_stage(nk % STAGES, nk * 32); else asm volatile("cp.async.commit_group;\n" ::);
    int s = kt % STAGES;
#pragma unroll
    for (int kk = 0; kk < 32; kk += 16) {
      uint32_t af[2][4], bf[4][2];
#pragma unroll
      for (int i = 0; i < 2; ++i) ldmatrix_x4(af[i], &As[s][wm + i * 16 + (lane % 16)][kk + (lane / 16) * 8]);
#pragma unroll
      for (int j = 0; j < 4; ++j) ldmatrix_x2_trans(bf[j], &Bs[s][kk + (lane % 16)][wn + j * 8]);
#pragma unroll
      for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) mma_m16n8k16(acc[i][j], af[i], bf[j]);
    }
  }
  asm volatile("cp.async.wait_all;\n" ::);
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      int r = blockIdx.y * 64 + wm + i * 16 + lane / 4, c = blockIdx.x * 64 + wn + j * 8 + (lane % 4) * 2;
      C[(size_t)r * N + c] = acc[i][j][0]; C[(size_t)r * N + c + 1] = acc[i][j][1];
      C[(size_t)(r + 8) * N + c] = acc[i][j][2]; C[(size_t)(r + 8) * N + c + 1] = acc[i][j][3];
    }
}
template __global__ void mma_pipeline_gemm<3>(const half*, const half*, float*, int, int, int);
template __global__ void mma_pipeline_gemm<4>(const half*, const half*, float*, int, int, int);

extern "C" __global__ void pipeline_primitives_copy(const float4* __restrict__ in, float4* __restrict__ out, int n) {
  __shared__ float4 buf[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) __pipeline_memcpy_async(&buf[threadIdx.x], &in[i], sizeof(float4));
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();
  if (i < n) out[i] = buf[threadIdx.x];
}
#endif
