"""``Jitted``: a function's python stage compiled by Numba, per call signature.

A call binds its arguments, flattens them into leaves and a key
(``flatten``) and looks the key up; a new key specialises the python stage
for the call (``render.numba_stage``) and loads the text as compiled code
(``loading``: ``numba.njit(cache=True)`` of a module file named by its
text).  New dtypes and layouts are Numba's own dispatch (same source, new
machine code).  After a call, the function ``jit`` returned runs the fast
path of that call's signature (``dispatch``).

What is compiled, the transform's python stage (``inner``: its generated
code, its input checks, its finishing step), is given by the api layer
(``python_stage``, a function of the user's function).
"""
import ast
import functools
import inspect
import numbers

from ..core.arguments import refuse_masked
from ..errors import call_site
from ..python_stage import loader as modules
from . import compile_errors, dispatch, join_verdicts, result_dtypes
from .callees import CalleeCompiler
from .bounds import OutOfBounds
from .compile_errors import JitError
from .contents import Contents
from .flatten import Signature
from .loading import load
from .render import generic_arguments, numba_stage
from .results import cast_to_arguments, finish_grads
from .unit_axes import needs_unit_axes

__all__ = ["Jitted", "jitted_of"]


class Jitted:
    """A function compiled by Numba per call signature (see the module doc).

    ``python_stage``: the api layer's function giving what is compiled of a
    function (its transform, or its plain python stage).

    Every instance has a class of its own, so that its ``__call__`` can be
    the fast path of the last signature it was called with (``_install``):
    the interpreter then calls that guard directly, with no dispatching
    method in between."""

    # compiled with nogil (pmap's workers run it on threads in parallel)
    nogil = False
    # globals replaced when loading (see loading.load; pmap's MPI collectives)
    rebind = None

    def __new__(cls, *args, **kwargs):
        own = type(cls.__name__, (cls,), {"__module__": cls.__module__,
                                          "__qualname__": cls.__qualname__})
        return super().__new__(own)

    def __init__(self, fun, python_stage, static_argnums=(), static_argnames=()):
        functools.update_wrapper(self, fun, updated=())
        if jitted_of(fun) is not None:
            fun = jitted_of(fun)._fun
        self._fun = fun
        self._python_stage = python_stage
        if isinstance(static_argnums, numbers.Integral):
            static_argnums = (static_argnums,)
        if isinstance(static_argnames, str):
            static_argnames = (static_argnames,)
        self._static_argnums = tuple(int(i) for i in static_argnums)
        self._static_argnames = tuple(static_argnames)
        self._inner = python_stage(fun)
        self.fuse = True       # False: no fused kernels (the CUDA stage rewrites the code)
        if self._inner._kind == "vjp_split":
            raise TypeError("jit of a vjp's forward function is not supported; jit the "
                            "function, or use jit(vjp-of-f) via tx.vjp inside jit")
        self._cache = {}
        self._last = None
        self._call_site = call_site()

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
        if dispatch.disabled():
            return inner(*args, **kwargs)
        inner._specialize_inner(args)      # jit(vmap(f)): vmap's code for these arguments
        generated = inner.generated_for(args, kwargs)   # a vmap inside: specialised first
        bound = self._bind(generated, args, kwargs)
        # one thread at a time (pmap's workers call a shard's jit at once):
        # besides compiling once, CPython 3.11's ast.parse is not safe in
        # two threads at once ("AST constructor recursion depth mismatch")
        with modules.CODE_LOCK:
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
                inner.check_inputs(args)
                if entry is None or entry[0] is not generated:
                    key, leaves, avs = self._signature(generated, bound)
                    compiled = self._compile(generated, avs, key)
                    self._cache[key] = (generated, compiled)
                else:
                    compiled = entry[1]
            else:
                compiled = entry[1]
            self._last = compiled
        values = self._run(compiled, leaves, (args, kwargs), tag=True)
        result = self._finish(compiled, values, args, leaves)
        self._install(generated, compiled, key, args, kwargs, values)
        return result

    def _finish(self, compiled, values, args, leaves):
        """The result from the compiled function's flat values."""
        values = compiled.untag(values)
        if compiled.weak or compiled.narrow_results():
            values = compiled.narrow_scalars(values)
        if compiled.plan.bare:
            values = (values,)
        inner = self._inner
        out = compiled.plan.unflatten(values)
        single = getattr(inner, "_single", None)
        if single is None or compiled.plan.has_zeros:
            return inner._finish(out, args)
        return finish_grads(inner, single, out, args, leaves, values)

    def _run(self, compiled, leaves, call=None, tag=False):
        """The compiled function's flat results (``call``: the arguments
        and keyword arguments of the call, for ``_failed``; ``tag``: a
        result whose dtype depends on the path may be returned with its
        dtype's code, see ``_tagged``)."""
        # (each text may be widened MAX_WIDENED times; tagged, split, and
        # the split text widened and tagged again)
        for _ in range(2 * compile_errors.MAX_WIDENED + 6):
            dispatcher = compiled.dispatcher
            known = len(dispatcher.overloads)
            try:
                values = dispatcher(*leaves, *compiled.hidden)
            except Exception as exc:
                if self._widened(exc, compiled) or self._untagged(exc, compiled, known):
                    continue
                self._failed(exc, compiled, leaves, known, call)
            if compiled.joins_checked != (dispatcher, len(dispatcher.overloads)):
                if tag and (self._tagged(compiled) or split(compiled)):
                    continue
                join_verdicts.check(compiled)
            return values
        raise JitError("Numba cannot compile this: its variables hold arrays of two dtypes "
                       "in more places than jit widens them to one", compiled.origin,
                       "give each variable one dtype on every path (cast where it is made: "
                       "x.astype(np.float64)), or run without jit (with tx.disable_jit(): ...)")

    def _tagged(self, compiled):
        """Whether ``compiled`` (changed in place) compiles again with the
        dtype of each result that is float32 on one path and float64 on
        another kept beside it (``result_dtypes.tag``)."""
        return result_dtypes.tag(compiled, join_verdicts.verdicts, self._reload)

    def _untagged(self, exc, compiled, known):
        """Whether tagged code that Numba could not compile went back to
        the text before (whose joins are then refused as before)."""
        return compile_errors.is_compile_failure(exc, compiled, known) and \
            result_dtypes.untag_text(compiled, self._reload)

    def _widened(self, exc, compiled):
        """Whether a Numba typing refusal ``exc`` was mended: ``compiled``
        (changed in place) then compiles again (see
        ``compile_errors.widened_text``)."""
        text = compile_errors.widened_text(exc, compiled) or \
            compile_errors.renamed_text(exc, compiled)
        if text is None:
            return peeled(exc, compiled)
        self._reload(compiled, text)
        return True

    def _reload(self, compiled, text):
        compiled.reload(text, lambda text: load(compiled.name, text, compiled.linemap,
                                                compiled.plan, nogil=self.nogil,
                                                rebind=self.rebind))

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
        if compile_errors.is_compile_failure(exc, compiled, known):
            raise compile_errors.translate(exc, compiled, leaves) from None
        modules.annotate(exc)
        raise exc

    # -- the fast path (see dispatch) ----------------------------------------

    def _install(self, generated, compiled, key, args, kwargs, values):
        """Make ``__call__`` (and the code of the function ``jit`` returned,
        see ``front``) the fast path of this call's signature, when
        every argument is an array or a number, or a list, tuple or dict of
        them (``dispatch.plain_tree``), and every parameter is given
        (nothing to bind, default or fold in); otherwise go back to the
        general path.

        The fast path (``dispatch.fast_path``) checks each argument's type
        (and an array's dtype, on which grad's input checks depend, and
        rank, which is part of the signature: ``x.ndim`` is folded in;
        layouts are Numba's own dispatch, which compiles the same text
        again) and that every global, closure cell and attribute the code
        was built from still holds the object it held (the check the
        transform's ``generated`` makes before reusing code: a rebound
        value is never run stale).  Then it calls the Numba dispatcher and
        rebuilds the result; any other call takes the general path.  No
        fast path is installed while a ``disable_jit`` block is open in any
        thread, and opening one removes them all, so the fast path need not
        ask."""
        fast = getattr(self, "_fast", None)
        # (a subclass with a call path of its own, jit(vmap)'s, keeps it)
        eligible = (type(self).__mro__[1].__call__ is Jitted.__call__ and
                    not kwargs and fast is not None and fast[0] is generated and
                    len(args) == len(fast[1]) and
                    not any(static or name.startswith("_tx_") for name, static in fast[1])
                    and getattr(getattr(self._inner._fun, "__tangent_x__", None),
                                "specialize", None) is None and
                    all(dispatch.plain_tree(a) for a in args) and
                    # code specialised on size-1 axes (np.squeeze without
                    # axis, see unit_axes) needs the general path's key
                    not self._units_of[1])
        if eligible:
            entries = self.__dict__.setdefault("_entries", {})
            entry = entries.get(key)
            if entry is None or entry[0] is not compiled:
                names = [name for name, _ in fast[1]]
                entry = (compiled, *dispatch.fast_path(
                    self, functools.partial(Jitted.__call__, self), generated, compiled,
                    names, args, values))
                entries[key] = entry
        with dispatch.LOCK:
            own = type(self)
            if eligible and dispatch.fast_paths_allowed():
                if own.__dict__.get("__call__") is not entry[1]:
                    own.__call__ = entry[1]
                    dispatch.INSTALLED.add(self)
                front = self.__dict__.get("_front")
                if front is not None and front.__code__ is not entry[2]:
                    # (a call running the old code meanwhile binds its
                    # arguments as either code would: same parameters)
                    front.__defaults__ = entry[3]
                    front.__code__ = entry[2]
                    dispatch.INSTALLED.add(self)
            else:
                self._uninstall()

    def _uninstall(self):
        own = type(self)
        if "__call__" in own.__dict__:
            del own.__call__              # back to Jitted.__call__
        front = self.__dict__.get("_front")
        if front is not None:
            front.__code__ = self._general_code    # back to the general path
        dispatch.INSTALLED.discard(self)

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

    # -- binding and flattening -----------------------------------------------

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
        # code specialised on a Python number (api.specialised) keys on it too
        statics |= set(getattr(generated, "static_params", ()))
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
        """(cache key, flat leaves, abstract arguments), see ``flatten``;
        ``full``: also the leaves' ranks, size-1 axes and narrowness, kept
        for ``_compile``."""
        if getattr(self, "_units_of", (None,))[0] is not generated:
            self._units_of = (generated, needs_unit_axes(ast.parse(generated.text)))
        # size-1 axes: part of the signature only for code that needs them
        signature = Signature(self._name(), self._units_of[1], full).of(bound)
        if full:
            self._ranks, self._units, self._weak = \
                signature.ranks, signature.units, signature.weak
            self._numbers = frozenset(signature.numbers)
            self._mixed = signature.mixed
        return signature.key, signature.leaves, signature.avs

    def _name(self):
        return f"jit({getattr(self._fun, '__name__', 'f')})"

    # -- compiling ----------------------------------------------------------

    def _compile(self, generated, avs, key, peeled=(), split=()):
        text, linemap, plan, name = numba_stage(generated, avs, self._call_site, self._ranks,
                                                self._units, self._weak, self._callees(),
                                                numbers=self._numbers, mixed=self._mixed,
                                                complete_ranks=self._ranks is not None,
                                                fuse=self.fuse, peeled=peeled, split=split)
        compiled = load(name, text, linemap, plan, generated.canonical.origin, self.nogil,
                        self.rebind)
        compiled.name = name
        compiled.cast_results = cast_to_arguments(self._inner)     # (joins)
        compiled.peeled = frozenset(peeled)
        compiled.split = frozenset(split)
        compiled.python_lines = modules.LINEMAPS.get(generated.path, {})
        # specialised again, with loops peeled (see peeled) or paths split (split)
        compiled.respecialize = lambda peeled, split=(): self._compile(generated, avs, key,
                                                                        peeled, split)
        compiled.contents = Contents(value for name, value in generated.module.__dict__.items()
                                     if not name.startswith("__"))    # not __builtins__
        return compiled

    def _callees(self, weak=None):
        """What compiles the functions the code calls (custom_jvp and
        custom_vjp rules): as this jit compiles a function."""
        return CalleeCompiler(self._python_stage, self._call_site,
                              self._weak if weak is None else weak)

    # -- inspection ---------------------------------------------------------

    def numba_source(self, *args, **kwargs):
        """The numba-stage source: for ``args`` if given, else of the most
        recent call, else generic (every argument one array or number)."""
        generated = self._inner.generated
        if args or kwargs:
            bound = self._bind(generated, args, kwargs)
            _, _, avs = self._signature(generated, bound)
            ranks, units, weak = self._ranks, self._units, self._weak
            numbers, mixed = self._numbers, self._mixed
        elif self._last is not None:
            return self._last.text
        else:
            avs, ranks, units = generic_arguments(generated.function), None, None
            weak, numbers, mixed = False, (), False
        return numba_stage(generated, avs, self._call_site, ranks, units, weak,
                           self._callees(weak), numbers=numbers, mixed=mixed,
                           complete_ranks=ranks is not None, fuse=self.fuse)[0]


def peeled(exc, compiled):
    """Whether a Numba typing refusal ``exc`` of a loop's variable that
    holds a Python number before the loop and an array in it (``total =
    0``, then ``total = total + item``: ``sum`` of a list of arrays) was
    mended: ``compiled`` (changed in place) is specialised again with
    that loop's first iteration apart (``Loops.peel``; ``respecialize``
    is ``Jitted._compile`` for those arguments)."""
    name = compile_errors.number_then_array(exc, compiled)
    respecialize = getattr(compiled, "respecialize", None)
    if name is None or respecialize is None or name in compiled.peeled:
        return False
    _replace(compiled, respecialize(compiled.peeled | {name}, compiled.split))
    return True


def split(compiled):
    """Whether a signature whose joins are refused (``joins``: a value
    float32 on one path and float64 on another, computed with after the
    ``if``) was specialised again with the paths split at the ifs of those
    joins (``specialize.splitting``): each path's values keep their types,
    and its result is returned in its dtype (``result_dtypes``).  Tried
    once; ``compiled`` is changed in place."""
    respecialize = getattr(compiled, "respecialize", None)
    if respecialize is None or compiled.split:
        return False
    # (float32 and float64: the result join left, result_dtypes returns it)
    entries = [e for e in join_verdicts.verdicts(compiled) if result_dtypes.same_kind(e[1], e[2])]
    users = {(o.filename, o.lineno) for entry in entries
             for o in [compiled.linemap.get(entry[3])] if o is not None}
    lines = frozenset(n for n, o in compiled.python_lines.items()
                      if o is not None and (o.filename, o.lineno) in users)
    if not lines:
        return False
    new = respecialize(compiled.peeled, lines)
    if new.text == (compiled.untagged or compiled.text):
        return False                    # no such if outside the loops
    _replace(compiled, new)
    return True


def _replace(compiled, new):
    """``compiled`` made ``new`` (a specialisation of the same call)."""
    for attr in ("dispatcher", "text", "path", "linemap", "plan", "hidden", "peeled", "split",
                 "respecialize", "weak", "contents"):
        setattr(compiled, attr, getattr(new, attr))
    compiled.tags, compiled.untagged = [], None
    compiled.reload(new.text, lambda text: new)


def jitted_of(fun):
    """The ``Jitted`` behind ``fun`` (what ``jit`` returned, or a ``Jitted``
    itself), else None."""
    if isinstance(fun, Jitted):
        return fun
    self = getattr(fun, "_tx_self", None)
    return self if isinstance(self, Jitted) else None
