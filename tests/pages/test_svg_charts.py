"""ply_arena.server.pages.svg.charts: sparklines, rating histories and evaluation charts as
well-formed, self-contained SVG, with escaped labels, broken lines where scores are missing, and
clipping."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from ply_arena.server.pages.svg.charts import eval_chart, rating_chart, sparkline

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = "<script>alert('x')</script>&"


def parse(svg: str) -> ET.Element:
    """The root, after checking that nothing a Content-Security-Policy forbids is in the chart."""
    lowered = svg.lower()
    for forbidden in ("style=", "<style", "<script", "href", "url(", "<image"):
        assert forbidden not in lowered
    assert "http" not in lowered.replace('xmlns="http://www.w3.org/2000/svg"', "")
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg" and root.get("role") == "img" and root.get("aria-label")
    assert root.get("width") is None and root.get("height") is None
    return root


def polylines(root: ET.Element, css_class: str) -> list[list[tuple[float, float]]]:
    return [
        [(float(x), float(y)) for x, y in (p.split(",") for p in e.get("points", "").split())]
        for e in root.iter(f"{SVG}polyline")
        if css_class in e.get("class", "").split()
    ]


def circles(root: ET.Element, css_class: str = "point") -> list[ET.Element]:
    return [e for e in root.iter(f"{SVG}circle") if css_class in e.get("class", "").split()]


def test_sparkline_draws_one_vertex_per_value() -> None:
    values = [25.0, 26.5, 24.1, 0.1 + 0.2, 30.0]
    svg = sparkline(values, width=120, height=30)
    root = parse(svg)
    (line,) = polylines(root, "line")
    assert len(line) == len(values)
    assert all(0 <= x <= 120 and 0 <= y <= 30 for x, y in line)
    assert line[4][1] < line[0][1] < line[3][1]  # higher values are drawn higher
    assert root.get("aria-label") == "5 rated matches: from 25 to 30"
    assert "0000000" not in svg


def test_sparkline_one_value_is_a_dot_and_none_is_a_labelled_empty_chart() -> None:
    root = parse(sparkline([25.0]))
    assert not polylines(root, "line") and len(circles(root, "end")) == 1
    root = parse(sparkline([]))
    assert root.get("aria-label") == "no rated matches" and not list(root)
    with pytest.raises(ValueError):
        sparkline([1.0, math.nan])


def test_rating_chart_points_tooltips_and_band() -> None:
    history = [("2026-11-01T10:00:00Z", 25.0, 8.333), (HOSTILE, 27.2, 7.1), ("c", 26.0, 6.0)]
    svg = rating_chart(history)
    assert "&lt;script&gt;" in svg and "<script" not in svg
    root = parse(svg)
    (mu,) = polylines(root, "mu")
    assert len(mu) == 3
    (conservative,) = polylines(root, "conservative")
    assert len(conservative) == 3
    assert all(c[1] > m[1] for c, m in zip(conservative, mu, strict=True))  # mu - 3 sigma: lower
    points = circles(root)
    assert len(points) == 3
    titles = [p.find(f"{SVG}title") for p in points]
    assert [t.text for t in titles if t is not None] == [
        "match 1, 2026-11-01T10:00:00Z: mu 25, sigma 8.33, rating 0",
        f"match 2, {HOSTILE}: mu 27.2, sigma 7.1, rating 5.9",
        "match 3, c: mu 26, sigma 6, rating 8",
    ]
    bands = [e for e in root.iter(f"{SVG}polygon") if e.get("class") == "band"]
    assert len(bands) == 1 and len(bands[0].get("points", "").split()) == 6
    labels = {e.text for e in root.iter(f"{SVG}text")}
    assert {"34.3", "0", "1", "3"} <= labels  # max mu + sigma, min mu - 3 sigma, match numbers
    assert all(0 <= float(p.get("cy", "")) <= 200 for p in points)


def test_rating_chart_one_match_and_none() -> None:
    root = parse(rating_chart([("only", 25.0, 8.0)]))
    assert len(circles(root)) == 1
    root = parse(rating_chart([]))
    assert root.get("aria-label") == "no rated matches"
    assert [e.text for e in root.iter(f"{SVG}text")] == ["no rated matches"]
    with pytest.raises(ValueError):
        rating_chart([("x", 25.0, -1.0)])


def test_eval_chart_breaks_lines_at_missing_scores() -> None:
    scores: list[tuple[int, float | None]] = [(0, 0.1), (2, 0.25), (4, None), (6, -0.3), (8, 0.4)]
    scores += [(10, None), (12, 0.5), (14, math.nan), (16, 0.2), (18, 0.1)]
    root = parse(eval_chart([("alpha", "#CC3311", scores)]))
    lines = polylines(root, "series-0")
    assert [len(line) for line in lines] == [2, 2, 2]  # 12 stands alone: a circle, no line
    assert len(circles(root)) == 7
    assert all(e.get("stroke") == "#CC3311" for e in root.iter(f"{SVG}polyline"))


def test_eval_chart_is_symmetric_and_clips() -> None:
    data: list[tuple[int, float | None]] = [(1, 0.5), (2, -2.0), (3, 1e6), (4, -math.inf)]
    root = parse(eval_chart([("bot", "#0077BB", data)], height=160))
    texts = {e.text for e in root.iter(f"{SVG}text")}
    assert {"+1e6", "-1e6", "0"} <= texts
    root = parse(eval_chart([("bot", "#0077BB", data)], height=160, clip=10))
    texts = {e.text for e in root.iter(f"{SVG}text")}
    assert {"+10", "-10", "0"} <= texts
    points = circles(root)
    ys = [float(p.get("cy", "")) for p in points]
    clipped = [p for p in points if "clipped" in p.get("class", "").split()]
    assert len(clipped) == 2  # 1e6 and -inf, drawn at the edges
    top, bottom = min(ys), max(ys)
    assert [float(p.get("cy", "")) for p in clipped] == [top, bottom]
    zero = next(e for e in root.iter(f"{SVG}path") if e.get("class") == "zero")
    zero_y = float(zero.get("d", "").split()[1].split("H")[0])
    assert zero_y == pytest.approx((top + bottom) / 2)  # symmetric around 0
    titles = [p.findtext(f"{SVG}title") for p in clipped]
    assert titles == ["bot, ply 3: 1e6", "bot, ply 4: -inf"]  # the real score in the tooltip
    with pytest.raises(ValueError):
        eval_chart([("bot", "#0077BB", data)], clip=0)


def test_eval_chart_escapes_names_and_refuses_unsafe_colours() -> None:
    svg = eval_chart([(HOSTILE, "#CC3311", [(1, 0.5), (2, 0.25)]), ("b", "teal", [(1, 0.0)])])
    assert "&lt;script&gt;" in svg and "<script" not in svg
    root = parse(svg)
    legend = [e.text for e in root.iter(f"{SVG}text") if e.get("class") == "legend-label"]
    assert legend == [HOSTILE, "b"]
    for colour in ("url(http://example.com/x)", '#fff" onload="x', "red;", ""):
        with pytest.raises(ValueError):
            eval_chart([("a", colour, [(1, 0.5)])])


@pytest.mark.parametrize(
    "series",
    [[], [("a", "#CC3311", [])], [("a", "#CC3311", [(1, None), (2, None)]), ("b", "red", [])]],
)
def test_eval_chart_without_scores(series: list[Any]) -> None:
    root = parse(eval_chart(series))
    assert root.get("aria-label") == "no scores reported"
    assert [e.text for e in root.iter(f"{SVG}text")] == ["no scores reported"]


def test_chart_text_stays_readable_on_a_phone() -> None:
    """A chart of the default width shrunk to a 340 px screen keeps its text near 8 px."""
    charts = [
        rating_chart([("a", 25.0, 8.0), ("b", 26.0, 7.0)]),
        eval_chart([("a", "#CC3311", [(1, 0.5), (2, -0.5)])]),
        eval_chart([]),
    ]
    for svg in charts:
        root = parse(svg)
        width = float(root.get("viewBox", "").split()[2])
        sizes = [float(t.get("font-size", "0")) for t in root.iter(f"{SVG}text")]
        assert sizes and min(sizes) * 340 / width >= 7.5
