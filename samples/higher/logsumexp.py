# log-sum-exp: its gradient is softmax(z), its Hessian diag(s) - s sᵀ (singular: adding a
# constant to every z adds it to the output).
#   autodiff hessian samples/higher/logsumexp.py --at "z=[1,2,3]"
def f(z):
    m = max(z)
    return m + log(sum(exp(z - m)))
