"""control.py: loops and branches of generated kernels: an accumulator carried through a
`for` over slices (range, static_range or while), the K loop of a matmul (dot on f16, bf16,
f32 with or without tf32, i8; operands loaded transposed or not, quantized or not), a row
reduction over column chunks, `if`/`else` assigning a variable, and an early `return`."""

from dataclasses import replace

from elementwise import cast, fit, int_mag
from model import FMAX, INF, Val, fits_exactly, is_float, literal

SLICE_TYPES = ["f32", "f32", "f16", "i32", "bf16", "u8"]


def inner_steps(k, lo, hi):
    for _ in range(k.rng.randint(lo, hi)):
        k.step(inner=True)


def pick_update(k, acc_dt, shape):
    """A value in scope that fits shape, converted to the accumulator's type."""
    for _ in range(8):
        w = k.body.pick(lambda v: fit(v, shape) is not None, recent=0.8)
        w = cast(fit(w, shape), acc_dt) if w else None
        if w is not None:
            return w
    return None


def loop_header(k, count):
    """The loop statement over `count` iterations, its index's name and a closing step."""
    j = k.fresh("j")
    flavor = k.rng.choice(["range", "range", "static", "while"])
    if flavor == "static":
        return "for %s in static_range(0, %d)" % (j, count), j, None
    t = k.scalar(k.fresh("T"), "i32", count)
    if flavor == "range":
        return "for %s in range(0, %s)" % (j, t), j, None
    k.body.emit("let %s = 0;" % j)
    return "while %s < %s" % (j, t), j, "%s += 1;" % j


def slice_loop(k):
    """acc (BM x BN) updated once per slice of a [T, M, N] input."""
    count = k.rng.randint(1, 4)
    dt = k.rng.choice(["f32", "f32", "i32", "f16"])
    acc = k.fresh("acc")
    k.body.emit("let %s = zeros([BM, BN], %s);" % (acc, dt))
    header, j, close = loop_header(k, count)
    k.body.push(header)
    xdt = k.rng.choice(SLICE_TYPES)
    x, mag = k.input(xdt, count * k.m * k.n)
    k.add(Val("load(%s + %s * (M * N) + offs, mask=mask)" % (x, j), xdt, (k.bm, k.bn),
              mag=mag if is_float(xdt) else max(mag, 1), frac=None if is_float(xdt) else 0))
    inner_steps(k, 0, 3)
    w = pick_update(k, dt, (k.bm, k.bn))
    final = accumulate(k, acc, dt, w, count, (k.bm, k.bn))
    if close:
        k.body.emit(close)
    k.body.pop()
    k.body.declare(final)


def accumulate(k, acc, dt, w, count, shape):
    """Emits acc's update by w; the accumulator's value after count updates."""
    op = k.rng.choice(["+", "+", "max", "min", "where"])
    c = k.body.pick(lambda v: v.dt == "bool" and fit(v, shape) is not None)
    if w is None or (op == "+" and (w.mag * count > FMAX.get(dt, INF))) or \
            (op == "where" and c is None):
        op = "max"
        w = w or Val("0", dt, (), mag=0, frac=0)
    acc_val = Val(acc, dt, shape, w.det, w.mag, w.frac)
    if op == "+":
        text = "%s + %s" % (acc, w.expr)
        mag = w.mag * count
        acc_val = replace(acc_val, mag=int_mag(dt, mag) if not is_float(dt) else mag)
        if is_float(dt) and not fits_exactly(dt, mag, w.frac):
            acc_val = replace(acc_val, frac=None)
    elif op == "where":
        text = "where(%s, %s, %s)" % (fit(c, shape).expr, acc, w.expr)
    else:
        text = "%simum(%s, %s)" % (op, acc, w.expr)
    k.body.emit("%s = %s;" % (acc, text))
    return acc_val


def dot_loop(k):
    """acc = A @ B over K in BK steps, A [M, K], B [K, N] (or stored transposed)."""
    kk = k.fresh("kk")
    kname = k.scalar(k.fresh("K"), "i32", odd_k(k))
    op_dt = k.rng.choice(["f16", "f16", "bf16", "f32", "f32", "i8"])
    acc_dt = "i32" if op_dt == "i8" else "f32"
    acc = k.fresh("acc")
    k.body.emit("let %s = zeros([BM, BN], %s);" % (acc, acc_dt))
    k.body.push("for %s in range(0, %s, BK)" % (kk, kname))
    k.body.emit("let rk = %s + arange(0, BK);" % kk)
    a = dot_operand(k, op_dt, kname, "rm", "M", first=True)
    b = dot_operand(k, op_dt, kname, "rn", "N", first=False)
    result = update_with_dot(k, acc, a, b, int(k.sizes[kname]))
    k.body.pop()
    k.body.declare(result)


def odd_k(k):
    r = k.rng.random()
    return k.bk if r < 0.2 else k.rng.randrange(1, 3 * k.bk + 1)


def dot_operand(k, dt, kname, idx, lim, first):
    """A's [BM, BK] block (first) or B's [BK, BN], loaded as stored or transposed."""
    x, mag = k.input(dt, k.sizes[lim] * k.sizes[kname])
    along = "(%s[:, None] < %s) && (rk[None, :] < %s)" % (idx, lim, kname)
    across = "(rk[:, None] < %s) && (%s[None, :] < %s)" % (kname, idx, lim)
    stored_t = k.rng.random() < 0.3  # A stored [K, M] or B stored [N, K]
    if first != stored_t:  # an [idx, k] block
        text = "load(%s + %s[:, None] * %s + rk[None, :], mask=%s)" % (x, idx, kname, along)
    else:
        text = "load(%s + rk[:, None] * %s + %s[None, :], mask=%s)" % (x, lim, idx, across)
    if stored_t:
        text = "trans(%s)" % text
    shape = (k.bm, k.bk) if first else (k.bk, k.bn)
    v = k.body.bind(Val(text, dt, shape, mag=mag, frac=None if is_float(dt) else 0))
    if is_float(dt) and k.rng.random() < 0.5:  # exact products: the dot is exact too
        q = k.rng.choice([2, 3, 4])
        v = k.body.bind(Val("floor(%s * %s) * %s" % (v.expr, literal(dt, 2 ** q),
                                                     literal(dt, 2.0 ** -q)), dt, shape,
                            mag=mag + 1, frac=q))
    return v


def update_with_dot(k, acc, a, b, kmax):
    exact = all(v.frac is not None and fits_exactly(v.dt, v.mag, v.frac) for v in (a, b))
    tf32 = a.dt == "f32" and exact and all(v.frac + int(v.mag).bit_length() <= 11 for v in (a, b))
    args = [a.expr, b.expr]
    if tf32 and k.rng.random() < 0.6:
        args.append("allow_tf32=true")
    form = k.rng.choice(["acc", "plus"])
    if form == "acc":
        k.body.emit("%s = dot(%s, %s%s);" % (acc, args[0], args[1],
                                             "".join(", " + x for x in [acc] + args[2:])))
    else:
        k.body.emit("%s += dot(%s);" % (acc, ", ".join(args)))
    mag = kmax * a.mag * b.mag
    frac = a.frac + b.frac if exact else None
    is_exact = a.dt == "i8" or fits_exactly("f32", mag, frac)
    dt = "i32" if a.dt == "i8" else "f32"
    return Val(acc, dt, (k.bm, k.bn), is_exact,
               int_mag("i32", INF) if dt == "i32" else mag, frac if is_exact else None)


def row_loop(k):
    """A [BM] row statistic accumulated over the BN-column chunks of an [M, W] input."""
    w_cols = k.rng.randrange(1, 4 * k.bn + 1)
    wname = k.scalar(k.fresh("W"), "i32", w_cols)
    xdt = k.rng.choice(SLICE_TYPES)
    x, mag = k.input(xdt, k.m * w_cols)
    dt = "f32" if is_float(xdt) or k.rng.random() < 0.3 else "i32"
    acc, c0 = k.fresh("racc"), k.fresh("c")
    k.body.emit("let %s = zeros([BM], %s);" % (acc, dt))
    k.body.push("for %s in range(0, %s, BN)" % (c0, wname))
    k.body.emit("let cc = %s + arange(0, BN);" % c0)
    k.add(Val("load(%s + rm[:, None] * %s + cc[None, :], mask=(rm[:, None] < M) && "
              "(cc[None, :] < %s))" % (x, wname, wname), xdt, (k.bm, k.bn),
              mag=max(mag, 1), frac=None if is_float(xdt) else 0))
    inner_steps(k, 0, 2)
    w = pick_update(k, dt, (k.bm, k.bn))
    chunks = -(-w_cols // k.bn)
    if w is None or w.shape != (k.bm, k.bn):
        w = k.body.values(lambda v: v.shape == (k.bm, k.bn))[-1]
        w = cast(w, dt) or Val("1", dt, (), mag=1, frac=0)
    final = reduce_chunk(k, acc, dt, w, chunks)
    k.body.pop()
    k.body.declare(final)


def reduce_chunk(k, acc, dt, w, chunks):
    shape = (k.bm,)
    if w.shape != (k.bm, k.bn):
        k.body.emit("%s = %s + %s;" % (acc, acc, w.expr))
        return Val(acc, dt, shape, w.det, w.mag * chunks, None if is_float(dt) else 0)
    if k.rng.random() < 0.5 and w.mag * k.bn * chunks <= FMAX.get(dt, INF):
        k.body.emit("%s = %s + sum(%s, 1);" % (acc, acc, w.expr))
        mag = w.mag * k.bn * chunks
        exact = not is_float(dt) or (w.det and fits_exactly(dt, mag, w.frac))
        return Val(acc, dt, shape, exact, int_mag(dt, mag) if not is_float(dt) else mag,
                   (w.frac if is_float(dt) else 0) if exact else None)
    k.body.emit("%s = maximum(%s, max(%s, 1));" % (acc, acc, w.expr))
    return Val(acc, dt, shape, w.det, w.mag, w.frac)


def branch(k):
    """`let v = X; if COND { v = Y; } [else { v = Z; }]` with a scalar condition."""
    x = k.body.pick(lambda v: v.dt != "bool" or v.rank > 0)
    if x is None:
        return
    cond = condition(k)
    v = k.body.bind(x)
    final = v
    for arm in ["if %s" % cond] + (["else"] if k.rng.random() < 0.5 else []):
        k.body.push(arm if arm == "else" else arm)
        inner_steps(k, 0, 2)
        y = k.body.pick(lambda u: u.shape == v.shape and cast(u, v.dt) is not None
                        and u.expr != v.expr, recent=0.8)
        y = cast(y, v.dt) if y else None
        if y is not None:
            k.body.emit("%s = %s;" % (v.expr, y.expr))
            final = merge(final, y)
        k.body.pop()
    k.body.redeclare(final)


def merge(a, b):
    frac = max(a.frac, b.frac) if a.frac is not None and b.frac is not None else None
    if is_float(a.dt) and not fits_exactly(a.dt, max(a.mag, b.mag), frac):
        frac = None
    return replace(a, det=a.det and b.det, mag=max(a.mag, b.mag), frac=frac)


def condition(k):
    s = k.body.pick(lambda v: v.rank == 0 and v.det and v.dt != "bool")
    r = k.rng.random()
    if s is not None and r < 0.4:
        c = "0.25" if is_float(s.dt) else "3"
        return "%s > %s" % (s.expr, c)
    if r < 0.7:
        m = k.body.pick(lambda v: v.dt == "bool" and v.rank > 0)
        if m is not None:
            return "sum(%s) > %d" % (m.expr, k.rng.randint(0, m.size))
    return k.rng.choice(["pid_m % 2 == 0", "pid_n == 0", "pid_m + pid_n > 1", "pid_m != 1"])


def early_return(k):
    k.body.push("if pid_m == %d && pid_n == %d" % (k.rng.randrange(k.g0), k.rng.randrange(k.g1)))
    k.body.emit("return;")
    k.body.pop()
