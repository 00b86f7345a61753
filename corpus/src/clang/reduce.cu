#include "prelude.h"

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __nvvm_shfl_sync_down_f32(0xffffffffu, v, o, 0x1f);
  return v;
}

template <int BLOCK>
__global__ void block_sum(const float* __restrict__ x, float* __restrict__ out, int n) {
  __shared__ float partial[BLOCK / 32];
  float acc = 0.f;
  for (int i = ctaid_x() * BLOCK + tid_x(); i < n; i += nctaid_x() * BLOCK) acc += x[i];
  acc = warp_sum(acc);
  if ((tid_x() & 31) == 0) partial[tid_x() / 32] = acc;
  sync_threads();
  if (tid_x() < 32) {
    acc = tid_x() < BLOCK / 32 ? partial[tid_x()] : 0.f;
    acc = warp_sum(acc);
    if (tid_x() == 0) __nvvm_atom_add_gen_f(out, acc);
  }
}
template __global__ void block_sum<256>(const float*, float*, int);
template __global__ void block_sum<1024>(const float*, float*, int);

extern "C" __global__ void int_histogram(const unsigned char* data, unsigned* hist, int n) {
  __shared__ unsigned local[256];
  for (unsigned i = tid_x(); i < 256; i += ntid_x()) local[i] = 0;
  sync_threads();
  for (int i = ctaid_x() * ntid_x() + tid_x(); i < n; i += nctaid_x() * ntid_x()) __nvvm_atom_add_gen_i((int*)&local[data[i]], 1);
  sync_threads();
  for (unsigned i = tid_x(); i < 256; i += ntid_x()) __nvvm_atom_add_gen_i((int*)&hist[i], (int)local[i]);
}

extern "C" __global__ void cas_max(int* target, const int* x, int n) {
  int i = ctaid_x() * ntid_x() + tid_x();
  if (i >= n) return;
  int old = *target, assumed;
  do {
    assumed = old;
    if (assumed >= x[i]) break;
    old = __nvvm_atom_cas_gen_i(target, assumed, x[i]);
  } while (old != assumed);
}
