#include "prelude.h"

__device__ int g_counter;
__constant__ float c_table[16];

__device__ __noinline__ int collatz_steps(unsigned x) {
  int s = 0;
  while (x != 1 && s < 1000) { x = (x & 1) ? 3 * x + 1 : x / 2; ++s; }
  return s;
}
__device__ __noinline__ float lookup(int i) { return c_table[i & 15]; }


extern "C" __global__ void device_calls(int* steps, float* vals, int n) {
  int i = ctaid_x() * ntid_x() + tid_x();
  if (i < n) {
    steps[i] = collatz_steps(i + 1);
    vals[i] = lookup(steps[i]);
    __nvvm_atom_add_gen_i(&g_counter, 1);
  }
}
