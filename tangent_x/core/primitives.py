"""The primitive table: which Python objects tangent_x treats as primitives.

A primitive is an operation that every transform handles by a rule (see
``tangent_x.rules``) rather than by looking inside it.  Names in user code
are resolved to Python objects first (``np.tanh``, ``numpy.tanh`` and
``from numpy import tanh`` are the same object), so the table is keyed by
object, never by spelling.  Each primitive also knows how it is *spelled*
in generated code: canonical code always writes NumPy as ``np.<name>`` and
operators as operators, whatever alias the user imported.
"""
import builtins
import math
import operator

import gast
import numpy as np

from .. import runtime as _runtime
from ..lax import collectives as _lax_collectives


class Primitive:
    """One primitive.

    kind         how it is spelled: call, binop, unaryop, compare, getitem,
                 getattr, tuple, list, dict, namedtuple, assign, index_set,
                 opaque (a callable from the environment), effect
    differentiable  False for ops whose derivative is zero or undefined
                 (comparisons, shape queries, sign, floor...): their outputs
                 carry no gradient and need no rule
    elementwise  applies to each element on its own, its result having the
                 broadcast shape of its operands: vmap batches it by lining
                 the operands' ranks up (``rules.batching_util.elementwise``)
                 and the peephole pass knows a one-operand call keeps its
                 operand's shape
    broadcasting elementwise op whose operands broadcast against each other:
                 the reverse transform sums cotangents back to each
                 operand's shape (one shared helper, ``unbroadcast``)
    view         whether the result may share memory with the first argument,
                 so that writing into one changes the other (the canonical
                 stage follows such writes, ``canonical/views.py``): False;
                 True for the structural ops (indexing, containers); for NumPy
                 functions, "always" (``transpose``), "maybe" (a view when
                 the layout allows, a copy otherwise: ``reshape``), or
                 "read_only" (a view NumPy makes read-only: ``diagonal``)
    shape_args   positions of arguments read only for their shape (the
                 ``x`` of ``unbroadcast(g, x)``): a backward loop need not
                 recompute such a value, its shape will do
    """

    def __init__(self, name, kind, fn=None, spelling=None, op=None,
                 differentiable=True, elementwise=False, broadcasting=False, view=False):
        self.name = name
        self.kind = kind
        self.fn = fn
        self.spelling = spelling
        self.op = op
        self.differentiable = differentiable
        self.elementwise = elementwise or broadcasting
        self.broadcasting = broadcasting
        self.view = view
        self.shape_args = ()

    def __repr__(self):
        return f"<primitive {self.name}>"


BY_NAME = {}
_BY_OBJECT = {}


def _key(obj):
    try:
        hash(obj)
        return obj
    except TypeError:
        return id(obj)


def register(prim, *objects):
    BY_NAME[prim.name] = prim
    for obj in objects:
        if obj is not None:
            _BY_OBJECT[_key(obj)] = prim
    return prim


def lookup(obj):
    """The primitive for a resolved Python object, or None."""
    try:
        return _BY_OBJECT.get(_key(obj))
    except TypeError:
        return None


def get(name):
    return BY_NAME[name]


# --- operators -------------------------------------------------------------

_BINOPS = [
    # name, ast op, numpy object, differentiable
    ("add", gast.Add, np.add, True),
    ("sub", gast.Sub, np.subtract, True),
    ("mul", gast.Mult, np.multiply, True),
    ("truediv", gast.Div, np.true_divide, True),
    ("floordiv", gast.FloorDiv, np.floor_divide, False),
    ("mod", gast.Mod, np.remainder, True),
    ("pow", gast.Pow, np.power, True),
    ("matmul", gast.MatMult, np.matmul, True),
]
for _name, _op, _np, _diff in _BINOPS:
    register(Primitive(_name, "binop", fn=getattr(operator, _name), op=_op,
                       differentiable=_diff, broadcasting=_name != "matmul"),
             _np, getattr(operator, _name))
register(Primitive("bitand", "binop", fn=operator.and_, op=gast.BitAnd,
                   differentiable=False, elementwise=True), np.bitwise_and, operator.and_)
register(Primitive("bitor", "binop", fn=operator.or_, op=gast.BitOr,
                   differentiable=False, elementwise=True), np.bitwise_or, operator.or_)
register(Primitive("neg", "unaryop", fn=operator.neg, op=gast.USub, elementwise=True),
         np.negative, operator.neg)
# (not elementwise: ``+x`` never reaches a transform, the canonical stage drops it)
register(Primitive("pos", "unaryop", fn=operator.pos, op=gast.UAdd),
         np.positive, operator.pos)
# (not elementwise: ``not x`` asks for one truth value)
register(Primitive("not_", "unaryop", fn=operator.not_, op=gast.Not,
                   differentiable=False), operator.not_)
register(Primitive("invert", "unaryop", fn=operator.invert, op=gast.Invert,
                   differentiable=False, elementwise=True), np.invert, operator.invert)
BINOP_BY_AST = {p.op: p for p in BY_NAME.values() if p.kind == "binop"}
UNARYOP_BY_AST = {p.op: p for p in BY_NAME.values() if p.kind == "unaryop"}

_COMPARE = [("lt", gast.Lt, np.less), ("le", gast.LtE, np.less_equal),
            ("gt", gast.Gt, np.greater), ("ge", gast.GtE, np.greater_equal),
            ("eq", gast.Eq, np.equal), ("ne", gast.NotEq, np.not_equal),
            ("is_", gast.Is, None), ("is_not", gast.IsNot, None),
            ("in_", gast.In, None), ("not_in", gast.NotIn, None)]
for _name, _op, _np in _COMPARE:
    register(Primitive(_name, "compare", fn=getattr(operator, _name, None), op=_op,
                       differentiable=False, elementwise=_np is not None), _np)
COMPARE_BY_AST = {p.op: p for p in BY_NAME.values() if p.kind == "compare"}

# --- structural ------------------------------------------------------------

register(Primitive("getitem", "getitem", fn=operator.getitem, view=True),
         operator.getitem)
register(Primitive("getattr", "getattr", view=True))
register(Primitive("tuple", "tuple", view=True))
register(Primitive("list", "list", view=True))
register(Primitive("dict", "dict", view=True))
register(Primitive("namedtuple", "namedtuple", view=True))
register(Primitive("assign", "assign", view=True))
register(Primitive("index_set", "index_set"))
register(Primitive("index_add", "index_set"))
# x.at[idx].min/max/multiply(v): every update at a repeated index combines
# (np.minimum.at / np.maximum.at / np.multiply.at on a copy), as in JAX
AT_UFUNCS = {"index_min": "minimum", "index_max": "maximum", "index_mul": "multiply"}
for _name in AT_UFUNCS:
    register(Primitive(_name, "index_set"))
register(Primitive("opaque", "opaque", differentiable=False, view=True))
register(Primitive("custom_vjp_call", "custom"))
register(Primitive("custom_jvp_call", "custom"))
register(Primitive("cond", "cond"))
register(Primitive("while", "while"))
register(Primitive("for_range", "for_range"))
register(Primitive("int_min", "call", fn=min, spelling="min", differentiable=False))
register(Primitive("effect", "effect", differentiable=False))

# --- NumPy functions -------------------------------------------------------

_ELEMENTWISE_UNARY = """abs sqrt cbrt square reciprocal exp exp2 expm1 log log2
    log10 log1p sin cos tan arcsin arccos arctan sinh cosh tanh arcsinh arccosh
    arctanh real conj""".split()
_ELEMENTWISE_BINARY = "maximum minimum arctan2 logaddexp hypot fmax fmin".split()
_OTHER_DIFF = """sum mean prod max min amax amin var std reshape transpose
    swapaxes moveaxis expand_dims squeeze concatenate stack hstack vstack
    broadcast_to tile repeat flip ravel dot outer inner tensordot trace
    einsum cumsum diagonal copy asarray array where clip full full_like
    atleast_1d atleast_2d atleast_3d""".split()
_ELEMENTWISE_NONDIFF = set("""sign floor ceil round rint trunc isnan isinf isfinite
    logical_and logical_or logical_not logical_xor""".split())
_NONDIFF = """sign floor ceil round rint trunc shape ndim size zeros_like
    ones_like zeros ones empty empty_like eye identity arange
    linspace argmax argmin argsort isnan isinf isfinite logical_and
    logical_or logical_not logical_xor all any float32 float64 int32 int64
    nonzero count_nonzero""".split()
_VIEWS = {
    **dict.fromkeys("transpose swapaxes moveaxis squeeze expand_dims flip".split(), "always"),
    # (``np.asarray``: the array itself when it has the dtype asked for;
    # ``np.atleast_2d``: the array itself, a view with new axes of it, or a
    # new array made from a number)
    # (``np.real``: the array itself when real, its real part when complex, a
    # new number made from a number)
    **dict.fromkeys("reshape ravel asarray atleast_1d atleast_2d atleast_3d real".split(),
                    "maybe"),
    **dict.fromkeys("diagonal broadcast_to".split(), "read_only"),
}


_BROADCASTING_OTHER = {"where", "clip"}


def _numpy_prim(name, differentiable=True, elementwise=False, broadcasting=False,
                spelling=None):
    obj = getattr(np, name, None)
    if obj is None:
        return None
    return register(Primitive(name, "call", fn=obj, spelling=spelling or f"np.{name}",
                              differentiable=differentiable, elementwise=elementwise,
                              broadcasting=broadcasting, view=_VIEWS.get(name, False)), obj)


for _name in _ELEMENTWISE_UNARY:
    _numpy_prim(_name, elementwise=True)
for _name in _OTHER_DIFF:
    _numpy_prim(_name, broadcasting=_name in _BROADCASTING_OTHER)
for _name in _ELEMENTWISE_BINARY:
    _numpy_prim(_name, broadcasting=True)
for _name in _NONDIFF:
    _numpy_prim(_name, differentiable=False, elementwise=_name in _ELEMENTWISE_NONDIFF)
for _name in ("solve", "inv", "det", "slogdet", "norm"):
    register(Primitive(f"linalg.{_name}", "call", fn=getattr(np.linalg, _name),
                       spelling=f"np.linalg.{_name}"), getattr(np.linalg, _name))

# Spellings users reach by other names: the same primitive.
_ALIASES = {
    "abs": [np.absolute, builtins.abs, math.fabs], "sqrt": [math.sqrt],
    "exp": [math.exp], "log": [math.log], "log10": [math.log10],
    "log2": [math.log2], "log1p": [math.log1p], "expm1": [math.expm1],
    "sin": [math.sin], "cos": [math.cos], "tan": [math.tan],
    "arcsin": [math.asin], "arccos": [math.acos], "arctan": [math.atan],
    "arctan2": [math.atan2], "hypot": [math.hypot], "sinh": [math.sinh], "cosh": [math.cosh],
    "tanh": [math.tanh], "arcsinh": [math.asinh], "arccosh": [math.acosh],
    "arctanh": [math.atanh], "pow": [builtins.pow, math.pow],
    "max": [np.amax], "min": [np.amin], "floor": [math.floor],
    "ceil": [math.ceil], "round": [np.around, builtins.round],
    "truediv": [np.divide], "conj": [np.conjugate],
}
for _name, _objs in _ALIASES.items():
    for _obj in _objs:
        _BY_OBJECT[_key(_obj)] = BY_NAME[_name]

# Builtins with no gradient that generated code may still call.
for _name in ("len", "int", "bool", "range", "isinstance", "print", "str", "list"):
    register(Primitive(f"builtins.{_name}", "call", fn=getattr(builtins, _name),
                       spelling=_name, differentiable=False),
             getattr(builtins, _name))
register(Primitive("float", "call", fn=float, spelling="float"), float)
# ``dict(d)`` / ``list(xs)`` of a container the code built: a copy (derivative
# code writes ``d_1 = dict(d); d_1[k] = v`` for a functional item update).
register(Primitive("dict_copy", "call", fn=dict, spelling="dict"))
register(Primitive("list_copy", "call", fn=list, spelling="list"))
# ``tuple(g)`` of a generator expression: the list its loop built, as a tuple
register(Primitive("list_to_tuple", "call", fn=tuple, spelling="tuple"))

NUMPY_ALIAS = "np"


register(Primitive("and_", "boolop", op=gast.And, differentiable=False))
register(Primitive("or_", "boolop", op=gast.Or, differentiable=False))

# Runtime helpers are primitives too, so generated code can be transformed again.
_RUNTIME_EFFECTS = {"check_grad_output", "check_aux_pair"}     # checks: no value
_RUNTIME_ELEMENTWISE = {"stop_gradient", "erf", "erfc", "number_lanes"}

_RUNTIME_NONDIFF = {"zeros_like", "check_grad_output", "stop_gradient", "unbound", "map_lanes",
                    "check", "check_lanes", "formatted",
                    "scan_length", "tree_def", "shaped", "is_array", "is_view_of", "extremum_share_x",
                    "extremum_share_v"}
for _name in _runtime.__all__:
    register(Primitive(_name, "effect" if _name in _RUNTIME_EFFECTS else "call",
                       fn=getattr(_runtime, _name), spelling=_name,
                       differentiable=_name not in _RUNTIME_NONDIFF | _RUNTIME_EFFECTS,
                       elementwise=_name in _RUNTIME_ELEMENTWISE),
             getattr(_runtime, _name))
RUNTIME_NAMES = frozenset(_runtime.__all__)
BY_NAME["unbroadcast"].shape_args = (1,)
BY_NAME["unreduce"].shape_args = (1,)
BY_NAME["last_writes"].shape_args = (2,)


def alias(obj, name):
    """Make ``obj`` another spelling of primitive ``name``."""
    _BY_OBJECT[_key(obj)] = BY_NAME[name]


# Modules generated code may import, by the alias their primitives are spelled with.
MODULE_ALIASES = {"tx_random": "tangent_x.random", "lax": "tangent_x.lax"}

# JAX's collectives (rules: rules/collectives.py), spelled ``lax.psum(...)``
# in generated code; ``ppermute_inverse`` is ppermute's transpose.
COLLECTIVES = ("psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter", "ppermute",
               "ppermute_inverse", "axis_index")
for _name in COLLECTIVES:
    _obj = getattr(_lax_collectives, _name)
    register(Primitive(_name, "call", fn=_obj, spelling=f"lax.{_name}",
                       differentiable=_name != "axis_index"), _obj)


def register_random(module):
    """tangent_x.random's draws are constants for differentiation (as in JAX:
    the bits do not depend on the values they are scaled by).  Samplers that
    JAX differentiates through some array argument count as differentiable,
    so that such a gradient reaches their rule (rules/random.py) instead of
    silently being zero."""
    through = getattr(module, "DIFFERENTIABLE_IN_JAX", {})
    for name in module.__all__:
        obj = getattr(module, name)
        if callable(obj):
            register(Primitive(f"random.{name}", "call", fn=obj, spelling=f"tx_random.{name}",
                               differentiable=name in through), obj)
