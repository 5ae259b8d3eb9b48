"""Kernels compiled beside the caller: fixed C callables, built by a second
process while this one compiles the code that calls them.

Why: in a cold first call of ``jit(grad(mlp loss))`` a third of Numba's
time went to two kernels that do not depend on the user's code at all: the
matrix product (~0.9 s) and the loop of ``vmath.tanh`` over an array
(~0.4 s).  Each is a ``numba.cfunc`` with a fixed signature, generated as a
real module file and cached on disk by Numba.  When a compile types a call
that needs one and it is not loaded (``request``), a second Python process
(``beside_server``, reading kernel names on its stdin) compiles it into Numba's
disk cache while this process goes on typing and compiling the caller.
When this thread's outermost Numba compile ends -- before any compiled code
can run -- this process waits for what it asked for and loads it from the
cache (``ready``), which takes milliseconds.  The second process exits
once it has nothing left to do.

Compiled code calls a kernel through its *slot*: a pointer-sized cell whose
address is registered, at import, under a symbol named after the kernel.
So the caller's machine code (and Numba's disk cache of it) can be
finished before the kernel exists, and is never bound to an address of
one process; a call through an empty slot raises RuntimeError instead of
jumping to nothing.  Calling through a pointer also keeps the kernel's code
out of the caller: a Numba function calling another gets a copy of its
LLVM code and optimises it again.

Where a second process cannot help -- a process restricted to one CPU, or
TANGENT_X_BACKGROUND_COMPILE=0 -- or cannot start, the kernel is compiled
in this process when requested, as any Numba function is.
"""
import ctypes
import os
import subprocess
import sys
import threading

import llvmlite.binding as llvm_binding
import llvmlite.ir as llvm_ir
from numba import cfunc
from numba.core import cgutils, event

from ..python_stage import loader as modules

KERNELS = {}                     # name -> Kernel
_LOCK = threading.RLock()
_SERVER = {}                     # "process": the second process, "asked": names sent to it


class Kernel:
    """A C callable: ``entry`` of the generated module ``text()``, compiled
    as ``cfunc(signature)``; ``prepare()`` runs first in every process that
    compiles or loads it (e.g. registering a symbol its code calls)."""

    def __init__(self, name, text, entry, signature, fastmath=False, prepare=None):
        self.name, self.text, self.entry = name, text, entry
        self.signature, self.fastmath, self.prepare = signature, fastmath, prepare
        self.cfunc = None
        self.built_beside = None
        self.slot = ctypes.c_void_p(0)
        self.symbol = f"tangent_x_slot_{name}"
        llvm_binding.add_symbol(self.symbol, ctypes.addressof(self.slot))
        KERNELS[name] = self

    def module(self):
        """The generated module, a real file named by its text: the second
        process compiles the very file this one loads."""
        return modules.load(f"kernel_{self.name}", self.text(), {}, {}, importable=True)[0]

    def load(self, cached_only=False):
        """Load it from Numba's disk cache, or compile it here (not with
        ``cached_only``), into its slot; whether it is there."""
        if self.prepare is not None:
            self.prepare()
        pyfunc = getattr(self.module(), self.entry)
        if cached_only:
            # what numba.cfunc(cache=True) does first, without compiling
            from numba.core import sigutils
            from numba.core.ccallback import CFunc
            probe = CFunc(pyfunc, sigutils.normalize_signature(self.signature), locals={},
                          options={"fastmath": self.fastmath} if self.fastmath else {})
            probe.enable_caching()
            if probe._cache.load_overload(probe._sig, probe._targetdescr.target_context) is None:
                return False
        self.cfunc = cfunc(self.signature, cache=True, fastmath=self.fastmath)(pyfunc)
        self.slot.value = self.cfunc.address
        return True

    def call(self, context, builder, args):
        """Lowering: call the kernel through its slot with LLVM values ``args``."""
        restype = context.get_value_type(self.signature.return_type)
        argtypes = [context.get_value_type(t) for t in self.signature.args]
        fnty = llvm_ir.FunctionType(restype, argtypes)
        slot = builder.module.globals.get(self.symbol)
        if slot is None:
            slot = llvm_ir.GlobalVariable(builder.module, fnty.as_pointer(), self.symbol)
        fn = builder.load(slot)
        with cgutils.if_unlikely(builder, cgutils.is_null(builder, fn)):
            context.call_conv.return_user_exc(builder, RuntimeError, (
                f"tangent_x's kernel {self.name!r} was not loaded before compiled code "
                f"called it (tangent_x.numba_stage.beside.ready loads it)",))
        return builder.call(fn, args)


def _allowed():
    if os.environ.get("TANGENT_X_BACKGROUND_COMPILE", "1") == "0":
        return False
    try:
        return len(os.sched_getaffinity(0)) > 1
    except AttributeError:                     # not Linux
        return (os.cpu_count() or 1) > 1


def _server():
    """The second process, started if need be; None where there is none."""
    process = _SERVER.get("process")
    if process is not None:
        return process
    if not _allowed():
        return None
    # the directory holding the tangent_x package (three levels above this file)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, TANGENT_X_CACHE_DIR=modules.cache_dir(),
               PYTHONPATH=os.pathsep.join([root] + [p for p in [os.environ.get("PYTHONPATH")]
                                                    if p]))
    try:
        process = subprocess.Popen([sys.executable, "-m", "tangent_x.numba_stage.beside_server"],
                                   env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, text=True, bufsize=1)
    except OSError:
        return None
    _SERVER.update(process=process, asked=[], done={})
    return process


def request(kernel):
    """Compiled code being compiled calls ``kernel``: have it built."""
    with _LOCK:
        if kernel.cfunc is not None or kernel.name in _SERVER.get("asked", ()):
            return
        if kernel.load(cached_only=True):       # a few ms: no second process
            return
        process = _server()
        if process is not None:
            try:
                process.stdin.write(kernel.name + "\n")
                process.stdin.flush()
                _SERVER["asked"].append(kernel.name)
                return
            except OSError:                     # it is gone: what it was asked is ours
                asked = list(_SERVER.get("asked", ()))
                _stop()
                for name in asked:
                    KERNELS[name].load()
        kernel.load()


def ready(kernel):
    """``kernel`` loaded in its slot (waiting for the second process if it
    is building it); returns its cfunc."""
    with _LOCK:
        if kernel.cfunc is None:
            if kernel.name in _SERVER.get("asked", ()):
                _wait(kernel.name)
            kernel.load()
            # the second process's report on it, kept for tests ("built")
            kernel.built_beside = _SERVER.get("done", {}).get(kernel.name)
        if _SERVER and all(KERNELS[name].cfunc is not None for name in _SERVER["asked"]):
            _stop()
    return kernel.cfunc


def _wait(name):
    """Read the second process's reports until one is about ``name``."""
    process, done = _SERVER["process"], _SERVER["done"]
    while name not in done:
        line = process.stdout.readline()
        if not line:                            # it died: compile here instead
            for asked in _SERVER["asked"]:
                done.setdefault(asked, "lost")
            return
        status, _, which = line.strip().partition(" ")
        done[which] = status


def _stop():
    """Let the second process go: it exits at the end of its input.  Not
    waited for (its interpreter takes ~0.3 s to shut down); ``subprocess``
    reaps it later."""
    process = _SERVER.pop("process", None)
    _SERVER.clear()
    if process is not None:
        try:
            process.stdin.close()
        except OSError:
            process.kill()


_LOADING = threading.local()


def ready_all():
    """Every kernel asked of the second process, loaded.  Not again from
    within: compiling a kernel here (when the second process could not)
    compiles the Numba functions it calls, whose ends are outermost
    compiles too."""
    with _LOCK:
        if getattr(_LOADING, "on", False):
            return
        _LOADING.on = True
        try:
            for name in list(_SERVER.get("asked", ())):
                ready(KERNELS[name])
        finally:
            _LOADING.on = False


class _ReadyWhenCompiled(event.Listener):
    """Loads what the second process built when the outermost Numba compile
    of this thread ends: before any code calling it can run."""

    def __init__(self):
        self.depth = threading.local()

    def on_start(self, ev):
        self.depth.n = getattr(self.depth, "n", 0) + 1

    def on_end(self, ev):
        self.depth.n -= 1
        if self.depth.n == 0 and _SERVER.get("asked"):
            ready_all()


event.register("numba:compile", _ReadyWhenCompiled())
