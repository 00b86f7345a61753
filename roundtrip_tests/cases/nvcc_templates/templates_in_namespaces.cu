#include <cstdint>
namespace outer { namespace inner {
template <typename T, int N> struct Op { __device__ T operator()(T a, T b) const { return a * N + b; } };
template <typename T, int N>
__global__ void scale(const T* __restrict__ x, T* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = Op<T, N>()(x[i], y[i]);
}
template <typename F>
__global__ void apply(F f, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = f(y[i]);
}
} }
namespace {
template <int K> __global__ void hidden(float* y) { y[threadIdx.x] += K; }
}
struct Vec { float v; __device__ Vec operator+(const Vec& o) const { return {v + o.v}; } };
template <typename T> __global__ void addv(T* a, const T* b) { a[threadIdx.x] = a[threadIdx.x] + b[threadIdx.x]; }
template __global__ void outer::inner::scale<float, 3>(const float*, float*, int);
template __global__ void outer::inner::scale<int, 16>(const int*, int*, int);
namespace { template __global__ void hidden<4>(float*); }
template __global__ void addv<Vec>(Vec*, const Vec*);
void launch(float* y, int n) {
  auto lam = [] __device__ (float v) { return v * 2.0f; };
  outer::inner::apply<<<1, 32>>>(lam, y, n);
  hidden<7><<<1, 32>>>(y);
}
namespace { __global__ void plain_anon(float* y) { y[threadIdx.x] = 1.0f; } }
namespace outer { __global__ void plain_ns(float* y) { y[threadIdx.x] = 2.0f; } }
void launch2(float* y) { plain_anon<<<1,1>>>(y); }
