"""Tensor maps (CUtensorMap) for the engine's TMA, and the shared-memory swizzle patterns.

A tensor map is built from the same `cuTensorMapEncodeTiled` request as the GPU path
(launch.plan.tensor_map_request: element type and size, dims and byte strides innermost first,
box, element strides, interleave, swizzle, OOB fill). Its 128-byte kernel parameter holds an
opaque handle (MAGIC, index) the TMA instructions look up, so a kernel that passes anything but a
tensor map to cp.async.bulk.tensor is refused.

Tile mode (PTX ISA, "Tensor Access Modes: Tiled Mode" and "Bounding Box"): the box at
coordinates c (innermost first, in elements) covers c[i] + j*elementStride[i] for
j < ceil(box[i] / elementStride[i]); elements outside the tensor read as zero (OOB fill NONE;
NAN_REQUEST_ZERO_FMA reads NaN) and are not written by stores. In shared memory the box is
packed, innermost dimension contiguous.

Swizzle (PTX ISA, "Tensor Swizzling Modes" and, for wgmma, "Shared Memory Matrix Layout"): the
16-byte chunk index within a span of 32/64/128 bytes (address bits [4, 4+B)) is XOR-ed with the
row index within the repeating pattern (address bits [7, 7+B)), B = 1/2/3 for 32B/64B/128B,
computed on the shared-memory address itself (hence the alignment the ISA requires: the
destination aligned to the pattern's repeat, 256/512/1024 bytes). This is CUTLASS's
Swizzle<B, 4, 3>.
"""

from __future__ import annotations

import math

import numpy as np

from .errors import EmulationError, NotEmulated

MAGIC = b"PTX2PYTM"
SWIZZLE_BITS = {0: 0, 1: 1, 2: 2, 3: 3}          # CU_TENSOR_MAP_SWIZZLE_{NONE,32B,64B,128B}
SWIZZLE_SPAN = {0: None, 1: 32, 2: 64, 3: 128}
OOB_NAN = 1                                      # CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA


def swizzle(addrs: np.ndarray, mode: int) -> np.ndarray:
    """Shared addresses after the swizzle of `mode` (0 none, 1 32B, 2 64B, 3 128B)."""
    b = SWIZZLE_BITS[mode]
    if not b:
        return addrs
    mask = np.int64(((1 << b) - 1) << 4)
    return addrs ^ ((addrs >> np.int64(3)) & mask)


class TensorMap:
    def __init__(self, req: dict, region):
        if req["interleave"] != 0:
            raise NotEmulated(f"tensor map with interleave {req['interleave']}")
        self.req = req
        self.rank = int(req["rank"])
        self.esize = int(req["elem_size"])
        self.dims = [int(d) for d in req["global_dim"]]
        self.strides = [self.esize] + [int(s) for s in req["global_strides"]]
        self.box = [int(b) for b in req["box_dim"]]
        self.estrides = [int(e) for e in req["element_strides"]]
        self.swizzle = int(req["swizzle"])
        self.oob_nan = int(req.get("oob_fill", 0)) == OOB_NAN
        self.region = region
        self.base = int(req["global_address"]) - region.base
        self.shape = [math.ceil(b / e) for b, e in zip(self.box, self.estrides)]   # innermost first
        if any(s % 16 for s in self.strides[1:]):
            raise EmulationError(f"tensor map global strides {self.strides[1:]} are not multiples of 16 bytes")
        span = SWIZZLE_SPAN[self.swizzle]
        if span is not None and self.shape[0] * self.esize > span:
            raise EmulationError(f"tensor map box inner dimension {self.shape[0] * self.esize} B exceeds "
                                 f"the {span}-byte swizzle span")

    @property
    def box_bytes(self) -> int:
        return int(np.prod(self.shape)) * self.esize

    def _elements(self, coords):
        """(global byte offsets, in-bounds mask) of the box elements, smem order (innermost fastest)."""
        steps = self._box_steps()
        offs = np.zeros(steps[0].shape, np.int64)
        ok = np.ones(steps[0].shape, bool)
        for i in range(self.rank):
            x = int(coords[i]) + steps[i]
            ok &= (x >= 0) & (x < self.dims[i])
            offs += x * self.strides[i]
        return offs + self.base, ok

    def _box_steps(self) -> list:
        """Per dimension, each box element's element offset from the box's corner (smem order),
        the same for every copy through the map: computed once."""
        steps = getattr(self, "_steps", None)
        if steps is None:
            grids = np.meshgrid(*[np.arange(n) for n in reversed(self.shape)], indexing="ij")
            steps = self._steps = [grids[self.rank - 1 - i].astype(np.int64).reshape(-1) * self.estrides[i]
                                   for i in range(self.rank)]
        return steps

    def read_box(self, coords) -> tuple[np.ndarray, bool]:
        """The box's bytes in packed shared order, and whether it read outside the buffer."""
        offs, ok = self._elements(coords)
        data = self.region.data
        idx = offs[:, None] + np.arange(self.esize)
        inside = ok & (offs >= 0) & (offs + self.esize <= data.size)
        out = np.zeros((len(offs), self.esize), np.uint8)
        if self.oob_nan:
            out[~ok] = np.frombuffer(_nan_bytes(self.req["data_type"], self.esize), np.uint8)
        out[inside] = data[idx[inside]]
        return out.reshape(-1), bool((ok & ~inside).any())

    def write_box(self, coords, raw: np.ndarray) -> bool:
        offs, ok = self._elements(coords)
        data = self.region.data
        inside = ok & (offs >= 0) & (offs + self.esize <= data.size)
        rows = raw.reshape(-1, self.esize)
        data[offs[inside][:, None] + np.arange(self.esize)] = rows[inside]
        return bool((ok & ~inside).any())

    def shared_chunks(self, dst: int) -> np.ndarray:
        """Shared addresses of the box's 16-byte chunks (packed order) after the swizzle."""
        n = self.box_bytes
        if n % 16:
            raise EmulationError(f"tensor map box of {n} bytes is not a multiple of 16")
        return swizzle(dst + np.arange(0, n, 16, dtype=np.int64), self.swizzle)


def _nan_bytes(data_type: int, esize: int) -> bytes:
    return {2: b"\x00\x7e", 4: b"\x00\x00\xc0\x7f", 8: b"\x00" * 6 + b"\xf8\x7f"}.get(esize, b"\xff" * esize)


# The engine's byte layout of a tensor map built in device memory with tensormap.replace (the
# hardware's CUtensorMap format is opaque; a kernel only ever writes it with tensormap.replace and
# reads it through TMA, so any fixed layout is faithful): field -> (offset, bytes per element).
FIELDS = {"global_address": (0, 8), "rank": (8, 4), "elemtype": (12, 4), "swizzle_mode": (16, 4),
          "interleave_layout": (20, 4), "fill_mode": (24, 4), "global_dim": (32, 4), "box_dim": (52, 4),
          "element_stride": (72, 4), "global_stride": (96, 8)}


def request_from_fields(raw: np.ndarray) -> dict | None:
    """The cuTensorMapEncodeTiled-style request a device-built map holds (None: not one)."""
    from ptx2py.launch.plan import TMA_ELEM_BYTES

    raw = np.asarray(raw, np.uint8)

    def field(name, i=0):
        off, size = FIELDS[name]
        return int(raw[off + i * size: off + (i + 1) * size].view(np.uint64 if size == 8 else np.uint32)[0])
    rank = field("rank") + 1
    addr = field("global_address")
    dims = [field("global_dim", i) for i in range(rank)]
    if not addr or not all(dims) or rank > 5 or field("elemtype") not in TMA_ELEM_BYTES:
        return None
    return {"data_type": field("elemtype"), "rank": rank, "global_address": addr, "global_dim": dims,
            "global_strides": [field("global_stride", i) for i in range(rank - 1)],
            "box_dim": [field("box_dim", i) for i in range(rank)],
            "element_strides": [field("element_stride", i) or 1 for i in range(rank)],
            "interleave": field("interleave_layout"), "swizzle": field("swizzle_mode"),
            "oob_fill": field("fill_mode"), "elem_size": TMA_ELEM_BYTES[field("elemtype")]}


class TensorMaps:
    """The launch's tensor maps; handle() gives the 128 parameter bytes of one."""

    def __init__(self):
        self.maps: list[TensorMap] = []

    def add(self, tmap: TensorMap) -> bytes:
        self.maps.append(tmap)
        return (MAGIC + np.array([len(self.maps) - 1], np.uint64).tobytes()).ljust(128, b"\0")

    def from_bytes(self, raw: np.ndarray, globals_=None) -> TensorMap | None:
        """The map of 128 parameter/memory bytes: a launch-built handle, or (with the launch's
        global regions) a map built on the device with tensormap.replace."""
        head = bytes(np.asarray(raw, np.uint8)[:16])
        if head[:8] == MAGIC:
            i = int(np.frombuffer(head[8:16], np.uint64)[0])
            return self.maps[i] if i < len(self.maps) else None
        req = request_from_fields(raw) if globals_ is not None else None
        if req is None:
            return None
        idx, _ = globals_.locate(np.array([req["global_address"]], np.uint64), 1)
        if idx[0] < 0:
            raise EmulationError(f"a device-built tensor map's global address {req['global_address']:#x} "
                                 "is outside every buffer")
        return TensorMap(req, globals_.regions[int(idx[0])])


def tensor_maps_of(machine) -> TensorMaps:
    maps = getattr(machine, "tensor_maps", None)
    if maps is None:
        maps = machine.tensor_maps = TensorMaps()
    return maps
