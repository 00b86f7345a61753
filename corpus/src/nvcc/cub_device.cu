// CUB device-wide algorithms (DeviceRadixSort, DeviceReduce, DeviceScan, DeviceSegmentedReduce, DeviceSelect):
// host entry points instantiate the dispatch kernels.
#include <cub/cub.cuh>
#include <stdint.h>

// Host entry points: instantiate the device-wide kernels (DeviceRadixSort, DeviceReduce, DeviceScan).
void host_radix_sort(void* tmp, size_t& tmp_bytes, const uint32_t* kin, uint32_t* kout, const float* vin, float* vout, int n) {
  cub::DeviceRadixSort::SortPairs(tmp, tmp_bytes, kin, kout, vin, vout, n);
}
void host_reduce(void* tmp, size_t& tmp_bytes, const float* in, float* out, int n) {
  cub::DeviceReduce::Sum(tmp, tmp_bytes, in, out, n);
}
void host_scan(void* tmp, size_t& tmp_bytes, const int* in, int* out, int n) {
  cub::DeviceScan::InclusiveSum(tmp, tmp_bytes, in, out, n);
}
void host_segmented_max(void* tmp, size_t& tmp_bytes, const float* in, float* out, int segs, const int* offsets) {
  cub::DeviceSegmentedReduce::Max(tmp, tmp_bytes, in, out, segs, offsets, offsets + 1);
}
void host_select_flagged(void* tmp, size_t& tmp_bytes, const int* in, const char* flags, int* out, int* nsel, int n) {
  cub::DeviceSelect::Flagged(tmp, tmp_bytes, in, flags, out, nsel, n);
}
