"""Print the integers 5003..100000 whose CPython math.log differs from the polynomial Go uses.

Input for hack/golog/main.go (see there). Uses spreadwatch's go_log only to pick the interesting
integers; the Go program then prints Go's own values, which the test compares against.
"""

import math

from spreadwatch.scoring.gomath import go_log

for n in range(5003, 100001):
    if math.log(n) != go_log(float(n)):
        print(n)
