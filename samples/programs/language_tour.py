# A tour of the language: helpers calling each other, chained comparisons, and/or/not, the
# conditional expression, elif, break/continue, augmented assignment with value semantics.
#
#   autodiff grad samples/programs/language_tour.py --at x=0.5,y=2
# expect value: 6.0
# expect gradient x: 11.0
# expect gradient y: 0.75

def clamp01(t):
    """Chained comparison and the conditional expression."""
    return t if 0 <= t <= 1 else (0.0 if t < 0 else 1.0)


def weight(t):
    if not (t > 0) or t > 10:
        return 0.0
    elif t > 1 and t < 5:
        return 2.0
    else:
        return 1.0


def f(x, y):
    z = x * y           # z is bound to the value x * y
    keep = z            # keep names the same value
    z += 1              # rebinding: keep still holds x * y
    total = 0.0
    for i in range(10):
        if i == 2:
            continue    # skips i = 2
        if i > 4:
            break       # stops after i = 4: the loop body runs for i = 0, 1, 3, 4
        total += clamp01(x) * weight(y)
    return total + keep + z * 0.5
