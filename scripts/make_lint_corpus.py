"""A fresh PTX corpus for lint's whole-file differential (lint/filediff.py), compiled by nvcc from
CUDA's own headers: every device function declared in cuda_fp16.h, cuda_bf16.h and cuda_fp8.h (one
kernel per overload, found by reading the headers), the __shfl*/__reduce*/__match*/vote intrinsics,
atomics of every width and scope, libcu++ cuda::atomic_ref / cuda::barrier / cuda::pipeline,
cooperative groups, CUB block/warp algorithms and Thrust, each for several targets, with -G and
-lineinfo. The PTX is written under --out (it is large and never committed); the manifest
(corpus/lint-fresh/manifest.json) records what was built with which nvcc.

    python scripts/make_lint_corpus.py --out /tmp/lint-fresh            # everything (minutes)
    python scripts/make_lint_corpus.py --out /tmp/lint-fresh --quick    # one target, no -G
    python scripts/lint_file_differential.py /tmp/lint-fresh/ptx        # then judge it

A header function whose wrapper does not compile for a target (an sm_90-only intrinsic on sm_75) is
dropped for that target only; the manifest counts the kernels each file holds.

--numba and --cute add the Python producers (scripts/lint_corpus_python.py: numba-cuda and CuTe DSL
kernels, compiled without a GPU); with --no-nvcc they run alone and the manifest defaults to
corpus/lint-fresh/manifest-python.json, leaving nvcc's untouched.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = ROOT / "corpus" / "lint-fresh" / "manifest.json"
PYTHON_MANIFEST = ROOT / "corpus" / "lint-fresh" / "manifest-python.json"
TARGETS = ("sm_75", "sm_80", "sm_90", "sm_90a", "sm_100a", "sm_120a")
FLAGS = {"O3": [], "lineinfo": ["-lineinfo"], "G": ["-G"]}
# every target optimized; -lineinfo and -G on two of them (each compile is seconds)
MATRIX = [(t, "O3") for t in TARGETS] + [(t, f) for t in ("sm_80", "sm_90a") for f in ("lineinfo", "G")]
QUICK_MATRIX = [("sm_90a", "O3"), ("sm_90a", "lineinfo")]


def compilers() -> dict[str, Path]:
    """nvcc on PATH and pip's nvidia-cuda-nvcc (another CUDA release: another PTX version)."""
    found = {}
    path = shutil.which("nvcc")
    if path:
        found[nvcc_version(path)] = nvcc_home(path) / "nvcc"
    try:
        import nvidia

        for base in nvidia.__path__:
            p = Path(base) / "cu13" / "bin" / "nvcc"
            if p.is_file():
                found.setdefault(nvcc_version(str(p)), p)
    except ImportError:
        pass
    return found


def nvcc_home(nvcc: str) -> Path:
    """The folder nvcc really runs from (PATH may hold a wrapper script)."""
    out = subprocess.run([nvcc, "--dryrun", "-ptx", "x.cu"], capture_output=True, text=True).stderr
    m = re.search(r"_HERE_=(\S+)", out)
    return Path(m.group(1)) if m else Path(nvcc).resolve().parent


def cccl_include() -> list[str]:
    """CUB, Thrust and libcu++ (pip's nvcc ships without them: take the CUDA toolkit's)."""
    path = shutil.which("nvcc")
    cccl = nvcc_home(path).parent / "include" / "cccl" if path else None
    return ["-I", str(cccl)] if cccl and cccl.is_dir() else []

# --- header functions, one wrapper kernel each ------------------------------------------------

_DECL = re.compile(r"^\s*(__CUDA_(?:HOSTDEVICE_)?(?:FP16|BF16|FP8)_DECL__)\s+([^;{()]*?)\s*\b(\w+)\s*\(([^)]*)\)\s*;",
                   re.M | re.S)


def header_functions(header: Path) -> list[tuple[str, str, list[str]]]:
    """(return type, name, parameter types) of each function the header declares."""
    text = re.sub(r"/\*.*?\*/|//[^\n]*", " ", header.read_text(), flags=re.S)
    found = []
    for _, ret, name, params in _DECL.findall(text):
        ret = " ".join(ret.replace("static", "").split())
        if "template" in ret or "operator" in name:
            continue
        types = []
        for p in (x.strip() for x in params.split(",")):
            if not p or p == "void":
                continue
            p = re.sub(r"\s*=.*$", "", p)
            m = re.match(r"^(.*?)([\w]+)$", p)
            ptype = (m.group(1) if m and m.group(1).strip() else p).replace("const", " ").strip()
            types.append(" ".join(ptype.split()))
        found.append((ret, name, types))
    return found


def _arg(ptype: str, j: int) -> str:
    """The argument expression: read from `in`; a pointer into `out` (global memory, as __ldg,
    __stcs ... expect); an enum (saturation, fp8 interpretation) from a bit of `in`."""
    if ptype.endswith("*"):
        return f"reinterpret_cast<{ptype[:-1].strip()}*>(out + 16 * {j + 1})"
    if ptype.startswith("__nv_") and ptype.endswith("_t") and "storage" not in ptype:
        return f"static_cast<{ptype}>(in[{j}] & 1)"
    return f"*reinterpret_cast<const {ptype}*>(in + 16 * {j})"


def header_source(includes: list[str], functions) -> tuple[str, list[str]]:
    """One wrapper kernel per function, then one kernel calling them all: inlined into one body,
    the intrinsics' inline-asm blocks re-declare the same names with other types in nested and
    sibling blocks (what lint must scope right)."""
    lines = [f"#include <{h}>" for h in includes]
    names, calls = [], []
    for k, (ret, name, types) in functions:  # k: the function's index in the header (kept when others drop)
        kernel = f"k{k}_{name}"
        args = [_arg(t, j) for j, t in enumerate(types)]
        call = f"{name}({', '.join(args)})"
        store = f"*reinterpret_cast<{ret}*>(out) = {call};" if ret != "void" else f"{call};"
        lines += [f"__global__ void {kernel}(const unsigned char* in, unsigned char* out) {{", f"  {store}", "}"]
        calls.append(f"  {{ {store.replace('(out)', f'(out + 16 * {k})', 1)} }}  // {kernel}")
        names.append(kernel)
    lines += ["__global__ void all_in_one(const unsigned char* in, unsigned char* out) {", *calls, "}"]
    return "\n".join(lines) + "\n", names


# --- hand-written sources: intrinsics, atomics, libcu++, cooperative groups, CUB, Thrust --------

WARP = r"""
#include <cuda_fp16.h>
__global__ void warp(int* o, unsigned* u, float* f, long long* l, double* d, __half2* h, unsigned mask) {
  int i = threadIdx.x, v = o[i]; unsigned uv = u[i]; float fv = f[i]; long long lv = l[i]; double dv = d[i];
  o[i] = __shfl_sync(mask, v, 3) + __shfl_up_sync(mask, v, 1) + __shfl_down_sync(mask, v, 2, 16)
       + __shfl_xor_sync(mask, v, 4, 8);
  f[i] = __shfl_sync(mask, fv, 1) + __shfl_xor_sync(mask, fv, 2);
  l[i] = __shfl_down_sync(mask, lv, 1); d[i] = __shfl_up_sync(mask, dv, 1);
  h[i] = __shfl_xor_sync(mask, h[i], 1);
  u[i] = __match_any_sync(mask, uv); int pred; u[i + 32] = __match_all_sync(mask, lv, &pred);
  o[i + 64] = pred + __all_sync(mask, v) + __any_sync(mask, v) + __popc(__ballot_sync(mask, v)) + __activemask();
#if __CUDA_ARCH__ >= 800
  u[i + 64] = __reduce_add_sync(mask, uv) + __reduce_min_sync(mask, uv) + __reduce_max_sync(mask, uv)
            + __reduce_and_sync(mask, uv) + __reduce_or_sync(mask, uv) + __reduce_xor_sync(mask, uv);
  o[i + 96] = __reduce_add_sync(mask, v) + __reduce_min_sync(mask, v) + __reduce_max_sync(mask, v);
#endif
  __syncwarp(mask);
}
"""

_ATOMIC_TYPES = ("int", "unsigned int", "unsigned long long int", "long long int", "float", "double",
                 "__half", "__half2", "__nv_bfloat16", "__nv_bfloat162")
_ATOMIC_OPS = {"atomicAdd": _ATOMIC_TYPES, "atomicSub": ("int", "unsigned int"),
               "atomicExch": ("int", "unsigned int", "unsigned long long int", "float"),
               "atomicMin": ("int", "unsigned int", "unsigned long long int", "long long int"),
               "atomicMax": ("int", "unsigned int", "unsigned long long int", "long long int"),
               "atomicInc": ("unsigned int",), "atomicDec": ("unsigned int",),
               "atomicAnd": ("int", "unsigned int", "unsigned long long int"),
               "atomicOr": ("int", "unsigned int", "unsigned long long int"),
               "atomicXor": ("int", "unsigned int", "unsigned long long int")}


def atomics_source() -> str:
    lines = ["#include <cuda_fp16.h>", "#include <cuda_bf16.h>"]
    k = 0
    for op, types in _ATOMIC_OPS.items():
        for t in types:
            for scope in ("", "_block", "_system"):
                if scope and t.startswith("__"):
                    continue  # the scoped variants take the built-in types only
                lines.append(f"__global__ void a{k}({t}* p, {t}* q) {{ q[threadIdx.x] = {op}{scope}(p, q[1]);"
                             f" {op}{scope}(p + 1, q[2]); }}")
                k += 1
    for t in ("int", "unsigned int", "unsigned long long int", "unsigned short int"):
        for scope in ("", "_block", "_system"):
            lines.append(f"__global__ void cas{k}({t}* p) {{ p[1] = atomicCAS{scope}(p, p[2], p[3]); }}")
            k += 1
    return "\n".join(lines) + "\n"


LIBCUXX = r"""
#include <cuda/atomic>
#include <cuda/barrier>
#include <cuda/pipeline>
#include <cuda/std/atomic>
template <cuda::thread_scope S, class T>
__device__ void refs(T* p, T v, T* out) {
  cuda::atomic_ref<T, S> r(*p);
  out[0] = r.load(cuda::std::memory_order_relaxed) + r.load(cuda::std::memory_order_acquire)
         + r.load(cuda::std::memory_order_seq_cst);
  r.store(v, cuda::std::memory_order_release); r.store(v, cuda::std::memory_order_relaxed);
  out[1] = r.fetch_add(v, cuda::std::memory_order_acq_rel) + r.fetch_add(v) + r.exchange(v);
  T e = v; out[2] = r.compare_exchange_strong(e, v) + r.compare_exchange_weak(e, v, cuda::std::memory_order_acquire);
  out[3] = r.fetch_min(v) + r.fetch_max(v, cuda::std::memory_order_release);
}
template <cuda::thread_scope S, class T>
__device__ void bits(T* p, T v, T* out) {
  cuda::atomic_ref<T, S> r(*p);
  out[4] = r.fetch_and(v) + r.fetch_or(v, cuda::std::memory_order_relaxed) + r.fetch_xor(v);
  out[5] = r.fetch_sub(v, cuda::std::memory_order_seq_cst);
}
#define SCOPES(F, T) \
  __global__ void F##_##T##_sys(T* p, T v, T* o) { F<cuda::thread_scope_system>(p, v, o); } \
  __global__ void F##_##T##_dev(T* p, T v, T* o) { F<cuda::thread_scope_device>(p, v, o); } \
  __global__ void F##_##T##_blk(T* p, T v, T* o) { F<cuda::thread_scope_block>(p, v, o); } \
  __global__ void F##_##T##_thr(T* p, T v, T* o) { F<cuda::thread_scope_thread>(p, v, o); }
typedef unsigned long long ull; typedef long long ll; typedef unsigned int uint;
SCOPES(refs, int) SCOPES(refs, uint) SCOPES(refs, ull) SCOPES(refs, ll) SCOPES(refs, float) SCOPES(refs, double)
SCOPES(bits, int) SCOPES(bits, uint) SCOPES(bits, ull)
__global__ void fences() {
  cuda::std::atomic_thread_fence(cuda::std::memory_order_seq_cst);
  cuda::atomic_thread_fence(cuda::std::memory_order_acquire, cuda::thread_scope_block);
  cuda::atomic_thread_fence(cuda::std::memory_order_release, cuda::thread_scope_device);
  cuda::atomic_thread_fence(cuda::std::memory_order_acq_rel, cuda::thread_scope_system);
}
__global__ void barriers(float* g, int n) {
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  __shared__ float buf[256];
  if (threadIdx.x == 0) init(&bar, blockDim.x);
  __syncthreads();
  cuda::memcpy_async(buf, g, sizeof(float) * 256, bar);
  bar.arrive_and_wait();
  auto t = bar.arrive(); bar.wait(cuda::std::move(t));
  g[threadIdx.x] = buf[threadIdx.x];
  bar.arrive_and_drop();
}
__global__ void pipelines(const float* g, float* o, int n) {
  __shared__ float buf[2][128];
  auto pipe = cuda::make_pipeline();
  for (int s = 0; s < 2; ++s) {
    pipe.producer_acquire();
    cuda::memcpy_async(&buf[s][threadIdx.x], &g[s * 128 + threadIdx.x], sizeof(float), pipe);
    pipe.producer_commit();
  }
  for (int s = 0; s < 2; ++s) {
    pipe.consumer_wait(); o[s * 128 + threadIdx.x] = buf[s][threadIdx.x]; pipe.consumer_release();
  }
}
"""

COOPERATIVE = r"""
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
#include <cooperative_groups/memcpy_async.h>
namespace cg = cooperative_groups;
__global__ void groups(int* a, float* f, unsigned* u) {
  cg::thread_block block = cg::this_thread_block();
  cg::grid_group grid = cg::this_grid();
  auto tile = cg::tiled_partition<32>(block);
  auto t8 = cg::tiled_partition<8>(block);
  int v = a[grid.thread_rank()];
  a[0] = cg::reduce(tile, v, cg::plus<int>()) + cg::reduce(t8, v, cg::greater<int>());
  a[1] = cg::inclusive_scan(tile, v) + cg::exclusive_scan(t8, v, cg::bit_xor<int>());
  f[0] = cg::reduce(tile, f[1], cg::plus<float>());
  u[0] = tile.ballot(v > 0) + tile.shfl(v, 0) + tile.shfl_down(v, 1) + t8.any(v) + t8.all(v) + tile.match_any(v);
  auto active = cg::coalesced_threads();
  a[2] = active.thread_rank() + active.num_threads() + cg::reduce(active, v, cg::plus<int>());
  block.sync(); tile.sync(); grid.sync();
  __shared__ int buf[128];
  cg::memcpy_async(block, buf, a, sizeof(int) * 128); cg::wait(block);
  a[3] = buf[block.thread_rank()];
}
#if __CUDA_ARCH__ >= 900
__global__ void __cluster_dims__(2, 1, 1) clusters(int* a) {
  cg::cluster_group cluster = cg::this_cluster();
  __shared__ int s[32];
  int* remote = cluster.map_shared_rank(s, (cluster.block_rank() + 1) % 2);
  s[threadIdx.x % 32] = threadIdx.x; cluster.sync();
  a[threadIdx.x] = remote[threadIdx.x % 32] + cluster.num_blocks() + cluster.dim_blocks().x;
}
#endif
"""

CUB = r"""
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_load.cuh>
#include <cub/block/block_store.cuh>
#include <cub/block/block_histogram.cuh>
#include <cub/warp/warp_reduce.cuh>
#include <cub/warp/warp_scan.cuh>
struct Larger {
  template <class T> __device__ T operator()(const T& a, const T& b) const { return a > b ? a : b; }
};
template <class T>
__global__ void block_ops(T* d, int* keys) {
  using Reduce = cub::BlockReduce<T, 128>; using Scan = cub::BlockScan<T, 128>;
  using Sort = cub::BlockRadixSort<int, 128, 4>;
  __shared__ typename Reduce::TempStorage r; __shared__ typename Scan::TempStorage s;
  __shared__ typename Sort::TempStorage so;
  T v = d[threadIdx.x];
  T sum = Reduce(r).Sum(v); __syncthreads();
  T mx = Reduce(r).Reduce(v, Larger()); __syncthreads();
  T pre; Scan(s).ExclusiveSum(v, pre); __syncthreads();
  int k[4]; cub::LoadDirectBlocked(threadIdx.x, keys, k);
  Sort(so).Sort(k); cub::StoreDirectStriped<128>(threadIdx.x, keys, k);
  d[threadIdx.x] = sum + mx + pre;
}
template <class T>
__global__ void warp_ops(T* d) {
  using WR = cub::WarpReduce<T>; using WS = cub::WarpScan<T>;
  __shared__ typename WR::TempStorage r[4]; __shared__ typename WS::TempStorage s[4];
  int w = threadIdx.x / 32; T v = d[threadIdx.x], inc;
  T sum = WR(r[w]).Sum(v); WS(s[w]).InclusiveSum(v, inc);
  d[threadIdx.x] = sum + inc;
}
__global__ void histogram(unsigned char* d, unsigned* h) {
  using H = cub::BlockHistogram<unsigned char, 128, 4, 256>;
  __shared__ typename H::TempStorage t; __shared__ unsigned bins[256];
  unsigned char items[4]; cub::LoadDirectBlocked(threadIdx.x, d, items);
  H(t).Histogram(items, bins); __syncthreads(); h[threadIdx.x] = bins[threadIdx.x];
}
template __global__ void block_ops<int>(int*, int*);
template __global__ void block_ops<float>(float*, int*);
template __global__ void block_ops<double>(double*, int*);
template __global__ void block_ops<unsigned long long>(unsigned long long*, int*);
template __global__ void warp_ops<int>(int*);
template __global__ void warp_ops<float>(float*);
template __global__ void warp_ops<long long>(long long*);
"""

THRUST = r"""
#include <thrust/device_vector.h>
#include <thrust/sort.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>
#include <thrust/transform.h>
#include <thrust/unique.h>
#include <thrust/functional.h>
void run(thrust::device_vector<int>& a, thrust::device_vector<float>& f) {
  thrust::sort(a.begin(), a.end());
  thrust::sort(f.begin(), f.end(), thrust::greater<float>());
  int s = thrust::reduce(a.begin(), a.end());
  thrust::inclusive_scan(f.begin(), f.end(), f.begin());
  thrust::transform(a.begin(), a.end(), a.begin(), thrust::negate<int>());
  a.erase(thrust::unique(a.begin(), a.end()), a.end());
  (void)s;
}
"""

HAND = {"warp": WARP, "libcuxx": LIBCUXX, "cooperative": COOPERATIVE, "cub": CUB}
HEAVY = {"thrust": THRUST}  # one target and flag set: each compile takes minutes

# --- compiling --------------------------------------------------------------------------------


def nvcc_version(nvcc: str = "nvcc") -> str:
    out = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"release ([\d.]+)", out)
    return m.group(1) if m else "unknown"


def _failing_kernels(stderr: str, source: str) -> set[str]:
    """The wrapper kernels nvcc's errors point into (by the source line)."""
    lines = source.splitlines()
    bad = set()
    for n in re.findall(r"\.cu\((\d+)\): error", stderr):
        tagged = re.search(r"// (k\d+_\w+)$", lines[int(n) - 1]) if int(n) <= len(lines) else None
        if tagged:
            bad.add(tagged.group(1))
            continue
        for i in range(int(n) - 1, -1, -1):
            m = re.match(r"__global__ void (k\d+_\w+)\(", lines[i]) if i < len(lines) else None
            if m:
                bad.add(m.group(1))
                break
    return bad


def compile_one(src: Path, out: Path, target: str, flags: list[str], header_fns=None, includes=(),
                nvcc: str = "nvcc") -> dict:
    """nvcc -ptx one source; header wrappers that do not compile for this target are dropped."""
    out.parent.mkdir(parents=True, exist_ok=True)
    arch = ["-arch", target]
    dropped: set[str] = set()
    for _ in range(6):
        if header_fns is not None:
            keep = [(k, f) for k, f in enumerate(header_fns) if f"k{k}_{f[1]}" not in dropped]
            text, _names = header_source(list(includes), keep)
            src.write_text(text)
        r = subprocess.run(["nice", "-n", "10", str(nvcc), "-ptx", "-std=c++17", *arch, *flags, str(src), "-o",
                            str(out)], capture_output=True, text=True)
        if r.returncode == 0:
            return {"ok": True, "dropped": sorted(dropped)}
        bad = _failing_kernels(r.stderr, src.read_text()) if header_fns is not None else set()
        if not bad - dropped:
            return {"ok": False, "error": r.stderr[-600:]}
        dropped |= bad
    return {"ok": False, "error": "too many rounds"}


def build(out_dir: Path, quick: bool, jobs: int, reuse: str = "") -> dict:
    """``reuse``: "skip" keeps PTX already under out_dir (a run cut short goes on where it stopped);
    "only" records what is there and compiles nothing."""
    matrix = QUICK_MATRIX if quick else MATRIX
    headers = {"fp16": "cuda_fp16.h", "bf16": "cuda_bf16.h", "fp8": "cuda_fp8.h"}
    jobs_list = []
    for release, nvcc in compilers().items():
        include = nvcc.parent.parent / "include"
        for name, header in headers.items():
            fns = header_functions(include / header)
            jobs_list += [(release, nvcc, name, t, fl, fns, [header]) for t, fl in matrix]
        for name in HAND:
            jobs_list += [(release, nvcc, name, t, fl, None, ()) for t, fl in matrix]
        if not quick:
            jobs_list += [(release, nvcc, name, "sm_90a", "O3", None, ()) for name in HEAVY]

    def one(job):
        release, nvcc, name, target, fl, fns, hs = job
        tag = f"{name}.{target}.{fl}"
        src = out_dir / "src" / f"nvcc{release}" / f"{tag}.cu"
        src.parent.mkdir(parents=True, exist_ok=True)
        if fns is None:
            src.write_text({**HAND, **HEAVY}[name])
        ptx = out_dir / "ptx" / f"nvcc{release}-{name}" / f"{tag}.ptx"
        flags = FLAGS[fl] + cccl_include()
        if reuse and ptx.is_file():
            result = {"ok": True, "dropped": [], "reused": True}
        elif reuse == "only":
            result = {"ok": False, "error": "not built (the run was cut short)"}
        else:
            result = compile_one(src, ptx, target, flags, fns, hs, str(nvcc))
        row = {"nvcc": release, "source": name, "target": target, "flags": fl, **result}
        if result["ok"]:
            data = ptx.read_bytes()
            row.update(ptx=str(ptx.relative_to(out_dir)), bytes=len(data), lines=data.count(b"\n"),
                       sha1=hashlib.sha1(data).hexdigest(), kernels=data.count(b".entry "),
                       version=re.search(rb"\.version (\S+)", data).group(1).decode())
            if fns is not None:
                row["header_functions"] = len(fns)
        return row

    with ThreadPoolExecutor(jobs) as pool:
        rows = list(pool.map(one, jobs_list))
    return {"compilers": {r: str(p) for r, p in compilers().items()}, "quick": quick, "files": rows}


def build_python(out: Path, numba: bool, cute: bool, sites: list[str]) -> list[dict]:
    """The numba-cuda and CuTe DSL rows (lint_corpus_python.py)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import lint_corpus_python as py

    py.add_sites(sites)
    return (py.build_numba(out) if numba else []) + (py.build_cute(out, sites) if cute else [])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True, help="folder for the sources and the PTX (outside the repository)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--manifest", help=f"default {MANIFEST} ({PYTHON_MANIFEST} with --no-nvcc)")
    ap.add_argument("--reuse", choices=("skip", "only"), default="",
                    help="skip: keep the PTX already under --out; only: record it, compile nothing")
    ap.add_argument("--no-nvcc", action="store_true", help="skip the nvcc part")
    ap.add_argument("--numba", action="store_true", help="add numba-cuda kernels (corpus/lint-fresh/numba_kernels.py)")
    ap.add_argument("--cute", action="store_true", help="add CuTe DSL kernels (corpus/lint-fresh/cute_kernels.py)")
    ap.add_argument("--site", action="append", default=[],
                    help="a pip --target folder holding numba-cuda / nvidia-cutlass-dsl (repeatable)")
    args = ap.parse_args()
    out = Path(args.out)
    if args.no_nvcc:
        manifest = {"compilers": {}, "quick": args.quick, "files": []}
    else:
        manifest = build(out, args.quick, args.jobs, args.reuse)
    manifest["files"] += build_python(out, args.numba, args.cute, args.site)
    path = Path(args.manifest or (PYTHON_MANIFEST if args.no_nvcc else MANIFEST))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    ok = [r for r in manifest["files"] if r["ok"]]
    producers = sorted({r.get("compiler", f"nvcc{r.get('nvcc')}") for r in manifest["files"]})
    print(f"{len(ok)}/{len(manifest['files'])} files, {sum(r['lines'] for r in ok)} lines,"
          f" {sum(r['kernels'] for r in ok)} kernels under {out / 'ptx'} ({', '.join(producers)})")
    for r in manifest["files"]:
        if not r["ok"]:
            who = r.get("compiler") or f"nvcc {r['nvcc']}"
            print(f"  failed: {who} {r['source']} {r['target']} {r['flags']}: {r['error'][-300:]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
