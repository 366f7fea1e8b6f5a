"""sinks.py: how a generated kernel's values leave it: masked stores of [BM, BN] blocks (as
they are, or transposed into an [N, M] output), of rows, columns and per-program scalars, and
a row-major store of a tile of any shape into its program's own chunk of an output (masked at
an odd length); atomics whose final memory does not depend on the programs' order (integer
add, max, min, and, or, xor into a few bins; f32 add of exact values into zeroed bins)."""

from elementwise import fit
from model import FMAX, Val, fits_exactly, is_float, is_int


def out_type(k, v):
    """The output's element type: the value's, or a narrower float where it fits."""
    if v.dt == "bool":
        return k.rng.choice(["i8", "i32", "u8"])
    if is_float(v.dt):
        options = [t for t in ("f32", "f16", "bf16") if v.mag <= FMAX[t]]
        return v.dt if k.rng.random() < 0.6 else k.rng.choice(options)
    return v.dt


def converted(v, dt):
    return v.expr if v.dt == dt else "(%s as %s)" % (v.expr, dt)


def extra_mask(k, shape):
    """`&& c` with a bool of the value's shape, sometimes: more lanes masked off."""
    if k.rng.random() > 0.25:
        return ""
    c = k.body.pick(lambda u: u.dt == "bool" and fit(u, shape) is not None)
    return " && %s" % fit(c, shape).expr if c else ""


def store_domain(k, v, dt):
    """Stores v where its shape is one of the domain's; False if it is not."""
    bm, bn, m, n = k.bm, k.bn, k.m, k.n
    layouts = {
        (bm, bn): ("offs", "mask", m * n),
        (bn, bm): ("rn[:, None] * M + rm[None, :]", "(rn[:, None] < N) && (rm[None, :] < M)",
                   m * n),
        (bm,): ("pid_n * M + rm", "rm < M", k.g1 * m),
        (bm, 1): ("pid_n * M + rm[:, None]", "rm[:, None] < M", k.g1 * m),
        (bn,): ("pid_m * N + rn", "rn < N", k.g0 * n),
        (1, bn): ("pid_m * N + rn[None, :]", "rn[None, :] < N", k.g0 * n),
    }
    if v.shape not in layouts or k.rng.random() < 0.2:
        return False
    offs, mask, count = layouts[v.shape]
    out = k.output(dt, count)
    k.body.emit("store(%s + %s, %s, mask=%s%s);" % (out, offs, converted(v, dt), mask,
                                                    extra_mask(k, v.shape)))
    return True


def row_major_index(shape):
    dims = len(shape)
    terms = []
    for i, d in enumerate(shape):
        idx = ["None"] * dims
        idx[i] = ":"
        stride = 1
        for e in shape[i + 1:]:
            stride *= e
        a = "arange(0, %d)%s" % (d, "" if dims == 1 else "[%s]" % ", ".join(idx))
        terms.append(a if stride == 1 else "%s * %d" % (a, stride))
    return " + ".join(terms)


def store_chunk(k, v, dt):
    """v, any shape, row-major into this program's chunk of v.size elements."""
    out = k.output(dt, k.g0 * k.g1 * v.size)
    base = "(pid_m * num_programs(1) + pid_n) * %d" % v.size
    if v.rank == 0:
        k.body.emit("store(%s + %s, %s);" % (out, base, converted(v, dt)))
        return
    idx = row_major_index(v.shape)
    if k.rng.random() < 0.4:
        lim = k.scalar(k.fresh("L"), "i32", k.rng.randrange(0, v.size + 1))
        k.body.emit("store(%s + %s + %s, %s, mask=(%s) < %s);" % (out, base, idx,
                                                                converted(v, dt), idx, lim))
    else:
        k.body.emit("store(%s + %s + %s, %s);" % (out, base, idx, converted(v, dt)))


def stores(k):
    """Stores the values nothing read yet, then a few others."""
    vals = k.body.unused()
    k.rng.shuffle(vals)
    vals = vals[:6]
    others = k.body.values(lambda v: v.rank > 0 or v.expr.startswith("acc"))
    for _ in range(k.rng.randint(0, 2)):
        if others:
            vals.append(k.rng.choice(others))
    for v in vals:
        dt = out_type(k, v)
        if not store_domain(k, v, dt):
            store_chunk(k, v, dt)


ATOMIC_OPS = ["atomic_add", "atomic_add", "atomic_max", "atomic_min", "atomic_and",
              "atomic_or", "atomic_xor"]


def atomic(k):
    """An order-independent atomic update of a few bins indexed by an integer tile."""
    idx = k.body.pick(lambda v: (is_int(v.dt) or v.dt == "bool") and v.rank > 0)
    if idx is None:
        return
    bins = k.rng.choice([1, 3, 7, 16])
    where = "(((%s as i32) %% %d) + %d) %% %d" % (idx.expr, bins, bins, bins)
    op = k.rng.choice(ATOMIC_OPS)
    val = atomic_value(k, op, idx.shape)
    if val is None:
        return
    dt = "f32" if is_float(val.dt) else "i32"
    out = k.output(dt, bins, fill="0" if dt == "f32" else None)
    mask = k.body.pick(lambda v: v.dt == "bool" and fit(v, idx.shape) is not None)
    args = [out + " + " + where, converted(val, dt)]
    if mask is not None and k.rng.random() < 0.6:
        args.append("mask=%s" % fit(mask, idx.shape).expr)
    if k.rng.random() < 0.4:
        args.append('sem="%s"' % k.rng.choice(["relaxed", "acq_rel", "release", "acquire"]))
    k.body.emit("%s(%s);" % (op, ", ".join(args)))


def atomic_value(k, op, shape):
    if op == "atomic_add" and k.rng.random() < 0.3:  # exact sums in any order
        n = k.g0 * k.g1
        for _ in range(len(shape)):
            n *= max(shape)
        v = k.body.pick(lambda u: is_float(u.dt) and u.exact() and fit(u, shape) is not None
                        and fits_exactly("f32", u.mag * n, u.frac))
        if v is not None:
            return fit(v, shape)
    v = k.body.pick(lambda u: (is_int(u.dt) or u.dt == "bool") and fit(u, shape) is not None)
    return fit(v, shape) if v is not None else Val("1", "i32", (), mag=1, frac=0)
