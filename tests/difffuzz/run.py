#!/usr/bin/env python3
"""run.py: the differential fuzzer's driver. For each seed it generates a kernel (gen.py),
checks that it compiles for the host (the generator must write valid programs), then runs it
with `tilec run --backend=sim --check` under a few configurations (num_warps, num_stages,
input seeds, the sim-amd target) and reports every mismatch, sim race/bounds/divergence
report, compile error of a valid program, crash or hang as a finding, with its seed, its
configuration and a saved .tile whose header holds the reproduction command.

usage: run.py [--tilec PATH] [--seeds 1-500 | --seeds 3,17] [--configs N] [--jobs J]
              [--out DIR] [--minimize] [--cases DIR]
Exit status: 0 no findings, 1 findings (or invalid programs), 2 usage errors."""

import argparse
import os
import random
import re
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree

import runner  # noqa: E402
from gen import generate  # noqa: E402
from reduce import minimize  # noqa: E402


SLOW = 30  # seconds: a run this long is reported (compile time), not a finding


def parse_seeds(text):
    seeds = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        seeds.extend(range(int(lo), int(hi or lo) + 1))
    return seeds


def configs(seed, k, count):
    """count configurations for program seed, the same on every run."""
    rng = random.Random(seed * 7919 + 17)
    warps = rng.sample([1, 2, 4, 8], 4)
    out = []
    for i in range(count):
        target = ["sim", "sim", "sim-amd"][(i + seed) % 3]  # AMD's path in one of three
        stages = rng.choice([1, 2, 3, 4]) if k.bk else 2
        w = warps[i % 4] if target == "sim" else min(warps[i % 4], 4)
        out.append(runner.Config(w, i + 1, stages, target))
    return out


class Fuzz:
    def __init__(self, opts):
        self.opts = opts
        self.tmp = tempfile.mkdtemp(prefix="difffuzz.")
        self.stats = {}

    def count(self, kind):
        self.stats[kind] = self.stats.get(kind, 0) + 1

    def one(self, seed):
        """Runs program seed; returns its findings [(kind, cfg, detail, kernel)]."""
        k = generate(seed)
        path = os.path.join(self.tmp, "seed%d.tile" % seed)
        with open(path, "w") as f:
            f.write(k.render(seed, "tests/difffuzz/run.py --seeds %d" % seed))
        ok, msg = runner.check(self.opts.tilec, path)
        if not ok:
            return [("invalid", None, msg, k, 0)]
        for cfg in configs(seed, k, self.opts.configs):
            o = runner.run(self.opts.tilec, path, cfg, k.fill_args())
            self.count(o.kind)
            if o.seconds > SLOW:
                print("slow: seed %d (%s) took %.0f s" % (seed, cfg, o.seconds), flush=True)
            if o.finding:
                return [(o.kind, cfg, o.detail, k, o.seconds)]
        os.remove(path)
        return []

    def save(self, seed, cfg, k, text=None, suffix=""):
        """Writes program seed (or text, a shrunk one) to --out with its repro line."""
        os.makedirs(self.opts.out, exist_ok=True)
        path = os.path.join(self.opts.out, "seed%d%s.tile" % (seed, suffix))
        fills = present_fills(k, text if text is not None else k.render(seed, ""))
        repro = runner.repro_line(path, cfg, fills) if cfg else "build/tilec check %s" % path
        text = text if text is not None else k.render(seed, repro)
        with open(path, "w") as f:
            f.write("\n".join("// repro: " + repro if l.startswith("// repro:") else l
                              for l in text.split("\n")))
        return path, repro

    def report(self, seed, kind, cfg, detail, k, seconds):
        path, repro = self.save(seed, cfg, k)
        print("FINDING seed=%d kind=%s %s\n  %s\n  repro: %s" % (
            seed, kind, cfg or "", detail.replace("\n", "\n  "), repro), flush=True)
        if self.opts.minimize and cfg and kind != "hang":
            self.shrink(seed, kind, cfg, detail, k, path, max(20, 4 * seconds))

    def shrink(self, seed, kind, cfg, detail, k, path, timeout):
        target = runner.failed_target(detail, cfg)
        first = next((l for l in detail.split("\n") if re.search(r"\.tile:\d+:\d+: error:", l)),
                     detail)

        def fails(text):
            trial = os.path.join(self.tmp, "min%d.tile" % seed)
            with open(trial, "w") as f:
                f.write(text)
            if not runner.check(self.opts.tilec, trial)[0]:
                return False
            if kind in ("compile-error", "register-bloat"):
                o = runner.compile_only(self.opts.tilec, trial, cfg, target)
                return o.kind == kind and same_error(o.detail, first)
            o = runner.run(self.opts.tilec, trial, cfg, present_fills(k, text), timeout)
            return o.kind == kind

        with open(path) as f:
            text = minimize(f.read(), fails)
        mpath, _ = self.save(seed, cfg, k, text, "-min")
        print("  minimized: %s (%d lines)" % (mpath, text.count("\n") + 1), flush=True)


def case_command(path):
    """A saved case's configuration, from its `// repro:` line: (env, tilec run arguments)."""
    with open(path) as f:
        line = next((l for l in f if l.startswith("// repro:")), None)
    if line is None:
        sys.exit("run.py: %s has no // repro: line" % path)
    words = line.split()[2:]  # [NAME=VALUE ...] build/tilec run FILE ARGS...
    at = words.index("run")
    return dict(w.split("=", 1) for w in words[:at - 1]), words[at + 2:]


def run_cases(opts):
    """Runs each saved case (tests/difffuzz/cases) as its repro line says; 0 when all pass."""
    failed = 0
    for name in sorted(os.listdir(opts.cases)):
        path = os.path.join(opts.cases, name)
        if not name.endswith(".tile"):
            continue
        env, args = case_command(path)
        o = runner.run_args(opts.tilec, path, args, env)
        ok = not o.finding
        failed += not ok
        print("%s case %s%s" % ("ok  " if ok else "FAIL", name,
                                "" if ok else ": %s\n  %s" % (o.kind, o.detail)), flush=True)
    return failed


def error_key(line):
    """A diagnostic without its place, numbers and layouts (they change as a program shrinks)."""
    msg = line.split("error:", 1)[-1].strip()
    return re.sub(r"\d+", "N", re.sub(r"#\w+<.*>", "#L", msg))


def present_fills(k, text):
    """k's --fill arguments for the pointer parameters text still has (a shrunk kernel may have
    lost some; tilec refuses a fill of a name that is not a pointer parameter)."""
    return [a for a in k.fill_args()
            if re.search(r"\b%s\s*:\s*\*" % re.escape(a.split("=")[1]), text)]


def same_error(detail, first):
    return any(error_key(l) == error_key(first) for l in detail.split("\n") if "error:" in l)


def options():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tilec", default="build/tilec")
    p.add_argument("--seeds", default="1-100", type=parse_seeds)
    p.add_argument("--configs", default=3, type=int, help="configurations per program (1-4)")
    p.add_argument("--jobs", default=2, type=int)
    p.add_argument("--out", default="difffuzz-findings", help="where failing programs go")
    p.add_argument("--minimize", action="store_true", help="shrink each finding's program")
    p.add_argument("--cases", help="also run the saved cases of this folder (regressions)")
    return p.parse_args()


def main():
    opts = options()
    if not os.access(opts.tilec, os.X_OK):
        sys.exit("run.py: no tilec at %s (--tilec PATH)" % opts.tilec)
    fuzz, t0, found = Fuzz(opts), time.time(), 0
    if opts.cases:
        found += run_cases(opts)
    with ThreadPoolExecutor(opts.jobs) as pool:
        for seed, results in zip(opts.seeds, pool.map(fuzz.one, opts.seeds)):
            for finding in results:
                found += 1
                fuzz.report(seed, *finding)
    shutil.rmtree(fuzz.tmp, ignore_errors=True)
    runs = ", ".join("%s %d" % kv for kv in sorted(fuzz.stats.items()))
    print("difffuzz: %d programs, runs: %s; %d findings; %.0f s" % (
        len(opts.seeds), runs or "none", found, time.time() - t0))
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
