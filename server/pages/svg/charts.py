"""Small charts drawn on the server: a rating sparkline, a bot's rating history and a match's
evaluation scores.

Like the boards they use presentation attributes and classes, never inline styles or scripts,
and every text from outside (labels, series names) is escaped. Each chart is one
``<svg class="chart chart-{kind}" role="img" aria-label=...>`` without a fixed width or height.

Classes: ``line`` (sparkline), ``end`` (its last point); ``axis``, ``axis-label``, ``band``
(mu +- sigma), ``mu``, ``conservative`` (mu - 3 sigma, the leaderboard's rating), ``point``
(one circle per match or score, with a ``<title>`` tooltip); ``zero``, ``series series-N``,
``point series-N`` (plus ``clipped`` when drawn at the edge), ``legend series-N`` (a swatch),
``legend-label``; ``empty`` (the text of a chart with nothing to draw).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

from ply_arena.server.pages.svg.markup import (
    SVG_NAMESPACE,
    element,
    label,
    num,
    points_attribute,
    safe_colour,
    text,
    value_text,
)

LINE = "#0072B2"
AXIS = "#888888"
INK = "#333333"
MUTED = "#666666"  # axis text: 5.7:1 against white, enough for small text
# A 600-unit chart shrinks to about half on a phone: 14 units keep its labels near 8 px there.
FONT = 14


class _Scale(NamedTuple):
    """Maps the values lo..hi onto start..end (end < start for y, which grows downwards)."""

    lo: float
    hi: float
    start: float
    end: float

    def __call__(self, value: float) -> float:
        if self.hi == self.lo:
            return (self.start + self.end) / 2
        return self.start + (value - self.lo) / (self.hi - self.lo) * (self.end - self.start)


def _svg(kind: str, width: int, height: int, summary: str, *children: str) -> str:
    if width <= 0 or height <= 0:
        raise ValueError(f"chart size {width}x{height}: both must be positive")
    return element(
        "svg",
        *children,
        xmlns=SVG_NAMESPACE,
        viewBox=f"0 0 {width} {height}",
        class_=f"chart chart-{kind}",
        role="img",
        aria_label=summary,
        font_family="sans-serif",
    )


def _empty(kind: str, width: int, height: int, message: str) -> str:
    """A chart with nothing to draw: the message, centred, for sighted readers too."""
    note = label(width / 2, height / 2, message, size=FONT, class_="empty", fill=MUTED)
    return _svg(kind, width, height, message, note)


def _finite(value: float, what: str) -> float:
    if not math.isfinite(value):
        raise ValueError(f"{what} {value!r} is not a finite number")
    return value


def _point(x: float, y: float, r: float, tooltip: str, classes: str, colour: str) -> str:
    return element(
        "circle", element("title", text(tooltip)), class_=classes, cx=x, cy=y, r=r, fill=colour
    )


def sparkline(values: Sequence[float], *, width: int = 100, height: int = 24) -> str:
    """A line through ``values`` in order (e.g. a bot's rating after each match), scaled to fill
    the box; one value is a dot. ValueError for a value that is not finite."""
    values = [_finite(v, "sparkline value") for v in values]
    if not values:
        return _svg("sparkline", width, height, "no rated matches")
    pad = 2.5  # keeps the stroke and the end dot inside the box
    x = _Scale(0, len(values) - 1, pad, width - pad)
    y = _Scale(min(values), max(values), height - pad, pad)
    xy = [(x(i), y(v)) for i, v in enumerate(values)]
    end = element("circle", class_="end", cx=xy[-1][0], cy=xy[-1][1], r=2, fill=LINE)
    if len(values) == 1:
        return _svg("sparkline", width, height, f"1 rated match: {value_text(values[0])}", end)
    line = element(
        "polyline",
        class_="line",
        points=points_attribute(xy),
        fill="none",
        stroke=LINE,
        stroke_width=1.5,
        stroke_linejoin="round",
    )
    summary = (
        f"{len(values)} rated matches: from {value_text(values[0])} to {value_text(values[-1])}"
    )
    return _svg("sparkline", width, height, summary, line, end)


def rating_chart(
    points: Sequence[tuple[str, float, float]], *, width: int = 600, height: int = 200
) -> str:
    """A rating history: ``(label, mu, sigma)`` per rated match, in order (the label is usually
    the match's ISO time). Draws mu as a line over a band mu +- sigma, the conservative rating
    mu - 3 sigma (what the leaderboard ranks by) dashed, and one circle per match whose tooltip
    gives the label and the values. The x axis counts matches from 1."""
    rows = [(str(name), _finite(mu, "mu"), _finite(sigma, "sigma")) for name, mu, sigma in points]
    if any(sigma < 0 for _, _, sigma in rows):
        raise ValueError("sigma cannot be negative")
    if not rows:
        return _empty("rating", width, height, "no rated matches")
    left, right, top, bottom = 58, 10, 12, 24
    lows = [mu - 3 * sigma for _, mu, sigma in rows]
    highs = [mu + sigma for _, mu, sigma in rows]
    lo, hi = min(lows), max(highs)
    x = _Scale(0, len(rows) - 1, left, width - right)
    y = _Scale(lo, hi, height - bottom, top)
    parts = _axes(width, height, left, right, top, bottom)
    parts += [
        _axis_label(left - 5, top, value_text(hi), "end"),
        _axis_label(left - 5, height - bottom, value_text(lo), "end"),
        _axis_label(left, height - bottom / 2, "1", "start"),
    ]
    if len(rows) > 1:
        parts.append(_axis_label(width - right, height - bottom / 2, str(len(rows)), "end"))
    upper = [(x(i), y(mu + sigma)) for i, (_, mu, sigma) in enumerate(rows)]
    lower = [(x(i), y(mu - sigma)) for i, (_, mu, sigma) in enumerate(rows)]
    parts.append(
        element(
            "polygon",
            class_="band",
            points=points_attribute(upper + lower[::-1]),
            fill=LINE,
            fill_opacity=0.18,
            stroke=LINE,
            stroke_opacity=0.18,
            stroke_width=2,  # so that a single match's band still shows, as a bar
        )
    )
    parts.append(
        element(
            "polyline",
            class_="conservative",
            points=points_attribute([(x(i), y(v)) for i, v in enumerate(lows)]),
            stroke=INK,
            stroke_width=1,
            stroke_dasharray="4 3",
            fill="none",
        )
    )
    parts.append(
        element(
            "polyline",
            class_="mu",
            points=points_attribute([(x(i), y(mu)) for i, (_, mu, _) in enumerate(rows)]),
            stroke=LINE,
            stroke_width=2,
            stroke_linejoin="round",
            fill="none",
        )
    )
    for i, (name, mu, sigma) in enumerate(rows):
        tooltip = (
            f"match {i + 1}, {name}: mu {value_text(mu)}, sigma {value_text(sigma)}, "
            f"rating {value_text(mu - 3 * sigma)}"
        )
        parts.append(_point(x(i), y(mu), 3, tooltip, "point", LINE))
    first, last = value_text(rows[0][1]), value_text(rows[-1][1])
    summary = f"rating history of {len(rows)} matches: mu from {first} to {last}"
    return _svg("rating", width, height, summary, *parts)


def _axis_label(x: float, y: float, content: str, anchor: str) -> str:
    return label(x, y, content, size=FONT, class_="axis-label", fill=MUTED, text_anchor=anchor)


def _axes(width: int, height: int, left: int, right: int, top: int, bottom: int) -> list[str]:
    """The left and bottom axis lines of the plot area."""
    d = f"M{left} {top}V{height - bottom}H{width - right}"
    return [element("path", class_="axis", d=d, fill="none", stroke=AXIS, stroke_width=1)]


Series = tuple[str, str, Sequence[tuple[int, float | None]]]


def eval_chart(
    series: Sequence[Series],
    *,
    width: int = 600,
    height: int = 160,
    clip: float | None = None,
) -> str:
    """Evaluation scores over a match: ``(name, colour, [(ply, score or None), ...])`` per series
    (a seat's bot, say). Each series is a line that breaks where the score is None (or NaN); the
    y range is symmetric around a zero line, at most +-``clip`` when given (won positions may
    score 1e6): scores beyond it are drawn at the edge with class ``clipped``. Every score is a
    circle with a tooltip; a legend names the series."""
    if clip is not None and not (math.isfinite(clip) and clip > 0):
        raise ValueError(f"clip {clip!r} must be a positive number")
    # NaN is a missing score; +-inf (a proven win or loss) is drawn at the edge.
    cleaned = [
        (
            str(name),
            safe_colour(colour),
            [(ply, None if score is None or math.isnan(score) else score) for ply, score in data],
        )
        for name, colour, data in series
    ]
    scores = [s for _, _, data in cleaned for _, s in data if s is not None]
    if not scores:
        return _empty("eval", width, height, "no scores reported")
    reach = max((abs(s) for s in scores if math.isfinite(s)), default=0.0)
    if clip is not None:
        reach = min(reach, clip)
    reach = reach or 1.0  # all zeros (or only infinities): any range shows them
    plies = [ply for _, _, data in cleaned for ply, _ in data]
    left, right, top, bottom = 52, 10, 30, 22
    x = _Scale(min(plies), max(plies), left, width - right)
    y = _Scale(-reach, reach, height - bottom, top)
    parts = _axes(width, height, left, right, top, bottom)
    parts += [
        element(
            "path",
            class_="zero",
            d=f"M{left} {num(y(0))}H{width - right}",
            stroke=AXIS,
            stroke_width=1,
            stroke_dasharray="3 3",
        ),
        _axis_label(left - 5, top, f"+{value_text(reach)}", "end"),
        _axis_label(left - 5, y(0), "0", "end"),
        _axis_label(left - 5, height - bottom, f"-{value_text(reach)}", "end"),
        _axis_label(left, height - bottom / 2 + 1, f"ply {min(plies)}", "start"),
        _axis_label(width - right, height - bottom / 2 + 1, f"ply {max(plies)}", "end"),
    ]
    legend_x = float(left + 4)
    for index, (name, colour, data) in enumerate(cleaned):
        parts += _legend_item(legend_x, top / 2, name, colour, index)
        legend_x += 36 + 0.6 * FONT * len(name)  # about the width of the name
        parts += _series_lines(data, x, y, reach, colour, index)
        for ply, score in data:
            if score is None:
                continue
            shown = _within(score, reach)
            classes = f"point series-{index}" + (" clipped" if shown != score else "")
            tooltip = f"{name}, ply {ply}: {value_text(score)}"
            parts.append(_point(x(ply), y(shown), 2.5, tooltip, classes, colour))
    names = ", ".join(name for name, _, _ in cleaned)
    summary = f"evaluation scores by ply of {names}" if names else "evaluation scores by ply"
    return _svg("eval", width, height, summary, *parts)


def _series_lines(
    data: list[tuple[int, float | None]],
    x: _Scale,
    y: _Scale,
    reach: float,
    colour: str,
    index: int,
) -> list[str]:
    """One polyline per run of consecutive scores: a missing score breaks the line."""
    runs: list[list[tuple[float, float]]] = [[]]
    for ply, score in data:
        if score is None:
            runs.append([])
        else:
            runs[-1].append((x(ply), y(_within(score, reach))))
    return [
        element(
            "polyline",
            class_=f"series series-{index}",
            points=points_attribute(run),
            fill="none",
            stroke=colour,
            stroke_width=1.5,
            stroke_linejoin="round",
        )
        for run in runs
        if len(run) > 1  # a lone score is its circle alone
    ]


def _within(score: float, reach: float) -> float:
    """The score, or the edge of the chart it lies beyond."""
    return max(-reach, min(reach, score))


def _legend_item(x: float, y: float, name: str, colour: str, index: int) -> list[str]:
    swatch = element(
        "path",
        class_=f"legend series-{index}",
        d=f"M{num(x)} {num(y)}h18",
        stroke=colour,
        stroke_width=3,
    )
    name_label = label(
        x + 24, y, name, size=FONT, class_="legend-label", fill=INK, text_anchor="start"
    )
    return [swatch, name_label]
