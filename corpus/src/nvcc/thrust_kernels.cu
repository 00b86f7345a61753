// thrust algorithm instantiations: transform, reduce, sort, inclusive_scan, count_if.
#include <thrust/device_ptr.h>
#include <thrust/transform.h>
#include <thrust/reduce.h>
#include <thrust/sort.h>
#include <thrust/scan.h>
#include <thrust/count.h>
#include <thrust/execution_policy.h>
#include <thrust/functional.h>

namespace ptx2py {
struct saxpy_functor {
  float a;
  __host__ __device__ float operator()(float x, float y) const { return a * x + y; }
};
struct is_positive {
  __host__ __device__ bool operator()(float x) const { return x > 0.f; }
};
struct square {
  __host__ __device__ double operator()(double x) const { return x * x; }
};

void saxpy(float a, float* x, float* y, int n) {
  thrust::transform(thrust::device, x, x + n, y, y, saxpy_functor{a});
}
double sum_squares(double* x, int n) {
  return thrust::transform_reduce(thrust::device, x, x + n, square{}, 0.0, thrust::plus<double>());
}
void sort_keys(int* keys, int n) { thrust::sort(thrust::device, keys, keys + n); }
void prefix_sum(float* x, int n) { thrust::inclusive_scan(thrust::device, x, x + n, x); }
long count_pos(float* x, int n) { return thrust::count_if(thrust::device, x, x + n, is_positive{}); }
}  // namespace ptx2py
