# Several functions and none called f: choose one with --fn (without it, the error lists them).
#
#   autodiff grad samples/programs/several_functions.py --fn energy --at v=3,m=2
# expect value: 9.0
# expect gradient v: 6.0
# expect gradient m: 4.5
#
#   autodiff grad samples/programs/several_functions.py --fn momentum --at v=3,m=2
# expect value: 6.0
# expect gradient v: 2.0
# expect gradient m: 3.0

def energy(v, m):
    return 0.5 * m * v ** 2


def momentum(v, m):
    return m * v
