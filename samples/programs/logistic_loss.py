# Logistic regression: the mean negative log-likelihood of labels y under p = sigmoid(X w + b).
# The gradient is the textbook one: dL/dw = X^T (p - y) / m, dL/db = mean(p - y).
#
#   autodiff grad samples/programs/logistic_loss.py --at w=[0.5,-0.25],b=0.1
# expect value: 0.8273872240796284
# expect gradient w: [0.09675396427810903, -0.5864616287880384]
# expect gradient b: 0.032064410213762884

X = [[1.0, 2.0], [2.0, -1.0], [-1.5, 0.5], [0.5, 1.5]]
Y = [1.0, 0.0, 0.0, 1.0]


def log_likelihood(p, y):
    return y * log(p) + (1 - y) * log(1 - p)


def f(w, b):
    p = sigmoid(X @ w + b)
    return -mean(log_likelihood(p, Y))
