# Nested loops: the quadratic form x^T A x summed element by element. Its gradient is (A + A^T) x.
#
#   autodiff grad samples/programs/nested_loops.py --at x=[1,-2,0.5]
# expect value: 10.5
# expect gradient x: [4.25, -10.0, -6.5]

A = [[2.0, 1.0, 0.0], [-1.0, 3.0, 4.0], [0.5, 0.0, 1.0]]


def f(x):
    n = len(x)
    total = 0.0
    for i in range(n):
        for j in range(n):
            total += x[i] * A[i][j] * x[j]
    return total
