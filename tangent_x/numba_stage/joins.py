"""Joins Numba widens without a word, refused where the widening shows.

Numba refuses a variable holding arrays of two dtypes or ranks (see
``compile_errors``), but numbers of two types it unifies silently: ``k = 1``
under an ``if`` and ``k = 2.5`` under its ``else`` make ``k`` a float64 on
both paths, where NumPy keeps the int on its path; a float32 value on one
path and a float64 one on the other become float64.  Whether that changes
anything depends on what reads the joined value: ``x * k`` with a float64
``x`` is float64 either way, with the same numbers, but ``return k`` gives
another dtype, ``x32 * k`` another dtype too, and float32 arithmetic done
in float64 other numbers.  So each join is followed forward through
Numba's typed IR (``observed``), and refused at the user's assignments
(``refusal``) only where jit would differ from eager, in values or dtypes.

The rule, per statement reading a joined ("divergent") value ``v``: Numba
holds ``v`` in the joined type ``U``, NumPy in the path's own type ``E``
(a Python number there is weak), with the same value.  An operation whose
result dtype NumPy computes from ``E`` as Numba does from ``U`` computes
the same numbers (both cast ``v`` to that dtype first): the result is
clean.  An operation on integers that Numba does in floats (``k // 2``,
``k + 1``) has the same value in another dtype: the result is divergent in
turn, followed further.  A comparison is safe where both compare in one
dtype, or the value is an integer; so are ``int(k)``, ``float(k)``, a store
into an array (cast to its dtype), NumPy's ufuncs and the runtime helpers
derivative code calls (``_HELPERS``), judged the same way on samples of
each dtype.  Anything else that reads a divergent value (returned, put in
a tuple, passed to a function not known here, float32 arithmetic done in
float64) shows the join: it is refused.  The analysis follows values, not
paths (a value read only on the path where it has the joined type still
counts), and takes integers as exact in float64 (below 2**53).

A call of a fused elementwise kernel (``fused.py``) is followed through
its statements as Numba's own array expressions are; a comparison with a
Python number that every dtype involved holds exactly (``-0.75``, not
``0.1``) compares alike in either dtype.  An optional number (a value a
loop's ``return`` may have set) is followed as its number.  What a refusal
here leads to first: a join shown only by the return is returned in its
path's dtype (``result_dtypes``), and one shown elsewhere after an ``if``
outside loops has the paths after that ``if`` specialised apart
(``specialize/splitting.py``); only what those leave is refused.

Joins of a loop (its head, a copy in its body, the join after it) are
widened, as arrays are (``compile_errors.widened_text``): NumPy's value has
the wider type once the loop has run.  (So is the join of an ``if`` inside
a loop's body: float32 arithmetic after it runs in float64, equal to
float32's precision but not bit for bit; telling its copies from the
loop's own would refuse it, and a loop's body is not split.)  A Python number spelled
``weak_number`` unifies as NumPy promotes, so it is no join here.

Read from Numba's IR (``type_annotation.blocks`` and its ``typemap``);
the verdicts per signature, kept beside the module for signatures from
Numba's disk cache, and the refusal are ``join_verdicts``'.
``jit(vmap)``'s loop over examples checks the example's code the same way
(``lane_loop.LaneLoop``).  Functions compiled beside the code (custom_jvp
and custom_vjp rules: ``callees``) are not checked.
"""
import operator

import numpy as np
from numba.core import ir, types
from numba.core.analysis import compute_cfg_from_blocks
from numba.np.numpy_support import as_dtype

from .. import runtime
from .kernel_expressions import Weak as _Weak, kernel_expression as _kernel_expression

__all__ = ["joins", "observed"]

# Operations on integers whose value Numba's float computation keeps exactly
# (for integers below 2**53): the result is the same number in a float dtype.
_INTEGER_EXACT = {operator.add, operator.sub, operator.mul, operator.floordiv, operator.mod,
                  operator.iadd, operator.isub, operator.imul, operator.ifloordiv,
                  operator.imod, operator.neg, operator.pos, abs,
                  np.add, np.subtract, np.multiply, np.floor_divide, np.remainder,
                  np.negative, np.positive, np.absolute, np.maximum, np.minimum,
                  np.fmax, np.fmin}
_COMPARISONS = {operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne,
                np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal}


# The runtime helpers the derivative code calls on numbers, as NumPy computes
# them (``unbroadcast(g, x)`` reads only ``x``'s shape; ``add_at(acc, i, g)``
# adds ``g`` into ``acc``, in ``acc``'s dtype).
_HELPERS = {runtime.unbroadcast: runtime.unbroadcast, runtime.unreduce: runtime.unreduce,
            runtime.zeros_like: runtime.zeros_like,
            runtime.add_at: lambda acc, index, g: np.add(acc, g)}


class _Eager:
    """What NumPy holds where Numba holds a joined value: its ``dtype``
    and whether it is a Python number (``weak``)."""

    def __init__(self, dtype, weak):
        self.dtype, self.weak = np.dtype(dtype), weak

    def sample(self, ndim=0):
        if ndim:
            return np.full((1,) * ndim, 3, dtype=self.dtype)
        if self.weak:
            return {"b": True, "i": 3, "u": 3, "f": 1.5, "c": 1.5 + 0.5j}[self.dtype.kind]
        return self.dtype.type(3)

    def key(self):
        return (self.dtype.str, self.weak)


def _number_dtype(ty):
    """The dtype of a Numba number type (a literal: its type; an optional
    number, a value a loop's ``return`` may have set: its number's), or
    None."""
    if isinstance(ty, types.Optional):
        ty = ty.type
    ty = getattr(ty, "number", ty)                 # weak_number's WeakNumber
    if isinstance(ty, types.Literal):
        ty = getattr(ty, "literal_type", None)
    if isinstance(ty, (types.Number, types.Boolean)):
        try:
            return as_dtype(ty)
        except (NotImplementedError, TypeError):
            return None
    return None


def _dtype_ndim(ty):
    """(dtype, ndim) of a Numba number or array type (or an optional one), or None."""
    if isinstance(ty, types.Optional):
        ty = ty.type
    if isinstance(ty, types.Array):
        try:
            return as_dtype(ty.dtype), ty.ndim
        except (NotImplementedError, TypeError):
            return None
    dtype = _number_dtype(ty)
    return None if dtype is None else (dtype, 0)


def _definitions(blocks):
    return {st.target.name: st.value for block in blocks.values() for st in block.body
            if isinstance(st, ir.Assign)}


def _is_weak(name, ty, definitions):
    """Whether the variable ``name`` holds a Python number eagerly: a
    literal, or ``weak_number(...)``, or a copy of one."""
    seen = set()
    while True:
        if type(ty).__name__ == "WeakNumber" or isinstance(ty, types.Literal):
            return True
        value = definitions.get(name)
        if isinstance(value, ir.Const):
            return isinstance(value.value, (bool, int, float, complex))
        if not isinstance(value, ir.Var) or value.name in seen:
            return False
        seen.add(value.name)
        name = value.name


def _loop_blocks(blocks):
    """Labels of blocks inside a loop or leading into its head."""
    cfg = compute_cfg_from_blocks(blocks)
    inside = set()
    for loop in cfg.loops().values():
        inside |= set(loop.body) | set(loop.entries)
    return inside


def joins(blocks, typemap):
    """{joined variable: [(its source on one path, its line)]} for each
    variable Numba gives a number type other than one of its sources' (a
    copy ``k.2 = k.1`` ending a path, where Numba removed its phi node),
    loops' joins left out."""
    looped = _loop_blocks(blocks)
    found, loop_joined = {}, set()
    for label, block in blocks.items():
        for st in block.body:
            if not (isinstance(st, ir.Assign) and isinstance(st.value, ir.Var)):
                continue
            target, source = st.target.name, st.value.name
            a, b = typemap.get(source), typemap.get(target)
            if a is None or b is None or _number_dtype(b) is None or _number_dtype(a) is None:
                continue
            if label in looped:
                loop_joined.add(target)
            found.setdefault(target, []).append((source, st.loc.line))
    return {t: sides for t, sides in found.items() if t not in loop_joined and any(
        _number_dtype(typemap[s]) != _number_dtype(typemap[t]) and
        type(typemap[s]).__name__ != "WeakNumber" for s, _ in sides)}


def observed(blocks, typemap, tagged=()):
    """[(variable, its type on one path, the joined type, line of that
    path's assignment, line where the join shows)] for each join of
    numbers of two types (``joins``) whose widening changes a value or a
    dtype that NumPy would give (see the module doc).  ``tagged``: the
    variables returned with their path's dtype (``result_dtypes``), whose
    return shows nothing."""
    definitions = _definitions(blocks)
    safe = _tagged_returns(blocks, definitions, frozenset(tagged))
    found = []
    for target, sides in joins(blocks, typemap).items():
        eager = {}
        for source, _ in sides:
            if type(typemap[source]).__name__ == "WeakNumber":
                continue                    # unified as NumPy promotes
            dtype = _number_dtype(typemap[source])
            e = _Eager(dtype, _is_weak(source, typemap[source], definitions))
            eager[e.key()] = e
        line = _shows(target, list(eager.values()), blocks, typemap, definitions, safe)
        if line is None:
            continue
        joined = _number_dtype(typemap[target])
        source, side_line = next((s, n) for s, n in sides
                                 if _number_dtype(typemap[s]) != joined)
        found.append((target.split(".")[0], str(typemap[source]), str(typemap[target]),
                      side_line, line))
    return found + _widened(blocks, typemap, definitions, safe)


def _tagged_returns(blocks, definitions, tagged):
    """The return's statements (the tuple built, its cast) as a predicate
    of a statement and the divergent variables it reads: True where each
    of them is a version of a ``tagged`` variable."""
    returning = set()
    for block in blocks.values():
        for st in block.body:
            if isinstance(st, ir.Return):
                name = st.value.name
                while name is not None and name not in returning:
                    returning.add(name)
                    value = definitions.get(name)
                    inner = getattr(value, "value", None) if getattr(value, "op", None) == \
                        "cast" else None
                    name = inner.name if isinstance(inner, ir.Var) else None
    if not tagged:
        return lambda st, names: False
    return lambda st, names: isinstance(st, ir.Assign) and st.target.name in returning and \
        isinstance(st.value, ir.Expr) and st.value.op in ("build_tuple", "cast") and \
        all(n.split(".")[0] in tagged for n in names)


def _widened(blocks, typemap, definitions, safe):
    """The ``observed`` entries of arrays cast to a wider dtype at an ``if``
    (``widen_dtype``, put there by ``compile_errors.widened_text`` when Numba
    refused a variable holding float32 arrays on one path and float64 ones
    on the other): NumPy keeps the narrow dtype on its path, so the cast is
    refused where it shows (returned: another dtype) as a join of numbers
    is.  A loop's are not: NumPy's array has the wider dtype once the loop
    has run."""
    looped = _loop_blocks(blocks)
    found = []
    for label, block in blocks.items():
        if label in looped:
            continue
        for st in block.body:
            if not (isinstance(st, ir.Assign) and isinstance(st.value, ir.Expr) and
                    st.value.op == "call" and len(st.value.args) == 2):
                continue
            if getattr(_callee(typemap.get(st.value.func.name)), "__name__", None) != \
                    "widen_dtype":
                continue
            a, b = typemap.get(st.value.args[0].name), typemap.get(st.target.name)
            if not (isinstance(a, types.Array) and isinstance(b, types.Array)) or \
                    a.dtype == b.dtype:
                continue
            eager = [_Eager(as_dtype(a.dtype), False)]
            line = _shows(st.target.name, eager, blocks, typemap, definitions, safe)
            if line is None:
                continue
            user = next((t.target.name for t in block.body if isinstance(t, ir.Assign) and
                         isinstance(t.value, ir.Var) and t.value.name == st.target.name),
                        st.target.name)
            found.append((user.split(".")[0], str(a), str(b), st.loc.line, line))
    return found


def _shows(start, eager, blocks, typemap, definitions, safe):
    """The line of the first statement where the divergent variable
    ``start`` (NumPy's types of it: ``eager``) shows, or None (``safe``:
    whether a statement reading given divergent variables shows nothing,
    see ``_tagged_returns``)."""
    divergent = {start: eager}
    work = [start]
    while work:
        name = work.pop()
        for block in blocks.values():
            for st in block.body:
                reads = _reads(st)
                if name not in reads or safe(st, [n for n in reads if n in divergent]):
                    continue
                result = _through(st, divergent, typemap, definitions)
                if result is False:
                    return st.loc.line
                if result is None:
                    continue
                target, kinds = result
                known = {e.key() for e in divergent.get(target, [])}
                if any(e.key() not in known for e in kinds):
                    divergent[target] = list(divergent.get(target, [])) + \
                        [e for e in kinds if e.key() not in known]
                    work.append(target)
    return None


def _reads(st):
    """Names of the variables statement ``st`` reads."""
    if isinstance(st, ir.Del):
        return set()
    if isinstance(st, ir.Assign):
        value = st.value
        if isinstance(value, ir.Var):
            return {value.name}
        return {v.name for v in value.list_vars()} if isinstance(value, ir.Expr) else set()
    return {v.name for v in st.list_vars()}


def _through(st, divergent, typemap, definitions):
    """What statement ``st`` makes of the divergent values it reads:
    None (nothing divergent follows), (target, NumPy's types of it), or
    False (the join shows)."""
    if isinstance(st, (ir.SetItem, ir.StaticSetItem)):
        # stored in an array: cast to its dtype, the same number either way
        index = getattr(st, "index_var", None) if isinstance(st, ir.StaticSetItem) \
            else st.index
        stored = isinstance(typemap.get(st.target.name), types.Array) and \
            st.target.name not in divergent and \
            (index is None or index.name not in divergent)
        return None if stored else False
    if isinstance(st, ir.Branch):
        return None                         # truth of the same number
    if not isinstance(st, ir.Assign):
        return False                        # returned, printed, ...
    value, target = st.value, st.target.name
    if isinstance(value, ir.Var):
        return target, divergent[value.name]
    if not isinstance(value, ir.Expr):
        return False
    if value.op in ("binop", "inplace_binop"):
        return _operation(value.fn, [value.lhs, value.rhs], target, divergent, typemap,
                          definitions)
    if value.op == "unary":
        return _operation(value.fn, [value.value], target, divergent, typemap, definitions)
    if value.op == "call" and not value.kws and not value.vararg:
        fn = _callee(typemap.get(value.func.name))
        if fn in (bool, int, float) and len(value.args) == 1:
            return None                     # the same number, typed by the call
        if getattr(fn, "__name__", None) == "weak_scalar" and value.args and \
                value.args[0].name in divergent and \
                all(v.name not in divergent for v in value.args[1:]) and \
                all(e.weak for e in divergent[value.args[0].name]):
            return None                     # a Python number cast as NumPy would
        if isinstance(fn, np.ufunc) and fn.nout == 1 and len(value.args) == fn.nin and \
                value.func.name not in divergent:
            return _operation(fn, value.args, target, divergent, typemap, definitions)
        if fn in _HELPERS:
            return _operation(_HELPERS[fn], value.args, target, divergent, typemap, definitions)
        if getattr(fn, "__name__", None) == "widen_dtype" and value.args and \
                value.args[0].name in divergent and \
                all(v.name not in divergent for v in value.args[1:]):
            # jit's own cast to the variable's common dtype (compile_errors
            # .widened_text): NumPy holds the path's value, as before it
            return target, divergent[value.args[0].name]
        if fn is runtime.check_grad_output and all(
                e.dtype.kind in "fc" for v in value.args if v.name in divergent
                for e in divergent[v.name]):
            return None                     # a float number either way: the same check
        kernel = getattr(fn, "fused", None)
        if kernel is not None and value.func.name not in divergent:
            expr = _kernel_expression(kernel, value.args)
            if expr is not None:
                return _array_expression(expr, target, divergent, typemap, definitions)
        return False
    if value.op == "arrayexpr":
        return _array_expression(value.expr, target, divergent, typemap, definitions)
    return False


def _callee(fnty):
    """The Python function of a Numba function type, or None."""
    key = getattr(fnty, "typing_key", None)
    return key if callable(key) else None


def _operand_kinds(var, divergent, typemap, definitions):
    """[(eager sample, Numba's sample)] for the operand ``var``."""
    ty = typemap.get(var.name)
    dn = _dtype_ndim(ty)
    if dn is None:
        return None
    numba_sample = _Eager(dn[0], False).sample(dn[1])
    if var.name in divergent:
        return [(e.sample(dn[1]), numba_sample, True) for e in divergent[var.name]]
    weak = dn[1] == 0 and _is_weak(var.name, ty, definitions)
    constant = _constant(var.name, definitions) if weak else None
    if constant is not None:        # (its value: see _exact)
        return [(constant, numba_sample, False)]
    return [(_Eager(dn[0], weak).sample(dn[1]), numba_sample, False)]


def _constant(name, definitions):
    """The Python int or float the variable ``name`` holds as a constant
    (or a copy of one), or None."""
    seen = set()
    while name not in seen:
        seen.add(name)
        value = definitions.get(name)
        if isinstance(value, ir.Const):
            return value.value if type(value.value) in (int, float) else None
        if not isinstance(value, ir.Var):
            return None
        name = value.name
    return None


def _exact(combo, dtype):
    """Whether every operand of ``combo`` that is not divergent is a
    Python number ``dtype`` holds exactly: a float32 value compared with
    ``-0.75`` compares alike in float32 (NumPy) and float64 (Numba), where
    ``0.1``, rounded to float32 first, may not."""
    try:
        return all(type(e) in (int, float) and dtype.kind in "fc" and complex(dtype.type(e)) == e
                   for e, _, d in combo if not d)
    except (OverflowError, ValueError):
        return False


def _operation(fn, operands, target, divergent, typemap, definitions):
    kinds = [_operand_kinds(v, divergent, typemap, definitions) for v in operands]
    if any(k is None for k in kinds):
        return False
    return _judge(fn, kinds, _dtype_ndim(typemap.get(target)), target)


def _judge(fn, kinds, result, target):
    """None, (target, NumPy's types), or False (see ``_through``) for ``fn``
    applied to operands each given as [(eager sample, Numba's sample,
    whether divergent)], giving Numba's ``result`` (dtype, ndim)."""
    if result is None:
        return False
    combos = [[]]
    for options in kinds:
        combos = [c + [o] for c in combos for o in options]
    out = {}
    for combo in combos:
        eager = [e for e, _, _ in combo]
        # the divergent operands hold integers: Numba's floats hold them exactly
        exact = all(np.result_type(e).kind in "biu" for e, _, d in combo if d)
        with np.errstate(all="ignore"):
            try:
                got = np.result_type(fn(*eager))
                if fn in _COMPARISONS or got.kind == "b" and result[0].kind == "b":
                    comparing = np.result_type(*eager)
                    numba_comparing = np.result_type(*[n for _, n, _ in combo])
            except Exception:
                return False
        if fn in _COMPARISONS or got.kind == "b" and result[0].kind == "b":
            if comparing != numba_comparing and not (exact and comparing.kind in "biu") and \
                    not _exact(combo, comparing):
                return False
            continue
        if got == result[0]:
            continue
        if exact and fn in _INTEGER_EXACT and got.kind in "biu" and result[0].kind in "fc":
            weak = result[1] == 0 and all(isinstance(e, (bool, int)) for e in eager)
            out[(got.str, weak)] = _Eager(got, weak)
            continue
        return False
    return (target, list(out.values())) if out else None


def _array_expression(expr, target, divergent, typemap, definitions):
    """``_judge`` through each operation of Numba's fused array expression
    ``expr`` (``(op, [operands])``, operands variables, constants or
    expressions again), each operand as [(eager sample, Numba's sample,
    whether divergent)]."""
    def walk(node):
        if isinstance(node, ir.Var):
            return _operand_kinds(node, divergent, typemap, definitions)
        if isinstance(node, ir.Const):
            return [(node.value, np.asarray(node.value)[()], False)]
        if isinstance(node, _Weak):
            return [(node.value, node.value, False)]
        fn, args = node
        kinds = [walk(a) for a in args]
        if any(k is None for k in kinds):
            return None
        with np.errstate(all="ignore"):
            try:
                numba_value = fn(*[k[0][1] for k in kinds])
                if not any(d for k in kinds for _, _, d in k):
                    return [(fn(*[k[0][0] for k in kinds]), numba_value, False)]
            except Exception:
                return None
        result = (np.result_type(numba_value), np.ndim(numba_value))
        verdict = _judge(fn, kinds, result, "")
        if verdict is False:
            return None
        if verdict is None:
            return [(numba_value, numba_value, False)]
        return [(e.sample(result[1]), numba_value, True) for e in verdict[1]]
    kinds = walk(expr)
    if kinds is None:
        return False
    if not any(d for _, _, d in kinds):
        return None
    return target, [_Eager(np.result_type(e), False) for e, _, d in kinds if d]


# --- refusing, and the verdict of a cached signature ------------------------
