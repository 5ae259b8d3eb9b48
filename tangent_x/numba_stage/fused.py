"""The compiled side of elementwise fusion (``fusion`` writes the calls):
``elementwise`` and ``elementwise_sum``, the decorators of the fused
kernels in numba-stage modules.

A kernel is the group's statements as a scalar function::

    @elementwise
    def elementwise_plus_x_times_x(x):
        x_times_x = x * x
        times_x = x * 2.0
        return x_times_x + times_x

Called from compiled code, the decorated name chooses, from Numba's types
of the arguments at that call, between two implementations:

- **fused**: one pass over the broadcast shape with no temporaries: a
  loop (flat when nothing broadcasts and every array is C-ordered, else a
  nest) with the group's statements written into its body, on one element
  of each array, writing into one fresh C-ordered result
  (``elementwise``), or summing (``elementwise_sum``, for ``np.sum(...)``
  of the group);
- **as written**: the statements on the arguments themselves, exactly the
  code before fusion.

Why the statements are written into the loop: a kernel costs compile time
on every first call, while fusing pays only on large arrays, and every
Numba function is its own compile (pipeline, LLVM module, and its code
linked into each caller and optimised again there).  A loop calling a
jitted scalar function, plus a sum's driver, was two or three such
functions per kernel; written into the loop, a kernel is one.  (Not
inlined into the caller: Numba compiles an ``inline="always"`` overload in
full to type it and then inlines it, which costs more.  ``fusion`` fuses
only chains long enough to pay.)  The loop runs under Numba's default
error model (a float division by zero raises), so in it ``a / b`` and
``a ** b`` are written as ``np.true_divide`` and ``np.power`` on numbers:
the ufuncs' own loops, which are what the arrays' operators run per
element (inf and NaN, no ``ZeroDivisionError``, the same rounding).

Fused only where it is provably the same result: every argument is an
array of at least one axis or a number (integer or float; not bool, not
complex), at least one an array, and Numba's type inference gives every
variable and temporary of the body the same element type when the body
runs on the arrays as when it runs on their elements (when the arrays are
float and the numbers float or int64, that holds for every operation,
so only the numbers are type-inferred: one inference, not two -- but not
for integers next to float32, see below, nor for a helper given an array,
``weak_scalar(acc, x)``, which casts a number but not an array)
(``int32 * int32`` is an ``int32`` array but an ``int64`` number;
``bool + bool`` a ``bool`` array but an ``int``; a float32 array times
an int64 argument or constant is float32, the numbers' product float64:
those run as written).  An integer raised to an integer power runs as
written too (NumPy refuses negative exponents).
The result's shape is the arguments' broadcast shape (each statement
broadcasts, and every argument reaches the result), checked as NumPy does.
NaN and infinities propagate as in NumPy (see above: divisions and powers
are the ufuncs').

Summation order (``elementwise_sum``): NumPy sums pairwise, and fewer
than 8 elements one by one in C order from 0 in their own dtype, which the
fused sum does too (bit for bit: a branch on a sum at a tie goes NumPy's
way).  From 8 elements the fused sum
adds each innermost row into a partial sum (sequentially) and the partials
into the total, accumulating floats in float64 (float32 results are
rounded once at the end) and integers in int64 (wrapping as NumPy's does).
Its error bound is (row length + number of rows) * eps * sum(|terms|),
against NumPy's log2(n) * eps * ...: values agree to a relative ~1e-12 on
float64 data of millions of elements (tests/test_fusion.py checks them
against NumPy with a tolerance), not bit for bit; a float32 sum whose
float32 partial sums overflow in NumPy (3e38 + 3e38 - 3e38: inf) is
finite here (3e38).  The result's dtype is NumPy's: the element type for
float32/float64/int64 elements (other element types run as written).

Large results (4 MiB and up) are allocated with transparent huge pages
advised (``madvise``, Linux): a fresh array's first touch then faults once
per 2 MiB instead of once per 4 KiB, which is what NumPy's allocator does
and what made a one-pass Numba loop slower than NumPy's three passes.
"""
import ast
import inspect
import operator
import sys
import textwrap

import numpy as np
from numba import types
from llvmlite import ir
from numba.core import cgutils, compiler, typed_passes
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.errors import NumbaError
from numba.core.registry import cpu_target
from numba.extending import intrinsic, overload

from .kernels.allocation import empty

__all__ = ["elementwise", "elementwise_sum"]

_HUGE = 4 << 20            # bytes from which a result is advised huge pages
_MADV_HUGEPAGE = 14


@intrinsic
def _madvise(typingctx, start, length):
    """``madvise(start, length, MADV_HUGEPAGE)`` (libc, by its symbol: no
    ctypes pointer, so the caller stays cacheable); the result is ignored."""
    def codegen(context, builder, sig, args):
        fnty = ir.FunctionType(ir.IntType(32), [ir.IntType(8).as_pointer(),
                                                 context.get_value_type(types.intp),
                                                 ir.IntType(32)])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "madvise")
        pointer = builder.inttoptr(args[0], ir.IntType(8).as_pointer())
        builder.call(fn, [pointer, args[1], ir.Constant(ir.IntType(32), _MADV_HUGEPAGE)])
        return context.get_dummy_value()
    if start != types.intp or length != types.intp:
        return None
    return types.void(types.intp, types.intp), codegen


def _advise_huge_lines(q, out):
    """Lines advising transparent huge pages for ``out``'s whole pages (a
    hint: the contents and the result do not depend on it), written into
    the implementation: a jitted helper would be one more compiled function
    per kernel.  None off Linux."""
    if not sys.platform.startswith("linux"):
        return []            # pragma: no cover - not Linux
    return [f"    {q}nbytes = {out}.size * {out}.itemsize",
            f"    if {q}nbytes >= {_HUGE}:",
            f"        {q}p = {q}np.intp({out}.ctypes.data)",
            f"        {q}start = ({q}p + {q}np.intp(4095)) & {q}np.intp(-4096)",
            f"        {q}end = ({q}p + {q}np.intp({q}nbytes)) & {q}np.intp(-4096)",
            f"        if {q}end > {q}start:",
            f"            {q}madvise({q}start, {q}end - {q}start)"]


def elementwise(fn):
    """The fused map of the statements in ``fn`` (see the module doc)."""
    return _Fused(fn, False).stub


def elementwise_sum(fn):
    """``np.sum`` of the fused map of ``fn``, in one pass."""
    return _Fused(fn, True).stub


class _Fused:
    def __init__(self, fn, reduce):
        self.fn, self.reduce = fn, reduce
        self.params = list(fn.__code__.co_varnames[:fn.__code__.co_argcount])
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
        kernel = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
        names = {n.id for n in ast.walk(kernel) if isinstance(n, ast.Name)} | set(self.params)
        self.q = q = _prefix(names | set(fn.__globals__))
        # the statements as written (``_element_form`` gives them for one element)
        self.written = [ast.unparse(s) for s in kernel.body[:-1]]
        self.written_result = ast.unparse(kernel.body[-1].value)
        self.targets = [s.targets[0].id for s in kernel.body[:-1]]
        self.trees = [s.value for s in kernel.body[:-1]] + [kernel.body[-1].value]
        # the implementations run in the kernel's module (its globals are
        # complete only once the module is loaded), with these names added
        self.env = fn.__globals__
        self.env.update({f"{q}np": np, f"{q}empty": empty, f"{q}madvise": _madvise})
        args = ", ".join(self.params)
        namespace = {f"{q}fn": fn, f"{q}np": np, f"{q}choose": self.choose}
        body = f"{q}np.sum({q}fn({args}))" if reduce else f"{q}fn({args})"
        one = "," if len(self.params) == 1 else ""
        exec(f"def {fn.__name__}({args}):\n    return {body}\n"
             f"def {q}typer({args}):\n    return {q}choose(({args}{one}))\n", namespace)
        self.stub = namespace[fn.__name__]
        self.stub.__doc__ = fn.__doc__
        self.stub.__wrapped__ = fn
        self.stub.fused = self      # (its statements, for joins)
        overload(self.stub)(namespace[f"{q}typer"])

    # -- which implementation --------------------------------------------------

    def choose(self, argtypes):
        element = self.fusable(argtypes)
        if element is None:
            return self.as_written()
        return self.summed(argtypes, element) if self.reduce else self.mapped(argtypes, element)

    def fusable(self, argtypes):
        """The scalar result type if fusing is the same result, else None."""
        if not any(isinstance(t, types.Array) for t in argtypes):
            return None
        elements = []
        for t in argtypes:
            if isinstance(t, types.Array):
                if t.ndim == 0:
                    return None
                t = t.dtype
            if isinstance(t, types.Boolean) or not isinstance(t, (types.Integer, types.Float)):
                return None
            elements.append(t)
        floats = all(isinstance(_element(t), types.Float) for t in argtypes
                     if isinstance(t, types.Array)) and \
            all(t in (types.float64, types.float32, types.int64) for t in argtypes
                if not isinstance(t, types.Array))
        single = any(_element(t) == types.float32 for t in argtypes)
        # a helper on an array (``weak_scalar(acc, x)``: the array as it
        # is) may treat its element (a number: cast) otherwise
        arrays = self._arrays(argtypes)
        helped = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and
                     _holds_array(n, arrays) for tree in self.trees for n in ast.walk(tree))
        try:
            on_numbers, result_n = _infer(self.fn, elements)
            if floats and not helped and isinstance(result_n, types.Float) and not (
                    single and any(isinstance(types.unliteral(t), types.Integer)
                                   for t in on_numbers.values())):
                # float arrays, float or int64 numbers: an operation's type on
                # their elements is its type on them (see the module doc), so
                # the numbers' types decide -- but a float32 array times an
                # int64 (argument, constant) is float32, the numbers' float64
                return None if self.reduce and result_n not in _CAST else result_n
            on_arrays, result_a = _infer(self.fn, argtypes)
        except (NumbaError, _IntegerPower):  # it does not type one way or the other
            return None
        if not _same_elements(on_arrays, on_numbers):
            return None
        if not isinstance(result_a, types.Array) or result_a.dtype != result_n or \
                result_a.ndim != max(t.ndim for t in argtypes if isinstance(t, types.Array)):
            return None
        if self.reduce and result_n not in (types.float64, types.float32, types.int64):
            return None
        return result_n

    def _define(self, lines):
        return _function("\n".join(lines) + "\n", "impl", self.env)

    def as_written(self):
        """The statements themselves, exactly the code before fusion."""
        params, q = ", ".join(self.params), self.q
        result = f"{q}np.sum({self.written_result})" if self.reduce else self.written_result
        return self._define([f"def impl({params}):"] + [f"    {s}" for s in self.written] +
                            [f"    return {result}"])

    # -- fused ------------------------------------------------------------------

    def _element_form(self, argtypes):
        """(statements, result) for one element (array parameters read as
        their elements' variables): ``/`` and ``**`` on an array's elements
        as NumPy's ufuncs (the arrays' own per-element loops: inf/NaN, no
        ZeroDivisionError), on numbers alone as written (``np.true_divide``
        of a float32 and an int64 is a float32, their ``/`` a float64)."""
        names = {p: f"{self.q}e{k}" for k, (p, t) in enumerate(zip(self.params, argtypes))
                 if isinstance(t, types.Array)}
        ufuncs = _Ufuncs(self.q, self._arrays(argtypes))
        stmts = [ast.unparse(_Rename(names).visit(ufuncs.visit(ast.parse(line).body[0])))
                 for line in self.written]
        result = ufuncs.visit(ast.parse(self.written_result, mode="eval").body)
        return stmts, ast.unparse(_Rename(names).visit(result))

    def _arrays(self, argtypes):
        """The parameters and variables that hold an array's element."""
        arrays = {p for p, t in zip(self.params, argtypes) if isinstance(t, types.Array)}
        for target, value in zip(self.targets, self.trees):
            if _holds_array(value, arrays):
                arrays.add(target)
        return arrays

    def _element_lines(self, argtypes, indent, flat, stmts):
        """Lines of one element: each array parameter read (``flat``: by the
        flat index, else by the broadcast indices), then ``stmts`` (of
        ``_element_form``)."""
        q, ndim = self.q, _ndim(argtypes)
        lines = []
        for k, (p, t) in enumerate(zip(self.params, argtypes)):
            if not isinstance(t, types.Array):
                continue
            if flat:
                read = f"{q}flat_{k}[{q}j]"
            else:
                lead = ndim - t.ndim
                read = f"{p}[" + ", ".join(f"{q}i{d + lead} * {q}step_{k}_{d}"
                                           for d in range(t.ndim)) + "]"
            lines.append(f"{indent}{q}e{k} = {read}")
        return lines + [f"{indent}{s}" for s in stmts]

    def _nest(self, argtypes, indent, stmts):
        """A loop per axis of the broadcast shape, in C order, around one
        element's lines; returns them and the innermost indent."""
        q, lines = self.q, []
        for d in range(_ndim(argtypes)):
            lines.append(f"{indent}for {q}i{d} in range({q}shape[{d}]):")
            indent += "    "
        return lines + self._element_lines(argtypes, indent, False, stmts), indent

    def _steps(self, argtypes):
        q = self.q
        lines = []
        for k, (p, t) in enumerate(zip(self.params, argtypes)):
            if isinstance(t, types.Array):
                # a size-1 axis is read at 0 along the broadcast axis: multiply by 0
                lines += [f"    {q}step_{k}_{d} = 0 if {p}.shape[{d}] == 1 else 1"
                          for d in range(t.ndim)]
        return lines

    def _flat_test(self, argtypes):
        """The condition for the flat loop (C-ordered, nothing broadcasts:
        checked at run time), or None when the layouts exclude it."""
        arrays = [(k, p, t) for k, (p, t) in enumerate(zip(self.params, argtypes))
                  if isinstance(t, types.Array)]
        if not all(t.layout == "C" and t.ndim == _ndim(argtypes) for _, _, t in arrays):
            return None, []
        q = self.q
        return " and ".join(f"{p}.shape == {q}shape" for _, p, _ in arrays), \
            [f"        {q}flat_{k} = {p}.reshape(-1)" for k, p, _ in arrays]

    def mapped(self, argtypes, element):
        """The loop writing each element's value into one fresh C-ordered
        result."""
        q, ndim = self.q, _ndim(argtypes)
        stmts, result = self._element_form(argtypes)
        lines = [f"def impl({', '.join(self.params)}):"] + \
            _shape_lines(self.params, argtypes, q) + [
            f"    {q}out = {q}empty({q}shape, {q}np.{element})"] + \
            _advise_huge_lines(q, f"{q}out")
        test, flats = self._flat_test(argtypes)
        if test is not None:
            lines += [f"    if {test}:", f"        {q}o = {q}out.reshape(-1)"] + flats + [
                f"        for {q}j in range({q}o.size):"] + \
                self._element_lines(argtypes, "            ", True, stmts) + [
                f"            {q}o[{q}j] = {result}",
                f"        return {q}out"]
        lines += self._steps(argtypes)
        nest, indent = self._nest(argtypes, "    ", stmts)
        lines += nest
        lines.append(f"{indent}{q}out[{', '.join(f'{q}i{d}' for d in range(ndim))}] = {result}")
        lines.append(f"    return {q}out")
        return self._define(lines)

    def summed(self, argtypes, element):
        """The loop nest summing each element's value: each innermost row
        into a partial sum, the partials into the total (floats in float64)."""
        q, ndim = self.q, _ndim(argtypes)
        floating = isinstance(element, types.Float)
        zero = "0.0" if floating else "0"
        stmts, result = self._element_form(argtypes)
        term = f"{q}np.float64({result})" if floating else result
        cast = f"{q}np.{element}"
        lines = [f"def impl({', '.join(self.params)}):"] + \
            _shape_lines(self.params, argtypes, q) + [f"    {q}total = {zero}"]
        lines += self._small_sum(argtypes, stmts, result, cast)
        test, flats = self._flat_test(argtypes)
        if test is not None:
            rows = " * ".join(f"{q}shape[{d}]" for d in range(ndim - 1)) or "1"
            lines += [f"    if {test}:", f"        {q}n = {q}shape[{ndim - 1}]"] + flats + [
                f"        for {q}r in range({rows}):",
                f"            {q}part = {zero}",
                f"            for {q}c in range({q}n):",
                f"                {q}j = {q}r * {q}n + {q}c"] + \
                self._element_lines(argtypes, "                ", True, stmts) + [
                f"                {q}part += {term}",
                f"            {q}total += {q}part",
                f"        return {cast}({q}total)"]
        lines += self._steps(argtypes)
        indent = "    "
        for d in range(ndim - 1):
            lines.append(f"{indent}for {q}i{d} in range({q}shape[{d}]):")
            indent += "    "
        lines.append(f"{indent}{q}part = {zero}")
        lines.append(f"{indent}for {q}i{ndim - 1} in range({q}shape[{ndim - 1}]):")
        lines += self._element_lines(argtypes, indent + "    ", False, stmts)
        lines.append(f"{indent}    {q}part += {term}")
        lines.append(f"{indent}{q}total += {q}part")
        lines.append(f"    return {cast}({q}total)")
        return self._define(lines)


    def _small_sum(self, argtypes, stmts, result, cast):
        """Fewer than 8 elements: NumPy adds them one by one in C order into
        an accumulator of their type that starts at 0 (its pairwise sum's
        base case), so the sum is NumPy's bit for bit -- where a comparison
        at a tie decides a branch (``np.sum(np.ones((2, 3)) * -0.04) <
        -0.24`` is true in NumPy, and was false with row partial sums:
        fuzz seed 620121)."""
        q, ndim = self.q, _ndim(argtypes)
        size = " * ".join(f"{q}shape[{d}]" for d in range(ndim))
        lines = [f"    if {size} < 8:", f"        {q}small = {cast}(0)"]
        lines += ["    " + line for line in self._steps(argtypes)]
        nest, indent = self._nest(argtypes, "        ", stmts)
        lines += nest
        lines.append(f"{indent}{q}small += {result}")
        lines.append(f"        return {q}small")
        return lines


_CAST = {types.float32: "np.float32", types.float64: "np.float64", types.int64: "np.int64"}


def _ndim(argtypes):
    return max(t.ndim for t in argtypes if isinstance(t, types.Array))


def _prefix(names):
    """A prefix for the implementation's own names that no name of the
    kernel starts with."""
    prefix = "_fz_"
    while any(n.startswith(prefix) for n in names):
        prefix += "_"
    return prefix


class _Ufuncs(ast.NodeTransformer):
    """``a / b`` -> ``np.true_divide(a, b)``, ``a ** b`` -> ``np.power(a, b)``
    where an operand holds an array's element (``arrays``: the names that
    do)."""

    def __init__(self, q, arrays):
        self.q, self.arrays = q, arrays

    def visit_BinOp(self, node):
        array = _holds_array(node, self.arrays)
        self.generic_visit(node)
        name = {ast.Div: "true_divide", ast.Pow: "power"}.get(type(node.op))
        if name is None or not array:
            return node
        return ast.Call(func=ast.Attribute(ast.Name(f"{self.q}np", ast.Load()), name, ast.Load()),
                        args=[node.left, node.right], keywords=[])


def _holds_array(node, arrays):
    """Whether the value of ``node`` holds an array's element (``arrays``:
    the names that do).  A call's does when its first argument's does
    (``vmath.exp(a)``, ``promoted(a, b)``; ``weak_scalar(0.5, a)`` is a number)."""
    if isinstance(node, ast.Name):
        return node.id in arrays
    if isinstance(node, ast.Call):
        return bool(node.args) and _holds_array(node.args[0], arrays)
    return any(_holds_array(n, arrays) for n in ast.iter_child_nodes(node))


class _Rename(ast.NodeTransformer):
    def __init__(self, names):
        self.names = names

    def visit_Name(self, node):
        if node.id in self.names:
            return ast.copy_location(ast.Name(self.names[node.id], node.ctx), node)
        return node


def _shape_lines(params, argtypes, q):
    """Lines computing ``{q}shape``, the NumPy broadcast of the array
    arguments' shapes (ValueError when they do not broadcast); ``q``: the
    prefix of the names they assign."""
    arrays = [(p, t.ndim) for p, t in zip(params, argtypes) if isinstance(t, types.Array)]
    ndim = max(n for _, n in arrays)
    lines = []
    for d in range(ndim):
        lines.append(f"    {q}s{d} = 1")
        for p, n in arrays:
            k = d - (ndim - n)
            if k < 0:
                continue
            lines += [f"    {q}v = {p}.shape[{k}]",
                      f"    if {q}v != 1:",
                      f"        if {q}s{d} != 1 and {q}s{d} != {q}v:",
                      "            raise ValueError('operands could not be broadcast together')",
                      f"        {q}s{d} = {q}v"]
    lines.append(f"    {q}shape = (" + "".join(f"{q}s{d}, " for d in range(ndim)) + ")")
    return lines


class _IntegerPower(Exception):
    """An integer raised to an integer power: run as written."""


@register_pass(mutates_CFG=False, analysis_only=True)
class _Typed(FunctionPass):
    """The last pass of ``_TypesOnly``: it ends the pipeline with the types."""
    _name = "tangent_x_types_only"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        state.cr = (state.typemap, state.return_type, state.calltypes)
        return False


class _TypesOnly(compiler.CompilerBase):
    """Numba's front end and type inference, and nothing compiled."""
    def define_pipelines(self):
        pm = compiler.DefaultPassBuilder.define_untyped_pipeline(self.state)
        pm.add_pass(typed_passes.NopythonTypeInference, "nopython frontend")
        pm.add_pass(_Typed, "the types")
        pm.finalize()
        return [pm]


def _infer(fn, argtypes):
    """(type map, return type) of ``fn`` for ``argtypes`` by Numba's type
    inference alone (nothing is compiled)."""
    flags = compiler.Flags()
    flags.nrt = True
    pipeline = _TypesOnly(cpu_target.typing_context, cpu_target.target_context, None,
                          tuple(argtypes), None, flags, {})
    typemap, restype, calltypes = pipeline.compile_extra(fn)
    for expr, sig in calltypes.items():
        if getattr(expr, "op", None) in ("binop", "inplace_binop") and \
                getattr(expr, "fn", None) is operator.pow and sig is not None and \
                all(isinstance(_element(a), types.Integer) for a in sig.args):
            raise _IntegerPower()       # NumPy refuses negative exponents
    return typemap, restype


def _element(t):
    return t.dtype if isinstance(t, types.Array) else t


def _same_elements(on_arrays, on_numbers):
    for name, t in on_numbers.items():
        a = on_arrays.get(name)
        if a is None:
            return False
        if isinstance(a, types.Array):
            a = a.dtype
        if types.unliteral(a) != types.unliteral(t):
            return False
    return True


def _function(source, name, env):
    """The function ``name`` defined by ``source`` with globals ``env``
    (which its definition does not change)."""
    code = compile(source, f"<tangent_x fused {name}>", "exec")
    local = {}
    exec(code, env, local)
    return local[name]
