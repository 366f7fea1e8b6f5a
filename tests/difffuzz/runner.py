"""runner.py: runs one generated program under one configuration (num_warps, num_stages,
input seed, the sim or sim-amd target) with `tilec run --backend=sim --check` and says what
happened: ok, a legitimate refusal (a tile too large for the registers or the stack), or a
finding (mismatch, sim check, compile error, crash, hang)."""

import os
import re
import resource
import signal
import subprocess
import time
from dataclasses import dataclass

# refusals the language documents for programs too large for a target (not findings)
LIMITS = re.compile(r"needs \d+ registers per thread|bytes of stack for its tiles|"
                    r"shared memory: \d+ bytes of buffers needed")


@dataclass(frozen=True)
class Config:
    warps: int
    seed: int
    stages: int = 2
    target: str = "sim"

    def args(self):
        a = ["--seed=%d" % self.seed, "-D", "num_warps=%d" % self.warps]
        return a + (["-D", "num_stages=%d" % self.stages] if self.stages != 2 else [])

    def env(self):
        return {"TILE_SIM_TARGET": "sim-amd"} if self.target == "sim-amd" else {}

    def __str__(self):
        return "warps=%d seed=%d stages=%d target=%s" % (self.warps, self.seed, self.stages,
                                                          self.target)


@dataclass
class Outcome:
    kind: str     # ok | limit | mismatch | sim-check | compile-error | register-bloat |
                  # run-error | crash | hang
    detail: str   # the lines that say why
    seconds: float = 0.0

    @property
    def finding(self):
        return self.kind not in ("ok", "limit")


def base_env():
    env = dict(os.environ)
    env.update({"TILE_NO_DISK_CACHE": "1", "TILE_TUNE": "off", "TILE_CPU_THREADS": "1"})
    env.pop("TILE_SIM_TARGET", None)
    return env


def command(tilec, path, cfg, fills):
    return [tilec, "run", path, "--backend=sim", "--check", "--reps=0"] + cfg.args() + fills


def repro_line(path, cfg, fills):
    env = "TILE_SIM_TARGET=sim-amd " if cfg.target == "sim-amd" else ""
    return env + " ".join(command("build/tilec", path, cfg, fills))


def check(tilec, path):
    """`tilec check` (the host target): the generator's programs must be valid."""
    p = subprocess.run([tilec, "check", path], capture_output=True, text=True, timeout=120,
                       env=base_env())
    return p.returncode == 0, (p.stdout + p.stderr).strip()


def run(tilec, path, cfg, fills, timeout=120):
    return run_args(tilec, path, command(tilec, path, cfg, fills)[3:], cfg.env(), timeout)


def run_args(tilec, path, args, extra_env, timeout=120):
    """`tilec run PATH ARGS...` with extra_env, classified. A hang is timeout seconds of CPU
    time (a loaded machine slows a run down without making it one); the wall clock allows ten
    times that."""
    env = base_env()
    env.update(extra_env)

    def limit_cpu():
        resource.setrlimit(resource.RLIMIT_CPU, (timeout, timeout + 5))

    t0 = time.time()
    try:
        p = subprocess.run([tilec, "run", path] + args, capture_output=True, text=True,
                           timeout=10 * timeout, env=env, preexec_fn=limit_cpu)
    except subprocess.TimeoutExpired:
        return Outcome("hang", "no result after %d s" % (10 * timeout), 10 * timeout)
    spent = time.time() - t0
    if p.returncode == -signal.SIGXCPU or (p.returncode == -signal.SIGKILL and spent >= timeout):
        return Outcome("hang", "no result after %d s of CPU time" % timeout, spent)
    o = classify(p.returncode, p.stdout, p.stderr)
    o.seconds = spent
    return o


def failed_target(detail, cfg):
    """The target whose compile failed (--check compiles for the host too)."""
    m = re.search(r"for ([\w-]+) failed", detail)
    return m.group(1) if m else cfg.target


def compile_only(tilec, path, cfg, target):
    """Compiles for a target without running (reproduces compile errors faster)."""
    args = [tilec, "emit", path, "--emit=obj", "--target=" + target, "-o", os.devnull,
            "-D", "num_warps=%d" % cfg.warps, "-D", "num_stages=%d" % cfg.stages]
    p = subprocess.run(args, capture_output=True, text=True, timeout=300, env=base_env())
    return classify(p.returncode, p.stdout, p.stderr)


REGS = re.compile(r"tile (\w+)\[([\d, ]+)\] needs (\d+) registers per thread with (\d+) warps")


def bloat(line):
    """A register refusal of a tile that a layout without replicas holds in a quarter of the
    limit: the layout, not the program, is at fault (a finding of its own kind)."""
    m = REGS.search(line)
    if not m:
        return False
    numel = 1
    for d in m.group(2).split(","):
        numel *= int(d)
    words = 2 if m.group(1) in ("i64", "u64", "f64") else 1
    ideal = max(1, numel * words // (int(m.group(4)) * 32))
    return ideal * 4 <= 255


def classify(rc, out, err):
    text = out + err
    lines = [l for l in text.splitlines() if l.strip()]
    if rc < 0 or rc > 2:
        return Outcome("crash", "exit %d: %s" % (rc, "\n".join(lines[-6:])))
    if "MISMATCH" in out:
        return Outcome("mismatch", "\n".join(l for l in lines if "MISMATCH" in l))
    if re.search(r"\bsim: ", text):
        return Outcome("sim-check", "\n".join(l for l in lines if "sim: " in l)[:2000])
    errors = [l for l in lines if "error:" in l and "launch failed: compile error" not in l]
    if rc != 0 and errors and all(LIMITS.search(l) for l in errors):
        bloated = [l for l in errors if bloat(l)]
        return Outcome("register-bloat", bloated[0]) if bloated else Outcome("limit", errors[0])
    if rc != 0 and errors:
        where = [l for l in lines if "launch failed: compile error" in l]
        return Outcome("compile-error", "\n".join(where[:1] + errors[:4]))
    if rc != 0:
        return Outcome("run-error", "\n".join(lines[-6:]))
    return Outcome("ok", "")
