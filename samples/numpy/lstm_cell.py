# One LSTM cell step, the gates stacked in one weight matrix and split by slicing.
#
#   autodiff grad samples/numpy/lstm_cell.py --at x=[0.5,-1.0]
# expect value: -0.011171165497787678
# expect gradient x: [0.011851879088178717, 0.06061768744509427]
import numpy as np

W = [[0.1, -0.2], [0.3, 0.1], [-0.1, 0.2], [0.2, 0.2],
              [0.0, 0.1], [0.1, -0.3], [0.2, 0.0], [-0.2, 0.1]]
U = [[0.05, 0.1], [-0.1, 0.05], [0.1, 0.0], [0.0, -0.05],
              [0.02, 0.03], [0.04, -0.01], [-0.03, 0.02], [0.01, 0.01]]
bias = np.zeros(8)
h0 = [0.1, -0.1]
c0 = [0.2, 0.05]


def sigmoid_(z):
    return 1.0 / (1.0 + np.exp(-z))


def lstm_step(x, h, c):
    gates = W @ x + U @ h + bias
    n = h.shape[0]
    i = sigmoid_(gates[:n])
    forget = sigmoid_(gates[n:2 * n])
    o = sigmoid_(gates[2 * n:3 * n])
    g = np.tanh(gates[3 * n:])
    c_next = forget * c + i * g
    return o * np.tanh(c_next), c_next


def f(x):
    h, c = lstm_step(x, h0, c0)
    h, c = lstm_step(x, h, c)
    return np.sum(h ** 2) + c.sum()
