#include "prelude.h"

namespace corpus {
template <typename T>
struct Axpy {
  T a;
  __device__ T operator()(T x, T y) const { return a * x + y; }
};

template <typename T, typename F>
__global__ void map2(F f, const T* __restrict__ x, T* __restrict__ y, int n) {
  for (int i = ctaid_x() * ntid_x() + tid_x(); i < n; i += nctaid_x() * ntid_x()) y[i] = f(x[i], y[i]);
}

template __global__ void map2<float, Axpy<float>>(Axpy<float>, const float*, float*, int);
template __global__ void map2<double, Axpy<double>>(Axpy<double>, const double*, double*, int);
template __global__ void map2<int, Axpy<int>>(Axpy<int>, const int*, int*, int);
}  // namespace corpus

extern "C" __global__ void relu_inplace(float* x, int n) {
  int i = ctaid_x() * ntid_x() + tid_x();
  if (i < n) x[i] = x[i] > 0.f ? x[i] : 0.f;
}

extern "C" __global__ void fast_math(const float* x, float* y, int n) {
  int i = ctaid_x() * ntid_x() + tid_x();
  if (i < n) y[i] = __nvvm_ex2_approx_f(x[i]) + __nvvm_rsqrt_approx_f(x[i] * x[i] + 1.f) + __nvvm_fmax_f(x[i], 0.f);
}
