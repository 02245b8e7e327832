"""The report's "Alternatives considered": the options explorer's best five and its time/cost chart."""

from __future__ import annotations

from typing import Any

from ..analysis.options import (
    are_serving,
    capacity_risk_text,
    excluded_summary,
    explore,
    figure_cells,
    have_odds,
    is_plans_own,
    offer_text,
    plans_own_option,
)
from ..core.fields import format_value
from ..cost import PRICING_LABELS
from ..model import layout_legend
from .sections import Html, esc, note, table

#: options listed in the report
TOP_OPTIONS = 5


def alternatives(plan: Any, result: Any = None, top: int = TOP_OPTIONS) -> tuple:
    """(intro and table of the best ``top`` options, their time-versus-cost chart) for the plan.

    Every catalog GPU and priced way of getting it is ranked by the median run cost (serving: cost
    per month) at the plan's deadline and facility; the plan's own choice is named when it is
    among them.
    """
    from ..present.charts import pareto_chart

    rows = explore(plan)
    ranked = [r for r in rows if not r["excluded"]]
    if not ranked:
        return (note("No catalog option has both a price and a configuration that runs this workload."),)
    serving = are_serving(ranked)
    best = ranked[:top]
    chosen = plans_own_option(plan)
    odds = have_odds(ranked)  # no deadline: no chance of meeting it
    body = []
    for r in best:
        mark = " (this plan)" if is_plans_own(r, chosen) else ""
        offer = offer_text(r.get("offer_name"))
        option = Html(f"<b>{esc(r['gpu_name'])}</b>{esc(mark)}<br><span class='d'>{esc(offer)}</span>")
        pricing = Html(f"{esc(PRICING_LABELS.get(r['pricing'], r['pricing']))}<br><span class='d'>"
                       f"{esc(r.get('basis') or '')}</span>")
        body.append((format_value(r["rank"], "count"), option, pricing, *figure_cells(r, serving, odds),
                     capacity_risk_text(r)))
    header = (("#", "Option", "Pricing", "GPUs", "Layout", "Per month", "Per million tokens", "Capacity risk")
              if serving else
              ("#", "Option", "Pricing", "GPUs", "Time (P10–P90)", "Run cost (P10–P90)",
               *(("Chance of the deadline",) if odds else ()), "Capacity risk"))
    options, runnable = format_value(len(rows), "count", "options"), format_value(len(ranked), "count")
    intro = (f"<p>Every GPU in the catalog and every priced way of getting it ({options}, {runnable} that can run "
             f"this workload with a published price) was sized for this plan and ranked by "
             + ("cost per month at the demanded load and latency targets." if serving else
                "median run cost, with the spread from the calibrated uncertainty of efficiency, interruptions and "
                "prices.") + f" The best {len(best)}:</p>")
    why = "".join(f"<li>{esc(g['reason'][:1].upper() + g['reason'][1:])} "
                  f"({format_value(g['count'], 'count', 'options')})</li>" for g in excluded_summary(rows))
    risk = ("<p>Capacity risk: high for an on-demand or spot fleet above 512 GPUs, the largest block of "
            "capacity AWS guarantees without a reservation (a Capacity Block of 64 instances); a reservation or a "
            "purchase is contracted.</p>")
    legend = layout_legend(r.get("layout") for r in best) if serving else ""
    outro = (f"<p>{esc(legend)}</p>" if legend else "") + risk + (
        f"<p>Not ranked, and why:</p><ul>{why}</ul>" if why else "")
    chart = pareto_chart(rows, None if serving else plan.cluster.get("deadline_days"))
    return Html(intro + table(body, header, cls="options") + outro), chart
