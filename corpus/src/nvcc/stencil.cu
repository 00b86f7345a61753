// Stencils and convolutions with shared-memory halos and constant memory.
#define R 4
__constant__ float c_weights[2 * R + 1];
__constant__ float c_filter[5][5];

template <int BX, int BY>
__global__ void stencil2d(const float* __restrict__ in, float* __restrict__ out, int w, int h) {
  __shared__ float tile[BY + 2 * R][BX + 2 * R];
  int gx = blockIdx.x * BX + threadIdx.x, gy = blockIdx.y * BY + threadIdx.y;
  for (int y = threadIdx.y; y < BY + 2 * R; y += BY)
    for (int x = threadIdx.x; x < BX + 2 * R; x += BX) {
      int sx = min(max(blockIdx.x * BX + x - R, 0), w - 1);
      int sy = min(max(blockIdx.y * BY + y - R, 0), h - 1);
      tile[y][x] = in[sy * w + sx];
    }
  __syncthreads();
  if (gx < w && gy < h) {
    float acc = 0.f;
#pragma unroll
    for (int k = -R; k <= R; ++k)
      acc += c_weights[k + R] * (tile[threadIdx.y + R][threadIdx.x + R + k] + tile[threadIdx.y + R + k][threadIdx.x + R]);
    out[gy * w + gx] = acc;
  }
}

extern "C" __global__ void conv5x5(const float* __restrict__ in, float* __restrict__ out, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  float acc = 0.f;
#pragma unroll
  for (int j = 0; j < 5; ++j)
#pragma unroll
    for (int i = 0; i < 5; ++i) {
      int sx = min(max(x + i - 2, 0), w - 1), sy = min(max(y + j - 2, 0), h - 1);
      acc += c_filter[j][i] * __ldg(&in[sy * w + sx]);
    }
  out[y * w + x] = acc;
}

extern "C" __global__ void jacobi3d(const double* __restrict__ in, double* __restrict__ out, int nx, int ny, int nz) {
  int x = blockIdx.x * blockDim.x + threadIdx.x + 1, y = blockIdx.y * blockDim.y + threadIdx.y + 1;
  if (x >= nx - 1 || y >= ny - 1) return;
  for (int z = 1; z < nz - 1; ++z) {
    size_t i = ((size_t)z * ny + y) * nx + x;
    out[i] = (in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx] + in[i - (size_t)nx * ny] + in[i + (size_t)nx * ny]) / 6.0;
  }
}

template __global__ void stencil2d<32, 8>(const float*, float*, int, int);
template __global__ void stencil2d<16, 16>(const float*, float*, int, int);
