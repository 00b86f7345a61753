// Minimal CUDA prelude for clang -x cuda -nocudainc -nocudalib (no CUDA headers needed).
#pragma once
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
typedef unsigned long size_t;

__device__ __forceinline__ unsigned tid_x() { return __nvvm_read_ptx_sreg_tid_x(); }
__device__ __forceinline__ unsigned tid_y() { return __nvvm_read_ptx_sreg_tid_y(); }
__device__ __forceinline__ unsigned ctaid_x() { return __nvvm_read_ptx_sreg_ctaid_x(); }
__device__ __forceinline__ unsigned ctaid_y() { return __nvvm_read_ptx_sreg_ctaid_y(); }
__device__ __forceinline__ unsigned ntid_x() { return __nvvm_read_ptx_sreg_ntid_x(); }
__device__ __forceinline__ unsigned nctaid_x() { return __nvvm_read_ptx_sreg_nctaid_x(); }
__device__ __forceinline__ void sync_threads() { __syncthreads(); }
