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

A gradient's cotangents (``x_bar``) are followed more loosely, in code
whose every result is a gradient cast to its argument's dtype after the
call (``cast``: ``jit(grad)``).  There a cotangent's dtype is how the
reverse pass added it up, not the program's: a float64 cotangent added
in place into a float32 accumulator stays float32 on one path and
promotes out of place on another (fuzz seed 620391), where JAX gives
every cotangent its primal's dtype.  So float arithmetic that Numba does
on a cotangent in a wider float dtype keeps it divergent (followed
further) rather than showing, and its return shows nothing: jit's
gradient differs from eager's by float32's rounding of intermediate
sums, never in dtype.  Anything else it reaches (a comparison, ``int``
or ``bool`` of it, an unknown call) still shows.  Only cotangents:
derivative code reads them into other cotangents and stores them into
cotangent arrays, never into a test, so a store is not followed further;
a primal's float32 arithmetic done in float64 may reach a test (a
relu's mask in the backward pass) and shows as before.

Read from Numba's IR (``type_annotation.blocks`` and its ``typemap``);
the verdicts per signature, kept beside the module for signatures from
Numba's disk cache, and the refusal are ``join_verdicts``'.
``jit(vmap)``'s loop over examples checks the example's code the same way
(``lane_loop.LaneLoop``).  Functions compiled beside the code (custom_jvp
and custom_vjp rules: ``callees``) are not checked.
"""
import re

import numpy as np
from numba.core import ir, types
from numba.core.analysis import compute_cfg_from_blocks
from numba.np.numpy_support import as_dtype

from .. import runtime
from .join_operations import Eager, array_expression, is_weak, number_dtype, operation
from .kernel_expressions import kernel_expression as _kernel_expression

__all__ = ["joins", "observed"]

# a cotangent's variable in derivative code (``x_bar``, ``x_bar_2``)
_COTANGENT = re.compile(r"_bar(_\d+)*$")


# The runtime helpers the derivative code calls on numbers, as NumPy computes
# them (``unbroadcast(g, x)`` reads only ``x``'s shape; ``add_at(acc, i, g)``
# adds ``g`` into ``acc``, in ``acc``'s dtype; ``tree_add`` of two arrays or
# numbers is ``a + b``, and a container is no number: not followed here).
_HELPERS = {runtime.unbroadcast: runtime.unbroadcast, runtime.unreduce: runtime.unreduce,
            runtime.zeros_like: runtime.zeros_like,
            runtime.add_at: lambda acc, index, g: np.add(acc, g),
            runtime.tree_add: np.add}


def _definitions(blocks):
    return {st.target.name: st.value for block in blocks.values() for st in block.body
            if isinstance(st, ir.Assign)}


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
            if a is None or b is None or number_dtype(b) is None or number_dtype(a) is None:
                continue
            if label in looped:
                loop_joined.add(target)
            found.setdefault(target, []).append((source, st.loc.line))
    return {t: sides for t, sides in found.items() if t not in loop_joined and any(
        number_dtype(typemap[s]) != number_dtype(typemap[t]) and
        type(typemap[s]).__name__ != "WeakNumber" for s, _ in sides)}


def observed(blocks, typemap, tagged=(), cast=False):
    """[(variable, its type on one path, the joined type, line of that
    path's assignment, line where the join shows)] for each join of
    numbers of two types (``joins``) whose widening changes a value or a
    dtype that NumPy would give (see the module doc).  ``tagged``: the
    variables returned with their path's dtype (``result_dtypes``), whose
    return shows nothing; ``cast``: every result is a gradient, cast to
    its argument's dtype after the call, so a cotangent's return shows
    nothing either."""
    definitions = _definitions(blocks)
    safe = _tagged_returns(blocks, definitions, frozenset(tagged), cast)
    found = []
    for target, sides in joins(blocks, typemap).items():
        eager = {}
        for source, _ in sides:
            if type(typemap[source]).__name__ == "WeakNumber":
                continue                    # unified as NumPy promotes
            dtype = number_dtype(typemap[source])
            e = Eager(dtype, is_weak(source, typemap[source], definitions),
                       cast and _COTANGENT.search(target.split(".")[0]) is not None)
            eager[e.key()] = e
        line = _shows(target, list(eager.values()), blocks, typemap, definitions, safe)
        if line is None:
            continue
        joined = number_dtype(typemap[target])
        source, side_line = next((s, n) for s, n in sides
                                 if number_dtype(typemap[s]) != joined)
        found.append((target.split(".")[0], str(typemap[source]), str(typemap[target]),
                      side_line, line))
    return found + _widened(blocks, typemap, definitions, safe, cast)


def _tagged_returns(blocks, definitions, tagged, cast=False):
    """The return's statements (the tuple built, its cast) as a predicate
    of a statement and the divergent variables it reads ({name: NumPy's
    types}): True where each of them is a version of a ``tagged``
    variable, or (``cast``) a cotangent's value."""
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
    if not tagged and not cast:
        return lambda st, names: False
    return lambda st, names: isinstance(st, ir.Assign) and st.target.name in returning and \
        isinstance(st.value, ir.Expr) and st.value.op in ("build_tuple", "cast") and \
        all(n.split(".")[0] in tagged or cast and all(e.cotangent for e in kinds)
            for n, kinds in names.items())


def _widened(blocks, typemap, definitions, safe, cast):
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
            user = next((t.target.name for t in block.body if isinstance(t, ir.Assign) and
                         isinstance(t.value, ir.Var) and t.value.name == st.target.name),
                        st.target.name)
            eager = [Eager(as_dtype(a.dtype), False,
                            cast and _COTANGENT.search(user.split(".")[0]) is not None)]
            line = _shows(st.target.name, eager, blocks, typemap, definitions, safe)
            if line is None:
                continue
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
                if name not in reads or safe(st, {n: divergent[n] for n in reads
                                                  if n in divergent}):
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
        return operation(value.fn, [value.lhs, value.rhs], target, divergent, typemap,
                          definitions)
    if value.op == "unary":
        return operation(value.fn, [value.value], target, divergent, typemap, definitions)
    if value.op == "call" and not value.kws and not value.vararg:
        fn = _callee(typemap.get(value.func.name))
        fn = getattr(fn, "numpy_fn", fn)        # vmath's np.tanh ... is the ufunc's
        if fn in (bool, int, float) and len(value.args) == 1:
            kinds = divergent.get(value.args[0].name, ())
            if any(e.cotangent for e in kinds):
                # a cotangent's value in another precision: not the same number
                return (target, kinds) if fn is float else False
            return None                     # the same number, typed by the call
        if getattr(fn, "__name__", None) == "weak_scalar" and value.args and \
                value.args[0].name in divergent and \
                all(v.name not in divergent for v in value.args[1:]) and \
                all(e.weak for e in divergent[value.args[0].name]):
            return None                     # a Python number cast as NumPy would
        if isinstance(fn, np.ufunc) and fn.nout == 1 and len(value.args) == fn.nin and \
                value.func.name not in divergent:
            return operation(fn, value.args, target, divergent, typemap, definitions)
        if fn in _HELPERS:
            return operation(_HELPERS[fn], value.args, target, divergent, typemap, definitions)
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
                return array_expression(expr, target, divergent, typemap, definitions)
        return False
    if value.op == "arrayexpr":
        return array_expression(value.expr, target, divergent, typemap, definitions)
    return False


def _callee(fnty):
    """The Python function of a Numba function type, or None."""
    key = getattr(fnty, "typing_key", None)
    return key if callable(key) else None
