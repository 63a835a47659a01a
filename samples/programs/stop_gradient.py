# stop_gradient inside a helper: the scale is treated as a constant, so
# d/dx [x^2 / stop_gradient(x)] = 2x / x = 2 (not 1, as it would be without the cut).
#
#   autodiff grad samples/programs/stop_gradient.py --at x=3
# expect value: 3.0
# expect gradient x: 2.0

def normalise(v, scale):
    return v / stop_gradient(scale)


def f(x):
    return normalise(x * x, x)
