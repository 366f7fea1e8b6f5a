"""sources.py: where a generated kernel's values come from: its program ids and index tiles,
masked loads of [BM, BN] blocks (row- or column-major), of rows, columns and scalars, scalar
parameters, constants and random numbers."""

from model import INF, Val, is_float, is_int, literal

LOAD_TYPES = ["f32", "f32", "f16", "bf16", "i32", "i32", "i8", "u8", "i16", "u32", "i64"]


def prologue(k):
    b = k.body
    b.bind(Val("program_id(0)", "i32", (), mag=k.g0), "pid_m")
    b.bind(Val("program_id(1)", "i32", (), mag=k.g1), "pid_n")
    b.bind(Val("pid_m * BM + arange(0, BM)", "i32", (k.bm,), mag=k.g0 * k.bm), "rm")
    b.bind(Val("pid_n * BN + arange(0, BN)", "i32", (k.bn,), mag=k.g1 * k.bn), "rn")
    b.bind(Val("(rm[:, None] < M) && (rn[None, :] < N)", "bool", (k.bm, k.bn), mag=1, frac=0),
           "mask")
    b.bind(Val("rm[:, None] * N + rn[None, :]", "i32", (k.bm, k.bn), mag=k.m * k.n), "offs")
    for name in ("pid_m", "pid_n", "rm", "rn", "mask", "offs"):
        b.uses[name] = 1  # not worth storing


def other_value(k, dt):
    """The `other=` of a masked load (empty: the default 0)."""
    r = k.rng.random()
    if r < 0.5:
        return ""
    if is_float(dt):
        return ", other=%s" % literal(dt, k.rng.choice([1.0, -0.5, 2.0, -4.0]))
    return ", other=%d" % k.rng.choice([1, 7, 100 if dt != "i8" else -3])


def through_address(k, x, dt):
    """x, or x through its address: as an integer and back, or viewed as bytes first."""
    aux = getattr(k, "aux", None)
    r = aux.random() if aux else 1.0
    if r < 0.1:
        return "((%s as i64) as *%s)" % (x, dt)
    if r < 0.2:
        return "(((%s as u64) + 0) as *u8 as *%s)" % (x, dt)
    return x


def load_block(k, dt):
    """A [BM, BN] block of an [M, N] input, row-major or (transposed) column-major."""
    x, mag = k.input(dt, k.m * k.n)
    x = through_address(k, x, dt)
    offs = "offs" if k.rng.random() < 0.7 else "rn[None, :] * M + rm[:, None]"
    text = "load(%s + %s, mask=mask%s)" % (x, offs, other_value(k, dt))
    return Val(text, dt, (k.bm, k.bn), mag=max(mag, 4.0 if is_float(dt) else 100.0),
               frac=None if is_float(dt) else 0)


def load_vector(k, dt):
    """A row ([BM] of an [M] input), column ([BN] of [N]) or per-program scalar."""
    r = k.rng.random()
    if r < 0.4:
        x, mag = k.input(dt, k.m)
        text, shape = "load(%s + rm, mask=rm < M%s)" % (x, other_value(k, dt)), (k.bm,)
    elif r < 0.8:
        x, mag = k.input(dt, k.n)
        text, shape = "load(%s + rn, mask=rn < N%s)" % (x, other_value(k, dt)), (k.bn,)
    else:
        x, mag = k.input(dt, k.g0 * k.g1)
        text, shape = "load(%s + pid_m * num_programs(1) + pid_n)" % x, ()
    return Val(text, dt, shape, mag=max(mag, 4.0 if is_float(dt) else 100.0),
               frac=None if is_float(dt) else 0)


def scalar_param(k):
    if k.rng.random() < 0.5:
        v = k.rng.choice([0, 1, 3, -7, 100, 12345, -2147483648])
        return Val(k.scalar(k.fresh("s"), "i32", v), "i32", (), mag=abs(v), frac=0)
    v = k.rng.choice([0.375, -1.5, 2.0, 0.0625, -0.75])
    return Val(k.scalar(k.fresh("f"), "f32", v), "f32", (), mag=abs(v), frac=4)


def constant(k):
    dt = k.rng.choice(["f32", "f16", "bf16", "i32", "i8"])
    shape = k.rng.choice([(k.bm, k.bn), (k.bm, 1), (1, k.bn), (k.bn,)])
    dims = "[%s]" % ", ".join(map(str, shape))
    if k.rng.random() < 0.3:
        return Val("zeros(%s, %s)" % (dims, dt), dt, shape, mag=0, frac=0)
    c = k.rng.choice([0.5, -2.25, 3.0]) if is_float(dt) else k.rng.choice([-3, 5, 100])
    return Val("full(%s, %s, %s)" % (dims, literal(dt, c), dt), dt, shape, mag=abs(c), frac=2)


def random_numbers(k):
    seed = k.rng.choice([1, 42, 1234567])
    fn = k.rng.choice(["rand", "randint", "randint"])
    text = "%s(%d, offs)" % (fn, seed)
    if fn == "rand":
        return Val(text, "f32", (k.bm, k.bn), mag=1.0, frac=24)
    return Val(text, "u32", (k.bm, k.bn), mag=INF, frac=0)


def gather(k):
    """Elements at indices computed from an integer tile in scope (wrapped into the buffer):
    addresses with no pattern the compiler can see, or a broken one it must not assume."""
    idx = k.body.pick(lambda v: v.rank >= 1 and (is_int(v.dt) or v.dt == "bool"))
    if idx is None:
        return None
    dt = k.rng.choice(LOAD_TYPES)
    n = k.rng.choice([k.m * k.n, k.m, 7])
    x, mag = k.input(dt, n)
    at = "(((%s as i32) %% %d) + %d) %% %d" % (idx.expr, n, n, n)
    return Val("load(%s + %s)" % (x, at), dt, idx.shape, mag=max(mag, 1.0),
               frac=None if is_float(dt) else 0)


def add_source(k):
    r = k.rng.random()
    if r < 0.45:
        v = load_block(k, k.rng.choice(LOAD_TYPES))
    elif r < 0.7:
        v = load_vector(k, k.rng.choice(LOAD_TYPES))
    elif r < 0.82:
        v = scalar_param(k)
    elif r < 0.93:
        v = constant(k)
    elif r < 0.965:
        v = random_numbers(k)
    else:
        v = gather(k)
    return k.add(v)

