# Newton's method for sqrt(a), iterated 20 times. The tape holds all 20 steps, yet the gradient
# is that of the limit: d sqrt(a)/da = 1 / (2 sqrt(a)).
#
#   autodiff grad samples/programs/newton_sqrt.py --at a=2
# expect value: 1.414213562373095
# expect gradient a: 0.35355339059327373
#
#   autodiff grad samples/programs/newton_sqrt.py --at a=9
# expect value: 3.0
# expect gradient a: 0.16666666666666666

STEPS = 20      # a top-level constant, read by the function


def f(a):
    """Heron's iteration x <- (x + a/x) / 2, started at x = a."""
    x = a
    for i in range(STEPS):
        x = (x + a / x) / 2
    return x
