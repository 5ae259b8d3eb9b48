"""A Jacobian as plain source, so that another transform can transform it.

jacfwd and jacrev run Python driver code (one-hot bases, stacking) around
generated derivatives; that code is no user function and cannot be parsed.
When a Jacobian is itself transformed (``jacfwd(jacfwd(f))``, ``grad`` of a
function calling ``jacrev(f)``, ``jvp`` of it...), the transform reads this
module's function instead: for arguments like the ones seen, the Jacobian
written as ``vmap`` of ``jvp`` over the rows of an identity matrix, moved
and reshaped into JAX's shape ``out + in``.  Both Jacobians are the same
matrix, so jacrev uses the same form.  It is written for one differentiated
array (or number) and one array output; other structures get a located
TransformError saying what to write instead.
"""
import linecache

import numpy as np

from .. import tree_util
from ..errors import TransformError
from .derivatives import jvp
from .transformed import Unspecialized
from .vmap import vmap

_COLUMN = '''\
def {column}({params}, tangent):
    return jvp(fun, ({params},), ({tangents}))[1]
'''


class _Specialised:
    """The source form for one structure of arguments."""

    def __init__(self, function, text):
        self.function = function
        self.text = text


class _Pending:
    """Arguments seen by an eager call, kept (as copies: the caller may
    update its arrays later) until a transform asks for their source form."""

    def __init__(self, args):
        self.args = _copies(args)


class JacobianSource:
    """``__tangent_x__`` of a Jacobian driver: its plain-source form, per
    argument structure.  An eager call only notes its arguments (``note``);
    the form is built when a transform or ``tx.source`` asks for it
    (``generated``, ``specialize``), so a plain call of a Jacobian runs
    ``fun`` no more than its own computation needs."""

    def __init__(self, which, fun, argnums, call_site, tuple_argnums=False):
        self._which = which
        self._fun = fun
        self._argnums = argnums
        self._tuple_argnums = tuple_argnums     # argnums=(0,): a tuple of one
        self._call_site = call_site
        self._cache = {}
        self._latest = None
        self._built = 0

    @property
    def generated(self):
        if self._latest is None:
            raise Unspecialized(f"the source form of {self._which} depends on the arguments' "
                                f"shapes: call it once first (or pass example_args)")
        if isinstance(self._latest, _Pending):
            self._latest = self._resolve(self._key(self._latest.args), self._latest.args)
        if isinstance(self._latest, TransformError):
            raise self._latest
        return self._latest

    @property
    def function(self):
        return self.generated.function

    def note(self, *args):
        """An eager call's arguments: the source form is for arguments like
        these from now on, built only when asked for."""
        key = self._key(args)
        if key not in self._cache:
            self._cache[key] = _Pending(args)
        self._latest = self._cache[key]

    def specialize(self, *args):
        """The source form for arguments like ``args`` (or a located
        refusal, raised when a transform asks for it)."""
        self._latest = self._resolve(self._key(args), args)
        return self._latest

    @staticmethod
    def _key(args):
        # a container's key has its leaves' shapes too: the form has one
        # column block per leaf, sized by its shape
        return tuple((type(a), np.shape(a), np.asarray(a).dtype.kind) if not
                     isinstance(a, (dict, list, tuple)) else
                     (tree_util.tree_structure(a),
                      tuple((np.shape(x), np.asarray(x).dtype.kind)
                            for x in tree_util.tree_leaves(a)))
                     for a in args)

    def _resolve(self, key, args):
        """The cached form for ``key``, built from ``args`` if not yet."""
        entry = self._cache.get(key)
        if entry is None or isinstance(entry, _Pending):
            try:
                self._cache[key] = self._build(args)
            except TransformError as exc:
                self._cache[key] = exc
            except Exception as exc:     # the eager Jacobian still runs; a transform of it refuses
                self._cache[key] = self._refuse(f"its source form fails here "
                                                f"({type(exc).__name__}: {exc})")
        return self._cache[key]

    def _refuse(self, why):
        name = getattr(self._fun, "__name__", "f")
        return TransformError(
            f"{self._which}({name}) is transformed again, and {why}",
            self._call_site,
            "differentiate a function of one array returning one array (pack the "
            "arguments into one array and unpack inside), or transform the gradient "
            "instead: tx.jacfwd(tx.grad(g)) for a scalar g (tx.hessian)")

    def _build(self, args):
        """The source: one column function per differentiated argument and
        leaf (its tangent that leaf's one-hot row, zeros elsewhere), each
        vmapped over an identity's rows, then each output leaf's columns
        moved last and reshaped, in JAX's nesting: output structure, then
        (for a tuple ``argnums``) one entry per argument, then the
        argument's structure."""
        nums = sorted({i % len(args) for i in self._argnums}) if args else [0]
        inner = getattr(self._fun, "__tangent_x__", None)
        if isinstance(inner, JacobianSource) and (
                len(inner._argnums) > 1 or inner._tuple_argnums or
                any(isinstance(a, (dict, list, tuple)) for a in args)):
            # (jacrev of such a hessian fails in vmap of vjp of the nested
            # vmaps: not yet; one array argument works)
            raise self._refuse("it is a Jacobian of a Jacobian of several arguments or of "
                               "pytrees, whose source form is not made yet")
        for i, arg in enumerate(args):
            for _, leaf in _leaves(arg):
                if np.asarray(leaf).dtype.kind != "f":
                    raise self._refuse(f"its source form takes float arrays and numbers, "
                                       f"and containers (dict, list, tuple) of them "
                                       f"(argument {i} holds {type(leaf).__name__})")
        # copies: the function may update its arguments in place, and the
        # caller's arrays must come out as they went in
        out = self._fun(*_copies(args))
        for _, leaf in _leaves(out):
            if np.asarray(leaf).dtype.kind != "f":
                raise self._refuse(f"its source form returns float arrays (this function "
                                   f"returns a {type(leaf).__name__})")
        params = [f"p{i}" for i in range(len(args))]
        name = "".join(c if c.isalnum() else "_" for c in getattr(self._fun, "__name__", "f"))
        lines, body, columns = [], [], {}
        for a in nums:
            for j, (path, leaf) in enumerate(_leaves(args[a])):
                column = f"column_{a}_{j}_of_{name}"
                tangents = [_render(arg, lambda p, _, i=i: "tangent" if (i, p) == (a, path)
                                    else f"np.zeros_like(p{i}{p})")
                            for i, arg in enumerate(args)]
                lines.append(_COLUMN.format(column=column, params=", ".join(params),
                                            tangents="".join(t + ", " for t in tangents)))
                shape = np.shape(leaf)
                n = int(np.prod(shape, dtype=int))
                body.append(f"    columns_{a}_{j} = vmap({column}, in_axes="
                            f"{(None,) * len(args) + (0,)})({', '.join(params)}, "
                            f"np.reshape(np.eye({n}), {(n,) + shape}))")
                columns[(a, path)] = (f"columns_{a}_{j}", n, shape)

        def block(out_path, out_leaf):
            def entry(a):
                def leaf_jacobian(in_path, _):
                    var, n, in_shape = columns[(a, in_path)]
                    out_shape = np.shape(out_leaf)
                    size = int(np.prod(out_shape, dtype=int))
                    return (f"np.reshape(np.moveaxis(np.reshape({var}{out_path}, ({n}, {size})),"
                            f" 0, -1), {out_shape + in_shape})")
                return _render(args[a], leaf_jacobian)
            if len(self._argnums) == 1 and not self._tuple_argnums:
                return entry(nums[0])
            return "(" + "".join(entry(i % len(args)) + ", " for i in self._argnums) + ")"
        result = _render(out, block)
        text = "".join(line + "\n\n" for line in lines) + \
            f"def {self._which}_of_{name}({', '.join(params)}):\n" + \
            "\n".join(body) + f"\n    return {result}\n"
        filename = f"<tangent_x {self._which} source of {name} {id(self)} {self._built}>"
        self._built += 1
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
        namespace = {"np": np, "jvp": jvp, "vmap": vmap, "fun": self._fun}
        exec(compile(text, filename, "exec"), namespace)
        function = namespace[f"{self._which}_of_{name}"]
        function(*_copies(args))    # one run specialises the vmaps inside, as JAX traces
        return _Specialised(function, text)


def _leaves(tree, path=""):
    """[(the source text indexing a leaf, the leaf)] of a pytree of dicts,
    lists and tuples, in the order jax.tree_util flattens it (dict keys
    sorted)."""
    if isinstance(tree, dict):
        return [pl for k in sorted(tree) for pl in _leaves(tree[k], f"{path}[{k!r}]")]
    if isinstance(tree, (list, tuple)):
        return [pl for i, v in enumerate(tree) for pl in _leaves(v, f"{path}[{i}]")]
    return [(path, tree)]


def _render(tree, leaf_text, path=""):
    """Source text building ``tree``'s structure with ``leaf_text(path,
    leaf)`` at each leaf."""
    if isinstance(tree, dict):
        return "{" + ", ".join(f"{k!r}: {_render(v, leaf_text, f'{path}[{k!r}]')}"
                               for k, v in tree.items()) + "}"
    if isinstance(tree, (list, tuple)):
        items = [_render(v, leaf_text, f"{path}[{i}]") for i, v in enumerate(tree)]
        if isinstance(tree, list):
            return "[" + ", ".join(items) + "]"
        return "(" + "".join(i + ", " for i in items) + ")"
    return leaf_text(path, tree)


def _copies(args):
    """Arguments to run the function on: it may update arrays in place, and
    the caller's must come out as they went in."""
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
