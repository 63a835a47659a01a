# A function with a switch at x = 1: FD steps that straddle it compare two different formulas.
def f(x):
    if x < 1:
        y = x * x
    else:
        y = 3 * x - 2
    return y
