"""Monte Carlo of a training run's wall-clock time and cost over the kit's calibrated uncertainties.

Each sample draws

* the efficiency: the run's GPU-hours times ``exp(r)``, ``r`` a split normal whose 10th and 90th
  percentiles are the calibrated prediction interval (``band.q10``, ``band.q90`` of
  ``data/calibration/training_constants.csv``) and whose median is 0, so the P50 is the point
  figure;
* interruptions: a Poisson number at the plan's rate over the sampled duration, each losing the
  time that makes the expected loss equal the interruption model's goodput;
* spot reclaims (spot pricing only), the same way with the spot goodput;
* the price, where the catalog has a range: the catalog price is the median, the other half of the
  samples spread uniformly down to the offer's lowest and up to its highest published price
  (scaled to the pricing used).

Everything is vectorised over options x samples (:func:`simulate`), so the options explorer
runs millions of option-samples per second. One plan's result gets P10/P50/P90 of the days and
the run cost and the probability of meeting the deadline from a fixed-seed run (:func:`step`),
so results are reproducible.
"""

from __future__ import annotations

import math

import numpy as np

from .core.assumptions import GOODPUT_STALLED
from .core.records import record, record_of
from .cost import spot_terms, whole_instances
from .model.efficiency import efficiency_log_errors, training_constants
from .model.serving import serving_error_quantiles

#: samples per plan in :func:`step` (fixed seed: results are reproducible)
SAMPLES_PER_PLAN = 4000
SEED = 20261203
#: quantiles reported [percent]
PERCENTILES = (10, 50, 90)


def _poisson_loss(seed, base_days, rate_per_day, lost_fraction):
    """Days lost to Poisson events at ``rate_per_day``, the mean loss being ``lost_fraction`` x days.

    Each option draws from its own generator with the same seed (common random numbers): options
    with the same duration and rate lose the same days in every sample.
    """
    rate = np.asarray(rate_per_day, dtype=float)  # per option (a column): broadcast against the samples
    lost = np.asarray(lost_fraction, dtype=float)
    happens = rate > 0
    if not happens.any():  # no events (no spot reclaims): the expected loss, nothing to draw
        return base_days * lost
    mean = np.where(happens, rate * base_days, 0.0)
    events = np.stack([np.random.default_rng(seed).poisson(row) for row in mean])
    safe = np.where(happens, rate, 1.0)
    return np.where(happens, events * lost / safe, base_days * lost)


def simulate(days, rate_per_day, lost_fraction, spot_rate_per_day, spot_lost_fraction, price_low_ratio,
             price_high_ratio, q10, q90, samples, seed=SEED):
    """Samples of wall-clock days and of the cost ratio to the point cost for each option.

    Parameters
    ----------
    days : ndarray (options,)
        wall-clock days without interruptions at the point efficiency [days].
    rate_per_day, lost_fraction : ndarray (options,)
        interruptions per day of the job and the expected share of time they cost
        (1 / goodput - 1) [1/day], [-].
    spot_rate_per_day, spot_lost_fraction : ndarray (options,)
        the same for spot reclaims (0 when not on spot).
    price_low_ratio, price_high_ratio : ndarray (options,)
        price range over the catalog price (1, 1 without a range) [-].
    q10, q90 : float
        prediction interval of the efficiency [ln ratio].
    samples : int
        samples per option.

    Returns
    -------
    days, cost_ratio : ndarray (options, samples)
        sampled wall-clock days [days] and run cost / point run cost [-] (the point cost is at
        the point days with the mean interruption loss).
    """
    rng = np.random.default_rng(seed)
    days = np.asarray(days, dtype=float)[:, None]
    # common random numbers: every option sees the same efficiency and price draws, so rankings
    # compare options, not sampling noise
    base = days * np.exp(efficiency_log_errors(rng.standard_normal((1, samples)), q10, q90))
    wall = base + _poisson_loss(seed + 1, base, np.asarray(rate_per_day)[:, None],
                                np.asarray(lost_fraction)[:, None])
    wall = wall + _poisson_loss(seed + 2, base, np.asarray(spot_rate_per_day)[:, None],
                                np.asarray(spot_lost_fraction)[:, None])
    lo, hi = (np.asarray(v, dtype=float)[:, None] for v in (price_low_ratio, price_high_ratio))
    u = rng.random((1, samples))
    # median at the catalog price, uniform down to the lowest and up to the highest published price
    price = np.where(u < 0.5, lo + (1.0 - lo) * 2.0 * u, 1.0 + (hi - 1.0) * (2.0 * u - 1.0))
    point = days * (1.0 + np.asarray(lost_fraction)[:, None] + np.asarray(spot_lost_fraction)[:, None])
    return wall, wall / point * price


def row_percentiles(values, percentiles=PERCENTILES) -> np.ndarray:
    """``np.percentile(values, percentiles, axis=1)`` from one sort of each row [unit of ``values``].

    The same numbers (numpy's default linear interpolation between the two order statistics around
    ``(n - 1) x p / 100``, in numpy's own arithmetic; a row holding NaN gives NaN), but a vectorised
    sort of a row of thousands costs less than numpy's partition around six order statistics.

    Examples
    --------
    1 to 5 in any order: the P10 lies 0.4 of the way from the 1st to the 2nd value, the P90 0.6 of the
    way from the 4th to the 5th (Hyndman & Fan 1996, definition 7, numpy's default); a row with NaN:

    >>> x = np.array([[5.0, 1.0, 4.0, 2.0, 3.0], [1.0, np.nan, 0.0, 2.0, 3.0]])
    >>> row_percentiles(x, (10, 50, 90)).round(12).tolist()
    [[1.4, nan], [3.0, nan], [4.6, nan]]
    >>> np.array_equal(row_percentiles(x, (10, 50, 90)), np.percentile(x, (10, 50, 90), axis=1), equal_nan=True)
    True
    """
    s = np.sort(values, axis=1)  # NaN last, as numpy's partition leaves it
    n = s.shape[1]
    virtual = (n - 1) * (np.asarray(percentiles, dtype=float) / 100)
    lower = np.floor(virtual).astype(np.intp)
    upper = lower + 1
    lower[virtual >= n - 1] = upper[virtual >= n - 1] = -1
    gamma = (virtual - lower)[:, None]
    a, b = s[:, lower].T, s[:, upper].T
    diff = b - a
    out = a + diff * gamma
    np.subtract(b, diff * (1 - gamma), out=out, where=gamma >= 0.5)  # numpy's lerp from the nearer end
    nan_rows = np.isnan(s[:, -1])
    out[:, nan_rows] = s[nan_rows, -1]
    return out


def summarise(days, cost_ratio, point_cost, deadline_days=None) -> dict:
    """P10/P50/P90 of days and cost and the probability of meeting the deadline, per option."""
    both = row_percentiles(np.concatenate([days, cost_ratio]))  # one pass: row by row
    dq, cq = both[:, :days.shape[0]], both[:, days.shape[0]:] * np.asarray(point_cost, dtype=float)[None, :]
    out = {f"days_p{p}": dq[i] for i, p in enumerate(PERCENTILES)}
    out.update({f"run_cost_usd_p{p}": cq[i] for i, p in enumerate(PERCENTILES)})
    if deadline_days is None:
        out["deadline_probability"] = np.full(days.shape[0], np.nan)
    else:
        out["deadline_probability"] = (days <= np.asarray(deadline_days, dtype=float)[..., None]).mean(axis=1)
    return out


def price_range_ratios(cloud) -> tuple[float, float]:
    """(low, high) published price of an offer over its on-demand price (1, 1 without a range) [-]."""
    ref = getattr(cloud, "on_demand_usd_per_hr", None) if cloud else None
    lo, hi = (getattr(cloud, k, None) if cloud else None for k in ("usd_per_hr_low", "usd_per_hr_high"))
    if not (ref and lo and hi) or not all(map(math.isfinite, (ref, lo, hi))):
        return 1.0, 1.0
    return min(lo / ref, 1.0), max(hi / ref, 1.0)


def serving_gpus_range(tokens_per_s: float, tokens_per_s_per_replica: float, gpus_per_replica: int,
                       ratio: float) -> int:
    """GPUs that carry ``tokens_per_s`` output tokens per second if each replica reaches ``ratio`` times its
    predicted ``tokens_per_s_per_replica``: whole replicas, at least one [GPUs].

    >>> serving_gpus_range(10_000, 2_000, 2, 0.8)   # 6.25 replicas -> 7 replicas of 2 GPUs
    14
    """
    replicas = max(math.ceil(tokens_per_s / (tokens_per_s_per_replica * ratio) - 1e-9), 1)
    return int(replicas * gpus_per_replica)


def serving_range(plan, result) -> dict:
    """P10-P90 of a serving plan's GPUs, renting and owning cost from the calibrated serving band.

    The replicas are sized again as if each reached the P90 (``inference.gpus_low``) or the P10
    (``inference.gpus_high``) of published over predicted throughput
    (:func:`~aiplan.model.serving.serving_error_quantiles`, read from
    ``data/calibration/serving_error_quantiles.csv``); separate prefill and decode pools scale
    their GPUs by the same ratio, rounded up to whole replicas. Renting is billed in whole
    instances, so ``cost.cloud_usd_per_month_low/high`` and ``cost.usd_per_million_tokens_low/high``
    scale the plan's figures by the instances; owning is bought in whole servers, so
    ``cost.onprem_usd_per_month_low/high`` and ``cost.usd_per_million_tokens_onprem_low/high`` scale
    them by the servers (the servers with their share of network, storage, power and space: an
    approximation, as a fabric grows in switches, not exactly in servers). Only where the load sizes
    the GPUs: a plan that fixes its GPUs pays for them whatever the throughput. Keys left out where
    an input is missing.
    """
    inf, cost, w = result["inference"], result["cost"], plan.workload
    gpus, per_replica, gr = inf.get("gpus"), inf.get("tokens_per_s_per_replica"), inf.get("gpus_per_replica")
    if not (gpus and per_replica and gr):
        return {}
    q = serving_error_quantiles()
    out = {}
    for key, ratio in (("gpus_low", q[90]), ("gpus_high", q[10])):
        if inf.get("disaggregated"):
            out[key] = int(math.ceil(gpus / ratio / gr - 1e-9) * gr)
        else:
            out[key] = serving_gpus_range(w["requests_per_s"] * w["output_tokens"], per_replica, gr, ratio)
    out["gpus_low"], out["gpus_high"] = min(out["gpus_low"], gpus), max(out["gpus_high"], gpus)
    if plan.cluster.get("gpus") is None and result["cluster"].get("gpus") == gpus:
        instance, node = (plan.cloud.gpus if plan.cloud else 1), int(plan.cluster["gpus_per_node"])
        for names, per in ((("cloud_usd_per_month", "usd_per_million_tokens"), instance),
                           (("onprem_usd_per_month", "usd_per_million_tokens_onprem"), node)):
            for name in names:
                value = cost.get(name)
                if value is not None:
                    base = float(whole_instances(gpus, per))  # whole instances renting, whole servers owning
                    out[f"{name}_low"], out[f"{name}_high"] = (
                        value * float(whole_instances(out["gpus_low"], per)) / base,
                        value * float(whole_instances(out["gpus_high"], per)) / base)
    return out


def step(plan, result):
    """The ``uncertainty`` record: for a training plan ``compute.wall_clock_days_p10/p50/p90`` (and
    ``days_low``/``days_high``, the same P10 and P90), ``compute.deadline_probability`` and
    ``cost.run_usd_p10/p50/p90``; for a serving plan the P10-P90 of its GPUs and renting cost
    (:func:`serving_range`)."""
    if plan.kind == "inference":
        return record_of("uncertainty", serving_range(plan, result))
    comp, cost = result["compute"], result["cost"]
    base = comp.get("wall_clock_days_no_failures")
    rel = result["reliability"]
    goodput = rel.get("goodput") or 1.0
    if plan.kind == "inference" or not base or comp.get("wall_clock_days") is None or goodput < GOODPUT_STALLED:
        return record("uncertainty")  # a run that never finishes has no distribution (the finding says so)
    rate = rel.get("interruptions_per_day") or 0.0
    spot_rate, spot_lost, _ = spot_terms(plan, result)
    lo, hi = price_range_ratios(plan.cloud)
    k = training_constants()
    days, ratio = simulate(np.array([base]), np.array([rate]), np.array([1.0 / goodput - 1.0]),
                           np.array([spot_rate]), np.array([spot_lost]), np.array([lo]), np.array([hi]),
                           k["band.q10"], k["band.q90"], SAMPLES_PER_PLAN)
    point = cost.get("cloud_run_usd")
    fixed = point if point is not None and cost.get("run_paid_in_full") else 0.0  # the whole term, however long
    s = summarise(days, ratio, [math.nan if point is None else point - fixed], plan.cluster.get("deadline_days"))
    out = {}
    for p in PERCENTILES:
        out[f"wall_clock_days_p{p}"] = float(s[f"days_p{p}"][0])
    out["days_low"], out["days_high"] = out["wall_clock_days_p10"], out["wall_clock_days_p90"]
    for p in PERCENTILES:
        if point is not None:
            out[f"run_usd_p{p}"] = float(s[f"run_cost_usd_p{p}"][0]) + fixed
    if plan.cluster.get("deadline_days") is not None:
        out["deadline_probability"] = float(s["deadline_probability"][0])
    return record_of("uncertainty", out)
