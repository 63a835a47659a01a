# d2l 2.5.4, "Computing the Gradient of Python Control Flow": the gradient follows the branch and
# the loop count the data chose. Along the path taken f is linear in a, so the gradient is f(a)/a.
#
#   autodiff grad samples/programs/control.py --at a=0.37
# expect value: 1515.52
# expect gradient a: 4096.0
#
#   autodiff grad samples/programs/control.py --at a=-0.37
# expect value: -151552.0
# expect gradient a: 409600.0
#
#   autodiff grad samples/programs/control.py --at a=[0.37,-0.2]
# expect value: [1515.52, -819.2]
# expect gradient a: [4096.0, 4096.0]


def f(a):
    b = a * 2
    while norm(b) < 1000:
        b = b * 2
    if sum(b) > 0:
        c = b
    else:
        c = 100 * b
    return c
