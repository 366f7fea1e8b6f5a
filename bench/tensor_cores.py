"""tensor_cores.py: tile's tensor-core kernels beside cuBLAS and PyTorch SDPA, in one run.

Rows: matmul f16 and bf16 (examples/matmul.tile) at 2048^3, 4096^3, 8192^3 and 4000x3000x2500
(not a multiple of the blocks) against torch.mm (cuBLAS); flash attention forward f16 and bf16
(examples/flash_attention.tile) on the FlashAttention-3 paper's grid (batch x seq = 16k tokens,
heads x head_dim = 2048; seq 1k, 4k, 16k; head_dim 64 and 128; causal and not) against
torch.nn.functional.scaled_dot_product_attention with its flash and its cuDNN backend, each
selected explicitly (sdpa_kernel).

Each row: inputs from torch (fixed seed, normal, on the GPU) go to raw files; `tilec run
--backend=cuda --load ... --save ... --cold` runs our kernel at the row's sizes, tuning it on
the first launch (TILE_TUNE=auto; tuning caches under the temp dir or --cache, one per kernel
and fixed consts: see GpuBench.cache_dir) and timing the tuned configuration as the tuner does:
each launch alone, device events, cold inputs (rotated copies or an L2 flush). The output
saved after the first launch is compared with each peer's (relative L2 error). Peers are timed
here the same way (bench/cold.py: each run alone between events after an L2 flush that leaves
clean lines, median), as bench/baseline.py does. A row that fails prints its error and the run goes on. A line per row
as it goes (with the wall time of tuning), then a markdown table; under --out: the table (.md),
a CSV and the tilec logs (rewritten after every row, so a run cut short keeps its rows), then
the tuning caches as JSON and a PNG plot where matplotlib is importable (5 files at most).
Exit 1 when a row failed or was flagged.

With --quant, the rows are weight-only quantized products instead (examples/quant_matmul.tile:
f16 activations, 8- or 4-bit weights with f16 scales per 128 rows of K, at M = 16, 64 and
4096) against torch.mm of the activations and the dequantized f16 weights.

    usage: python3 bench/tensor_cores.py PATH/TO/TILEC [--quick] [--quant] [--out DIR] [--reps N]
                  [--only TEXT] [--cache DIR] [--tune MODE] [--tune-budget SECONDS]
                  [--timeout SECONDS] [--max-seconds SECONDS]
bench/test_tensor_cores.py tests it without a GPU or torch (CTest: bench_tensor_cores).
"""
import argparse
import csv
import ctypes
import datetime
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zlib
from dataclasses import dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FLAG_ERR = 1e-2  # rows whose relative error against a peer is above this are flagged
PEERS = {"matmul": ["cuBLAS"], "quant": ["cuBLAS"], "attention": ["SDPA flash", "SDPA cuDNN"]}
QUANT_GROUP = 128  # rows of K per scale in the quantized rows (examples/quant_matmul.tile)
ALL_PEERS = ["cuBLAS", "SDPA flash", "SDPA cuDNN"]
SHORT = {"BLOCK_M": "M", "BLOCK_N": "N", "BLOCK_K": "K", "num_warps": "w", "num_stages": "s"}


# ---- cases ----

@dataclass
class Case:
    op: str      # "matmul", "quant" (weight-only quantized matmul) or "attention"
    dtype: str   # "f16" or "bf16"; quant: "w8" or "w4" (the weights' bits)
    dims: tuple  # (M, N, K) or (batch, heads, seq, head_dim)
    causal: bool = False

    @property
    def name(self):
        if self.op in ("matmul", "quant"):
            return "%s %s %dx%dx%d" % ((self.op, self.dtype) + tuple(self.dims))
        b, h, s, d = self.dims
        return f"attention {self.dtype} d{d} s{s} b{b} h{h}" + (" causal" if self.causal else "")

    @property
    def flops(self):
        if self.op in ("matmul", "quant"):
            m, n, k = self.dims
            return 2.0 * m * n * k
        b, h, s, d = self.dims
        return 4.0 * b * h * s * s * d / (2 if self.causal else 1)

    @property
    def out_shape(self):
        return (self.dims[0], self.dims[1]) if self.op != "attention" else tuple(self.dims)


def all_cases():
    cases = []
    for dt in ("f16", "bf16"):
        for shape in ((2048,) * 3, (4096,) * 3, (8192,) * 3, (4000, 3000, 2500)):
            cases.append(Case("matmul", dt, shape))
    for dt in ("f16", "bf16"):
        for d in (64, 128):
            for s in (1024, 4096, 16384):
                for causal in (False, True):
                    cases.append(Case("attention", dt, (16384 // s, 2048 // d, s, d), causal))
    return cases


def quant_cases():
    """Weight-only quantized products (--quant): 8- and 4-bit weights, f16 activations, at a
    decode's few rows (16, 64) and a prefill's 4096."""
    return [Case("quant", w, shape) for w in ("w8", "w4")
            for shape in ((16, 8192, 8192), (64, 8192, 8192), (4096, 4096, 4096), (4096, 8192, 8192))]


QUICK = {"matmul f16 2048x2048x2048", "matmul bf16 4000x3000x2500",
         "attention f16 d64 s1024 b16 h32", "attention bf16 d128 s4096 b4 h16 causal"}


def select_cases(quick, only, quant=False):
    if quant:
        return [c for c in quant_cases() if not only or only in c.name]
    cases = [c for c in all_cases() if not quick or c.name in QUICK]
    return [c for c in cases if not only or only in c.name]


# ---- the tilec side ----

def tilec_command(tilec, case, files, reps, backend="cuda"):
    """`tilec run` for a case. files: input name -> raw file, and "out" -> where to save."""
    if case.op == "matmul":
        m, n, k = case.dims
        kernel = "matmul_f16" if case.dtype == "f16" else "matmul_bf16"
        args = [f"{ROOT}/examples/matmul.tile:{kernel}", f"M={m}", f"N={n}", f"K={k}",
                f"lda={k}", f"ldb={n}", f"ldc={n}", "--load", f"a={files['a']}",
                "--load", f"b={files['b']}", f"c={m * n}", "--save", f"c={files['out']}"]
    elif case.op == "quant":
        m, n, k = case.dims
        args = [f"{ROOT}/examples/quant_matmul.tile:matmul_{case.dtype}", f"M={m}", f"N={n}",
                f"K={k}", "-D", f"GROUP={QUANT_GROUP}"]
        for name in ("a", "w", "scales"):
            args += ["--load", f"{name}={files[name]}"]
        args += [f"c={m * n}", "--save", f"c={files['out']}"]
    else:
        b, h, s, d = case.dims
        kernel = "flash_attention" if case.dtype == "f16" else "flash_attention_bf16"
        args = [f"{ROOT}/examples/flash_attention.tile:{kernel}", f"batch={b}", f"heads={h}",
                f"seq={s}", f"scale={1 / math.sqrt(d)!r}", "-D", f"HEAD_DIM={d}",
                "-D", "CAUSAL=" + ("true" if case.causal else "false")]
        for name in ("q", "k", "v"):
            args += ["--load", f"{name}={files[name]}"]
        args += [f"o={b * h * s * d}", "--save", f"o={files['out']}"]
    return [tilec, "run"] + args + [f"--backend={backend}", f"--reps={reps}", "--cold", "--verbose"]


def parse_tilec_run(text):
    """What `tilec run --cold --verbose` printed (stdout and stderr together): a dict with ms
    (the median), first_launch_ms (includes tuning), consts {name: (value, origin)}, regs,
    local_bytes, static_smem, dynamic_smem, max_threads (None where n/a), tuned_ms (the
    tuner's own median, from TILE_PRINT_AUTOTUNING) and tuned_from (tuned / cache)."""
    r = {}
    m = (re.search(r"cold launches .*?: median ([0-9.]+) ms", text)
         or re.search(r"launches: median ([0-9.]+) ms", text))
    r["ms"] = float(m.group(1)) if m else None
    m = re.search(r"first launch: ([0-9.]+) ms", text)
    r["first_launch_ms"] = float(m.group(1)) if m else None
    m = re.search(r"^ *consts: (.*)$", text, re.M)
    r["consts"] = {}
    for name, value, origin in re.findall(r"(\w+)=(-?\d+) \((\w+|@tune)\)", m.group(1) if m else ""):
        r["consts"][name] = (int(value), origin)
    facts = {"regs": r"registers per thread",
             "local_bytes": r"local memory per thread \(spills, stack\)",
             "static_smem": r"static shared memory", "dynamic_smem": r"dynamic shared memory",
             "max_threads": r"max threads per block"}
    for key, label in facts.items():
        m = re.search(r"^ *" + label + r": (\d+)", text, re.M)
        r[key] = int(m.group(1)) if m else None
    m = re.search(r"tile: autotuning: '\w+' key '[^']*' -> \S+ \((tuned|cache): ([0-9.]+) ms[;)]", text)
    r["tuned_from"], r["tuned_ms"] = (m.group(1), float(m.group(2))) if m else (None, None)
    m = re.search(r"; (\d+) configurations in ([0-9.]+) s: compile ([0-9.]+) s \(([0-9.]+) CPU-s\), "
                  r"timing ([0-9.]+) s\)", text)
    r["tune_configs"], r["tune_s"], r["tune_compile_s"], r["tune_compile_cpu_s"], r["tune_timing_s"] = \
        (int(m.group(1)),) + tuple(float(g) for g in m.groups()[1:]) if m else (None,) * 5
    return r


def config_text(parsed):
    """The tuned consts, short: 'M128 N128 K32 w8 s3 | 168 regs, 0 B local'."""
    consts = parsed.get("consts") or {}
    tuned = [f"{SHORT.get(n, n + '=')}{v}" for n, (v, origin) in consts.items() if origin == "@tune"]
    text = " ".join(tuned)
    if parsed.get("regs") is not None:
        text += f" | {parsed['regs']} regs, {parsed.get('local_bytes') or 0} B local"
    return text


class TilecError(RuntimeError):
    def __init__(self, msg, text):
        super().__init__(msg)
        self.text = text


def run_tilec(cmd, env, timeout):
    """Runs tilec; (stdout + stderr, wall seconds); raises TilecError with its last lines (and
    all of its output in .text) when it fails."""
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)
    text = p.stdout + p.stderr
    if p.returncode != 0:
        tail = " / ".join(line.strip() for line in text.strip().splitlines()[-3:])
        raise TilecError(f"tilec exit {p.returncode}: {tail}", text)
    return text, time.time() - t0


def tilec_version(tilec):
    try:
        out = subprocess.run([tilec, "--version"], capture_output=True, text=True, timeout=30).stdout
        return " / ".join(out.strip().splitlines())
    except (OSError, subprocess.SubprocessError) as e:
        return f"unknown ({e})"


# ---- rows and the report ----

@dataclass
class Row:
    case: Case
    tile_ms: float = None
    peers: dict = field(default_factory=dict)  # name -> {"ms", "err": float or None, "note"}
    config: str = ""
    parsed: dict = field(default_factory=dict)
    tilec_s: float = None
    row_s: float = None
    error: str = ""

    def tflops(self, ms):
        return self.case.flops / (ms * 1e9) if ms else None

    def max_err(self):
        errs = [p["err"] for p in self.peers.values() if p.get("err") is not None]
        if any(math.isnan(e) for e in errs):
            return float("nan")
        return max(errs) if errs else None

    def flagged(self):
        e = self.max_err()
        return bool(self.error) or (e is not None and not e <= FLAG_ERR)


def fmt(x, spec, none="n/a"):
    return none if x is None else format(x, spec)


def cell(text):
    return str(text).replace("|", "/").replace("\n", " ")


def markdown_section(title, rows, peers):
    head = ["case", "tile TFLOP/s"] + [f"{p} TFLOP/s" for p in peers] + \
           [f"tile / {p}" for p in peers] + ["max rel err", "tile config", "notes"]
    lines = [f"### {title}", "", "| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for r in rows:
        t = r.tflops(r.tile_ms)
        pt = [r.tflops(r.peers.get(p, {}).get("ms")) for p in peers]
        ratio = [t / x if t and x else None for x in pt]
        err = r.max_err()
        notes = [r.error] if r.error else []
        notes += [f"{p}: {r.peers[p]['note']}" for p in peers if r.peers.get(p, {}).get("note")]
        err_text = fmt(err, ".1e") + (" (!)" if err is not None and not err <= FLAG_ERR else "")
        vals = [r.case.name, fmt(t, ".1f")] + [fmt(x, ".1f") for x in pt] + \
               [fmt(x, ".2f") for x in ratio] + [err_text, r.config or "", "; ".join(notes)]
        lines.append("| " + " | ".join(cell(v) for v in vals) + " |")
    return lines


def markdown_report(meta, rows):
    lines = ["## Tensor cores: tile beside cuBLAS and SDPA (`bench/tensor_cores.py`)", "",
             f"GPU: {meta.get('gpu', '?')}; {meta.get('date', '?')}; tilec: {meta.get('tilec', '?')}; "
             f"torch {meta.get('torch', '?')}; triton {meta.get('triton', '?')}.", "",
             "tile: median of cold launches at the tuned configuration (`tilec run --cold`, "
             "tuned on the first launch); peers: median of cold runs timed the same way (each alone "
             "between CUDA events after an L2 flush that reads, so no dirty lines are left for "
             "the timed kernel to write back; bench/cold.py). FLOPs: 2MNK; attention 4·B·H·S²·D, halved when causal. max rel "
             f"err: relative L2 error of tile's output against each peer's, the largest; (!) "
             f"above {FLAG_ERR:g}. tile config: the tuned consts (M, N, K blocks, w warps, "
             "s stages), registers and local memory (spills) per thread.", ""]
    for op, title in (("matmul", "matmul (C = A B, row-major; cuBLAS through torch.mm)"),
                      ("quant", f"weight-only quantized matmul (examples/quant_matmul.tile, "
                                f"f16 A, 8- or 4-bit W, f16 scales per {QUANT_GROUP} rows; "
                                f"cuBLAS: torch.mm of A and the dequantized f16 W)"),
                      ("attention", "attention forward ([batch, heads, seq, head_dim]; "
                                    "SDPA backends selected explicitly)")):
        sel = [r for r in rows if r.case.op == op]
        if sel:
            lines += markdown_section(title, sel, PEERS[op]) + [""]
    return "\n".join(lines)


CSV_HEAD = (["case", "op", "dtype", "dims", "causal", "gflop", "tile_ms", "tile_tflops"]
            + [f"{p}_{k}" for p in ALL_PEERS for k in ("ms", "tflops", "ratio", "rel_err")]
            + ["max_rel_err", "flagged", "config", "regs", "local_bytes", "static_smem",
               "dynamic_smem", "tuned_ms", "first_launch_s", "tilec_s", "row_s", "error", "notes"])


def csv_record(r):
    rec = {"case": r.case.name, "op": r.case.op, "dtype": r.case.dtype,
           "dims": "x".join(str(d) for d in r.case.dims), "causal": int(r.case.causal),
           "gflop": f"{r.case.flops / 1e9:.3f}", "tile_ms": fmt(r.tile_ms, ".5f", ""),
           "tile_tflops": fmt(r.tflops(r.tile_ms), ".2f", "")}
    t = r.tflops(r.tile_ms)
    for p in ALL_PEERS:
        ms = r.peers.get(p, {}).get("ms")
        pt = r.tflops(ms)
        rec[f"{p}_ms"], rec[f"{p}_tflops"] = fmt(ms, ".5f", ""), fmt(pt, ".2f", "")
        rec[f"{p}_ratio"] = fmt(t / pt if t and pt else None, ".3f", "")
        rec[f"{p}_rel_err"] = fmt(r.peers.get(p, {}).get("err"), ".3e", "")
    fl = r.parsed.get("first_launch_ms")
    rec.update({"max_rel_err": fmt(r.max_err(), ".3e", ""), "flagged": int(r.flagged()),
                "config": r.config, "tuned_ms": fmt(r.parsed.get("tuned_ms"), ".5f", ""),
                "first_launch_s": fmt(fl / 1e3 if fl is not None else None, ".2f", ""),
                "tilec_s": fmt(r.tilec_s, ".2f", ""), "row_s": fmt(r.row_s, ".2f", ""),
                "error": r.error,
                "notes": "; ".join(f"{p}: {v['note']}" for p, v in r.peers.items() if v.get("note"))})
    for k in ("regs", "local_bytes", "static_smem", "dynamic_smem"):
        rec[k] = fmt(r.parsed.get(k), "d", "")
    return rec


def write_csv(path, rows, head=None, record=None):
    """A CSV of the rows: `head`'s columns (default CSV_HEAD), a `record(row)` dict a row
    (default csv_record); bench/attention.py passes its own."""
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=head or CSV_HEAD)
        w.writeheader()
        for r in rows:
            w.writerow((record or csv_record)(r))


def write_plot(path, rows, title):
    """Bars of TFLOP/s, tile beside each peer, one panel per operation; False without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    ops = [op for op in ("matmul", "quant", "attention") if any(r.case.op == op for r in rows)]
    fig, axes = plt.subplots(len(ops), 1, figsize=(14, 4.5 * len(ops)), squeeze=False)
    for ax, op in zip(axes[:, 0], ops):
        sel = [r for r in rows if r.case.op == op]
        series = ["tile"] + PEERS[op]
        width = 0.8 / len(series)
        for j, name in enumerate(series):
            ms = [r.tile_ms if name == "tile" else r.peers.get(name, {}).get("ms") for r in sel]
            vals = [r.tflops(m) or 0 for r, m in zip(sel, ms)]
            ax.bar([i + (j - (len(series) - 1) / 2) * width for i in range(len(sel))], vals, width,
                   label=name)
        ax.set_xticks(range(len(sel)))
        ax.set_xticklabels([r.case.name.replace(op + " ", "") for r in sel], rotation=45, ha="right",
                           fontsize=8)
        ax.set_ylabel("TFLOP/s")
        ax.set_title(op)
        ax.legend(fontsize=8)
        ax.grid(axis="y", alpha=0.3)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


# ---- the GPU run ----

def write_raw(t, path):
    """A tensor's elements as raw bytes (host order), as tilec run --load reads them; in pieces
    of 1 GiB, since ctypes.string_at takes its size as a C int (a 2 GiB cache overflowed it)."""
    t = t.contiguous().cpu()
    size, ptr, piece = t.numel() * t.element_size(), t.data_ptr(), 1 << 30
    with open(path, "wb") as f:
        for at in range(0, size, piece):
            f.write(ctypes.string_at(ptr + at, min(piece, size - at)))


def read_raw(torch, path, dtype, shape):
    """What tilec run --save wrote: 16-bit elements (f16 or bf16), reshaped."""
    data = bytearray(open(path, "rb").read())
    n = math.prod(shape)
    if len(data) != 2 * n:
        raise RuntimeError(f"{path}: {len(data)} bytes, expected {n} 16-bit elements")
    return torch.frombuffer(data, dtype=torch.int16).view(dtype).reshape(shape)


class GpuBench:
    def __init__(self, args, tmp):
        import torch
        from cold import cold_ms  # the peers' timer: cold, as tilec run --cold times ours
        self.torch, self.cold_ms, self.args, self.tmp = torch, cold_ms, args, tmp
        self.cache = args.cache or os.path.join(tmp, "cache")
        os.makedirs(self.cache, exist_ok=True)
        self.env = dict(os.environ, TILE_TUNE=args.tune, TILE_PRINT_AUTOTUNING="1")
        if args.tune_budget:
            self.env["TILE_TUNE_BUDGET"] = str(args.tune_budget)
        self.log = []

    def cache_dir(self, case):
        """The row's tuning cache: one per kernel and fixed consts. The attention kernels' @key is
        seq alone, so head_dim 64 and 128, causal or not, would otherwise share one tuned choice
        per seq (whichever row came first); matmul rows share one (their key buckets M, N, K)."""
        group = "matmul" if case.op == "matmul" else f"quant-{case.dtype}" if case.op == "quant" else \
            f"attention-{case.dtype}-d{case.dims[3]}-{'causal' if case.causal else 'full'}"
        d = os.path.join(self.cache, group)
        os.makedirs(d, exist_ok=True)
        return d

    def dtype(self, case):
        return self.torch.bfloat16 if case.dtype == "bf16" else self.torch.float16

    def inputs(self, case):
        torch = self.torch
        g = torch.Generator(device="cuda")
        g.manual_seed(zlib.crc32(case.name.encode()))
        dt = self.dtype(case)
        if case.op == "quant":
            return self.quant_inputs(case, g)
        if case.op == "matmul":
            m, n, k = case.dims
            shapes = {"a": (m, k), "b": (k, n)}
        else:
            shapes = {name: tuple(case.dims) for name in ("q", "k", "v")}
        return {name: torch.randn(s, device="cuda", dtype=dt, generator=g)
                for name, s in shapes.items()}

    def quant_inputs(self, case, g):
        """a (normal f16), the weights (i8 [K, N] or bytes [N, K / 2]: uniform integers), scales
        (f16 [K / GROUP, N], 0.005 to 0.02) and, for the peer only, the weights dequantized as
        the kernel does (q as f16 times its scale, rounded to f16): "ref", [K, N]."""
        torch = self.torch
        m, n, k = case.dims
        a = torch.randn((m, k), device="cuda", dtype=torch.float16, generator=g)
        scales = (torch.rand((k // QUANT_GROUP, n), device="cuda", generator=g) * 0.015 + 0.005).half()
        if case.dtype == "w8":
            w = torch.randint(-127, 128, (k, n), device="cuda", dtype=torch.int8, generator=g)
            q = w.half()
        else:
            w = torch.randint(0, 256, (n, k // 2), device="cuda", dtype=torch.uint8, generator=g)
            q = (torch.stack([w & 15, w >> 4], dim=-1).reshape(n, k).to(torch.int16) - 8).half().t()
        ref = q * scales.repeat_interleave(QUANT_GROUP, dim=0)
        return {"a": a, "w": w, "scales": scales, "ref": ref.contiguous()}

    def ms(self, fn):
        return self.cold_ms(fn)

    def peer_run(self, case, name, x):
        """(output, median ms) of one peer; raises where it cannot run."""
        torch = self.torch
        if name == "cuBLAS":  # quant: the f16 product of the dequantized weights
            fn = lambda: torch.mm(x["a"], x["b"] if case.op == "matmul" else x["ref"])
            return fn(), self.ms(fn)
        from torch.nn.attention import SDPBackend, sdpa_kernel
        backend = {"SDPA flash": "FLASH_ATTENTION", "SDPA cuDNN": "CUDNN_ATTENTION"}[name]
        sdpa, scale = torch.nn.functional.scaled_dot_product_attention, 1 / math.sqrt(case.dims[3])
        fn = lambda: sdpa(x["q"], x["k"], x["v"], is_causal=case.causal, scale=scale)
        with sdpa_kernel([getattr(SDPBackend, backend)]):  # only this backend, or an error
            return fn(), self.ms(fn)

    def peer(self, case, name, x, ours):
        """{"ms", "err", "note"} for one peer; a peer that cannot run is n/a with the reason."""
        torch = self.torch
        try:
            out, ms = self.peer_run(case, name, x)
        except Exception as e:  # e.g. no cuDNN attention here: n/a, the row goes on
            msg = str(e).strip().splitlines()
            why = msg[0][:160] if msg else type(e).__name__
            return {"ms": None, "err": None, "note": "n/a: " + why}
        err = None
        if ours is not None:
            err = (torch.linalg.vector_norm(ours.float() - out.float())
                   / torch.linalg.vector_norm(out.float())).item()
        return {"ms": ms, "err": err, "note": ""}

    def run_row(self, case):
        torch, t0 = self.torch, time.time()
        row = Row(case)
        d = tempfile.mkdtemp(dir=self.tmp, prefix="row-")
        try:
            x = self.inputs(case)
            files = {name: os.path.join(d, name + ".bin") for name in x if name != "ref"}
            files["out"] = os.path.join(d, "out.bin")
            for name in files:
                if name != "out":
                    write_raw(x[name], files[name])
            ours = None
            cmd = tilec_command(self.args.tilec, case, files, self.args.reps, self.args.backend)
            self.log.append(f"==== {case.name}\n$ {' '.join(cmd)}")
            try:
                env = dict(self.env, TILE_CACHE_DIR=self.cache_dir(case))
                text, row.tilec_s = run_tilec(cmd, env, self.args.timeout)
                self.log.append(text)
                row.parsed = parse_tilec_run(text)
                row.tile_ms, row.config = row.parsed["ms"], config_text(row.parsed)
                if row.tile_ms is None:
                    raise RuntimeError("no median in tilec's output")
                ours = read_raw(torch, files["out"], self.dtype(case), case.out_shape).cuda()
            except Exception as e:
                row.error = f"tile: {e}"
                self.log.append(f"failed: {e}\n{getattr(e, 'text', '')}")
            for name in PEERS[case.op]:
                row.peers[name] = self.peer(case, name, x, ours)
            del x, ours
        except Exception as e:  # inputs, files, a CUDA error: the row fails, the run goes on
            row.error = (row.error + "; " if row.error else "") + f"{type(e).__name__}: {e}"
        finally:
            shutil.rmtree(d, ignore_errors=True)
            try:
                torch.cuda.empty_cache()
            except Exception:  # a broken context shows in the next row's error
                pass
        row.row_s = time.time() - t0
        return row


def tuning_text(parsed):
    """Where a first launch's tuning went ('' when it did not tune): '; 240 configurations
    tuned in 20.1 s: compile 9.8 s (140.2 CPU-s), timing 8.9 s'."""
    if parsed.get("tune_configs") is None:
        return ""
    return (f"; {parsed['tune_configs']} configurations tuned in {parsed['tune_s']:.1f} s: "
            f"compile {parsed['tune_compile_s']:.1f} s ({parsed['tune_compile_cpu_s']:.1f} "
            f"CPU-s), timing {parsed['tune_timing_s']:.1f} s")


def progress_line(i, n, row):
    r = row
    fl = r.parsed.get("first_launch_ms")
    peers = ", ".join(f"{p} {fmt(r.tflops(v.get('ms')), '.1f')}" for p, v in r.peers.items())
    return (f"[{i}/{n}] {r.case.name}: tile {fmt(r.tflops(r.tile_ms), '.1f')} TFLOP/s "
            f"({fmt(r.tile_ms, '.4f')} ms), {peers}; max rel err {fmt(r.max_err(), '.1e')}"
            f"{' (!)' if r.flagged() else ''}; row {r.row_s:.1f} s, tilec {fmt(r.tilec_s, '.1f')} s "
            f"of which first launch with tuning {fmt(fl / 1e3 if fl is not None else None, '.1f')} s"
            + tuning_text(r.parsed) + (f"; ERROR {r.error}" if r.error else ""))


def export_tuning(tilec, cache, path):
    """Every group's tuning cache (see GpuBench.cache_dir) as one JSON document,
    {group: what `tilec cache export` wrote}."""
    doc = {}
    for group in sorted(g for g in os.listdir(cache) if os.path.isdir(os.path.join(cache, g))):
        fd, tmp = tempfile.mkstemp(suffix=".json")
        os.close(fd)
        try:
            subprocess.run([tilec, "cache", "export", f"--dir={os.path.join(cache, group)}", tmp],
                           capture_output=True, text=True, timeout=60, check=True)
            with open(tmp) as f:
                doc[group] = json.load(f)
        except (OSError, ValueError, subprocess.SubprocessError) as e:
            doc[group] = {"error": str(e)}
        finally:
            os.unlink(tmp)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)  # a run of no rows made no files
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)


def write_named_outputs(out, name, report, rows, log, head=None, record=None):
    """NAME.md (the report's text), NAME.csv (write_csv's head and record) and NAME_tilec.log
    under `out`; rewritten after every row, so that a run cut short keeps what it measured."""
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, name + ".md"), "w") as f:
        f.write(report + "\n")
    write_csv(os.path.join(out, name + ".csv"), rows, head, record)
    with open(os.path.join(out, name + "_tilec.log"), "w") as f:
        f.write("\n".join(log))


def write_outputs(out, meta, rows, log):
    write_named_outputs(out, "tensor_cores", markdown_report(meta, rows), rows, log)


def run_rows(args, bench, cases, meta, t0, row_type=None, progress=None, write=None):
    """Runs the cases in order, a progress line and the files under --out after each row.
    row_type, progress and write default to this file's Row, progress_line and write_outputs
    (bench/attention.py passes its own)."""
    row_type, progress, write = row_type or Row, progress or progress_line, write or write_outputs
    rows = []
    for i, case in enumerate(cases, 1):
        if args.max_seconds and time.time() - t0 > args.max_seconds:
            rows.append(row_type(case, error=f"skipped: past --max-seconds {args.max_seconds:g}",
                                 row_s=0.0))
        else:
            try:
                rows.append(bench.run_row(case))
            except Exception as e:  # run_row catches what it can; never lose the table
                rows.append(row_type(case, error=f"{type(e).__name__}: {e}", row_s=0.0))
        print(progress(i, len(cases), rows[-1]), flush=True)
        if args.out:
            write(args.out, meta, rows, bench.log)
    return rows


def run_start(args, cases, prefix):
    """A GPU run's temp dir, its facts (GPU, date, tilec, torch, triton; printed) and start time."""
    import torch
    import triton
    tmp = tempfile.mkdtemp(prefix=prefix)
    meta = {"gpu": torch.cuda.get_device_name(), "date": datetime.date.today().isoformat(),
            "tilec": tilec_version(args.tilec), "torch": torch.__version__,
            "triton": getattr(triton, "__version__", "?")}
    print(f"GPU {meta['gpu']}, torch {meta['torch']}, triton {meta['triton']}, {meta['tilec']}; "
          f"{len(cases)} rows; temp {tmp}", flush=True)
    return tmp, meta, time.time()


def gpu_main(args):
    cases = select_cases(args.quick, args.only, getattr(args, "quant", False))
    tmp, meta, t0 = run_start(args, cases, "tile-tc-bench-")
    try:
        bench = GpuBench(args, tmp)
        rows = run_rows(args, bench, cases, meta, t0)
        total = time.time() - t0
        tune = sum((r.parsed.get("first_launch_ms") or 0) / 1e3 for r in rows)
        tilec_s = sum(r.tilec_s or 0 for r in rows)
        print(f"total {total:.1f} s: tilec {tilec_s:.1f} s (first launches with tuning {tune:.1f} s), "
              f"the rest (inputs, files, peers) {total - tilec_s:.1f} s\n")
        print(markdown_report(meta, rows))
        if args.out:
            export_tuning(args.tilec, bench.cache, os.path.join(args.out, "tensor_cores_tuning.json"))
            title = f"tile vs cuBLAS / SDPA, {meta['gpu']}, {meta['date']}"
            if not write_plot(os.path.join(args.out, "tensor_cores.png"), rows, title):
                print("matplotlib not importable: no plot")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if any(r.flagged() for r in rows) else 0


def argument_parser(doc, quick_rows, out_help):
    """The options every tile benchmark takes (bench/attention.py adds its own)."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("tilec", help="the tilec binary (static, from scripts/build_carry.sh)")
    ap.add_argument("--quick", action="store_true", help=f"only {quick_rows} rows (smoke test)")
    ap.add_argument("--out", help=out_help)
    ap.add_argument("--reps", type=int, default=100, help="most cold launches timed per row")
    ap.add_argument("--only", help="only rows whose name contains this text")
    ap.add_argument("--cache", help="tuning cache dir to use and keep (default: a temp dir)")
    ap.add_argument("--tune-budget", type=float, help="TILE_TUNE_BUDGET seconds per tuning")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per tilec run")
    ap.add_argument("--max-seconds", type=float, default=0,
                    help="start no row after this many seconds (the rest show as skipped)")
    ap.add_argument("--tune", default="auto", choices=["auto", "cached", "off"],
                    help="TILE_TUNE: auto tunes each key on its first launch (default); cached "
                         "uses --cache's choices only")
    ap.add_argument("--backend", default="cuda", help=argparse.SUPPRESS)  # tests: cpu
    return ap


def parse_args(ap, argv):
    args = ap.parse_args(argv)
    args.tilec = os.path.abspath(args.tilec) if os.path.exists(args.tilec) else args.tilec
    return args


def main(argv=None):
    ap = argument_parser(__doc__, len(QUICK), "write the table, CSV, tuning cache, logs and plot here")
    ap.add_argument("--quant", action="store_true",
                    help="only the weight-only quantized rows (examples/quant_matmul.tile: 8- and 4-bit "
                         "weights against torch.mm of the dequantized f16 weights)")
    return gpu_main(parse_args(ap, argv))


if __name__ == "__main__":
    sys.exit(main())
