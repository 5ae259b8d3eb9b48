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
"""
import contextlib
import itertools

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


def install():
    """Replace Numba's unlocked ``save`` (once; idempotent)."""
    if fcntl is None:
        return
    from numba.core import caching
    cls = caching.IndexDataCacheFile
    if getattr(cls.save, "__module__", None) == __name__:
        return
    if not all(hasattr(cls, name) for name in ("_load_index", "_save_index", "_save_data",
                                               "_data_name")):
        return                   # a Numba whose cache we do not know: leave it
    cls.save = _save
