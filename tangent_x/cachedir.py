"""The cache directory: where generated modules (and Numba's compiled code
for them) are written.

``$TANGENT_X_CACHE_DIR``, else ``$XDG_CACHE_HOME/tangent_x``, else
``~/.cache/tangent_x``.  A directory that cannot be used (a path that is a
regular file or lies under one, no permission to write, a read-only file
system) is replaced, for this process, by a private temporary directory
(removed at exit), named in one warning together with the directory that
failed: transforms keep working, only the reuse across processes is lost.
"""
import atexit
import os
import shutil
import tempfile
import threading
import warnings

__all__ = ["cache_dir", "unusable", "CacheDirectoryWarning"]


class CacheDirectoryWarning(UserWarning):
    """The cache directory cannot be used; a temporary one is used instead."""


_USABLE = {}         # configured directory -> the directory used for it
_FALLBACK = []       # the private temporary directory, once made
_LOCK = threading.Lock()


def configured():
    """The directory asked for (by the environment, read at every call)."""
    path = os.environ.get("TANGENT_X_CACHE_DIR")
    if not path:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"),
                                                                 ".cache")
        path = os.path.join(base, "tangent_x")
    return path


def cache_dir():
    """The directory to write generated files to (made if need be)."""
    path = configured()
    used = _USABLE.get(path)
    if used is None:
        with _LOCK:
            used = _USABLE.get(path)
            if used is None:
                try:
                    _check(path)
                    used = path
                except OSError as exc:
                    used = _fallback(path, exc)
                _USABLE[path] = used
    return used


def unusable(path, exc):
    """A write into ``path`` (a directory ``cache_dir`` returned) failed:
    the directory to use instead.  Raises ``exc`` if ``path`` is already
    the temporary directory."""
    with _LOCK:
        if _FALLBACK and path == _FALLBACK[0]:
            raise exc
        used = _fallback(path, exc)
        for key, value in list(_USABLE.items()):
            if value == path:
                _USABLE[key] = used
        return used


def _check(path):
    os.makedirs(path, exist_ok=True)
    # modes do not stop root, a read-only file system does: try a file
    tempfile.TemporaryFile(dir=path).close()


def _fallback(path, exc):
    if not _FALLBACK:
        try:
            made = tempfile.mkdtemp(prefix="tangent_x_cache_")
        except OSError as again:
            raise OSError(
                f"tangent_x cannot write to its cache directory {path} ({_reason(exc)}) nor "
                f"make a temporary one ({_reason(again)}); set TANGENT_X_CACHE_DIR to a "
                f"writable directory") from exc
        atexit.register(shutil.rmtree, made, True)
        _FALLBACK.append(made)
    used = _FALLBACK[0]
    warnings.warn(
        f"tangent_x cannot use the cache directory {path} ({_reason(exc)}); generated code "
        f"is written to the private temporary directory {used} for this process instead "
        f"(removed at exit, so nothing is reused by the next one). Set "
        f"TANGENT_X_CACHE_DIR to a writable directory.", CacheDirectoryWarning, stacklevel=3)
    return used


def _reason(exc):
    where = f": {exc.filename}" if getattr(exc, "filename", None) else ""
    return f"{type(exc).__name__}: {exc.strerror or exc}{where}"
