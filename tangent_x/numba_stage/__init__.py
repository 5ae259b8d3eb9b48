"""``jit``: compile the generated source with Numba.

``jit(f)`` (or ``jit(grad(f))``, ``jit(jvp...)``) takes the python stage
that eager mode runs, specialises it for the call's signature (see
``specialize``: pytrees flattened into leaves, static arguments folded in)
and hands the result, the ``numba`` stage, to ``numba.njit(cache=True)``.
The numba stage is written as a real module file named by a hash of its
text, so Numba's on-disk cache serves a second process, and a changed
function (a new text) can never reuse stale compiled code.

Per call the wrapper only flattens the arguments, looks the signature up
in a dict and rebuilds the result: compiled code does the rest.  A new
static value, pytree structure or array rank specialises again (ranks are
folded in: ``x.ndim`` is a constant of the numba stage); new dtypes and
layouts are Numba's own dispatch (same source, new machine code).

Calls whose arguments are arrays, numbers and plain containers (list,
tuple, dict) of them skip even that: after
such a call the function ``jit`` returned (a plain Python function, see
``Jitted.front``) has as its code a small guard written for that
signature (see ``Jitted._install``), which checks the argument types
and that every global, closure value and attribute the code was built
from is still the same object, then calls the Numba dispatcher directly.
Anything else falls through to the general path.
"""
import ast
import contextlib
import functools
import hashlib
import inspect
import itertools
import numbers
import os
import re
import sys
import threading
import weakref

import numpy as np

from ..api import derivatives as api
from ..python_stage import emit, loader as modules
from .. import tree_util
from ..core.arguments import refuse_masked
from ..errors import Origin, TransformError
from ..core.naming import Namer
from .specialize import (Const, Dyn, Plan, SpecializationError, Specializer, depends_on,
                         static_hint)
from . import disk_cache
from .bounds import OutOfBounds

disk_cache.install()     # before anything is compiled: see disk_cache.py

__all__ = ["jit", "disable_jit", "JitError"]


class JitError(TransformError):
    """Code or arguments that Numba cannot compile (located at the user's line)."""


_STATE = threading.local()
# How many disable_jit() blocks are open in any thread: while one is, no
# jitted function has a fast path (see Jitted._install); the general path
# reads this thread's own setting.
_DISABLING = [0]
_DISABLING_LOCK = threading.Lock()

# Numba's advice to use contiguous arrays is about code the user did not
# write (a generated numba stage); it would only be noise.
import warnings  # noqa: E402
from numba.core.errors import NumbaPerformanceWarning  # noqa: E402

warnings.filterwarnings("ignore", category=NumbaPerformanceWarning,
                        module=r".*_numba_[0-9a-f]{12}_[0-9a-f]{16}")


def _disabled():
    return getattr(_STATE, "disabled", False)


@contextlib.contextmanager
def disable_jit(disable=True):
    """Run jitted functions as their python stage (eager NumPy) inside the
    block: for pdb, prints, or code Numba cannot compile."""
    old = _disabled()
    _STATE.disabled = disable
    with _DISABLING_LOCK:
        _DISABLING[0] += 1
        _uninstall_all()
    try:
        yield
    finally:
        _STATE.disabled = old
        with _DISABLING_LOCK:
            _DISABLING[0] -= 1


def _runtime_stamp():
    """A hash of the Numba implementations: part of every numba-stage file
    name, so a changed helper never meets an old on-disk compiled function."""
    here = os.path.dirname(os.path.abspath(__file__))
    digest = hashlib.sha256()
    for name in ("numba_runtime.py", *sorted(os.path.join("specialize", f) for f in
                                           os.listdir(os.path.join(here, "specialize"))
                                           if f.endswith(".py")), "vmath.py",
                 "fusion.py", "contractions.py", "shape_ops.py", "unit_axes.py",
                 "bounds.py"):
        with open(os.path.join(here, name), "rb") as f:
            digest.update(f.read())
    import numba
    digest.update(numba.__version__.encode())
    # Numba's cache index does not tell apart compile options (nogil ...)
    digest.update(repr(sorted(_NJIT_OPTIONS.items())).encode())
    return digest.hexdigest()[:12]


_STAMP = None
# a Numba typing refusal of a variable holding arrays of two dtypes (Jitted._widened)
_UNIFY_ARRAYS = re.compile(r"Cannot unify array\((\w+), (\d+)d, \w+\) and "
                           r"array\((\w+), (\d+)d, \w+\) for '([A-Za-z_]\w*)\.\d+'")
# weak_scalars' mark of vmap's lanes of a Python number (numba_runtime.WeakLanes)
_WEAK_LANES = re.compile(r"weak_scalar\((broadcast_lanes\([^()]*\))\)")
_MAX_WIDENED = 8          # variables widened, at most, before the refusal stands
# Not nogil: releasing and retaking the GIL costs 40-100 ns a call, a fifth
# of a small function's whole call (Newton's sqrt); a caller that runs
# compiled code on threads would compile it with nogil.
_NJIT_OPTIONS = {"cache": True}


def _identity(out, args):
    return out


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
        self.weak = "weak_scalar" in plan.bound      # a narrow signature (weak_scalars)
        self._casts = None

    def narrow_results(self):
        """Whether a flat result is a narrow number (known once compiled):
        from arithmetic on narrow arguments, or a 0-d float32 argument
        passed through (it enters as its number)."""
        if self._casts is None:
            ret = next(iter(self.dispatcher.overloads.values())).signature.return_type
            flat = [ret] if self.plan.bare else list(getattr(ret, "types", ()))
            self._casts = {i: as_dtype(t).type for i, t in enumerate(flat)
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


class Jitted:
    """A function compiled by Numba per call signature (see the module doc).

    Every instance has a class of its own, so that its ``__call__`` can be
    the fast path of the last signature it was called with (``_install``):
    the interpreter then calls that guard directly, with no dispatching
    method in between."""

    def __new__(cls, *args, **kwargs):
        own = type(cls.__name__, (cls,), {"__module__": cls.__module__,
                                          "__qualname__": cls.__qualname__})
        return super().__new__(own)

    def __init__(self, fun, static_argnums=(), static_argnames=()):
        functools.update_wrapper(self, fun, updated=())
        if jitted_of(fun) is not None:
            fun = jitted_of(fun)._fun
        self._fun = fun
        if isinstance(static_argnums, numbers.Integral):
            static_argnums = (static_argnums,)
        if isinstance(static_argnames, str):
            static_argnames = (static_argnames,)
        self._static_argnums = tuple(int(i) for i in static_argnums)
        self._static_argnames = tuple(static_argnames)
        if isinstance(fun, api.Transformed):
            self._inner = fun
        else:
            self._inner = api._cached(fun, "python", (), _identity)
        if self._inner._kind == "vjp_split":
            raise TypeError("jit of a vjp's forward function is not supported; jit the "
                            "function, or use jit(vjp-of-f) via tx.vjp inside jit")
        self._cache = {}
        self._last = None
        self._call_site = api._call_site()

    @property
    def __tangent_x__(self):
        """Transforms of a jitted function transform its python stage:
        ``grad(jit(f))`` is ``grad`` of ``f``'s source."""
        return self._inner

    def __repr__(self):
        return f"<tangent_x jit of {getattr(self._fun, '__qualname__', self._fun)}>"

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)

    # -- calling ------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        """The general path: bind, flatten, look the signature up, compile
        if new, run, rebuild.  (An instance's own class may override this
        with the fast path of one signature; see ``_install``.)"""
        inner = self._inner
        refuse_masked("jit", self._fun, args, kwargs)
        if _disabled():
            return inner(*args, **kwargs)
        inner._specialize_inner(args)      # jit(vmap(f)): vmap's code for these arguments
        generated = inner.generated
        bound = self._bind(generated, args, kwargs)
        try:
            key, leaves, _ = self._signature(generated, bound, full=False)
        except JitError:           # again, for the error's argument path
            self._signature(generated, bound)
            raise
        entry = self._cache.get(key)
        if entry is not None and entry[1].contents and not entry[1].contents.held():
            entry = None       # a container it folded in changed in place: compile again
        if entry is None or entry[0] is not generated or kwargs:
            # input checks (float inputs for grad ...) depend only on the key
            api._check_inputs(inner._kind, inner._fun, args, inner.checked_argnums())
            if entry is None or entry[0] is not generated:
                key, leaves, avs = self._signature(generated, bound)
                compiled = self._compile(generated, avs, key)
                self._cache[key] = (generated, compiled)
            else:
                compiled = entry[1]
        else:
            compiled = entry[1]
        self._last = compiled
        values = self._run(compiled, leaves, (args, kwargs))
        result = self._finish(compiled, values, args, leaves)
        self._install(generated, compiled, key, args, kwargs, values)
        return result

    def _finish(self, compiled, values, args, leaves):
        """The result from the compiled function's flat values."""
        if compiled.weak or compiled.narrow_results():
            values = compiled.narrow_scalars(values)
        if compiled.plan.bare:
            values = (values,)
        inner = self._inner
        out = compiled.plan.unflatten(values)
        single = getattr(inner, "_single", None)
        if single is None or compiled.plan.has_zeros:
            return inner._finish(out, args)
        return _finish_grads(inner, single, out, args, leaves, values)

    def _run(self, compiled, leaves, call=None):
        """The compiled function's flat results (``call``: the arguments
        and keyword arguments of the call, for ``_failed``)."""
        for _ in range(_MAX_WIDENED + 1):
            dispatcher = compiled.dispatcher
            known = len(dispatcher.overloads)
            try:
                return dispatcher(*leaves, *compiled.hidden)
            except Exception as exc:
                if self._widened(exc, compiled):
                    continue
                self._failed(exc, compiled, leaves, known, call)

    def _widened(self, exc, compiled):
        """A variable whose arrays have two dtypes (``acc = x`` float32, then
        ``acc = acc * 0.7 + c`` with a float64 ``c`` in a loop: NumPy changes
        the array's dtype as the loop runs) is refused by Numba's typing.
        Its assignments are then cast to the common dtype (``widen_dtype``)
        and ``compiled`` (changed in place) compiles again: Numba types a
        variable once, so the wider dtype is the one that holds every
        value (and the one NumPy ends with once the widening line has
        run).  Returns whether it did."""
        import numba.core.errors as nerr
        if not isinstance(exc, nerr.TypingError) or getattr(compiled, "name", None) is None:
            return False
        message = re.sub(r"\x1b\[[0-9;]*m", "", str(exc))
        match = _UNIFY_ARRAYS.search(message)
        if match is None:
            return False
        if _WEAK_LANES.search(compiled.text):
            # first without the lanes of Python numbers typed as weak (a
            # carry read where its two types meet in one temporary): the
            # code as typed before they were
            text = _WEAK_LANES.sub(r"\1", compiled.text)
            new = self._load(compiled.name, text, compiled.linemap, compiled.plan)
            compiled.dispatcher, compiled.text, compiled.path = new.dispatcher, new.text, new.path
            compiled._casts = None
            return True
        a, ndim_a, b, ndim_b, var = match.groups()
        if ndim_a != ndim_b:
            return False
        try:
            dtype = np.promote_types(np.dtype(a), np.dtype(b))
        except TypeError:
            return False
        if dtype.kind not in "biufc":
            return False
        lines = compiled.text.split("\n")
        pattern = re.compile(rf"^(\s*){re.escape(var)} = (.+)$")
        changed = False
        for i, line in enumerate(lines):
            m = pattern.match(line)
            if m is None or m.group(2).startswith("widen_dtype("):
                continue
            try:
                ast.parse(m.group(2), mode="eval")
            except SyntaxError:
                continue
            lines[i] = f"{m.group(1)}{var} = widen_dtype({m.group(2)}, _tx_np.{dtype.name})"
            changed = True
        if not changed:
            return False
        # the imports go on the first import's line, so line numbers (the
        # line map) stay
        first = next(i for i, line in enumerate(lines) if line.startswith(("import ", "from ")))
        lines[first] += "; import numpy as _tx_np; " \
            "from tangent_x.numba_stage.numba_runtime import widen_dtype"
        new = self._load(compiled.name, "\n".join(lines), compiled.linemap, compiled.plan)
        compiled.dispatcher, compiled.text, compiled.path = new.dispatcher, new.text, new.path
        compiled._casts = None
        return True

    def _failed(self, exc, compiled, leaves, known, call=None):
        """Raise what a failed compiled call raised: a Numba compile failure
        as a located error, anything else annotated with the user's line.
        An index out of range (bounds.OutOfBounds, whose message compiled
        code keeps constant to stay fast) is raised by running the call
        eagerly: NumPy's own IndexError, naming the index, the axis size
        and the user's line (``call``: the call's arguments and keyword
        arguments)."""
        if isinstance(exc, OutOfBounds) and call is not None:
            try:
                self._inner(*call[0], **call[1])
            except IndexError as eager:
                raise eager from None
            except Exception:
                pass
        import numba.core.errors as nerr
        if isinstance(exc, nerr.NumbaError) or (
                len(compiled.dispatcher.overloads) == known and isinstance(
                    exc, (AssertionError, NotImplementedError, KeyError, AttributeError))):
            raise _translate(exc, compiled, leaves) from None
        modules.annotate(exc)
        raise exc

    # -- the fast path --------------------------------------------------------

    def _install(self, generated, compiled, key, args, kwargs, values):
        """Make ``__call__`` (and the code of the function ``jit`` returned,
        see ``front``) the fast path of this call's signature, when
        every argument is an array or a number, or a list, tuple or dict of
        them (``_plain_tree``: read by index, ``_guard_tree``), and every
        parameter is given (nothing to bind, default or fold in); otherwise
        go back to the general path.

        The fast path (``_entry``) is a function written for the signature:
        it checks each argument's type (and an array's dtype, on which
        grad's input checks depend, and rank, which is part of the
        signature: ``x.ndim`` is folded in; layouts are Numba's own
        dispatch, which compiles the same text again) and that every global, closure
        cell and attribute the code was built from still holds the object
        it held (the check ``api.Transformed.generated`` makes before
        reusing code: a rebound value is never run stale).  Then it calls
        the Numba dispatcher and rebuilds the result; any other call takes
        the general path.  No fast path is installed while a
        ``disable_jit`` block is open in any thread, and opening one removes
        them all (``_uninstall_all``), so the fast path need not ask."""
        fast = getattr(self, "_fast", None)
        # (a subclass with a call path of its own, jit(vmap)'s, keeps it)
        eligible = (type(self).__mro__[1].__call__ is Jitted.__call__ and
                    not kwargs and fast is not None and fast[0] is generated and
                    len(args) == len(fast[1]) and
                    not any(static or name.startswith("_tx_") for name, static in fast[1])
                    and getattr(getattr(self._inner._fun, "__tangent_x__", None),
                                "specialize", None) is None and
                    all(_plain_tree(a) for a in args) and
                    # code specialised on size-1 axes (np.squeeze without
                    # axis, see unit_axes) needs the general path's key
                    not self._units_of[1])
        if eligible:
            entries = self.__dict__.setdefault("_entries", {})
            entry = entries.get(key)
            if entry is None or entry[0] is not compiled:
                names = [name for name, _ in fast[1]]
                entry = (compiled, *self._entry(generated, compiled, names, args, values))
                entries[key] = entry
        with _DISABLING_LOCK:
            own = type(self)
            if eligible and not _DISABLING[0]:
                if own.__dict__.get("__call__") is not entry[1]:
                    own.__call__ = entry[1]
                    _INSTALLED.add(self)
                front = self.__dict__.get("_front")
                if front is not None and front.__code__ is not entry[2]:
                    # (a call running the old code meanwhile binds its
                    # arguments as either code would: same parameters)
                    front.__defaults__ = entry[3]
                    front.__code__ = entry[2]
                    _INSTALLED.add(self)
            else:
                self._uninstall()

    def _uninstall(self):
        own = type(self)
        if "__call__" in own.__dict__:
            del own.__call__              # back to Jitted.__call__
        front = self.__dict__.get("_front")
        if front is not None:
            front.__code__ = self._general_code    # back to the general path
        _INSTALLED.discard(self)

    # -- what jit() returns ---------------------------------------------------

    def front(self):
        """The function ``jit`` returns: a plain Python function whose code
        is the general path (a call of ``Jitted.__call__``) or, once
        ``_install`` has run, the fast path of one signature, swapped in as
        its ``__code__``.  Why a function and not this instance: calling an
        instance of a Python class goes through its type's ``__call__``
        slot (an argument tuple built, the method looked up, called with
        the tuple), ~35 ns more than calling a function, which on a
        200 ns compiled call (Newton's sqrt) is a sixth of the time.

        The function shares this instance's ``__dict__`` (``_cache``,
        ``_last``, ``__wrapped__`` ...) and carries ``numba_source``,
        ``__tangent_x__`` (so ``grad(jit(f))`` transforms ``f``) and
        ``_tx_self`` (this instance: ``jitted_of``).  The fast paths' global
        names are prefixed per signature in its globals, which a function
        cannot swap."""
        front = self.__dict__.get("_front")
        if front is not None:
            return front
        fname = getattr(self._fun, "__name__", "")
        if not fname.isidentifier() or fname.startswith("_tx_"):
            fname = "jitted"
        # (``__name__``: the frame is tangent_x's, not the user's call site)
        env = {"_tx_call": functools.partial(Jitted.__call__, self), "__name__": __name__}
        exec(compile(f"def {fname}(*args, **kwargs):\n    return _tx_call(*args, **kwargs)\n",
                     f"<tangent_x jit of {self._name()}>", "exec"), env)
        front = env.pop(fname)
        for attr in ("__module__", "__name__", "__qualname__", "__doc__"):
            value = getattr(self._fun, attr, None)
            if isinstance(value, str) or (attr == "__doc__" and value is None):
                setattr(front, attr, value)
        state = self.__dict__
        state["_general_code"] = front.__code__
        state["_tx_self"] = self
        state["__tangent_x__"] = self._inner
        state["numba_source"] = self.numba_source
        front.__dict__ = state
        state["_front"] = front
        return front

    def _entry(self, generated, compiled, names, args, values):
        """The fast path's function (see ``_install``): Python source written
        for one signature, because on a call that costs a few hundred
        nanoseconds in all, each generic step (a loop over the arguments, a
        dict lookup, even a ``**kwargs`` dict) would cost more than the
        compiled code.  Its parameters are the function's own, so keyword
        arguments bind as they would; their default marks one not passed,
        which the general path then reports as any call would."""
        env = {"_tx_dispatcher": compiled.dispatcher,
               "_tx_general": functools.partial(_general_call, self, names),
               "_tx_failed": functools.partial(self._failed, compiled=compiled,
                                               known=len(compiled.dispatcher.overloads)),
               "_tx_missing": _MISSING, "_tx_attribute_holds": _attribute_holds,
               "_tx_cell_holds": _cell_holds}
        checks, guards, leaves = [], [], []
        for name, value in zip(names, args):
            _guard_tree(name, value, env, checks, guards, leaves)
        holders, seen = {}, set()
        for j, (kind, holder, attr, value) in enumerate(generated.deps):
            if (kind, id(holder), attr, id(value)) in seen:
                continue
            seen.add((kind, id(holder), attr, id(value)))
            env[f"_tx_v{j}"] = value
            if kind == "global":
                h = holders.setdefault(id(holder), f"_tx_g{len(holders)}")
                env[h] = holder
                checks.append(f"{h}.get({attr!r}, _tx_missing) is _tx_v{j}")
            elif kind == "cell":
                env[f"_tx_c{j}"] = holder
                checks.append(f"_tx_cell_holds(_tx_c{j}, _tx_v{j})")
            else:
                env[f"_tx_o{j}"] = holder
                checks.append(f"_tx_attribute_holds(_tx_o{j}, {attr!r}, _tx_v{j})")
        if compiled.contents:
            env["_tx_contents"] = compiled.contents
            checks.append("_tx_contents.held()")
        hidden = []
        for k, value in enumerate(compiled.hidden):
            env[f"_tx_h{k}"] = value
            hidden.append(f"_tx_h{k}")
        given = ", ".join(names)
        packed = f"({given}{',' if names else ''})"
        flat = f"({', '.join(leaves)}{',' if leaves else ''})"
        result = self._fast_result(compiled, args, values, env, packed, flat)
        fname = getattr(self._fun, "__name__", "")
        if not fname.isidentifier() or fname in env or fname in names:
            fname = "jitted"
        # a container argument: its structure checked, then its leaves bound
        # to locals, level by level (each check guards the reads after it)
        lines = [f"def {fname}({', '.join(f'{n}=_tx_missing' for n in names)}):"]
        for test, binds in guards:
            lines.append(f"    if not ({test}):")
            lines.append(f"        return _tx_general({given})")
            lines += [f"    {bind}" for bind in binds]
        lines += [
            f"    if {' and '.join(checks or ['True'])}:",
            "        try:",
            f"            _tx_values = _tx_dispatcher({', '.join(leaves + hidden)})",
            "        except Exception as _tx_exc:",
            f"            _tx_failed(_tx_exc, leaves={flat}, call=({packed}, {{}}))",
            f"        return {result}",
            f"    return _tx_general({given})",
            ""]
        text = "\n".join(lines)
        code = compile(text, f"<tangent_x jit fast path of {self._name()}>", "exec")
        exec(code, env)
        function = env[fname]
        function.source = text       # for reading: type(jitted).__call__.source
        front = self.__dict__.get("_front")
        if front is None:
            return staticmethod(function), None, None
        # the same code for the front (see ``front``), its globals prefixed
        prefix = f"_tx_{next(_FRONT_CODES)}_"  # new names: code running never sees them change
        renamed = {prefix + k[len("_tx_"):]: v for k, v in env.items() if k.startswith("_tx_")}
        front.__globals__.update(renamed)
        text = re.sub(r"\b_tx_", prefix, text)
        scratch = dict(renamed)
        exec(compile(text, f"<tangent_x jit fast path of {self._name()}>", "exec"), scratch)
        made = scratch[fname]
        front.source = text          # for reading: jitted.source
        return staticmethod(function), made.__code__, made.__defaults__

    def _fast_result(self, compiled, args, values, env, packed, flat):
        """The expression of the fast path's result.  The structure is
        rebuilt inline; a gradient is returned as computed where the general
        path's finishing (cast to the argument's type, copy what shares
        memory) would give it back unchanged: every argument a Python float
        or int (no array to share memory with; Numba's types, fixed by the
        argument types, give float gradients and a float value, as this
        call showed).  Otherwise the general finishing runs."""
        plan, inner = compiled.plan, self._inner
        if compiled.weak or compiled.narrow_results():
            # narrow scalars are cast back (see Compiled.narrow_scalars)
            env["_tx_finish"] = functools.partial(self._finish, compiled)
            return f"_tx_finish(_tx_values, {packed}, {flat})"
        direct = inner._finish is _identity
        if not direct and getattr(inner, "_single", None) is not None and \
                not plan.has_zeros and not inner._has_aux and \
                all(type(a) in (float, int) for a in args):
            flat = (values,) if plan.bare else values
            direct = all(type(v) is float for v in flat) and \
                all(type(args[i]) is float for i in inner._argnums)
        rebuilt = _rebuild_text(plan.out, "_tx_values" if plan.bare else None, env)
        if direct:
            return rebuilt
        if getattr(inner, "_single", None) is not None and not plan.has_zeros:
            # the general finishing of gradients, less its pytree walks
            # when every argument is a leaf (then _fill is _cast_like)
            every_leaf = all(_plain_leaf(a) for a in args)
            env["_tx_finish_grads"] = functools.partial(
                _finish_grads, inner, inner._single,
                fill=_cast_leaf if every_leaf else api._fill)
            out = "(_tx_values,)" if plan.bare else "_tx_values"
            return f"_tx_finish_grads({rebuilt}, {packed}, {flat}, {out})"
        env["_tx_finish"] = functools.partial(self._finish, compiled)
        return f"_tx_finish(_tx_values, {packed}, {flat})"

    def _bind(self, generated, args, kwargs):
        """{parameter: (value, static?)} for the generated function."""
        fast = getattr(self, "_fast", None)     # (generated, [(name, static)])
        if fast is not None and fast[0] is generated and not kwargs and \
                len(args) == len(fast[1]):
            return {name: (value, static) for (name, static), value in zip(fast[1], args)}
        function = generated.function
        try:
            signature = inspect.signature(function)
            bound = signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"{getattr(self._fun, '__name__', 'f')}(): {exc}") from None
        names = list(signature.parameters)
        statics = {names[i] for i in self._static_argnums if -len(names) <= i < len(names)}
        statics |= set(self._static_argnames)
        out = {}
        for name, param in signature.parameters.items():
            if name in bound.arguments:
                value = bound.arguments[name]
                if param.kind == param.VAR_POSITIONAL:
                    value = tuple(value)
                elif param.kind == param.VAR_KEYWORD:
                    value = dict(value)
                out[name] = (value, name in statics)
            elif param.default is not param.empty:
                out[name] = (param.default, True)
            elif param.kind == param.VAR_POSITIONAL:
                out[name] = ((), True)
            elif param.kind == param.VAR_KEYWORD:
                out[name] = ({}, True)
        simple = all(p.kind == p.POSITIONAL_OR_KEYWORD for p in signature.parameters.values())
        if simple and not kwargs and len(args) == len(names):
            self._fast = (generated, [(n, n in statics) for n in names])
        return out

    def _signature(self, generated, bound, full=True):
        """(cache key, flat leaves, abstract arguments).  ``full`` False:
        the key and leaves only (abstract arguments None), without naming
        leaves for the specialiser: a call whose key is cached needs no
        more (a pytree of six leaves: 16 -> 6 us)."""
        key, leaves, avs = [], [], []
        self._full = full
        if full:
            self._names = Namer()
            self._ranks = {}
        if getattr(self, "_units_of", (None,))[0] is not generated:
            from .unit_axes import needs_unit_axes
            tree = ast.parse(generated.text)
            self._units_of = (generated, needs_unit_axes(tree))
        # size-1 axes: part of the signature only for code that needs them
        units = {} if self._units_of[1] else None
        if full:
            self._units = units
        for name, (value, static) in bound.items():
            if static:
                try:
                    hash(value)
                except TypeError:
                    raise JitError(
                        f"static argument '{name}' of {self._name()} is a "
                        f"{type(value).__name__}, which is not hashable",
                        _caller(), "pass a hashable value (a tuple instead of a list, "
                        "a frozen mapping instead of a dict), or do not mark it static"
                    ) from None
                key.append(("static", name, type(value), value))
                avs.append(Const(value))
            else:
                av, k = self._flatten(value, name, leaves, name)
                key.append(k)
                avs.append(av)
        if full:
            from .weak_scalars import needs_weak_scalars
            self._weak = needs_weak_scalars(leaves)     # (dtypes are in the key)
        return tuple(key), leaves, (avs if full else None)

    def _flatten(self, value, path, leaves, hint):
        if isinstance(value, dict):
            items, keys = {}, []
            for k, v in value.items():
                if not isinstance(k, (str, int)):
                    raise self._bad_leaf(path, k, "has a key of type " + type(k).__name__)
                av, sub = self._flatten(v, f"{path}[{k!r}]" if self._full else None, leaves,
                                        f"{hint}_{k}" if self._full else None)
                items[k] = av
                keys.append((k, sub))
            return items, (type(value), tuple(keys))
        if isinstance(value, (list, tuple)):
            items, keys = [], []
            for i, v in enumerate(value):
                av, sub = self._flatten(v, f"{path}[{i}]" if self._full else None, leaves,
                                        f"{hint}_{i}" if self._full else None)
                items.append(av)
                keys.append(sub)
            if hasattr(type(value), "_fields"):
                return type(value)(*items), (type(value), tuple(keys))
            return type(value)(items), (type(value), tuple(keys))
        if value is None:
            return Const(None), None
        if isinstance(value, np.ndarray):
            if value.dtype.kind not in "biufc":
                raise self._bad_leaf(path, value, f"is an array of dtype {value.dtype}")
            if not value.dtype.isnative:
                # Numba types native byte order only: a big-endian array
                # enters as its native copy (NumPy's arithmetic on it gives
                # native results too; the argument is never written)
                value = value.astype(value.dtype.newbyteorder("="))
            # a 0-d array enters as the number it holds (its dtype kept): NumPy's
            # arithmetic gives numbers from 0-d arrays, so a path that computes
            # and a path that passes the argument on then agree in type
            leaves.append(value[()] if value.ndim == 0 else value)
            units = None
            if self._units_of[1]:
                from .unit_axes import of_value
                units = of_value(value)
            if self._full:
                name = self._leaf_name(hint)
                self._ranks[name] = value.ndim        # the specialiser folds x.ndim
                if units is not None:
                    self._units[name] = units
            av = Dyn(name) if self._full else None
            if units is not None:
                return av, (value.dtype.char, value.ndim, units)
            return av, (value.dtype.char, value.ndim)
        if isinstance(value, (bool, numbers.Number, np.generic)) and not isinstance(value, str):
            if isinstance(value, np.generic) and value.dtype.kind not in "biufc":
                raise self._bad_leaf(path, value, f"has dtype {value.dtype}")
            leaves.append(value)
            if not self._full:
                return None, type(value)
            name = self._leaf_name(hint)
            if self._units is not None:
                self._units[name] = ()
            return Dyn(name), type(value)
        raise self._bad_leaf(path, value, f"is a {type(value).__name__}")

    def _leaf_name(self, hint):
        return self._names.fresh(str(hint) or "leaf")

    def _bad_leaf(self, path, value, what):
        return JitError(
            f"{self._name()}: argument {path} {what} ({_short(value)}); compiled code "
            "takes arrays, numbers and containers (dict, list, tuple, namedtuple) of them",
            _caller(), "mark it static (static_argnums=/static_argnames=), flatten it, "
            "or run without jit (tx.disable_jit())")

    def _name(self):
        return f"jit({getattr(self._fun, '__name__', 'f')})"

    # -- compiling ----------------------------------------------------------

    def _compile(self, generated, avs, key):
        text, linemap, plan, name = numba_stage(generated, avs, self._call_site, self._ranks,
                                                self._units, self._weak)
        compiled = self._load(name, text, linemap, plan, generated.canonical.origin)
        compiled.name = name
        from .contents import Contents
        compiled.contents = Contents(value for name, value in generated.module.__dict__.items()
                                     if not name.startswith("__"))    # not __builtins__
        return compiled

    def _load(self, name, text, linemap, plan, origin=None):
        """The ``Compiled`` of a numba-stage module's text."""
        # The runtime stamp is part of the file's name, not of its text: a
        # changed helper never meets an old on-disk compiled function, and
        # the text stays what a reader (and the gallery) should see.
        module, path = modules.load(f"{name}_numba_{_STAMP}", text, {}, linemap,
                                    importable=True)
        for bound_name, obj in plan.bound.items():
            module.__dict__.setdefault(bound_name, obj)
        import numba
        dispatcher = numba.njit(**_NJIT_OPTIONS)(getattr(module, name))
        if _on_disk(dispatcher):
            # cached code calls the kernels through slots: fill them first
            from . import beside
            for kernel in _kernels_called(plan.bound, text):
                beside.ready(kernel)
        return Compiled(dispatcher, plan, text, path, linemap, origin)

    # -- inspection ---------------------------------------------------------

    def numba_source(self, *args, **kwargs):
        """The numba-stage source: for ``args`` if given, else of the most
        recent call, else generic (every argument one array or number)."""
        generated = self._inner.generated
        if args or kwargs:
            bound = self._bind(generated, args, kwargs)
            _, _, avs = self._signature(generated, bound)
            ranks, units, weak = self._ranks, self._units, self._weak
        elif self._last is not None:
            return self._last.text
        else:
            avs, ranks, units = generic_arguments(generated.function), None, None
            weak = False
        return numba_stage(generated, avs, self._call_site, ranks, units, weak)[0]


_MISSING = object()
from numba.core.runtime._nrt_python import _MemInfo as _MEMINFO  # noqa: E402
from numba.core import types as nbtypes  # noqa: E402
from numba.np.numpy_support import as_dtype  # noqa: E402
_WIDE_SCALARS = (nbtypes.float64, nbtypes.int64, nbtypes.complex128, nbtypes.boolean)
_INSTALLED = weakref.WeakSet()      # jitted functions whose fast path is installed
_FRONT_CODES = itertools.count()    # numbers the fast paths' names in a front's globals


def _uninstall_all():
    """Every jitted function back to its general path (under the lock)."""
    for jitted in list(_INSTALLED):
        jitted._uninstall()


def _general_call(jitted, names, *values):
    """The general path called from a fast path that stepped aside: the
    parameters given, by position up to the first one not given, by name
    after it."""
    args, kwargs = [], {}
    for name, value in zip(names, values):
        if value is _MISSING:
            continue
        if kwargs or len(args) < names.index(name):
            kwargs[name] = value
        else:
            args.append(value)
    return Jitted.__call__(jitted, *args, **kwargs)


def _plain_tree(value):
    """An argument the fast path takes: a plain leaf, or a list, tuple or
    dict (of string or int keys) of them, nested (not a namedtuple or a
    registered node: the general path rebuilds those)."""
    if type(value) in (list, tuple):
        return all(_plain_tree(v) for v in value)
    if type(value) is dict:
        return all(type(k) in (str, int) and _plain_tree(v) for k, v in value.items())
    return _plain_leaf(value)


def _guard_tree(expr, value, env, checks, guards, leaves):
    """The fast path's checks for the argument ``expr`` shaped as ``value``
    (see ``_plain_tree``), in the general path's flattening order: a
    container's type, length and (a dict's) keys in order go in ``guards``
    with the statements binding its items to locals; a leaf's type, dtype
    and rank go in ``checks``, its local in ``leaves``.  Together they hold
    exactly when the general path would make the key this call made."""
    n = len(env)
    if type(value) in (list, tuple, dict):
        env[f"_tx_t{n}"] = type(value)
        test = f"type({expr}) is _tx_t{n} and len({expr}) == {len(value)}"
        if type(value) is dict:
            env[f"_tx_k{n}"] = list(value)
            test += f" and list({expr}) == _tx_k{n}"
            items = [(f"{expr}[{k!r}]", v) for k, v in value.items()]
        else:
            items = [(f"{expr}[{i}]", v) for i, v in enumerate(value)]
        binds, local = [], []
        for j, (item, v) in enumerate(items):
            name = f"_tx_a{n}_{j}"
            binds.append(f"{name} = {item}")
            local.append((name, v))
        guards.append((test, binds))
        for name, v in local:
            _guard_tree(name, v, env, checks, guards, leaves)
        return
    env[f"_tx_t{n}"] = type(value)
    checks.append(f"type({expr}) is _tx_t{n}")
    if isinstance(value, np.ndarray):
        env[f"_tx_d{n}"] = value.dtype
        checks.append(f"{expr}.dtype is _tx_d{n}")
        checks.append(f"{expr}.ndim == {value.ndim}")     # ranks are in the key
        if value.ndim == 0:           # as the general path: the number it holds
            expr = f"{expr}[()]"
    leaves.append(expr)


def _plain_leaf(value):
    """An argument the fast path takes as it is: an array or a number of a
    type the compiled code accepts."""
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "biufc" and value.dtype.isnative
    if type(value) in (float, int, bool, complex):
        return True
    return isinstance(value, np.generic) and value.dtype.kind in "biufc"


def _cell_holds(cell, value):
    try:
        return cell.cell_contents is value
    except ValueError:       # emptied
        return False


def _attribute_holds(holder, attr, value):
    current = getattr(holder, attr, _MISSING)
    # bound methods are new objects on every access (as canonical.deps_current)
    return current is value or (callable(value) and current == value)


def _rebuild_text(av, bare, env):
    """Python source rebuilding a plan's result structure from the flat
    ``_tx_values`` (``bare``: the name of the one value returned unwrapped)."""
    from .specialize import Zero, children, is_container, is_namedtuple
    if is_container(av):
        items = [_rebuild_text(c, bare, env) for c in children(av)]
        if isinstance(av, dict):
            keys = []
            for k in av:
                env[f"_tx_k{len(env)}"] = k
                keys.append(f"_tx_k{len(env) - 1}")
            return "{" + ", ".join(f"{k}: {v}" for k, v in zip(keys, items)) + "}"
        if type(av) is tuple:
            return "(" + "".join(f"{v}, " for v in items) + ")"
        if type(av) is list:
            return "[" + ", ".join(items) + "]"
        env[f"_tx_T{len(env)}"] = type(av)
        t = f"_tx_T{len(env) - 1}"
        if is_namedtuple(av):
            return f"{t}({', '.join(items)})"
        return f"{t}([{', '.join(items)}])"
    if isinstance(av, Dyn):
        return bare if bare is not None else f"_tx_values[{int(av.name[1:])}]"
    if isinstance(av, Zero):
        return "None"
    env[f"_tx_k{len(env)}"] = av.value
    return f"_tx_k{len(env) - 1}"


def _kernels_called(bound, text):
    """The kernels compiled beside the caller (beside.py) that a numba stage
    binding ``bound`` and reading ``text`` may call (more rather than fewer:
    one not needed costs a load from Numba's disk cache)."""
    from . import numba_runtime, vmath
    kernels = []
    if numba_runtime.may_call_kernel(bound.values()):
        kernels.append(numba_runtime.MATMUL)
    uses_vmath = any(obj is vmath for obj in bound.values())
    for fn, kernel in vmath.ARRAY_KERNELS.items():
        if any(obj is fn for obj in bound.values()) or \
                uses_vmath and f".{fn.__name__}(" in text:
            kernels.append(kernel)
    return kernels


def _on_disk(dispatcher):
    """Whether Numba's disk cache may hold compiled code for ``dispatcher``
    (True when Numba's cache layout is not the one known here)."""
    try:
        return os.path.exists(dispatcher._cache._cache_file._index_path)
    except AttributeError:
        return True


def _finish_grads(inner, single, out, args, leaves, values, fill=api._fill):
    """``grad``/``value_and_grad``'s finishing step (gradients shaped and
    typed like their arguments, sharing memory with none), made cheap for
    compiled results: the flat leaves in and out are at hand, so copies are
    needed only when a result may share memory with an argument.  ``fill``:
    ``_cast_leaf`` when every argument is a leaf (the fast path)."""
    kind, nums = inner._kind, inner._argnums
    if kind == "grad":
        grads, aux = out if inner._has_aux else (out, None)
    else:
        value, grads = out
        primal = value[0] if inner._has_aux else value
        if np.shape(primal) != ():
            raise TypeError("Gradient only defined for scalar-output functions. "
                            f"Output had shape: {np.shape(primal)}.")
    grads = (grads,) if single else grads
    filled = tuple([fill(g, args[i]) for g, i in zip(grads, nums)])
    if _may_share(leaves, values):
        filled = _owned(filled, leaves)
    filled = filled[0] if single else filled
    if kind == "grad":
        return (filled, aux) if inner._has_aux else filled
    return value, filled


def _cast_leaf(g, x):
    """``api._cast_like`` (a gradient shaped and typed like its argument),
    with the usual case first: an array already of the argument's shape and
    dtype, which ``_cast_like`` would give back as it is."""
    if type(g) is np.ndarray and type(x) is np.ndarray and g.dtype == x.dtype and \
            g.shape == x.shape:
        return g
    return api._cast_like(g, x)


def _owned(grads, leaves):
    """Every gradient array writable and sharing memory with no argument and
    no other gradient: the others are copied.  (``api._owned`` finds shared
    memory by following ``.base`` to a common owner, but arrays Numba
    returns each have their own wrapper of Numba's buffer as their base,
    so here the memory ranges are compared.)"""
    inputs = [a for a in leaves if isinstance(a, np.ndarray)]
    kept = []

    def own(leaf):
        if isinstance(leaf, np.ndarray):
            if not leaf.flags.writeable or any(np.may_share_memory(leaf, other)
                                               for other in inputs + kept):
                leaf = leaf.copy()
            kept.append(leaf)
        return leaf

    return tree_util.tree_map(own, grads)


def _may_share(leaves, values):
    """Whether an array the compiled code returned is read-only or may
    share memory with an argument or with another returned array.

    First the common case, decided without comparing addresses: every
    returned array is writable and is the whole of a buffer Numba
    allocated in this call (its base is a Numba MemInfo with no parent
    array), each a different buffer."""
    outputs = [v for v in values if isinstance(v, np.ndarray)]
    if not outputs:
        return False
    buffers = set()
    for o in outputs:
        base = o.base
        if type(base) is not _MEMINFO or base.parent is not None or \
                base.data in buffers or not o.flags.writeable:
            break
        buffers.add(base.data)
    else:
        return False
    inputs = [a for a in leaves if isinstance(a, np.ndarray)]
    for k, o in enumerate(outputs):
        if not o.flags.writeable:
            return True
        for other in inputs:
            if np.may_share_memory(o, other):
                return True
        for other in outputs[k + 1:]:       # (the same array twice shares too)
            if np.may_share_memory(o, other):
                return True
    return False


def generic_arguments(function):
    """Abstract arguments when no example is given: each parameter one
    run-time value (an array or a number); parameters with defaults keep
    them, folded in as constants."""
    out = []
    for name, param in inspect.signature(function).parameters.items():
        if param.default is not param.empty:
            out.append(Const(param.default))
        elif param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            out.append(Const(() if param.kind == param.VAR_POSITIONAL else {}))
        else:
            out.append(Dyn(name))
    return out


def numba_stage(generated, avs, call_site=None, ranks=None, units=None, weak=False):
    """(module text, line map, plan, function name) of ``generated``'s
    python stage specialised for the abstract arguments ``avs`` (``ranks``:
    argument leaf name -> rank, for the arrays among them; ``units``: leaf
    name -> its size-1 axes, when the signature includes them; ``weak``:
    a leaf is narrow, so Python numbers are typed as NumPy would, see
    weak_scalars)."""
    global _STAMP
    if _STAMP is None:
        _STAMP = _runtime_stamp()
    tree = ast.parse(generated.text)
    fname = generated.function.__name__
    func = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == fname)
    # keyword-only parameters: ``_bind`` gave their values in the
    # signature's order, and the compiled code takes flat leaves by position
    func.args.args += func.args.kwonlyargs
    func.args.kwonlyargs, func.args.kw_defaults = [], []
    linemap = modules.LINEMAPS.get(generated.path, {})
    origin = generated.canonical.origin
    namespace = dict(generated.module.__dict__)
    spec = Specializer(func, namespace, linemap, origin or call_site)
    spec.ranks = dict(ranks or {})
    spec.units = None if units is None else dict(units)
    spec.param_units = dict(units or {})
    out = spec.run(avs)
    params = []
    for a, av in zip(func.args.args, avs):
        params += [leaf.name for leaf in _dyn_leaves(av)]
    from .unit_axes import check
    check(spec, spec.code, set(params))
    params += [name for name, _ in spec.hidden]
    plan = Plan(out, spec.hidden, params, dict(spec.bound))
    from . import fusion, vmath
    vmath_name = next((n for n, obj in spec.bound.items() if obj is vmath), None)
    code, kernels = fusion.fuse(spec.code, params, vmath_name,
                                set(spec.taken) | set(spec.bound) | {fname})
    from . import numba_runtime, optional

    def takes_optional(call):
        return isinstance(call.func, ast.Name) and \
            spec.bound.get(call.func.id) in numba_runtime.TAKES_OPTIONAL
    if "assigned" not in spec.bound and "assigned" not in spec.taken and \
            optional.mark_assigned_reads(list(code) + list(kernels), spec.unbound_starts,
                                         "assigned", takes_optional):
        spec.bound["assigned"] = plan.bound["assigned"] = numba_runtime.assigned
    if weak:
        from . import weak_scalars
        helper = "weak_scalar"
        numpy_names = {n for n, obj in spec.bound.items() if obj is np}
        if helper not in spec.bound and helper not in spec.taken and \
                weak_scalars.weaken(list(code) + list(kernels), helper, numpy_names):
            spec.bound[helper] = plan.bound[helper] = numba_runtime.weak_scalar
    text, numba_linemap = render_module(fname, params, code, linemap, origin,
                                        generated.description, avs, func, spec.bound,
                                        kernels)
    return text, numba_linemap, plan, fname


def _dyn_leaves(av):
    from .specialize import av_leaves
    return [leaf for leaf in av_leaves(av) if isinstance(leaf, Dyn)]


def render_module(name, params, stmts, src_linemap, origin, description, avs, func, bound,
                  kernels=()):
    from .specialize import describe
    signature = ", ".join(f"{a.arg}: {describe(av)}" for a, av in zip(func.args.args, avs))
    header = [f"# Generated by tangent_x {__import__('tangent_x').__version__}: numba stage of "
              f"{description}",
              f"# specialised for ({signature})"]
    if origin is not None:
        header.append(f"# from {emit.display_path(origin.filename)}:{origin.lineno}. Do not "
                      "edit: tangent_x regenerates it from that source.")
    modules_, runtime_names, numba_names, others = [], [], [], []
    from .. import runtime
    from . import numba_runtime
    for n, obj in sorted(bound.items()):
        if obj is np:
            modules_.append("import numpy as np" if n == "np" else f"import numpy as {n}")
        elif isinstance(obj, type(np)):
            modules_.append(f"import {obj.__name__} as {n}" if n != obj.__name__.split(".")[-1]
                            or "." in obj.__name__ else f"import {n}")
        elif getattr(runtime, n, None) is obj:
            runtime_names.append(n)
        elif getattr(numba_runtime, n, None) is obj:
            numba_names.append(n)
        elif n in dir(__builtins__) or n in __builtins__:
            continue
        else:
            others.append(n)
    header += sorted(set(modules_))
    if runtime_names:
        header.append(f"from tangent_x.runtime import {', '.join(runtime_names)}")
    header.append("import tangent_x.numba_stage.numba_runtime  # Numba implementations of the helpers")
    if numba_names:
        header.append(f"from tangent_x.numba_stage.numba_runtime import {', '.join(numba_names)}")
    if others:
        header.append(f"# bound when loaded, from the function's globals: {', '.join(others)}")
    if kernels:
        header.append("from numba import vectorize")
    for kernel in kernels:
        header += ["", ""] + _text(kernel).splitlines()
    lines = header + ["", "", f"def {name}({', '.join(params)}):"]
    origins = [None] * (len(header) + 2) + [origin]
    state = {"last": None}

    def walk(body, indent):
        for stmt in body:
            src = getattr(stmt, "_tx_src", None)
            o = src_linemap.get(src) if src is not None else None
            # an iteration of an unrolled loop (specialize.Specializer.unroll)
            iteration = getattr(stmt, "_tx_iteration", None)
            if iteration is not None:
                state["last"] = None
            if o is not None and (o.filename, o.lineno) != state["last"]:
                unrolled = f" (unrolled: {iteration})" if iteration is not None else ""
                lines.append(f"{indent}# {o.short()}: {o.text}{unrolled}")
                origins.append(o)
                state["last"] = (o.filename, o.lineno)
            if isinstance(stmt, ast.If):
                _block(f"if {_text(stmt.test)}:", stmt.body, indent, o)
                if stmt.orelse:
                    lines.append(f"{indent}else:")
                    origins.append(o)
                    walk(stmt.orelse, indent + "    ")
                    state["last"] = (o.filename, o.lineno) if o is not None else None
            elif isinstance(stmt, ast.For):
                _block(f"for {_text(stmt.target)} in {_text(stmt.iter)}:", stmt.body, indent, o)
            elif isinstance(stmt, ast.While):
                _block(f"while {_text(stmt.test)}:", stmt.body, indent, o)
            else:
                for text in _text(stmt).splitlines():
                    lines.append(indent + text)
                    origins.append(o)

    def _block(head, body, indent, o):
        lines.append(indent + head)
        origins.append(o)
        state["last"] = None
        walk(body or [ast.Pass()], indent + "    ")
        # the comment above the block's head also covers what follows it at
        # this indent from the same line
        state["last"] = (o.filename, o.lineno) if o is not None else None

    walk(stmts, "    ")
    linemap = {i + 1: o for i, o in enumerate(origins) if o is not None}
    return "\n".join(lines) + "\n", linemap


def _text(node):
    node = ast.fix_missing_locations(node)
    if isinstance(node, ast.stmt):
        for n in ast.walk(node):
            if isinstance(n, ast.stmt):
                n.lineno = n.end_lineno = 1
                n.col_offset = n.end_col_offset = 0
    return emit._to_text(node)


def _caller():
    """The user's line calling into tangent_x (for argument errors)."""
    return api._call_site()


def _short(value, limit=50):
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


_LINE = re.compile(r'File "([^"]+)", line (\d+)')


def _translate(exc, compiled, leaves):
    """A Numba compile failure as a located tangent_x error."""
    message = str(exc)
    origin, code_line = None, None
    for path, line in _LINE.findall(message):
        if os.path.abspath(path) == os.path.abspath(compiled.path):
            origin = compiled.linemap.get(int(line))
            code_line = int(line)
    what = _summary(message) or f"{type(exc).__name__}"
    types_ = ", ".join(_numba_type(v) for v in leaves)
    where = ""
    if code_line is not None:
        text = compiled.text.splitlines()[code_line - 1].strip()
        where = f" (numba stage {compiled.path}:{code_line}: {text})"
    untyped = _UNTYPED_GLOBAL.search(re.sub(r"\x1b\[[0-9;]*m", "", message))
    if untyped is not None:     # a Python object the code calls, not an argument
        name, kind = untyped.groups()
        hint = (f"compiled code can call NumPy functions and functions tangent_x "
                f"inlines, not '{name}' (a {kind.rpartition('.')[2]}); run without jit "
                "(with tx.disable_jit(): ...) or write it with NumPy")
    else:
        hint = static_hint(_arguments_read(compiled, code_line, leaves))
    error = JitError(f"Numba cannot compile this: {what}{where}; the compiled function's "
                     f"arguments are ({types_})", origin or compiled.origin, hint)
    error.numba_error = exc         # for a caller that can still mend it (LaneLoop)
    return error


_UNTYPED_GLOBAL = re.compile(r"Untyped global name '(\w+)'.*?Numba type of <class '([\w.]+)'>",
                             re.S)


def _arguments_read(compiled, code_line, leaves):
    """The compiled function's number (or string) arguments that the failing
    line's values are computed from: those marking static could fix."""
    if code_line is None:
        return []
    try:
        tree = ast.parse(compiled.text)
    except SyntaxError:
        return []
    name = getattr(compiled, "name", None)
    func = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name),
                None)
    if func is None:
        return []
    reads = [n.id for stmt in ast.walk(func) if isinstance(stmt, ast.stmt)
             and getattr(stmt, "lineno", None) == code_line
             and not isinstance(stmt, (ast.For, ast.While, ast.If, ast.FunctionDef))
             for n in ast.walk(stmt) if isinstance(n, ast.Name)]
    scalars = [a.arg for a, v in zip(func.args.args, leaves) if not isinstance(v, np.ndarray)]
    return depends_on(func, reads, scalars)


def _summary(message):
    lines = [ln.strip() for ln in message.splitlines() if ln.strip()]
    keep = []
    for ln in lines:
        if ln.startswith("Failed in ") or ln.startswith("During:") or \
                ln.startswith("File ") or ln.startswith("^") or set(ln) <= set("- "):
            continue
        keep.append(ln)
        if len(keep) >= 3:
            break
    text = " ".join(keep)
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)
    return text[:400]


def _numba_type(value):
    if isinstance(value, np.ndarray):
        return f"array({value.dtype}, {value.ndim}d)"
    return type(value).__name__


def jit(fun=None, static_argnums=(), static_argnames=()):
    """Compile ``fun`` (plain or transformed) with Numba, per call signature.

    ``static_argnums``/``static_argnames``: arguments whose values are folded
    into the code (they must be hashable; a new value compiles again).
    Usable as ``@jit`` or ``@jit(static_argnames='config')``.  Returns a plain
    function (see ``Jitted.front``); ``jit(vmap(f))`` and ``jit`` of a
    Jacobian or Hessian return objects with call paths of their own."""
    if fun is None:
        return lambda f: jit(f, static_argnums, static_argnames)
    _check_static_args(fun, static_argnums, static_argnames)
    if hasattr(fun, "__tangent_x_rebuild__"):         # jacfwd, jacrev, hessian
        from .drivers import JittedDriver
        return JittedDriver(fun, jit, static_argnums, static_argnames)
    from ..api.vmap import Vmapped
    if isinstance(fun, Vmapped):                      # batched, or a prange loop
        from .lane_loop import JittedVmap
        return JittedVmap(fun, static_argnums, static_argnames)
    return Jitted(fun, static_argnums, static_argnames).front()


def _check_static_args(fun, static_argnums, static_argnames):
    """As JAX: ``static_argnums`` past the parameters, or ``static_argnames``
    naming none, is a ValueError (not a silently traced argument).  ``*args``
    takes any position and ``**kwargs`` any name."""
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return
    kinds = inspect.Parameter
    nums = (static_argnums,) if isinstance(static_argnums, numbers.Integral) else static_argnums
    names = (static_argnames,) if isinstance(static_argnames, str) else static_argnames
    name = getattr(fun, "__name__", "the function")
    signature = f"{name}({', '.join(str(p) for p in params)})"
    where = _caller()
    prefix = f"{where.where()}: " if where is not None else ""
    if not any(p.kind == kinds.VAR_POSITIONAL for p in params):
        positional = sum(p.kind in (kinds.POSITIONAL_ONLY, kinds.POSITIONAL_OR_KEYWORD)
                         for p in params)
        bad = [int(i) for i in nums if not -positional <= int(i) < positional]
        if bad:
            takes = (f"{positional} positional parameter{'' if positional == 1 else 's'}"
                     f" (static_argnums from {-positional} to {positional - 1})"
                     if positional else "no positional parameters")
            raise ValueError(
                f"{prefix}jit has static_argnums={tuple(int(i) for i in nums)}, but "
                f"{signature} has {takes}; give the positions of its parameters, "
                "or their names as static_argnames")
    if not any(p.kind == kinds.VAR_KEYWORD for p in params):
        known = {p.name for p in params
                 if p.kind in (kinds.POSITIONAL_OR_KEYWORD, kinds.KEYWORD_ONLY)}
        bad = [n for n in names if n not in known]
        if bad:
            raise ValueError(
                f"{prefix}jit has static_argnames={tuple(names)}, but {signature} has no "
                f"parameter {', '.join(repr(n) for n in bad)} that can be passed by "
                "name; name one of its parameters")


def jitted_of(fun):
    """The ``Jitted`` behind ``fun`` (what ``jit`` returned, or a ``Jitted``
    itself), else None."""
    if isinstance(fun, Jitted):
        return fun
    self = getattr(fun, "_tx_self", None)
    return self if isinstance(self, Jitted) else None


del sys, Origin, SpecializationError
