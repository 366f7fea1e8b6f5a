"""test_tile.py: the Python package (python/tile) on the CPU backend with NumPy: arguments in
order and consts by name, @types kernels, tuning, the standard library's flash_fwd against a
float64 reference, and the errors a caller meets (wrong dtype, count, layout, names).
    usage: python3 tests/python/test_tile.py SOURCE_DIR   (TILE_LIBRARY names libtile.so)"""
import atexit
import math
import os
import shutil
import sys
import tempfile

import numpy as np

root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
sys.path.insert(0, os.path.join(root, "python"))
import tile  # noqa: E402

from checks import check, finish, raises  # noqa: E402


rng = np.random.default_rng()
ctx = tile.Context("cpu")
check(tile.version() == "0.1.0" and ctx.backend == "cpu", f"version {tile.version()}, {ctx.device}")

raises(tile.TileError, lambda: tile.Context("cpu", device=1), "a device that does not exist",
       "has one device")

# a kernel from a string: scalars by type, consts by name, the grid from @grid
src = """
@types(T = [f32, f16])
@grid(cdiv(n, BLOCK))
kernel axpy(x: *T, y: *T, out: *T, a: f32, n: i32, const BLOCK: i32 = 64) {
    let i = program_id(0) * BLOCK + arange(0, BLOCK);
    let m = i < n;
    store(out + i, a * load(x + i, mask=m) + load(y + i, mask=m), mask=m);
}
"""
mod = ctx.load_string(src, "axpy.tile")
check(mod.kernels == ["axpy", "axpy_f16"], f"kernels {mod.kernels}")
for name, dt, tol in (("axpy", np.float32, 1e-6), ("axpy_f16", np.float16, 2e-3)):
    n = 1000
    x, y = rng.standard_normal(n).astype(dt), rng.standard_normal(n).astype(dt)
    out = np.full(n, np.nan, dt)
    mod[name](x, y, out, 2.5, n, BLOCK=128)
    ref = 2.5 * x.astype(np.float64) + y.astype(np.float64)
    err = np.abs(out - ref).max() / np.abs(ref).max()
    check(err < tol, f"{name} n={n}: max rel err {err:.2e}")

# views of one buffer lent once (out is a slice of the same array as x)
buf = rng.standard_normal(2048).astype(np.float32)
x, out = buf[:1000], buf[1000:2000]
y = np.ones(1000, np.float32)
ref = 3.0 * x.astype(np.float64) + 1
mod["axpy"](x, y, out, 3.0, 1000)
check(np.allclose(out, ref, rtol=1e-6, atol=1e-6), "arguments that are views of one buffer")

# errors
k = mod["axpy"]
raises(TypeError, lambda: k(x, y, out, 1.0), "too few arguments", "takes 5 arguments")
raises(TypeError, lambda: k(x.astype(np.float64), y, out, 1.0, 10), "wrong dtype", "expects elements of f32")


class GpuTensor:
    """What the package reads of a PyTorch tensor on GPU `dev` (no torch here)."""
    def __init__(self, a, dev):
        self.a, self.dtype, self.is_cuda, self.dev = a, "torch.float32", True, dev

    def data_ptr(self):
        return self.a.ctypes.data

    def element_size(self):
        return 4

    def numel(self):
        return self.a.size

    def is_contiguous(self):
        return True

    def get_device(self):
        return self.dev


raises(tile.TileError, lambda: k(GpuTensor(x, 0), y, out, 1.0, 10), "a GPU tensor on the CPU",
       "lives on GPU 0, the context's backend is cpu")
raises(tile.TileError, lambda: k(buf[::2], y, out, 1.0, 10), "not contiguous", "contiguous")
raises(TypeError, lambda: k(x, y, out, 1.0, 10, BLOK=64), "unknown const", "no const parameter 'BLOK'")
raises(TypeError, lambda: k(x, y, 1.0, out, 10), "pointer given a scalar", "expects an array")
out[:] = np.nan
k(x, y, out, np.float32(2.5), np.int64(n))
check(np.allclose(out, 2.5 * x + y, rtol=1e-6), "NumPy scalars as scalar arguments")
raises(tile.TileError, lambda: mod["nothere"], "no such kernel", "no kernel 'nothere'")
raises(tile.TileError, lambda: ctx.load_string("kernel k( {", "bad.tile"), "syntax error", "bad.tile:1:")
raises(tile.TileError, lambda: k(x, y, out, 1.0, 10, BLOCK=3), "bad const", "")

# tuning: the @tune space timed for this key, the choice used by the next launch
tsrc = """
@grid(cdiv(n, BLOCK))
@tune(BLOCK = [32, 64, 128])
@key(n: pow2)
kernel twice(x: *f32, y: *f32, n: i32, const BLOCK: i32 = 32) {
    let i = program_id(0) * BLOCK + arange(0, BLOCK);
    store(y + i, load(x + i, mask=i < n) * 2.0, mask=i < n);
}
"""
cache_dir = tempfile.mkdtemp(prefix="tile-py-test-")
atexit.register(shutil.rmtree, cache_dir, ignore_errors=True)  # passed, failed or raised
os.environ["TILE_CACHE_DIR"] = cache_dir  # the tuning cache of this run only
tw = ctx.load_string(tsrc, "twice.tile")["twice"]
xs = rng.standard_normal(1000).astype(np.float32)
ys = np.zeros_like(xs)
rep = tw.tune(xs, ys, 1000)
check(rep["best"] in ("BLOCK=32", "BLOCK=64", "BLOCK=128") and len(rep["results"]) == 3
      and rep["key"] == "n=1024;", f"tune: key {rep['key']} best {rep['best']} of {len(rep['results'])}")
ctx.set_tuning("cached")
tw(xs, ys, 1000)
check(np.array_equal(ys, xs * 2), "a launch after tuning (cached mode)")

# the standard library by name: flash_fwd, causal, GQA 4:2, against float64
b, h, hkv, s, d = 1, 4, 2, 77, 64
q = rng.uniform(-1, 1, (b, h, s, d)).astype(np.float16)
kk = rng.uniform(-1, 1, (b, hkv, s, d)).astype(np.float16)
v = rng.uniform(-1, 1, (b, hkv, s, d)).astype(np.float16)
o = np.full_like(q, np.nan)
lse = np.zeros(1, np.float32)
fwd = ctx.load("attention/flash_fwd.tile")["flash_fwd"]
st = lambda t: (t.shape[1] * s * d, s * d, d)  # noqa: E731
fwd(q, kk, v, o, lse, b, h, hkv, s, s, *st(q), *st(kk), *st(v), *st(o), 1 / math.sqrt(d), 0, 0.0,
    HEAD_DIM=d, CAUSAL=True)
qq, k2, v2 = (t.astype(np.float64) for t in (q, np.repeat(kk, 2, 1), np.repeat(v, 2, 1)))
sc = qq @ k2.transpose(0, 1, 3, 2) / math.sqrt(d) + np.triu(np.full((s, s), -np.inf), 1)
p = np.exp(sc - sc.max(-1, keepdims=True))
ref = (p / p.sum(-1, keepdims=True)) @ v2
err = np.linalg.norm(o - ref) / np.linalg.norm(ref)
check(err < 3e-3, f"stdlib flash_fwd causal GQA 4:2 s={s}: relative error {err:.2e}")
dbg = ctx.load_string("""
@grid(cdiv(n, 64))
kernel checked(x: *f32, n: i32) {
    let i = program_id(0) * 64 + arange(0, 64);
    device_assert(load(x + i, mask=i < n) >= 0.0, "x must be non-negative");
}""", "checked.tile")["checked"]
xs = np.abs(rng.uniform(-1, 1, 200)).astype(np.float32)
dbg(xs, 200)
check(True, "device_assert that holds: no exception")
xs[130] = -1
raises(tile.DeviceAssertionError, lambda: dbg(xs, 200), "device_assert that fails",
       "checked.tile:5:5: device assertion failed in program (2, 0, 0) at element [2]")

# hostile arguments: a Python exception naming the argument, never a crash or a silent wrap
TileError = tile.TileError
x, y, out = (np.ones(100, np.float32) for _ in range(3))
raises(TypeError, lambda: k(x, y, out, 1.0, "100"), "a string for an integer", "('n') of axpy is an integer")
raises(TypeError, lambda: k(x, y, out, None, 100), "None for a float", "('a') of axpy is a number")
raises(TypeError, lambda: k(x, y, out, 1.0, 2.7), "a fraction for an integer", "got 2.7")
raises(OverflowError, lambda: k(x, y, out, 1.0, 2**64), "an integer past int64", "64-bit")
raises(TypeError, lambda: k(x, y, out, 1.0, 100, BLOCK="64"), "a string const", "const 'BLOCK'")
raises(OverflowError, lambda: k(x, y, out, 1.0, 100, BLOCK=2**70), "a const past int64", "64-bit")
raises(TileError, lambda: k(np.zeros(0, np.float32), y, out, 1.0, 0), "an empty array",
       "('x') of axpy is empty")
raises(TypeError, lambda: k(np.ones(100, ">f4"), y, out, 1.0, 100), "big-endian array", "byte order")
raises(ValueError, lambda: ctx.load("examples/add.tile\0junk"), "NUL in a path", "NUL")
raises(ValueError, lambda: ctx.load_string(src + "\0junk"), "NUL in a source", "NUL")
raises(TypeError, lambda: mod[3], "a kernel name that is not a str", "must be a str")
raises(ValueError, lambda: tile.Context("cpu", device=2**40), "a device number past int", "device")
raises(TypeError, lambda: k(np.float32(1.0), y, out, 1.0, 100), "a NumPy scalar for a pointer",
       "('x') of axpy expects an array or tensor of f32, got float32")


class FakeTensor:  # has what marks a torch tensor, lacks the rest
    data_ptr = element_size = None


raises(TypeError, lambda: k(x, FakeTensor(), out, 1.0, 100), "a fake tensor for a pointer",
       "('y') of axpy expects an array or tensor of f32, got FakeTensor")
# diagnostics with bytes that are not UTF-8: TileError, with the bytes replaced
raises(TileError, lambda: ctx.load_string(b"kernel k(x: *f32) { store(x, \xff); }"),
       "a source with a byte that is not UTF-8", "\ufffd")
raises(TileError, lambda: ctx.load_string(b"kernel k(x: *f32) { store(x, 1.0 +* ); }", b"\xfe.tile"),
       "a module name that is not UTF-8", "\ufffd.tile")
# u64 scalars take 0 to 2**64 - 1
pu = ctx.load_string("kernel put(out: *u64, d: u64) {\n    store(out, d);\n}\n", "put.tile")["put"]
o64 = np.zeros(1, np.uint64)
for v in (2**64 - 1, 2**63, 5):
    pu(o64, v)
    check(int(o64[0]) == v, f"u64 {v} reaches the kernel")
pu(o64, np.uint64(2**64 - 1))
check(int(o64[0]) == 2**64 - 1, "a NumPy uint64 of 2**64 - 1")
raises(OverflowError, lambda: pu(o64, -1), "a negative u64", "out of the range of u64")
raises(OverflowError, lambda: pu(o64, 2**64), "a u64 of 2**64", "out of the range of u64")
ro = np.zeros(100, np.float32)
ro.flags.writeable = False
raises(TileError, lambda: k(x, y, ro, 1.0, 100), "a read-only output", "('out') of axpy is a read-only")
check(not ro.any(), "a read-only output is left as it was")
k(ro, y, out, 1.0, 100)
check(np.array_equal(out, y), "a read-only input")

# threads: the same arrays lent by several calls at once; close() waits for calls in flight
import threading  # noqa: E402
big = np.ones(1 << 16, np.float32)
errors = []


def launches(o, reps):
    try:
        for _ in range(reps):
            k(big, big, o, 2.0, len(big))
    except TileError as e:
        errors.append(str(e))


ts = [threading.Thread(target=launches, args=(np.zeros_like(big), 30)) for _ in range(6)]
[t.start() for t in ts]
[t.join() for t in ts]
check(not errors, f"6 threads sharing input arrays: {errors[:1]}")
c2 = tile.Context("cpu")
k2 = c2.load_string(src, "axpy.tile")["axpy"]
big = np.ones(1 << 21, np.float32)
k = k2
ts = [threading.Thread(target=launches, args=(np.zeros_like(big), 10**6)) for _ in range(3)]
[t.start() for t in ts]
c2.close()
[t.join() for t in ts]
check(len(errors) == 3 and all("closed" in e for e in errors), "close() while threads launch")

# modules freed when unused (no growth over many loads), and a context when collected
import gc  # noqa: E402
c3, handles = tile.Context("cpu"), []
for _ in range(20):
    m3 = c3.load_string(src, "axpy.tile")
    m3["axpy"](x, y, out, 1.0, 100)
    handles.append(m3._h)
del m3
gc.collect()
live = sum(tile._library().tile_module_num_kernels(h) >= 0 for h in handles)
check(live == 0, f"modules loaded in a loop are freed ({live} of 20 live)")

# the library's log, static_print's notes included, reaches a callable (a fresh source: code from
# the disk cache is not compiled, so it has no notes); None sends it nowhere
notes, c4 = [], tile.Context("cpu")
c4.set_log(notes.append)
sp = c4.load_string(f"// {os.getpid()} {id(notes)}\n@grid(1)\nkernel k(n: i32, const B: i32 = 4) "
                    "{ static_print(\"B is\", B, 2.0 * 3.0); }", "sp.tile")["k"]
sp(1)
sp(1, B=8)
check(sum("static_print: B is 4 6.0" in m for m in notes) == 1 and
      sum("static_print: B is 8 6.0" in m for m in notes) == 1, f"static_print's notes in the log: {notes}")
c4.set_log(None)
sp(1, B=16)
check(not any("B is 16" in m for m in notes), "set_log(None): no more notes")
raises(TypeError, lambda: c4.set_log(5), "set_log of a number", "callable")
c4.close()
raises(tile.TileError, lambda: c4.set_log(print), "set_log on a closed context", "closed")

ctx.close()
raises(tile.TileError, lambda: ctx.load_string(src), "a closed context", "closed")
raises(tile.TileError, lambda: mod["axpy"], "a kernel of a closed context", "closed")
finish()
