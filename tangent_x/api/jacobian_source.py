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

_TEMPLATE = '''\
def column_of_{name}({params}, tangent):
    return jvp(fun, ({params},), ({tangents},))[1]


def {which}_of_{name}({params}):
    basis = np.reshape(np.eye({n}), {basis_shape})
    columns = vmap(column_of_{name}, in_axes={in_axes})({params}, basis)
    flat = np.reshape(columns, ({n}, {out_size}))
    return np.reshape(np.moveaxis(flat, 0, -1), {result_shape})
'''


class _Specialised:
    """The source form for one structure of arguments."""

    def __init__(self, function, text):
        self.function = function
        self.text = text


class JacobianSource:
    """``__tangent_x__`` of a Jacobian driver: its plain-source form, built
    per argument structure (as vmap's is: ``specialize`` on each call)."""

    def __init__(self, which, fun, argnums, call_site):
        self._which = which
        self._fun = fun
        self._argnums = argnums
        self._call_site = call_site
        self._cache = {}
        self._latest = None

    @property
    def generated(self):
        if self._latest is None:
            raise Unspecialized(f"the source form of {self._which} depends on the arguments' "
                                f"shapes: call it once first (or pass example_args)")
        if isinstance(self._latest, TransformError):
            raise self._latest
        return self._latest

    @property
    def function(self):
        return self.generated.function

    def specialize(self, *args):
        """The source form for arguments like ``args`` (or a located
        refusal, raised when a transform asks for it)."""
        key = tuple((type(a), np.shape(a), np.asarray(a).dtype.kind) if not
                    isinstance(a, (dict, list, tuple)) else tree_util.tree_structure(a)
                    for a in args)
        if key not in self._cache:
            try:
                self._cache[key] = self._build(args)
            except TransformError as exc:
                self._cache[key] = exc
            except Exception as exc:     # the eager Jacobian still runs; a transform of it refuses
                self._cache[key] = self._refuse(f"its source form fails here "
                                                f"({type(exc).__name__}: {exc})")
        self._latest = self._cache[key]
        return self._latest

    def _refuse(self, why):
        name = getattr(self._fun, "__name__", "f")
        return TransformError(
            f"{self._which}({name}) is transformed again, and {why}",
            self._call_site,
            f"differentiate a function of one array returning one array (pack the "
            f"arguments into one array and unpack inside), or transform the gradient "
            f"instead: tx.jacfwd(tx.grad(g)) for a scalar g (tx.hessian)")

    def _build(self, args):
        nums = self._argnums
        if len(nums) != 1:
            raise self._refuse("its source form takes one differentiated argument "
                               f"(argnums={nums})")
        a = nums[0] % len(args) if args else 0
        for i, arg in enumerate(args):
            if isinstance(arg, (dict, list, tuple)) or np.asarray(arg).dtype.kind != "f":
                raise self._refuse(f"its source form takes float arrays and numbers "
                                   f"(argument {i} is {type(arg).__name__})")
        # copies: the function may update its arguments in place, and the
        # caller's arrays must come out as they went in
        out = self._fun(*_copies(args))
        if isinstance(out, (dict, list, tuple)):
            raise self._refuse("its source form returns one array (this function "
                               f"returns a {type(out).__name__})")
        in_shape, out_shape = np.shape(args[a]), np.shape(out)
        n = int(np.prod(in_shape, dtype=int))
        params = [f"p{i}" for i in range(len(args))]
        tangents = ["tangent" if i == a else f"np.zeros_like({p})"
                    for i, p in enumerate(params)]
        name = "".join(c if c.isalnum() else "_" for c in getattr(self._fun, "__name__", "f"))
        text = _TEMPLATE.format(
            name=name, which=self._which, params=", ".join(params),
            tangents=", ".join(tangents),
            n=n, basis_shape=(n,) + in_shape,
            in_axes=(None,) * len(args) + (0,),
            out_size=int(np.prod(out_shape, dtype=int)),
            result_shape=out_shape + in_shape)
        filename = f"<tangent_x {self._which} source of {name} {id(self)} {len(self._cache)}>"
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
        namespace = {"np": np, "jvp": jvp, "vmap": vmap, "fun": self._fun}
        exec(compile(text, filename, "exec"), namespace)
        function = namespace[f"{self._which}_of_{name}"]
        function(*_copies(args))    # one run specialises the vmap inside, as JAX traces
        return _Specialised(function, text)


def _copies(args):
    """Arguments to run the function on: it may update arrays in place, and
    the caller's must come out as they went in."""
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
