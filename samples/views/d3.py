# Hands-on ML, appendix D, figure D-3: reverse-mode autodiff of f(x, y) = x²y + y + 2 at (3, 4).
# Written x**2*y + (y + 2) so the tape has D-3's shape (n6 = y + 2); the constant 2 is node n3.
#   autodiff graph samples/views/d3.py --at x=3,y=4
#   expected: n1 = x = 3, n2 = y = 4, n3 = 2, n4 = x² = 9, n5 = x²y = 36, n6 = 6, n7 = f = 42;
#             ∂f/∂n4 = 4, ∂f/∂x = 24, ∂f/∂y = 10
def f(x, y):
    return x**2*y + (y + 2)
