# Softmax cross-entropy of logits z against class LABEL, computed stably (the max is subtracted
# and cut from the tape with stop_gradient: it changes nothing but the rounding). The gradient is
# softmax(z) - onehot(LABEL).
#
#   autodiff grad samples/programs/softmax_xent.py --at z=[2,1,0.1]
# expect value: 1.4170300162778338
# expect gradient z: [0.6590011388859679, -0.7575670292952861, 0.09856589040931818]

LABEL = 1


def logsumexp(z):
    m = stop_gradient(max(z))
    return m + log(sum(exp(z - m)))


def f(z):
    return logsumexp(z) - z[LABEL]
