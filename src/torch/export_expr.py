# The functions of kfoundry's expression language (docs/task-format.md "Expressions"), as the
# launch rules, shapes and scalar values translated to Python by `Expr::ToPython` call them.
# Each computes what src/core/expr.cpp computes (in doubles there): ceil_div is the ceiling of
# the real quotient, round_up that times the multiple, min and max take one argument or more.
import math as _kf_math


def _kf_ceil_div(a, b):
    if b == 0:
        raise ZeroDivisionError("ceil_div by zero")
    return _kf_math.ceil(a / b)


def _kf_round_up(a, b):
    if b == 0:
        raise ZeroDivisionError("round_up to zero")
    return _kf_math.ceil(a / b) * b


def _kf_min(*args):
    return min(args)


def _kf_max(*args):
    return max(args)


def _kf_ceil(x):
    return _kf_math.ceil(x)


def _kf_floor(x):
    return _kf_math.floor(x)


def _kf_int(x):
    return int(x)


def _kf_round(x):
    return round(x)  # to the even neighbour at .5, as C's nearbyint


def _kf_abs(x):
    return abs(x)


def _kf_pow(a, b):
    return a ** b


_kf_sqrt = _kf_math.sqrt
_kf_exp = _kf_math.exp
_kf_log = _kf_math.log
_kf_log2 = _kf_math.log2
_kf_sin = _kf_math.sin
_kf_cos = _kf_math.cos


def _kf_integer(value, what):
    """`value` as an int, or a ValueError naming `what` (a shape, a grid) when it is not one."""
    if isinstance(value, float):
        if not _kf_math.isfinite(value) or value != _kf_math.floor(value):
            raise ValueError(f"{what} = {value} is not an integer")
        return int(value)
    return int(value)
