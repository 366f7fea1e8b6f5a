"""tile: call tile kernels from Python on NumPy arrays (CPU and sim backends) and on PyTorch
tensors (CUDA), through libtile.so and ctypes (no compiled extension).

    import numpy as np, tile
    ctx = tile.Context("cpu")
    add = ctx.load("examples/add.tile")["add"]
    add(x, y, out, len(x), BLOCK=512)     # arguments in order, consts by name; grid from @grid

On PyTorch CUDA tensors a kernel launches on PyTorch's current stream of the first tensor's
device and returns without waiting, as a torch operation does (so it orders with torch's work
and can be captured by torch.cuda.graph once it has run before); on NumPy arrays and CPU
tensors it waits for the launch.

Arrays are lent to the library for the launch (tile_borrow) and must be contiguous, non-empty
and in native byte order; their element type must be the parameter's (uint16 arrays stand for
bf16). A read-only NumPy array is passed as a copy, and a kernel that stores to it raises
TileError. Threads may call kernels of one context at once, with the same arrays; close()
waits for their calls, and a module is freed when nothing refers to it. The library is found at
$TILE_LIBRARY, else beside this package when installed (PREFIX/lib/python/tile ->
PREFIX/lib/libtile.so), else as libtile.so.0 on the loader's path.
"""
import contextlib
import ctypes
import numbers
import operator
import os
import threading

__all__ = ["Context", "Module", "Kernel", "TileError", "DeviceAssertionError"]


class TileError(RuntimeError):
    """A failed tile call: the library's status and message."""


class DeviceAssertionError(TileError):
    """A device_assert failed in a launched kernel (TILE_ERROR_ASSERT): the message names its
    file:line:col, program and element. The context stays usable."""


_STATUS_ASSERT = 9


class _Arg(ctypes.Structure):
    class _V(ctypes.Union):
        _fields_ = [("ptr", ctypes.c_uint64), ("i", ctypes.c_int64), ("f", ctypes.c_double)]
    _fields_ = [("kind", ctypes.c_int), ("v", _V)]


class _Const(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("value", ctypes.c_int64)]


class _Param(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("is_pointer", ctypes.c_int),
                ("is_const", ctypes.c_int), ("type", ctypes.c_char_p)]


class _TuneResult(ctypes.Structure):
    _fields_ = [("config", ctypes.c_char_p), ("status", ctypes.c_int), ("ms", ctypes.c_double),
                ("compile_ms", ctypes.c_double), ("reason", ctypes.c_char_p),
                ("cached", ctypes.c_int), ("index", ctypes.c_int),
                ("local_bytes", ctypes.c_int)]


class _TuneReport(ctypes.Structure):
    _fields_ = [("key", ctypes.c_char_p), ("results", ctypes.POINTER(_TuneResult)),
                ("nresults", ctypes.c_int), ("best", ctypes.c_int), ("total", ctypes.c_int),
                ("timed", ctypes.c_int), ("failed", ctypes.c_int), ("pruned", ctypes.c_int),
                ("cached", ctypes.c_int), ("skipped", ctypes.c_int), ("wall_s", ctypes.c_double),
                ("compile_wall_s", ctypes.c_double), ("compile_cpu_s", ctypes.c_double),
                ("timing_s", ctypes.c_double), ("threads", ctypes.c_int)]


_TUNE_STATUS = ["ok", "failed", "pruned", "skipped"]
_BACKENDS = {"auto": 0, "cpu": 1, "cuda": 2, "hip": 3, "sim": 4}
_TUNING = {"auto": 1, "cached": 2, "off": 3}
_ARG_PTR, _ARG_INT, _ARG_FLOAT = 0, 1, 2
_FLOAT_TYPES = frozenset(("f16", "bf16", "f32", "f64", "f8e4m3", "f8e5m2"))
_SIZES = {"bool": 1, "i8": 1, "u8": 1, "i16": 2, "u16": 2, "f16": 2, "bf16": 2, "i32": 4,
          "u32": 4, "f32": 4, "i64": 8, "u64": 8, "f64": 8, "f8e4m3": 1, "f8e5m2": 1}
# NumPy / PyTorch dtype names -> the language's element types
_DTYPES = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16",
           "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8",
           "uint16": "u16", "uint32": "u32", "uint64": "u64", "bool": "bool",
           "float8_e4m3fn": "f8e4m3", "float8_e5m2": "f8e5m2"}

_lib = None
_lib_lock = threading.Lock()


def _library():
    """libtile, loaded and declared once (published only when declared: a thread never sees a
    library whose functions still have ctypes' default int signatures)."""
    global _lib
    if _lib is None:
        with _lib_lock:
            if _lib is not None:
                return _lib
            here = os.path.dirname(os.path.abspath(__file__))
            candidates = [os.environ.get("TILE_LIBRARY"),
                          os.path.join(here, "..", "..", "libtile.so.0"), "libtile.so.0"]
            errors = []
            for c in filter(None, candidates):
                try:
                    lib = ctypes.CDLL(c)
                    _declare(lib)
                except OSError as e:
                    errors.append(str(e))
                except AttributeError as e:  # loaded, but not libtile (or too old)
                    errors.append(f"{c}: not libtile ({e})")
                else:
                    _lib = lib
                    break
            if _lib is None:
                raise TileError("cannot load libtile.so (set TILE_LIBRARY): " + "; ".join(errors))
    return _lib


def _cstr(value, what):
    """A str (or bytes) argument as the C string the library takes: no other type, and no NUL,
    which C would take for the end of the string."""
    if isinstance(value, str):
        value = value.encode()
    elif not isinstance(value, bytes):
        raise TypeError(f"{what} must be a str, not {type(value).__name__}")
    if b"\0" in value:
        raise ValueError(f"{what} contains a NUL character")
    return value


def _text(b):
    """A string of the library as str: its messages may echo bytes of a source or a file name
    that are not UTF-8 (replaced, not raised)."""
    return (b or b"").decode(errors="replace")


_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1
_U64_MAX = (1 << 64) - 1


def _integer(value, what, lo=_I64_MIN, hi=_I64_MAX, range_name="a 64-bit integer"):
    """An integer argument or const in [lo, hi] (int64 unless told): ints, NumPy integers and
    whole floats (as tilec takes them); no strings, no fractions, nothing ctypes would wrap
    silently."""
    if isinstance(value, numbers.Integral):
        v = int(value)
    elif isinstance(value, numbers.Real) and not isinstance(value, (str, bytes)):
        f = float(value)
        if not f.is_integer():
            raise TypeError(f"{what} is an integer, got {value!r}")
        v = int(f)
    else:
        raise TypeError(f"{what} is an integer, got {type(value).__name__}")
    if not lo <= v <= hi:
        raise OverflowError(f"{what} is {v}, out of the range of {range_name}")
    return v


def _real(value, what):
    if not isinstance(value, numbers.Real):
        raise TypeError(f"{what} is a number, got {type(value).__name__}")
    return float(value)


_LogFn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p)


def _declare(lib):
    p, i, c = ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p
    sigs = {"tile_context_open_device": (i, [i, i, ctypes.POINTER(p)]),
            "tile_context_close": (None, [p]),
            "tile_error": (c, [p]), "tile_version": (c, []),
            "tile_module_load_file": (i, [p, c, ctypes.POINTER(p)]),
            "tile_module_load_string": (i, [p, c, c, ctypes.POINTER(p)]),
            "tile_module_free": (None, [p]), "tile_module_num_kernels": (i, [p]),
            "tile_module_kernel_name": (c, [p, i]),
            "tile_kernel_get": (i, [p, c, ctypes.POINTER(p)]),
            "tile_kernel_num_params": (i, [p]),
            "tile_kernel_param": (i, [p, i, ctypes.POINTER(_Param)]),
            "tile_borrow": (i, [p, ctypes.c_uint64, ctypes.c_size_t]),
            "tile_unborrow": (i, [p, ctypes.c_uint64]), "tile_synchronize": (i, [p]),
            "tile_set_stream": (i, [p, p]),
            "tile_launch": (i, [p, ctypes.POINTER(_Arg), i, ctypes.POINTER(_Const), i]),
            "tile_set_tuning": (i, [p, i]), "tile_set_log": (None, [p, _LogFn, p]),
            "tile_backend": (i, [p]),
            "tile_backend_name": (c, [i]), "tile_device_name": (c, [p]),
            "tile_tune": (i, [p, ctypes.POINTER(_Arg), i, ctypes.POINTER(_Const), i, p,
                              ctypes.POINTER(ctypes.POINTER(_TuneReport))])}
    for name, (res, args) in sigs.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args


def version():
    """The version of the libtile in use, e.g. "0.1.0"."""
    return _text(_library().tile_version())


class Context:
    """A device context: backend "auto" (CUDA when an NVIDIA GPU is found, else HIP when an
    AMD one is, else the CPU), "cpu", "cuda", "hip" or "sim", on device number `device`. Close
    it (or use `with`) to free what it holds. `log`: see set_log."""

    def __init__(self, backend="auto", device=0, tuning=None, log=None):
        if backend not in _BACKENDS:
            raise ValueError(f"backend must be one of {sorted(_BACKENDS)}, not {backend!r}")
        device = operator.index(device)
        if not 0 <= device <= 0x7fffffff:
            raise ValueError(f"device must be a device number from 0, not {device}")
        lib = _library()
        self._h = None
        self._cv = threading.Condition(threading.RLock())  # guards the fields below
        self._active = 0     # calls using the handle now: close() waits for them
        self._closing = False  # close() has begun: no new call may start
        self._lent = {}      # address -> [end, calls using it]: ranges lent to the library
        self._sinks = []     # every log callback given to the library: alive while it may call
        h = ctypes.c_void_p()
        if lib.tile_context_open_device(_BACKENDS[backend], device, ctypes.byref(h)) != 0:
            raise TileError(f"cannot open the {backend} backend: "
                            + _text(lib.tile_error(None)))
        self._h = h
        self.device_index = device
        self.backend = _text(lib.tile_backend_name(lib.tile_backend(self._h)))
        self.device = _text(lib.tile_device_name(self._h))
        if tuning is not None:
            self.set_tuning(tuning)
        if log is not None:
            self.set_log(log)

    def set_log(self, log):
        """Sends the library's log to `log`, a callable taking one str, or nowhere (None):
        static_print's notes when a kernel compiles, compile warnings, cache activity. It may
        be called from a thread of the library's; an exception it raises is printed and
        dropped."""
        if log is not None and not callable(log):
            raise TypeError(f"log must be callable or None, not {type(log).__name__}")
        sink = _LogFn(lambda _user, msg: log(_text(msg))) if log is not None else _LogFn()
        with self._using() as h:
            if log is not None:
                self._sinks.append(sink)
            _library().tile_set_log(h, sink, None)

    def set_tuning(self, mode):
        """"auto" (tune unseen keys), "cached" (serving: never time) or "off"."""
        if mode not in _TUNING:
            raise ValueError(f"tuning must be one of {sorted(_TUNING)}, not {mode!r}")
        self._check(_library().tile_set_tuning(self._handle(), _TUNING[mode]))

    def load(self, path):
        """A module from a .tile file (a relative path that names no file here is looked for
        along the import search path, e.g. "attention/flash_fwd.tile")."""
        m = ctypes.c_void_p()
        if not isinstance(path, (str, bytes, os.PathLike)):
            raise TypeError(f"path must be a str or os.PathLike, not {type(path).__name__}")
        path = _cstr(os.fsencode(path), "path")
        with self._using() as h:
            self._check(_library().tile_module_load_file(h, path, ctypes.byref(m)))
            return Module(self, m)

    def load_string(self, source, name="<string>"):
        m = ctypes.c_void_p()
        source, name = _cstr(source, "source"), _cstr(name, "name")
        with self._using() as h:
            self._check(_library().tile_module_load_string(h, name, source, ctypes.byref(m)))
            return Module(self, m)

    def close(self):
        """Frees what the context holds, once calls of other threads on it have returned;
        its modules and kernels raise TileError from then on."""
        cv = getattr(self, "_cv", None)
        if cv is None:
            return
        with cv:
            self._closing = True
            while self._active:
                cv.wait()
            if self._h:
                _library().tile_context_close(self._h)
                self._h = None
                self._lent.clear()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: nothing left to free through
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _handle(self):
        if not self._h:
            raise TileError("the context is closed")
        return self._h

    @contextlib.contextmanager
    def _using(self):
        """`with ctx._using() as handle:` the handle stays open until the block ends."""
        with self._cv:
            if self._closing:
                raise TileError("the context is closed")
            h = self._handle()
            self._active += 1
        try:
            yield h
        finally:
            with self._cv:
                self._active -= 1
                self._cv.notify_all()

    def _lend(self, ranges):
        """Lends merged (address, bytes) ranges for one call; returns the pieces to give back
        with _give_back. Threads may pass the same arrays at once: a piece another call lent
        already is shared (counted), only the parts no call has lent are lent now."""
        lib, pieces = _library(), []
        with self._cv:
            try:
                for a, n in ranges:
                    pos, end = a, a + n
                    for s in sorted(s for s, (e, _) in self._lent.items() if s < end and e > a):
                        if s > pos:
                            self._borrow(lib, pos, s, pieces)
                        self._lent[s][1] += 1
                        pieces.append(s)
                        pos = max(pos, self._lent[s][0])
                    if pos < end:
                        self._borrow(lib, pos, end, pieces)
            except BaseException:
                self._give_back(pieces)
                raise
        return pieces

    def _borrow(self, lib, start, end, pieces):
        self._check(lib.tile_borrow(self._h, start, end - start), "lending an argument: ")
        self._lent[start] = [end, 1]
        pieces.append(start)

    def _give_back(self, pieces):
        with self._cv:
            for s in pieces:
                p = self._lent.get(s)
                if p is None:
                    continue
                p[1] -= 1
                if not p[1]:
                    del self._lent[s]
                    _library().tile_unborrow(self._h, s)

    def _check(self, status, what=""):
        if status != 0:
            msg = _text(_library().tile_error(self._h))
            exc = DeviceAssertionError if status == _STATUS_ASSERT else TileError
            raise exc(f"{what}{msg}" if msg else f"{what}status {status}")


class Module:
    """The kernels of one .tile source: module["name"] or module.kernel("name")."""

    def __init__(self, ctx, handle):
        self.ctx, self._h = ctx, handle
        lib = _library()
        self.kernels = [_text(lib.tile_module_kernel_name(handle, i))
                        for i in range(lib.tile_module_num_kernels(handle))]

    def kernel(self, name):
        k = ctypes.c_void_p()
        cname = _cstr(name, "a kernel name")
        with self.ctx._using():
            self.ctx._check(_library().tile_kernel_get(self._h, cname, ctypes.byref(k)))
            return Kernel(self, name, k)

    def __del__(self):
        """Frees the module once nothing uses it (its kernels hold it), so loading modules in a
        loop does not grow the context; a closed context freed it already."""
        ctx = getattr(self, "ctx", None)
        try:
            with ctx._cv:
                if ctx._h:
                    _library().tile_module_free(self._h)
        except Exception:  # interpreter shutdown
            pass

    __getitem__ = kernel


_ELEM_NAMES = {}  # a torch or NumPy dtype -> the library's element type name


def _elem_name(dtype, text):
    name = _ELEM_NAMES.get(dtype)
    if name is None:
        t = text()
        name = _ELEM_NAMES[dtype] = _DTYPES.get(t, t)
    return name


_KIND_OF_TYPE = {}  # type(x) -> "torch", "numpy" or None (a scalar or anything else)


def _array_kind(x):
    t = type(x)
    kind = _KIND_OF_TYPE.get(t, 0)
    if kind == 0:
        kind = "torch" if hasattr(x, "data_ptr") and hasattr(x, "element_size") else \
            "numpy" if hasattr(x, "__array_interface__") and hasattr(x, "dtype") else None
        _KIND_OF_TYPE[t] = kind
    return kind


def _buffer(x):
    """(address, bytes, element type, where) of an array-like argument, or None; where is
    "cpu" or the GPU tensor's device number (PyTorch calls ROCm's GPUs "cuda" too)."""
    kind = _array_kind(x)
    if kind == "torch":
        if not x.is_contiguous():
            raise TileError("a tensor argument must be contiguous (call .contiguous())")
        dt = x.dtype
        return x.data_ptr(), x.numel() * x.element_size(), \
            _elem_name(dt, lambda: str(dt).replace("torch.", "")), x.get_device() if x.is_cuda else "cpu"
    if kind == "numpy":
        if not hasattr(x, "ctypes"):  # a NumPy scalar (np.float32(1.0)): no memory to lend
            return None
        if not x.flags.c_contiguous:
            raise TileError("an array argument must be C-contiguous (np.ascontiguousarray)")
        dt = x.dtype
        if not dt.isnative:
            raise TypeError(f"an array argument must be in the machine's byte order, not {dt.str} "
                            "(.astype(dtype.newbyteorder('=')))")
        return x.ctypes.data, x.nbytes, _elem_name(dt, lambda: dt.name), "cpu"
    return None


def _torch_stream(args):
    """(whether args hold a CUDA tensor, PyTorch's current CUDA stream on the device of the
    first one as a CUstream address: 0 for the default stream). Without a CUDA tensor the
    launch goes on the default stream and is waited for, as on NumPy arrays."""
    for x in args:
        if _array_kind(x) == "torch" and x.is_cuda:
            import torch
            raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)  # what Triton calls
            if raw is not None:
                return True, raw(x.get_device())
            return True, torch.cuda.current_stream(x.device).cuda_stream
    return False, 0


def _same_bytes(a, b):
    """Whether two C-contiguous arrays of one dtype hold the same bytes (NaNs included)."""
    return a.reshape(-1).view("u1").tobytes() == b.reshape(-1).view("u1").tobytes()


def _merged(ranges):
    """Overlapping or touching (address, bytes) ranges merged: views of one buffer are lent once."""
    out = []
    for a, n in sorted(r for r in ranges if r[1] > 0):
        if out and a <= out[-1][0] + out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], a + n - out[-1][0]))
        else:
            out.append((a, n))
    return out


class Kernel:
    """A kernel: call it with its runtime arguments in order and consts as keyword arguments;
    the grid comes from its @grid."""

    def __init__(self, module, name, handle):
        self.module, self.name, self._h = module, name, handle
        lib, p = _library(), _Param()
        self.params = []
        for i in range(lib.tile_kernel_num_params(handle)):
            module.ctx._check(lib.tile_kernel_param(handle, i, ctypes.byref(p)))
            self.params.append((_text(p.name), bool(p.is_pointer), bool(p.is_const),
                                _text(p.type)))
        self.args = [q for q in self.params if not q[2]]
        self.consts = [q[0] for q in self.params if q[2]] + ["num_warps", "num_stages"]
        self._on_gpu = module.ctx.backend in ("cuda", "hip")

    def _where(self, i):
        return f"argument {i + 1} ('{self.args[i][0]}') of {self.name}"

    def __repr__(self):
        return f"<tile kernel {self.name}({', '.join(q[0] for q in self.args)})>"

    def _check_device(self, i, dev):
        ctx = self.module.ctx
        if (dev != "cpu") != self._on_gpu:
            where = "the CPU" if dev == "cpu" else f"GPU {dev}"
            raise TileError(f"{self._where(i)} lives on {where}, the context's backend is "
                            f"{ctx.backend}")
        if dev != "cpu" and dev != ctx.device_index:
            raise TileError(f"{self._where(i)} lives on GPU {dev}, the context is on GPU "
                            f"{ctx.device_index} (tile.Context(..., device={dev}))")

    def _scalar(self, i, value, ty, a):
        if ty in _FLOAT_TYPES:
            a.kind, a.v.f = _ARG_FLOAT, _real(value, self._where(i))
        elif ty == "u64":  # the library takes a u64's 64 bits as they are (tile_u64)
            v = _integer(value, self._where(i), 0, _U64_MAX, "u64 (0 to 2**64 - 1)")
            a.kind, a.v.i = _ARG_INT, v - (1 << 64) if v > _I64_MAX else v
        else:
            a.kind, a.v.i = _ARG_INT, _integer(value, self._where(i))

    def _convert(self, i, value, lends, cargs, copies):
        """Argument i into cargs[i]; a pointer's (address, bytes) into lends; a read-only
        array's (array, writable copy) into copies."""
        name, is_ptr, _, ty = self.args[i]
        a = cargs[i]
        if not is_ptr and type(value) in (int, float, bool):  # the common scalar: no probing
            self._scalar(i, value, ty, a)
            return
        if not is_ptr and _array_kind(value) == "numpy" and getattr(value, "ndim", 1) == 0:
            value = value.item()  # a NumPy scalar (np.float32(0.5), np.int64(3))
        try:
            buf = _buffer(value)
        except AttributeError as e:  # looks like an array or tensor, but is not one
            want = f"an array or tensor of {ty}" if is_ptr else f"a {ty} scalar"
            raise TypeError(f"{self._where(i)} expects {want}, got {type(value).__name__} "
                            f"({e})") from None
        if is_ptr:
            if buf is None:
                raise TypeError(f"{self._where(i)} expects an array or tensor of {ty}, got "
                                f"{type(value).__name__}")
            addr, nbytes, et, dev = buf
            if et != ty and not (ty == "bf16" and et == "u16") and not (ty.startswith("f8") and et == "u8"):
                raise TypeError(f"{self._where(i)} expects elements of {ty}, got {et}")
            self._check_device(i, dev)
            if not nbytes:
                raise TileError(f"{self._where(i)} is empty: a kernel's array needs an element")
            if _array_kind(value) == "numpy" and not value.flags.writeable:
                # the library cannot tell which arrays a kernel stores to: it gets a copy, and
                # a store to it is an error after the launch (read-only memory would fault)
                copy = value.copy()
                copies.append((i, value, copy))
                addr = copy.ctypes.data
            lends.append((addr, nbytes))
            a.kind, a.v.ptr = _ARG_PTR, addr
            return
        if buf is not None:
            raise TypeError(f"{self._where(i)} is a {ty} scalar, got an array")
        self._scalar(i, value, ty, a)

    def __call__(self, *args, **consts):
        self._run(args, consts, tune=False)

    def tune(self, *args, **consts):
        """Tunes the kernel's @tune space for the key of these arguments (consts given are
        fixed) and stores the choice, as tile_tune does; does not launch the chosen one.
        Returns {"key", "best", "results": [(config, status, ms), ...]} ranked fastest first."""
        return self._run(args, consts, tune=True)

    def _run(self, args, consts, tune):
        if len(args) != len(self.args):
            raise TypeError(f"{self.name} takes {len(self.args)} arguments "
                            f"({', '.join(q[0] for q in self.args)}), got {len(args)}")
        for c in consts:
            if c not in self.consts:
                raise TypeError(f"{self.name} has no const parameter {c!r} "
                                f"(its consts: {', '.join(self.consts)})")
        lends, copies = [], []
        cargs = (_Arg * max(len(args), 1))()
        for i, a in enumerate(args):
            self._convert(i, a, lends, cargs, copies)
        cconsts = (_Const * max(len(consts), 1))(
            *[_Const(k.encode(), _integer(v, f"const {k!r} of {self.name}"))
              for k, v in consts.items()])
        ctx, lib = self.module.ctx, _library()
        with ctx._using() as h:
            lent = ctx._lend(_merged(lends))
            try:
                if tune:
                    return self._tune(ctx, lib, cargs, len(args), cconsts, len(consts))
                on_torch, stream = _torch_stream(args)
                if self._on_gpu:
                    ctx._check(lib.tile_set_stream(h, stream or None), "setting the stream: ")
                ctx._check(lib.tile_launch(self._h, cargs, len(args), cconsts, len(consts)))
                if not on_torch:  # PyTorch's stream orders the launch as it orders its own ops
                    ctx._check(lib.tile_synchronize(h))
            finally:
                ctx._give_back(lent)
        for i, value, copy in copies:
            if not _same_bytes(value, copy):
                raise TileError(f"{self._where(i)} is a read-only array, and {self.name} "
                                "stored to it (its stores were dropped)")

    def _tune(self, ctx, lib, cargs, nargs, cconsts, nconsts):
        # the report stays valid until the module is freed, whatever other threads tune
        rep = ctypes.POINTER(_TuneReport)()
        ctx._check(lib.tile_tune(self._h, cargs, nargs, cconsts, nconsts, None,
                                 ctypes.byref(rep)), f"tuning {self.name}: ")
        r = rep.contents
        rows = [(_text(x.config), _TUNE_STATUS[x.status], x.ms) for x in r.results[:r.nresults]]
        return {"key": _text(r.key), "results": rows,
                "best": rows[r.best][0] if r.best >= 0 else None}
