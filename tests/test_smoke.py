import autodiff


def test_seed_example():
    r = autodiff.grad("x**2*y + y + 2", at={"x": 3, "y": 4})
    assert (r.value, r.gradient["x"], r.gradient["y"]) == (42.0, 24.0, 10.0)
