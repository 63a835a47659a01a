# Least squares from data files: the mean squared residual of X @ w against y, with X and y read
# from CSV files (a header row of column names, one row per observation).
#
#   autodiff grad samples/data/least_squares.py --at X=@samples/data/X.csv,y=@samples/data/y.csv,w=[0,0,0] --wrt w
#     value 18.559687500000003 (mean of y²); gradient w = 2/n Xᵀ(Xw - y) = [-5.1625, -14.44375, 3.0875]
#   autodiff grad samples/data/least_squares.py --inputs samples/data/inputs.toml --wrt w --out g.npz
#     the same, with every input named in one file; g.npz holds `value` and `grad.w`


def f(w, X, y):
    residual = X @ w - y
    return sum(residual * residual) / len(y)
