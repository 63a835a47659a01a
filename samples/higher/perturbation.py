# Perturbation confusion (Siskind & Pearlmutter): the inner grad's perturbation of y must not be
# confused with the outer perturbation of x. grad(g)(x) = 1 whatever x is, so f(x) = x and f'(x) = 1.
#   autodiff grad samples/higher/perturbation.py --at x=3                 ->  gradient 1
#   autodiff grad samples/higher/perturbation.py --at x=3 --mode forward  ->  gradient 1
def f(x):
    def g(y):
        return x + y
    return x * grad(g)(x)
