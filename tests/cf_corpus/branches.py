"""Branches without loops: if/else, if/elif/else, nested ifs, conditions on
scalars, on array elements and on array reductions, variables assigned in
one or both branches, early return, conditional expressions, and/or/not,
chained comparisons, static (non-differentiable) conditions."""
import numpy as np

from . import A, C, N, Neg, Pos, SumSign, V, case


def _bump(x):
    return x * x + np.sin(x)


@case((Pos(),), (Neg(),), (V(1.5, scalar=True),), (V(-0.4, scalar=True),))
def if_else_scalar(x):
    if x > 0:
        y = x * x
    else:
        y = np.sin(x)
    return 3.0 * y


@case((Pos(),), (Neg(),))
def if_without_else_assigned_before(x):
    y = x * 2.0
    if x > 0:
        y = y * y + x
    return y * np.cos(x)


@case((V(-1.2, scalar=True),), (V(0.1, scalar=True),), (V(1.4, scalar=True),),
      (V(-0.3, scalar=True),))
def if_elif_else_scalar(x):
    if x < -0.5:
        y = x ** 3
    elif x < 0.5:
        y = np.exp(x)
    else:
        y = np.log(x) + x
    return y


@case(*[(V(v, scalar=True),) for v in (-2.5, -1.3, -0.2, 0.7, 1.6, 3.1)])
def if_elif_chain_long(x):
    if x < -2.0:
        y = -x
    elif x < -1.0:
        y = x * x
    elif x < 0.0:
        y = np.sin(x)
    elif x < 1.0:
        y = np.exp(x) * x
    elif x < 2.0:
        y = np.sqrt(x)
    else:
        y = np.tanh(x)
    return 2.0 * y + x


@case((Pos(), Pos()), (Pos(), Neg()), (Neg(), Pos()), (Neg(), Neg()), argnums=(0, 1))
def nested_ifs(x, y):
    if x > 0:
        if y > 0:
            z = x * y
        else:
            z = x - y * y
    else:
        if y > 0:
            z = np.sin(x) * y
        else:
            z = np.exp(x + y)
    return z * z + x


@case((V(1.5, scalar=True), V(0.5, scalar=True)), (V(1.5, scalar=True), V(-0.5, scalar=True)),
      (V(0.3, scalar=True), V(0.4, scalar=True)), (V(-1.0, scalar=True), V(1.0, scalar=True)),
      argnums=(0, 1))
def nested_ifs_three_levels(x, y):
    out = x + y
    if x > 0:
        if x > 1:
            if y > 0:
                out = out * x * y
            else:
                out = out - x * y
        else:
            out = out + np.sin(x * y)
    return out


@case((SumSign((4,), 1),), (SumSign((4,), -1),), (SumSign((2, 3), 1),),
      (SumSign((2, 3), -1),))
def if_on_array_sum(x):
    if np.sum(x) > 0:
        y = np.sin(x) * x
    else:
        y = x ** 2
    return np.sum(y)


@case((SumSign((5,), 1),), (SumSign((5,), -1),))
def if_on_array_mean_modifies_array(x):
    y = np.tanh(x)
    if np.mean(y) > 0:
        y = y * 2.0 + x
    else:
        y = y - x * x
    return np.sum(y * y)


@case((V(0.3, 2.0, -1.0),), (V(0.3, 0.5, -1.0),), (V(-0.6, 0.2, 0.1),))
def if_on_array_max(x):
    if np.max(x) > 1.0:
        return np.sum(np.exp(-x * x))
    return np.sum(x ** 3)


@case((V(3.0, 1.0, 0.5),), (V(0.5, 0.9, 0.3),), (V(0.2, 0.1, 0.2),))
def elif_on_norm(x):
    r = np.linalg.norm(x)
    if r > 2.0:
        y = x / r
    elif r > 1.0:
        y = x * r
    else:
        y = np.sin(x)
    return np.sum(y * np.arange(1.0, 4.0))


@case((V(2.0, 1.0, -0.5),), (V(-1.0, 1.0, 2.0),))
def if_on_element_comparison(x):
    if x[0] > x[1]:
        return x[0] * np.sum(x * x)
    return x[1] * np.sum(np.cos(x))


@case((Pos(),), (Neg(),))
def var_defined_in_both_branches_only(x):
    if x > 0:
        z = np.exp(x)
        w = z * x
    else:
        z = np.exp(-x) * x
        w = x
    return z + w * w


@case((Pos(), Pos()), (Neg(), Pos()), argnums=(0, 1))
def var_assigned_before_changed_in_else_only(x, y):
    a = x * y
    b = y
    if x > 0:
        a = a + 1.0
    else:
        b = b * x * x
    return a * b


@case((V(1.0, scalar=True), V(0.5, scalar=True)), (V(0.5, scalar=True), V(1.5, scalar=True)),
      argnums=(0, 1))
def tuple_swap_in_branch(x, y):
    a, b = x * 2.0, y + 1.0
    if x > y:
        a, b = b * x, a + y
    return a * np.sin(b)


@case((Neg(),), (Pos(),))
def early_return_scalar(x):
    if x < 0:
        return x * x
    return np.sin(x) + x


@case((V(-1.0, scalar=True),), (V(0.5, scalar=True),), (V(2.0, scalar=True),))
def early_return_in_elif(x):
    y = x * 3.0
    if x < 0:
        return y * y
    elif x < 1.0:
        return np.exp(y)
    y = y + np.log(x)
    return y * x


@case((Pos(), Pos()), (Pos(), Neg()), (Neg(), Pos()), argnums=(0, 1))
def early_return_nested_if(x, y):
    if x > 0:
        if y > 0:
            return x * y * y
        z = x + y
    else:
        z = x - y
    return np.sin(z) * x


@case((SumSign((3,), 1),), (SumSign((3,), -1),))
def early_return_array_then_more_work(x):
    y = np.cos(x)
    if np.sum(x) < 0:
        return np.sum(y * x)
    y = y * y + x
    z = np.exp(-y)
    return np.sum(z * x)


@case((Pos(),), (Neg(),))
def ifexp_scalar(x):
    return x * x if x > 0 else np.cos(x)


@case((V(-1.0, scalar=True),), (V(0.4, scalar=True),), (V(1.7, scalar=True),))
def ifexp_nested(x):
    y = x ** 3 if x > 1.0 else (np.sin(x) if x > 0 else np.exp(x) * x)
    return y + x


@case((SumSign((4,), 1),), (SumSign((4,), -1),))
def ifexp_array_condition(x):
    y = np.sin(x) if np.sum(x) > 0 else np.cos(x) * x
    return np.sum(y * y)


@case((V(1.0, scalar=True), V(0.2, scalar=True)), (V(-0.3, scalar=True), V(0.6, scalar=True)),
      argnums=(0, 1))
def ifexp_inside_expression(x, y):
    return (x if x > y else y) * 2.0 + x * y + (np.sin(x) if y > 0 else y)


@case((Pos(), Pos()), (Pos(), Neg()), (Neg(), Pos()), argnums=(0, 1))
def and_condition(x, y):
    if x > 0 and y > 0:
        z = np.log(x * y)
    else:
        z = x * y
    return z + x


@case((Pos(), Neg()), (Neg(), V(-1.0, scalar=True)), (Neg(), V(-0.2, scalar=True)),
      argnums=(0, 1))
def or_condition(x, y):
    if x > 0 or y < -0.5:
        return x * x + y
    return np.exp(x * y)


@case((Neg(), Pos(), Neg()), (Pos(), Pos(), Pos()), (Neg(), Neg(), Neg()),
      (Neg(), Neg(), Pos()), argnums=(0, 1, 2))
def not_and_or_combined(x, y, z):
    if not (x > 0) and (y > 0 or z > 0):
        out = x * y * z
    else:
        out = x + y + z
    return out * out


@case((SumSign((3,), 1), Pos()), (SumSign((3,), -1), Pos()), (SumSign((3,), 1), Neg()),
      argnums=(0, 1))
def and_on_array_reductions(x, s):
    y = x * s
    if np.sum(x) > 0 and np.max(x) > -5.0 and s > 0:
        y = np.tanh(y)
    return np.sum(y * x)


@case((V(0.1, scalar=True),), (V(0.9, scalar=True),), (V(-0.8, scalar=True),))
def chained_comparison(x):
    if -0.5 < x < 0.5:
        y = x * x
    else:
        y = np.abs(x) * 3.0
    return y + x


@case((N((3,)), C("square")), (N((3,)), C("sin")), (N((3,)), C("other")))
def static_string_condition(x, mode):
    if mode == "square":
        y = x * x
    elif mode == "sin":
        y = np.sin(x)
    else:
        y = x
    return np.sum(y * x)


@case((N((3,)), C(True)), (N((3,)), C(False)))
def static_bool_flag(x, flag):
    y = np.exp(x * 0.5)
    if flag:
        y = y * x
    return np.sum(y)


@case((N(), C(2)), (N(), C(5)))
def static_int_condition(x, n):
    if n > 3:
        return x ** n + x
    return np.sin(x) * n


@case((Pos(),), (Neg(),))
def if_with_pass_branch(x):
    y = x * 1.5
    if x > 0:
        pass
    else:
        y = -y * y
    return y + x


@case((A(),), (A((3,)),), (V(0.5, -0.7, 1.2),), (V(1.0, scalar=True),))
def multiple_sequential_ifs(x):
    y = x
    if np.sum(x) > 0:
        y = y * 2.0
    if np.sum(y * y) > 1.0:
        y = np.sin(y)
    if np.min(x) < 0:
        y = y + x * x
    return np.sum(y)


@case((V(0.7, scalar=True),), (V(-1.2, scalar=True),), (V(0.1, scalar=True),))
def condition_on_computed_value(x):
    y = np.sin(x)
    if y > 0.5:
        out = y * x
    elif y > -0.5:
        out = y - x
    else:
        out = np.exp(y) * x
    return out


@case((Pos(),), (Neg(),))
def branch_calls_helper(x):
    if x > 0:
        y = _bump(x) * 2.0
    else:
        y = _bump(-x) + x
    return _bump(y)
