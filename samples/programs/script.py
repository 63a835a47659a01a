# A script: no def. Its free variables (r, h) are the inputs; its output is the last expression
# statement, or the variable named with --of.
#
#   autodiff grad samples/programs/script.py --at r=2,h=3
# expect value: 37.69911184307752
# expect gradient r: 37.69911184307752
# expect gradient h: 12.566370614359172
#
#   autodiff grad samples/programs/script.py --at r=2,h=3 --of base
# expect value: 12.566370614359172
# expect gradient r: 12.566370614359172
# expect gradient h: 0.0

base = pi * r ** 2          # the area of the base
volume = base * h
volume
