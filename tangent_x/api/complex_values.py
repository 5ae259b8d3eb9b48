"""Derivatives of complex values are refused, with a located error.

*Decision.*  tangent_x differentiates real values only.  JAX has one
convention for complex numbers (``grad`` of a real-valued ``f`` of ``z = x +
iy`` is ``df/dx - i df/dy``, e.g. ``2 * conj(z)`` for ``|z|**2``), and getting
it right needs every rule that can see a complex value (``abs``, ``real``,
``conj``, the linear algebra, ...) written and tested for it.  Rather than
give some derivatives in that convention and others in another, every
derivative transform (grad, value_and_grad, jvp, vjp, jacfwd, jacrev,
hessian) refuses complex values where they can be seen:

- arguments: any complex leaf among the arguments, tangents or cotangents;
- the code: complex constants (``1j``), complex globals or closure values,
  complex dtypes (``np.complex128``, ``dtype=complex``, ``"complex64"``);
- results: a complex output of ``grad`` (as JAX, which asks for
  ``holomorphic=True``), or a complex cotangent reaching a real argument.

``vmap`` and ``jit`` alone take complex values as before.  To differentiate
a function of complex numbers, write it on their real and imaginary parts
as separate real arrays (``|z|**2`` is ``x**2 + y**2``).
"""
import gast
import numpy as np

from ..core import ir
from .. import tree_paths, tree_util
from ..core.arguments import _parameter_names, any_leaf
from ..errors import TransformError, call_site

HINT = ("tangent_x differentiates real values only (it refuses complex ones rather than "
        "risk a convention that differs from JAX's): write the function on the real and "
        "imaginary parts as separate real arrays, e.g. |z|**2 as x**2 + y**2; vmap and "
        "jit alone accept complex values")

_SHOWN_KIND = {"vjp_split": "vjp"}


_COMPLEX_NAMES = {"complex", "complex64", "complex128", "complex256", "csingle", "cdouble",
                  "clongdouble", "c8", "c16", "c32", "F", "D", "G"}


def is_complex(value, dtype_position=False):
    """A complex number, array, dtype or type (also inside a tuple, list or
    dict of them); in a dtype position, also a complex dtype's name."""
    if isinstance(value, (complex, np.complexfloating)):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind == "c"
    if isinstance(value, np.dtype):
        return value.kind == "c"
    if isinstance(value, type):
        return issubclass(value, (complex, np.complexfloating))
    if isinstance(value, str):
        return dtype_position and value in _COMPLEX_NAMES
    if isinstance(value, (tuple, list)):
        return any(is_complex(v, dtype_position) for v in value)
    if isinstance(value, dict):
        return any(is_complex(v, dtype_position) for v in value.values())
    return False


def refuse_in_code(fn, kind):
    """Raise a TransformError at the first line of the canonical function
    ``fn`` that brings in a complex value (see the module doc)."""
    shown = _SHOWN_KIND.get(kind, kind)

    def fail(what, origin):
        raise TransformError(f"{shown} of {fn.name} computes with complex values: {what}",
                             origin or fn.origin, HINT)

    def check_atom(atom, origin, dtype_position=False):
        for node in ir.walk(atom):
            if isinstance(node, gast.Constant) and is_complex(node.value, dtype_position):
                fail(f"the constant {node.value!r} is complex", origin)
            if isinstance(node, gast.Name) and node.id in fn.env and \
                    is_complex(fn.env[node.id]):
                fail(f"'{node.id}' is complex", origin)
            if isinstance(node, gast.Attribute) and ir.is_name(node.value, "np") and \
                    is_complex(getattr(np, node.attr, None)):
                fail(f"np.{node.attr} is a complex type", origin)

    for atom in list(fn.defaults) + list(fn.kw_defaults.values()):
        check_atom(atom, fn.origin)
    for eqn in ir.all_eqns(fn.eqns):
        for atom in eqn.args:
            check_atom(atom, eqn.origin)
        for key, atom in eqn.kwargs.items():
            check_atom(atom, eqn.origin, dtype_position=key == "dtype")
        for key, value in eqn.params.items():
            if key not in ("branches", "cond", "body") and is_complex(value):
                fail(f"the value {value!r} is complex", eqn.origin)
    check_atom(fn.result, fn.origin)


def refuse_in_arguments(kind, fun, args, what="argument"):
    """Raise a TransformError, located at the user's call, naming the first
    argument with a complex leaf."""
    if not _any_complex(args):
        return
    shown = _SHOWN_KIND.get(kind, kind)
    names = _parameter_names(fun) if what == "argument" else []
    for i, value in enumerate(args):
        leaves, treedef = tree_util.tree_flatten(value)
        for path, leaf in zip(tree_paths._leaf_paths(treedef), leaves):
            if is_complex(leaf):
                label = f"{what} {i}" + (f" ({names[i]})" if i < len(names) else "")
                raise TransformError(
                    f"{shown}({getattr(fun, '__name__', 'f')}): {label}"
                    f"{' at ' + path if path else ''} is complex "
                    f"(dtype {np.result_type(leaf)})", call_site(), HINT)


def _complex_leaf(leaf):
    kind = type(leaf)
    if kind is np.ndarray:
        return leaf.dtype.kind == "c"
    if kind is float or kind is int or leaf is None:
        return False
    return is_complex(leaf) and not isinstance(leaf, (type, str, np.dtype))


def _any_complex(tree):
    return any_leaf(tree, _complex_leaf)
