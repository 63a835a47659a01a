# grad(grad(h)) of a closure: h reads `a` from the function around it.
# h(x) = a x^3, h''(x) = 6 a x, so f(a) = h''(a) = 6 a^2 and f'(a) = 12 a.
#   autodiff grad samples/higher/nested_grad.py --at a=0.5            ->  value 1.5, gradient 6
#   autodiff derivative samples/higher/nested_grad.py --at a=0.5 -n 3 ->  [6, 12, 0]
def f(a):
    def h(x):
        return a * x**3
    return grad(grad(h))(a)
