"""test_torch.py: the Python package on PyTorch CUDA tensors (run on the GPU machine by
scripts/gpu_check.sh): kernels launch on PyTorch's current stream (a side stream included)
without waiting, are captured by torch.cuda.graph and replay, and give the same results as
torch; dtype and device mismatches raise. Exits 77 (skipped) without torch or a CUDA device.
    usage: python3 tests/python/test_torch.py SOURCE_DIR   (TILE_LIBRARY names libtile.so)"""
import os
import sys

root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
sys.path.insert(0, os.path.join(root, "python"))
try:
    import torch
except ImportError:
    print("skipped: no torch")
    sys.exit(77)
if not torch.cuda.is_available():
    print("skipped: no CUDA device")
    sys.exit(77)
import tile  # noqa: E402

from checks import check, finish, raises  # noqa: E402


ctx = tile.Context("cuda")
add = ctx.load(os.path.join(root, "examples/add.tile"))["add"]
softmax = ctx.load(os.path.join(root, "examples/softmax.tile"))["softmax"]
n = 1000003
x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
out = torch.full((n,), float("nan"), device="cuda")

add(x, y, out, n)
torch.cuda.synchronize()
check(torch.equal(out, x + y), "add on the default stream")

side = torch.cuda.Stream()
out.fill_(float("nan"))
torch.cuda.synchronize()
with torch.cuda.stream(side):
    x2 = x * 2  # made on the side stream: the launch must come after it on that stream
    add(x2, y, out, n)
    want = x2 + y
side.synchronize()
check(torch.equal(out, want), "add on a side stream, ordered after torch's own work there")

# the launch returns before the kernel ends on the default stream too (PyTorch's stream 0):
# a kernel of a fraction of a second is still running when the call returns
spin = ctx.load_string("""
kernel spin(x: *f32, n: i32) {
    let v = load(x);
    for i in range(0, n) {
        v = v * 0.999999 + 0.000001;
    }
    store(x, v);
}""", "spin.tile")["spin"]
cell = torch.ones(1, device="cuda")
spin(cell, 1)
torch.cuda.synchronize()
spin(cell, 50_000_000)
running = not torch.cuda.current_stream().query()
torch.cuda.synchronize()
check(running and abs(cell.item() - 1.0) < 1e-3,
      "a launch on the default stream returns at once (the kernel still runs), then completes")

rows, cols = 77, 1000
a = torch.randn(rows, cols, device="cuda")
b = torch.empty_like(a)
softmax(a, b, rows, cols)
torch.cuda.synchronize()
check(torch.allclose(b, torch.softmax(a, dim=1), rtol=1e-5, atol=1e-6), "softmax against torch")

# a CUDA graph: warm up (compiles and tunes) on a side stream, capture, change x, replay
g = torch.cuda.CUDAGraph()
warm = torch.cuda.Stream()
with torch.cuda.stream(warm):
    add(x, y, out, n)
torch.cuda.synchronize()
with torch.cuda.graph(g):
    add(x, y, out, n)
x.add_(1.0)
out.fill_(float("nan"))
g.replay()
torch.cuda.synchronize()
check(torch.equal(out, x + y), "add captured in a CUDA graph, replayed on new inputs")
x.mul_(3.0)
g.replay()
torch.cuda.synchronize()
check(torch.equal(out, x + y), "replayed again")

raises(TypeError, lambda: add(x.half(), y, out, n), "an f16 tensor for an f32 parameter", "f32")
raises(tile.TileError, lambda: add(x.cpu(), y, out, n), "a CPU tensor on the CUDA context",
       "lives on the CPU")


class OtherGpu:
    """A tensor of GPU 1 as the package sees one (a machine with one GPU has no real one)."""
    def __init__(self, t):
        self.t, self.dtype, self.is_cuda = t, t.dtype, True

    def __getattr__(self, name):
        return getattr(self.t, name)

    def get_device(self):
        return 1


raises(tile.TileError, lambda: add(OtherGpu(x), y, out, n), "a tensor of another GPU",
       "lives on GPU 1, the context is on GPU 0")
if torch.cuda.device_count() > 1:
    raises(tile.TileError, lambda: add(x.to("cuda:1"), y, out, n), "a tensor on cuda:1",
           "lives on GPU 1")
raises(tile.TileError, lambda: add(x[::2], y, out, n // 2), "a strided view", "contiguous")

finish()
