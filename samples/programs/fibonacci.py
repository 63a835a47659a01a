# Tuple assignment swaps simultaneously: a, b = b, a + b. Starting from a = 1, b = x, after n
# steps a = F(n-1) + F(n) x, so the gradient is the Fibonacci number F(n) (F(10) = 55).
#
#   autodiff grad samples/programs/fibonacci.py --at x=2
# expect value: 144.0
# expect gradient x: 55.0

def f(x):
    a, b = 1.0, x
    for i in range(10):
        a, b = b, a + b
    return a
