# A piecewise function for `autodiff plot`: an abs kink at x = -0.5, a branch switch at x = 1,
# a relu kink at x = 2. Expected marks over --range -2:3 (201 points, so -0.5 and 2 are grid
# points): kink at -0.5 (abs, line 8), branch switch between 0.975 and 1 (line 9), kink at 2
# (relu, line 12); with --points 20 the kinks fall between points and are marked "kink crossed".
#   autodiff plot samples/views/kinks.py --range -2:3 --order 1
#   f is continuous: x = 1 gives 1.5 on both branches; f' jumps there from 1 to 2·1 = 2.
def f(x):
    y = abs(x + 0.5)
    if x < 1:
        return y
    else:
        return x * x + 0.5 + relu(x - 2)
