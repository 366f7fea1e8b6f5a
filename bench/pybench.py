"""pybench.py: the stdlib attention kernels timed through the Python package (tile on PyTorch
tensors, libtile.so over ctypes) beside PyTorch SDPA, in one process and one timer for both
sides on the same tensors: bench/cold.py (each run alone between CUDA events after an L2 flush
that leaves clean lines, median).
Our kernels are tuned by their first call (tuning mode auto) and then called as a PyTorch user
calls them. Outputs are checked against SDPA's.

    usage: python3 bench/pybench.py [--out DIR] [--only TEXT]   (on the GPU machine; TILE_LIBRARY
           names libtile.so when it is not installed)
           python3 bench/pybench.py --cpu-smoke   (tiny shapes on the CPU backend with NumPy,
           against a float64 reference: the calls' arguments, without a GPU or torch)

Writes pybench.md (a table for docs/performance.md) under --out."""
import argparse
import math
import os
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
import tile  # noqa: E402

STDLIB = os.path.join(ROOT, "stdlib", "attention")
MAX_SPLITS = 16


def flash_call(kern, q, k, v, o, lse, causal, xp):
    """flash_fwd on contiguous [B, H, S, D] tensors (K, V with kv_heads heads)."""
    b, h, s, d = q.shape
    kvh = k.shape[1]
    st = lambda t: (t.shape[1] * s * d, s * d, d)  # noqa: E731
    return kern(q, k, v, o, lse, b, h, kvh, s, s, *st(q), *st(k), *st(v), *st(o), 1 / math.sqrt(d), 0,
         0.0, HEAD_DIM=d, CAUSAL=causal)


def decode_call(kern, q, k, v, lens, part_o, part_lse, counters, o):
    """decode_fused: q, o [B, H, 1, D]; K, V [B, KVH, L, D]; one launch."""
    b, h, _, d = q.shape
    kvh, n = k.shape[1], k.shape[2]
    return kern(q, k, v, lens, part_o, part_lse, counters, o, b, kvh, n, 1 / math.sqrt(d), 0, 0.0,
         h * d, d, d, kvh * n * d, n * d, d, h * d, d, d, HEAD_DIM=d, QLEN=1, GROUP=h // kvh,
         MAX_SPLITS=MAX_SPLITS)


def paged_call(kern, q, kc, vc, o, ws_o, ws_lse, counters, table, lens, qsl, kvh, page):
    """paged with SPLIT: q, o [tokens, H, D]; caches [blocks, page, kvh, D]."""
    t, h, d = q.shape
    return kern(q, kc, vc, o, ws_o, ws_lse, counters, table, lens, qsl, t, lens.shape[0],
         int(lens.max()), kvh, h * d, d, h * d, d, page * kvh * d, kvh * d, d, table.shape[1], 1 / math.sqrt(d), 0,
         0.0, HEAD_DIM=d, GROUP=h // kvh, PAGE=page, SPLIT=True, MAX_SPLITS=MAX_SPLITS)


# ---- on the GPU, beside SDPA ----

def gpu_rows(ctx, only):
    import torch
    from cold import cold_ms
    from torch.nn.attention import SDPBackend, sdpa_kernel
    sdpa = torch.nn.functional.scaled_dot_product_attention
    f16 = torch.float16
    mods = {n: ctx.load(os.path.join(STDLIB, n + ".tile")) for n in ("flash_fwd", "decode", "paged")}
    rows = []

    def bench(fn):
        return cold_ms(fn)

    def peers(q, k, v, causal, gqa):
        out = {}
        for name, be in (("SDPA flash", SDPBackend.FLASH_ATTENTION),
                         ("SDPA cuDNN", SDPBackend.CUDNN_ATTENTION)):
            try:
                with sdpa_kernel([be]):
                    call = lambda: sdpa(q, k, v, is_causal=causal, enable_gqa=gqa)  # noqa: E731
                    ref = call()
                    out[name] = (bench(call), ref)
            except RuntimeError as e:
                out[name] = (None, str(e).splitlines()[0])
        return out

    def tuned_config(tune):
        """Tunes (kernel.tune with the call's arguments) and names the winner."""
        t0 = time.perf_counter()
        rep = tune()
        return f"{rep['best']} (tuned in {time.perf_counter() - t0:.1f} s)"

    def overhead(call, n=200):
        """Host time per call, microseconds: n calls back to back, no waiting."""
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            call()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        return (t1 - t0) / n * 1e6

    for d, s, causal in ((64, 4096, False), (128, 4096, False), (128, 4096, True)):
        name = f"flash f16 d{d} b4 h16 s{s}" + (" causal" if causal else "")
        if only and only not in name:
            continue
        q, k, v = (torch.randn(4, 16, s, d, device="cuda", dtype=f16) for _ in range(3))
        o, lse = torch.empty_like(q), torch.empty(1, device="cuda")
        kern = mods["flash_fwd"]["flash_fwd"]
        call = lambda: flash_call(kern, q, k, v, o, lse, causal, torch)  # noqa: E731
        tuned = tuned_config(lambda: flash_call(kern.tune, q, k, v, o, lse, causal, torch))
        ms = bench(call)
        flops = 4 * 4 * 16 * s * s * d / (2 if causal else 1)
        rows.append((name, "TFLOP/s", flops, ms, o, peers(q, k, v, causal, False), tuned,
                     overhead(call)))

    for bsz, n in ((1, 32768), (16, 8192)):
        name = f"decode f16 d128 b{bsz} h32/8 kv{n}"
        if only and only not in name:
            continue
        q = torch.randn(bsz, 32, 1, 128, device="cuda", dtype=f16)
        k, v = (torch.randn(bsz, 8, n, 128, device="cuda", dtype=f16) for _ in range(2))
        lens = torch.full((bsz,), n, device="cuda", dtype=torch.int32)
        part_o = torch.empty(bsz * 32 * MAX_SPLITS * 128, device="cuda")
        part_lse = torch.empty(bsz * 32 * MAX_SPLITS, device="cuda")
        counters = torch.zeros(bsz * 8, device="cuda", dtype=torch.int32)
        o = torch.empty_like(q)
        kern = mods["decode"]["decode_fused"]
        call = lambda: decode_call(kern, q, k, v, lens, part_o, part_lse, counters, o)  # noqa: E731
        tuned = tuned_config(lambda: decode_call(kern.tune, q, k, v, lens, part_o, part_lse,
                                                 counters, o))
        ms = bench(call)
        kv_bytes = 2 * bsz * 8 * n * 128 * 2
        rows.append((name, "K/V TB/s", kv_bytes, ms, o, peers(q, k, v, False, True), tuned,
                     overhead(call)))
    return rows


def gpu_table(rows):
    lines = ["| case | tile ms | tile | best SDPA | best SDPA ms | tile / best SDPA | max rel err | "
             "tile config | host us per call |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, unit, work, ms, ours, peers, tuned, host_us in rows:
        ok = {n: p for n, p in peers.items() if p[0] is not None}
        best = min(ok, key=lambda n: ok[n][0]) if ok else None
        err = max((((ours.float() - p[1].float()).norm() / p[1].float().norm()).item()
                   for p in ok.values()), default=float("nan"))
        rate = work / (ms * 1e-3) / 1e12
        lines.append(f"| {name} | {ms:.4f} | {rate:.2f} {unit} | {best or 'none'} | "
                     f"{ok[best][0]:.4f} | {ok[best][0] / ms:.2f} | {err:.1e}{' (!)' if err > 1e-2 else ''} | "
                     f"{tuned} | {host_us:.0f} |"
                     if best else f"| {name} | {ms:.4f} | {rate:.2f} {unit} | none | | | | {tuned} | {host_us:.0f} |")
    return "\n".join(lines) + "\n"


# ---- the CPU smoke test: the same calls on NumPy arrays, float64 reference ----

def cpu_smoke():
    import numpy as np
    rng = np.random.default_rng(7)
    ctx = tile.Context("cpu")
    mods = {n: ctx.load(os.path.join(STDLIB, n + ".tile")) for n in ("flash_fwd", "decode", "paged")}
    failed = 0

    def attend(q, k, v, causal):  # q [H, Sq, D], k/v [H, Sk, D], float64
        s = q @ k.transpose(0, 2, 1) / math.sqrt(q.shape[-1])
        if causal:
            s = s + np.triu(np.full(s.shape[-2:], -np.inf), 1 + k.shape[1] - q.shape[1])
        p = np.exp(s - s.max(-1, keepdims=True))
        return (p / p.sum(-1, keepdims=True)) @ v

    def report(name, got, want):
        nonlocal failed
        err = np.linalg.norm(got - want) / np.linalg.norm(want)
        ok = err < 3e-3
        failed += not ok
        print(("ok   " if ok else "FAIL ") + f"{name}: relative error {err:.2e}")

    q, k, v = (rng.uniform(-1, 1, (1, 2, 33, 64)).astype(np.float16) for _ in range(3))
    o, lse = np.zeros_like(q), np.zeros(1, np.float32)
    flash_call(mods["flash_fwd"]["flash_fwd"], q, k, v, o, lse, True, np)
    f64 = lambda t: t.astype(np.float64)  # noqa: E731
    report("flash_fwd causal", o[0], attend(f64(q[0]), f64(k[0]), f64(v[0]), True))

    b, h, kvh, n, d = 2, 8, 2, 70, 64
    q = rng.uniform(-1, 1, (b, h, 1, d)).astype(np.float16)
    k, v = (rng.uniform(-1, 1, (b, kvh, n, d)).astype(np.float16) for _ in range(2))
    lens = np.full(b, n, np.int32)
    o = np.zeros_like(q)
    decode_call(mods["decode"]["decode_fused"], q, k, v, lens,
                np.zeros(b * h * MAX_SPLITS * d, np.float32), np.zeros(b * h * MAX_SPLITS, np.float32),
                np.zeros(b * kvh, np.int32), o)
    want = np.stack([attend(f64(q[i]), np.repeat(f64(k[i]), h // kvh, 0),
                            np.repeat(f64(v[i]), h // kvh, 0), False) for i in range(b)])
    report("decode_fused GQA 4", o, want)

    page, blocks = 16, 12
    kc, vc = (rng.uniform(-1, 1, (blocks, page, kvh, d)).astype(np.float16) for _ in range(2))
    table = rng.permutation(blocks).astype(np.int32).reshape(2, 6)
    lens = np.array([70, 33], np.int32)
    qsl = np.array([0, 1, 2], np.int32)
    q = rng.uniform(-1, 1, (2, h, d)).astype(np.float16)
    o = np.zeros_like(q)
    paged_call(mods["paged"]["paged"], q, kc, vc, o, np.zeros(2 * h * MAX_SPLITS * d, np.float32),
               np.zeros(2 * h * MAX_SPLITS, np.float32), np.zeros((2 + 2) * kvh, np.int32), table,
               lens, qsl, kvh, page)
    want = []
    for s in range(2):
        kk = np.concatenate([kc[table[s, j]] for j in range(6)])[:lens[s]].transpose(1, 0, 2)
        vv = np.concatenate([vc[table[s, j]] for j in range(6)])[:lens[s]].transpose(1, 0, 2)
        want.append(attend(f64(q[s])[:, None, :], np.repeat(f64(kk), h // kvh, 0),
                           np.repeat(f64(vv), h // kvh, 0), False)[:, 0, :])
    report("paged SPLIT, shuffled blocks", o, np.stack(want))
    ctx.close()
    print(f"{'FAILED' if failed else 'passed'}: {failed} failures")
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--only")
    ap.add_argument("--cpu-smoke", action="store_true")
    a = ap.parse_args()
    if a.cpu_smoke:
        sys.exit(cpu_smoke())
    import torch
    ctx = tile.Context("cuda", tuning="auto")
    table = gpu_table(gpu_rows(ctx, a.only))
    text = ("## The stdlib through the Python package beside SDPA (`bench/pybench.py`)\n\n"
            f"GPU: {torch.cuda.get_device_name()}; torch {torch.__version__}; one process: "
            "tile on PyTorch tensors (first call tunes), SDPA flash and cuDNN, both timed by "
            "bench/cold.py (L2 flushed with reads before each run: the GPU time of each call; the host time per call is the last column).\n\n" + table)
    print(text)
    if a.out:
        with open(os.path.join(a.out, "pybench.md"), "w") as fh:
            fh.write(text)


if __name__ == "__main__":
    main()
