# `for v in ARRAY` walks the first axis. Sum of cubes of the elements above a threshold:
# the gradient is 3 v^2 where v > 0, else 0.
#
#   autodiff grad samples/programs/loop_over_array.py --at x=[1,-2,3]
# expect value: 28.0
# expect gradient x: [3.0, 0.0, 27.0]

def f(x):
    total = 0.0
    for v in x:
        if v > 0:
            total += v ** 3
    return total
