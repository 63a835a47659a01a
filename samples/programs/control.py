# d2l 2.5.4: the gradient follows the branch and the loop count the data chose.
# f is linear in a along the path taken, so the gradient equals f(a) / a.
def f(a):
    b = a * 2
    while norm(b) < 1000:
        b = b * 2
    if sum(b) > 0:
        c = b
    else:
        c = 100 * b
    return c
