"""``pmap``: SPMD over pmap's devices, JAX's semantics, one thread per device.

``pmap(f)(x)`` splits the mapped axis of the arguments into shards, one
per device, and runs the *per-shard code* on each in its own worker thread;
the collectives in that code (``lax.psum`` ...) are rendezvous between the
workers (``parallel.group``).  The per-shard code is what tangent_x
generates for ``f`` -- its python stage, or with ``jit(pmap(f))`` the
numba stage (Numba releases the GIL, so shards compute in parallel) -- and
``tx.source(pmap(f))`` prints it.  Derivatives compose the JAX way:
``pmap(grad(f))`` runs the derivative's per-shard code (the collectives'
transposes are collectives: ``rules/collectives.py``), and ``grad`` of a
function calling ``pmap(f)`` runs ``pmap`` of ``f``'s vjp in the backward
pass (a ``custom_vjp`` whose backward pass is itself a pmap; arguments that
are not mapped get their cotangent summed over the devices by ``psum``).

Why threads, and eager by default: a worker is a slot, not an accelerator,
and NumPy and Numba release the GIL in the heavy operations, so threads
share the arrays without copies; ``jit(pmap(f))`` compiles the shards.
After ``tangent_x.distributed.initialize()`` the group spans every process
(``MPIGroup``), each process running its local devices as threads; with
one local device, ``jit(pmap(f))``'s shard calls MPI itself for its
collectives (``numba_stage.mpi_shard``: no callback into Python).  With
threads, ``jit(pmap(f))``'s collectives over its axis are compiled too
(``numba_stage.thread_shard``: a rendezvous in shared memory, no GIL), and
its shards run on worker threads kept across calls (``parallel.pool``)
while the caller blocks.

Differences from JAX: ``out_axes=None`` returns device 0's value (JAX
checks that the values agree only under a flag); ``backend`` is accepted
and ignored (the CPU is the only one); ``devices`` gives the number of
workers only; nested ``pmap`` is refused (map the inner axis with
``vmap(..., axis_name=...)``).  Eager ``pmap`` runs the python stage
(JAX always compiles); ``jit(pmap(f))`` compiles.
"""
import functools
import threading
import types

import numpy as np

from ..core.arguments import broadcast_prefix, param_names
from ..core.custom import custom_vjp
from ..errors import call_site
from ..lax import collectives
from ..parallel import ThreadGroup, devices as device_table, perform
from .. import distributed, tree_util
from .derivatives import jvp, vjp
from ..numba_stage import thread_shard
from ..numba_stage.compile import Jitted
from ..parallel.pool import POOL
from .jit import jit as _jit, python_stage
from .transformed import Transformed, Unspecialized

# How long a worker waits in a collective for the others (seconds), so that
# one stuck elsewhere is an error, not a hang.  (A worker that returns, or
# fails, while others wait breaks the wait at once: parallel.group.)
RENDEZVOUS_TIMEOUT = 600.0


def pmap(fun=None, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(),
         devices=None, axis_size=None, backend=None):
    """Map ``fun`` over the leading (``in_axes``) axis of its arguments, one
    shard per device, running the shards in parallel; ``axis_name`` names
    the mapped axis for the collectives inside."""
    if fun is None:
        return functools.partial(pmap, axis_name=axis_name, in_axes=in_axes,
                                 out_axes=out_axes,
                                 static_broadcasted_argnums=static_broadcasted_argnums,
                                 devices=devices, axis_size=axis_size, backend=backend)
    if isinstance(fun, Pmapped):
        raise NotImplementedError(
            "nested pmap is not supported by tangent_x: map the inner axis with "
            "vmap(..., axis_name=...) instead (its collectives work the same)")
    if isinstance(static_broadcasted_argnums, int):
        static_broadcasted_argnums = (static_broadcasted_argnums,)
    return Pmapped(fun, axis_name, in_axes, out_axes, tuple(static_broadcasted_argnums),
                   devices, axis_size, compiled=False)


class Pmapped(custom_vjp):
    """A pmapped function: callable; ``tx.source`` shows its per-shard code;
    ``grad`` through it runs pmap of the function's vjp."""

    def __init__(self, fun, axis_name, in_axes, out_axes, static_argnums, devices, axis_size,
                 compiled):
        super().__init__(fun)
        self.axis_name = axis_name
        self.in_axes = tuple(in_axes) if isinstance(in_axes, list) else in_axes
        self.out_axes = out_axes
        self.static_argnums = static_argnums
        self.devices = devices
        self.axis_size = axis_size
        self.compiled = compiled
        self.fwd = self._fwd
        self.bwd = self._bwd
        self.jvp = self._jvp            # forward mode too (rules/structural.py)
        self._shard = None
        self._jitted = None
        self._mpi_jitted = None     # one device per MPI process (_mpi_shard)
        self._thread_jitted = None  # threads with compiled collectives (_thread_shard)
        self._names = {}            # number of arguments -> their names
        self._call_site = call_site()

    def __repr__(self):
        return f"<tangent_x pmap of {getattr(self.fun, '__qualname__', self.fun)}>"

    # --- the per-shard code ---------------------------------------------------

    @property
    def shard_function(self):
        """What each worker runs: the python stage of ``fun`` (a transform
        runs its own), or under ``jit`` its compiled form."""
        if self._shard is None:
            fun = self.fun
            plain = isinstance(fun, (types.FunctionType, types.MethodType, Transformed)) \
                and not hasattr(fun, "__tangent_x_rebuild__")     # not jacfwd's driver
            if self.compiled and plain:
                self._shard = self.shard_jitted().front()
            elif self.compiled:             # vmap, jacfwd ...: their own jit
                self._shard = _jit(fun)
            else:                           # a transform runs its own code
                self._shard = python_stage(fun) if plain else fun
        return self._shard

    @property
    def __tangent_x_source__(self):
        """For ``tx.source``: the per-shard code (not ``__tangent_x__``: a
        transform of a pmapped function transforms the map, not one shard)."""
        return python_stage(self.fun)

    __tangent_x_pmapped__ = True

    def shard_jitted(self):
        """The per-shard ``Jitted`` that ``jit(pmap(f))`` runs on every worker
        (``nogil``: the workers compute in parallel); ``tx.source(...,
        stage="numba")`` prints its numba stage."""
        if self._jitted is None:
            self._jitted = Jitted(self.fun, python_stage, static_argnums=self.static_argnums)
            self._jitted.nogil = True
        return self._jitted

    def _mpi_shard(self, shard_fn):
        """Under MPI with one device per process: the per-shard code whose
        collectives over the axis are direct MPI calls
        (``numba_stage.mpi_shard``), pointed at this launch's communicator;
        else ``shard_fn`` (several local devices keep the callback)."""
        if shard_fn is not getattr(self._jitted, "front", lambda: None)() or \
                not isinstance(self.axis_name, str):
            return shard_fn
        # local import: MPI is optional and loads only in an mpiexec launch
        from ..numba_stage import mpi_shard
        if self._mpi_jitted is None:
            jitted = Jitted(self.fun, python_stage, static_argnums=self.static_argnums)
            jitted.nogil = True
            jitted.rebind = mpi_shard.rebinding(self.axis_name)
            self._mpi_jitted = jitted
        mpi_shard.activate(distributed.communicator())
        return self._mpi_jitted.front()

    def _thread_shard(self, shard_fn):
        """With threads: the per-shard code whose collectives over the axis
        meet in shared memory, compiled (``numba_stage.thread_shard``: no
        GIL, no callback); None where ``shard_fn`` is not the plain compiled
        shard (a transform's own jit keeps the callback)."""
        if shard_fn is not getattr(self._jitted, "front", lambda: None)() or \
                not isinstance(self.axis_name, str):
            return None
        if self._thread_jitted is None:
            jitted = Jitted(self.fun, python_stage, static_argnums=self.static_argnums)
            jitted.nogil = True
            jitted.rebind = thread_shard.rebinding(self.axis_name)
            self._thread_jitted = jitted
        return self._thread_jitted.front()

    def jitted(self):
        """``jit(pmap(f))``: the same map, each shard compiled by Numba."""
        if self.compiled:
            return self
        return Pmapped(self.fun, self.axis_name, self.in_axes, self.out_axes,
                       self.static_argnums, self.devices, self.axis_size, compiled=True)

    # --- calling --------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        if kwargs:
            raise TypeError(f"pmap({getattr(self.fun, '__name__', 'f')}) maps over positional "
                            f"arguments only, but was given keyword argument(s) "
                            f"{', '.join(kwargs)}: bind them with functools.partial")
        shards, size = self._split(args)
        named = dict(zip(self._param_names(len(args)), args))
        shard_fn = self.shard_function
        if self.compiled and size == 1 and device_table._distributed() is not None:
            shard_fn = self._mpi_shard(shard_fn)
        elif self.compiled and device_table._distributed() is None:
            fast = self._thread_shard(shard_fn)
            if fast is not None:
                session = thread_shard.Session.open(size)
                if session is not None:        # else another call holds the state
                    try:
                        return self._run(fast, shards, size, self.out_axes, named, session)
                    finally:
                        session.close()
        return self._run(shard_fn, shards, size, self.out_axes, named)

    def _param_names(self, n):
        """``param_names(fun, n)``, kept (inspecting a signature costs tens
        of microseconds a call)."""
        names = self._names.get(n)
        if names is None:
            names = self._names[n] = param_names(self.fun, n)
        return names

    def _split(self, args):
        """Per-worker argument lists and the number of shards."""
        names = self._param_names(len(args))
        for i in self.static_argnums:
            if not -len(args) <= i < len(args):
                raise ValueError(f"pmap static_broadcasted_argnums={self.static_argnums} "
                                 f"out of range for {len(args)} positional argument(s)")
        static = {i % len(args) for i in self.static_argnums} if args else set()
        in_axes = self.in_axes
        if isinstance(in_axes, tuple):
            if len(in_axes) != len(args):
                raise ValueError(
                    "pmap in_axes specification must be a tree prefix of the corresponding "
                    f"value, got specification {in_axes} for value tree of {len(args)} "
                    "positional argument(s)")
            per_arg = in_axes
        else:
            per_arg = (in_axes,) * len(args)
        axes, sizes = [], []
        for i, (arg, spec) in enumerate(zip(args, per_arg)):
            if i in static:
                axes.append(None)
                continue
            try:
                full = broadcast_prefix(spec, arg)
            except ValueError as exc:
                raise ValueError(f"pmap in_axes specification for argument {names[i]} does "
                                 f"not match its structure: {exc}") from None
            leaves = tree_util.tree_leaves(arg)
            leaf_axes = tree_util.tree_leaves(full, is_leaf=lambda a: a is None)
            for leaf, ax in zip(leaves, leaf_axes):
                if ax is None:
                    continue
                nd = np.ndim(leaf)
                if not -nd <= ax < nd:
                    raise ValueError(
                        f"pmap was requested to map its argument {names[i]} along axis {ax}, "
                        f"which implies that its rank should be at least "
                        f"{ax + 1 if ax >= 0 else -ax}, but is only {nd} (its shape is "
                        f"{np.shape(leaf)})")
                sizes.append((np.shape(leaf)[ax], names[i], np.shape(leaf), ax))
            axes.append(full)
        if sizes:
            distinct = {s for s, *_ in sizes}
            if len(distinct) > 1:
                lines = [f"  * argument {n} of shape {shape} has size {s} along axis {ax}"
                         for s, n, shape, ax in sizes]
                raise ValueError("pmap got inconsistent sizes for array axes to be mapped:\n"
                                 + "\n".join(lines))
            size = sizes[0][0]
            if self.axis_size is not None and self.axis_size != size:
                raise ValueError(f"pmap axis_size={self.axis_size} does not match the "
                                 f"mapped size {size} of the arguments")
        elif self.axis_size is not None:
            size = self.axis_size
        else:
            raise ValueError("pmap requires at least one argument with a mapped axis "
                             "(in_axes not None), or axis_size")
        available = (len(self.devices) if self.devices is not None
                     else device_table.local_device_count())
        if size > available:
            raise ValueError(
                f"compiling computation that requires {size} logical devices, but only "
                f"{available} XLA devices are available (num_replicas={size}); set "
                f"{device_table.ENV_VAR} to run more pmap workers than CPUs")
        shards = []
        for k in range(size):
            shard = []
            for i, (arg, ax) in enumerate(zip(args, axes)):
                if i in static or ax is None:
                    shard.append(arg)
                else:
                    shard.append(tree_util.tree_map(
                        lambda a, x: a if x is None else _slice(a, k, x, self.compiled), arg, ax,
                        is_leaf=lambda v: v is None))
            shards.append(shard)
        return shards, size

    def _run(self, shard_fn, shards, size, out_axes, named=None, session=None):
        """Run ``shard_fn`` on every shard, each in its own thread, and stack
        the results along ``out_axes``.  ``named`` (argument name -> value):
        across processes, checked to agree in shapes and dtypes first.
        ``session``: a ``thread_shard.Session`` for a shard with compiled
        collectives, run on the kept workers (``parallel.pool``) while this
        thread blocks."""
        group = _make_group(size, named)
        results = [None] * size
        failures = []               # in the order they happened: the first is the cause
        lock = threading.Lock()
        # code generation is not re-entrant: the first call of new per-shard
        # code builds it once, here, before the workers start
        _prepare(shard_fn)

        def work(k):
            handler = functools.partial(_handle, group[k])
            try:
                if session is not None:
                    session.enter(k)
                if self.axis_name is None:
                    results[k] = shard_fn(*shards[k])
                else:
                    with collectives._bind_axis(self.axis_name, handler):
                        results[k] = shard_fn(*shards[k])
                finish = getattr(group[k], "finish", None)
                if finish is not None:
                    finish()
                if session is not None:
                    session.finish(k)
            except BaseException as exc:     # noqa: B902 (re-raised in the caller)
                if session is not None:
                    exc = session.explain(exc, k)
                with lock:
                    failures.append(exc)
                group[k].abort(exc)         # the others stop waiting (WorkerAborted)
                if session is not None:
                    session.abort()

        if session is not None:
            POOL.run(size, work, interrupted=session.abort)
            if failures:
                raise failures[0]
            return _stack(results, out_axes)
        threads = [threading.Thread(target=work, args=(k,), name=f"pmap-worker-{k}",
                                    daemon=True) for k in range(1, size)]
        for t in threads:
            t.start()
        work(0)
        for t in threads:
            t.join()
        if failures:
            raise failures[0]
        return _stack(results, out_axes)

    # --- forward mode: pmap of the jvp --------------------------------------------

    def _jvp(self, primals, tangents):
        """``(out, out_tangent)``: pmap of the per-shard jvp, each tangent
        mapped like its primal."""
        n = len(primals)
        if self.static_argnums:
            raise NotImplementedError("jvp of a pmapped function with "
                                      "static_broadcasted_argnums is not supported")
        in_axes = self.in_axes if isinstance(self.in_axes, tuple) else (self.in_axes,) * n
        # (a partial is no plain function: each worker runs it as it is)
        worker = Pmapped(functools.partial(_shard_jvp, self.fun, n), self.axis_name,
                         in_axes + in_axes, (self.out_axes, self.out_axes), (),
                         self.devices, self.axis_size, False)
        return worker(*primals, *tangents)

    # --- reverse mode: pmap of the vjp ------------------------------------------

    def _fwd(self, *args):
        return self(*args), args

    def _bwd(self, args, g):
        """The cotangents of ``args``: pmap of the per-shard vjp, unmapped
        arguments' cotangents summed over the devices."""
        axis = self.axis_name if self.axis_name is not None else f"_pmap_vjp_{id(self)}"
        n = len(args)
        shards, size = self._split(args)
        in_axes = self.in_axes if isinstance(self.in_axes, tuple) else (self.in_axes,) * n
        unmapped = [i in self.static_argnums or in_axes[i] is None for i in range(n)]
        fun = self.fun
        out_axes = self.out_axes

        def shard_vjp(*shard_args_and_g):
            primals, ct = shard_args_and_g[:n], shard_args_and_g[n]
            _, pull = vjp(fun, *primals)
            cts = pull(ct)
            return tuple(collectives.psum(c, axis) if unmapped[i] else c
                         for i, c in enumerate(cts))

        g_shards = [tree_util.tree_map(lambda a, ax: a if ax is None else np.take(a, k, axis=ax),
                                       g, broadcast_prefix(out_axes, g),
                                       is_leaf=lambda v: v is None)
                    for k in range(size)]
        per_shard = [shard + [gk] for shard, gk in zip(shards, g_shards)]
        worker = Pmapped(shard_vjp, axis, None, None, (), self.devices, size, False)
        out_spec = tuple(0 if not unmapped[i] else None for i in range(n))
        stacked = worker._run(shard_vjp, per_shard, size, _VjpOut(out_spec, in_axes))
        return stacked


def _shard_jvp(fun, n, *primals_and_tangents):
    return jvp(fun, primals_and_tangents[:n], primals_and_tangents[n:])


class _VjpOut:
    """out_axes of a per-shard vjp: per argument, its in_axes (mapped) or None."""

    def __init__(self, unmapped_spec, in_axes):
        self.spec = tuple(None if u is None else ax for u, ax in zip(unmapped_spec, in_axes))


def _handle(group, op, x, axis_name, **params):
    return perform(group, op, x, params)


def _make_group(size, named=None):
    """The workers' group: across processes after distributed.initialize()
    (MPI), else threads of this process.  Across processes every process's
    arguments ``named`` must agree in shapes and dtypes: one check before
    the workers start, so a mismatch names the argument (not the first
    collective's operand) on every rank."""
    if device_table._distributed() is not None:
        # local import: MPI is optional and loads only in an mpiexec launch
        from ..parallel.mpi import MPIGroup
        leaves = {}
        for name, value in (named or {}).items():
            parts = tree_util.tree_leaves(value)
            for i, leaf in enumerate(parts):
                leaves[name if len(parts) == 1 else f"{name} (leaf {i})"] = leaf
        # the device counts and the arguments: one all-reduce
        group = MPIGroup(size, arguments=leaves)
        return [group.worker(k) for k in range(size)]
    return ThreadGroup.create(size, timeout=RENDEZVOUS_TIMEOUT)


def _slice(a, k, axis, compiled):
    """Device ``k``'s slice of ``a`` along ``axis``: under jit a view where
    it is contiguous (the generated code never writes to its arguments: an
    in-place update is rewritten to a copy), else a copy (``np.take``), as
    for eager pmap, whose function may be any Python."""
    if compiled and isinstance(a, np.ndarray):
        view = a[(slice(None),) * (axis % a.ndim) + (k,)]
        if view.flags.c_contiguous:
            return view
    return np.take(a, k, axis=axis)


def _prepare(shard_fn):
    """Build ``shard_fn``'s generated code on this thread (see ``_run``); code
    that depends on the arguments is built by the first worker to call it,
    under ``Transformed``'s lock."""
    inner = getattr(shard_fn, "__tangent_x__", None)
    if isinstance(inner, Transformed):
        try:
            inner.generated
        except Unspecialized:
            pass


def _stack(results, out_axes):
    """The workers' results with the device axis at ``out_axes``."""
    if isinstance(out_axes, _VjpOut):
        return tuple(_stack([r[i] for r in results], ax) for i, ax in enumerate(out_axes.spec))
    first = results[0]
    spec = broadcast_prefix(out_axes, first)
    flat_spec = tree_util.tree_leaves(spec, is_leaf=lambda a: a is None)
    leaves = [tree_util.tree_leaves(r) for r in results]
    out = []
    for j, ax in enumerate(flat_spec):
        column = [lv[j] for lv in leaves]
        if ax is None:
            out.append(column[0])
        else:
            out.append(np.stack([np.asarray(c) for c in column], axis=ax))
    return tree_util.tree_unflatten(tree_util.tree_structure(first), out)
