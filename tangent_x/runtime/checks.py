"""Run-time checks generated code keeps: grad's scalar output, has_aux's
pair, and ``assert`` / ``if ...: raise`` with their f-string messages
(formatted only when a check fails)."""
import numbers

import numpy as np


def _is_array_like(x):
    return isinstance(x, (np.ndarray, np.generic, numbers.Number))


def integer_output_message(dtype):
    """JAX's refusal of grad of an integer (or bool) output, with the fix."""
    return (f"grad requires real-valued outputs (output dtype that is a sub-dtype of "
            f"np.floating), but got {dtype}: the function's output is an integer, whose "
            f"derivative is not defined; return a float (or use tangent_x.vjp directly)")


def check_grad_output(y, still_int=False):
    """grad differentiates scalar-output functions only (as JAX).
    ``still_int`` (compiled code only): ``y`` is a loop's variable that
    Python started as an int and the loop never assigned, which Numba holds
    as a float."""
    if still_int:
        raise TypeError(integer_output_message("int64"))
    if not _is_array_like(y):
        raise TypeError(f"grad requires real-valued outputs, but the function returned "
                        f"{type(y).__name__} {y!r}" if isinstance(y, (str, bytes, type(None)))
                        else "Gradient only defined for scalar-output functions. "
                        f"Output had shape: {np.shape(y)}.")
    shape = np.shape(y)
    if shape != ():
        raise TypeError("Gradient only defined for scalar-output functions. "
                        f"Output had shape: {shape}.")
    if np.result_type(y).kind in "biu":
        raise TypeError(integer_output_message(np.result_type(y)))
    if np.iscomplexobj(y):
        raise TypeError("grad requires real-valued outputs (output dtype that is a "
                        f"sub-dtype of np.floating), but got {np.result_type(y)}; tangent_x "
                        "differentiates real values only (see tangent_x.complex_values)")


def aux_pair_message(got):
    """JAX's words for a has_aux function that does not return (out, aux);
    ``got`` says what it returned."""
    return (f"expected function with aux output to return a two-element tuple, but got "
            f"{got} (has_aux=True: the function must return a pair (out, aux))")


def check_aux_pair(out):
    """With has_aux=True the function returns a pair (out, aux): raise
    JAX's TypeError otherwise (rather than drop items or fail later)."""
    if not isinstance(out, (list, tuple)) or len(out) != 2:
        raise TypeError(aux_pair_message(f"type {type(out)} with value {out!r}"))


def check(ok, error, template, *parts):
    """``assert ok, f"..."`` and ``if not ok: raise error(f"...")``: a check
    on values, kept in the primal code.  ``template`` is the message as a
    ``str.format`` template, ``parts`` the values of its fields: formatted
    only when the check fails.  ``template`` None raises ``error(*parts)``."""
    if not ok:
        if template is None:
            raise error(*parts)
        raise error(template.format(*parts))


def check_lanes(ok, error, template, batched, *parts):
    """``check`` under vmap: each example is checked as Python checks it
    (``bool`` of its own value); the first failing one is reported with its
    own values (``batched[i]``: part ``i`` has the batch on axis 0)."""
    ok = np.asarray(ok)
    for k in range(ok.shape[0]):
        if not ok[k]:
            mine = [p[k] if b else p for p, b in zip(parts, batched)]
            check(False, error, template, *mine)


def formatted(template, *parts):
    """An f-string: ``template`` (a ``str.format`` template) of ``parts``."""
    return template.format(*parts)
