"""Where the cold first call of jit(grad(mlp loss)) spends its time.

    python tools/cold_compile.py            # one cold process, a tree of compiles
    python tools/cold_compile.py --warm     # then a second process on the caches

Runs the benchmark's first call (tools/bench.py, ``bench_first_call``) in a
fresh process with empty tangent_x and Numba caches, and prints every Numba
compile it triggers as a tree (time, function, argument types; a child's
time is included in its parent's), from Numba's own event API.  Why a tree:
each Numba function a compiled function calls is compiled on its own and
then again inside its caller, so the cost of a helper is its own line *and*
a share of every line above it (see numba_stage/kernels/loops.py: "flat" helpers).
"""
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_SCRIPT = r"""
import sys, time
sys.path.insert(0, {root!r})
sys.path.insert(0, {examples!r})
import numpy as np
import tangent_x as tx
import mlp
from numba.core import event


class Tree(event.Listener):
    def __init__(self):
        self.open, self.done = [], []

    def on_start(self, ev):
        self.open.append(time.perf_counter())

    def on_end(self, ev):
        started = self.open.pop()
        data = ev.data if isinstance(ev.data, dict) else {{}}
        name = getattr(data.get("dispatcher"), "py_func", None)
        name = getattr(name, "__qualname__", str(data.get("dispatcher", "?")))
        self.done.append((len(self.open), time.perf_counter() - started, name,
                          str(data.get("args", ""))))


rng = np.random.default_rng(0)
params = mlp.init_params([784, 64, 10])
x, y = rng.normal(size=(128, 784)), rng.normal(size=(128, 10))
g = tx.jit(tx.grad(mlp.loss))
tree = Tree()
event.register("numba:compile", tree)
t0 = time.perf_counter()
g(params, x, y)
total = time.perf_counter() - t0
# post-order -> pre-order: a parent ends after its children
order, pending = [], []
for depth, seconds, name, args in tree.done:
    children = [p for p in pending if p[0][0] == depth + 1]
    pending = [p for p in pending if p[0][0] != depth + 1]
    pending.append([(depth, seconds, name, args)] + [c for p in children for c in p])
for block in pending:
    order += block
for depth, seconds, name, args in order:
    print(f"{{seconds:7.3f}} s {{'  ' * depth}}{{name}} {{args[:90]}}")
top = sum(s for d, s, _, _ in tree.done if d == 0)
print(f"first call {{total:.3f}} s: Numba compiles {{top:.3f}} s, "
      f"the rest (transform, specialise, load) {{total - top:.3f}} s")
"""


def main():
    warm = "--warm" in sys.argv[1:]
    base = tempfile.mkdtemp(prefix="tx-cold-")
    env = dict(os.environ, TANGENT_X_CACHE_DIR=os.path.join(base, "tangent_x"),
               NUMBA_CACHE_DIR=os.path.join(base, "numba"))
    script = _SCRIPT.format(root=ROOT, examples=os.path.join(ROOT, "examples"))
    try:
        for label in ("cold", "warm") if warm else ("cold",):
            print(f"--- {label} process ---")
            subprocess.run([sys.executable, "-c", script], env=env, check=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
