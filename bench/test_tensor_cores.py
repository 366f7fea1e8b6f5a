"""test_tensor_cores.py: tests of bench/tensor_cores.py without a GPU or torch (CTest:
bench_tensor_cores). The tilec side runs for real on the CPU backend at tiny sizes against
pure-Python references: the command lines the bench builds, --load / --save of f16 and bf16
files, the parsing of tilec's output. Then the whole GPU flow (tensor_cores.main) runs with a
small pure-Python stand-in for torch and triton, one row failing on purpose, down to the
table, CSV, log and plot files it writes.
    usage: python3 bench/test_tensor_cores.py PATH/TO/TILEC
"""
import contextlib
import csv
import ctypes
import json
import math
import os
import random
import shutil
import struct
import sys
import tempfile
import types
import zlib

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tensor_cores as tc  # noqa: E402

FAILURES = []
CHECKS = [0]


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    CHECKS[0] += 1
    if not cond:
        FAILURES.append(what)


# ---- 16-bit floats and references in pure Python ----

def round_to(v, kind):
    """v rounded to f16, bf16 (nearest even) or f32."""
    if kind == "f16":
        return struct.unpack("<e", struct.pack("<e", v))[0]
    bits = struct.unpack("<I", struct.pack("<f", v))[0]
    if kind == "bf16":
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def to_bytes(vals, kind):
    if kind == "f16":
        return struct.pack(f"<{len(vals)}e", *vals)
    if kind == "bf16":
        return b"".join(struct.pack("<f", v)[2:] for v in vals)
    return struct.pack(f"<{len(vals)}f", *vals)


def from_bytes(data, kind):
    if kind == "f16":
        return list(struct.unpack(f"<{len(data) // 2}e", data))
    return [struct.unpack("<f", b"\0\0" + data[i:i + 2])[0] for i in range(0, len(data), 2)]


def ref_matmul(a, b, m, n, k):
    return [sum(a[i * k + p] * b[p * n + j] for p in range(k)) for i in range(m) for j in range(n)]


def ref_attention(q, k, v, dims, causal, scale):
    bsz, h, s, d = dims
    out = []
    for bh in range(bsz * h):
        base = bh * s * d
        for i in range(s):
            qi = q[base + i * d: base + (i + 1) * d]
            js = range(i + 1) if causal else range(s)
            sc = [scale * sum(x * y for x, y in zip(qi, k[base + j * d: base + (j + 1) * d]))
                  for j in js]
            mx = max(sc)
            p = [math.exp(x - mx) for x in sc]
            tot = sum(p)
            out += [sum(p[t] * v[base + j * d + c] for t, j in enumerate(js)) / tot for c in range(d)]
    return out


def rel_l2(x, ref):
    num = sum((a - b) ** 2 for a, b in zip(x, ref))
    den = sum(b * b for b in ref)
    return math.sqrt(num / den) if den > 0 else math.sqrt(num)


TINY = [tc.Case("matmul", "f16", (70, 40, 36)), tc.Case("matmul", "bf16", (33, 20, 17)),
        tc.Case("attention", "f16", (1, 2, 40, 64), False),
        tc.Case("attention", "bf16", (2, 1, 24, 64), True),
        tc.Case("quant", "w8", (20, 36, 256)), tc.Case("quant", "w4", (17, 40, 384))]
# the GPU flow's stand-in for torch makes normal inputs only: the quantized rows' integer
# weights and their dequantization (GpuBench.quant_inputs) run on the GPU machine alone
TINY_GPU = [c for c in TINY if c.op != "quant"]


# ---- 1. parsing, on what tilec prints on CUDA ----

CUDA_SAMPLE = """examples/matmul.tile:matmul_f16 on cuda (NVIDIA H100 80GB HBM3)
tile: autotuning: 'matmul_f16' key 'M=4096;N=4096;K=4096;' -> BLOCK_M=128,BLOCK_N=256,BLOCK_K=32,num_warps=8,num_stages=3 (tuned: 0.2210 ms; 60 configurations in 9.1 s: compile 4.2 s (50.3 CPU-s), timing 4.5 s)
  load + compile: 40.1 ms, first launch: 9120.5 ms
  saved c (16777216 x f16) to /tmp/x/out.bin
  specialization of matmul_f16 on cuda (sm_90a):
  consts: BLOCK_M=128 (@tune), BLOCK_N=256 (@tune), BLOCK_K=32 (@tune), num_warps=8 (@tune), num_stages=3 (@tune)
  grid: 32 x 16 x 1 programs, 256 threads each
  registers per thread: 232
  local memory per thread (spills, stack): 16 bytes
  static shared memory: 0 bytes
  dynamic shared memory: 98304 bytes
  max threads per block: 256
  c = [1, 2, 3, ...] (16777216 x f16 written)
  cold launches (at most 100, about 100 ms in all), each timed alone, L2 flushed before each launch: median 0.2231 ms -> 451.20 GB/s effective
"""


def test_parsing():
    p = tc.parse_tilec_run(CUDA_SAMPLE)
    check(p["ms"] == 0.2231 and p["first_launch_ms"] == 9120.5, "parse: median and first launch")
    check(p["regs"] == 232 and p["local_bytes"] == 16 and p["static_smem"] == 0
          and p["dynamic_smem"] == 98304 and p["max_threads"] == 256, "parse: the driver's facts")
    check(p["tuned_from"] == "tuned" and p["tuned_ms"] == 0.2210, "parse: the autotuning line")
    check(p["tune_configs"] == 60 and p["tune_compile_cpu_s"] == 50.3 and p["tune_timing_s"] == 4.5,
          "parse: where the tuning's time went")
    check(tc.tuning_text(p).startswith("; 60 configurations tuned in 9.1 s"), "tuning_text")
    check(tc.config_text(p) == "M128 N256 K32 w8 s3 | 232 regs, 16 B local", "config text")
    check(len(tc.all_cases()) == 32 and len(tc.select_cases(True, None)) == len(tc.QUICK)
          and len(tc.select_cases(False, "bf16 d128")) == 6 and len(tc.select_cases(False, None, True)) == 8
          and len(tc.select_cases(False, "w4", True)) == 4, "case lists")
    check(tc.Case("quant", "w4", (16, 8192, 8192)).name == "quant w4 16x8192x8192", "quant row name")
    check(tc.Case("attention", "f16", (1, 1, 1024, 64), True).flops == 2.0 * 1024 * 1024 * 64,
          "causal attention counts half the FLOPs")


# ---- 2. the tilec side for real, on the CPU backend ----

def quant_inputs(case, rnd):
    """(raw bytes by input name, a, the dequantized weights [K, N]) of a quantized row."""
    m, n, k = case.dims
    a = [rnd.randint(-16, 16) / 8 for _ in range(m * k)]
    scales = [rnd.choice([1 / 64, 1 / 32, 1 / 16]) for _ in range(k // tc.QUANT_GROUP * n)]
    if case.dtype == "w8":
        w = [rnd.randint(-127, 127) for _ in range(k * n)]
        q = w
        wbytes = struct.pack(f"<{len(w)}b", *w)
    else:
        w = [rnd.randint(0, 255) for _ in range(n * k // 2)]
        q = [((w[j * (k // 2) + p // 2] >> (4 * (p & 1))) & 15) - 8 for p in range(k) for j in range(n)]
        wbytes = struct.pack(f"<{len(w)}B", *w)
    deq = [q[p * n + j] * scales[(p // tc.QUANT_GROUP) * n + j] for p in range(k) for j in range(n)]
    raw = {"a": to_bytes(a, "f16"), "w": wbytes, "scales": to_bytes(scales, "f16")}
    return raw, a, deq


def tilec_case(tilec, case, tmp):
    rnd = random.Random(zlib.crc32(case.name.encode()))
    if case.op == "quant":
        raw, a, deq = quant_inputs(case, rnd)
        files = {name: os.path.join(tmp, name + ".bin") for name in raw}
        files["out"] = os.path.join(tmp, "out.bin")
        for name, data in raw.items():
            with open(files[name], "wb") as f:
                f.write(data)
        env = dict(os.environ, TILE_TUNE="off", TILE_CACHE_DIR=os.path.join(tmp, "cache"))
        text, _ = tc.run_tilec(tc.tilec_command(tilec, case, files, 2, backend="cpu"), env, 300)
        with open(files["out"], "rb") as f:
            ours = from_bytes(f.read(), "f16")
        return tc.parse_tilec_run(text), rel_l2(ours, ref_matmul(a, deq, *case.dims))
    if case.op == "matmul":
        m, n, k = case.dims
        sizes = {"a": m * k, "b": k * n}
    else:
        sizes = {name: math.prod(case.dims) for name in ("q", "k", "v")}
    x = {name: [rnd.randint(-16, 16) / 8 for _ in range(cnt)] for name, cnt in sizes.items()}
    files = {name: os.path.join(tmp, name + ".bin") for name in x}
    files["out"] = os.path.join(tmp, "out.bin")
    for name, vals in x.items():
        with open(files[name], "wb") as f:
            f.write(to_bytes(vals, case.dtype))
    env = dict(os.environ, TILE_TUNE="off", TILE_CACHE_DIR=os.path.join(tmp, "cache"))
    text, _ = tc.run_tilec(tc.tilec_command(tilec, case, files, 2, backend="cpu"), env, 300)
    with open(files["out"], "rb") as f:
        ours = from_bytes(f.read(), case.dtype)
    scale = 1 / math.sqrt(case.dims[-1])
    ref = (ref_matmul(x["a"], x["b"], *case.dims) if case.op == "matmul"
           else ref_attention(x["q"], x["k"], x["v"], case.dims, case.causal, scale))
    return tc.parse_tilec_run(text), rel_l2(ours, ref)


def test_tilec(tilec):
    tmp = tempfile.mkdtemp(prefix="tile-tc-test-")
    try:
        for case in TINY:
            try:
                p, err = tilec_case(tilec, case, tmp)
            except Exception as e:
                check(False, f"{case.name}: {e}")
                continue
            check(p["ms"] is not None and p["dynamic_smem"] is not None and p["regs"] is None
                  and p["consts"],
                  f"{case.name}: tilec ran and printed its facts ({tc.config_text(p)})")
            check(err < tc.FLAG_ERR, f"{case.name}: --save'd output against the reference: {err:.1e}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ---- 3. the GPU flow with a stand-in for torch and triton ----

class DType:
    def __init__(self, kind, size):
        self.kind, self.size = kind, size


F16, BF16, I16, F32 = DType("f16", 2), DType("bf16", 2), DType("i16", 2), DType("f32", 4)


class Tensor:
    def __init__(self, vals, shape, dtype):
        self.vals, self.shape, self.dtype = list(vals), tuple(shape), dtype

    def numel(self):
        return len(self.vals)

    def element_size(self):
        return self.dtype.size

    def contiguous(self):
        return self

    cpu = cuda = contiguous

    def float(self):
        return Tensor(self.vals, self.shape, F32)

    def data_ptr(self):
        raw = (struct.pack(f"<{len(self.vals)}h", *self.vals) if self.dtype is I16
               else to_bytes(self.vals, self.dtype.kind))
        self._buf = ctypes.create_string_buffer(raw, len(raw))
        return ctypes.addressof(self._buf)

    def view(self, dtype):
        assert self.dtype is I16 and dtype in (F16, BF16)
        return Tensor(from_bytes(struct.pack(f"<{len(self.vals)}h", *self.vals), dtype.kind),
                      self.shape, dtype)

    def reshape(self, shape):
        assert math.prod(shape) == len(self.vals)
        return Tensor(self.vals, shape, self.dtype)

    def __sub__(self, o):
        return Tensor([a - b for a, b in zip(self.vals, o.vals)], self.shape, F32)

    def __truediv__(self, o):
        return Tensor([self.vals[0] / o.vals[0]], (), F32)

    def item(self):
        return self.vals[0]


def fake_modules():
    torch = types.ModuleType("torch")
    torch.__version__ = "fake"
    torch.float16, torch.bfloat16, torch.int16 = F16, BF16, I16

    class Generator:
        def __init__(self, device=None):
            self.rnd = random.Random(0)

        def manual_seed(self, s):
            self.rnd = random.Random(s)

    def randn(shape, device=None, dtype=F32, generator=None):
        vals = [round_to(generator.rnd.gauss(0, 1), dtype.kind) for _ in range(math.prod(shape))]
        return Tensor(vals, shape, dtype)

    def frombuffer(data, dtype):
        assert dtype is I16
        return Tensor(struct.unpack(f"<{len(data) // 2}h", bytes(data)), (len(data) // 2,), I16)

    def mm(a, b):
        (m, k), (_, n) = a.shape, b.shape
        return Tensor([round_to(x, a.dtype.kind) for x in ref_matmul(a.vals, b.vals, m, n, k)],
                      (m, n), a.dtype)

    torch.Generator, torch.randn, torch.frombuffer, torch.mm = Generator, randn, frombuffer, mm
    torch.cuda = types.SimpleNamespace(get_device_name=lambda: "fake GPU", empty_cache=lambda: None)
    torch.linalg = types.SimpleNamespace(
        vector_norm=lambda t: Tensor([math.sqrt(sum(v * v for v in t.vals))], (), F32))
    chosen = []

    @contextlib.contextmanager
    def sdpa_kernel(backends):
        chosen.append(backends[0])
        yield
        chosen.pop()

    def sdpa(q, k, v, is_causal=False, scale=None):
        if chosen and chosen[-1] == "CUDNN":
            raise RuntimeError("No available kernel. Aborting execution.\nmore lines")
        out = ref_attention(q.vals, k.vals, v.vals, q.shape, is_causal, scale)
        return Tensor([round_to(x, q.dtype.kind) for x in out], q.shape, q.dtype)

    attention = types.ModuleType("torch.nn.attention")
    attention.SDPBackend = types.SimpleNamespace(FLASH_ATTENTION="FLASH", CUDNN_ATTENTION="CUDNN")
    attention.sdpa_kernel = sdpa_kernel
    functional = types.SimpleNamespace(scaled_dot_product_attention=sdpa)
    torch.nn = types.SimpleNamespace(functional=functional, attention=attention)
    triton = types.ModuleType("triton")
    triton.__version__ = "fake"
    triton.testing = types.ModuleType("triton.testing")

    def do_bench(fn, warmup=25, rep=100, return_mode="mean"):
        fn()
        return 0.5

    triton.testing.do_bench = do_bench
    cold = types.ModuleType("cold")
    cold.cold_ms = lambda fn, reps=100, warmup=10: do_bench(fn)
    return {"torch": torch, "torch.nn.attention": attention, "triton": triton,
            "triton.testing": triton.testing, "cold": cold}


def test_gpu_flow(tilec):
    failing = tc.Case("matmul", "f16", (0, 8, 8))  # an empty grid: no median, the row fails
    cases = [TINY_GPU[0], failing] + TINY_GPU[1:]
    saved = tc.all_cases
    tc.all_cases = lambda: cases
    sys.modules.update(fake_modules())
    out = tempfile.mkdtemp(prefix="tile-tc-out-")
    try:
        rc = tc.main([tilec, "--out", out, "--reps", "2", "--tune", "off", "--backend", "cpu"])
        files = sorted(os.listdir(out))
        print("  wrote:", ", ".join(files))
        check(rc == 1, "main: exit 1 when a row failed")
        check({"tensor_cores.md", "tensor_cores.csv", "tensor_cores_tilec.log"} <= set(files)
              and len(files) <= 8, "main: the files under --out (8 at most)")
        with open(os.path.join(out, "tensor_cores_tuning.json")) as f:
            groups = set(json.load(f))
        check(groups == {"matmul", "attention-f16-d64-full", "attention-bf16-d64-causal"},
              f"tuning caches: one per kernel and fixed consts ({', '.join(sorted(groups))})")
        with open(os.path.join(out, "tensor_cores.csv")) as f:
            recs = {r["case"]: r for r in csv.DictReader(f)}
        check(len(recs) == len(cases), "CSV: a record per row")
        bad = recs[failing.name]
        check(bad["flagged"] == "1" and ("no median" in bad["error"] or "no elements" in bad["error"]),
              "CSV: the failing row and why")
        for case in TINY_GPU:
            r = recs.get(case.name, {})
            check(r.get("tile_ms") and r.get("flagged") == "0" and r.get("max_rel_err")
                  and float(r["max_rel_err"]) < tc.FLAG_ERR and r.get("config"),
                  f"CSV: {case.name}: timed, compared ({r.get('max_rel_err')}), "
                  f"config {r.get('config')}")
        att = recs[TINY_GPU[2].name]
        check(att["SDPA flash_ms"] and not att["SDPA cuDNN_ms"]
              and "SDPA cuDNN: n/a: No available kernel" in att["notes"], "an unavailable peer is n/a")
        with open(os.path.join(out, "tensor_cores.md")) as f:
            md = f.read()
        check(md.count("\n| matmul ") == 3 and md.count("\n| attention ") == 2 and "| n/a |" in md
              and "GPU: fake GPU" in md, "markdown: both tables, n/a cells, the GPU")
        rc = tc.main([tilec, "--out", out, "--tune", "off", "--backend", "cpu",
                      "--max-seconds", "1e-9"])
        with open(os.path.join(out, "tensor_cores.csv")) as f:
            recs = list(csv.DictReader(f))
        check(rc == 1 and len(recs) == len(cases) and all("skipped: past --max-seconds" in r["error"]
                                                          for r in recs), "--max-seconds skips rows")
        if "tensor_cores.png" in files:
            check(os.path.getsize(os.path.join(out, "tensor_cores.png")) > 1000, "plot")
        else:
            print("skip plot (no matplotlib)")
    finally:
        tc.all_cases = saved
        shutil.rmtree(out, ignore_errors=True)


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    tilec = os.path.abspath(sys.argv[1])
    test_parsing()
    test_tilec(tilec)
    test_gpu_flow(tilec)
    print(f"{CHECKS[0] - len(FAILURES)} passed, {len(FAILURES)} failed")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
