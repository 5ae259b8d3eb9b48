"""A numba-stage text loaded as compiled code: ``Compiled``, and the stamp
that keeps Numba's disk cache from pairing it with stale helpers.

The text is written as a real module file (``loader``) whose name holds a
hash of its text and the runtime stamp (``runtime_stamp``), then handed to
``numba.njit(cache=True)``: Numba's on-disk cache serves a second process,
and a changed function (a new text) or helper (a new stamp) can never
reuse stale compiled code.
"""
import functools
import hashlib
import os

import numba
from numba.core import types as nbtypes
from numba.np.numpy_support import as_dtype

from ..python_stage import loader as modules
from . import result_dtypes

__all__ = ["Compiled", "load", "runtime_stamp", "on_disk", "ready_kernels", "NJIT_OPTIONS"]

# Not nogil: releasing and retaking the GIL costs 40-100 ns a call, a fifth
# of a small function's whole call (Newton's sqrt); a caller that runs
# compiled code on threads would compile it with nogil.
NJIT_OPTIONS = {"cache": True}
_WIDE_SCALARS = (nbtypes.float64, nbtypes.int64, nbtypes.complex128, nbtypes.boolean)


@functools.lru_cache(maxsize=None)
def runtime_stamp():
    """A hash of the Numba implementations: part of every numba-stage file
    name, so a changed helper never meets an old on-disk compiled function.
    It hashes every Python file of the numba stage and of ``runtime``
    (walked, so a new module is covered), Numba's version, the compile
    options and the optimisation level."""
    here = os.path.dirname(os.path.abspath(__file__))
    package = os.path.dirname(here)
    digest = hashlib.sha256()
    for top in (here, os.path.join(package, "runtime")):
        for path in sorted(_python_files(top)):
            digest.update(os.path.relpath(path, package).encode())
            with open(path, "rb") as f:
                digest.update(f.read())
    digest.update(numba.__version__.encode())
    # Numba's cache index does not tell apart compile options (nogil ...)
    # nor the optimisation level ($NUMBA_OPT: the test suite compiles at 0)
    digest.update(repr(sorted(NJIT_OPTIONS.items())).encode())
    digest.update(repr(numba.config.OPT).encode())
    return digest.hexdigest()[:12]


def _python_files(top):
    for directory, subdirectories, files in os.walk(top):
        subdirectories[:] = [d for d in subdirectories if d != "__pycache__"]
        for name in files:
            if name.endswith(".py"):
                yield os.path.join(directory, name)


class Compiled:
    """One specialisation: the Numba dispatcher, its plan and its text."""

    def __init__(self, dispatcher, plan, text, path, linemap, origin):
        self.dispatcher = dispatcher
        self.plan = plan
        self.hidden = [value for _, value in plan.hidden]
        self.text = text
        self.path = path
        self.linemap = linemap
        self.origin = origin
        self.name = None        # the function's name in text (Jitted._compile sets it)
        # what the global and closure containers it was built from held
        # (Jitted._compile sets it; see contents.py)
        self.contents = None
        # a narrow signature (weak_scalars)
        self.weak = "weak_scalar" in plan.bound or "weak_number" in plan.bound
        self._casts = None
        # (dispatcher, number of its signatures) checked for silent joins,
        # and the refusal found (join_verdicts.check)
        self.joins_checked = (None, 0)
        self.join_refusal = None
        # results returned with their path's dtype code (result_dtypes):
        # [(flat result, position of its code)], kept when the text is reloaded
        self.tags = []
        self.untagged = None        # the text before it was tagged
        self.cast_results = False   # results cast to their arguments' dtypes (joins)

    def untag(self, values):
        """The flat results without the dtype codes of tagged code, each
        tagged result in its path's dtype (see ``result_dtypes``)."""
        return result_dtypes.untag(values, self.tags, self.plan.bare) if self.tags else values

    def narrow_results(self):
        """Whether a flat result is a narrow number (known once compiled):
        from arithmetic on narrow arguments, or a 0-d float32 argument
        passed through (it enters as its number)."""
        if self._casts is None:
            ret = next(iter(self.dispatcher.overloads.values())).signature.return_type
            flat = [ret] if self.plan.bare else list(getattr(ret, "types", ()))
            if self.tags:       # (a tuple, the codes after the results)
                flat = list(ret.types)[:len(ret.types) - len(self.tags)]
            # (a result that may be None: a value a loop's ``return`` set,
            # fuzz seed 470318 -- a float32 then came back a Python float)
            maybe = {i for i, t in enumerate(flat) if isinstance(t, nbtypes.Optional)}
            flat = [t.type if i in maybe else t for i, t in enumerate(flat)]
            self._casts = {i: _or_none(as_dtype(t).type) if i in maybe else as_dtype(t).type
                           for i, t in enumerate(flat)
                           if isinstance(t, nbtypes.Number) and t not in _WIDE_SCALARS}
        return bool(self._casts)

    def narrow_scalars(self, values):
        """The flat results with narrow scalars (float32, int32 ...) as NumPy
        scalars of their type: Numba hands every float back as a Python
        float, NumPy gives ``np.float32`` for a float32 sum.  The types are
        Numba's return type (the same for every layout compiled here)."""
        if not self.narrow_results():
            return values
        if self.plan.bare:
            return self._casts[0](values)
        return tuple(self._casts[i](v) if i in self._casts else v for i, v in enumerate(values))

    def reload(self, text, load):
        """Take the dispatcher, text and path of ``text`` loaded (``load``:
        a function of the text giving its ``Compiled``)."""
        new = load(text)
        self.dispatcher, self.text, self.path = new.dispatcher, new.text, new.path
        self._casts = None
        self.joins_checked, self.join_refusal = (None, 0), None


def _or_none(cast):
    return lambda v: None if v is None else cast(v)


def load(name, text, linemap, plan, origin=None, nogil=False, rebind=None):
    """The ``Compiled`` of a numba-stage module's text (``nogil``: releasing
    the GIL, in a module of its own name, since Numba's cache index does
    not tell the options apart).  ``rebind``: an object with ``tag`` and
    ``names`` (global name -> object) whose names replace the module's own
    before Numba compiles it (pmap's direct MPI collectives: ``lax``), in a
    module named with ``tag``, so that its disk cache is its own."""
    # The runtime stamp is part of the file's name, not of its text: a
    # changed helper never meets an old on-disk compiled function, and
    # the text stays what a reader (and the gallery) should see.
    kind = "numba_nogil" if nogil else "numba"
    if rebind is not None:
        kind = f"{kind}_{rebind.tag}"
    module, path = modules.load(f"{name}_{kind}_{runtime_stamp()}", text, {}, linemap,
                                importable=True)
    for bound_name, obj in plan.bound.items():
        module.__dict__.setdefault(bound_name, obj)
    if rebind is not None:
        module.__dict__.update(rebind.names)
    options = {**NJIT_OPTIONS, "nogil": True} if nogil else NJIT_OPTIONS
    dispatcher = numba.njit(**options)(getattr(module, name))
    if on_disk(dispatcher):
        ready_kernels(plan.bound, text)
    return Compiled(dispatcher, plan, text, path, linemap, origin)



def ready_kernels(bound, text):
    """Cached code calls the kernels compiled beside it (beside.py) through
    slots: fill those that a numba stage binding ``bound`` and reading
    ``text`` may call (more rather than fewer: one not needed costs a load
    from Numba's disk cache), before Numba loads it."""
    # local import: Numba's overloads and kernels load at the first compile, not at import
    from . import beside, numba_runtime, vmath
    kernels = []
    if numba_runtime.may_call_kernel(bound.values()):
        kernels.append(numba_runtime.MATMUL)
    uses_vmath = any(obj is vmath for obj in bound.values())
    for fn, kernel in vmath.ARRAY_KERNELS.items():
        if any(obj is fn for obj in bound.values()) or \
                uses_vmath and f".{fn.__name__}(" in text:
            kernels.append(kernel)
    for kernel in kernels:
        beside.ready(kernel)


def on_disk(dispatcher):
    """Whether Numba's disk cache may hold compiled code for ``dispatcher``
    (True when Numba's cache layout is not the one known here)."""
    try:
        return os.path.exists(dispatcher._cache._cache_file._index_path)
    except AttributeError:
        return True
