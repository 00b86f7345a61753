// sm_90a: WGMMA (wgmma.mma_async with shared-memory descriptors), TMA (cp.async.bulk.tensor with a
// __grid_constant__ CUtensorMap), mbarrier pipelines (init, arrive.expect_tx, try_wait.parity loops),
// thread-block clusters and distributed shared memory. Compile only for sm_90a.
#include <cuda.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

namespace ptx2py { namespace sm90 {

__device__ __forceinline__ uint32_t smem_u32(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }

// ---- mbarrier -------------------------------------------------------------------------------
__device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count));
}
__device__ __forceinline__ void mbar_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
  asm volatile("{\n .reg .b64 state;\n mbarrier.arrive.shared::cta.b64 state, [%0];\n}\n" ::"r"(smem_u32(bar)) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t phase) {
  asm volatile(
      "{\n"
      ".reg .pred P1;\n"
      "LAB_WAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n"
      "@P1 bra DONE;\n"
      "bra LAB_WAIT;\n"
      "DONE:\n"
      "}\n" ::"r"(smem_u32(bar)), "r"(phase) : "memory");
}
__device__ __forceinline__ void fence_barrier_init() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

// ---- TMA ------------------------------------------------------------------------------------
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, uint64_t* bar, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n"
      ::"r"(smem_u32(dst)), "l"(map), "r"(smem_u32(bar)), "r"(c0), "r"(c1) : "memory");
}
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, const void* src, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n"
               ::"l"(map), "r"(smem_u32(src)), "r"(c0), "r"(c1) : "memory");
}
__device__ __forceinline__ void tma_prefetch_desc(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(map) : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
__device__ __forceinline__ void bulk_wait_read0() { asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory"); }

// ---- WGMMA ----------------------------------------------------------------------------------
__device__ __forceinline__ uint64_t make_desc(const void* p, uint32_t lbo, uint32_t sbo, uint32_t swizzle) {
  uint64_t addr = smem_u32(p);
  uint64_t d = 0;
  d |= (addr & 0x3FFFF) >> 4;
  d |= (uint64_t)((lbo & 0x3FFFF) >> 4) << 16;
  d |= (uint64_t)((sbo & 0x3FFFF) >> 4) << 32;
  d |= (uint64_t)swizzle << 62;
  return d;
}
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory"); }

__device__ __forceinline__ void wgmma_m64n64k16_f16(float* d, uint64_t da, uint64_t db, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, %32, %33, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(da), "l"(db), "r"(scale_d));
}
__device__ __forceinline__ void wgmma_m64n128k16_bf16(float* d, uint64_t da, uint64_t db, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, %64, %65, p, 1, 1, 0, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(da), "l"(db), "r"(scale_d));
}
__device__ __forceinline__ void wgmma_m64n64k32_e4m3(float* d, uint64_t da, uint64_t db, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, %32, %33, p, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(da), "l"(db), "r"(scale_d));
}

// fp16 GEMM: TMA loads of 64x64 A and B tiles (128B swizzle) into a STAGES-deep ring guarded by
// mbarriers; one warpgroup issues WGMMA. C is written with plain stores.
template <int STAGES>
__global__ void __launch_bounds__(128) gemm_tma_wgmma_f16(const __grid_constant__ CUtensorMap tmA,
                                                          const __grid_constant__ CUtensorMap tmB,
                                                          float* __restrict__ C, int M, int N, int K) {
  extern __shared__ __align__(1024) uint8_t smem[];
  half* sA = reinterpret_cast<half*>(smem);
  half* sB = sA + STAGES * 64 * 64;
  uint64_t* full = reinterpret_cast<uint64_t*>(sB + STAGES * 64 * 64);
  const int tid = threadIdx.x;
  if (tid == 0) {
    tma_prefetch_desc(&tmA);
    tma_prefetch_desc(&tmB);
    for (int s = 0; s < STAGES; ++s) mbar_init(&full[s], 1);
    fence_barrier_init();
  }
  __syncthreads();
  const int ktiles = K / 64;
  const int m0 = blockIdx.y * 64, n0 = blockIdx.x * 64;
  if (tid == 0)
    for (int s = 0; s < STAGES && s < ktiles; ++s) {
      mbar_expect_tx(&full[s], 2 * 64 * 64 * sizeof(half));
      tma_load_2d(sA + s * 64 * 64, &tmA, &full[s], s * 64, m0);
      tma_load_2d(sB + s * 64 * 64, &tmB, &full[s], s * 64, n0);
    }
  float d[32];
#pragma unroll
  for (int i = 0; i < 32; ++i) d[i] = 0.f;
  for (int kt = 0; kt < ktiles; ++kt) {
    int s = kt % STAGES;
    mbar_wait(&full[s], (kt / STAGES) & 1);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      uint64_t da = make_desc(sA + s * 64 * 64 + kk * 16, 16, 1024, 1);
      uint64_t db = make_desc(sB + s * 64 * 64 + kk * 16, 16, 1024, 1);
      wgmma_m64n64k16_f16(d, da, db, kt > 0 || kk > 0);
    }
    wgmma_commit();
    wgmma_wait<0>();
    __syncthreads();
    int nk = kt + STAGES;
    if (tid == 0 && nk < ktiles) {
      mbar_expect_tx(&full[s], 2 * 64 * 64 * sizeof(half));
      tma_load_2d(sA + s * 64 * 64, &tmA, &full[s], nk * 64, m0);
      tma_load_2d(sB + s * 64 * 64, &tmB, &full[s], nk * 64, n0);
    }
  }
  int warp = tid / 32, lane = tid % 32;
#pragma unroll
  for (int i = 0; i < 16; ++i) {
    int r = m0 + warp * 16 + (lane / 4) + 8 * (i & 1);
    int c = n0 + (i / 2) * 8 + (lane % 4) * 2;
    if (r < M && c + 1 < N) { C[(size_t)r * N + c] = d[2 * i]; C[(size_t)r * N + c + 1] = d[2 * i + 1]; }
  }
}

// bf16 64x128 tile variant with register-level double buffering of the wgmma groups.
extern "C" __global__ void __launch_bounds__(128) gemm_wgmma_bf16_m64n128(const __nv_bfloat16* __restrict__ A,
                                                                         const __nv_bfloat16* __restrict__ B,
                                                                         float* __restrict__ C, int K) {
  __shared__ __align__(1024) __nv_bfloat16 sA[64 * 64];
  __shared__ __align__(1024) __nv_bfloat16 sB[128 * 64];
  float d[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) d[i] = 0.f;
  for (int k0 = 0; k0 < K; k0 += 64) {
    for (int i = threadIdx.x; i < 64 * 64; i += 128) sA[i] = A[(size_t)blockIdx.y * 64 * K + (i / 64) * K + k0 + i % 64];
    for (int i = threadIdx.x; i < 128 * 64; i += 128) sB[i] = B[(size_t)(k0 + i / 128) * 128 + i % 128];
    fence_proxy_async();
    __syncthreads();
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk)
      wgmma_m64n128k16_bf16(d, make_desc(sA + kk * 16, 16, 1024, 1), make_desc(sB + kk * 16 * 128, 2048, 1024, 1), k0 > 0 || kk > 0);
    wgmma_commit();
    wgmma_wait<1>();
    wgmma_wait<0>();
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 64; ++i) C[(size_t)blockIdx.y * 64 * 128 + threadIdx.x * 64 + i] = d[i];
}

extern "C" __global__ void __launch_bounds__(128) gemm_wgmma_fp8_e4m3(const uint8_t* __restrict__ A, const uint8_t* __restrict__ B,
                                                                     float* __restrict__ C, int K, float scale) {
  __shared__ __align__(1024) uint8_t sA[64 * 128];
  __shared__ __align__(1024) uint8_t sB[64 * 128];
  float d[32];
#pragma unroll
  for (int i = 0; i < 32; ++i) d[i] = 0.f;
  for (int k0 = 0; k0 < K; k0 += 128) {
    for (int i = threadIdx.x; i < 64 * 128; i += 128) { sA[i] = A[(size_t)(i / 128) * K + k0 + i % 128]; sB[i] = B[(size_t)(i / 128) * K + k0 + i % 128]; }
    fence_proxy_async();
    __syncthreads();
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) wgmma_m64n64k32_e4m3(d, make_desc(sA + kk * 32, 16, 1024, 1), make_desc(sB + kk * 32, 16, 1024, 1), k0 > 0 || kk > 0);
    wgmma_commit();
    wgmma_wait<0>();
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 32; ++i) C[threadIdx.x * 32 + i] = d[i] * scale;
}

// TMA copy kernel: load a tile with TMA, wait on the mbarrier, scale it in shared memory, store with TMA.
extern "C" __global__ void tma_scale_tile(const __grid_constant__ CUtensorMap src, const __grid_constant__ CUtensorMap dst, float alpha) {
  __shared__ __align__(128) float tile[32 * 32];
  __shared__ __align__(8) uint64_t bar;
  int x = blockIdx.x * 32, y = blockIdx.y * 32;
  if (threadIdx.x == 0) { mbar_init(&bar, 1); fence_barrier_init(); }
  __syncthreads();
  if (threadIdx.x == 0) { mbar_expect_tx(&bar, sizeof(tile)); tma_load_2d(tile, &src, &bar, x, y); }
  mbar_wait(&bar, 0);
  for (int i = threadIdx.x; i < 32 * 32; i += blockDim.x) tile[i] *= alpha;
  fence_proxy_async();
  __syncthreads();
  if (threadIdx.x == 0) { tma_store_2d(&dst, tile, x, y); bulk_commit(); bulk_wait_read0(); }
}

// Producer/consumer warp specialisation with full/empty mbarrier rings, setmaxnreg and named barriers.
template <int STAGES>
__global__ void __launch_bounds__(384) warp_specialized_sum(const __grid_constant__ CUtensorMap tm, float* __restrict__ out, int tiles) {
  __shared__ __align__(128) float buf[STAGES][64 * 64];
  __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
  int wg = threadIdx.x / 128;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) { mbar_init(&full[s], 1); mbar_init(&empty[s], 256); }
    fence_barrier_init();
  }
  __syncthreads();
  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    if (threadIdx.x == 0)
      for (int t = 0; t < tiles; ++t) {
        int s = t % STAGES;
        if (t >= STAGES) mbar_wait(&empty[s], ((t / STAGES) - 1) & 1);
        mbar_expect_tx(&full[s], sizeof(buf[0]));
        tma_load_2d(buf[s], &tm, &full[s], 0, (blockIdx.x * tiles + t) * 64);
      }
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
    float acc = 0.f;
    for (int t = 0; t < tiles; ++t) {
      int s = t % STAGES;
      mbar_wait(&full[s], (t / STAGES) & 1);
      for (int i = threadIdx.x - 128; i < 64 * 64; i += 256) acc += buf[s][i];
      mbar_arrive(&empty[s]);
    }
    asm volatile("bar.sync 1, 256;\n");
    atomicAdd(out, acc);
  }
}

// Thread block clusters and distributed shared memory.
extern "C" __global__ void __cluster_dims__(2, 1, 1) cluster_dsmem_exchange(const int* __restrict__ in, int* __restrict__ out) {
  __shared__ int local[256];
  cg::cluster_group cluster = cg::this_cluster();
  unsigned rank = cluster.block_rank();
  local[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
  cluster.sync();
  int* remote = cluster.map_shared_rank(local, rank ^ 1);
  out[blockIdx.x * blockDim.x + threadIdx.x] = remote[threadIdx.x] + local[threadIdx.x];
  cluster.sync();
}

extern "C" __global__ void cluster_raw_ptx(uint32_t* out) {
  uint32_t cid, nctarank, ctarank;
  asm volatile("mov.u32 %0, %%clusterid.x;\n" : "=r"(cid));
  asm volatile("mov.u32 %0, %%cluster_nctarank;\n" : "=r"(nctarank));
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(ctarank));
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
  uint32_t leader;
  asm volatile("{\n.reg .pred P;\nelect.sync _|P, 0xffffffff;\nselp.u32 %0, 1, 0, P;\n}\n" : "=r"(leader));
  out[blockIdx.x * blockDim.x + threadIdx.x] = cid * 1000 + nctarank * 10 + ctarank + leader;
}

template __global__ void gemm_tma_wgmma_f16<2>(const __grid_constant__ CUtensorMap, const __grid_constant__ CUtensorMap, float*, int, int, int);
template __global__ void gemm_tma_wgmma_f16<4>(const __grid_constant__ CUtensorMap, const __grid_constant__ CUtensorMap, float*, int, int, int);
template __global__ void warp_specialized_sum<4>(const __grid_constant__ CUtensorMap, float*, int);

}}  // namespace ptx2py::sm90
