# softmax, shifted by the maximum for stability (the shift does not change the value or the
# Jacobian, diag(s) - s sᵀ, because the gradient of max is split among ties and cancels).
#   autodiff jacobian samples/higher/softmax.py --at "z=[1,2,3]"
def f(z):
    e = exp(z - max(z))
    return e / sum(e)
