# A least-squares fit of a cubic c0 + c1 t + c2 t^2 + c3 t^3 to data: the Vandermonde columns
# are a running product (cumprod) of t along a row of copies, so no power is written out.
#
#   autodiff grad samples/numpy/least_squares.py --at c=[0.5,-1,0.25,0.1]
# expect value: 0.13406250000000003
# expect gradient c: [-0.27500000000000024, 0.8125, -0.11875000000000036, 0.9531249999999999]

T = [-1.0, -0.5, 0.0, 0.5, 1.0, 1.5]
Y = [2.1, 1.2, 0.4, 0.1, -0.3, -0.2]


def f(c):
    copies = broadcast_to(expand_dims(T, 1), (len(T), len(c) - 1))
    powers = concatenate((ones((len(T), 1)), cumprod(copies, 1)), 1)   # 1, t, t^2, t^3
    residual = powers @ c - Y
    return 0.5 * sum(square(residual))
