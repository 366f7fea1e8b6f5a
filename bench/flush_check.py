"""flush_check.py: what the L2 flush before each timed run does to a short kernel's time: the
stdlib decode (through the Python package) and SDPA on the same tensors, each timed with
triton.testing.do_bench (its flush zeroes 256 MiB: the L2 is left full of dirty lines that the
timed kernel writes back) and with bench/cold.py (its flush reads: clean lines), plus the
device copy bandwidth both ways. K/V TB/s per row. The figures behind the section "How
kernels are timed" of docs/performance.md.

    usage (on the GPU machine): TILE_LIBRARY=.../libtile.so.0 python3 bench/flush_check.py"""
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
import tile  # noqa: E402
from cold import cold_ms  # noqa: E402
from pybench import MAX_SPLITS, decode_call  # noqa: E402


def main():
    import torch
    import triton.testing
    from torch.nn.attention import SDPBackend, sdpa_kernel
    sdpa = torch.nn.functional.scaled_dot_product_attention
    timers = {"do_bench": lambda fn: triton.testing.do_bench(fn, warmup=25, rep=100,
                                                             return_mode="median"),
              "reading flush": cold_ms}
    src = torch.empty(1 << 29, dtype=torch.int8, device="cuda")
    dst = torch.empty_like(src)
    for name, timer in timers.items():
        ms = timer(lambda: dst.copy_(src))
        print(f"copy, {name}: {2 * src.numel() / (ms * 1e-3) / 1e12:.2f} TB/s", flush=True)
    ctx = tile.Context("cuda", tuning="auto")
    kern = ctx.load(os.path.join(ROOT, "stdlib", "attention", "decode.tile"))["decode_fused"]
    for bsz, n in ((1, 32768), (4, 16384), (16, 8192)):
        q = torch.randn(bsz, 32, 1, 128, device="cuda", dtype=torch.float16)
        k, v = (torch.randn(bsz, 8, n, 128, device="cuda", dtype=torch.float16) for _ in range(2))
        lens = torch.full((bsz,), n, device="cuda", dtype=torch.int32)
        po = torch.empty(bsz * 32 * MAX_SPLITS * 128, device="cuda")
        pl = torch.empty(bsz * 32 * MAX_SPLITS, device="cuda")
        cnt = torch.zeros(bsz * 8, device="cuda", dtype=torch.int32)
        o = torch.empty_like(q)
        decode_call(kern.tune, q, k, v, lens, po, pl, cnt, o)
        calls = {"tile decode_fused": lambda: decode_call(kern, q, k, v, lens, po, pl, cnt, o)}
        for name, backend in (("SDPA cuDNN", SDPBackend.CUDNN_ATTENTION),
                              ("SDPA flash", SDPBackend.FLASH_ATTENTION)):
            def call(backend=backend):
                with sdpa_kernel([backend]):
                    return sdpa(q, k, v, enable_gqa=True)
            try:
                call()
                calls[name] = call
            except RuntimeError as e:
                print(f"{name}: n/a: {str(e).splitlines()[0]}")
        kv_bytes = 2 * bsz * 8 * n * 128 * 2
        for name, fn in calls.items():
            cells = [f"{t}: {ms * 1e3:.1f} us {kv_bytes / (ms * 1e-3) / 1e12:.2f} TB/s"
                     for t, ms in ((t, timer(fn)) for t, timer in timers.items())]
            print(f"decode b{bsz} h32/8 kv{n} {name}: " + "; ".join(cells), flush=True)


if __name__ == "__main__":
    main()
