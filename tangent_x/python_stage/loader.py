"""Generated modules are real files, imported from a cache directory.

Real files give tracebacks, pdb and linecache the generated lines for free,
and (later) let Numba cache compiled code on disk.  A file is named by a hash
of its own text, and that text embeds the user's source, the transform, its
options and tangent_x's version: a changed function therefore always gets a
new file and can never run stale generated code.

A file found there is used only if it holds exactly the text it must (a
crash mid-write or an edit would otherwise be imported as it is); else it
is written again, whole, under a temporary name and renamed into place.
The module is then run from that text, not read back, so what runs is
what was generated.  Where the directory is: see ``cachedir``.
"""
import contextlib
import hashlib
import importlib.util
import os
import sys
import tempfile
import threading

from .. import cachedir
from ..core.origins import LINEMAPS
from ..errors import Origin



def cache_dir():
    """The cache directory (see ``cachedir``)."""
    return cachedir.cache_dir()


def write(stem, text):
    """The path of the file named by ``text``'s hash, holding ``text``."""
    data = text.encode("utf-8")
    name = f"{stem}_{hashlib.sha256(data).hexdigest()[:16]}.py"
    directory = cache_dir()
    path = os.path.join(directory, name)
    if _holds(path, data):
        return path
    try:
        _write_whole(path, data)
    except OSError as exc:        # the directory went read-only, or away
        path = os.path.join(cachedir.unusable(directory, exc), name)
        if not _holds(path, data):
            _write_whole(path, data)
    return path


def _holds(path, data):
    try:
        with open(path, "rb") as f:
            return f.read(len(data) + 1) == data
    except OSError:
        return False


def _write_whole(path, data):
    """Write under a temporary name, then rename: readers never see half."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


_counter = [0]
# One module at a time: an importable module is in sys.modules before its
# text has run, and pmap's workers may load the same shard at once (another
# thread would get the half-made module).  The same lock serves all making
# of code in threads (``CODE_LOCK``: the api's building of generated code,
# the numba stage's compiling, this loading), so that no two locks are
# ever taken in two orders; CPython 3.11's ast.parse is not safe in two
# threads at once either ("AST constructor recursion depth mismatch").
_LOCK = CODE_LOCK = threading.RLock()


def load(stem, text, env, linemap, importable=False):
    """Write (if new) and import a generated module with ``env`` bound in it.

    ``importable``: register it in ``sys.modules`` under a name fixed by its
    text (``tangent_x_<stem>_<hash>``), so that another process can import
    it by that name: Numba's on-disk cache refers to compiled functions'
    modules by name."""
    with _LOCK:
        return _load(stem, text, env, linemap, importable)


def _load(stem, text, env, linemap, importable):
    path = write(stem, text)
    LINEMAPS[path] = linemap
    if importable:
        modname = "tangent_x_" + os.path.basename(path)[:-3]
        if modname in sys.modules:
            return sys.modules[modname], path
    else:
        _counter[0] += 1
        modname = f"tangent_x_generated.{os.path.basename(path)[:-3]}_{_counter[0]}"
    spec = importlib.util.spec_from_file_location(modname, path)
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update(env)
    if importable:
        sys.modules[modname] = module
    # run the text written (and checked) above, not whatever the file or a
    # bytecode cache of it holds by now
    exec(compile(text, path, "exec", dont_inherit=True), module.__dict__)
    return module, path


def annotate(exc):
    """Add a note naming the generated line and the user's line it came from."""
    tb = exc.__traceback__
    notes = []
    while tb is not None:
        path = tb.tb_frame.f_code.co_filename
        linemap = LINEMAPS.get(path)
        if linemap is not None:
            origin = linemap.get(tb.tb_lineno)
            where = f"generated code {path}:{tb.tb_lineno}"
            if isinstance(origin, Origin):
                notes.append(f"tangent_x: raised in {where}, from your "
                             f"{origin.where()}: {origin.text}")
            else:
                notes.append(f"tangent_x: raised in {where}")
        tb = tb.tb_next
    for note in notes[-1:]:
        if hasattr(exc, "add_note"):
            exc.add_note(note)
        else:   # Python 3.10: no notes; append to the message
            exc.args = (f"{exc.args[0] if exc.args else ''}\n{note}",) + tuple(exc.args[1:])
    return exc

