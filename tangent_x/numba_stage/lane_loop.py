"""``jit`` of ``vmap``: batched code, or a compiled loop over examples.

Eager ``vmap`` has two strategies: batched NumPy by the batching rules
(``method="vectorize"``) and one Python call per example (``"loop"``).
Under ``jit`` the loop strategy becomes the fast one wherever the batched
form does work the examples do not need, so ``JittedVmap`` chooses per call
signature:

* **loop**: the per-example function's numba stage (the same specialisation
  ``jit(f)`` compiles for one example) called once per example from a
  ``numba.prange`` loop compiled with ``parallel=True``, so the examples run
  on Numba's own threads (``NUMBA_NUM_THREADS``);
* **batched**: vmap's vectorised code compiled as it is (``Jitted``).

With ``axis_name`` (collectives over the examples) the code is always the
batched one.  The loop is taken when asked for (``method="loop"``), and otherwise when
the vectorised code shows per-example work that batching makes expensive
(``_per_example_work``): a branch or ``while`` on per-example values
(``select_lanes``: batched code runs both branches, and every loop to the
slowest example's trip count, finished lanes frozen at a cost) or an
operation with no batching rule (``map_lanes``: one call per example
anyway, and a lambda Numba cannot compile).  Everything else stays
batched, loops with a shared trip count included, even over scalar
examples: measured (``tools/bench_jit_vmap.py``), 100 steps of the
logistic map per example run 1.8-1.9x *faster* batched, because a recurrence
is a chain of dependent operations per example while the batched form
runs the examples side by side in SIMD lanes (Numba fuses the array
expression into one vectorised loop); with libm calls in the body
(``sin``) batched is still 1.3x faster, libm bound.  A per-example
``while`` with different trip counts is where the loop wins (6-7.6x on
``steps_to_exceed``, 1.3-1.4x on a Newton square root; one thread each).  If vmap cannot vectorise
the function at all, or Numba cannot compile its batched code (an
operation whose batched form Numba's NumPy lacks), the loop is the strategy
too: whatever compiles for one example compiles for a batch.

Exceptions: Numba drops one raised inside ``prange`` (the worker's
remaining examples are skipped, or the exception surfaces as a
``SystemError``), so the driver flags each example that finished and
``LaneLoop`` runs the others again one at a time outside the loop, where
the exception propagates, noted with the example's index.

The compiled driver is a module of its own (``render.render_lane_driver``), named by a hash of
its text, which names the per-example module (itself named by a hash of
its text): Numba's on-disk cache can never pair a driver with a stale
per-example function.
"""
import ast
import hashlib
import os

import numba
import numpy as np

from ..python_stage import loader as modules
from .. import tree_util
from ..core.arguments import param_names
from ..errors import TransformError
from .compile import Jitted, split
from .loading import Compiled, on_disk, ready_kernels, runtime_stamp
from . import join_verdicts, lane_results, result_dtypes
from .compile_errors import MAX_WIDENED, JitError
from .dispatch import disabled
from .lane_runtime import RAGGED
from .render import render_lane_driver
from .specialize import SpecializationError

__all__ = ["JittedVmap"]

_Missing = object()


class JittedVmap(Jitted):
    """``jit(vmap(f))``: batched or a parallel loop over examples (see the
    module doc)."""

    def __init__(self, vmapped, python_stage, static_argnums=(), static_argnames=()):
        super().__init__(vmapped, python_stage, static_argnums, static_argnames)
        self._vmapped = vmapped
        self._per_example = None
        self._loops = {}          # vmap structure key -> LaneLoop, or None: batched
        self._loop_errors = {}    # key -> why the loop the cost model chose cannot run
        self._last_loop = None

    def __call__(self, *args, **kwargs):
        if disabled() or kwargs:
            return super().__call__(*args, **kwargs)
        axes, size, key = self._vmapped._boundary(args)
        key = self._key(key, args)
        loop = self._strategy(args, axes, key)
        if loop is None:
            return self._batched(args, axes, size, key)
        self._last_loop = loop
        try:
            return loop(args, axes, size)
        except (JitError, SpecializationError) as exc:
            # Numba compiles at the first call: a loop the cost model chose
            # whose example does not compile leaves the batched code to try
            if self._vmapped.method == "loop" or loop.ran or \
                    getattr(exc, "number_join", False):
                raise
            self._loops[key] = None
            self._loop_errors[key] = exc
            return self._batched(args, axes, size, key)

    def _batched(self, args, axes, size, key):
        self._last_loop = None
        try:
            return super().__call__(*args)
        except TransformError as exc:
            if key in self._loop_errors:
                # neither compiles: what Numba could not do for one example
                # says more than the batched form's error
                raise self._loop_errors[key] from None
            if not isinstance(exc, (JitError, SpecializationError)):
                raise
            # Numba cannot compile the batched code (an einsum, a map_lanes
            # lambda): the loop over examples, if it compiles
            loop = self._fallback(args, axes)
            if loop is None:
                raise
            self._loops[key] = self._last_loop = loop
        return loop(args, axes, size)

    def _fallback(self, args, axes):
        per_example = self._example_jitted()
        if per_example is None or getattr(self._vmapped, "axis_name", None) is not None:
            return None
        try:
            return LaneLoop(per_example, self._vmapped, args, axes)
        except (JitError, SpecializationError):
            return None

    def strategy(self, *args):
        """``"loop"`` or ``"batched"``: what a call with ``args`` runs."""
        axes, _, key = self._vmapped._boundary(args)
        return "batched" if self._strategy(args, axes, self._key(key, args)) is None \
            else "loop"

    def _key(self, key, args):
        """vmap's structure key, and the static values (folded into the
        per-example code, so a new one is a new loop)."""
        if not self._static_argnums and not self._static_argnames:
            return key
        names = param_names(self._vmapped._fun, len(args))
        return key, tuple((i, type(a), a) for i, a in enumerate(args)
                          if i in self._static_argnums or i - len(args) in self._static_argnums
                          or names[i] in self._static_argnames)

    def _strategy(self, args, axes, key):
        loop = self._loops.get(key, _Missing)
        if loop is _Missing or (loop is not None and not loop.current()):
            self._loop_errors.pop(key, None)
            loop = self._loops[key] = self._choose(args, axes, key)
        return loop

    def _choose(self, args, axes, key):
        vmapped = self._vmapped
        if getattr(vmapped, "axis_name", None) is not None:
            # collectives span the examples: never one example at a time
            vmapped.specialize(*args)
            return None
        per_example = self._example_jitted()
        if vmapped.method == "vectorize":
            try:
                generated = vmapped.specialize(*args)
            except TransformError:
                generated = None       # no batched form: the loop it is
            if generated is not None and (
                    per_example is None or not _per_example_work(generated)):
                return None
        if per_example is None:
            if vmapped.method == "loop":
                raise TransformError(
                    f"jit(vmap({getattr(vmapped._fun, '__name__', 'f')}, method='loop')): "
                    "the per-example function is tangent_x's own Python driver (a "
                    "Jacobian, or another vmap), which Numba cannot compile as one "
                    "example", self._call_site, "use method='vectorize', or run "
                    "without jit (tx.disable_jit())")
            return None
        try:
            return LaneLoop(per_example, vmapped, args, axes)
        except (JitError, SpecializationError) as exc:
            if vmapped.method == "loop":
                raise
            self._loop_errors[key] = exc
            return None        # the batched code, then

    def _example_jitted(self):
        """The per-example function as a ``Jitted`` (its specialisation and
        compile machinery), or None where the per-example function is a
        Python driver (jacfwd's loop over basis vectors) or a vmap."""
        if self._per_example is None:
            fun = self._vmapped._fun
            spec = getattr(fun, "__tangent_x__", None)
            if getattr(fun, "__tangent_x_loop__", False) or hasattr(spec, "specialize"):
                self._per_example = False
            else:
                self._per_example = Jitted(
                    fun, self._python_stage, self._static_argnums, self._static_argnames)
        return self._per_example or None

    def numba_source(self, *args, **kwargs):
        """The numba stage: for ``args`` if given (the loop's driver and
        per-example function, or the batched code, as the strategy for
        those arguments says), else of the most recent call."""
        if args and not kwargs:
            axes, _, key = self._vmapped._boundary(args)
            loop = self._strategy(args, axes, self._key(key, args))
            if loop is not None:
                return loop.source()
        elif not args and self._last_loop is not None:
            return self._last_loop.source()
        return super().numba_source(*args, **kwargs)


def _per_example_work(generated):
    """Whether the vectorised code does work per example that the loop
    over examples does better (the cost model of the module doc)."""
    tree = ast.parse(generated.text)
    calls = {node.func.id for node in ast.walk(tree)
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    return bool(calls & {"select_lanes", "map_lanes"})


class LaneLoop:
    """One compiled loop over examples: the per-example specialisation and
    the ``prange`` driver calling it."""

    def __init__(self, per_example, vmapped, args, axes):
        examples = [tree_util.tree_map(lambda a, ax: a if ax is None else np.take(a, 0, axis=ax),
                                       arg, ax, is_leaf=lambda v: v is None)
                    for arg, ax in zip(args, axes)]
        inner = per_example._inner
        inner._specialize_inner(examples)
        generated = inner.generated
        bound = per_example._bind(generated, examples, {})
        key, _, avs = per_example._signature(generated, bound)
        entry = per_example._cache.get(key)
        if entry is None or entry[0] is not generated or \
                entry[1].contents and not entry[1].contents.held():
            compiled = per_example._compile(generated, avs, key)
            per_example._cache[key] = (generated, compiled)
        else:
            compiled = entry[1]
        self.generated = generated
        self.compiled = compiled
        self.ran = False          # compiled (by a first call) and run
        self.per_example = per_example
        self.out_axes = vmapped.out_axes
        self.name = f"vmap_{generated.function.__name__}"
        # the mapped axis (or None) of every compiled leaf, in the order
        # Jitted flattens the arguments (their parameters, then pytree order)
        self.leaf_axes = []
        for i, (name, (value, static)) in enumerate(bound.items()):
            if not static and i < len(args):
                self.leaf_axes += lane_results.leaf_axes(args[i], axes[i])
        n_leaves = len(compiled.plan.params) - len(compiled.hidden)
        assert len(self.leaf_axes) == n_leaves, (self.leaf_axes, compiled.plan.params)
        self.n_out = lane_results.outputs(compiled.plan)
        self._driver()

    def _driver(self):
        """Render, load and wrap the ``prange`` driver of ``self.compiled``."""
        compiled = self.compiled
        self.text, linemap, env = render_lane_driver(self.name, compiled, self.leaf_axes,
                                                     self.n_out, RAGGED)
        stamp = hashlib.sha256(runtime_stamp().encode() + _lane_runtime_digest()).hexdigest()[:12]
        module, path = modules.load(f"{self.name}_lanes_{stamp}", self.text, env, linemap,
                                    importable=True)
        self.path = path
        self.dispatcher = numba.njit(cache=True, parallel=True, nogil=True)(
            getattr(module, self.name))
        if on_disk(self.dispatcher):
            # the driver's cached machine code calls kernels through slots
            # (see Jitted._load): fill them before Numba loads it
            ready_kernels(compiled.plan.bound, compiled.text)
        self.runner = Compiled(self.dispatcher, compiled.plan, self.text, path, linemap,
                               compiled.origin)

    def current(self):
        """Whether the per-example code is still what the user's source says
        (a transformed function rebuilds its code when a global or closure
        value it was built from has been rebound) and the containers it
        folded in still hold what they held (contents.py)."""
        contents = self.compiled.contents
        return self.per_example._inner.generated is self.generated and \
            (not contents or contents.held())

    def __call__(self, args, axes, size):
        if size == 0:
            raise ValueError("vmap over a batch of size 0: there is no example to tell "
                             "the shape of the results")
        bound = self.per_example._bind(self.generated, args, {})
        # a shared 0-d array enters as the number it holds, as Jitted gives
        # it to the example's code (compiled for the number)
        leaves = [leaf[()] if isinstance(leaf, np.ndarray) and leaf.ndim == 0 else leaf
                  for value, static in bound.values() if not static
                  for leaf in lane_results.leaves(value)]
        lost = None
        try:
            for _ in range(MAX_WIDENED + 1):
                try:
                    values = self.per_example._run(self.runner, leaves)
                    break
                except JitError as exc:
                    # the example's code holds arrays of two dtypes in one variable:
                    # widened (compile_errors.widened_text), the driver built again for it
                    cause = getattr(exc, "numba_error", None)
                    if self.ran or cause is None or \
                            not self.per_example._widened(cause, self.compiled):
                        raise
                    self._driver()
                    last = exc
            else:
                raise last
        except SystemError as exc:
            # an example raised inside prange on this thread: Numba left
            # its exception set, and the driver's results are lost
            lost = exc
        if lost is None and self._check_example_joins(leaves):
            return self(args, axes, size)        # tagged: its driver built again
        self.ran = True
        if lost is not None:
            self._rerun(leaves, range(1, size), None)
            raise lost
        values, done = values[:-1], values[-1]
        if not done.all():
            self._rerun(leaves, np.flatnonzero(~done), values)
        values = lane_results.lanes_untagged(values, self.compiled.tags)
        return lane_results.finish(self.compiled.plan.out, values, size, self.out_axes,
                       self._example_result(args, axes, values))

    def _check_example_joins(self, leaves):
        """Refuse, as ``jit`` does, a join of numbers in the example's code
        whose widening shows (``joins``); True where instead a result that
        is float32 on one path and float64 on another got its dtype kept
        beside it, as jit's (``result_dtypes``; each lane's dtype code is
        then a result of the driver, see ``lane_results.lanes_untagged``).  The example's signature is
        Numba's once the driver has called it; a driver loaded from Numba's
        disk cache holds the example's code without compiling it, so it is
        compiled (from its own cache) for example 0's leaves."""
        example = self.compiled
        dispatcher = example.dispatcher
        if not dispatcher.overloads:
            first = [leaf if ax is None else leaf[(slice(None),) * ax + (0,)]
                     for leaf, ax in zip(leaves, self.leaf_axes)]
            dispatcher.compile(tuple(numba.typeof(v) for v in first + list(example.hidden)))
        if example.joins_checked != (dispatcher, len(dispatcher.overloads)):
            if not self.ran and result_dtypes.tag(example, join_verdicts.verdicts,
                                                  self.per_example._reload):
                self.n_out += len(example.tags)
                self._driver()
                return True
            if not self.ran and split(example):     # paths split: tagged afresh
                self.n_out = lane_results.outputs(example.plan)
                self._driver()
                return True
            join_verdicts.check(example)
        return False

    def _example_result(self, args, axes, values):
        """Example 0's result as the transform finishes it eagerly (grad's
        finishing step: each gradient in its argument's dtype, a symbolic
        zero made zeros shaped like its argument): the dtypes every lane
        takes, and the value of each symbolic zero."""
        example = [tree_util.tree_map(lambda a, ax: a if ax is None else np.take(a, 0, axis=ax),
                                      arg, ax, is_leaf=lambda v: v is None)
                   for arg, ax in zip(args, axes)]
        first = [np.asarray(v)[0] for v in values]
        return self.per_example._inner._finish(self.compiled.plan.unflatten(first), example)

    def _rerun(self, leaves, lanes, values):
        """Run the examples ``lanes`` one by one, outside ``prange``: an
        exception one of them raises inside ``prange`` is dropped by Numba
        (the worker's remaining examples are skipped, their results left
        unwritten), so the examples that did not finish run again here,
        where an exception propagates -- noted with the example's index.
        Those that finish fill their lanes of ``values``."""
        for k in lanes:
            k = int(k)
            example = [leaf if ax is None else np.take(leaf, k, axis=ax)
                       for leaf, ax in zip(leaves, self.leaf_axes)]
            try:
                out = self.per_example._run(self.compiled, example)
            except Exception as exc:
                origin = self.compiled.origin
                where = f" (your {origin.where()})" if origin is not None else ""
                note = (f"tangent_x: raised by example {k} of the batch (index {k} along "
                        f"the mapped axis) in jit(vmap({self.generated.function.__name__}))"
                        f"{where}")
                if hasattr(exc, "add_note"):
                    exc.add_note(note)
                raise
            if values is None:
                continue
            if self.compiled.plan.bare and not self.compiled.tags:   # a lone result
                out = (out,)
            for buf, value in zip(values, out):
                if np.shape(buf)[1:] != np.shape(value):
                    raise ValueError(RAGGED)
                buf[k] = value

    def source(self):
        """The driver's numba stage, then the per-example function's."""
        return self.text + "\n\n" + self.compiled.text


def _lane_runtime_digest():
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "lane_runtime.py"),
              "rb") as f:
        return f.read()
