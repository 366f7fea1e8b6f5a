"""tileops.py: random whole-tile operations on the values in scope: reductions (sum, max, min,
argmax, argmin, a helper's reduce), scans (cumsum, cumprod, associative_scan), flip, sort,
topk, trans and permute, reshape, expand_dims, broadcast_to, join, split, interleave, and dot.
A float sum or dot counts as the same on every backend only when its terms are exact
multiples of a power of two that add up without rounding (model.fits_exactly)."""

import math
from dataclasses import replace

from model import FMAX, INF, Val, fits_exactly, is_float, is_int, promote, sum_type
from elementwise import cast, int_mag

MAX_ELEMS = 4096

# helpers a generated kernel may call (kernel.py writes the ones used)
HELPERS = {
    "fz_add": "fn fz_add(a, b) { return a + b; }",
    "fz_maxabs": "fn fz_maxabs(a, b) { return where(abs(a) >= abs(b), a, b); }",
    "fz_xor": "fn fz_xor(a, b) { return a ^ b; }",
}


def shape_text(shape):
    return "[%s]" % ", ".join(str(d) for d in shape)


def drop(shape, axis, keep):
    if axis is None:
        return tuple(1 for _ in shape) if keep else ()
    return tuple(1 if i == axis and keep else d for i, d in enumerate(shape) if keep or i != axis)


class TileOps:
    def __init__(self, rng, body):
        self.rng = rng
        self.body = body
        self.helpers = set()

    def axis_args(self, v, allow_none=True):
        """A reduction's axis (None: every element), keep_dims, its arguments' text, and how
        many elements each result reduces."""
        along = v.rank and (not allow_none or self.rng.random() < 0.8)
        axis = self.rng.randrange(v.rank) if along else None
        keep = self.rng.random() < 0.25
        args = [str(axis) if axis is not None else "None"] if axis is not None or keep else []
        if keep:
            args.append("keep_dims=true")
        n = v.shape[axis] if axis is not None else v.size
        return axis, keep, args, n

    def reduction(self):
        a = self.body.pick(lambda v: v.rank >= 1)
        if a is None:
            return None
        op = self.rng.choice(["sum", "sum", "max", "min", "argmax", "argmin", "reduce"])
        axis, keep, args, n = self.axis_args(a, op != "reduce")
        shape = drop(a.shape, axis, keep)
        text = "%s(%s)" % (op, ", ".join([a.expr] + args))
        if op == "sum":
            return self.sum_val(a, text, shape, n)
        if op in ("argmax", "argmin"):
            return Val(text, "i32", shape, mag=n, frac=0) if a.det else None
        if op == "reduce":
            return self.helper_reduce(a, axis, keep, shape)
        return replace(a, expr=text, shape=shape)

    @staticmethod
    def sum_val(a, text, shape, n):
        dt = sum_type(a.dt)
        if not is_float(dt):
            return Val(text, dt, shape, mag=int_mag(dt, a.mag * n), frac=0)
        mag = a.mag * n
        if mag > FMAX[dt]:
            return None
        exact = a.det and fits_exactly(dt, mag, a.frac)
        return Val(text, dt, shape, exact, mag, a.frac if exact else None)

    def helper_reduce(self, a, axis, keep, shape):
        if a.dt == "bool" or axis is None:
            return None
        fn = "fz_maxabs" if is_float(a.dt) or self.rng.random() < 0.5 else "fz_xor"
        if fn == "fz_maxabs" and not a.det:
            return None
        self.helpers.add(fn)
        mag = a.mag if fn == "fz_maxabs" else int_mag(a.dt, INF)
        text = "reduce(%s, %d, %s%s)" % (a.expr, axis, fn, ", keep_dims=true" if keep else "")
        return Val(text, a.dt, shape, a.det, mag, a.frac)

    def scan(self):
        a = self.body.pick(lambda v: v.rank >= 1)
        if a is None:
            return None
        axis = self.rng.randrange(a.rank)
        rev = ", reverse=true" if self.rng.random() < 0.3 else ""
        op = self.rng.choice(["cumsum", "cumsum", "cumprod", "associative_scan"])
        n = a.shape[axis]
        if op == "cumsum":
            return self.sum_val(a, "cumsum(%s, %d%s)" % (a.expr, axis, rev), a.shape, n)
        if op == "cumprod":
            dt = sum_type(a.dt)
            if is_float(dt):
                if a.mag > 1:
                    return None
                return Val("cumprod(%s, %d%s)" % (a.expr, axis, rev), dt, a.shape, False, 1.0)
            return Val("cumprod(%s, %d%s)" % (a.expr, axis, rev), dt, a.shape,
                       mag=int_mag(dt, INF), frac=0)
        if not is_int(a.dt):
            return None
        self.helpers.add("fz_add")
        return Val("associative_scan(%s, %d, fz_add%s)" % (a.expr, axis, rev), a.dt, a.shape,
                   mag=int_mag(a.dt, INF), frac=0)

    def reorder(self):
        """flip, sort, topk: the same values in another order."""
        a = self.body.pick(lambda v: v.rank >= 1 and v.dt != "bool")
        if a is None:
            return None
        dim = self.rng.randrange(a.rank)
        op = self.rng.choice(["flip", "sort", "sort", "topk"])
        if op == "flip":
            return replace(a, expr="flip(%s, %d)" % (a.expr, dim))
        if op == "sort":
            desc = ", descending=true" if self.rng.random() < 0.5 else ""
            return replace(a, expr="sort(%s, %d%s)" % (a.expr, dim, desc))
        k = 2 ** self.rng.randrange(int(math.log2(a.shape[dim])) + 1)
        shape = tuple(k if i == dim else d for i, d in enumerate(a.shape))
        return replace(a, expr="topk(%s, %d, %d)" % (a.expr, k, dim), shape=shape)

    def transpose(self):
        a = self.body.pick(lambda v: v.rank >= 2)
        if a is None:
            return None
        if a.rank == 2:
            text = "trans(%s)" % a.expr if self.rng.random() < 0.7 else "trans(%s, [1, 0])" % a.expr
            return replace(a, expr=text, shape=a.shape[::-1])
        dims = list(range(a.rank))
        self.rng.shuffle(dims)
        fn = self.rng.choice(["permute", "trans"])
        return replace(a, expr="%s(%s, %s)" % (fn, a.expr, shape_text(dims)),
                       shape=tuple(a.shape[d] for d in dims))

    def random_shape(self, size):
        rank = self.rng.choice([1, 2, 2, 3])
        logs = [0] * rank
        for _ in range(int(math.log2(size))):
            logs[self.rng.randrange(rank)] += 1
        return tuple(2 ** k for k in logs)

    def reshape(self):
        a = self.body.pick(lambda v: v.rank >= 1)
        if a is None:
            return None
        op = self.rng.choice(["reshape", "reshape", "ravel", "expand", "broadcast", "index"])
        if op == "reshape":
            shape = self.random_shape(a.size)
            dims = list(shape)
            if self.rng.random() < 0.3:
                dims[self.rng.randrange(len(dims))] = -1
            return replace(a, expr="reshape(%s, %s)" % (a.expr, shape_text(dims)), shape=shape)
        if op == "ravel":
            return replace(a, expr="ravel(%s)" % a.expr, shape=(a.size,))
        if op == "broadcast":
            return self.broadcast_to(a)
        if a.rank >= 3:
            return None
        axis = self.rng.randrange(a.rank + 1)
        shape = a.shape[:axis] + (1,) + a.shape[axis:]
        if op == "expand":
            return replace(a, expr="expand_dims(%s, %d)" % (a.expr, axis), shape=shape)
        idx = [":"] * a.rank
        idx.insert(axis, "None")
        return replace(a, expr="%s[%s]" % (a.expr, ", ".join(idx)), shape=shape)

    def broadcast_to(self, a):
        ones = [i for i, d in enumerate(a.shape) if d == 1]
        if not ones:
            return None
        grow = 2 ** self.rng.randrange(1, 6)
        if a.size * grow > MAX_ELEMS:
            return None
        i = self.rng.choice(ones)
        shape = tuple(grow if j == i else d for j, d in enumerate(a.shape))
        return replace(a, expr="broadcast_to(%s, %s)" % (a.expr, shape_text(shape)), shape=shape)

    def pairs(self):
        """join, interleave, split."""
        op = self.rng.choice(["join", "interleave", "split"])
        if op == "split":
            a = self.body.pick(lambda v: v.rank >= 1 and v.shape[-1] == 2)
            if a is None:
                return None
            half = replace(a, shape=a.shape[:-1] or (1,))  # a [2] splits into [1] tiles
            self.body.bind_split("split(%s)" % a.expr, half, half)
            return None
        a = self.body.pick(lambda v: 1 <= v.rank <= 2 and v.size * 2 <= MAX_ELEMS)
        if a is None:
            return None
        b = self.body.pick(lambda v: v.shape == a.shape and (is_float(v.dt) == is_float(a.dt)))
        if b is None:
            return None
        dt = promote(a.dt, b.dt)
        a2, b2 = cast(a, dt), cast(b, dt)
        if a2 is None or b2 is None:
            return None
        det, mag = a2.det and b2.det, max(a2.mag, b2.mag)
        frac = max(a2.frac, b2.frac) if a2.frac is not None and b2.frac is not None else None
        shape = a.shape + (2,) if op == "join" else a.shape[:-1] + (a.shape[-1] * 2,)
        return Val("%s(%s, %s)" % (op, a2.expr, b2.expr), dt, shape, det, mag, frac)

    def dot(self):
        a = self.body.pick(lambda v: v.rank == 2)
        if a is None:
            return None
        k = a.shape[1]
        b = self.body.pick(lambda v: v.rank == 2 and k in v.shape)
        if b is None:
            return None
        bexpr = b.expr if b.shape[0] == k else "trans(%s)" % b.expr
        b = replace(b, expr=bexpr, shape=(k, b.shape[1] if b.shape[0] == k else b.shape[0]))
        if a.shape[0] * b.shape[1] > MAX_ELEMS:
            return None
        dt = self.rng.choice(["f16", "bf16", "f32", "f32", "i8"])
        a, b = cast(a, dt), cast(b, dt)
        if a is None or b is None:
            return None
        return self.dot_val(a, b, k)

    def dot_val(self, a, b, k):
        shape = (a.shape[0], b.shape[1])
        acc_dt = "i32" if a.dt == "i8" else "f32"
        acc = self.body.pick(lambda v: v.shape == shape and v.dt == acc_dt) \
            if self.rng.random() < 0.4 else None
        if acc_dt == "i32":
            args = [a.expr, b.expr] + ([acc.expr] if acc else [])
            return Val("dot(%s)" % ", ".join(args), "i32", shape, mag=int_mag("i32", INF), frac=0)
        mag = k * a.mag * b.mag + (acc.mag if acc else 0)
        if mag > FMAX["f32"]:
            return None
        frac = a.frac + b.frac if a.exact() and b.exact() else None
        if acc:
            frac = max(frac, acc.frac) if frac is not None and acc.exact() else None
        exact = fits_exactly("f32", mag, frac)
        args = [a.expr, b.expr] + ([acc.expr] if acc else [])
        if a.dt == "f32" and self.tf32_exact(a, b) and self.rng.random() < 0.5:
            args.append("allow_tf32=true")
        return Val("dot(%s)" % ", ".join(args), "f32", shape, exact, mag, frac if exact else None)

    @staticmethod
    def tf32_exact(a, b):
        """Operands that tf32 (11 significant bits) holds exactly: the same product."""
        return all(v.frac is not None and v.frac + int(v.mag).bit_length() <= 11 for v in (a, b))
