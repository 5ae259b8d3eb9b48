"""Numba's on-disk cache made safe for processes compiling at once.

Why: Numba keeps one index file per cached function (``<qualname>-<line>
.nbi``: every closure made by one ``def`` and every type signature share
it) mapping each compiled version to a numbered data file.  To add a
version, a process reads the index, takes the first free number, writes
the index and then the data, with no lock.  Two processes adding versions
at once (pytest-xdist workers, a multiprocessing pool, MPI ranks) can take
the same number: the index then sends one version's key to the other's
machine code, and a later process silently runs the wrong function.  Seen
here: ``vmath.log1p``'s array loop loaded with ``exp``'s code (the five
vmath kernels' loops share one index), a gradient off by a factor of 10^4;
reproduced with plain ``numba.njit(cache=True)`` closures, 1-2 wrong in 40
after four processes compiled at once.

The fix, installed when tangent_x is imported: adding a version takes an
exclusive lock on ``<index>.lock`` (``fcntl.flock``), re-reads the index
under it, and writes the data file *before* the index names it, so a
reader never finds a key whose data is not yet (or no longer) its own.
Where ``fcntl`` is missing (Windows) the cache is left as Numba has it.
This changes a Numba internal (``IndexDataCacheFile.save``); the test
``tests/test_jit.py::test_processes_compiling_at_once_share_the_disk_cache``
fails if a Numba release changes it under us.

Functions from different processes must not share a symbol name.  Numba
names a compiled function by its module, qualified name and a number
counted from 1 in each process (``FunctionIdentity._unique_ids``).  Every
closure made by one ``def`` has one qualified name -- vmath's array loop
``_compiled_like.<locals>._impl.<locals>.by_kernel`` is one for ``tanh``
and ``log1p`` -- so two processes compiling callers of different ones
could give both copies one name; a third process loading both callers
from the disk cache then linked the second caller to the first's copy:
``np.tanh`` under jit computed ``log1p`` (seen here in session 25, a test
run after many others, reproduced with that cache).  The counter now
starts, in each process, at a random 60-bit number, so names compiled by
two processes coincide only with a negligible chance; the runtime stamp
(``loading.runtime_stamp``, which hashes this file) keeps code compiled
before this from being loaded.

Two more faults are made harmless here.  A truncated or garbled index or
data file (a process killed mid-write by another tool, a full disk) made
Numba raise ``UnpicklingError`` from deep inside a compile: such a file is
now read as empty (the index) or missing (the data), so the function is
compiled again and the file written anew.  And where Numba finds no
place to cache at all (a read-only install with an unwritable home
directory: ``@njit(cache=True)`` then raises at import), its compiled code
goes under tangent_x's cache directory (``cachedir``), so that
``import tangent_x`` always works.
"""
import contextlib
import itertools
import os

from .. import cachedir

try:
    import fcntl
except ImportError:          # pragma: no cover - not POSIX
    fcntl = None


@contextlib.contextmanager
def _locked(path):
    with open(path + ".lock", "a") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def _save(self, key, data):
    """``IndexDataCacheFile.save``, under the index's lock, data first."""
    with _locked(self._index_path):
        overloads = self._load_index()
        data_name = overloads.get(key)
        if data_name is not None:
            self._save_data(data_name, data)
            return
        existing = set(overloads.values())
        data_name = next(name for name in map(self._data_name, itertools.count(1))
                         if name not in existing)
        self._save_data(data_name, data)
        overloads[key] = data_name
        self._save_index(overloads)


def _tolerant(load):
    """Numba's loader of an index or data file, reading a garbled file as
    none (FileNotFoundError and the like still propagate as Numba has them)."""
    def read(self, *args):
        try:
            return load(self, *args)
        except OSError:
            raise
        except Exception:     # UnpicklingError, EOFError, ValueError ... of a cut file
            return None
    read.__tangent_x_tolerant__ = True
    read.__wrapped__ = load
    return read


def _index_or_empty(load):
    read = _tolerant(load)

    def load_index(self):
        found = read(self)
        return {} if found is None else found
    load_index.__tangent_x_tolerant__ = True
    return load_index


def _fallback_locator(caching):
    """A locator tried after Numba's own: tangent_x's cache directory."""
    base = getattr(caching, "UserProvidedCacheLocator", None) or \
        getattr(caching, "_UserProvidedCacheLocator", None)
    if base is None or not hasattr(caching, "_SourceFileBackedLocatorMixin"):
        return None          # a Numba whose locators we do not know

    class TangentXCacheLocator(base):
        def __init__(self, py_func, py_file):
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = os.path.join(cachedir.cache_dir(), "numba",
                                            self.get_suitable_cache_subpath(py_file))

        @classmethod
        def from_function(cls, py_func, py_file):
            # the file-backed checks, without the user-provided one's
            # "is NUMBA_CACHE_DIR set"
            try:
                return super(base, cls).from_function(py_func, py_file)
            except OSError:      # not even a temporary directory: Numba says so
                return None

    TangentXCacheLocator.__module__ = __name__
    return TangentXCacheLocator


def _process_unique_ids():
    """Number this process's compiled functions from a random start (see
    above); once per process."""
    from numba.core.bytecode import FunctionIdentity
    if not getattr(FunctionIdentity, "__tangent_x_unique__", False):
        FunctionIdentity._unique_ids = itertools.count(
            (int.from_bytes(os.urandom(8), "little") >> 4) + 1)
        FunctionIdentity.__tangent_x_unique__ = True


def install():
    """Make Numba's disk cache safe: function names unique across
    processes, lock its writes (POSIX), read garbled files as none, give
    it a last place to cache (once; idempotent)."""
    from numba.core import caching
    _process_unique_ids()
    cls = caching.IndexDataCacheFile
    for name, wrap in (("_load_index", _index_or_empty), ("load", _tolerant)):
        current = getattr(cls, name, None)
        if current is not None and not getattr(current, "__tangent_x_tolerant__", False):
            setattr(cls, name, wrap(current))
    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    locators = getattr(impl, "_locator_classes", None)
    if isinstance(locators, list) and not any(c.__name__ == "TangentXCacheLocator"
                                              for c in locators):
        locator = _fallback_locator(caching)
        if locator is not None:
            locators.append(locator)
    if fcntl is None:
        return
    if getattr(cls.save, "__module__", None) == __name__:
        return
    if not all(hasattr(cls, name) for name in ("_load_index", "_save_index", "_save_data",
                                               "_data_name")):
        return                   # a Numba whose cache we do not know: leave it
    cls.save = _save
