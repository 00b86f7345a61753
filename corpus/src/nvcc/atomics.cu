// Atomic operations of many flavours, including CAS loops and scoped atomics.
#include <cuda/atomic>
#include <stdint.h>

__device__ float atomic_max_float(float* addr, float val) {
  int* a = reinterpret_cast<int*>(addr);
  int old = *a, assumed;
  do {
    assumed = old;
    if (__int_as_float(assumed) >= val) break;
    old = atomicCAS(a, assumed, __float_as_int(val));
  } while (assumed != old);
  return __int_as_float(old);
}

extern "C" __global__ void atomic_zoo(int* ints, unsigned long long* u64, float* floats, double* doubles, const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  atomicAdd(&ints[0], 1);
  atomicSub(&ints[1], 1);
  atomicMax(&ints[2], i);
  atomicMin(&ints[3], -i);
  atomicAnd(&ints[4], ~(1 << (i & 31)));
  atomicOr(&ints[5], 1 << (i & 31));
  atomicXor(&ints[6], i);
  atomicExch(&ints[7], i);
  atomicInc((unsigned*)&ints[8], 1000u);
  atomicDec((unsigned*)&ints[9], 1000u);
  atomicAdd(&u64[0], (unsigned long long)i);
  atomicCAS(&u64[1], 0ull, (unsigned long long)i);
  atomicAdd(&floats[0], x[i]);
  atomic_max_float(&floats[1], x[i]);
  atomicAdd(&doubles[0], (double)x[i]);
  atomicAdd_block(&ints[10], 1);
  atomicAdd_system(&ints[11], 1);
}

extern "C" __global__ void spin_lock_counter(int* lock, int* counter) {
  if (threadIdx.x == 0) {
    while (atomicCAS(lock, 0, 1) != 0) { __nanosleep(32); }
    __threadfence();
    *counter += 1;
    __threadfence();
    atomicExch(lock, 0);
  }
}

extern "C" __global__ void libcu_atomic_ref(int* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    cuda::atomic_ref<int, cuda::thread_scope_device> ref(data[i % 16]);
    ref.fetch_add(1, cuda::memory_order_relaxed);
    cuda::atomic_ref<int, cuda::thread_scope_block> ref2(data[16 + i % 16]);
    int expected = 0;
    ref2.compare_exchange_strong(expected, i, cuda::memory_order_acq_rel);
  }
}
