// Reductions: warp shuffles, shared memory trees, atomics, cooperative groups.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}

template <int BLOCK>
__global__ void block_sum(const float* __restrict__ x, float* __restrict__ out, int n) {
  __shared__ float warp_partials[BLOCK / 32];
  float acc = 0.f;
  for (int i = blockIdx.x * BLOCK + threadIdx.x; i < n; i += gridDim.x * BLOCK) acc += x[i];
  acc = warp_sum(acc);
  if ((threadIdx.x & 31) == 0) warp_partials[threadIdx.x >> 5] = acc;
  __syncthreads();
  if (threadIdx.x < 32) {
    acc = threadIdx.x < BLOCK / 32 ? warp_partials[threadIdx.x] : 0.f;
    acc = warp_sum(acc);
    if (threadIdx.x == 0) atomicAdd(out, acc);
  }
}

extern "C" __global__ void shared_tree_max(const float* __restrict__ x, float* __restrict__ out, int n) {
  extern __shared__ float sdata[];
  unsigned tid = threadIdx.x;
  unsigned i = blockIdx.x * blockDim.x * 2 + tid;
  float v = -INFINITY;
  if (i < n) v = x[i];
  if (i + blockDim.x < n) v = fmaxf(v, x[i + blockDim.x]);
  sdata[tid] = v;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 32; s >>= 1) {
    if (tid < s) sdata[tid] = fmaxf(sdata[tid], sdata[tid + s]);
    __syncthreads();
  }
  if (tid < 32) {
    v = fmaxf(sdata[tid], sdata[tid + 32]);
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    if (tid == 0) out[blockIdx.x] = v;
  }
}

extern "C" __global__ void cg_reduce(const int* __restrict__ x, int* __restrict__ out, int n) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
  int v = 0;
  for (int i = block.group_index().x * block.size() + block.thread_rank(); i < n; i += gridDim.x * block.size()) v += x[i];
  v = cg::reduce(tile, v, cg::plus<int>());
  if (tile.thread_rank() == 0) atomicAdd(out, v);
}

extern "C" __global__ void dot_double(const double* __restrict__ a, const double* __restrict__ b, double* out, int n) {
  double acc = 0.0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) acc = fma(a[i], b[i], acc);
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
  if ((threadIdx.x & 31) == 0) atomicAdd(out, acc);
}

extern "C" __global__ void histogram256(const unsigned char* __restrict__ data, unsigned* __restrict__ hist, int n) {
  __shared__ unsigned local[256];
  for (int i = threadIdx.x; i < 256; i += blockDim.x) local[i] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) atomicAdd(&local[data[i]], 1u);
  __syncthreads();
  for (int i = threadIdx.x; i < 256; i += blockDim.x) atomicAdd(&hist[i], local[i]);
}

template __global__ void block_sum<128>(const float*, float*, int);
template __global__ void block_sum<256>(const float*, float*, int);
template __global__ void block_sum<1024>(const float*, float*, int);
