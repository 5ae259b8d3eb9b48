"""The canonical form: a flat list of equations, one primitive each.

Canonical code is ANF with unique names, like a jaxpr that is still Python:
every equation binds at most one fresh name to one primitive applied to
*atoms* (names, constants, ``np.<constant>``, and static index structures
such as ``i, :, 0``).  Transforms read and write this form; ``spell`` turns
an equation back into Python statements, so every stage is printable and
runnable.
"""
import gast

from . import primitives as P
from .builders import assign, call, const, dotted, name, store  # noqa: F401 (ir.name, ir.const)

_AST = gast.AST


def clone(node):
    """A deep copy of an AST: its fields, position attributes and origin
    (much faster than copy.deepcopy for gast nodes; every transform clones
    the statements it edits, so this is hot: it reads and writes the nodes'
    ``__dict__``, where ``ast`` keeps fields, directly)."""
    kind = type(node)
    if kind is list:
        return [clone(n) for n in node]
    if not isinstance(node, _AST):
        return node
    new = kind.__new__(kind)
    old = node.__dict__
    copied = new.__dict__
    for field in kind._fields:
        value = old.get(field)
        if value.__class__ is list:
            value = [clone(n) if isinstance(n, _AST) else n for n in value]
        elif isinstance(value, _AST):
            value = clone(value)
        copied[field] = value
    for attr in kind._attributes:
        if attr in old:
            copied[attr] = old[attr]
        elif hasattr(kind, attr):         # (``end_lineno``: a class default)
            copied[attr] = getattr(kind, attr)
    origin = old.get(ORIGIN)
    if origin is not None:
        copied[ORIGIN] = origin
    return new


ORIGIN = "tx_origin"      # the attribute of a lowered statement naming its Origin (lower.py)


def children(node):
    """The nodes directly under ``node``, in ``gast.iter_child_nodes``'s
    order (a list, built without its generators: walks are hot)."""
    found = []
    for field in node._fields:
        v = getattr(node, field, None)
        if v.__class__ is list:
            for x in v:
                if isinstance(x, _AST):
                    found.append(x)
        elif isinstance(v, _AST):
            found.append(v)
    return found


def walk(node):
    """Every node under ``node`` (itself included), in ``gast.walk``'s order
    (breadth first), several times faster: every pass walks statements."""
    found = [node]
    append = found.append
    ast_type = _AST
    for n in found:               # grows as it goes: each node's children
        for field in n._fields:
            v = getattr(n, field, None)
            if v.__class__ is list:
                for x in v:
                    if isinstance(x, ast_type):
                        append(x)
            elif isinstance(v, ast_type):
                append(v)
    return found


def names_atoms(eqn):
    """The Name atoms an equation passes (positional and keyword)."""
    return [a for a in list(eqn.args) + list(eqn.kwargs.values()) if is_name(a)]


def is_name(node, id_=None):
    return isinstance(node, gast.Name) and (id_ is None or node.id == id_)


def names_in(node):
    """Names an atom (or any expression) reads."""
    if node is None:
        return set()
    return {n.id for n in walk_names(node) if not isinstance(n.ctx, gast.Store)}


def walk_names(node):
    """Every Name node under ``node`` (see ``walk``)."""
    name_type = gast.Name
    return [n for n in walk(node) if type(n) is name_type]


class Eqn:
    """``outs = prim(*args, **kwargs)`` with static ``params``."""

    __slots__ = ("outs", "prim", "args", "kwargs", "params", "origin", "_reads")

    def __init__(self, outs, prim, args, kwargs=None, params=None, origin=None):
        self.outs = list(outs)
        self.prim = prim
        self.args = list(args)
        self.kwargs = dict(kwargs or {})
        self.params = dict(params or {})
        self.origin = origin
        self._reads = None

    @property
    def out(self):
        return self.outs[0] if self.outs else None

    def reads(self):
        """Names this equation reads, including the free names of its bodies."""
        if self._reads is None:
            self._reads = frozenset(self._compute_reads())
        return self._reads

    def _compute_reads(self):
        found = set()
        for a in list(self.args) + list(self.kwargs.values()):
            found |= names_in(a)
        bound = set(self.params.get("carry", ())) | {self.params.get("index")}
        for body in self.bodies():
            found |= body.free_reads() - bound
        return found

    def bodies(self):
        params = self.params
        out = list(params.get("branches", ()))
        for key in ("cond", "body"):
            if key in params:
                out.append(params[key])
        return out

    def __repr__(self):
        return f"Eqn({self.outs} = {self.prim.name} {[gast.dump(a) for a in self.args]})"


class Body:
    """A nested block of a compound equation: equations plus result atoms."""

    __slots__ = ("eqns", "results")

    def __init__(self, eqns, results):
        self.eqns = list(eqns)
        self.results = list(results)

    def defined(self):
        found = set()
        for eqn in self.eqns:
            found.update(eqn.outs)
            for body in eqn.bodies():
                found |= body.defined()
            if "index" in eqn.params:
                found.add(eqn.params["index"])
        return found

    def free_reads(self):
        found = set()
        for eqn in self.eqns:
            found |= eqn.reads()
        for r in self.results:
            found |= names_in(r)
        return found - self.defined()

    def __repr__(self):
        return f"Body({len(self.eqns)} eqns -> {len(self.results)} results)"


def kept_for_effect(eqn):
    """A call whose result nothing reads, kept for what it does (``print``)."""
    return not eqn.outs and eqn.prim.kind in ("call", "opaque")


def all_eqns(eqns):
    """Every equation, nested bodies included (pre-order)."""
    for eqn in eqns:
        yield eqn
        for body in eqn.bodies():
            yield from all_eqns(body.eqns)


class Function:
    """A canonical function: parameters, equations, result atom, environment.

    ``env`` maps the free names of the generated code (user globals and
    closure values, user classes) to their objects; it is bound into the
    generated module's globals when the module is loaded.
    """

    def __init__(self, name, params, defaults, eqns, result, env, origin, filename,
                 kwonly=(), kw_defaults=None):
        self.name = name
        self.params = params          # list of parameter names (keyword-only ones last)
        self.defaults = defaults      # list of atoms for the trailing positional params
        self.kwonly = list(kwonly)    # the keyword-only parameters, after ``*``
        self.kw_defaults = dict(kw_defaults or {})    # keyword-only name -> atom
        self.eqns = eqns
        self.result = result          # atom
        self.env = env
        self.origin = origin
        self.filename = filename

    def default_names(self):
        """The environment names the signature's defaults read (an array
        default is a name bound when the generated module loads)."""
        names = set()
        for atom in list(self.defaults) + list(self.kw_defaults.values()):
            names |= names_in(atom)
        return names

    @property
    def positional(self):
        """The parameters that take positional arguments (``argnums``
        index these, as in JAX)."""
        return [p for p in self.params if p not in self.kwonly]


# --- spelling: equations back to Python -------------------------------------

def _index_for_subscript(idx):
    """Index atoms store slices as ``slice(a, b)`` calls; subscripts want ``a:b``."""
    def fix(node):
        if (isinstance(node, gast.Call) and is_name(node.func, "slice")
                and len(node.args) <= 3):
            parts = list(node.args) + [None] * (3 - len(node.args))
            if len(node.args) == 1:
                parts = [None, node.args[0], None]
            parts = [None if (p is not None and isinstance(p, gast.Constant) and p.value is None) else p
                     for p in parts]
            return gast.Slice(lower=parts[0], upper=parts[1], step=parts[2])
        if isinstance(node, gast.Tuple):
            return gast.Tuple(elts=[fix(e) for e in node.elts], ctx=gast.Load())
        return node
    return fix(idx)


def slice_call(lower, upper, step):
    """A static slice as an atom: ``slice(lower, upper, step)``."""
    args = [lower or const(None), upper or const(None)]
    if step is not None:
        args.append(step)
    return gast.Call(func=name("slice"), args=args, keywords=[])


def expr_of(eqn):
    """The right-hand side of an equation as one Python expression."""
    prim, args = eqn.prim, eqn.args
    kind = prim.kind
    if kind == "binop":
        return gast.BinOp(left=args[0], op=prim.op(), right=args[1])
    if kind == "unaryop":
        return gast.UnaryOp(op=prim.op(), operand=args[0])
    if kind == "compare":
        return gast.Compare(left=args[0], ops=[prim.op()], comparators=[args[1]])
    if kind == "boolop":
        return gast.BoolOp(op=prim.op(), values=list(args))
    if kind == "getitem":
        return gast.Subscript(value=args[0], slice=_index_for_subscript(args[1]),
                              ctx=gast.Load())
    if kind == "getattr":
        return gast.Attribute(value=args[0], attr=eqn.params["attr"], ctx=gast.Load())
    if kind == "tuple":
        return gast.Tuple(elts=list(args), ctx=gast.Load())
    if kind == "list":
        return gast.List(elts=list(args), ctx=gast.Load())
    if kind == "dict":
        return gast.Dict(keys=[const(k) for k in eqn.params["keys"]], values=list(args))
    if kind == "assign":
        return args[0]
    if kind in ("call", "namedtuple", "opaque", "effect", "custom"):
        func = (dotted(prim.spelling) if prim.spelling and "callee" not in eqn.params
                else name(eqn.params["callee"]))
        return call(func, *args, **eqn.kwargs)
    raise NotImplementedError(kind)


def spell(eqn):
    """Python statements for one equation."""
    if eqn.prim.kind == "index_set":
        x, idx, v = eqn.args
        out = eqn.out
        if eqn.params.get("container") and eqn.prim.name == "index_set":
            # one call that reads back as the same functional update
            return [assign(out, call("with_item", x, idx, v))]
        copy_stmt = assign(out, call("np.copy", x))
        ufunc = {"index_add": "add", **P.AT_UFUNCS}.get(eqn.prim.name)
        if ufunc is not None:     # repeated indices accumulate
            update = gast.Expr(value=call(f"np.{ufunc}.at", name(out), idx, v))
        else:
            update = assign(gast.Subscript(value=name(out), slice=_index_for_subscript(idx),
                                           ctx=gast.Store()), v)
        return [copy_stmt, update]
    value = expr_of(eqn)
    if not eqn.outs:
        return [gast.Expr(value=value)]
    if len(eqn.outs) == 1:
        return [assign(eqn.out, value)]
    return [assign(gast.Tuple(elts=[store(o) for o in eqn.outs], ctx=gast.Store()), value)]


def ast_text(node):
    try:
        return gast.unparse(node) if hasattr(gast, "unparse") else \
            __import__("ast").unparse(gast.gast_to_ast(node))
    except Exception:   # pragma: no cover - only used in messages
        return type(node).__name__
