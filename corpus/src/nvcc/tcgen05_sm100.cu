// sm_100a: 5th-generation tensor cores (tcgen05): tensor-memory alloc/dealloc, tcgen05.mma with
// shared-memory descriptors, tcgen05.commit to an mbarrier, tcgen05.ld/st, and the tcgen05 fences.
// Compile only for sm_100a.
#include <cuda.h>
#include <cuda_fp16.h>
#include <stdint.h>

namespace ptx2py { namespace sm100 {

__device__ __forceinline__ uint32_t smem_u32(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count));
}
__device__ __forceinline__ void mbar_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t phase) {
  asm volatile(
      "{\n.reg .pred P1;\nLAB_WAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n"
      "@P1 bra DONE;\nbra LAB_WAIT;\nDONE:\n}\n" ::"r"(smem_u32(bar)), "r"(phase) : "memory");
}
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, uint64_t* bar, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n"
      ::"r"(smem_u32(dst)), "l"(map), "r"(smem_u32(bar)), "r"(c0), "r"(c1) : "memory");
}

__device__ __forceinline__ void tmem_alloc(uint32_t* dst_smem, uint32_t ncols) {
  asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;\n" ::"r"(smem_u32(dst_smem)), "r"(ncols) : "memory");
  asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void tmem_dealloc(uint32_t taddr, uint32_t ncols) {
  asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;\n" ::"r"(taddr), "r"(ncols) : "memory");
}
__device__ __forceinline__ void tc_fence_before() { asm volatile("tcgen05.fence::before_thread_sync;\n" ::: "memory"); }
__device__ __forceinline__ void tc_fence_after() { asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory"); }

__device__ __forceinline__ void tc_mma_f16(uint32_t d_tmem, uint64_t da, uint64_t db, uint32_t idesc, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"
      "tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n}\n"
      ::"r"(d_tmem), "l"(da), "l"(db), "r"(idesc), "r"(accumulate) : "memory");
}
__device__ __forceinline__ void tc_mma_f8(uint32_t d_tmem, uint64_t da, uint64_t db, uint32_t idesc, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"
      "tcgen05.mma.cta_group::1.kind::f8f6f4 [%0], %1, %2, %3, p;\n}\n"
      ::"r"(d_tmem), "l"(da), "l"(db), "r"(idesc), "r"(accumulate) : "memory");
}
__device__ __forceinline__ void tc_commit(uint64_t* bar) {
  asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];\n" ::"r"(smem_u32(bar)) : "memory");
}
__device__ __forceinline__ void tc_ld_32x32b_x8(uint32_t taddr, uint32_t* r) {
  asm volatile("tcgen05.ld.sync.aligned.32x32b.x8.b32 {%0,%1,%2,%3,%4,%5,%6,%7}, [%8];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7])
               : "r"(taddr));
  asm volatile("tcgen05.wait::ld.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void tc_st_32x32b_x4(uint32_t taddr, const uint32_t* r) {
  asm volatile("tcgen05.st.sync.aligned.32x32b.x4.b32 [%0], {%1,%2,%3,%4};\n" ::"r"(taddr), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]) : "memory");
  asm volatile("tcgen05.wait::st.sync.aligned;\n" ::: "memory");
}

__device__ __forceinline__ uint64_t make_desc_sm100(const void* p, uint32_t lbo, uint32_t sbo) {
  uint64_t d = 0;
  d |= (uint64_t)((smem_u32(p) & 0x3FFFF) >> 4);
  d |= (uint64_t)((lbo & 0x3FFFF) >> 4) << 16;
  d |= (uint64_t)((sbo & 0x3FFFF) >> 4) << 32;
  d |= 1ull << 46;           // descriptor version for sm_100
  d |= 2ull << 61;           // 128B swizzle
  return d;
}
// Instruction descriptor for kind::f16: f32 accumulate, f16 A/B, K-major, M=128, N given.
__host__ __device__ constexpr uint32_t make_idesc_f16(int M, int N) {
  return (1u << 4) | (0u << 7) | (0u << 10) | ((uint32_t)(N >> 3) << 17) | ((uint32_t)(M >> 4) << 24);
}

// 128xN tile GEMM: TMA -> smem ring -> tcgen05.mma into tensor memory -> tcgen05.ld -> global.
template <int N, int STAGES>
__global__ void __launch_bounds__(128) gemm_tcgen05_f16(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
                                                        float* __restrict__ C, int M, int ldc, int K) {
  extern __shared__ __align__(1024) uint8_t smem[];
  half* sA = reinterpret_cast<half*>(smem);
  half* sB = sA + STAGES * 128 * 64;
  uint64_t* full = reinterpret_cast<uint64_t*>(sB + STAGES * N * 64);
  uint64_t* mma_done = full + STAGES;
  uint32_t* tmem_slot = reinterpret_cast<uint32_t*>(mma_done + STAGES);
  const int warp = threadIdx.x / 32;
  if (warp == 0) tmem_alloc(tmem_slot, N);
  if (threadIdx.x == 32) {
    for (int s = 0; s < STAGES; ++s) { mbar_init(&full[s], 1); mbar_init(&mma_done[s], 1); }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  tc_fence_before();
  __syncthreads();
  tc_fence_after();
  const uint32_t tmem = *tmem_slot;
  const int m0 = blockIdx.y * 128, n0 = blockIdx.x * N, ktiles = K / 64;
  constexpr uint32_t idesc = make_idesc_f16(128, N);
  for (int kt = 0; kt < ktiles; ++kt) {
    int s = kt % STAGES;
    if (threadIdx.x == 0) {
      if (kt >= STAGES) mbar_wait(&mma_done[s], ((kt / STAGES) - 1) & 1);
      mbar_expect_tx(&full[s], (128 + N) * 64 * sizeof(half));
      tma_load_2d(sA + s * 128 * 64, &tmA, &full[s], kt * 64, m0);
      tma_load_2d(sB + s * N * 64, &tmB, &full[s], kt * 64, n0);
      mbar_wait(&full[s], (kt / STAGES) & 1);
      tc_fence_after();
#pragma unroll
      for (int kk = 0; kk < 4; ++kk)
        tc_mma_f16(tmem, make_desc_sm100(sA + s * 128 * 64 + kk * 16, 16, 1024), make_desc_sm100(sB + s * N * 64 + kk * 16, 16, 1024), idesc, kt > 0 || kk > 0);
      tc_commit(&mma_done[s]);
    }
  }
  if (threadIdx.x == 0 && ktiles > 0) mbar_wait(&mma_done[(ktiles - 1) % STAGES], ((ktiles - 1) / STAGES) & 1);
  __syncthreads();
  tc_fence_after();
  const int row = m0 + warp * 32 + threadIdx.x % 32;
#pragma unroll
  for (int c = 0; c < N; c += 8) {
    uint32_t r[8];
    tc_ld_32x32b_x8(tmem + ((warp * 32) << 16) + c, r);
    if (row < M)
#pragma unroll
      for (int j = 0; j < 8; ++j) C[(size_t)row * ldc + n0 + c + j] = __uint_as_float(r[j]);
  }
  tc_fence_before();
  __syncthreads();
  if (warp == 0) tmem_dealloc(tmem, N);
}

// Minimal tensor-memory round trip: st, ld, fp8 mma on zero descriptors.
extern "C" __global__ void __launch_bounds__(128) tmem_roundtrip(const uint32_t* __restrict__ in, uint32_t* __restrict__ out) {
  __shared__ __align__(1024) uint8_t sA[128 * 128];
  __shared__ __align__(1024) uint8_t sB[64 * 128];
  __shared__ __align__(8) uint64_t bar;
  __shared__ uint32_t slot;
  int warp = threadIdx.x / 32;
  if (warp == 0) tmem_alloc(&slot, 64);
  if (threadIdx.x == 0) mbar_init(&bar, 1);
  for (int i = threadIdx.x; i < 128 * 128; i += 128) sA[i] = (uint8_t)in[i % 64];
  for (int i = threadIdx.x; i < 64 * 128; i += 128) sB[i] = (uint8_t)in[i % 32];
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  tc_fence_before();
  __syncthreads();
  tc_fence_after();
  uint32_t tmem = slot;
  uint32_t v[4] = {in[threadIdx.x], in[threadIdx.x] + 1, in[threadIdx.x] + 2, in[threadIdx.x] + 3};
  tc_st_32x32b_x4(tmem + ((warp * 32) << 16) + 32, v);
  if (threadIdx.x == 0) {
    uint32_t idesc = (1u << 4) | (0u << 7) | (0u << 10) | (8u << 17) | (8u << 24);
    tc_mma_f8(tmem, make_desc_sm100(sA, 16, 1024), make_desc_sm100(sB, 16, 1024), idesc, 0);
    tc_commit(&bar);
  }
  mbar_wait(&bar, 0);
  tc_fence_after();
  uint32_t r[8];
  tc_ld_32x32b_x8(tmem + ((warp * 32) << 16), r);
  for (int j = 0; j < 8; ++j) out[threadIdx.x * 8 + j] = r[j];
  tc_fence_before();
  __syncthreads();
  if (warp == 0) tmem_dealloc(tmem, 64);
}

template __global__ void gemm_tcgen05_f16<64, 3>(const __grid_constant__ CUtensorMap, const __grid_constant__ CUtensorMap, float*, int, int, int);
template __global__ void gemm_tcgen05_f16<128, 4>(const __grid_constant__ CUtensorMap, const __grid_constant__ CUtensorMap, float*, int, int, int);
template __global__ void gemm_tcgen05_f16<256, 2>(const __grid_constant__ CUtensorMap, const __grid_constant__ CUtensorMap, float*, int, int, int);

}}  // namespace ptx2py::sm100
