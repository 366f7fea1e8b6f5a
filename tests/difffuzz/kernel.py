"""kernel.py: one generated kernel: its domain (an [M, N] problem cut into BM x BN blocks, one
per program, M and N mostly not multiples of the blocks), its parameters and the buffer sizes
and fills `tilec run` needs, the statements (body.py), and the source text with the
reproduction command in its header."""

from body import Body
from elementwise import Elementwise
from tileops import HELPERS, TileOps

BLOCKS = [(1, 64), (64, 1), (16, 64), (64, 16), (128, 32), (32, 128), (1, 1), (2, 256),
          (256, 2), (8, 8), (4, 32), (32, 4), (16, 16), (32, 32), (1, 128), (128, 1)]
DOT_BLOCKS = [(16, 16), (16, 32), (32, 16), (32, 32), (64, 16), (16, 64), (64, 32), (32, 64),
              (64, 64), (1, 16), (16, 8), (8, 8), (4, 16), (128, 16), (16, 128)]
PAD = 5  # elements past the end of every output: a store there is a mismatch

# random contents of integer buffers (--fill)
INT_FILLS = {"i8": ["-128:127"], "u8": ["0:255"], "i16": ["-3000:3000", "-32768:32767"],
             "i32": ["-1000:1000", "-2147483648:2147483647", "0:40"], "u32": ["0:4294967295"],
             "i64": ["-1000000000000:1000000000000"]}


def odd_size(rng, block):
    """A problem size for one dim: usually not a multiple of the block."""
    r = rng.random()
    if r < 0.15:
        return block
    if r < 0.3:
        return max(1, rng.randrange(1, block + 1))
    return rng.randrange(1, 3 * block + 1)


def wrap(head, items, tail, width=100):
    """head + items joined by commas + tail, continued lines aligned after head."""
    lines, cur = [], head
    for i, item in enumerate(items):
        piece = item + ("," if i + 1 < len(items) else tail)
        if len(cur) + len(piece) + 1 > width and cur.strip() != head.strip():
            lines.append(cur.rstrip())
            cur = " " * len(head)
        cur += piece + " "
    return "\n".join(lines + [cur.rstrip()])


class Kernel:
    def __init__(self, rng, with_dot):
        self.rng = rng
        self.body = Body(rng)
        self.ew = Elementwise(rng, self.body)
        self.ops = TileOps(rng, self.body)
        self.params, self.sizes, self.fills = [], {}, {}
        self.counts = {}
        self.bm, self.bn = rng.choice(DOT_BLOCKS if with_dot else BLOCKS)
        self.bk = rng.choice([8, 16, 16, 32, 64]) if with_dot else None
        while True:
            self.m, self.n = odd_size(rng, self.bm), odd_size(rng, self.bn)
            self.g0, self.g1 = -(-self.m // self.bm), -(-self.n // self.bn)
            if self.g0 * self.g1 <= 12:
                break
        self.scalar("M", "i32", self.m)
        self.scalar("N", "i32", self.n)

    def fresh(self, prefix):
        i = self.counts.get(prefix, 0)
        self.counts[prefix] = i + 1
        return "%s%d" % (prefix, i)

    def scalar(self, name, dt, value):
        self.params.append("%s: %s" % (name, dt))
        self.sizes[name] = value
        return name

    def pointer(self, prefix, dt, count, fill=None):
        name = self.fresh(prefix)
        self.params.append("%s: *%s" % (name, dt))
        self.sizes[name] = count
        if fill is not None:
            self.fills[name] = fill
        return name

    def input(self, dt, count):
        """An input buffer; its values' bound."""
        fill = self.rng.choice(INT_FILLS[dt]) if dt in INT_FILLS else None
        name = self.pointer("x", dt, count, fill)
        if fill is None:
            return name, 1.0
        lo, hi = (float(x) for x in fill.split(":"))
        return name, max(-lo, hi)

    def output(self, dt, count, fill=None):
        return self.pointer("o", dt, count + PAD, fill)

    def add(self, v):
        """Binds a new value unless it is too large for a tile."""
        if v is None or v.size > 4096:
            return None
        return self.body.bind(v)

    def step(self, inner=False):
        """One random operation on the values in scope, bound to a new variable."""
        ew, ops = self.ew, self.ops
        families = [(ew.float_binary, 6), (ew.float_unary, 4), (ew.int_binary, 4),
                    (ew.int_unary, 2), (ew.compare, 3), (ew.logic, 2), (ew.select, 3),
                    (ew.convert, 3), (ew.literal_op, 3), (ops.reduction, 4), (ops.scan, 2),
                    (ops.reorder, 2), (ops.transpose, 2), (ops.reshape, 2), (ops.pairs, 1),
                    (ops.dot, 1 if inner else 2)]
        fns, weights = zip(*families)
        for _ in range(10):
            fn = self.rng.choices(fns, weights)[0]
            v = self.add(fn())
            if v is not None:
                return v
        return None

    def run_args(self):
        return ["%s=%s" % (k, v) for k, v in self.sizes.items()]

    def fill_args(self):
        return ["--fill=%s=%s" % kv for kv in self.fills.items()]

    def render(self, seed, repro):
        consts = ["const BM: i32 = %d" % self.bm, "const BN: i32 = %d" % self.bn]
        if self.bk:
            consts.append("const BK: i32 = %d" % self.bk)
        head = ["// difffuzz seed %d (tests/difffuzz/gen.py %d)" % (seed, seed),
                "// repro: %s" % repro,
                "// run: " + " ".join(self.run_args()), ""]
        helpers = [HELPERS[h] for h in sorted(self.ops.helpers)]
        sig = wrap("kernel fuzz(", self.params + consts, ")")
        lines = head + helpers + ([""] if helpers else [])
        lines += ["@grid(cdiv(M, BM), cdiv(N, BN))", sig + " {", self.body.text(), "}", ""]
        return "\n".join(lines)

