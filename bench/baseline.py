"""baseline.py: side-by-side timings of tile's examples and PyTorch on the GPU machine.

Runs `tilec run --cold` (median of cold launches, each alone between CUDA events after an L2
flush that leaves clean lines) for each example at one size, times the same operation in
PyTorch in the same process run the same way (bench/cold.py), and prints a markdown table:
time, achieved rate, ratio.
    usage: python3 bench/baseline.py PATH/TO/tilec [--reps N]
"""
import re
import subprocess
import sys

import torch

from cold import cold_ms

TILEC = sys.argv[1]
REPS = int(sys.argv[sys.argv.index("--reps") + 1]) if "--reps" in sys.argv else 50


def tile_ms(spec, args):
    cmd = [TILEC, "run", spec, "--backend=cuda", f"--reps={REPS}", "--cold"] + args
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    m = re.findall(r"median ([0-9.]+) ms", out.stdout + out.stderr)
    if not m:
        print(out.stdout + out.stderr, file=sys.stderr)
        return float("nan")
    return float(m[-1])


def torch_ms(fn):
    return cold_ms(fn)


def case_add():
    n = 1 << 26
    x, y = (torch.randn(n, device="cuda") for _ in range(2))
    t = tile_ms("examples/add.tile:add", [f"n={n}"])
    p = torch_ms(lambda: torch.add(x, y))
    return "add f32 n=2^26", t, p, 12 * n / 1e9, "GB/s"


def case_softmax():
    r, c = 4096, 4096
    x = torch.randn(r, c, device="cuda")
    t = tile_ms("examples/softmax.tile:softmax", [f"n_rows={r}", f"n_cols={c}", "-D", "BLOCK_N=4096"])
    p = torch_ms(lambda: torch.softmax(x, dim=1))
    return "softmax f32 4096x4096", t, p, 8 * r * c / 1e9, "GB/s"


def case_layernorm():
    r, c = 4096, 4096
    x = torch.randn(r, c, device="cuda")
    w, b = torch.randn(c, device="cuda"), torch.randn(c, device="cuda")
    t = tile_ms("examples/layernorm.tile:layernorm", [f"n_rows={r}", f"n_cols={c}", "-D", "BLOCK_N=4096"])
    p = torch_ms(lambda: torch.nn.functional.layer_norm(x, (c,), w, b))
    return "layernorm f32 4096x4096", t, p, 8 * r * c / 1e9, "GB/s"


def case_matmul():
    n = 2048
    a, b = (torch.randn(n, n, device="cuda", dtype=torch.float16) for _ in range(2))
    t = tile_ms("examples/matmul.tile:matmul_f16", [f"M={n}", f"N={n}", f"K={n}"])
    p = torch_ms(lambda: a @ b)
    return "matmul f16 2048^3", t, p, 2 * n**3 / 1e12, "TFLOP/s"


def case_attention():
    b, h, s, d = 4, 16, 2048, 64
    q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.float16) for _ in range(3))
    t = tile_ms("examples/flash_attention.tile:flash_attention",
                [f"batch={b}", f"heads={h}", f"seq={s}", "scale=0.125"])
    p = torch_ms(lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v))
    return f"attention f16 b{b} h{h} s{s} d{d}", t, p, 4 * b * h * s * s * d / 1e12, "TFLOP/s"


def main():
    print(f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    rows = []
    for case in (case_add, case_softmax, case_layernorm, case_matmul, case_attention):
        try:
            rows.append(case())
        except Exception as e:  # a failing case is reported, the others still run
            print(f"{case.__name__}: {e}", file=sys.stderr)
    print("\n| operation | tile ms | PyTorch ms | tile rate | PyTorch rate | tile / PyTorch speed |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, t, p, work, unit in rows:
        print(f"| {name} | {t:.3f} | {p:.3f} | {work / t * 1e3:.1f} {unit} | {work / p * 1e3:.1f} {unit} | {p / t:.2f} |")


if __name__ == "__main__":
    main()
