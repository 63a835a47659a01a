# One LSTM cell step: gates from W [x; h] + b split four ways, the new cell state and output.
# The loss is the sum of the new hidden state; its gradient flows to the input and the biases.
#
#   autodiff grad samples/numpy/lstm.py --at x=[0.5,-1],b=[0.1,0,-0.1,0.2,0,0.1,-0.2,0.3]
# expect value: -0.013544952644028233
# expect gradient x: [-0.06415665658828525, 0.07377442719373631]
# expect gradient b: [0.011975178064588657, -0.0450250793804325, 0.03891279577062874, -0.014983153556753464, 0.18226270584329235, 0.2673301920235718, 0.07087618647679761, -0.045980384154978036]

H = [0.2, -0.4]
C = [0.5, -0.1]
W = [[0.1, -0.2, 0.3, 0.05], [0.4, 0.1, -0.3, 0.2], [-0.1, 0.2, 0.1, -0.4], [0.3, 0.3, 0.2, 0.1],
     [0.2, -0.1, 0.4, 0.3], [-0.3, 0.2, 0.1, 0.2], [0.1, 0.4, -0.2, 0.1], [0.05, -0.3, 0.2, 0.4]]


def f(x, b):
    z = W @ concatenate((x, H)) + b
    i, forget, g, o = split(z, 4)
    cell = sigmoid(forget) * C + sigmoid(i) * tanh(g)
    hidden = sigmoid(o) * tanh(cell)
    return sum(hidden)
