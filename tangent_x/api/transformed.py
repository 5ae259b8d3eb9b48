"""``Transformed``: a transformed function, and the cache of them.

A transform returns a ``Transformed`` callable at once; the source is
generated lazily at the first call (or when ``source`` asks for it), as JAX
traces at first call, so a decorated function may use helpers defined later
in its module.  The generated code is rebuilt whenever a global, closure
value or attribute it was built from has been rebound.  ``cached`` keeps
one ``Transformed`` per function and transform, so repeated ``jvp`` and
``vjp`` calls reuse their code; ``call_with_extra`` calls jvp and vjp code
in its parameter order.
"""
import functools
import numbers
import weakref

import numpy as np

from ..canonical import converter as canonical
from ..core.arguments import plain_real, refuse_masked
from ..errors import TransformError, call_site
from ..python_stage import loader as modules
from .. import runtime, tree_util
from .boundary import cast_like, check_inputs, fill
from .generate import build
from .specialised import container_kinds, key_of, static_arguments


class Unspecialized(TypeError):
    """A vmapped function asked for its code before any call told it the
    structure of its arguments."""


# Building generated code is not re-entrant across threads (pmap's workers):
# the one lock for making code (python_stage.loader.CODE_LOCK).
_BUILDING = modules.CODE_LOCK


class Transformed:
    """A transformed function: callable, with its generated source inspectable."""

    def __init__(self, fun, kind, argnums, has_aux, finish):
        functools.update_wrapper(self, fun, updated=())
        self._fun = fun
        self._kind = kind
        self._argnums = argnums
        self._has_aux = has_aux
        self._finish = finish
        self._generated = None
        self._specialised = None    # {key: Generated} once the generic code was refused
        self._by_structure = {}     # {structure_key: Generated} (``_for_structure``)
        self._by_kinds = {}         # {kinds key: Generated} (``_with_kinds``)
        self._call_site = call_site()

    @property
    def __tangent_x__(self):
        return self

    @property
    def generated(self):
        gen = self._generated
        if gen is None or not canonical.deps_current(gen.deps):
            with _BUILDING:         # pmap's workers may ask at once: build once
                return self._build()
        return gen

    def _build(self, static=None):
        gen = None if static else self._generated
        if gen is None or not canonical.deps_current(gen.deps):
            try:
                gen = build(self._fun, self._kind, self._argnums, self._has_aux,
                            grads_tuple=getattr(self, "_single", None) is False,
                            static=static)
            except TransformError as exc:
                if exc.origin is None and self._call_site is not None:
                    marked = getattr(exc, "specialisable", False)
                    exc = TransformError(exc.bare_message, self._call_site, exc.hint)
                    exc.specialisable = marked
                    raise exc from None
                raise
            if not static:
                self._generated = gen
        return gen

    @property
    def function(self):
        return self.generated.function

    def generated_for(self, args, kwargs):
        """``generated``, for a call with ``args``: a vmapped function called
        inside is first specialised by one plain run of the function on the
        arguments it really gets (as JAX traces); jit asks this too."""
        kinds = container_kinds(self._user_fun(), self._primal_args(args), kwargs)
        if self._specialised is None:
            try:
                gen = self._with_kinds(kinds) if kinds else self.generated
                if structure_dependent(gen):
                    gen = self._for_structure(args, kwargs, kinds)
                return gen
            except Unspecialized:
                self._fun(*self._primal_args(args), **kwargs)
                gen = self._with_kinds(kinds) if kinds else self.generated
                if structure_dependent(gen):
                    self._by_structure[structure_key(args, kwargs)] = gen
                return gen
            except TransformError as exc:
                if not getattr(exc, "specialisable", False):
                    raise
                static = static_arguments(self._user_fun(), self._primal_args(args),
                                          kwargs, self._argnums)
                if not static:
                    raise
                self._specialised = {}
        else:
            static = static_arguments(self._user_fun(), self._primal_args(args), kwargs,
                                      self._argnums)
        return self.generated_with({**kinds, **static})

    def _with_kinds(self, kinds):
        """The code for arguments of these container kinds
        (``specialised.container_kinds``): built once per kinds."""
        return self._cached(self._by_kinds, kinds)

    def _cached(self, cache, static):
        """``cache``'s code for ``static``, built on first use and again when
        what it was built from changes."""
        key = key_of(static)
        gen = cache.get(key)
        if gen is None or not canonical.deps_current(gen.deps):
            with _BUILDING:
                gen = self._build(static)
                cache[key] = gen
        return gen

    def _for_structure(self, args, kwargs, kinds=None):
        """The code for a call like this one, where the code inlines a
        transform specialised to the structure of its arguments (a vmapped
        function or a Jacobian called inside): one build per structure of
        this call's arguments, after one plain run of the function on them
        specialises the inner transforms (as ``Unspecialized`` does); else
        a new rank or shape would run code made for the old one."""
        key = structure_key(args, kwargs)
        gen = self._by_structure.get(key)
        if gen is None or not canonical.deps_current(gen.deps):
            self._fun(*self._primal_args(args), **kwargs)
            with _BUILDING:
                if kinds:
                    gen = self._build(kinds)
                else:
                    self._generated = None
                    gen = self._build()
            self._by_structure[key] = gen
        if not kinds:
            self._generated = gen
        return gen

    def generated_with(self, static):
        """The code specialised on ``static`` (``specialised``): this call's
        Python int/bool arguments folded in, its tuple/list arguments'
        lengths known, so a recursion they decide unrolls; built once per
        key, again when what it was built from changes."""
        if self._specialised is None:
            self._specialised = {}
        return self._cached(self._specialised, static)

    def _user_fun(self):
        """The user's function under any transforms (its signature)."""
        fun = self._fun
        while getattr(fun, "__tangent_x__", None) is not None and \
                getattr(fun.__tangent_x__, "_fun", None) is not None:
            fun = fun.__tangent_x__._fun
        return fun

    def __call__(self, *args, **kwargs):
        plain = plain_real((args, kwargs))
        if not plain:
            refuse_masked(self._kind, self._fun, args, kwargs)
        check_inputs(self._kind, self._fun, args, self.checked_argnums(), plain)
        self._specialize_inner(args)
        function = self.generated_for(args, kwargs).function
        try:
            out = function(*args, **kwargs)
        except Exception as exc:
            modules.annotate(exc)
            raise
        return self._finish(out, args)

    def __repr__(self):
        return f"<tangent_x {self._kind} of {getattr(self._fun, '__qualname__', self._fun)}>"

    def check_inputs(self, args):
        """The checks a call makes of its inputs (float inputs for grad
        ...), for a caller that runs this transform's code itself (jit)."""
        check_inputs(self._kind, self._fun, args, self.checked_argnums())

    @staticmethod
    def fill_gradient(g, x):
        """A gradient cast to its argument's structure and dtype, symbolic
        zeros filled: grad's finishing of one gradient, for jit's."""
        return fill(g, x)

    @staticmethod
    def cast_gradient(g, x):
        """A gradient leaf cast to its argument's shape and dtype."""
        return cast_like(g, x)

    def checked_argnums(self):
        """Where the differentiated arguments are in a call's arguments:
        first in jvp and vjp code (see ``_with_extra``)."""
        if self._kind in ("jvp", "vjp"):
            return range(len(self._argnums))
        return self._argnums

    def _primal_args(self, args):
        """The arguments of the untransformed function within ``args`` (jvp
        code takes primals, tangents, then the rest; vjp code primals, a
        seed, then the rest: see ``_with_extra``)."""
        if self._kind in ("jvp", "vjp"):
            k = len(self._argnums)
            n_extra = k if self._kind == "jvp" else 1
            primals = list(args[:k]) + list(args[k + n_extra:])
            order = list(self._argnums) + [i for i in range(len(primals))
                                           if i not in self._argnums]
            return [p for _, p in sorted(zip(order, primals))]
        return args

    def _specialize_inner(self, args):
        """A transformed function whose code depends on its arguments'
        structure (a vmapped one) is specialised for the primal arguments
        first; this code is rebuilt when that specialisation changes."""
        inner = getattr(self._fun, "__tangent_x__", None)
        if not hasattr(inner, "specialize"):
            return
        specialised = inner.specialize(*self._primal_args(args))
        if getattr(self, "_inner_generated", None) is not specialised:
            self._inner_generated = specialised
            self._generated = None


def structure_dependent(gen):
    """True when ``gen`` inlines a transform specialised to its arguments'
    structure (``canonical.calls`` records a ``specialised`` dependency)."""
    return any(dep[0] == "specialised" for dep in gen.deps)


def structure_key(args, kwargs):
    """A call's argument structure: types, shapes and dtype kinds of its
    leaves, and the containers' structure."""
    leaves, tree = tree_util.tree_flatten((args, kwargs))
    return tree, tuple((type(x), np.shape(x), np.asarray(x).dtype.kind) for x in leaves)


# The runtime's custom_jvp_cotangents transposes a custom_jvp rule by
# transforming it; the runtime sits below the api, so the api tells it how.
runtime.register_transposer(
    lambda tangent_map, argnums: Transformed(tangent_map, "vjp", argnums, False,
                                             lambda out, a: out))


def argnums_tuple(argnums):
    if isinstance(argnums, numbers.Integral):
        return (int(argnums),), True
    argnums = tuple(int(a) for a in argnums)
    return argnums, False


_TRANSFORMED = weakref.WeakKeyDictionary()


def cached(fun, kind, argnums, finish, has_aux=False):
    """One Transformed per (function, kind, argnums), so repeated jvp/vjp
    calls reuse the generated code."""
    try:
        table = _TRANSFORMED.setdefault(fun, {})
    except TypeError:
        return Transformed(fun, kind, argnums, has_aux, finish)
    key = (kind, argnums, has_aux)
    if key not in table:
        table[key] = Transformed(fun, kind, argnums, has_aux, finish)
    return table[key]


def call_jvp(transformed, args, argnums, tangents):
    """Call generated jvp code: its parameters are the differentiated
    primals, their tangents, then the other arguments (so that defaults
    stay last)."""
    return call_with_extra(transformed, args, argnums, tangents)


def call_with_extra(transformed, args, argnums, extra, **kwargs):
    """Call generated jvp or vjp code with the arguments ``args`` of the
    user's function: the differentiated ones, then ``extra`` (tangents, a
    cotangent seed), then the others (see ``_with_extra``)."""
    argnums = [i % len(args) for i in argnums]
    wrt = [args[i] for i in argnums]
    rest = [a for i, a in enumerate(args) if i not in argnums]
    return transformed(*wrt, *extra, *rest, **kwargs)


def extra_in_axes(n_args, argnums, extra_axes):
    """vmap's ``in_axes`` for ``call_with_extra``'s argument order: the
    user's arguments unmapped, ``extra_axes`` for the extra ones."""
    k = len(argnums)
    return (None,) * k + tuple(extra_axes) + (None,) * (n_args - k)
