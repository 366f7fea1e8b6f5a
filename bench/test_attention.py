"""test_attention.py: tests of bench/attention.py without a GPU or torch (CTest: bench_attention).
Every `tilec run` command the bench builds runs for real on the CPU backend at a tiny size
against a pure-Python reference (flash_fwd, decode_fused, paged with SPLIT +
paged_combine, and paged on a mixed batch): parameter names, strides, layouts, the files passed
from one launch to the next. A kernel file not in the tree yet is skipped with a message. Then
the case lists, the FLOP and byte counts, the inlining of imports, and the table, CSV and
--max-seconds handling on rows made up here.
    usage: python3 bench/test_attention.py PATH/TO/TILEC [KERNEL_DIR]
KERNEL_DIR: where the attention .tile files are (default stdlib/attention), e.g. another
worktree's while its kernels are being written.
"""
import argparse
import csv
import math
import os
import random
import shutil
import struct
import sys
import tempfile
import zlib

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attention as at  # noqa: E402
import test_tensor_cores as ttc  # noqa: E402
from test_tensor_cores import check, from_bytes, rel_l2, to_bytes  # noqa: E402


# ---- pure-Python attention and the layouts the bench uses ----

def attend(qv, keys, vals, scale):
    """softmax(scale q . k) v over the given keys (lists of vectors)."""
    sc = [scale * sum(a * b for a, b in zip(qv, kv)) for kv in keys]
    mx = max(sc)
    p = [math.exp(s - mx) for s in sc]
    tot = sum(p)
    return [sum(p[j] * vals[j][c] for j in range(len(keys))) / tot for c in range(len(qv))]


def vec(flat, index, d):
    return flat[index * d:(index + 1) * d]


def ref_dense(case, q, k, v):
    """[batch, heads, q_len, D] out of q [batch, heads, q_len, D] and K, V [batch, kv_heads,
    L, D]; queries at the end of the keys, causal (flash rows when case.causal)."""
    b, h, kvh, n, d = case.batch, case.heads, case.kv_heads, case.seq, case.head_dim
    ql = n if case.op == "flash" else 1
    out = []
    for bb in range(b):
        for hh in range(h):
            kh = bb * kvh + hh // (h // kvh)
            for i in range(ql):
                see = n - ql + i + 1 if case.causal or ql == 1 else n
                keys = [vec(k, kh * n + j, d) for j in range(see)]
                vals = [vec(v, kh * n + j, d) for j in range(see)]
                out += attend(vec(q, (bb * h + hh) * ql + i, d), keys, vals, 1 / math.sqrt(d))
    return out


def paged_layout(lens, k_seqs, v_seqs, kvh, d, seed):
    """Per-sequence K, V ([kv_heads, L, D] flat) as caches [blocks, PAGE, kv_heads, D] in
    shuffled blocks, and the block table [sequences, width] (as GpuBench.paged_layout)."""
    per = [-(-n // at.PAGE) for n in lens]
    perm = list(range(sum(per)))
    random.Random(seed).shuffle(perm)
    width, size = max(per), at.PAGE * kvh * d
    caches = [[0.0] * (sum(per) * size) for _ in range(2)]
    table, at_ = [], 0
    for s, n in enumerate(lens):
        ids = perm[at_:at_ + per[s]]
        table += ids + [0] * (width - per[s])
        at_ += per[s]
        for cache, src in zip(caches, (k_seqs[s], v_seqs[s])):
            for pos in range(n):
                for hh in range(kvh):
                    base = ids[pos // at.PAGE] * size + (pos % at.PAGE * kvh + hh) * d
                    cache[base:base + d] = vec(src, hh * n + pos, d)
    return caches[0], caches[1], table, width


def ref_packed(case, qs, ks, vs):
    """[tokens, heads, D] out of per-sequence q [heads, q_len, D], K, V [kv_heads, L, D]."""
    h, kvh, d = case.heads, case.kv_heads, case.head_dim
    rows = []
    for (ql, n), q, k, v in zip(case.lengths, qs, ks, vs):
        for i in range(ql):
            for hh in range(h):
                kh, see = hh // (h // kvh), n - ql + i + 1
                rows += attend(vec(q, hh * ql + i, d), [vec(k, kh * n + j, d) for j in range(see)],
                               [vec(v, kh * n + j, d) for j in range(see)], 1 / math.sqrt(d))
    return rows


# ---- 1. every command the bench builds, run by the real tilec on the CPU backend ----

def rand_vals(rnd, n):
    return [rnd.randint(-16, 16) / 8 for _ in range(n)]


def write(path, vals, kind):
    with open(path, "wb") as f:
        f.write(struct.pack(f"<{len(vals)}i", *vals) if kind == "i32" else to_bytes(vals, kind))


def tiny_inputs(case, tmp):
    """Files of a tiny case (as GpuBench.files_for names them), the reference output, and the
    block table's width."""
    rnd = random.Random(zlib.crc32(case.name.encode()))
    b, h, kvh, n, d, dt = case.batch, case.heads, case.kv_heads, case.seq, case.head_dim, case.dtype
    files = {name: os.path.join(tmp, name + ".bin") for name in ("out", "partial_o", "partial_lse")}
    data = {}
    if case.op in ("flash", "decode"):
        ql = n if case.op == "flash" else 1
        data = {"q": rand_vals(rnd, b * h * ql * d), "k": rand_vals(rnd, b * kvh * n * d),
                "v": rand_vals(rnd, b * kvh * n * d)}
        ref, width = ref_dense(case, data["q"], data["k"], data["v"]), 0
        if case.op == "decode":
            write(os.path.join(tmp, "seq_lens.bin"), [n] * b, "i32")
            files["seq_lens"] = os.path.join(tmp, "seq_lens.bin")
            write(os.path.join(tmp, "counters.bin"), [0] * (b * kvh), "i32")
            files["counters"] = os.path.join(tmp, "counters.bin")
    else:
        lens = case.lengths
        qs = [rand_vals(rnd, h * ql * d) for ql, _ in lens]
        ks = [rand_vals(rnd, kvh * kl * d) for _, kl in lens]
        vs = [rand_vals(rnd, kvh * kl * d) for _, kl in lens]
        kc, vc, table, width = paged_layout([kl for _, kl in lens], ks, vs, kvh, d, case.name)
        packed = []
        for (ql, _), q in zip(lens, qs):
            packed += [x for i in range(ql) for hh in range(h) for x in vec(q, hh * ql + i, d)]
        data = {"q": packed, "k_cache": kc, "v_cache": vc}
        starts = [sum(ql for ql, _ in lens[:i]) for i in range(len(lens) + 1)]
        named = [("block_table", table), ("seq_lens", [kl for _, kl in lens]),
                 ("query_start_loc", starts)]
        if case.op == "paged":
            named.append(("counters", [0] * at.paged_counters(case)))
        for name, vals in named:
            files[name] = os.path.join(tmp, name + ".bin")
            write(files[name], vals, "i32")
        ref = ref_packed(case, qs, ks, vs)
    for name, vals in data.items():
        files[name] = os.path.join(tmp, name + ".bin")
        write(files[name], vals, dt)
    return files, ref, width


TINY = [at.Case("flash", "f16", 1, 4, 2, 24, 64, True),
        at.Case("flash", "bf16", 2, 2, 2, 19, 64, False),
        at.Case("decode", "f16", 2, 8, 2, 40, 64),
        at.Case("paged", "f16", 2, 8, 2, 40, 64),
        at.Case("mixed", "f16", 0, 8, 2, 0, 64, True, ((5, 5), (1, 40), (1, 17), (3, 3)))]


def run_tiny(tilec, case, tmp):
    src = at.kernel_source(tilec, os.path.join(at.STDLIB, at.KERNEL_FILES[case.op]), tmp)
    files, ref, width = tiny_inputs(case, tmp)
    env = dict(os.environ, TILE_TUNE="off", TILE_CACHE_DIR=os.path.join(tmp, "cache"))
    cmds = at.tilec_commands(tilec, src, case, files, 2, backend="cpu", max_blocks=width)
    kernels = []
    for cmd in cmds:
        text, _ = at.run_tilec(cmd, env, 300)
        kernels.append(at.kernel_of(cmd))
        check(at.parse_tilec_run(text)["ms"] is not None, f"{case.name}: {kernels[-1]} ran, timed")
    with open(files["out"], "rb") as f:
        ours = from_bytes(f.read(), case.dtype)
    err = rel_l2(ours, ref) if len(ours) == len(ref) else float("inf")
    check(err < at.FLAG_ERR, f"{case.name}: {' then '.join(kernels)}: the output saved against "
                             f"the reference: {err:.1e}")


def named_params(cmd):
    """The parameter names a `tilec run` command line sets: (runtime, const)."""
    rt, consts, args = [], [], cmd[3:]
    for i, a in enumerate(args):
        if a in ("-D", "--load", "--save"):
            continue
        name = a.split("=")[0]
        if i and args[i - 1] == "-D":
            consts.append(name)
        elif "=" in a and not a.startswith("--"):
            rt.append(name)
    return rt, consts


def test_names(tilec, tmp):
    """Both dtypes' commands of every op name only parameters the kernels have, and every
    runtime parameter (`tilec list`), without running them."""
    for case in TINY:
        path = os.path.join(at.STDLIB, at.KERNEL_FILES[case.op])
        if not os.path.exists(path):
            continue
        src = at.kernel_source(tilec, path, tmp)
        _, listing = at.tilec_list(tilec, src)
        for dt in ("f16", "bf16"):
            c = at.Case(case.op, dt, case.batch, case.heads, case.kv_heads, case.seq,
                        case.head_dim, case.causal, case.seqs)
            files = {n: "F" for n in ("q", "k", "v", "out", "partial_o", "partial_lse", "seq_lens",
                                      "k_cache", "v_cache", "block_table", "query_start_loc",
                                      "counters")}
            for cmd in at.tilec_commands(tilec, src, c, files, 2, max_blocks=3):
                kernel, (rt, consts) = at.kernel_of(cmd), named_params(cmd)
                have = at.kernel_params(listing, kernel)
                check(have is not None and set(rt) == set(have[0])
                      and set(consts) <= set(have[1]),
                      f"{c.name}: {kernel}: the command sets every runtime parameter, and only "
                      f"the kernel's" + ("" if have else " (no such kernel)"))


def test_commands(tilec):
    tmp = tempfile.mkdtemp(prefix="tile-attn-test-")
    try:
        test_names(tilec, tmp)
        for case in TINY:
            path = os.path.join(at.STDLIB, at.KERNEL_FILES[case.op])
            if not os.path.exists(path):
                print(f"skip {case.name}: {os.path.relpath(path, at.ROOT)} is not in this tree "
                      "(its kernels land separately; give their folder as KERNEL_DIR to test now)")
                continue
            try:
                run_tiny(tilec, case, tmp)
            except Exception as e:  # noqa: BLE001
                check(False, f"{case.name}: {e}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ---- 2. imports, cases, counts ----

def test_imports(tilec):
    tmp = tempfile.mkdtemp(prefix="tile-attn-imp-")
    try:
        path = os.path.join(at.ROOT, "stdlib", "attention", "flash_fwd.tile")
        src = at.kernel_source(tilec, path, tmp)
        ok, listing = at.tilec_list(tilec, src)
        params = at.kernel_params(listing, "flash_fwd")
        check(ok and params and "q_ss" in params[0] and "CAUSAL" in params[1],
              f"kernel_source: tilec reads flash_fwd (imports resolved), "
              f"tilec list gives its parameters")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_cases():
    cases = at.all_cases()
    ops = [c.op for c in cases]
    check(ops.count("flash") == 28 and ops.count("decode") == 5 and ops.count("paged") == 5
          and ops.count("mixed") == 1, "default cases: 28 flash, 5 decode, 5 paged, 1 mixed")
    full = [c.op for c in at.all_cases(full=True)]
    check(full.count("decode") == 16 and full.count("paged") == 16, "--full: 16 decode shapes")
    check(len(at.select_cases(True, None)) == len(at.QUICK)
          and len({c.name for c in cases}) == len(cases), "--quick finds every row; names unique")
    check([c.name for c in at.select_cases(False, "h32/8 causal")]
          == ["flash f16 d128 s4096 b4 h32/8 causal", "flash bf16 d128 s4096 b4 h32/8 causal",
              "flash f16 d128 s16384 b1 h32/8 causal"], "--only on GQA flash rows")
    c = at.Case("decode", "f16", 16, 32, 8, 8192, 128)
    check(c.kv_bytes == 2 * 16 * 8 * 8192 * 128 * 2 and c.flops == 4.0 * 16 * 32 * 128 * 8192,
          "decode: K/V bytes 2·B·KVH·L·D·2, FLOPs 4·B·H·L·D")
    f = at.Case("flash", "f16", 4, 16, 16, 4096, 128, True)
    check(f.flops == 4.0 * 4 * 16 * 4096 * 4096 * 128 / 2, "flash: causal FLOPs halved (FA3)")
    m = at.Case("mixed", "f16", 0, 32, 8, 0, 128, True, ((3, 3), (1, 10)))
    check(m.flops == 4.0 * 32 * 128 * (6 + 10) and m.tokens == 4
          and m.kv_bytes == 2 * 8 * 128 * 2 * 13, "mixed: FLOPs over the keys each query sees")
    seqs = at.mixed_lengths()
    check(sum(q > 1 for q, _ in seqs) == 4 and all(1000 <= q == k <= 2048 for q, k in seqs if q > 1)
          and sum(q == 1 for q, _ in seqs) == 60 and seqs == at.mixed_lengths(),
          "mixed batch: 4 prefills of 1-2k tokens, 60 decodes, the same every run")


# ---- 3. the table, the CSV and the run loop, on rows made up here ----

def made_up_rows():
    f = at.Row(at.Case("flash", "f16", 4, 16, 16, 4096, 128, True), tile_ms=0.5, config="M128 N64")
    f.peers = {"SDPA flash": {"ms": 0.4, "err": 2e-4, "note": ""},
               "SDPA cuDNN": {"ms": None, "err": None, "note": "n/a: No available kernel"}}
    d = at.Row(at.Case("decode", "f16", 16, 32, 8, 8192, 128), tile_ms=0.25, copy_tbs=3.0,
               same_copy_tbs=2.0, parts=[("decode_fused", 0.25)])
    d.peers = {"SDPA flash": {"ms": 0.5, "err": 1e-3, "note": ""},
               "SDPA cuDNN": {"ms": 0.3, "err": 1e-3, "note": ""},
               "SDPA efficient": {"ms": 1.0, "err": 1e-3, "note": "K/V repeated 4x (no enable_gqa)"},
               "SDPA math": {"ms": 2.0, "err": 0.5, "note": ""}}
    p = at.Row(at.Case("paged", "f16", 16, 32, 8, 8192, 128), tile_ms=0.3, copy_tbs=3.0,
               parts=[("paged", 0.27), ("paged_combine", 0.03)])
    p.peers = {"tile decode": {"ms": 0.25, "err": None, "note": ""},
               "SDPA cuDNN": {"ms": 0.3, "err": 1e-3, "note": ""}}
    m = at.Row(at.Case("mixed", "f16", 0, 32, 8, 0, 128, True, at.mixed_lengths()), tile_ms=1.0)
    m.peers = {"torch reference": {"ms": None, "err": 3e-4, "note": "float32 SDPA per sequence"}}
    bad = at.Row(at.Case("decode", "f16", 1, 32, 8, 4096, 128), error="tile: tilec exit 1: boom")
    return [f, d, p, m, bad]


def test_report():
    rows = made_up_rows()
    f, d, p, m, bad = rows
    check(abs(d.tbs(d.tile_ms) - 2 * 16 * 8 * 8192 * 128 * 2 / 0.25e9) < 1e-9
          and d.best_sdpa() == ("SDPA cuDNN", 0.3), "decode: TB/s and the best SDPA backend")
    check(d.flagged() and not f.flagged() and bad.flagged() and not p.flagged(),
          "flagged: an error above the limit, a failed row")
    out = tempfile.mkdtemp(prefix="tile-attn-out-")
    try:
        meta = {"gpu": "fake GPU", "copy_tbs": 3.0}
        at.write_outputs(out, meta, rows, ["log line"])
        with open(os.path.join(out, "attention.md")) as fh:
            md = fh.read()
        kv = 2 * 16 * 8 * 8192 * 128 * 2
        check(all(s in md for s in ("### flash_fwd", "### decode_fused (split-KV decode and merge, one launch)",
                                    "### paged (SPLIT, one launch)", "### paged (no SPLIT): one launch",
                                    "GPU: fake GPU", "3.00 TB/s")),
              "markdown: the four sections, the GPU and the copy bandwidth")
        dline = next(line for line in md.splitlines() if line.startswith("| decode f16 d128 b16"))
        want = ["0.2500", f"{kv / 0.25e9:.2f}", f"{kv / 0.3e9:.2f}", "SDPA cuDNN",
                f"{0.3 / 0.25:.2f}", f"{kv / 0.25e9 / 3.0:.2f} | {kv / 0.25e9 / 2.0:.2f} |", "5.0e-01 (!)",
                "K/V repeated 4x"]
        check(all(w in dline for w in want), "markdown: the decode row's figures: " + dline)
        pline = next(line for line in md.splitlines() if line.startswith("| paged f16"))
        check(f"| {kv / 0.3e9:.2f} | {kv / 0.25e9:.2f} | {0.25 / 0.3:.2f} |" in pline,
              "markdown: paged beside our dense decode: " + pline)
        fline = next(line for line in md.splitlines() if line.startswith("| flash f16"))
        check(f"| {f.case.flops / 0.5e9:.1f} | {f.case.flops / 0.4e9:.1f} | n/a | 0.80 | n/a |" in fline
              and "SDPA cuDNN: n/a: No available kernel" in fline, "markdown: flash row: " + fline)
        with open(os.path.join(out, "attention.csv")) as fh:
            recs = {r["case"]: r for r in csv.DictReader(fh)}
        r = recs[d.case.name]
        check(len(recs) == 5 and r["best_sdpa"] == "SDPA cuDNN" and r["SDPA cuDNN_ratio"] == "1.200"
              and r["flagged"] == "1" and r["same_copy_tbs"] == "2.000" and r["parts"] == "decode_fused 0.25000"
              and recs[bad.case.name]["error"].startswith("tile: tilec exit 1"),
              "CSV: a record per row, ratios, parts, the failed row's error")
    finally:
        shutil.rmtree(out, ignore_errors=True)


class StubBench:
    """run_row as GpuBench's: a made-up row per case, one raising."""
    def __init__(self):
        self.log = []
        self.rows = {r.case.name: r for r in made_up_rows()}

    def run_row(self, case):
        if case.op == "mixed":
            raise RuntimeError("CUDA error: an illegal memory access")
        r = self.rows[case.name]
        r.row_s = 1.0
        return r


def test_same_size_copy():
    """copy_of: a copy moving the row's K/V bytes (a float, as Case.kv_bytes is), timed once per
    size, TB/s = bytes / time."""
    class Tensor:
        def __init__(self, n):
            self.n = n

        def numel(self):
            return self.n

        def copy_(self, other):
            return self

    class Torch:
        float16 = "f16"
        made = []

        def empty(self, n, dtype=None, device=None):
            if not isinstance(n, int):
                raise TypeError("empty() received an invalid combination of arguments")
            Torch.made.append(n)
            return Tensor(n)

        def empty_like(self, t):
            return Tensor(t.n)

    b = at.GpuBench.__new__(at.GpuBench)
    b.torch, b.same_copy, b.ms = Torch(), {}, lambda fn: (fn(), 0.5)[1]
    kv = at.Case("decode", "f16", 1, 32, 8, 4096, 128).kv_bytes
    tbs = b.copy_of(kv)
    check(tbs is not None and abs(tbs - kv / 0.5e9) < 1e-12 and Torch.made == [int(kv) // 4],
          f"copy_of: {int(kv) // 4} halves each way, {tbs} TB/s")
    check(b.copy_of(kv) == tbs and len(Torch.made) == 1, "copy_of: timed once per size")


def test_run_loop():
    out = tempfile.mkdtemp(prefix="tile-attn-loop-")
    try:
        cases = [r.case for r in made_up_rows()]
        args = argparse.Namespace(max_seconds=0, out=out)
        rows = at.tc.run_rows(args, StubBench(), cases, {}, 0, at.Row, at.progress_line,
                              at.write_outputs)
        with open(os.path.join(out, "attention.csv")) as fh:
            recs = list(csv.DictReader(fh))
        check(len(rows) == 5 and "illegal memory access" in rows[3].error and len(recs) == 5
              and sorted(os.listdir(out)) == ["attention.csv", "attention.md", "attention_tilec.log"],
              "run loop: a row that raises is a failed row, the files rewritten")
        args.max_seconds = 1e-9
        rows = at.tc.run_rows(args, StubBench(), cases, {}, 0, at.Row, at.progress_line,
                              at.write_outputs)
        check(all("skipped: past --max-seconds" in r.error for r in rows), "--max-seconds")
    finally:
        shutil.rmtree(out, ignore_errors=True)


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__)
        return 2
    tilec = os.path.abspath(sys.argv[1])
    if len(sys.argv) == 3:
        at.STDLIB = os.path.abspath(sys.argv[2])
    test_cases()
    test_report()
    test_same_size_copy()
    test_run_loop()
    test_imports(tilec)
    test_commands(tilec)
    fails = ttc.FAILURES
    print(f"{ttc.CHECKS[0] - len(fails)} passed, {len(fails)} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
