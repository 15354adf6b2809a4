"""Summary statistics (the statistics module's) and Welch's t-test, standard library only.

The t-distribution's CDF comes from the regularized incomplete beta
function I_x(a, b), evaluated with its continued fraction (Lentz's
method), as in Numerical Recipes §6.4:

    two-sided p = I_{df/(df+t^2)}(df/2, 1/2)
"""

import math
import statistics


def median(xs):
    return statistics.median(xs) if xs else None


def mean(xs):
    return statistics.fmean(xs) if xs else None


def variance(xs):
    """Sample variance (n-1); None below two samples."""
    return statistics.variance(xs) if len(xs) >= 2 else None


def _beta_continued_fraction(a, b, x):
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    if abs(d) < tiny:
        d = tiny
    d = 1.0 / d
    h = d
    for m in range(1, 1000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = tiny if abs(d) < tiny else d
        c = 1.0 + aa / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = tiny if abs(d) < tiny else d
        c = 1.0 + aa / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def betainc_regularized(a, b, x):
    """I_x(a, b) for a, b > 0 and 0 <= x <= 1."""
    if not (0.0 <= x <= 1.0):
        raise ValueError("x must be in [0, 1], got %r" % x)
    if x in (0.0, 1.0):
        return x
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                 + a * math.log(x) + b * math.log1p(-x))
    front = math.exp(log_front)
    # The continued fraction converges fast for x < (a+1)/(a+b+2); use the
    # symmetry I_x(a,b) = 1 - I_{1-x}(b,a) on the other side.
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_continued_fraction(a, b, x) / a
    return 1.0 - front * _beta_continued_fraction(b, a, 1.0 - x) / b


def t_two_sided_p(t, df):
    """P(|T| >= |t|) for Student's t with df degrees of freedom."""
    if math.isinf(t):
        return 0.0
    return betainc_regularized(df / 2.0, 0.5, df / (df + t * t))


def t_cdf(t, df):
    """P(T <= t)."""
    tail = t_two_sided_p(t, df) / 2.0
    return 1.0 - tail if t >= 0 else tail


def welch(a, b):
    """Welch's unequal-variance t-test of the means of samples a and b.

    Returns (t, df, p) with a two-sided p, or None when either sample has
    fewer than two values (no variance to test against). When both samples
    have zero variance the test degenerates: p is 1.0 if the means are
    equal and 0.0 if they differ (identical repeats that differ between
    runs are a certain change, e.g. an exact page-table count).
    """
    if len(a) < 2 or len(b) < 2:
        return None
    ma, mb = mean(a), mean(b)
    va, vb = variance(a) / len(a), variance(b) / len(b)
    se2 = va + vb
    if se2 == 0.0:
        return (0.0, float("nan"), 1.0) if ma == mb else (math.copysign(math.inf, ma - mb), float("nan"), 0.0)
    t = (ma - mb) / math.sqrt(se2)
    df = se2 * se2 / ((va * va / (len(a) - 1) if va else 0.0) + (vb * vb / (len(b) - 1) if vb else 0.0))
    return t, df, t_two_sided_p(t, df)
