"""A strict CPU stand-in for cupy: numpy arrays wrapped in a type that behaves as cupy's does where
a discipline break would show on a GPU, so such a break fails the tests on a machine without one.

- `np.asarray(a)` (or any numpy function given one) raises, as cupy's `__array__` does: nothing
  may carry a device array to the host implicitly; `asnumpy(a)` / `a.get()` is the explicit way.
- mixing with a numpy array (`a + numpy_array`, `xp.where(c, a, numpy_array)`) raises, as in cupy.
- reductions and indexing give 0-d arrays, not numpy scalars, as cupy's do.
- `bool`, `float`, `int`, `item` and `tolist` of a device array are host synchronizations: allowed
  (cupy allows them) but counted in `SYNCS`, so a test can bound them.

The module's functions are numpy's, wrapped: device arrays in, device arrays out.
"""
from __future__ import annotations

import re

import weakref

import numpy

import strict_cuda_c

SYNCS = [0]
__all__ = ["ndarray", "asarray", "array", "asnumpy", "ElementwiseKernel", "SYNCS", "KERNEL_CALLS"]


def _refuse_host(value):
    raise TypeError(f"Unsupported type {type(value)} (a numpy array mixed with a device array; "
                    "move it with xp.asarray first)")


def _unwrap(value):
    """The numpy data behind device arrays, in nested lists and tuples too; numpy arrays refused."""
    cls = value.__class__
    if cls is ndarray:
        return value._data
    if cls is numpy.ndarray:
        _refuse_host(value)
    if cls in (list, tuple):
        return cls(_unwrap(v) for v in value)
    return value


def _wrap(value):
    """numpy results as device arrays (numpy scalars as 0-d arrays, as cupy gives)."""
    if isinstance(value, (numpy.ndarray, numpy.generic)):
        return ndarray(numpy.asarray(value))
    if value.__class__ in (tuple, list):
        return value.__class__(_wrap(v) for v in value)
    if isinstance(value, tuple):          # numpy.linalg's named results (EighResult, SVDResult)
        return tuple(_wrap(v) for v in value)
    return value


def _sync():
    SYNCS[0] += 1


# id(numpy array) -> (weak references to it and to its device array): a view's `.base` is the device
# array of its base; bases read where none was alive are kept in _BASES
_WRAPPERS: dict = {}
_BASES: list = []


class ndarray:                                     # noqa: N801 -- cupy's name
    """A device array: numpy data that numpy may not see."""
    __slots__ = ("_data", "__weakref__")
    __array_ufunc__ = None                        # numpy's operators defer to ours, which refuse mixing
    __hash__ = None

    def __init__(self, data):
        self._data = data
        if isinstance(data, numpy.ndarray):        # a view's `.base` finds this array (see _WRAPPERS)
            _WRAPPERS[id(data)] = (weakref.ref(data), weakref.ref(self))

    def __array__(self, *args, **kwargs):
        raise TypeError("Implicit conversion to a NumPy array is not allowed. "
                        "Please use `.get()` to construct a NumPy array explicitly.")

    def __array_function__(self, func, types, args, kwargs):
        """numpy functions given device arrays run on the device, as cupy's do (numpy arrays
        among the arguments are refused by _unwrap)."""
        return _function(func)(*args, **kwargs)

    shape = property(lambda self: self._data.shape)
    dtype = property(lambda self: self._data.dtype)
    ndim = property(lambda self: self._data.ndim)
    size = property(lambda self: self._data.size)
    itemsize = property(lambda self: self._data.itemsize)
    nbytes = property(lambda self: self._data.nbytes)
    T = property(lambda self: ndarray(self._data.T))
    flat = property(lambda self: ndarray(self._data.reshape(-1)))

    def get(self):
        _sync()
        return self._data.copy()

    def item(self):
        _sync()
        return self._data.item()

    def tolist(self):
        _sync()
        return self._data.tolist()

    def __bool__(self):
        _sync()
        return bool(self._data)

    def __float__(self):
        _sync()
        return float(self._data)

    def __int__(self):
        _sync()
        return int(self._data)

    def __index__(self):
        _sync()
        return self._data.__index__()

    def __len__(self):
        return len(self._data)

    def __iter__(self):
        return (ndarray(numpy.asarray(row)) for row in self._data)

    def __repr__(self):
        return f"strict_cupy.ndarray({self._data!r})"

    def __getitem__(self, index):
        return _wrap(self._data[_unwrap(index)])

    def __setitem__(self, index, value):
        self._data[_unwrap(index)] = _unwrap(value)

    def __getattr__(self, name):
        """Methods (reshape, sum, astype, ravel, copy, ...): numpy's, on device arrays. numpy's
        own protocols (__array_interface__, ...) are not passed on: numpy must not see the data."""
        if name.startswith("__"):
            raise AttributeError(name)
        if name == "base":                  # cupy's view.base: one array object, the same at every read
            base = self._data.base
            if base is None or not isinstance(base, numpy.ndarray):
                return None
            known = _WRAPPERS.get(id(base))
            wrapped = known[1]() if known is not None and known[0]() is base else None
            if wrapped is None:
                wrapped = _wrap(base)
                _BASES.append(wrapped)              # (kept: no device array of it may be alive)
            return wrapped
        method = getattr(self._data, name)
        if not callable(method):
            return _wrap(method)
        return lambda *args, **kwargs: _wrap(method(*_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()}))


def _operator(name):
    def apply(self, *others):
        return _wrap(getattr(self._data, name)(*(_unwrap(o) for o in others)))
    apply.__name__ = name
    return apply


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor",
              "lshift", "rshift"):
    for _form in (f"__{_name}__", f"__r{_name}__", f"__i{_name}__"):
        setattr(ndarray, _form, _operator(_form))
for _form in ("__neg__", "__pos__", "__abs__", "__invert__", "__lt__", "__le__", "__gt__", "__ge__",
              "__eq__", "__ne__", "__divmod__", "__rdivmod__"):
    setattr(ndarray, _form, _operator(_form))


def asarray(value, dtype=None, **kwargs):
    """Host data (numbers, lists, numpy arrays) onto the device: the one way in."""
    if value.__class__ is ndarray:
        return value if dtype is None or value.dtype == dtype else ndarray(value._data.astype(dtype))
    if value.__class__ in (list, tuple):
        value = _unwrap(value)
    return ndarray(numpy.array(value, dtype=dtype, **kwargs))


def array(value, dtype=None, copy=True, **kwargs):
    """As cupy.array: a copy unless copy=False (asarray never copies a device array)."""
    if value.__class__ is ndarray:
        data = value._data if dtype is None else value._data.astype(dtype)
        return ndarray(data.copy() if copy and data is value._data else data)
    return asarray(value, dtype=dtype, **kwargs)


def asnumpy(value):
    """A device array as a numpy array (an explicit transfer, counted as a synchronization)."""
    if value.__class__ is ndarray:
        _sync()
        return value._data.copy()
    return numpy.asarray(value)


def _function(func):
    def apply(*args, **kwargs):
        return _wrap(func(*_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()}))
    apply.__name__ = getattr(func, "__name__", "function")
    return apply


class _Ufunc:
    """A numpy ufunc on device arrays, with its methods (`add.at`, `maximum.reduce`, ...)."""

    def __init__(self, ufunc):
        self._ufunc = ufunc
        self.__name__ = ufunc.__name__

    def __call__(self, *args, **kwargs):
        """As cupy's: device arrays and numbers only (no foreign objects, which numpy would hand
        to their __array_ufunc__), unless one overrides cupy's elementwise kernels."""
        for arg in args:
            if hasattr(arg, "__cupy_override_elementwise_kernel__"):
                return arg.__cupy_override_elementwise_kernel__(self, *args, **kwargs)
            if arg.__class__ is not ndarray and not isinstance(arg, (int, float, complex, numpy.generic)):
                raise TypeError(f"Unsupported type {type(arg)}")
        return _function(self._ufunc)(*args, **kwargs)

    def __getattr__(self, name):
        method = getattr(self._ufunc, name)
        return _function(method) if callable(method) else method


def __getattr__(name):
    """numpy's functions on device arrays; its constants and dtypes as they are."""
    value = getattr(numpy, name)
    if isinstance(value, numpy.ufunc):
        globals()[name] = _Ufunc(value)
        return globals()[name]
    if isinstance(value, type) or not callable(value):
        return value
    if name in ("errstate", "seterr", "geterr", "dtype", "result_type", "can_cast", "promote_types",
                "broadcast_shapes", "finfo", "iinfo"):
        return value
    wrapped = _function(value)
    globals()[name] = wrapped
    return wrapped


class _Special:
    """cupyx.scipy.special's stand-in: scipy.special's functions on device arrays."""

    def __getattr__(self, name):
        import scipy.special
        return _function(getattr(scipy.special, name))


special = _Special()


class _Linalg:
    """cupy.linalg's stand-in: numpy.linalg's functions on device arrays."""

    def __getattr__(self, name):
        return _function(getattr(numpy.linalg, name))


linalg = _Linalg()


class _Fft:
    """cupy.fft's stand-in: numpy.fft's functions on device arrays."""

    def __getattr__(self, name):
        return _function(getattr(numpy.fft, name))


fft = _Fft()



# cupy.ElementwiseKernel's stand-in: it really runs the kernel's CUDA C (strict_cuda_c.py
# interprets it), so a wrong translation fails on the CPU.
KERNEL_CALLS = [0]


class ElementwiseKernel:
    """As cupy.ElementwiseKernel(in_params, out_params, operation, name, options=...): typed
    parameters ("float64 x, bool c"), one output, called with device arrays (or Python numbers),
    which it broadcasts; returns a new device array. `options`, a tuple of NVRTC's options as
    cupy takes them, must hold --fmad=false: the stand-in rounds every product and every sum
    apart, as numpy does, which a GPU does only under that option (else NVRTC contracts a*b + c
    into one fused multiply-add, rounded once: not numpy's bits), so a kernel compiled without it
    would pass here and differ on the device."""

    def __init__(self, in_params, out_params, operation, name="kernel", *, options=()):
        if not re.fullmatch(r"[A-Za-z_]\w*", name):
            raise ValueError(f"a kernel's name must be a C identifier, not {name!r}")
        if options.__class__ is not tuple or not all(o.__class__ is str for o in options):
            raise TypeError(f"options must be a tuple of str, as cupy's, not {options!r}")
        if "--fmad=false" not in options:
            raise ValueError("a kernel compiled without --fmad=false: NVRTC would contract a*b + c into an FMA "
                             "(one rounding, not numpy's two)")
        self.options = options
        self.inputs = [self._param(p) for p in in_params.split(",")]
        self.outputs = [self._param(p) for p in out_params.split(",")]
        if len(self.outputs) != 1 or self.outputs[0][1] != "out":
            raise NotImplementedError("the stand-in runs kernels with one output named out")
        self.operation = operation

    @staticmethod
    def _param(text):
        words = text.split()
        if len(words) != 2 or numpy.dtype(words[0]).name != words[0]:
            raise ValueError(f"a parameter is a dtype and a name, not {text!r}")
        return numpy.dtype(words[0]), words[1]

    def __call__(self, *args):
        if len(args) != len(self.inputs):
            raise TypeError(f"the kernel takes {len(self.inputs)} inputs, got {len(args)}")
        env = {}
        for (dtype, name), arg in zip(self.inputs, args):
            if arg.__class__ is not ndarray and arg.__class__ not in (int, float, bool):
                raise TypeError(f"Unsupported type {type(arg)}")
            data = _unwrap(arg) if arg.__class__ is ndarray else numpy.asarray(arg, dtype=dtype)
            if data.dtype != dtype:
                raise TypeError(f"{name} is declared {dtype}, given {data.dtype}")
            env[name] = data
        shape = numpy.broadcast_shapes(*(v.shape for v in env.values()))
        KERNEL_CALLS[0] += 1
        with numpy.errstate(all="ignore"):
            value = strict_cuda_c.run_assignment(self.operation, env)
        out = numpy.empty(shape, dtype=self.outputs[0][0])
        out[...] = value
        return ndarray(out)
