"""The one idiom of scalar checks (scoring._validation.check_int / check_number):
the message names the parameter and the value, bounds are decided exactly."""
from __future__ import annotations

import numpy as np
import pytest

from scoring._validation import check_int, check_number


@pytest.mark.parametrize(("value", "kwargs", "message"), [
    (0, {"low": 1}, "n must be an integer >= 1; got 0"),
    (True, {"low": 0}, "n must be an integer >= 0; got True"),
    (2.0, {}, "n must be an integer; got 2.0"),
    (11, {"low": 1, "high": 10}, "n must be an integer >= 1 and <= 10; got 11"),
    (-1, {"low": 0, "message": "n_boot must be an integer >= 0; got {value!r}"},
     "n_boot must be an integer >= 0; got -1"),
])
def test_check_int_refuses_naming_the_parameter_and_the_value(value, kwargs, message):
    with pytest.raises(ValueError) as info:
        check_int(value, name="n", **kwargs)
    assert str(info.value) == message


def test_check_int_accepts_numpy_integers_and_returns_python_ints():
    assert check_int(np.int64(3), name="n", low=1, high=3) == 3 and type(check_int(np.int64(3), name="n")) is int


@pytest.mark.parametrize(("value", "kwargs", "message"), [
    (0.0, {"low": 0.0, "low_open": True}, "x must be a number > 0.0; got 0.0"),
    (1.0, {"low": 0.0, "high": 1.0, "low_open": True, "high_open": True},
     "x must be a number > 0.0 and < 1.0; got 1.0"),
    (float("nan"), {}, "x must be a number; got nan"),
    (float("inf"), {"low": 0.0}, "x must be a number >= 0.0; got inf"),
    (False, {}, "x must be a number; got False"),
    ("0.5", {}, "x must be a number; got '0.5'"),
    (-0.1, {"low": 0.0, "message": "l2 must be a finite number >= 0; got {value!r}"},
     "l2 must be a finite number >= 0; got -0.1"),
])
def test_check_number_refuses_naming_the_parameter_and_the_value(value, kwargs, message):
    with pytest.raises(ValueError) as info:
        check_number(value, name="x", **kwargs)
    assert str(info.value) == message


def test_a_value_exactly_on_a_closed_bound_is_kept_and_the_next_float_past_an_open_one_too():
    assert check_number(0.5, name="x", low=0.0, high=0.5) == 0.5
    assert check_number(np.nextafter(0.0, 1.0), name="x", low=0.0, low_open=True) == 5e-324
    with pytest.raises(ValueError):
        check_number(np.nextafter(0.5, 1.0), name="x", high=0.5)
