"""The code transformed is the code that runs, and caches on disk cannot lie.

Stale source: a module edited and reloaded, a file re-run with runpy, a
function redefined by exec, a function whose code object was swapped (as
IPython's autoreload does) are transformed as they now are; a function
whose file changed after it was defined is refused with an error naming
the file and line.  Caches: a generated module in the cache directory that
was truncated or edited is written again before it is imported; a cache
directory that cannot be used falls back to a private temporary directory
with one warning; a truncated Numba index is rebuilt; ``import tangent_x``
works without any writable cache location.
"""
import importlib
import linecache
import os
import runpy
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tangent_x as tx

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# One module, two versions with the same line count: a helper, a decorated
# function, a closure made by a factory, a lambda and a method.
_V1 = textwrap.dedent("""\
    import numpy as np

    def scale(x):
        return 3.0 * x

    def deco(fn):
        return fn

    @deco
    def f(x):
        return np.sum(scale(x) * x)

    def make(c):
        def inner(x):
            return c * np.sin(x)
        return inner

    g = make(2.0)
    h = lambda x: x ** 3

    class Model:
        def loss(self, x):
            return np.sum(x ** 2)
""")
_V2 = (_V1.replace("3.0 * x", "5.0 * x").replace("np.sin(x)", "np.cos(x)")
       .replace("x ** 3", "x ** 4").replace("np.sum(x ** 2)", "np.sum(x ** 3)"))
assert _V2.count("\n") == _V1.count("\n") and _V2 != _V1


def _write(path, text, bump=0):
    """Write ``text``; ``bump`` seconds added to the mtime so that Python's
    bytecode cache (keyed by whole-second mtime and size) sees the edit."""
    path.write_text(text)
    st = os.stat(path)
    os.utime(path, (st.st_atime, st.st_mtime + bump))


def _check_v1(ns, x):
    np.testing.assert_allclose(tx.grad(ns.f)(x), 6.0 * x)
    np.testing.assert_allclose(tx.grad(ns.g)(0.5), 2.0 * np.cos(0.5))
    np.testing.assert_allclose(tx.grad(ns.h)(2.0), 12.0)
    np.testing.assert_allclose(tx.grad(ns.Model().loss)(x), 2.0 * x)


def _check_v2(ns, x):
    np.testing.assert_allclose(tx.grad(ns.f)(x), 10.0 * x)
    np.testing.assert_allclose(tx.grad(ns.g)(0.5), -2.0 * np.sin(0.5))
    np.testing.assert_allclose(tx.grad(ns.h)(2.0), 32.0)
    np.testing.assert_allclose(tx.grad(ns.Model().loss)(x), 3.0 * x ** 2)


class _NS:
    def __init__(self, d):
        self.__dict__.update(d)


@pytest.fixture
def module_dir(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path


def test_reloaded_module_is_transformed_as_it_now_is(module_dir):
    path = module_dir / "tx_stale_reload.py"
    _write(path, _V1)
    module = importlib.import_module("tx_stale_reload")
    try:
        x = np.array([1.0, -2.0])
        _check_v1(module, x)
        _write(path, _V2, bump=10)
        importlib.reload(module)
        _check_v2(module, x)
    finally:
        sys.modules.pop("tx_stale_reload", None)


def test_jit_follows_a_reloaded_module(module_dir):
    path = module_dir / "tx_stale_reload_jit.py"
    _write(path, _V1)
    module = importlib.import_module("tx_stale_reload_jit")
    try:
        x = np.array([1.0, -2.0])
        np.testing.assert_allclose(tx.jit(tx.grad(module.f))(x), 6.0 * x)
        _write(path, _V2, bump=10)
        importlib.reload(module)
        np.testing.assert_allclose(tx.jit(tx.grad(module.f))(x), 10.0 * x)
    finally:
        sys.modules.pop("tx_stale_reload_jit", None)


def test_file_run_again_with_runpy_is_transformed_as_it_now_is(module_dir):
    path = module_dir / "tx_stale_runpy.py"
    x = np.array([0.5, 3.0])
    _write(path, _V1)
    _check_v1(_NS(runpy.run_path(str(path))), x)
    _write(path, _V2, bump=10)
    _check_v2(_NS(runpy.run_path(str(path))), x)


def test_function_redefined_by_exec_under_the_same_name():
    filename = "<tangent_x test redefined by exec>"
    x = np.array([1.5, -1.0])
    for text, check in ((_V1, _check_v1), (_V2, _check_v2)):
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
        ns = {}
        exec(compile(text, filename, "exec"), ns)
        check(_NS(ns), x)


def test_exec_of_source_linecache_does_not_hold_is_a_located_error():
    """Redefined by exec from new text while linecache keeps the old text:
    the old text is not the code that runs."""
    filename = "<tangent_x test exec without linecache>"
    linecache.cache[filename] = (len(_V1), None, _V1.splitlines(True), filename)
    ns = {}
    exec(compile(_V2, filename, "exec"), ns)
    for fn, arg, at in ((ns["f"], np.array([1.0]), ns["scale"]), (ns["h"], 1.0, ns["h"]),
                        (ns["g"], 1.0, ns["g"])):
        with pytest.raises(tx.TransformError, match="is not the code that runs") as info:
            tx.grad(fn)(arg)
        assert f"{filename}:{at.__code__.co_firstlineno}:" in str(info.value)
        assert "reload" in str(info.value)


def test_file_changed_without_reload_is_a_located_error(module_dir):
    """The running code is the old one, the file is new: neither the new
    file's derivative nor a crash, an error naming the file and line."""
    path = module_dir / "tx_stale_noreload.py"
    _write(path, _V1)
    module = importlib.import_module("tx_stale_noreload")
    try:
        x = np.array([1.0, 2.0])
        np.testing.assert_allclose(tx.grad(module.scale)(1.0), 3.0)   # linecache holds V1
        _write(path, _V2, bump=10)
        # f's own text is the same in both versions: the error is at the
        # helper it calls, whose text changed
        for fn, arg, at in ((module.f, x, module.scale), (module.h, 2.0, module.h),
                            (module.g, 0.5, module.g), (module.Model().loss, x, module.Model.loss)):
            with pytest.raises(tx.TransformError, match="is not the code that runs") as info:
                tx.grad(fn)(arg)
            assert f"{path}:{at.__code__.co_firstlineno}:" in str(info.value)
        np.testing.assert_allclose(module.f(x), 3.0 * np.sum(x * x))   # the code that runs
        _write(path, "# a line added on top moves every definition\n" + _V1, bump=20)
        for fn, arg in ((module.f, x), (module.h, 2.0), (module.Model().loss, x)):
            with pytest.raises(tx.TransformError, match="is not the code that runs") as info:
                tx.grad(fn)(arg)
            assert f"{path}:{getattr(fn, '__func__', fn).__code__.co_firstlineno}:" \
                in str(info.value)
    finally:
        sys.modules.pop("tx_stale_noreload", None)


def test_swapped_code_object_rebuilds_transforms_made_before(module_dir):
    """IPython's autoreload keeps the function object and replaces its
    ``__code__``: a transform made before must follow the new code."""
    path = module_dir / "tx_stale_autoreload.py"
    _write(path, _V1)
    module = importlib.import_module("tx_stale_autoreload")
    try:
        x = np.array([1.0, -3.0])
        grad_f, grad_h = tx.grad(module.f), tx.grad(module.h)
        jit_grad_h = tx.jit(grad_h)
        np.testing.assert_allclose(grad_f(x), 6.0 * x)
        assert grad_h(2.0) == pytest.approx(12.0)
        assert jit_grad_h(2.0) == pytest.approx(12.0)
        _write(path, _V2, bump=10)
        new = {}
        exec(compile(_V2, str(path), "exec"), new)
        for name in ("scale", "f", "h"):
            getattr(module, name).__code__ = new[name].__code__
        np.testing.assert_allclose(grad_f(x), 10.0 * x)
        assert grad_h(2.0) == pytest.approx(32.0)
        assert jit_grad_h(2.0) == pytest.approx(32.0)
    finally:
        sys.modules.pop("tx_stale_autoreload", None)


def _with_assert(x):
    assert x.shape == (2,), "pytest rewrites this assert"
    return np.sum(x ** 3)


def test_function_with_an_assert_in_a_pytest_rewritten_module():
    """pytest compiles test modules from a rewritten tree: the check of the
    source against the code compiles them the same way, so a function with
    an assert is transformed (asserts are checks, test_comprehensions_recursion)
    and never taken for a changed file."""
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(tx.grad(_with_assert)(x), 3.0 * x ** 2)
    with pytest.raises(AssertionError, match="pytest rewrites this assert"):
        tx.grad(_with_assert)(np.array([1.0, 2.0, 3.0]))


# ---------------------------------------------------------------------------
# Generated modules in the cache directory are verified before use
# ---------------------------------------------------------------------------

def _cubic(x):
    return np.sum(np.sin(x) * x ** 3)


def _cubic_grad(x):
    return np.cos(x) * x ** 3 + 3.0 * np.sin(x) * x ** 2


@pytest.mark.parametrize("damage", ["truncated", "edited", "emptied"])
def test_damaged_generated_module_is_written_again(tmp_path, monkeypatch, damage):
    monkeypatch.setenv("TANGENT_X_CACHE_DIR", str(tmp_path))
    x = np.array([0.5, -1.5, 2.0])
    first = tx.grad(_cubic)
    np.testing.assert_allclose(first(x), _cubic_grad(x))
    path = first.generated.path
    text = first.generated.text
    assert os.path.dirname(path) == str(tmp_path)
    damaged = {"truncated": text[:len(text) // 2],
               "edited": text.replace("cos", "sin"),
               "emptied": ""}[damage]
    assert damaged != text
    with open(path, "w") as f:
        f.write(damaged)
    again = tx.grad(_cubic)           # a new transform: loads the file again
    np.testing.assert_allclose(again(x), _cubic_grad(x))
    assert again.generated.path == path
    with open(path) as f:
        assert f.read() == text
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


_JIT_CHILD = textwrap.dedent("""\
    import sys
    import numpy as np
    import tangent_x as tx

    def f(x):
        return np.sum(np.sin(x) * x ** 3)

    jitted = tx.jit(tx.grad(f))
    out = jitted(np.array([0.5, -1.5, 2.0]))
    print(jitted._tx_self._last.path)
    print(repr(out.tolist()))
""")


def _run(script, env_extra, tmp_path, cwd=None, drop=()):
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(env_extra)
    env["PYTHONPATH"] = os.pathsep.join([ROOT] + [p for p in [env.get("PYTHONPATH")] if p])
    env["TANGENT_X_BACKGROUND_COMPILE"] = "0"
    file = tmp_path / f"child_{abs(hash(script))}.py"
    file.write_text(script)
    done = subprocess.run([sys.executable, "-W", "always", str(file)], env=env,
                          capture_output=True, text=True, timeout=600, cwd=cwd or str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def test_edited_numba_stage_module_is_written_again(tmp_path):
    """The numba stage is imported by name in a second process (Numba's disk
    cache refers to it): an edited file there must not be what runs."""
    cache = tmp_path / "tx"
    env = {"TANGENT_X_CACHE_DIR": str(cache), "NUMBA_CACHE_DIR": str(tmp_path / "nb")}
    x = np.array([0.5, -1.5, 2.0])
    first = _run(_JIT_CHILD, env, tmp_path).stdout.splitlines()
    np.testing.assert_allclose(eval(first[1]), _cubic_grad(x))
    path = first[0]
    assert os.path.dirname(path) == str(cache)
    with open(path) as f:
        text = f.read()
    assert "cos" in text
    with open(path, "w") as f:
        f.write(text.replace("cos", "sin"))
    second = _run(_JIT_CHILD, env, tmp_path).stdout.splitlines()
    assert second[0] == path
    np.testing.assert_allclose(eval(second[1]), _cubic_grad(x))
    with open(path) as f:
        assert f.read() == text


def test_runtime_stamp_covers_every_module_of_the_numba_stage_and_runtime(tmp_path,
                                                                          monkeypatch):
    """The stamp in numba-stage file names hashes every Python file of the
    numba stage (subpackages too) and of ``runtime``, found by walking them:
    a module added later is covered without being listed."""
    from tangent_x.numba_stage import loading
    here = os.path.dirname(loading.__file__)
    found = {os.path.relpath(p, here) for p in loading._python_files(here)}
    assert {"beside.py", "optional.py", "weak_scalars.py", "numba_runtime.py",
            os.path.join("specialize", "values.py"), "loading.py"} <= found
    assert not any("__pycache__" in p for p in found)
    runtime = os.path.join(os.path.dirname(here), "runtime")
    assert "lanes.py" in {os.path.basename(p) for p in loading._python_files(runtime)}
    # a new file in a subpackage changes the stamp
    package = tmp_path / "tangent_x"
    (package / "numba_stage" / "sub").mkdir(parents=True)
    (package / "runtime").mkdir()
    (package / "numba_stage" / "loading.py").write_text("")
    monkeypatch.setattr(loading, "__file__", str(package / "numba_stage" / "loading.py"))
    loading.runtime_stamp.cache_clear()
    try:
        before = loading.runtime_stamp()
        (package / "numba_stage" / "sub" / "new.py").write_text("x = 1\n")
        loading.runtime_stamp.cache_clear()
        assert loading.runtime_stamp() != before
    finally:
        monkeypatch.undo()
        loading.runtime_stamp.cache_clear()


# ---------------------------------------------------------------------------
# Cache-directory faults: a private temporary directory and one warning
# ---------------------------------------------------------------------------

def _fresh_square():
    """A function no other test transformed (its own generated file)."""
    ns = {}
    src = f"def square_{os.urandom(4).hex()}(x):\n    return x * x * 1.5\n"
    filename = f"<tangent_x cache test {os.urandom(4).hex()}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    exec(compile(src, filename, "exec"), ns)
    return next(v for k, v in ns.items() if k.startswith("square_"))


def _one_fallback_warning(record, path):
    from tangent_x.cachedir import CacheDirectoryWarning
    found = [w for w in record if issubclass(w.category, CacheDirectoryWarning)]
    assert len(found) == 1, [str(w.message) for w in found]
    message = str(found[0].message)
    assert str(path) in message and "TANGENT_X_CACHE_DIR" in message
    return message


@pytest.mark.parametrize("where", ["a regular file", "under a regular file"])
def test_cache_path_that_is_not_a_directory(tmp_path, monkeypatch, where):
    afile = tmp_path / "afile"
    afile.write_text("not a directory")
    path = afile if where == "a regular file" else afile / "cache"
    monkeypatch.setenv("TANGENT_X_CACHE_DIR", str(path))
    with pytest.warns(Warning) as record:
        for _ in range(3):
            fn = _fresh_square()
            assert tx.grad(fn)(2.0) == pytest.approx(6.0)
    message = _one_fallback_warning(record, path)
    used = tx.grad(fn).generated.path
    assert os.path.dirname(used) in message and os.path.isfile(used)
    assert afile.read_text() == "not a directory"


def _refuse_writes_in(monkeypatch, directory):
    """A read-only directory as the OS reports it (root ignores modes)."""
    import errno
    import tempfile
    real_mkstemp, real_temporary = tempfile.mkstemp, tempfile.TemporaryFile

    def refused(dir):
        if dir is not None and os.path.abspath(dir) == os.path.abspath(directory):
            raise PermissionError(errno.EACCES, "Permission denied", str(dir))

    def mkstemp(*args, **kwargs):
        refused(kwargs.get("dir"))
        return real_mkstemp(*args, **kwargs)

    def temporary(*args, **kwargs):
        refused(kwargs.get("dir"))
        return real_temporary(*args, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    monkeypatch.setattr(tempfile, "TemporaryFile", temporary)


def test_read_only_cache_directory(tmp_path, monkeypatch):
    directory = tmp_path / "readonly"
    directory.mkdir()
    monkeypatch.setenv("TANGENT_X_CACHE_DIR", str(directory))
    _refuse_writes_in(monkeypatch, directory)
    with pytest.warns(Warning) as record:
        for _ in range(2):
            assert tx.grad(_fresh_square())(2.0) == pytest.approx(6.0)
    assert "PermissionError" in _one_fallback_warning(record, directory)
    assert os.listdir(directory) == []


def test_cache_directory_that_turns_read_only(tmp_path, monkeypatch):
    directory = tmp_path / "turns_readonly"
    monkeypatch.setenv("TANGENT_X_CACHE_DIR", str(directory))
    assert tx.grad(_fresh_square())(2.0) == pytest.approx(6.0)
    assert os.listdir(directory)
    _refuse_writes_in(monkeypatch, directory)
    with pytest.warns(Warning) as record:
        for _ in range(2):
            assert tx.grad(_fresh_square())(2.0) == pytest.approx(6.0)
    _one_fallback_warning(record, directory)


_CACHE_CHILD = textwrap.dedent("""\
    import numpy as np
    import tangent_x as tx

    def f(x):
        return np.sum(np.sin(x) * x ** 3)

    key = tx.random.PRNGKey(7)
    print(repr(tx.random.normal(key, (3,)).tolist()))
    print(repr(tx.jit(tx.grad(f))(np.array([0.5, -1.5, 2.0])).tolist()))
""")


def _expected_child_output():
    key = tx.random.PRNGKey(7)
    return (tx.random.normal(key, (3,)).tolist(),
            _cubic_grad(np.array([0.5, -1.5, 2.0])))


def test_truncated_numba_index_and_data_are_rebuilt(tmp_path):
    env = {"TANGENT_X_CACHE_DIR": str(tmp_path / "tx"), "NUMBA_CACHE_DIR": str(tmp_path / "nb")}
    normal, grad = _expected_child_output()
    _run(_CACHE_CHILD, env, tmp_path)       # fills both caches
    cut = []
    for base, _, files in os.walk(tmp_path):
        for name in files:
            if name.endswith((".nbi", ".nbc")):
                path = os.path.join(base, name)
                with open(path, "rb") as f:
                    data = f.read()
                with open(path, "wb") as f:
                    f.write(data[:len(data) // 2])
                cut.append(name)
    assert any(n.endswith(".nbi") for n in cut) and any(n.endswith(".nbc") for n in cut)
    lines = _run(_CACHE_CHILD, env, tmp_path).stdout.splitlines()
    assert eval(lines[0]) == normal
    np.testing.assert_allclose(eval(lines[1]), grad)


_READ_ONLY_INSTALL = textwrap.dedent("""\
    # a read-only install as Numba sees it (root could write __pycache__)
    import numba.core.caching as caching
    caching.InTreeCacheLocator.from_function = classmethod(lambda cls, f, p: None)
""")


def test_import_with_unwritable_home_and_read_only_install(tmp_path):
    """No writable place at all (HOME under a regular file, a read-only
    install): Numba's cache=True raised at import; now ``import tangent_x``
    works, with one warning naming the directory used."""
    afile = tmp_path / "afile"
    afile.write_text("")
    env = {"HOME": str(afile / "home")}
    normal, grad = _expected_child_output()
    done = _run(_READ_ONLY_INSTALL + _CACHE_CHILD, env, tmp_path,
                drop=("TANGENT_X_CACHE_DIR", "XDG_CACHE_HOME", "NUMBA_CACHE_DIR"))
    lines = done.stdout.splitlines()
    assert eval(lines[0]) == normal
    np.testing.assert_allclose(eval(lines[1]), grad)
    assert done.stderr.count("CacheDirectoryWarning") == 1, done.stderr
    assert str(afile / "home") in done.stderr and "TANGENT_X_CACHE_DIR" in done.stderr
    used = done.stderr.split("private temporary directory ")[1].split()[0]
    assert not os.path.exists(used)          # removed at exit


def test_threads_loading_one_new_module_at_once_each_get_it_whole():
    """pmap's workers compile the same shard at the same moment: an
    importable generated module is registered before its text runs, so a
    second thread must wait for it, not take it half made."""
    import threading
    from tangent_x.python_stage import loader
    text = "".join(f"def f{k}(x):\n    return x + {k}\n\n" for k in range(400))
    text += f"def last(x):\n    return x * 2  # {os.getpid()} {id(text)}\n"
    start = threading.Barrier(8)
    got = []

    def load():
        start.wait()
        module, _ = loader.load("threads_at_once", text, {}, {}, importable=True)
        got.append(module.last(21))

    threads = [threading.Thread(target=load) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == [42] * 8
