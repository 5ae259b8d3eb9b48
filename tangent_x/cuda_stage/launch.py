"""``jit(vmap(f), target="cuda")``: building, compiling and launching kernels.

Per call signature (vmap's structure key, as the CPU loop has it) the
per-example function is specialised and compiled for the CPU exactly as
``jit(vmap(f))``'s loop over examples does (``lane_loop.LaneLoop``), which
gives its numba-stage text, Numba's type map of it, and example 0's
results (their dtypes; the CPU is also where the finishing step of grad
runs).  ``kernel_text`` rewrites that text into a device function and a
kernel with a grid-stride loop; the module is written to the cache
directory like every generated module, so tracebacks show it.

Arguments: NumPy arrays are copied to the device (mapped ones with their
batch axis first), CUDA device arrays are used as they are (their batch
axis must be 0); results come back as NumPy arrays, or stay on the device
when any argument was a device array.  An example whose ``while`` loop
outgrows the tape capacity raises a located error after the launch.

A ``BatchReduction`` (``reduction``: the function sums or averages the
batch of results) makes a kernel that adds every thread's result into one
zeroed output with ``cuda.atomic.add``: no array of per-example results,
and a float sum in the order the threads reach it (equal to NumPy's to
rounding, not bit for bit); integers add exactly.
"""
import ast
import hashlib
import os
import re

import numpy as np

from .. import tree_util
from ..config import config
from ..errors import TransformError
from ..numba_stage.compile_errors import JitError
from ..numba_stage.specialize import (Const, Dyn, SpecializationError, Zero, children,
                                      is_container, rebuild)
from ..numba_stage.lane_loop import JittedVmap, LaneLoop
from ..numba_stage.lane_results import finish as _finish, leaves as _leaves
from ..python_stage import emit, loader as modules
from .available import require_cuda
from .kernel_text import CHECK_CODES, HINT, DeviceRewrite, render_kernel_module
from .reduction import reduce_constant

__all__ = ["CudaVmap", "TAPE_CAPACITY", "DEFAULT_CC"]

TAPE_CAPACITY = 1024       # iterations a thread's while-loop tape holds
DEFAULT_CC = (9, 0)
_THREADS = 128


class CudaVmap:
    """``jit(vmap(f), target="cuda")`` (see the module doc)."""

    def __init__(self, vmapped, python_stage, static_argnums=(), static_argnames=(),
                 tape_capacity=TAPE_CAPACITY, reduction=None):
        self._cuda = require_cuda()
        self._reduce = None if reduction is None else reduction.op
        self._cpu = JittedVmap(vmapped, python_stage, static_argnums, static_argnames)
        self._vmapped = vmapped
        self._capacity = tape_capacity
        self._kernels = {}
        self._last = None
        self.__name__ = f"jit_vmap_{getattr(vmapped._fun, '__name__', 'f')}_cuda"
        if reduction is not None:
            self.__name__ = f"jit_{reduction.op}_vmap_{reduction.name}_cuda"

    def __repr__(self):
        return f"<tangent_x jit(target='cuda') of {self._vmapped!r}>"

    def _per_example(self):
        """The per-example function as a ``Jitted`` of its own, compiled
        without fused kernels (a GPU thread's rewrite reads the statements
        as written; the CPU loop's may fuse), or None (see
        ``JittedVmap._example_jitted``)."""
        if getattr(self, "_example", None) is None:
            cpu = self._cpu._example_jitted()
            if cpu is None:
                return None
            self._example = type(cpu)(cpu._fun, cpu._python_stage, cpu._static_argnums,
                                      cpu._static_argnames)
            self._example.fuse = False
        return self._example

    def _kernel(self, host_args):
        axes, size, key = self._vmapped._boundary(host_args)
        key = self._cpu._key(key, host_args)
        kernel = self._kernels.get(key)
        if kernel is None or not kernel.current():
            per_example = self._per_example()
            if per_example is None:
                raise TransformError(
                    f"jit(vmap({getattr(self._vmapped._fun, '__name__', 'f')}), "
                    "target='cuda'): the per-example function is tangent_x's own Python "
                    "driver (a Jacobian, or another vmap), which cannot run on a GPU "
                    "thread", self._cpu._call_site, HINT)
            try:
                kernel = Kernel(per_example, self._vmapped, host_args, axes, self._capacity,
                                self._cuda, self._reduce)
            except (JitError, SpecializationError) as exc:
                # the kernel's device code is one example's numba stage: where
                # that does not compile, the CPU's batched form may still
                raise TransformError(
                    "a CUDA kernel cannot run this: one example's code does not compile "
                    f"with Numba ({exc.bare_message})", exc.origin,
                    "use jit(..., target='cpu'), which can run vmap's batched code "
                    "instead") from None
            self._kernels[key] = kernel
        self._last = kernel
        return kernel, axes, size

    def __call__(self, *args):
        on_device = any(_on_device(leaf) for leaf in tree_util.tree_leaves(args))
        host_args = tree_util.tree_map(
            lambda a: a.copy_to_host() if _on_device(a) else a, args) \
            if on_device else args
        kernel, axes, size = self._kernel(host_args)
        return kernel(args, host_args, axes, size, on_device)

    def cuda_source(self, *args):
        """The kernel module's text, for ``args`` (else the latest call's)."""
        if args:
            return self._kernel(args)[0].text
        if self._last is None:
            raise ValueError(f"{self!r} has not been called yet: pass example arguments")
        return self._last.text

    def ptx(self, *args, cc=DEFAULT_CC):
        """The kernel's PTX for compute capability ``cc`` (no GPU needed)."""
        kernel = self._kernel(args)[0] if args else self._last
        if kernel is None:
            raise ValueError(f"{self!r} has not been called yet: pass example arguments")
        return kernel.ptx(cc)


class _Example(LaneLoop):
    """The CPU loop's per-example specialisation, without its prange driver."""

    def _driver(self):
        pass


class Kernel:
    """One compiled kernel: the per-example CPU specialisation it came from,
    its text, and the launch."""

    def __init__(self, per_example, vmapped, args, axes, capacity, cuda, reduce=None):
        example = _Example(per_example, vmapped, args, axes)
        self.reduce = reduce        # None, or "sum"/"mean" over the batch (atomics)
        self.example = example
        self.cuda = cuda
        compiled = example.compiled
        self.plan = compiled.plan
        self.out_axes = vmapped.out_axes
        self.leaf_axes = example.leaf_axes
        n_leaves = len(example.leaf_axes)
        params = list(compiled.plan.params)
        tree = ast.parse(compiled.text)
        fname = compiled.name or example.generated.function.__name__
        func = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == fname)
        bound = _bound_names(tree)
        # the example's leaves: which are random keys (uint32 pairs) in a function that draws
        leaves0 = [leaf[()] if isinstance(leaf, np.ndarray) and leaf.ndim == 0 else leaf
                   for leaf in _example_leaves(per_example, example, args, axes)]
        # example 0 on the CPU: compiles the text (Numba's types of it), and its
        # results' dtypes; per-example results must be numbers in a kernel
        self.first = per_example._run(compiled, leaves0[:n_leaves])
        typemap = _typemap(compiled.dispatcher)
        draws = "random" in bound.values()
        kinds = []
        for i, name in enumerate(params):
            ax = example.leaf_axes[i] if i < n_leaves else None
            value = leaves0[i] if i < len(leaves0) else None
            key = draws and isinstance(value, np.ndarray) and value.dtype == np.uint32 and \
                value.shape == (2,)
            kinds.append("key" if key and ax is not None else
                         "mapped" if ax is not None else "shared")
        if draws and any(k == "shared" and isinstance(v, np.ndarray) and v.dtype == np.uint32
                         for k, v in zip(kinds, leaves0)):
            raise TransformError("a random key shared by every example (in_axes None) "
                                 "cannot be used in a CUDA kernel yet; split it per example "
                                 "(tangent_x.random.split(key, n)) and map it",
                                 compiled.origin, HINT)
        shapes = {p: np.shape(v) for p, v in zip(params, leaves0)
                  if isinstance(v, np.ndarray) and v.ndim}
        rewrite = DeviceRewrite(func, typemap, compiled.linemap, bound,
                                [p for p, k in zip(params, kinds) if k == "key"], capacity,
                                shapes)
        device = rewrite.run()
        self.tape_lines = list(rewrite.tape_lines.values())
        self.checks = rewrite.checks
        self.capacity = capacity
        flat = (self.first,) if compiled.plan.bare else tuple(self.first)
        self.out_dtypes = _result_dtypes(compiled.dispatcher, flat, compiled.plan.bare)
        flat = tuple(np.asarray(v, d)[()] if np.ndim(v) == 0 else v
                     for v, d in zip(flat, self.out_dtypes))
        self.first = flat[0] if compiled.plan.bare else flat
        self.out_shapes = [np.shape(v) for v in flat]
        if reduce:
            # the sum's dtype, as np.sum gives it (ints widen to int64), added in
            self.out_dtypes = [_sum_dtype(d, compiled.origin) for d in self.out_dtypes]
        self.kinds = kinds
        self.hidden = list(compiled.hidden)
        mapped = next(i for i, k in enumerate(kinds) if k != "shared")
        self.name = f"{reduce}_vmap_{fname}_kernel" if reduce else f"vmap_{fname}_kernel"
        header = emit.module_header(
            "CUDA stage of vmap: one thread per example (numba-cuda)", compiled.origin,
            [f"the device function is {fname}, the numba stage of one example",
             f"    ({compiled.path}), rewritten for a GPU thread"])
        numba_lines = {line: rewrite.origin(line) for line in
                       range(1, compiled.text.count("\n") + 2)}
        self.text, self.linemap = render_kernel_module(
            header, device, self.name, list(zip(params, kinds)),
            [len(shape) for shape in self.out_shapes], compiled.plan.bare, params[mapped],
            numba_lines, config.threefry_partitionable, reduce=bool(reduce))
        digest = hashlib.sha256(self.text.encode()).hexdigest()[:16]
        module, self.path = modules.load(f"{self.name}_cuda_{digest}", self.text, {},
                                         self.linemap, importable=True)
        self.kernel = getattr(module, self.name)
        self.signature = None

    def current(self):
        return self.example.current()

    def _device_args(self, args, host_args, axes, on_device):
        """The kernel's leaf arguments, batch axis first."""
        cuda = self.cuda
        leaves = []
        bound = self.example.per_example._bind(self.example.generated, args, {})
        raw = [leaf for value, static in bound.values() if not static
               for leaf in _leaves(value)]
        for leaf, ax in zip(raw, self.leaf_axes):
            if _on_device(leaf):
                if ax not in (None, 0):
                    raise ValueError("a CUDA device array argument must be mapped along "
                                     "axis 0 (or shared); move its batch axis first")
                leaves.append(leaf)
                continue
            if isinstance(leaf, np.ndarray) and leaf.ndim == 0:
                leaves.append(leaf[()])
                continue
            if ax not in (None, 0):
                leaf = np.moveaxis(leaf, ax, 0)
            leaves.append(cuda.to_device(np.ascontiguousarray(leaf))
                          if isinstance(leaf, np.ndarray) else leaf)
        for value in self.hidden:
            leaves.append(cuda.to_device(np.ascontiguousarray(value))
                          if isinstance(value, np.ndarray) else value)
        return leaves

    def __call__(self, args, host_args, axes, size, on_device):
        if size == 0:
            raise ValueError("vmap over a batch of size 0: there is no example to tell "
                             "the shape of the results")
        cuda = self.cuda
        leaves = self._device_args(args, host_args, axes, on_device)
        if self.reduce:      # one output each, zeroed, that every thread adds into
            outs = [cuda.to_device(np.zeros(shape or (1,), dtype))
                    for shape, dtype in zip(self.out_shapes, self.out_dtypes)]
        else:
            outs = [cuda.device_array((size,) + shape, dtype)
                    for shape, dtype in zip(self.out_shapes, self.out_dtypes)]
        flags = cuda.to_device(np.zeros(size, np.int32))
        blocks = min(1024, (size + _THREADS - 1) // _THREADS)
        try:
            self.kernel[blocks, _THREADS](*leaves, *outs, flags)
        except Exception as exc:
            if _numba_error(exc):
                raise self.compile_error(exc) from None
            raise
        status = flags.copy_to_host()
        if status.any():
            self._raise(status, host_args)
        like = self.example._example_result(host_args, axes,
                                            [np.asarray(v)[None] for v in self._flat_first()])
        if self.reduce:
            return self._reduced(outs, size, like, on_device)
        values = outs if on_device else [o.copy_to_host() for o in outs]
        return _finish(self.plan.out, values, size, self.out_axes, like)

    def _reduced(self, outs, size, like, on_device):
        """The pytree of sums (or means) over the batch: the kernel's
        outputs, and results the same in every example (constants, symbolic
        zeros) reduced as NumPy would."""
        sums = [o.copy_to_host() for o in outs]
        sums = [s.reshape(shape) for s, shape in zip(sums, self.out_shapes)]
        if self.reduce == "mean":
            sums = [np.asarray(s / size if s.dtype.kind == "f" else s / np.float64(size))
                    for s in sums]
        tree = _reduce_tree(self.plan.out, sums, size, self.reduce, like)
        return tree if not on_device else tree_util.tree_map(
            lambda v: self.cuda.to_device(np.ascontiguousarray(v)), tree)

    def _raise(self, status, host_args):
        """The error of the first example whose status is set: its tape
        overflowed (a located error), or it indexed out of range (run again
        on the CPU, which raises the IndexError at the user's line, noted
        with the example's index)."""
        k = int(np.flatnonzero(status)[0])
        code = int(status[k])
        if code >= CHECK_CODES:
            bound = self.example.per_example._bind(self.example.generated, host_args, {})
            leaves = [leaf[()] if isinstance(leaf, np.ndarray) and leaf.ndim == 0 else leaf
                      for value, static in bound.values() if not static
                      for leaf in _leaves(value)]
            self.example._rerun(leaves, [k], None)      # raises, as the CPU would
            origin = self.checks[code - CHECK_CODES - 1]
            raise IndexError(f"{origin.where() + ': ' if origin else ''}example {k} of the "
                             "batch indexes out of range in the CUDA kernel")
        origin = self.tape_lines[code - 1] if self.tape_lines else None
        raise TransformError(
            f"example {k} of the batch ran its loop more than {self.capacity} times: "
            "a GPU thread's tape holds that many iterations", origin,
            "pass jit(..., target='cuda', tape_capacity=N) with a larger N, or use "
            "target='cpu'")

    def _flat_first(self):
        return (self.first,) if self.plan.bare else tuple(self.first)

    def ptx(self, cc=DEFAULT_CC):
        """PTX of the kernel for ``cc`` (Numba's ``compile_ptx``: no GPU needed)."""
        from numba import typeof   # local import: typing the kernel's arguments
        types = []
        for (name, kind), value in zip(self._params_kinds(), self._example_values()):
            types.append(typeof(value))
        types += [typeof(np.zeros((shape or (1,)) if self.reduce else (1,) + shape, d))
                  for shape, d in zip(self.out_shapes, self.out_dtypes)]
        types.append(typeof(np.zeros(1, np.int32)))
        try:
            ptx, _ = self.cuda.compile_ptx(self.kernel.py_func, tuple(types), cc=cc)
        except Exception as exc:       # compiling only: any failure is a refusal
            raise self.compile_error(exc) from None
        return ptx

    def compile_error(self, exc):
        """A located ``TransformError`` for Numba's CUDA refusal ``exc``: the
        user's line of the kernel line it names."""
        text = str(exc)
        origin = None
        for match in re.finditer(r'File "([^"]+)", line (\d+)', text):
            if os.path.basename(match.group(1)) == os.path.basename(self.path):
                line = int(match.group(2))
                while line > 0 and line not in self.linemap:
                    line -= 1
                origin = self.linemap.get(line, origin)
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        summary = next((ln for ln in lines if not ln.startswith(("File", "During", ">>>"))),
                       type(exc).__name__)
        return TransformError(f"Numba's CUDA target cannot compile this ({summary[:200]})",
                              origin or self.example.compiled.origin, HINT)

    def _params_kinds(self):
        return list(zip(self.plan.params, self.kinds))

    def _example_values(self):
        """A value of every kernel argument's type (a batch of two examples)."""
        ex = self.example
        leaves = _example_leaves(ex.per_example, ex, None, None, stored=True)
        out = []
        for i, (value, kind) in enumerate(zip(leaves, self.kinds)):
            if kind == "shared":
                out.append(value)
            else:
                v = np.asarray(value)
                out.append(np.ascontiguousarray(np.stack([v, v])))
        return out


def _reduce_tree(out_av, sums, size, op, like):
    """The results' pytree, reduced over the batch: the kernel's sums where
    the result is computed (``Dyn``), and what NumPy makes of ``size``
    copies of a result the same in every example (a constant; a symbolic
    zero, whose value ``like`` holds)."""
    if isinstance(out_av, Zero):
        return reduce_constant(like, size, op)
    if is_container(out_av):
        if isinstance(out_av, dict):
            return rebuild(out_av, [_reduce_tree(out_av[k], sums, size, op, like[k])
                                    for k in out_av])
        return rebuild(out_av, [_reduce_tree(c, sums, size, op, li)
                                for c, li in zip(children(out_av), children(like))])
    if isinstance(out_av, Dyn):
        value = sums[int(out_av.name[1:])]
        dtype = getattr(like, "dtype", None)     # grad's result in its argument's dtype
        if dtype is not None:
            value = value.astype(reduce_constant(np.zeros((), dtype), 1, op).dtype,
                                 copy=False)
        return value[()] if value.ndim == 0 else value
    if isinstance(out_av, Const) and out_av.value is None:
        return None
    return reduce_constant(out_av.value, size, op)


def _sum_dtype(dtype, origin):
    """The dtype ``np.sum`` gives a batch of ``dtype`` (that the atomics add in)."""
    total = np.sum(np.zeros(1, dtype)).dtype
    if total.kind == "b" or total.kind not in "iuf" or total.itemsize < 4:
        raise TransformError(f"a sum over the batch of {dtype} results has no CUDA atomic "
                             "add", origin, HINT)
    return total


def _numba_error(exc):
    """Whether ``exc`` is Numba's refusal to type or lower the kernel."""
    from numba.core import errors   # local import: Numba's error classes
    return isinstance(exc, (errors.NumbaError, errors.TypingError, errors.LoweringError))


def _on_device(value):
    """Whether ``value`` is a CUDA device array (numba-cuda's, or any object
    with the CUDA array interface; the simulator's fake ones too)."""
    return not isinstance(value, np.ndarray) and (
        hasattr(value, "__cuda_array_interface__") or hasattr(value, "copy_to_host"))


def _example_leaves(per_example, example, args, axes, stored=False):
    """Example 0's compiled leaves (and the hidden values), in the plan's order."""
    if stored:
        return example._leaves0
    examples = [tree_util.tree_map(lambda a, ax: a if ax is None else np.take(a, 0, axis=ax),
                                   arg, ax, is_leaf=lambda v: v is None)
                for arg, ax in zip(args, axes)]
    bound = per_example._bind(example.generated, examples, {})
    leaves = [leaf for value, static in bound.values() if not static
              for leaf in _leaves(value)] + list(example.compiled.hidden)
    example._leaves0 = leaves
    return leaves


def _bound_names(tree):
    """What each name the numba-stage module imports is (see DeviceRewrite)."""
    bound = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                name = alias.asname or alias.name.split(".")[0]
                kind = {"numpy": "numpy", "tangent_x.numba_stage.vmath": "vmath",
                        "tangent_x.random": "random", "math": "math"}.get(alias.name)
                if kind and alias.asname or alias.name in ("numpy", "math"):
                    bound[name] = kind
        elif isinstance(node, ast.ImportFrom) and node.module in (
                "tangent_x.runtime", "tangent_x.numba_stage.numba_runtime"):
            for alias in node.names:
                bound[alias.asname or alias.name] = alias.name
    return bound


def _result_dtypes(dispatcher, flat, bare):
    """The per-example results' dtypes: Numba's return types where they are
    numbers (it boxes a float32 number as a Python float, which NumPy reads
    as float64), else the values' own."""
    from numba.core import types   # local import: numba's types, for the return type
    ret = next(iter(dispatcher.overloads.values())).signature.return_type
    kinds = [ret] if bare else list(ret) if isinstance(ret, types.BaseTuple) else []
    if len(kinds) != len(flat):
        kinds = [None] * len(flat)
    return [np.dtype(str(t)) if isinstance(t, types.Number) and
            not isinstance(t, types.Literal) else np.asarray(v).dtype
            for v, t in zip(flat, kinds)]


def _weak(t):
    return str(t).endswith("(a Python number)")


def _typemap(dispatcher):
    """Numba's types of the compiled per-example function's variables (the
    first name an SSA variable had)."""
    overload = next(iter(dispatcher.overloads.values()))
    if not hasattr(overload.type_annotation, "typemap"):     # from the disk cache: type again
        import numba   # local import: a fresh dispatcher, uncached, to see its types
        fresh = numba.njit(dispatcher.py_func)
        fresh.compile(overload.signature)
        overload = next(iter(fresh.overloads.values()))
    typemap = {}
    for var, t in overload.type_annotation.typemap.items():
        base = var.split(".")[0]
        t = getattr(t, "type", t)          # Optional(array): the array
        if str(t) == "none":
            continue
        if base not in typemap or str(t).startswith("array(") and \
                not str(typemap[base]).startswith("array(") or \
                _weak(typemap[base]) and not _weak(t):
            # an array over its scalar versions; a number's type after its
            # loop or if over the Python number it started as (weak_number)
            typemap[base] = t
    return {base: getattr(t, "number", t) if _weak(t) else t for base, t in typemap.items()}
