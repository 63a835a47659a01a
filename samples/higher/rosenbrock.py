# Rosenbrock's banana: minimum 0 at (1, 1), where the Hessian is [[802, -400], [-400, 200]].
#   autodiff hessian samples/higher/rosenbrock.py --at x=1,y=1
#   autodiff hessian samples/higher/rosenbrock.py --at x=-1.2,y=1 --mode reverse-over-reverse
def f(x, y):
    return (1 - x)**2 + 100 * (y - x**2)**2
