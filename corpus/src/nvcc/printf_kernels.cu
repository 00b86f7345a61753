// Device printf and assert.
#include <cstdio>
#include <cassert>

extern "C" __global__ void hello(int iteration) {
  printf("hello from block %d thread %d iteration %d\n", blockIdx.x, threadIdx.x, iteration);
}

extern "C" __global__ void print_values(const float* x, const double* d, long long n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && (i % 97) == 0)
    printf("x[%d]=%f d=%.12e ptr=%p n=%lld hex=%08x s=%s\n", i, x[i], d[i], (const void*)&x[i], n, __float_as_uint(x[i]), "tag");
}

extern "C" __global__ void checked_index(const int* idx, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int j = idx[i];
    assert(j >= 0 && j < n);
    if (j < 0) printf("bad index %d at %d\n", j, i);
    out[i] = (float)j;
  }
}
