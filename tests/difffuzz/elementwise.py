"""elementwise.py: random elementwise operations on the values in scope: casts, float and
integer arithmetic, math functions, comparisons, boolean logic and `where`, broadcasting
operands of different shapes as NumPy does (rank-1 operands through `[:, None]`). Each builder
returns a new Val (its expression unbound) or None when the values in scope do not allow it."""

import math
from dataclasses import replace

from model import (BITS, FLOATS, FMAX, INF, INTS, MANTISSA, Val, broadcast, fits_exactly,
                   int_range, is_float, is_int, is_signed, literal, promote)


def fit(v, shape):
    """v in a form that broadcasts to shape (a dim of size 1 inserted where needed), or None."""
    shape = tuple(shape)
    if broadcast(v.shape, shape) == shape:
        return v
    if v.rank == 1 and len(shape) >= 2 and v.shape[0] == shape[-2]:
        return replace(v, expr="%s[:, None]" % v.expr, shape=(v.shape[0], 1))
    if v.rank == 1 and len(shape) == 3 and v.shape[0] == shape[0]:
        return replace(v, expr="%s[:, None, None]" % v.expr, shape=(v.shape[0], 1, 1))
    if v.rank == 2 and len(shape) == 3 and v.shape == shape[:2]:
        return replace(v, expr="%s[:, :, None]" % v.expr, shape=v.shape + (1,))
    return None


def int_mag(dt, mag, wraps=False):
    """mag, or the type's bound when the value may wrap (wraps: an unsigned result of a
    subtraction, negation or complement, or a signed value converted to unsigned)."""
    lo, hi = int_range(dt)
    bound = max(-lo, hi)
    return mag if mag <= bound and not (wraps and lo == 0) else bound


def pow2_ceil(x):
    return 1 << max(0, int(min(x, 2.0 ** 62)).bit_length())


def cast(v, dt):
    """v converted to dt, or None where the result could differ between backends or leave
    the range the generator keeps floats in."""
    if v.dt == dt:
        return v
    text = "(%s as %s)" % (v.expr, dt)
    if dt == "bool":
        return Val(text, "bool", v.shape, mag=1, frac=0) if v.det else None
    if is_float(dt):
        if v.mag > FMAX[dt] or (is_float(v.dt) and not v.det and MANTISSA[dt] < MANTISSA[v.dt]):
            return None  # a last-bit difference would become a rounding step of dt
        frac = v.frac if v.dt == "bool" or is_float(v.dt) else 0
        frac = frac if fits_exactly(dt, v.mag, frac) else None
        return Val(text, dt, v.shape, v.det, v.mag, frac)
    if is_float(v.dt) and not v.det:
        return None
    mag = min(v.mag, 2.0 ** 63)
    wraps = is_int(v.dt) and v.dt.startswith("i")
    return Val(text, dt, v.shape, mag=int_mag(dt, math.floor(mag), wraps), frac=0)


class Elementwise:
    def __init__(self, rng, body):
        self.rng = rng
        self.body = body

    def pair(self, pa, pb=None):
        """Two values in scope (pa, pb predicates) and the shape they broadcast to."""
        pb = pb or pa
        for _ in range(12):
            a, b = self.body.pick(pa), self.body.pick(pb)
            if a is None or b is None:
                return None
            for shape in (a.shape, b.shape):
                fa, fb = fit(a, shape), fit(b, shape)
                if fa is not None and fb is not None:
                    return fa, fb, tuple(shape)
        return None

    def float_binary(self):
        got = self.pair(lambda v: is_float(v.dt) or (is_int(v.dt) and v.mag <= 1e4))
        if not got:
            return None
        a, b, shape = got
        dt = promote(a.dt, b.dt)
        dt = dt if is_float(dt) else "f32"
        a, b = cast(a, dt), cast(b, dt)
        if a is None or b is None:
            return None
        op = self.rng.choice(["+", "-", "*", "*", "/", "/2", "min", "max", "fma", "%"])
        return self.float_op(op, a, b, dt, shape)

    def float_op(self, op, a, b, dt, shape):
        det = a.det and b.det
        both = a.frac is not None and b.frac is not None
        if op in "+-":
            mag, frac = a.mag + b.mag, max(a.frac, b.frac) if both else None
            text = "(%s %s %s)" % (a.expr, op, b.expr)
        elif op == "*":
            mag, frac = a.mag * b.mag, a.frac + b.frac if both else None
            text = "(%s * %s)" % (a.expr, b.expr)
        elif op == "/":  # a denominator at least 1: no infinities
            mag, frac = a.mag, None
            text = "(%s / (abs(%s) + 1.0))" % (a.expr, b.expr)
        elif op == "/2":
            k = self.rng.choice([2, 4, 8, 0.5])
            mag, frac = a.mag / k, (a.frac + int(math.log2(k)) if a.frac is not None else None)
            text = "(%s / %s)" % (a.expr, literal(dt, k))
            shape = a.shape
        elif op in ("min", "max"):
            mag, frac = max(a.mag, b.mag), max(a.frac, b.frac) if both else None
            text = "%simum(%s, %s)" % (op, a.expr, b.expr)
        elif op == "%":  # fmod by at least 0.5: exact, but steps where a passes a multiple of b
            if not det:
                return None
            mag, frac = a.mag, max(a.frac, b.frac) if both else None
            text = "(%s %% (abs(%s) + 0.5))" % (a.expr, b.expr)
        else:
            c = self.body.pick(lambda v: v.dt == dt and fit(v, shape) is not None)
            if c is None:
                return None
            mag = a.mag * b.mag + c.mag
            frac = a.frac + b.frac if both and c.frac is not None else None
            frac = max(frac, c.frac) if frac is not None else None
            det = det and c.det
            text = "fma(%s, %s, %s)" % (a.expr, b.expr, fit(c, shape).expr)
        if op in ("/", "/2", "%") and dt in ("f16", "bf16"):
            dt = "f32"  # Triton's promotion: f16 and bf16 quotients and remainders are f32
        if mag > FMAX[dt]:
            return None
        frac = frac if fits_exactly(dt, mag, frac) else None
        return Val(text, dt, shape, det, mag, frac)

    def float_unary(self):
        a = self.body.pick(lambda v: is_float(v.dt))
        if a is None:
            return None
        op = self.rng.choice(["neg", "abs", "floor", "ceil", "trunc", "sqrt", "exp", "log",
                              "sin", "cos", "tanh", "sigmoid", "erf", "rsqrt", "quant", "quant",
                              "clamp", "exp2"])
        return self.float_fn(op, a)

    def float_fn(self, op, a):
        e, dt, det = a.expr, a.dt, a.det
        if op in ("neg", "abs"):
            return replace(a, expr="(-%s)" % e if op == "neg" else "abs(%s)" % e)
        if op in ("floor", "ceil", "trunc", "quant") and not det:
            return None
        if op in ("floor", "ceil", "trunc"):
            return Val("%s(%s)" % (op, e), dt, a.shape, True, a.mag + 1, 0)
        if op == "quant":
            q = self.rng.choice([0, 1, 2, 3, 4, 6])
            if a.mag * 2 ** q > FMAX[dt]:
                return None
            text = "(floor(%s * %s) * %s)" % (e, literal(dt, 2 ** q), literal(dt, 2.0 ** -q))
            frac = q if fits_exactly(dt, a.mag + 1, q) else None
            return Val(text, dt, a.shape, True, a.mag + 1, frac)
        if op == "clamp":
            lo = self.rng.choice([-0.5, -0.25, 0.0])
            hi = self.rng.choice([0.25, 0.5, 0.75])
            frac = max(a.frac, 2) if a.frac is not None else None
            return Val("clamp(%s, %s, %s)" % (e, literal(dt, lo), literal(dt, hi)), dt, a.shape,
                       det, min(a.mag, 1.0), frac if fits_exactly(dt, 1, frac) else None)
        if op == "sqrt":  # IEEE on every backend
            return Val("sqrt(abs(%s))" % e, dt, a.shape, det, math.sqrt(a.mag) + 1)
        return self.float_math(op, a)

    def float_math(self, op, a):
        """Library functions: implementations may differ in the last bits (det False)."""
        e, dt = a.expr, a.dt
        if op in ("exp", "exp2"):
            if a.mag > 6:
                return None
            return Val("%s(%s)" % (op, e), dt, a.shape, False, math.exp(a.mag) + 1)
        if op == "log":
            return Val("log(abs(%s) + 1.0)" % e, dt, a.shape, False, math.log(a.mag + 1) + 1)
        if op == "rsqrt":
            return Val("rsqrt(abs(%s) + 1.0)" % e, dt, a.shape, False, 1.0)
        if op in ("sin", "cos") and not a.det and a.mag > 4:
            return None  # a last-bit difference of a large argument is as large in the result
        return Val("%s(%s)" % (op, e), dt, a.shape, False, 1.0 if op != "erf" else 1.0)

    def int_binary(self):
        got = self.pair(lambda v: is_int(v.dt) or v.dt == "bool")
        if not got:
            return None
        a, b, shape = got
        dt = promote(a.dt, b.dt)
        if dt == "bool":
            return None
        op = self.rng.choice(["+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "min", "max"])
        if op in ("min", "max"):
            text = "%simum(%s, %s)" % (op, a.expr, b.expr)
        else:
            text = "(%s %s %s)" % (a.expr, op, b.expr)
        mag = int_mag(dt, self.int_bound(op, a.mag, b.mag), op == "-")
        return Val(text, dt, shape, mag=mag, frac=0)

    @staticmethod
    def int_bound(op, ma, mb):
        if op in "+-":
            return ma + mb
        if op == "*":
            return ma * mb
        if op in ("/", ">>"):
            return ma
        if op == "%":
            return min(ma, mb)
        if op in ("min", "max"):
            return max(ma, mb)
        if op == "<<":
            return INF
        return pow2_ceil(max(ma, mb))

    def int_unary(self):
        a = self.body.pick(lambda v: is_int(v.dt))
        if a is None:
            return None
        op = self.rng.choice(["-", "~", "shr", "and", "mod", "mul"])
        e, k = a.expr, self.rng.choice([1, 3, 5, 7, 13])
        k = min(k, BITS[a.dt] - is_signed(a.dt))  # 2**k - 1 fits the type
        text, mag = {"-": ("(-%s)" % e, a.mag), "~": ("(~%s)" % e, a.mag + 1),
                     "shr": ("(%s >> %d)" % (e, k % 8), a.mag),
                     "and": ("(%s & %d)" % (e, 2 ** k - 1), 2 ** k),
                     "mod": ("(%s %% %d)" % (e, k), k),
                     "mul": ("(%s * %d)" % (e, k), a.mag * k)}[op]
        return Val(text, a.dt, a.shape, mag=int_mag(a.dt, mag, op in "-~"), frac=0)

    def compare(self):
        got = self.pair(lambda v: v.det and v.dt != "bool")
        if not got:
            return None
        a, b, shape = got
        dt = promote(a.dt, b.dt)
        a, b = cast(a, dt), cast(b, dt)
        if a is None or b is None:
            return None
        op = self.rng.choice(["<", "<=", ">", ">=", "==", "!="])
        return Val("(%s %s %s)" % (a.expr, op, b.expr), "bool", shape, mag=1, frac=0)

    def logic(self):
        got = self.pair(lambda v: v.dt == "bool")
        if not got:
            a = self.body.pick(lambda v: v.dt == "bool")
            return Val("(!%s)" % a.expr, "bool", a.shape, mag=1, frac=0) if a else None
        a, b, shape = got
        op = self.rng.choice(["&&", "||", "^", "&", "|", "!="])
        return Val("(%s %s %s)" % (a.expr, op, b.expr), "bool", shape, mag=1, frac=0)

    def select(self):
        got = self.pair(lambda v: v.dt == "bool", lambda v: v.dt != "bool")
        if not got:
            return None
        c, a, shape = got
        b = self.body.pick(lambda v: v.dt != "bool" and fit(v, shape) is not None
                           and (is_float(v.dt) == is_float(a.dt)))
        if b is None:
            return None
        dt = promote(a.dt, b.dt)
        a, b = cast(a, dt), cast(fit(b, shape), dt)
        if a is None or b is None:
            return None
        frac = max(a.frac, b.frac) if a.frac is not None and b.frac is not None else None
        if is_float(dt) and not fits_exactly(dt, max(a.mag, b.mag), frac):
            frac = None
        return Val("where(%s, %s, %s)" % (c.expr, a.expr, b.expr), dt, shape, a.det and b.det,
                   max(a.mag, b.mag), frac)

    def convert(self):
        a = self.body.pick()
        if a is None:
            return None
        choices = [t for t in FLOATS + INTS + ("bool",) if t != a.dt]
        dt = self.rng.choice(choices)
        v = cast(a, dt)
        return v

    def literal_op(self):
        """An operation with a constant operand (weak literal typing)."""
        a = self.body.pick(lambda v: v.dt != "bool")
        if a is None:
            return None
        if is_float(a.dt):
            k = self.rng.choice([0.5, 1.5, 2.0, -0.25, 3.0])
            op = self.rng.choice(["+", "*", "-"])
            mag = a.mag * abs(k) if op == "*" else a.mag + abs(k)
            frac = None if a.frac is None else a.frac + (2 if op == "*" else 0)
            frac = max(frac, 2) if frac is not None else None
            if mag > FMAX[a.dt]:
                return None
            return Val("(%s %s %s)" % (a.expr, op, literal(a.dt, k)), a.dt, a.shape, a.det, mag,
                       frac if fits_exactly(a.dt, mag, frac) else None)
        lo, hi = int_range(a.dt)
        k = self.rng.choice([1, 3, 7, 100, hi] + ([lo] if a.dt in ("i8", "i16", "i32") else []))
        k = min(k, hi)
        op = self.rng.choice(["+", "*", "-", "^", "/", "%"])
        mag = int_mag(a.dt, self.int_bound(op, a.mag, abs(k)), op == "-")
        return Val("(%s %s %s)" % (a.expr, op, literal(a.dt, k)), a.dt, a.shape, mag=mag, frac=0)
