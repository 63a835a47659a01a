# Explicit Euler for y' = -k y, y(0) = y0, n steps of size h: y_n = y0 (1 - k h)^n, so
# dy_n/dy0 = (1 - k h)^n and dy_n/dk = -n h y0 (1 - k h)^(n - 1). With h = T/n these tend to
# exp(-k T) and -T y0 exp(-k T).
#
#   autodiff grad samples/programs/euler_decay.py --at k=0.5,y0=2
# expect value: 0.7320646825464592
# expect gradient k: -1.4789185505989104
# expect gradient y0: 0.3660323412732296

T = 2.0
N = 100


def f(k, y0):
    h = T / N
    y = y0
    t = 0.0
    while t < T - h / 2:        # a data-dependent loop: runs N times
        y = y + h * (-k * y)
        t += h
    return y
