// Hand-written scans, softmax, layernorm and rmsnorm kernels.
#include <cuda_fp16.h>

template <int BLOCK>
__global__ void hillis_steele_scan(const float* __restrict__ in, float* __restrict__ out, float* __restrict__ block_sums, int n) {
  __shared__ float buf[2][BLOCK];
  int i = blockIdx.x * BLOCK + threadIdx.x;
  int pout = 0, pin = 1;
  buf[pout][threadIdx.x] = i < n ? in[i] : 0.f;
  __syncthreads();
  for (int off = 1; off < BLOCK; off <<= 1) {
    pout = 1 - pout; pin = 1 - pout;
    float v = buf[pin][threadIdx.x];
    if (threadIdx.x >= off) v += buf[pin][threadIdx.x - off];
    buf[pout][threadIdx.x] = v;
    __syncthreads();
  }
  if (i < n) out[i] = buf[pout][threadIdx.x];
  if (threadIdx.x == BLOCK - 1) block_sums[blockIdx.x] = buf[pout][threadIdx.x];
}

__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, o));
  return v;
}
__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
  return v;
}

// One warp per row.
template <typename T, int COLS>
__global__ void softmax_warp(const T* __restrict__ x, T* __restrict__ y, int rows) {
  int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  int lane = threadIdx.x & 31;
  if (row >= rows) return;
  float v[COLS / 32];
  float m = -INFINITY;
#pragma unroll
  for (int j = 0; j < COLS / 32; ++j) { v[j] = (float)x[(size_t)row * COLS + j * 32 + lane]; m = fmaxf(m, v[j]); }
  m = warp_max(m);
  float s = 0.f;
#pragma unroll
  for (int j = 0; j < COLS / 32; ++j) { v[j] = __expf(v[j] - m); s += v[j]; }
  s = warp_sum(s);
#pragma unroll
  for (int j = 0; j < COLS / 32; ++j) y[(size_t)row * COLS + j * 32 + lane] = (T)(v[j] / s);
}

template <int BLOCK>
__global__ void layernorm(const float* __restrict__ x, const float* __restrict__ gamma, const float* __restrict__ beta,
                          float* __restrict__ y, int cols, float eps) {
  __shared__ float red[2][BLOCK / 32];
  const float* xr = x + (size_t)blockIdx.x * cols;
  float s = 0.f, ss = 0.f;
  for (int c = threadIdx.x; c < cols; c += BLOCK) { float v = xr[c]; s += v; ss += v * v; }
  s = warp_sum(s); ss = warp_sum(ss);
  if ((threadIdx.x & 31) == 0) { red[0][threadIdx.x / 32] = s; red[1][threadIdx.x / 32] = ss; }
  __syncthreads();
  s = 0.f; ss = 0.f;
  for (int w = 0; w < BLOCK / 32; ++w) { s += red[0][w]; ss += red[1][w]; }
  float mean = s / cols, rstd = rsqrtf(ss / cols - mean * mean + eps);
  for (int c = threadIdx.x; c < cols; c += BLOCK) y[(size_t)blockIdx.x * cols + c] = (xr[c] - mean) * rstd * gamma[c] + beta[c];
}

extern "C" __global__ void rmsnorm_half(const __half* __restrict__ x, const __half* __restrict__ w, __half* __restrict__ y, int cols, float eps) {
  __shared__ float red[32];
  const __half* xr = x + (size_t)blockIdx.x * cols;
  float ss = 0.f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) { float v = __half2float(xr[c]); ss += v * v; }
  ss = warp_sum(ss);
  if ((threadIdx.x & 31) == 0) red[threadIdx.x / 32] = ss;
  __syncthreads();
  if (threadIdx.x < 32) { ss = threadIdx.x < blockDim.x / 32 ? red[threadIdx.x] : 0.f; ss = warp_sum(ss); if (threadIdx.x == 0) red[0] = ss; }
  __syncthreads();
  float r = rsqrtf(red[0] / cols + eps);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) y[(size_t)blockIdx.x * cols + c] = __float2half(__half2float(xr[c]) * r * __half2float(w[c]));
}

template __global__ void hillis_steele_scan<256>(const float*, float*, float*, int);
template __global__ void hillis_steele_scan<1024>(const float*, float*, float*, int);
template __global__ void softmax_warp<float, 1024>(const float*, float*, int);
template __global__ void softmax_warp<__half, 2048>(const __half*, __half*, int);
template __global__ void layernorm<256>(const float*, const float*, const float*, float*, int, float);
template __global__ void layernorm<512>(const float*, const float*, const float*, float*, int, float);
