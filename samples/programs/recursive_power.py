# A recursive power function (exponentiation by squaring): d x^n / dx = n x^(n-1).
#
#   autodiff grad samples/programs/recursive_power.py --at x=1.5
# expect value: 57.6650390625
# expect gradient x: 384.43359375

def power(x, n):
    if n == 0:
        return 1.0
    if n % 2 == 0:
        half = power(x, n / 2)
        return half * half
    return x * power(x, n - 1)


def f(x):
    return power(x, 10)
