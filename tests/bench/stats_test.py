import math

import tap
import welch

t = tap.Tap()
# Two-sided critical values of Student's t (standard tables): p = 0.05 and 0.01.
for tval, df, p in [(12.706, 1, 0.05), (2.228, 10, 0.05), (2.086, 20, 0.05), (3.169, 10, 0.01),
                    (1.960, 1e9, 0.05), (2.576, 1e9, 0.01), (63.657, 1, 0.01)]:
    got = welch.t_two_sided_p(tval, df)
    t.ok(abs(got - p) < 2e-4 * max(1, p * 100), "t=%g df=%g: two-sided p %.5f (table %.2f)" % (tval, df, got, p))
t.ok(abs(welch.t_cdf(0.0, 7) - 0.5) < 1e-12, "t CDF at 0 is 1/2")
t.ok(abs(welch.t_cdf(-1.0, 1) - 0.25) < 1e-12, "t CDF with df=1 is the Cauchy CDF: F(-1) = 1/4")
t.ok(abs(welch.betainc_regularized(2, 3, 0.4) - 0.5248) < 1e-12, "I_0.4(2,3) = 0.5248 (closed form)")
t.ok(abs(welch.betainc_regularized(0.5, 0.5, 0.5) - 0.5) < 1e-12, "I_0.5(1/2,1/2) = 1/2 (symmetry)")
# Welch on two samples, checked by hand: means 2.5 and 5, variances 5/3
# and 2.5, se^2 = 5/12 + 1/2, df by Welch-Satterthwaite = 6.98; p = 0.0349.
r = welch.welch([1, 2, 3, 4], [3, 4, 5, 6, 7])
t.ok(abs(r[0] + 2.6112) < 1e-3 and abs(r[1] - 6.9808) < 1e-3 and abs(r[2] - 0.03494) < 1e-4,
     "Welch t=%.4f df=%.4f p=%.5f (expect -2.6112, 6.9808, 0.03494)" % r)
t.ok(welch.welch([1, 2], [5]) is None, "fewer than two values: no test")
t.ok(welch.welch([3, 3, 3], [3, 3]) [2] == 1.0 and welch.welch([3, 3, 3], [4, 4])[2] == 0.0,
     "no variance: p 1 when equal, 0 when different")
t.ok(welch.welch([1.0, 1.1, 0.9], [1.05, 0.95, 1.0])[2] > 0.5, "overlapping samples are not significant")
t.ok(welch.median([3, 1, 2]) == 2 and welch.median([4, 1, 2, 3]) == 2.5 and math.isclose(welch.mean([1, 2]), 1.5),
     "median and mean")
t.done()
