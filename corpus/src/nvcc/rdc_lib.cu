// Library half of the RDC pair: extern device functions and data used by rdc_main.cu.
#include <stdint.h>

__device__ float lib_table[64];
__constant__ float lib_coeffs[16];

__device__ __noinline__ float lib_activation(float x, int kind) {
  switch (kind) {
    case 0: return fmaxf(x, 0.f);
    case 1: return 1.f / (1.f + __expf(-x));
    case 2: return tanhf(x);
    default: return x;
  }
}

__device__ __noinline__ int lib_hash(uint32_t x) {
  x ^= x >> 16; x *= 0x7feb352du; x ^= x >> 15; x *= 0x846ca68bu; x ^= x >> 16;
  return (int)x;
}

extern "C" __global__ void lib_init_table(float seed) {
  int i = threadIdx.x;
  if (i < 64) lib_table[i] = seed * lib_hash(i);
}
