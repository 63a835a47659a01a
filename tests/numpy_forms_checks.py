"""Helpers of the issue-15 language tests: run a program, and check its gradient by reverse mode
against forward mode and central differences."""
import textwrap

import numpy as np
import pytest

from autodiff.engine import api
from autodiff.parser.errors import SourceError

A = [[1.0, 2.0, 3.0], [4.0, -5.0, 6.5]]


def load(src):
    return api.load(textwrap.dedent(src).lstrip("\n"), filename="prog.py")


def value(src, **at):
    return api.evaluate(None, at=at, target=load(src)).value


def central_differences(target, at, h=1e-6):
    grads = {}
    for name, x in at.items():
        x = np.asarray(x, dtype=float)
        g = np.zeros_like(x)
        for k in range(x.size):
            step = np.zeros_like(x)
            step.reshape(-1)[k] = h
            up = {**at, name: (x + step) if x.shape else float(x + step)}
            down = {**at, name: (x - step) if x.shape else float(x - step)}
            hi = np.sum(api.evaluate(None, at=up, target=target).value)
            lo = np.sum(api.evaluate(None, at=down, target=target).value)
            g.reshape(-1)[k] = (hi - lo) / (2 * h)
        grads[name] = g
    return grads


def agree(src, **at):
    """The gradient by reverse mode, checked against forward mode and central differences."""
    target = load(src)
    reverse = api.grad(None, at=at, target=target)
    forward = api.grad(None, at=at, target=target, mode="forward")
    numeric = central_differences(target, at)
    for name in at:
        np.testing.assert_allclose(reverse.gradient[name], forward.gradient[name], rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(reverse.gradient[name], numeric[name], rtol=1e-5, atol=1e-6)
    return reverse


def error(src, **at):
    with pytest.raises(SourceError) as info:
        api.grad(None, at=at or {"x": 2.0}, target=load(src))
    err = info.value
    assert err.span is not None and err.excerpt(), "an error has a place and a caret"
    return err
