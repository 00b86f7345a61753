// CUDA kernels that corpus/ does not contain (the fresh readability set, scripts/make_fresh_set.py).
#include <cuda_fp16.h>

extern "C" __global__ void histogram256(const unsigned char* in, unsigned int* hist, int n) {
    __shared__ unsigned int local[256];
    for (int i = threadIdx.x; i < 256; i += blockDim.x) local[i] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&local[in[i]], 1u);
    __syncthreads();
    for (int i = threadIdx.x; i < 256; i += blockDim.x) atomicAdd(&hist[i], local[i]);
}

extern "C" __global__ void bitonic_sort_shared(float* data) {
    __shared__ float s[1024];
    int t = threadIdx.x;
    s[t] = data[blockIdx.x * 1024 + t];
    __syncthreads();
#pragma unroll
    for (int k = 2; k <= 1024; k <<= 1) {
#pragma unroll
        for (int j = k >> 1; j > 0; j >>= 1) {
            int ixj = t ^ j;
            if (ixj > t) {
                float a = s[t], b = s[ixj];
                bool up = (t & k) == 0;
                if ((a > b) == up) { s[t] = b; s[ixj] = a; }
            }
            __syncthreads();
        }
    }
    data[blockIdx.x * 1024 + t] = s[t];
}

template <int R>
__global__ void conv2d_direct(const float* __restrict__ in, const float* __restrict__ w, float* out, int H, int W) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= W || y >= H) return;
    float acc = 0.f;
#pragma unroll
    for (int dy = -R; dy <= R; ++dy)
#pragma unroll
        for (int dx = -R; dx <= R; ++dx) {
            int yy = min(max(y + dy, 0), H - 1), xx = min(max(x + dx, 0), W - 1);
            acc += in[yy * W + xx] * w[(dy + R) * (2 * R + 1) + dx + R];
        }
    out[y * W + x] = acc;
}
template __global__ void conv2d_direct<2>(const float*, const float*, float*, int, int);
template __global__ void conv2d_direct<3>(const float*, const float*, float*, int, int);

extern "C" __global__ void segmented_warp_scan(const int* in, const int* flags, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? in[i] : 0, f = i < n ? flags[i] : 1;
    int lane = threadIdx.x & 31;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        int ov = __shfl_up_sync(0xffffffff, v, d), of = __shfl_up_sync(0xffffffff, f, d);
        if (lane >= d && !f) { v += ov; f |= of; }
    }
    if (i < n) out[i] = v;
}

extern "C" __global__ void half2_axpby(const __half2* x, const __half2* y, __half2* z, __half2 a, __half2 b, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        z[i] = __hfma2(a, x[i], __hmul2(b, y[i]));
}
