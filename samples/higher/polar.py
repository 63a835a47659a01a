# From polar to Cartesian coordinates: a list of traced scalars is a vector output.
# The Jacobian's determinant is r.
#   autodiff jacobian samples/higher/polar.py --at r=2,t=0.5
def f(r, t):
    return [r * cos(t), r * sin(t)]
