"""attention.py: the stdlib attention kernels (stdlib/attention/) beside PyTorch SDPA, in one run.

Rows, each on its own inputs (torch, fixed seed, normal, on the GPU):
- flash: flash_fwd / flash_fwd_bf16 on the FlashAttention-3 grid (batch x seq = 16k tokens,
  heads x head_dim = 2048; seq 1k, 4k, 16k; head_dim 64, 128; causal and not; f16, bf16) and a
  few GQA rows (32 query heads / 8 KV heads), against SDPA's flash and cuDNN backends, each
  selected alone (sdpa_kernel). TFLOP/s (4·B·H·S²·D, halved when causal).
- decode: `decode_fused` (the split-KV decode and, in its last program per sequence and KV head,
  the merge of the splits: one launch), fp16, head_dim
  128, 32 query heads / 8 KV heads, one query token per sequence, batch 1-64, KV length 4k-32k,
  against SDPA with every backend that takes the shape (flash, cuDNN, efficient, math), the
  best named. K/V TB/s: 2·B·KVH·L·D·2 bytes / time, beside the device's copy bandwidth (a 1 GiB
  device-to-device torch copy timed the same way, read + write bytes / time).
- paged: the decode shapes with K and V in pages of 16 ([num_blocks, 16, kv_heads, 128]) behind a
  shuffled block table, `paged` with SPLIT (split-KV, merged by its last split in the same launch), against our own
  `decode` on the dense layout (same inputs) and SDPA; and one mixed batch (a few prefills of
  1-2k tokens, many decodes) through `paged` in one launch (no SPLIT), checked against float32
  SDPA per sequence.

Our side: `tilec run --backend=cuda --load ... --save ... --cold --verbose`, tuning on the first
launch (TILE_TUNE=auto), as bench/tensor_cores.py does (its helpers are imported from there).
Peers: bench/cold.py (median of runs each alone after an L2 flush that leaves clean lines, as
tilec run --cold times ours).
Relative L2 error of our output against each peer's. A line per row as it goes; under --out:
attention.md, attention.csv, attention_tilec.log (rewritten after every row) and
attention_tuning.json. Exit 1 when a row failed or was flagged.

    usage: python3 bench/attention.py PATH/TO/TILEC [--quick | --full] [--out DIR] [--reps N]
                  [--only TEXT] [--cache DIR] [--tune MODE] [--tune-budget SECONDS]
                  [--timeout SECONDS] [--max-seconds SECONDS]
bench/test_attention.py tests it without a GPU or torch (CTest: bench_attention).
"""
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zlib
from dataclasses import dataclass, field

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tensor_cores as tc  # noqa: E402
from tensor_cores import (FLAG_ERR, ROOT, cell, config_text, export_tuning, fmt,  # noqa: E402
                          parse_tilec_run, read_raw, run_tilec, write_raw)

STDLIB = os.path.join(ROOT, "stdlib", "attention")
SDPA_BACKENDS = {"SDPA flash": "FLASH_ATTENTION", "SDPA cuDNN": "CUDNN_ATTENTION",
                 "SDPA efficient": "EFFICIENT_ATTENTION", "SDPA math": "MATH"}
PEERS = {"flash": ["SDPA flash", "SDPA cuDNN"], "decode": list(SDPA_BACKENDS),
         "paged": ["tile decode"] + list(SDPA_BACKENDS), "mixed": ["torch reference"]}
ALL_PEERS = ["tile decode"] + list(SDPA_BACKENDS) + ["torch reference"]
PAGE = 16            # paged rows: tokens per KV-cache block
MAX_SPLITS = 32      # decode's workspace: partial results per query row (its MAX_SPLITS const)
REPEAT_LIMIT = 16 << 30  # bytes: a peer without GQA gets K/V repeated per query head up to this


# ---- cases ----

@dataclass
class Case:
    op: str        # "flash", "decode", "paged" or "mixed"
    dtype: str     # "f16" or "bf16"
    batch: int
    heads: int     # query heads
    kv_heads: int
    seq: int       # flash: seq_q = seq_k; decode, paged: KV length of every sequence
    head_dim: int = 128
    causal: bool = False
    seqs: tuple = ()  # mixed: (query length, KV length) per sequence

    @property
    def name(self):
        h = f"h{self.heads}" + (f"/{self.kv_heads}" if self.kv_heads != self.heads else "")
        if self.op == "flash":
            return (f"flash {self.dtype} d{self.head_dim} s{self.seq} b{self.batch} {h}"
                    + (" causal" if self.causal else ""))
        if self.op == "mixed":
            pre = sum(1 for q, _ in self.seqs if q > 1)
            return (f"paged mixed {self.dtype} d{self.head_dim} {h} {pre} prefills + "
                    f"{len(self.seqs) - pre} decodes")
        page = f" page{PAGE}" if self.op == "paged" else ""
        return f"{self.op} {self.dtype} d{self.head_dim} b{self.batch} {h} kv{self.seq}{page}"

    @property
    def lengths(self):
        """(query length, KV length) of each sequence."""
        if self.op == "mixed":
            return list(self.seqs)
        q = self.seq if self.op == "flash" else 1
        return [(q, self.seq)] * self.batch

    @property
    def tokens(self):
        return sum(q for q, _ in self.lengths)

    @property
    def flops(self):
        """4·H·D per (query, visible key); flash counts S²/2 keys when causal (as FA3 does),
        the others every key a query sees (queries at the end of their sequence, causal)."""
        h, d = self.heads, self.head_dim
        if self.op == "flash":
            return 4.0 * self.batch * h * self.seq * self.seq * d / (2 if self.causal else 1)
        return 4.0 * h * d * sum(q * (k - q) + q * (q + 1) // 2 for q, k in self.lengths)

    @property
    def kv_bytes(self):
        """Bytes of K and V a pass reads once: 2 tensors x sequences x KV heads x length x D x 2."""
        return 2.0 * self.kv_heads * self.head_dim * 2 * sum(k for _, k in self.lengths)

    @property
    def shape_key(self):
        """Decode and paged rows of one shape share their inputs (and the dense decode time)."""
        return f"{self.dtype} b{self.batch} h{self.heads}/{self.kv_heads} kv{self.seq} d{self.head_dim}"


def mixed_lengths(seed=7, prefills=4, decodes=60):
    """A mixed batch: prefills of 1-2k new tokens (no earlier context) and decodes of one token
    against 1k-16k keys, interleaved as a server's scheduler might send them."""
    rnd = random.Random(seed)
    seqs = [(n, n) for n in (rnd.randint(1000, 2048) for _ in range(prefills))]
    seqs += [(1, rnd.randint(1000, 16384)) for _ in range(decodes)]
    rnd.shuffle(seqs)
    return tuple(seqs)


DECODE_DEFAULT = {(1, 32768), (4, 16384), (16, 8192), (16, 32768), (64, 4096)}


def all_cases(full=False):
    cases = []
    for dt in ("f16", "bf16"):
        for d in (64, 128):
            for s in (1024, 4096, 16384):
                for causal in (False, True):
                    cases.append(Case("flash", dt, 16384 // s, 2048 // d, 2048 // d, s, d, causal))
    cases += [Case("flash", "f16", 4, 32, 8, 4096, 128, True),
              Case("flash", "bf16", 4, 32, 8, 4096, 128, True),
              Case("flash", "f16", 4, 32, 8, 4096, 128, False),
              Case("flash", "f16", 1, 32, 8, 16384, 128, True)]
    shapes = [(b, n) for b in (1, 4, 16, 64) for n in (4096, 8192, 16384, 32768)
              if full or (b, n) in DECODE_DEFAULT]
    for op in ("decode", "paged"):
        cases += [Case(op, "f16", b, 32, 8, n, 128) for b, n in shapes]
    cases.append(Case("mixed", "f16", 0, 32, 8, 0, 128, True, mixed_lengths()))
    return cases


QUICK = {"flash f16 d128 s4096 b4 h16 causal", "flash f16 d128 s4096 b4 h32/8 causal",
         "decode f16 d128 b16 h32/8 kv8192", "paged f16 d128 b16 h32/8 kv8192 page16",
         "paged mixed f16 d128 h32/8 4 prefills + 60 decodes"}


def select_cases(quick, only, full=False):
    cases = [c for c in all_cases(full) if not quick or c.name in QUICK]
    return [c for c in cases if not only or only in c.name]


# ---- kernel files ----

def tilec_list(tilec, path):
    """(ok, output) of `tilec list FILE`: the file's kernels and their parameters."""
    p = subprocess.run([tilec, "list", path], capture_output=True, text=True, timeout=120)
    return p.returncode == 0, p.stdout + p.stderr


def kernel_source(tilec, path, tmp, _memo={}):
    """`path` once `tilec list` reads it (its imports resolved); raises with tilec's diagnostics
    when it does not. tmp is unused (kept for the callers' signature)."""
    key = (tilec, path)
    if key in _memo:
        return _memo[key]
    if not os.path.exists(path):
        raise FileNotFoundError(f"{os.path.relpath(path, ROOT)} does not exist in this tree")
    ok, text = tilec_list(tilec, path)
    if not ok:
        raise RuntimeError(f"tilec cannot read {path}: " + " / ".join(text.strip().splitlines()[:4]))
    _memo[key] = path
    return path


def kernel_params(listing, kernel):
    """The parameter names of `kernel` in `tilec list` output: (runtime, const) lists."""
    m = re.search(r"^" + re.escape(kernel) + r"\((.*)\)\s*$", listing, re.M)
    if not m:
        return None
    rt, consts = [], []
    for p in filter(None, (x.strip() for x in m.group(1).split(","))):
        name = p.split(":")[0].strip()
        (consts if name.startswith("const ") else rt).append(name.replace("const ", "").strip())
    return rt, consts


# ---- the tilec commands (one small function per kernel file: signatures live here) ----

def suffix(case):
    return "" if case.dtype == "f16" else "_bf16"


def run_args(src, kernel, scalars, consts, loads, counts, saves):
    """`tilec run` arguments: FILE:KERNEL, NAME=VALUE scalars, -D consts, --load NAME=FILE,
    NAME=COUNT for output buffers, --save NAME=FILE."""
    args = [f"{src}:{kernel}"] + [f"{n}={v!r}" if isinstance(v, float) else f"{n}={v}"
                                  for n, v in scalars.items()]
    for n, v in consts.items():
        args += ["-D", f"{n}=" + (("true" if v else "false") if isinstance(v, bool) else str(v))]
    for n, path in loads.items():
        args += ["--load", f"{n}={path}"]
    args += [f"{n}={c}" for n, c in counts.items()]
    for n, path in saves.items():
        args += ["--save", f"{n}={path}"]
    return args


def flash_args(src, case, files):
    """flash_fwd(q, k, v, o, lse, batch, heads, kv_heads, seq_q, seq_k, strides, scale, window,
    softcap; HEAD_DIM, CAUSAL): contiguous [batch, heads, seq, head_dim] tensors, no LSE."""
    b, h, kvh, s, d = case.batch, case.heads, case.kv_heads, case.seq, case.head_dim
    scalars = {"batch": b, "heads": h, "kv_heads": kvh, "seq_q": s, "seq_k": s}
    for t, nh in (("q", h), ("k", kvh), ("v", kvh), ("o", h)):
        scalars.update({f"{t}_sb": nh * s * d, f"{t}_sh": s * d, f"{t}_ss": d})
    scalars.update({"scale": 1 / math.sqrt(d), "window": 0, "softcap": 0.0})
    return [run_args(src, "flash_fwd" + suffix(case), scalars,
                     {"HEAD_DIM": d, "CAUSAL": case.causal},
                     {n: files[n] for n in ("q", "k", "v")}, {"o": b * h * s * d, "lse": 1},
                     {"o": files["out"]})]


def decode_args(src, case, files):
    """decode_fused(q, k, v, seq_lens, partial_o, partial_lse, counters, o, ...), one launch: q
    and o [batch, heads, 1, D], K and V [batch, kv_heads, L, D]; the workspace holds MAX_SPLITS
    partial rows of next_pow2(D) floats per query row; counters (one i32 per sequence and KV
    head) start at zero and every launch leaves them zero."""
    b, h, kvh, n, d = case.batch, case.heads, case.kv_heads, case.seq, case.head_dim
    rows, bd = b * h, 1 << (d - 1).bit_length()
    scalars = {"batch": b, "kv_heads": kvh, "max_seq_len": n, "scale": 1 / math.sqrt(d),
               "window": 0, "softcap": 0.0, "sq_b": h * d, "sq_h": d, "sq_t": d}
    scalars.update({"skv_b": kvh * n * d, "skv_h": n * d, "skv_n": d})  # K and V: one layout
    scalars.update({"so_b": h * d, "so_h": d, "so_t": d})
    consts = {"HEAD_DIM": d, "QLEN": 1, "MAX_SPLITS": MAX_SPLITS, "GROUP": h // kvh}
    return [run_args(src, "decode_fused" + suffix(case), scalars, consts,
                     {n_: files[n_] for n_ in ("q", "k", "v", "seq_lens", "counters")},
                     {"partial_o": rows * MAX_SPLITS * bd, "partial_lse": rows * MAX_SPLITS,
                      "o": rows * d}, {"o": files["out"]})]


def paged_args(src, case, files, max_blocks):
    """paged with SPLIT (decode rows: its last split merges, one launch) or without (the mixed
    batch): q and o [tokens, heads, D], K and V caches [blocks, PAGE, kv_heads, D], block_table
    [sequences, max_blocks], seq_lens [sequences], query_start_loc [sequences + 1]; with SPLIT
    the workspace holds MAX_SPLITS partial rows of D floats per (token, query head) and the
    counters (one i32 per query block and KV head) start at zero, else 1-element stand-ins."""
    h, kvh, d, t = case.heads, case.kv_heads, case.head_dim, case.tokens
    scalars = {"num_tokens": t, "num_seqs": len(case.lengths),
               "max_seq_len": max(k for _, k in case.lengths), "kv_heads": kvh,
               "stride_qt": h * d, "stride_qh": d, "stride_ot": h * d, "stride_oh": d,
               "stride_kvb": PAGE * kvh * d, "stride_kvs": kvh * d, "stride_kvh": d,
               "stride_bt": max_blocks, "scale": 1 / math.sqrt(d), "window": 0, "softcap": 0.0}
    split = case.op == "paged"
    consts = {"HEAD_DIM": d, "GROUP": h // kvh, "PAGE": PAGE, "SPLIT": split,
              "MAX_SPLITS": MAX_SPLITS}
    names = ("q", "k_cache", "v_cache", "block_table", "seq_lens", "query_start_loc")
    loads = {n: files[n] for n in names + (("counters",) if split else ())}
    ws = ({"ws_o": t * h * MAX_SPLITS * d, "ws_lse": t * h * MAX_SPLITS} if split
          else {"ws_o": 1, "ws_lse": 1, "counters": 1})
    return [run_args(src, "paged" + suffix(case), scalars, consts, loads,
                     dict(ws, o=t * h * d), {"o": files["out"]})]


def paged_counters(case):
    """How many counters paged's split path needs: num_tokens + num_seqs per KV head."""
    return (case.tokens + len(case.lengths)) * case.kv_heads


KERNEL_FILES = {"flash": "flash_fwd.tile", "decode": "decode.tile", "paged": "paged.tile",
                "mixed": "paged.tile"}


def tilec_commands(tilec, src, case, files, reps, backend="cuda", max_blocks=0):
    """The `tilec run` command lines of a row, in launch order (one, or two for split-KV);
    max_blocks: the block table's width (paged and mixed rows)."""
    if case.op == "flash":
        runs = flash_args(src, case, files)
    elif case.op == "decode":
        runs = decode_args(src, case, files)
    else:
        runs = paged_args(src, case, files, max_blocks)
    return [[tilec, "run"] + a + [f"--backend={backend}", f"--reps={reps}", "--cold", "--verbose"]
            for a in runs]


def kernel_of(cmd):
    return cmd[2].rsplit(":", 1)[1]


# ---- rows and the report ----

@dataclass
class Row:
    case: object
    tile_ms: float = None
    parts: list = field(default_factory=list)  # (kernel, median ms) per launch, in order
    peers: dict = field(default_factory=dict)  # name -> {"ms", "err", "note"}
    config: str = ""
    parsed: dict = field(default_factory=dict)  # the first launch's tilec facts
    tilec_s: float = None
    row_s: float = None
    error: str = ""
    copy_tbs: float = None  # the device's copy bandwidth, TB/s (decode and paged rows)
    same_copy_tbs: float = None  # a copy moving the row's K/V bytes (half read, half written)

    def tflops(self, ms):
        return self.case.flops / (ms * 1e9) if ms else None

    def tbs(self, ms):
        return self.case.kv_bytes / (ms * 1e9) if ms else None

    def max_err(self):
        return tc.Row.max_err(self)

    def flagged(self):
        return tc.Row.flagged(self)

    def best_sdpa(self):
        """(name, ms) of the fastest SDPA backend that ran, or (None, None)."""
        timed = [(v["ms"], p) for p, v in self.peers.items()
                 if p.startswith("SDPA") and v.get("ms")]
        return (min(timed)[1], min(timed)[0]) if timed else (None, None)


def ratio(a, b):
    return a / b if a and b else None


def err_text(r):
    e = r.max_err()
    return fmt(e, ".1e") + (" (!)" if e is not None and not e <= FLAG_ERR else "")


def notes_text(r, peers):
    notes = [r.error] if r.error else []
    if len(r.parts) > 1:
        notes.append(" + ".join(f"{k} {fmt(ms, '.4f')} ms" for k, ms in r.parts))
    return "; ".join(notes + [f"{p}: {r.peers[p]['note']}" for p in peers
                              if r.peers.get(p, {}).get("note")])


def table(title, head, rows, values):
    lines = [f"### {title}", "", "| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    lines += ["| " + " | ".join(cell(v) for v in values(r)) + " |" for r in rows]
    return lines + [""]


def flash_values(r):
    t = r.tflops(r.tile_ms)
    pt = [r.tflops(r.peers.get(p, {}).get("ms")) for p in PEERS["flash"]]
    return ([r.case.name, fmt(t, ".1f")] + [fmt(x, ".1f") for x in pt]
            + [fmt(ratio(t, x), ".2f") for x in pt]
            + [err_text(r), r.config, notes_text(r, PEERS["flash"])])


def decode_values(r):
    best, ms = r.best_sdpa()
    t = r.tbs(r.tile_ms)
    vals = [r.case.name, fmt(r.tile_ms, ".4f"), fmt(t, ".2f")]
    if r.case.op == "paged":
        dt = r.tbs(r.peers.get("tile decode", {}).get("ms"))
        vals += [fmt(dt, ".2f"), fmt(ratio(t, dt), ".2f")]
    return vals + [fmt(r.tbs(ms), ".2f"), best or "n/a", fmt(ratio(t, r.tbs(ms)), ".2f"),
                   fmt(ratio(t, r.copy_tbs), ".2f"), fmt(ratio(t, r.same_copy_tbs), ".2f"),
                   err_text(r), r.config,
                   notes_text(r, PEERS[r.case.op])]


def mixed_values(r):
    return [r.case.name, str(r.case.tokens), fmt(r.tile_ms, ".4f"), fmt(r.tflops(r.tile_ms), ".1f"),
            fmt(r.tbs(r.tile_ms), ".2f"), err_text(r), r.config, notes_text(r, PEERS["mixed"])]


TAIL = ["max rel err", "tile config", "notes"]
SECTIONS = [
    ("flash", "flash_fwd: prefill ([batch, heads, seq, head_dim]; SDPA backends selected "
              "explicitly; GQA rows h32/8)",
     ["case", "tile TFLOP/s"] + [f"{p} TFLOP/s" for p in PEERS["flash"]]
     + [f"tile / {p}" for p in PEERS["flash"]] + TAIL, flash_values),
    ("decode", "decode_fused (split-KV decode and merge, one launch): one query token per "
               "sequence, dense KV cache",
     ["case", "tile ms", "tile K/V TB/s", "best SDPA K/V TB/s", "best SDPA", "tile / best SDPA",
      "tile / copy", "tile / same-size copy"] + TAIL, decode_values),
    ("paged", f"paged (SPLIT, one launch): the decode shapes, KV in pages of {PAGE}, "
              "shuffled block table",
     ["case", "tile ms", "tile K/V TB/s", "tile decode (dense) K/V TB/s", "paged / decode",
      "best SDPA K/V TB/s", "best SDPA", "paged / best SDPA", "paged / copy",
      "paged / same-size copy"] + TAIL,
     decode_values),
    ("mixed", "paged (no SPLIT): one launch for a batch mixing prefills and decodes",
     ["case", "query tokens", "tile ms", "tile TFLOP/s", "tile K/V TB/s"] + TAIL, mixed_values),
]


def markdown_report(meta, rows):
    copy = meta.get("copy_tbs")
    lines = ["## Attention: the stdlib kernels beside SDPA (`bench/attention.py`)", "",
             f"GPU: {meta.get('gpu', '?')}; {meta.get('date', '?')}; tilec: {meta.get('tilec', '?')}; "
             f"torch {meta.get('torch', '?')}; triton {meta.get('triton', '?')}; device copy "
             f"bandwidth {fmt(copy, '.2f')} TB/s (a 1 GiB device-to-device copy, read + write "
             "bytes / median time).", "",
             "tile: median of cold launches at the tuned configuration (`tilec run --cold`, "
             "tuned on the first launch); every row is one launch (decode_fused and paged's split "
             "path merge their splits in the same launch). "
             "Peers: median of cold runs timed the same way (each alone between CUDA events "
             "after an L2 flush that reads, bench/cold.py) on the "
             "same inputs. TFLOP/s: 4·B·H·S²·D, halved when causal (flash); 4·H·D per query and "
             "key it sees (mixed). K/V TB/s: the bytes of K and V, 2·B·KVH·L·D·2, over the time. "
             "GQA peers: SDPA with enable_gqa=True where the backend takes it (noted "
             "'enable_gqa'), else K and V repeated per query head beforehand (noted 'K/V "
             "repeated': that peer reads GROUP times the bytes). max rel "
             f"err: relative L2 error of tile's output against each peer's, the largest; (!) "
             f"above {FLAG_ERR:g}. tile config: the first launch's tuned consts, registers and "
             "local memory per thread.", ""]
    for op, title, head, values in SECTIONS:
        sel = [r for r in rows if r.case.op == op]
        if sel:
            lines += table(title, head, sel, values)
    return "\n".join(lines)


CSV_HEAD = (["case", "op", "dtype", "batch", "heads", "kv_heads", "seq", "head_dim", "causal",
             "tokens", "gflop", "kv_gb", "tile_ms", "parts", "tile_tflops", "tile_kv_tbs"]
            + [f"{p}_{k}" for p in ALL_PEERS for k in ("ms", "tflops", "kv_tbs", "ratio", "rel_err")]
            + ["best_sdpa", "copy_tbs", "tile_copy_ratio", "same_copy_tbs", "max_rel_err", "flagged",
               "config",
               "regs", "local_bytes", "static_smem", "dynamic_smem", "tuned_ms",
               "first_launch_s", "tilec_s", "row_s", "error", "notes"])


def csv_record(r):
    c = r.case
    rec = {"case": c.name, "op": c.op, "dtype": c.dtype, "batch": len(c.lengths),
           "heads": c.heads, "kv_heads": c.kv_heads, "seq": c.seq, "head_dim": c.head_dim,
           "causal": int(c.causal), "tokens": c.tokens, "gflop": f"{c.flops / 1e9:.3f}",
           "kv_gb": f"{c.kv_bytes / 1e9:.4f}", "tile_ms": fmt(r.tile_ms, ".5f", ""),
           "parts": " + ".join(f"{k} {fmt(ms, '.5f')}" for k, ms in r.parts),
           "tile_tflops": fmt(r.tflops(r.tile_ms), ".2f", ""),
           "tile_kv_tbs": fmt(r.tbs(r.tile_ms), ".3f", "")}
    for p in ALL_PEERS:
        v = r.peers.get(p, {})
        ms = v.get("ms")
        rec.update({f"{p}_ms": fmt(ms, ".5f", ""), f"{p}_tflops": fmt(r.tflops(ms), ".2f", ""),
                    f"{p}_kv_tbs": fmt(r.tbs(ms), ".3f", ""),
                    f"{p}_ratio": fmt(ratio(ms, r.tile_ms), ".3f", ""),
                    f"{p}_rel_err": fmt(v.get("err"), ".3e", "")})
    fl = r.parsed.get("first_launch_ms")
    rec.update({"best_sdpa": r.best_sdpa()[0] or "", "copy_tbs": fmt(r.copy_tbs, ".3f", ""),
                "tile_copy_ratio": fmt(ratio(r.tbs(r.tile_ms), r.copy_tbs), ".3f", ""),
                "same_copy_tbs": fmt(r.same_copy_tbs, ".3f", ""),
                "max_rel_err": fmt(r.max_err(), ".3e", ""), "flagged": int(r.flagged()),
                "config": r.config, "tuned_ms": fmt(r.parsed.get("tuned_ms"), ".5f", ""),
                "first_launch_s": fmt(fl / 1e3 if fl is not None else None, ".2f", ""),
                "tilec_s": fmt(r.tilec_s, ".2f", ""), "row_s": fmt(r.row_s, ".2f", ""),
                "error": r.error, "notes": notes_text(r, ALL_PEERS)})
    for k in ("regs", "local_bytes", "static_smem", "dynamic_smem"):
        rec[k] = fmt(r.parsed.get(k), "d", "")
    return rec


def write_csv(path, rows):
    tc.write_csv(path, rows, CSV_HEAD, csv_record)


def write_outputs(out, meta, rows, log):
    """attention.md, attention.csv and attention_tilec.log under `out`, rewritten after every row."""
    tc.write_named_outputs(out, "attention", markdown_report(meta, rows), rows, log, CSV_HEAD,
                           csv_record)


def progress_line(i, n, r):
    metric = (lambda ms: fmt(r.tflops(ms), ".1f") + " TFLOP/s") if r.case.op == "flash" else \
             (lambda ms: fmt(r.tbs(ms), ".2f") + " TB/s")
    peers = ", ".join(f"{p} {metric(v.get('ms'))}" for p, v in r.peers.items() if v.get("ms"))
    fl = r.parsed.get("first_launch_ms")
    return (f"[{i}/{n}] {r.case.name}: tile {metric(r.tile_ms)} ({fmt(r.tile_ms, '.4f')} ms), "
            f"{peers or 'no peer'}; max rel err {fmt(r.max_err(), '.1e')}"
            f"{' (!)' if r.flagged() else ''}; row {r.row_s:.1f} s, tilec {fmt(r.tilec_s, '.1f')} s "
            f"(first launch with tuning {fmt(fl / 1e3 if fl is not None else None, '.1f')} s)"
            + tc.tuning_text(r.parsed) + (f"; ERROR {r.error}" if r.error else ""))


# ---- the GPU run ----

class GpuBench(tc.GpuBench):
    """tensor_cores.py's runner (torch, the peers' cold timer, the tuning cache, tilec's environment) with
    this benchmark's rows."""
    def __init__(self, args, tmp):
        super().__init__(args, tmp)
        self.copy = None
        self.dense = {}  # shape_key -> our decode's median ms, for the paged rows
        self.same_copy = {}  # bytes -> TB/s of a copy moving that many bytes
        self.page_order = getattr(args, "page_order", "shuffled")

    def measure_copy(self, gib=1):
        """The device's copy bandwidth, TB/s: copy_of a `gib` GiB source, read + write bytes over
        its cold median (self.copy; None where it failed, with the reason printed)."""
        self.copy = self.copy_of(2 * (gib << 30))
        if self.copy is not None:
            print(f"device copy bandwidth {self.copy:.2f} TB/s", flush=True)
        return self.copy

    def copy_of(self, nbytes):
        """TB/s of a device-to-device copy that moves `nbytes` in all (nbytes/2 read, nbytes/2
        written), timed as the rows are: what a memory-bound launch of that size reaches, launch
        and ramp included (None where it failed)."""
        nbytes = int(nbytes)
        if nbytes not in self.same_copy:
            torch, tbs = self.torch, None
            try:
                src = torch.empty(max(nbytes // 4, 1), dtype=torch.float16, device="cuda")
                dst = torch.empty_like(src)
                tbs = 4.0 * src.numel() / (self.ms(lambda: dst.copy_(src)) * 1e9)
            except Exception as e:  # noqa: BLE001  the ratio is n/a
                print(f"copy of {nbytes} bytes: failed: {type(e).__name__}: {e}", flush=True)
            self.same_copy[nbytes] = tbs
        return self.same_copy[nbytes]

    def cache_dir(self, case, kernel):
        """One tuning cache per kernel and fixed consts (dtype, head_dim, causal)."""
        d = os.path.join(self.cache, f"{kernel}-d{case.head_dim}"
                         + ("-causal" if case.causal and case.op == "flash" else ""))
        os.makedirs(d, exist_ok=True)
        return d

    def dtype(self, case):
        return self.torch.float16 if case.dtype == "f16" else self.torch.bfloat16

    def randn(self, key, shapes, dt):
        torch = self.torch
        g = torch.Generator(device="cuda")
        g.manual_seed(zlib.crc32(key.encode()))
        return {n: torch.randn(s, device="cuda", dtype=dt, generator=g) for n, s in shapes.items()}

    def inputs(self, case):
        """Tensors on the GPU: q, k, v dense ([batch, heads, seq, D]) for flash, decode and
        paged rows; paged rows add the caches, block table, lengths; mixed rows are packed."""
        torch, dt = self.torch, self.dtype(case)
        b, h, kvh, n, d = case.batch, case.heads, case.kv_heads, case.seq, case.head_dim
        if case.op == "mixed":
            return self.mixed_inputs(case)
        qs = n if case.op == "flash" else 1
        key = case.name if case.op == "flash" else case.shape_key
        x = self.randn(key, {"q": (b, h, qs, d), "k": (b, kvh, n, d), "v": (b, kvh, n, d)}, dt)
        if case.op != "flash":
            x["seq_lens"] = torch.full((b,), n, dtype=torch.int32, device="cuda")
        if case.op == "paged":
            x.update(self.paged_layout(x["k"], x["v"], [n] * b, key))
            x["query_start_loc"] = torch.arange(b + 1, dtype=torch.int32, device="cuda")
            x["q_packed"] = x["q"].reshape(b, h, d)
        return x

    def paged_layout(self, k, v, lens, key):
        """K and V ([sequences, kv_heads, L, D], or lists of [kv_heads, L_i, D]) as caches
        [blocks, PAGE, kv_heads, D] in shuffled blocks, and the block table."""
        torch = self.torch
        per = [-(-n // PAGE) for n in lens]
        nblocks, width = sum(per), max(per)
        g = torch.Generator(device="cpu")
        g.manual_seed(zlib.crc32(("blocks " + key).encode()))
        block_bytes = PAGE * k[0].shape[0] * k[0].shape[-1] * k[0].element_size()
        perm = page_permutation(torch, nblocks, g, self.page_order, block_bytes).to("cuda")
        table = torch.zeros((len(lens), width), dtype=torch.int32, device="cuda")
        out = {}
        for name, src in (("k_cache", k), ("v_cache", v)):
            kvh, d = src[0].shape[0], src[0].shape[-1]
            cache = torch.zeros((nblocks, PAGE, kvh, d), dtype=src[0].dtype, device="cuda")
            at = 0
            for s, n in enumerate(lens):
                t = src[s][:, :n].permute(1, 0, 2)  # [n, kv_heads, D]
                pad = per[s] * PAGE - n
                if pad:
                    t = torch.cat([t, t.new_zeros((pad, kvh, d))])
                ids = perm[at:at + per[s]]
                cache[ids] = t.reshape(per[s], PAGE, kvh, d)
                table[s, :per[s]] = ids.to(torch.int32)
                at += per[s]
            out[name] = cache
        out["block_table"] = table
        return out

    def mixed_inputs(self, case):
        torch, dt = self.torch, self.dtype(case)
        h, kvh, d = case.heads, case.kv_heads, case.head_dim
        g = torch.Generator(device="cuda")
        g.manual_seed(zlib.crc32(case.name.encode()))
        qs = [torch.randn((h, ql, d), device="cuda", dtype=dt, generator=g) for ql, _ in case.seqs]
        ks = [torch.randn((kvh, kl, d), device="cuda", dtype=dt, generator=g) for _, kl in case.seqs]
        vs = [torch.randn((kvh, kl, d), device="cuda", dtype=dt, generator=g) for _, kl in case.seqs]
        x = {"qs": qs, "ks": ks, "vs": vs,
             "q_packed": torch.cat([q.permute(1, 0, 2) for q in qs]).contiguous(),
             "seq_lens": torch.tensor([kl for _, kl in case.seqs], dtype=torch.int32, device="cuda")}
        starts = [0]
        for ql, _ in case.seqs:
            starts.append(starts[-1] + ql)
        x["query_start_loc"] = torch.tensor(starts, dtype=torch.int32, device="cuda")
        x.update(self.paged_layout(ks, vs, [kl for _, kl in case.seqs], case.name))
        return x

    # -- peers --

    def sdpa_run(self, case, name, x):
        """(output, median ms, note) of SDPA with one backend alone; raises where it cannot run.
        GQA through enable_gqa where the backend takes it, else K/V repeated beforehand."""
        torch = self.torch
        from torch.nn.attention import SDPBackend, sdpa_kernel
        sdpa, scale = torch.nn.functional.scaled_dot_product_attention, 1 / math.sqrt(case.head_dim)
        q, k, v, causal = x["q"], x["k"], x["v"], case.causal and case.op == "flash"
        with sdpa_kernel([getattr(SDPBackend, SDPA_BACKENDS[name])]):  # only it, or an error
            if case.heads == case.kv_heads:
                fn = lambda: sdpa(q, k, v, is_causal=causal, scale=scale)
                return fn(), self.ms(fn), ""
            try:
                fn = lambda: sdpa(q, k, v, is_causal=causal, scale=scale, enable_gqa=True)
                return fn(), self.ms(fn), "enable_gqa"
            except Exception as e:  # noqa: BLE001  (an old torch, or a backend without GQA)
                why = (str(e).strip().splitlines() or [type(e).__name__])[0][:100]
            g = case.heads // case.kv_heads
            if k.numel() * k.element_size() * 2 * g > REPEAT_LIMIT:
                raise RuntimeError(f"no GQA ({why}) and K/V repeated {g}x would exceed "
                                   f"{REPEAT_LIMIT >> 30} GiB")
            kr, vr = k.repeat_interleave(g, dim=1), v.repeat_interleave(g, dim=1)
            fn = lambda: sdpa(q, kr, vr, is_causal=causal, scale=scale)
            return fn(), self.ms(fn), f"K/V repeated {g}x (no enable_gqa: {why})"

    def sdpa_peer(self, case, name, x, ours):
        """{"ms", "err", "note"} of one SDPA backend; n/a with the reason where it cannot run."""
        try:
            out, ms, note = self.sdpa_run(case, name, x)
        except Exception as e:  # noqa: BLE001  e.g. no cuDNN attention here: n/a, the row goes on
            msg = str(e).strip().splitlines()
            return {"ms": None, "err": None, "note": "n/a: " + (msg[0][:160] if msg else type(e).__name__)}
        return {"ms": ms, "err": self.rel_err(ours, out), "note": note}

    def rel_err(self, ours, ref):
        if ours is None:
            return None
        torch = self.torch
        ref = ref.float().reshape(ours.shape)
        return (torch.linalg.vector_norm(ours.float() - ref) / torch.linalg.vector_norm(ref)).item()

    def mixed_reference(self, case, x):
        """float32 SDPA per sequence, packed as our output [tokens, heads, D]."""
        torch = self.torch
        sdpa, g = torch.nn.functional.scaled_dot_product_attention, case.heads // case.kv_heads
        outs = []
        for q, k, v in zip(x["qs"], x["ks"], x["vs"]):
            kr, vr = k.float().repeat_interleave(g, 0), v.float().repeat_interleave(g, 0)
            o = sdpa(q.float()[None], kr[None], vr[None], is_causal=q.shape[1] > 1,
                     scale=1 / math.sqrt(case.head_dim))  # prefills: q_len == kv_len
            outs.append(o[0].permute(1, 0, 2))
        return torch.cat(outs)

    # -- our side --

    def files_for(self, case, x, d):
        files = {n: os.path.join(d, n + ".bin") for n in ("out", "partial_o", "partial_lse")}
        if case.op in ("decode", "paged"):
            n = case.batch * case.kv_heads if case.op == "decode" else paged_counters(case)
            x["counters"] = self.torch.zeros(n, dtype=self.torch.int32, device="cuda")
        names = {"flash": ("q", "k", "v"), "decode": ("q", "k", "v", "seq_lens", "counters")}.get(
            case.op, ("q_packed", "k_cache", "v_cache", "block_table", "seq_lens", "query_start_loc")
            + (("counters",) if case.op == "paged" else ()))
        for n in names:
            files["q" if n == "q_packed" else n] = os.path.join(d, n + ".bin")
            write_raw(x[n], files["q" if n == "q_packed" else n])
        return files

    def run_tile(self, row, case, x, d):
        """Runs our launches in order; sets row.tile_ms (their sum), parts, config; returns our
        output (on the GPU)."""
        src = kernel_source(self.args.tilec, os.path.join(STDLIB, KERNEL_FILES[case.op]), self.tmp)
        files = self.files_for(case, x, d)
        width = x["block_table"].shape[1] if "block_table" in x else 0
        cmds = tilec_commands(self.args.tilec, src, case, files, self.args.reps, self.args.backend,
                              width)
        row.tilec_s = 0.0
        for cmd in cmds:
            self.log.append(f"==== {case.name}: {kernel_of(cmd)}\n$ {' '.join(cmd)}")
            env = dict(self.env, TILE_CACHE_DIR=self.cache_dir(case, kernel_of(cmd)))
            text, secs = run_tilec(cmd, env, self.args.timeout)
            self.log.append(text)
            parsed = parse_tilec_run(text)
            if parsed["ms"] is None:
                raise RuntimeError(f"no median in the output of {kernel_of(cmd)}")
            row.tilec_s += secs
            row.parts.append((kernel_of(cmd), parsed["ms"]))
            if not row.parsed:
                row.parsed, row.config = parsed, config_text(parsed)
        row.tile_ms = sum(ms for _, ms in row.parts)
        shape = (case.tokens, case.heads, case.head_dim) if case.op in ("paged", "mixed") else \
            (case.batch, case.heads, case.seq if case.op == "flash" else 1, case.head_dim)
        return read_raw(self.torch, files["out"], self.dtype(case), shape).cuda()

    def dense_decode(self, case, x, d):
        """Our decode on the dense layout of a paged row's inputs: {"ms", "err": None, "note"}
        (the decode row's time where it ran earlier in this run)."""
        if case.shape_key not in self.dense:
            dense = Case("decode", case.dtype, case.batch, case.heads, case.kv_heads, case.seq,
                         case.head_dim)
            r = Row(dense)
            self.run_tile(r, dense, x, d)
            self.dense[case.shape_key] = r.tile_ms
        return {"ms": self.dense[case.shape_key], "err": None, "note": ""}

    def run_row(self, case):
        t0 = time.time()
        row = Row(case)
        d = tempfile.mkdtemp(dir=self.tmp, prefix="row-")
        try:
            x = self.inputs(case)
            if case.op in ("decode", "paged"):
                row.copy_tbs, row.same_copy_tbs = self.copy, self.copy_of(case.kv_bytes)
            ours = None
            try:
                ours = self.run_tile(row, case, x, d)
                if case.op == "decode":
                    self.dense[case.shape_key] = row.tile_ms
            except Exception as e:  # noqa: BLE001
                row.error = f"tile: {e}"
                self.log.append(f"failed: {e}\n{getattr(e, 'text', '')}")
            self.peers(row, case, x, ours, d)
            del x, ours
        except Exception as e:  # noqa: BLE001  inputs, files, a CUDA error: the row fails, the run goes on
            row.error = (row.error + "; " if row.error else "") + f"{type(e).__name__}: {e}"
        finally:
            shutil.rmtree(d, ignore_errors=True)
            try:
                self.torch.cuda.empty_cache()
            except Exception:  # noqa: BLE001  a broken context shows in the next row's error
                pass
        row.row_s = time.time() - t0
        return row

    def peers(self, row, case, x, ours, d):
        if case.op == "mixed":
            row.peers["torch reference"] = {"ms": None, "note": "float32 SDPA per sequence",
                                            "err": self.rel_err(ours, self.mixed_reference(case, x))}
            return
        for name in PEERS[case.op]:
            if name == "tile decode":
                try:
                    row.peers[name] = self.dense_decode(case, x, d)
                except Exception as e:  # noqa: BLE001
                    row.peers[name] = {"ms": None, "err": None, "note": f"n/a: {e}"[:200]}
            else:  # paged rows: our [tokens, heads, D] is SDPA's [batch, heads, 1, D]
                row.peers[name] = self.sdpa_peer(case, name, x, ours)


GPU_PAGE = 2 << 20  # bytes: the GPU's large page, the unit of address translation


def page_permutation(torch, n, g, order, block_bytes):
    """Where each sequence block (of block_bytes) goes in the cache. shuffled: anywhere (the
    default, as a serving engine's allocator ends up); local: shuffled within runs of blocks
    that fill one GPU_PAGE, the runs in order; coarse: the runs shuffled, in order within;
    identity: in order. The orders separate the cost of the block table from that of where
    the blocks sit (address translation, DRAM locality)."""
    if order == "identity":
        return torch.arange(n)
    if order == "shuffled":
        return torch.randperm(n, generator=g)
    per = max(GPU_PAGE // block_bytes, 1)
    runs = [torch.arange(i, min(i + per, n)) for i in range(0, n, per)]
    if order == "coarse":
        return torch.cat([runs[i] for i in torch.randperm(len(runs), generator=g).tolist()])
    return torch.cat([r[torch.randperm(len(r), generator=g)] for r in runs])


def gpu_main(args):
    cases = select_cases(args.quick, args.only, args.full)
    tmp, meta, t0 = tc.run_start(args, cases, "tile-attn-bench-")
    rows = []
    try:
        bench = GpuBench(args, tmp)
        if bench.page_order != "shuffled":
            print(f"paged rows: blocks placed {bench.page_order} (a diagnostic order)")
        if any(c.op in ("decode", "paged") for c in cases):
            meta["copy_tbs"] = bench.measure_copy()
        rows = tc.run_rows(args, bench, cases, meta, t0, Row, progress_line, write_outputs)
        total, tilec_s = time.time() - t0, sum(r.tilec_s or 0 for r in rows)
        print(f"total {total:.1f} s: tilec {tilec_s:.1f} s, the rest (inputs, files, peers) "
              f"{total - tilec_s:.1f} s\n")
        print(markdown_report(meta, rows))
        if args.out:
            export_tuning(args.tilec, bench.cache, os.path.join(args.out, "attention_tuning.json"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if any(r.flagged() for r in rows) else 0


def main(argv=None):
    ap = tc.argument_parser(__doc__, len(QUICK), "write the table, CSV, tilec logs and tuning cache here")
    ap.add_argument("--full", action="store_true",
                    help="every decode and paged shape (batch 1, 4, 16, 64 x KV 4k-32k)")
    ap.add_argument("--page-order", default="shuffled",
                    choices=["shuffled", "local", "coarse", "identity"],
                    help="where the paged rows' blocks sit in the cache (default shuffled; "
                         "the others are diagnostics, see page_permutation)")
    return gpu_main(tc.parse_args(ap, argv))


if __name__ == "__main__":
    sys.exit(main())
