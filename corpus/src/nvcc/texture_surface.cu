// Texture and surface objects: tex1Dfetch, tex2D, tex3D, surf2Dread/surf2Dwrite.
#include <cuda_runtime.h>

extern "C" __global__ void tex2d_bilinear(cudaTextureObject_t tex, float* __restrict__ out, int w, int h, float scale) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) {
    float u = (x + 0.5f) * scale / w, v = (y + 0.5f) * scale / h;
    out[y * w + x] = tex2D<float>(tex, u, v);
  }
}

extern "C" __global__ void tex1d_fetch_gather(cudaTextureObject_t tex, const int* __restrict__ idx, float4* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<float4>(tex, idx[i]);
}

extern "C" __global__ void tex3d_sample(cudaTextureObject_t tex, float* __restrict__ out, int d) {
  int x = threadIdx.x, y = blockIdx.x, z = blockIdx.y;
  out[(z * d + y) * d + x] = tex3D<float>(tex, x + 0.5f, y + 0.5f, z + 0.5f);
}

extern "C" __global__ void surf2d_blur(cudaSurfaceObject_t src, cudaSurfaceObject_t dst, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  float acc = 0.f;
  for (int dy = -1; dy <= 1; ++dy)
    for (int dx = -1; dx <= 1; ++dx)
      acc += surf2Dread<float>(src, (x + dx) * (int)sizeof(float), y + dy, cudaBoundaryModeClamp);
  surf2Dwrite(acc / 9.f, dst, x * (int)sizeof(float), y);
}

extern "C" __global__ void surf2d_uchar4_invert(cudaSurfaceObject_t surf, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) {
    uchar4 p;
    surf2Dread(&p, surf, x * 4, y);
    p = make_uchar4(255 - p.x, 255 - p.y, 255 - p.z, p.w);
    surf2Dwrite(p, surf, x * 4, y);
  }
}

extern "C" __global__ void tex2d_layered_lod(cudaTextureObject_t tex, float* out, int w, int layer, float lod) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  out[x] = tex2DLayeredLod<float>(tex, x / (float)w, 0.5f, layer, lod);
}
