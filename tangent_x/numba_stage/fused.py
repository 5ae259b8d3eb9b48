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
  nest) calling the scalar function and writing into one fresh C-ordered
  result (``elementwise``), or a loop nest summing the scalar function's
  values (``elementwise_sum``, for ``np.sum(...)`` of the group).  The
  loop is the implementation itself: per signature, two functions compile
  (it and the scalar function), not a ufunc and a wrapper;
- **as written**: the statements run on the arguments themselves, exactly
  the code before fusion (the body is the same text).

Fused only where it is provably the same result: every argument is an
array of at least one axis or a number (integer or float; not bool, not
complex), at least one an array, and Numba's type inference gives every
variable and temporary of the body the same element type when the body
runs on the arrays as when it runs on their elements (when the arrays are
float and the numbers float or int64, that holds for every operation, so
only the numbers are type-inferred: one inference, not two) (``int32 * int32`` is
an ``int32`` array but an ``int64`` number; ``bool + bool`` a ``bool``
array but an ``int``: those run as written).  An integer raised to an
integer power runs as written too (NumPy refuses negative exponents).
The result's shape is the arguments' broadcast shape (each statement
broadcasts, and every argument reaches the result), checked as NumPy does.
NaN and infinities propagate as in NumPy: the scalar function is compiled
with Numba's ``numpy`` error model (a float division by zero is inf/NaN,
not ``ZeroDivisionError``).

Summation order (``elementwise_sum``): NumPy sums pairwise; the fused sum
adds each innermost row into a partial sum (sequentially) and the partials
into the total, accumulating floats in float64 (float32 results are
rounded once at the end) and integers in int64 (wrapping as NumPy's does).
Its error bound is (row length + number of rows) * eps * sum(|terms|),
against NumPy's log2(n) * eps * ...: values agree to a relative ~1e-12 on
float64 data of millions of elements (tests/test_fusion.py checks them
against NumPy with a tolerance), not bit for bit.  The result's dtype is
NumPy's: the element type for float32/float64/int64 elements (other
element types run as written).

Large results (4 MiB and up) are allocated with transparent huge pages
advised (``madvise``, Linux): a fresh array's first touch then faults once
per 2 MiB instead of once per 4 KiB, which is what NumPy's allocator does
and what made a one-pass Numba loop slower than NumPy's three passes.
"""
import operator
import sys

import numpy as np
import numba
from numba import types
from llvmlite import ir
from numba.core import cgutils, compiler, typed_passes
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.errors import NumbaError
from numba.core.registry import cpu_target
from numba.extending import intrinsic, overload, register_jitable

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


if sys.platform.startswith("linux"):
    @register_jitable
    def advise_huge(out):
        """Advise transparent huge pages for ``out``'s whole pages (a hint:
        the contents and the result do not depend on it)."""
        n = out.size * out.itemsize
        if n >= _HUGE:
            p = np.intp(out.ctypes.data)
            start = (p + np.intp(4095)) & np.intp(-4096)
            end = (p + np.intp(n)) & np.intp(-4096)
            if end > start:
                _madvise(start, end - start)
else:                      # pragma: no cover - not Linux
    @register_jitable
    def advise_huge(out):
        pass


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
        self.plain = register_jitable(fn)
        # the scalar function the fused loops call: NumPy's error model, as
        # arithmetic on arrays has (a float division by zero is inf, not an error)
        self.scalar = numba.njit(error_model="numpy")(fn)
        self.drivers = {}
        args = ", ".join(self.params)
        q = self._prefix()
        namespace = {f"{q}fn": fn, f"{q}np": np, f"{q}choose": self.choose}
        body = f"{q}np.sum({q}fn({args}))" if reduce else f"{q}fn({args})"
        one = "," if len(self.params) == 1 else ""
        exec(f"def {fn.__name__}({args}):\n    return {body}\n"
             f"def {q}typer({args}):\n    return {q}choose(({args}{one}))\n", namespace)
        self.stub = namespace[fn.__name__]
        self.stub.__doc__ = fn.__doc__
        self.stub.__wrapped__ = fn
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
        try:
            on_numbers, result_n = _infer(self.fn, elements)
            if floats and isinstance(result_n, types.Float):
                # float arrays, and float or int64 numbers: an operation's
                # element type on them is its type on their elements (no
                # narrow integer or boolean widens as a number), so one
                # type inference (on the numbers) decides
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

    def _prefix(self):
        """A prefix for the names of generated implementations that no
        parameter starts with (an implementation takes the parameters by
        their names, so its own names must not shadow them)."""
        prefix = "_fz_"
        while any(p.startswith(prefix) for p in self.params):
            prefix += "_"
        return prefix

    def as_written(self):
        if not self.reduce:
            # the statements themselves as the implementation: one function
            # to compile, not a wrapper calling them
            return self.fn
        params, q = ", ".join(self.params), self._prefix()
        body = f"{q}np.sum({q}plain({params}))" if self.reduce else f"{q}plain({params})"
        return _function(f"def impl({params}):\n    return {body}\n", "impl",
                         {f"{q}plain": self.plain, f"{q}np": np})

    # -- fused ------------------------------------------------------------------

    def mapped(self, argtypes, element):
        """The loop writing the kernel's values into one fresh C-ordered
        result: one function compiled with the scalar kernel (no ufunc)."""
        params, q = ", ".join(self.params), self._prefix()
        ndim = max(t.ndim for t in argtypes if isinstance(t, types.Array))
        arrays = [(p, t) for p, t in zip(self.params, argtypes) if isinstance(t, types.Array)]
        lines = [f"def impl({params}):"] + _shape_lines(self.params, argtypes, q) + [
            f"    {q}out = {q}empty({q}shape, {q}dtype)",
            f"    {q}advise_huge({q}out)"]
        if all(t.layout == "C" and t.ndim == ndim for _, t in arrays):
            # nothing broadcasts (checked at run time) and C-ordered: one flat loop
            flat = {p: f"{q}flat_{k}[{q}j]" for k, (p, _) in enumerate(arrays)}
            lines += [f"    if {' and '.join(f'{p}.shape == {q}shape' for p, _ in arrays)}:",
                      f"        {q}o = {q}out.reshape(-1)"] + [
                      f"        {q}flat_{k} = {p}.reshape(-1)" for k, (p, _) in enumerate(arrays)
                      ] + [
                      f"        for {q}j in range({q}o.size):",
                      f"            {q}o[{q}j] = {q}kernel("
                      f"{', '.join(flat.get(p, p) for p in self.params)})",
                      f"        return {q}out"]
        reads = []
        for k, (p, t) in enumerate(zip(self.params, argtypes)):
            if not isinstance(t, types.Array):
                reads.append(p)
                continue
            lead = ndim - t.ndim
            lines += [f"    {q}step_{k}_{d} = 0 if {p}.shape[{d}] == 1 else 1"
                      for d in range(t.ndim)]
            reads.append(f"{p}[" + ", ".join(f"{q}i{d + lead} * {q}step_{k}_{d}"
                                              for d in range(t.ndim)) + "]")
        indent = "    "
        for d in range(ndim):
            lines.append(f"{indent}for {q}i{d} in range({q}shape[{d}]):")
            indent += "    "
        lines.append(f"{indent}{q}out[{', '.join(f'{q}i{d}' for d in range(ndim))}] = "
                     f"{q}kernel({', '.join(reads)})")
        lines.append(f"    return {q}out")
        return _function("\n".join(lines) + "\n", "impl", {
            f"{q}empty": empty, f"{q}advise_huge": advise_huge, f"{q}kernel": self.scalar,
            f"{q}dtype": np.dtype(str(element))})

    def summed(self, argtypes, element):
        key = tuple(argtypes)
        if key not in self.drivers:
            self.drivers[key] = self.driver(argtypes, element)
        params, q = ", ".join(self.params), self._prefix()
        lines = [f"def impl({params}):"] + _shape_lines(self.params, argtypes, q) + [
            f"    return {q}driver({params}, {q}shape)"]
        return _function("\n".join(lines) + "\n", "impl", {f"{q}driver": self.drivers[key]})

    def driver(self, argtypes, element):
        """The loop nest summing the kernel over the broadcast shape, compiled
        with the numpy error model (as the kernel is).  Its parameters are
        ``a0, a1, ...`` and ``shape``: every name in it is its own."""
        ndim = max(t.ndim for t in argtypes if isinstance(t, types.Array))
        floating = isinstance(element, types.Float)
        zero = "0.0" if floating else "0"
        names = [f"a{i}" for i in range(len(argtypes))]
        lines = [f"def driver({', '.join(names)}, shape):", f"    total = {zero}"]
        arrays = [(p, t) for p, t in zip(names, argtypes) if isinstance(t, types.Array)]
        if all(t.layout == "C" and t.ndim == ndim for _, t in arrays):
            # no broadcasting and C-ordered at run time: the same sums, in the
            # same order, over the flat data (a loop LLVM vectorises)
            flat = {p: f"{p}_flat[r * n + j]" for p, _ in arrays}
            rows = " * ".join(f"shape[{d}]" for d in range(ndim - 1)) or "1"
            term = f"kernel({', '.join(flat.get(p, p) for p in names)})"
            lines += [f"    if {' and '.join(f'{p}.shape == shape' for p, _ in arrays)}:",
                      f"        n = shape[{ndim - 1}]"] + [
                      f"        {p}_flat = {p}.ravel()" for p, _ in arrays] + [
                      f"        for r in range({rows}):",
                      f"            part = {zero}",
                      "            for j in range(n):",
                      f"                part += {'np.float64(' + term + ')' if floating else term}",
                      "            total += part",
                      f"        return {_CAST[element]}(total)"]
        reads = []
        for p, t in zip(names, argtypes):
            if not isinstance(t, types.Array):
                reads.append(p)
                continue
            lead = ndim - t.ndim
            # a size-1 axis is read at 0 along the broadcast axis: multiply by 0
            lines += [f"    {p}_step{k} = 0 if {p}.shape[{k}] == 1 else 1"
                      for k in range(t.ndim)]
            reads.append(f"{p}[" + ", ".join(f"i{k + lead} * {p}_step{k}"
                                              for k in range(t.ndim)) + "]")
        indent = "    "
        for d in range(ndim - 1):
            lines.append(f"{indent}for i{d} in range(shape[{d}]):")
            indent += "    "
        lines.append(f"{indent}part = {zero}")
        lines.append(f"{indent}for i{ndim - 1} in range(shape[{ndim - 1}]):")
        term = f"kernel({', '.join(reads)})"
        lines.append(f"{indent}    part += {'np.float64(' + term + ')' if floating else term}")
        lines.append(f"{indent}total += part")
        lines.append(f"    return {_CAST[element]}(total)")
        python = _function("\n".join(lines) + "\n", "driver", {"kernel": self.scalar, "np": np})
        return numba.njit(error_model="numpy")(python)


_CAST = {types.float32: "np.float32", types.float64: "np.float64", types.int64: "np.int64"}


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
    namespace = dict(env)
    exec(compile(source, f"<tangent_x fused {name}>", "exec"), namespace)
    return namespace[name]
