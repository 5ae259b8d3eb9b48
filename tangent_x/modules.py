"""Generated modules are real files, imported from a cache directory.

Real files give tracebacks, pdb and linecache the generated lines for free,
and (later) let Numba cache compiled code on disk.  A file is named by a hash
of its own text, and that text embeds the user's source, the transform, its
options and tangent_x's version: a changed function therefore always gets a
new file and can never run stale generated code.
"""
import hashlib
import importlib.util
import os
import sys
import tempfile

from .errors import Origin

LINEMAPS = {}     # generated file path -> {line: Origin}


def cache_dir():
    """$TANGENT_X_CACHE_DIR, else $XDG_CACHE_HOME/tangent_x, else ~/.cache/tangent_x."""
    path = os.environ.get("TANGENT_X_CACHE_DIR")
    if not path:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        path = os.path.join(base, "tangent_x")
    os.makedirs(path, exist_ok=True)
    return path


def write(stem, text):
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    path = os.path.join(cache_dir(), f"{stem}_{digest}.py")
    if not os.path.exists(path):
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    return path


_counter = [0]


def load(stem, text, env, linemap, importable=False):
    """Write (if new) and import a generated module with ``env`` bound in it.

    ``importable``: register it in ``sys.modules`` under a name fixed by its
    text (``tangent_x_<stem>_<hash>``), so that another process can import
    it by that name: Numba's on-disk cache refers to compiled functions'
    modules by name."""
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
    spec.loader.exec_module(module)
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

