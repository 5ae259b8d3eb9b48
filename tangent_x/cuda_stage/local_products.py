"""Matrix products of fixed shapes, and their gradients, as a GPU
thread's loops.

``a @ b`` (``np.dot``) of vectors and matrices whose shapes are known when
the kernel compiles (``local_arrays``) is a loop per element of the result
over a local array, each element a sum of products; the gradients
``matmul_adjoint_lhs``/``rhs`` that reverse mode makes of it likewise.  A
product bigger than ``MATMUL_LIMIT`` multiply-adds is more than one thread
should do per example: refused, located, pointing at the CPU target.
"""
import ast

from .local_arrays import is_array, is_number

__all__ = ["LocalProducts", "MATMUL_LIMIT"]

MATMUL_LIMIT = 4096     # multiply-adds of one matrix product a thread computes


class LocalProducts:
    """Mixed into ``kernel_text.DeviceRewrite`` beside ``LocalArrays``
    (whose ``shapes`` and ``_local_array`` it uses)."""

    def _matmul(self, node, name, value, t):
        """``name = matmul(a, b)`` (``@``, ``np.dot``) of vectors and matrices of
        known shapes: loops over the result, each element a sum of products
        (a number for two vectors); None where the shapes are not known.  A
        product of more than ``MATMUL_LIMIT`` multiply-adds is refused."""
        if self._helper(value) not in ("matmul", "dot") or len(value.args) != 2 or \
                value.keywords or not all(isinstance(v, ast.Name) for v in value.args):
            return None
        a, b = (v.id for v in value.args)
        sa, sb = self.shapes.get(a), self.shapes.get(b)
        if sa is None or sb is None or not all(is_array(self.typemap.get(v)) for v in (a, b)) \
                or len(sa) not in (1, 2) or len(sb) not in (1, 2) or sa[-1] != sb[0]:
            return None
        out = tuple(sa[:-1]) + tuple(sb[1:])
        inner = sa[-1]
        work = inner
        for n in out:
            work *= n
        if work > MATMUL_LIMIT:
            self.refuse(node, f"a matrix product per thread of {work} multiply-adds (a thread "
                        f"computes at most {MATMUL_LIMIT}; one example's matmul this big is "
                        "a job for the CPU's BLAS)")
        i = ["z0_"] if len(sa) == 2 else []
        j = [f"z{len(i)}_"] if len(sb) == 2 else []
        term = f"{a}[{', '.join(i + ['r_'])}] * {b}[{', '.join(['r_'] + j)}]"
        if not out:
            lines = [f"{name} = np.{t}(0)", f"for r_ in range({inner}):", f"    {name} += {term}"]
            return ast.parse("\n".join(lines)).body
        loops, indent, idx = self._loops(out)
        acc = f"{name}_acc_"
        lines = [self._local_array(node, name, out, t)] + loops + [
            f"{indent}{acc} = np.{t.dtype}(0)", f"{indent}for r_ in range({inner}):",
            f"{indent}    {acc} += {term}", f"{indent}{name}[{', '.join(idx)}] = {acc}"]
        return ast.parse("\n".join(lines)).body

    def _matmul_adjoint(self, node, name, value, t):
        """``name = matmul_adjoint_lhs(g, A, B)`` (the gradient of ``A @ B``
        with respect to ``A``) or ``..._rhs`` (to ``B``), for vectors and
        matrices of known shapes: loops, each element a sum of products."""
        helper = self._helper(value)
        if len(value.args) != 3 or value.keywords or \
                not all(isinstance(v, ast.Name) for v in value.args):
            return None
        g, a, b = (v.id for v in value.args)
        sa, sb = self.shapes.get(a), self.shapes.get(b)
        if sa is None or sb is None or len(sa) not in (1, 2) or len(sb) not in (1, 2) or \
                sa[-1] != sb[0]:
            return None
        gshape = tuple(sa[:-1]) + tuple(sb[1:])
        if (self.shapes.get(g) if gshape else ()) != gshape or \
                not gshape and not is_number(self.typemap.get(g)):
            return None
        i = ("i_", sa[0]) if len(sa) == 2 else None
        j = ("j_", sb[1]) if len(sb) == 2 else None
        r = ("r_", sa[-1])
        a_idx, b_idx, g_idx = [v for v in (i, r) if v], [v for v in (r, j) if v], \
            [v for v in (i, j) if v]

        def ref(array, idx):
            return f"{array}[{', '.join(v for v, _ in idx)}]" if idx else array
        if helper == "matmul_adjoint_lhs":
            out, summed, term = a_idx, j, f"{ref(g, g_idx)} * {ref(b, b_idx)}"
        else:
            out, summed, term = b_idx, i, f"{ref(g, g_idx)} * {ref(a, a_idx)}"
        work = summed[1] if summed else 1
        for _, n in out:
            work *= n
        if work > MATMUL_LIMIT:
            self.refuse(node, f"a matrix product's gradient per thread of {work} "
                        f"multiply-adds (a thread computes at most {MATMUL_LIMIT})")
        lines = [self._local_array(node, name, tuple(n for _, n in out), t)]
        indent = ""
        for v, n in out:
            lines.append(f"{indent}for {v} in range({n}):")
            indent += "    "
        acc = f"{name}_acc_"
        if summed:
            lines += [f"{indent}{acc} = np.{t.dtype}(0)",
                      f"{indent}for {summed[0]} in range({summed[1]}):",
                      f"{indent}    {acc} += {term}"]
        else:
            lines.append(f"{indent}{acc} = {term}")
        lines.append(f"{indent}{ref(name, out)} = {acc}")
        return ast.parse("\n".join(lines)).body
