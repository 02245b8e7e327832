"""Reliability: interruptions, job MTBF, checkpoint interval and goodput.

Notation (Daly 2006 [doi-10.1016-j.future.2004.11.016]): ``delta`` = checkpoint write time,
``M`` = mean time between job interruptions (MTBF of the whole job),
``tau`` = checkpoint interval (compute time between checkpoints),
``R`` = restart time after an interruption. All vectorised.
"""

from __future__ import annotations

import numpy as np

from ..core import units


def interruptions_per_day(gpus, interruptions_per_gpu_year):
    r"""Expected job-stopping interruptions per day for a job on ``gpus`` GPUs.

    .. math:: \lambda = \frac{r \cdot n}{365.25}

    Parameters
    ----------
    gpus : array_like
        GPUs in the job n [-]
    interruptions_per_gpu_year : array_like
        per-GPU rate r [1/yr] (default: Llama 3, 419 / (16,384 x 54 d))

    Returns
    -------
    rate : ndarray
        [1/day]

    References
    ----------
    .. [1] Llama Team 2024, "The Llama 3 Herd of Models", arXiv:2407.21783,
       §3.3.4: 419 unexpected interruptions in a 54-day snapshot on 16,384
       H100. [arxiv-2407.21783]

    Examples
    --------
    Llama Team 2024, §3.3.4: 419 interruptions in 54 days on 16,384 H100 -> 7.76 per day
    (a per-GPU rate of 419 / (16,384 x 54 / 365.25) = 0.173 per year).

    >>> round(float(interruptions_per_day(16384, 419 / (16384 * 54 / 365.25))), 2)
    7.76
    """
    return np.asarray(gpus, dtype=float) * interruptions_per_gpu_year / units.DAYS_PER_YEAR


#: below this rate a job never meets an interruption (a million million days between them) [1/day]
MIN_INTERRUPTIONS_PER_DAY = 1e-12


def mtbf_h(interruptions_per_day_):
    """Job mean time between interruptions [h] = 24 / rate (inf for rate 0 or below
    :data:`MIN_INTERRUPTIONS_PER_DAY`).

    References
    ----------
    .. [1] Worked example derived from Llama Team 2024, arXiv:2407.21783, §3.3.4: 419
       interruptions in 54 days -> M = 54 x 24 h / 419 = 3.09 h. [arxiv-2407.21783]

    Examples
    --------
    Llama 3 (419 interruptions in 54 days): 24 / 7.76 = 3.09 h between interruptions; no failures, inf.

    >>> round(float(mtbf_h(419 / 54)), 2), float(mtbf_h(0.0))
    (3.09, inf)
    """
    rate = np.asarray(interruptions_per_day_, dtype=float)
    some = rate > MIN_INTERRUPTIONS_PER_DAY
    return np.where(some, units.HOURS_PER_DAY / np.where(some, rate, 1.0), np.inf)


def young_interval_s(write_s, mtbf_s):
    r"""Young's optimal checkpoint interval [s].

    .. math:: \tau_{Y} = \sqrt{2\,\delta\,M}

    Parameters
    ----------
    write_s : array_like
        checkpoint write time delta [s]
    mtbf_s : array_like
        job MTBF M [s]

    References
    ----------
    .. [1] Young 1974, "A first order approximation to the optimum checkpoint
       interval", CACM 17(9). [doi-10.1145-361147.361115]
    .. [2] Du et al. 2020, "Robustness of the Young/Daly formula for stochastic iterative
       applications", INRIA HAL 02514107, abstract (P_YD = sqrt(2 mu_f C)). [hal-02514107]

    Examples
    --------
    Young's interval for a 1-minute checkpoint write and Llama 3's 3.09 h MTBF (derived):
    sqrt(2 x 60 s x 11,135 s) = 19 min.

    >>> round(float(young_interval_s(60, 54 * 24 / 419 * 3600)) / 60)
    19
    """
    return np.sqrt(2.0 * np.asarray(write_s, dtype=float) * mtbf_s)


def daly_interval_s(write_s, mtbf_s):
    r"""Daly's first-order optimal checkpoint interval, floored at ``delta`` [s].

    .. math:: \tau_{D} = \max\left(\sqrt{2\,\delta\,M} - \delta,\; \delta\right)

    The floor applies only when ``M < 2 delta`` (Daly's formula then drops
    below the write time); it keeps the interval non-decreasing in ``M``.

    References
    ----------
    .. [1] Daly 2006, "A higher order estimate of the optimum checkpoint
       interval for restart dumps", Future Generation Computer Systems 22,
       doi:10.1016/j.future.2004.11.016, first-order solution. [doi-10.1016-j.future.2004.11.016]

    Examples
    --------
    The same case as :func:`young_interval_s` (1-minute write, M = 3.09 h): 19.3 - 1 = 18 min (derived).

    >>> round(float(daly_interval_s(60, 54 * 24 / 419 * 3600)) / 60)
    18
    """
    write_s = np.asarray(write_s, dtype=float)
    return np.maximum(young_interval_s(write_s, mtbf_s) - write_s, write_s)


def daly_higher_order_interval_s(write_s, mtbf_s):
    r"""Daly's higher-order optimal checkpoint interval [s].

    .. math:: \tau = \sqrt{2\delta M}\left[1 + \tfrac13\sqrt{\tfrac{\delta}{2M}}
              + \tfrac19\,\tfrac{\delta}{2M}\right] - \delta \quad (\delta < 2M),
              \qquad \tau = M \quad (\delta \ge 2M)

    References
    ----------
    .. [1] Daly 2006, FGCS 22, doi:10.1016/j.future.2004.11.016, perturbation
       solution, series as printed; the figure-caption optima (Figs. 3-5:
       M = 24 h / 6 h / 15 min, R = 10 min, delta = 5 min -> 117 / 57 / 9.1 min)
       are reproduced in the tests. [doi-10.1016-j.future.2004.11.016]

    Examples
    --------
    Daly 2006, Figs. 3-5 captions: delta = 5 min, M = 24 h / 6 h / 15 min -> 117 / 57 / 9.1 min.

    >>> [round(float(daly_higher_order_interval_s(300, m * 60)) / 60, 1) for m in (24 * 60, 6 * 60, 15)]
    [116.7, 56.7, 9.1]
    """
    write_s = np.asarray(write_s, dtype=float)
    xi = write_s / (2.0 * np.asarray(mtbf_s, dtype=float))
    tau = np.sqrt(2.0 * write_s * mtbf_s) * (1.0 + np.sqrt(xi) / 3.0 + xi / 9.0) - write_s
    return np.where(xi < 1.0, tau, mtbf_s)


def overhead_fraction(interval_s, write_s, mtbf_s, restart_s):
    r"""First-order wasted fraction of wall-clock time.

    .. math:: w \approx \frac{\delta}{\tau} + \frac{\tau}{2M} + \frac{R}{M}

    Checkpoint writes, half an interval of lost work per failure, and the
    restart. Can exceed 1 when failures are too frequent (the first-order
    model then no longer applies; see :func:`goodput`).

    References
    ----------
    .. [1] Derived from the Young (1974) and Daly (2006) lost-work model, with M from
       Llama Team 2024, arXiv:2407.21783, §3.3.4. Worked example: M = 3.09 h;
       delta = 1 min / 30 s / 5 min -> ~10 / 7 / 23 %.
       [doi-10.1145-361147.361115;doi-10.1016-j.future.2004.11.016;arxiv-2407.21783]

    Examples
    --------
    Derived from Llama 3's M = 3.09 h and a 1-minute write at Young's 19.3-minute interval:
    1/19.3 + 19.3 / (2 x 185.6) = 5.2% + 5.2% = 10% of wall-clock time lost.

    >>> m = 54 * 24 / 419 * 3600
    >>> round(float(overhead_fraction(young_interval_s(60, m), 60, m, 0.0)), 2)
    0.1
    """
    m = np.asarray(mtbf_s, dtype=float)
    finite = np.isfinite(m)
    m_safe = np.where(finite, m, 1.0)
    failures = np.where(finite, np.asarray(interval_s) / (2.0 * m_safe) + np.asarray(restart_s) / m_safe, 0.0)
    return np.asarray(write_s, dtype=float) / interval_s + failures


def goodput(interval_s, write_s, mtbf_s, restart_s):
    r"""Fraction of wall-clock time that advances training (Daly's exponential model).

    .. math:: g = \frac{\tau}{M\,e^{R/M}\left(e^{(\tau+\delta)/M} - 1\right)}

    For Poisson failures this is the expected useful share of each segment
    of ``tau`` compute plus a ``delta`` checkpoint, including failures during
    writes and restarts. It lies in (0, 1] and its first-order expansion is
    ``1 - overhead_fraction``; unlike that expansion it stays positive when
    failures are frequent. With no failures (``M`` infinite) it is
    ``tau / (tau + delta)``.

    Parameters
    ----------
    interval_s, write_s, mtbf_s, restart_s : array_like
        tau, delta, M, R [s]

    Returns
    -------
    goodput : ndarray
        [-]

    References
    ----------
    .. [1] Daly 2006, FGCS 22, doi:10.1016/j.future.2004.11.016 (complete
       cost function T_w = M e^{R/M} (e^{(tau+delta)/M} - 1) T_s / tau). Its
       minimum reproduces the paper's Figs. 3-5 optima (tested). [doi-10.1016-j.future.2004.11.016]

    Examples
    --------
    Daly 2006, Fig. 3 setting (M = 24 h, R = 10 min, delta = 5 min) at its optimum tau = 117 min:
    91% of wall-clock time advances training (derived); without failures a 1-minute write every hour
    leaves 60/61 = 98%.

    >>> round(float(goodput(117 * 60, 300, 24 * 3600, 600)), 2), round(float(goodput(3600, 60, float("inf"), 600)), 2)
    (0.91, 0.98)
    """
    tau = np.asarray(interval_s, dtype=float)
    delta = np.asarray(write_s, dtype=float)
    m = np.asarray(mtbf_s, dtype=float)
    finite = np.isfinite(m)
    m_safe = np.where(finite, m, 1.0)
    with np.errstate(over="ignore", invalid="ignore"):
        wall = m_safe * np.exp(restart_s / m_safe) * np.expm1((tau + delta) / m_safe)
        g = np.where(finite, tau / wall, tau / (tau + delta))
    g = np.where(np.isinf(tau) & ~finite, 1.0, np.where(np.isfinite(g), g, 0.0))
    # the smallest positive double rather than 0 for hopeless cases (keeps g in (0, 1])
    return np.clip(g, np.finfo(float).tiny, 1.0)
