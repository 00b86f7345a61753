// CUB block/warp primitives: BlockLoad/Store, BlockReduce, BlockScan, BlockRadixSort, WarpReduce, BlockHistogram.
#include <cub/cub.cuh>
#include <cuda/functional>
#include <stdint.h>

template <int BLOCK, int ITEMS>
__global__ void block_reduce_sum(const float* __restrict__ in, float* __restrict__ out) {
  using BlockLoad = cub::BlockLoad<float, BLOCK, ITEMS, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
  using BlockReduce = cub::BlockReduce<float, BLOCK>;
  __shared__ union { typename BlockLoad::TempStorage load; typename BlockReduce::TempStorage reduce; } tmp;
  float items[ITEMS];
  BlockLoad(tmp.load).Load(in + blockIdx.x * BLOCK * ITEMS, items);
  __syncthreads();
  float s = BlockReduce(tmp.reduce).Sum(items);
  if (threadIdx.x == 0) out[blockIdx.x] = s;
}

template <int BLOCK, int ITEMS>
__global__ void block_scan_exclusive(const int* __restrict__ in, int* __restrict__ out) {
  using BlockLoad = cub::BlockLoad<int, BLOCK, ITEMS, cub::BLOCK_LOAD_TRANSPOSE>;
  using BlockStore = cub::BlockStore<int, BLOCK, ITEMS, cub::BLOCK_STORE_TRANSPOSE>;
  using BlockScan = cub::BlockScan<int, BLOCK>;
  __shared__ union {
    typename BlockLoad::TempStorage load;
    typename BlockStore::TempStorage store;
    typename BlockScan::TempStorage scan;
  } tmp;
  int items[ITEMS];
  BlockLoad(tmp.load).Load(in + blockIdx.x * BLOCK * ITEMS, items);
  __syncthreads();
  BlockScan(tmp.scan).ExclusiveSum(items, items);
  __syncthreads();
  BlockStore(tmp.store).Store(out + blockIdx.x * BLOCK * ITEMS, items);
}

template <int BLOCK, int ITEMS>
__global__ void block_radix_sort(uint32_t* __restrict__ keys, float* __restrict__ vals) {
  using Sort = cub::BlockRadixSort<uint32_t, BLOCK, ITEMS, float>;
  __shared__ typename Sort::TempStorage tmp;
  uint32_t k[ITEMS];
  float v[ITEMS];
  int base = blockIdx.x * BLOCK * ITEMS + threadIdx.x * ITEMS;
  for (int i = 0; i < ITEMS; ++i) { k[i] = keys[base + i]; v[i] = vals[base + i]; }
  Sort(tmp).SortBlockedToStriped(k, v);
  base = blockIdx.x * BLOCK * ITEMS;
  for (int i = 0; i < ITEMS; ++i) { keys[base + i * BLOCK + threadIdx.x] = k[i]; vals[base + i * BLOCK + threadIdx.x] = v[i]; }
}

__global__ void warp_reduce_max(const float* __restrict__ in, float* __restrict__ out) {
  using WarpReduce = cub::WarpReduce<float>;
  __shared__ typename WarpReduce::TempStorage tmp[8];
  float v = in[blockIdx.x * blockDim.x + threadIdx.x];
  float m = WarpReduce(tmp[threadIdx.x / 32]).Reduce(v, cuda::maximum<>{});
  if (threadIdx.x % 32 == 0) out[blockIdx.x * 8 + threadIdx.x / 32] = m;
}

__global__ void block_histogram(const unsigned char* __restrict__ in, unsigned* __restrict__ hist) {
  using BlockHistogram = cub::BlockHistogram<unsigned char, 128, 4, 256>;
  __shared__ typename BlockHistogram::TempStorage tmp;
  __shared__ unsigned smem_hist[256];
  unsigned char items[4];
  for (int i = 0; i < 4; ++i) items[i] = in[blockIdx.x * 512 + threadIdx.x * 4 + i];
  BlockHistogram(tmp).Histogram(items, smem_hist);
  __syncthreads();
  for (int i = threadIdx.x; i < 256; i += 128) atomicAdd(&hist[i], smem_hist[i]);
}

template __global__ void block_reduce_sum<128, 4>(const float*, float*);
template __global__ void block_reduce_sum<256, 8>(const float*, float*);
template __global__ void block_scan_exclusive<128, 4>(const int*, int*);
template __global__ void block_scan_exclusive<256, 16>(const int*, int*);
template __global__ void block_radix_sort<128, 8>(uint32_t*, float*);

