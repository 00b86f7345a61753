// Relocatable device code: kernels call __device__ functions defined in rdc_lib.cu (extern),
// plus __noinline__ device functions, recursion, function pointers and extern __device__ data.
#include <stdint.h>

extern __device__ float lib_activation(float x, int kind);
extern __device__ int lib_hash(uint32_t x);
extern __device__ float lib_table[64];
extern __constant__ float lib_coeffs[16];

__device__ __noinline__ float poly_eval(float x) {
  float r = 0.f;
#pragma unroll 1
  for (int i = 15; i >= 0; --i) r = r * x + lib_coeffs[i];
  return r;
}

__device__ __noinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

typedef float (*unary_fn)(float);
__device__ float neg_fn(float x) { return -x; }
__device__ float sq_fn(float x) { return x * x; }
__device__ unary_fn fn_table[2] = {neg_fn, sq_fn};

extern "C" __global__ void rdc_apply(const float* __restrict__ x, float* __restrict__ y, int n, int kind) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = lib_activation(x[i], kind) + poly_eval(x[i]) + lib_table[lib_hash(i) & 63];
    y[i] = fn_table[i & 1](v);
  }
}

extern "C" __global__ void rdc_fib(int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = fib(i % 20);
}
