"""model.py: the differential fuzzer's model of tile values: element types, the promotion
rules of docs/language.md, and what the generator knows about each value (shape, magnitude,
whether every backend must compute the same bits), so that it only writes programs whose
results are comparable between the sim and CPU backends."""

from dataclasses import dataclass
from typing import Optional, Tuple

FLOATS = ("f16", "bf16", "f32")
INTS = ("i8", "u8", "i16", "i32", "u32", "i64")
BITS = {"bool": 1, "i8": 8, "u8": 8, "i16": 16, "i32": 32, "u32": 32, "i64": 64,
        "f16": 16, "bf16": 16, "f32": 32}
MANTISSA = {"f16": 11, "bf16": 8, "f32": 24}   # significant bits, the implicit one included
FMAX = {"f16": 3.0e4, "bf16": 1.0e6, "f32": 1.0e6}  # the largest magnitude the generator allows

INF = float("inf")


def is_float(t):
    return t in FLOATS


def is_int(t):
    return t in INTS


def is_signed(t):
    return t.startswith("i")


def int_range(t):
    b = BITS[t]
    return (-(1 << (b - 1)), (1 << (b - 1)) - 1) if is_signed(t) else (0, (1 << b) - 1)


@dataclass(frozen=True)
class Val:
    """A value of the kernel being generated.

    expr: its text (a variable name once bound). det: every correct backend computes the
    same bits (elementwise IEEE arithmetic, integer ops, exact sums); values that are not
    (float reductions, dots, math functions) reach only continuous operations and stores.
    mag: a bound on |value| (INF for integers that may wrap). frac: for floats, the value is
    an exact multiple of 2**-frac (None: no such knowledge), so sums in any order are exact."""
    expr: str
    dt: str
    shape: Tuple[int, ...]
    det: bool = True
    mag: float = 1.0
    frac: Optional[int] = None

    @property
    def rank(self):
        return len(self.shape)

    @property
    def size(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    def exact(self):
        """Float values that are exact dyadic numbers representable in their type."""
        return self.frac is not None and fits_exactly(self.dt, self.mag, self.frac)


def fits_exactly(dt, mag, frac):
    """A multiple of 2**-frac of magnitude <= mag is representable in float type dt."""
    if frac is None or dt not in MANTISSA:
        return False
    bits = frac + max(0, int(mag).bit_length())
    return bits <= MANTISSA[dt] and mag <= FMAX[dt]


def promote(a, b):
    """The element type of a binary arithmetic operation (docs/language.md)."""
    if a == b:
        return a
    if a == "bool":
        return b
    if b == "bool":
        return a
    if is_float(a) and is_float(b):
        if "f32" in (a, b) or {a, b} == {"f16", "bf16"}:
            return "f32"
        return a
    if is_float(a):
        return a
    if is_float(b):
        return b
    if BITS[a] != BITS[b]:
        return a if BITS[a] > BITS[b] else b
    return a if not is_signed(a) else b


def sum_type(t):
    """The element type of sum/cumsum of t."""
    if t in ("f16", "bf16"):
        return "f32"
    if t == "bool" or (is_int(t) and BITS[t] < 32):
        return "u32" if t.startswith("u") else "i32"
    return t


def broadcast(a, b):
    """NumPy broadcasting of two shapes, or None."""
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x != y and 1 not in (x, y):
            return None
        out.append(max(x, y))
    return tuple(reversed(out))


def literal(dt, v):
    """Source text of constant v for an operand of type dt."""
    if is_float(dt):
        s = repr(float(v))
        return s if "e" not in s else "%.10g" % v
    if dt == "bool":
        return "true" if v else "false"
    return str(int(v))
