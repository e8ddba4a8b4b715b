"""SVG markup from Python values: elements with escaped attributes, escaped text, short numbers.

The pages that show these drawings send a Content-Security-Policy that forbids inline styles and
scripts, so nothing here writes a ``style`` attribute: colours are presentation attributes
(``fill``, ``stroke``) next to a class that the page's stylesheet may refine. Classrooms are
often offline, so a drawing never refers to anything outside itself (fonts, images, links).
"""

from __future__ import annotations

import html
import math
import re

SVG_NAMESPACE = "http://www.w3.org/2000/svg"

#: An attribute value: text is escaped, numbers are written by ``num``, None leaves it out.
Value = str | int | float | None

# A colour from a caller (a chart series) must not smuggle in a reference such as
# url(http://...), which would fetch from outside: only #rgb / #rrggbb(aa) or a colour name.
_COLOUR = re.compile(r"#(?:[0-9a-fA-F]{3,4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})|[a-zA-Z]{3,20}")


def num(x: float, decimals: int = 2) -> str:
    """A coordinate with at most ``decimals`` decimals and no trailing zeros.

    Rounding hides float noise (0.1 + 0.2 -> "0.3") and keeps the markup short.
    """
    out = f"{x:.{decimals}f}"
    if "." in out:
        out = out.rstrip("0").rstrip(".")
    return "0" if out == "-0" else out


def value_text(x: float) -> str:
    """A value shown to a reader: two decimals at most, powers of ten for huge ones (1e6)."""
    if math.isfinite(x) and abs(x) >= 1e6:
        mantissa, exponent = f"{x:.2e}".split("e")
        return f"{num(float(mantissa))}e{int(exponent)}"
    return num(x)


def text(s: str) -> str:
    """Text for a reader (element content), escaped."""
    return html.escape(s, quote=True)


def element(name: str, *children: str, **attributes: Value) -> str:
    """``<name a="v"...>children</name>``, or ``<name a="v".../>`` without children.

    Attribute names are Python keywords: a trailing underscore is dropped and other underscores
    become hyphens (``class_`` -> ``class``, ``stroke_width`` -> ``stroke-width``). Values are
    escaped. Children are markup already (from ``element`` or ``text``) and are not escaped
    again, so user text must come in through ``text``.
    """
    parts = [name]
    for key, value in attributes.items():
        if value is None:
            continue
        shown = value if isinstance(value, str) else num(value)
        parts.append(f'{key.rstrip("_").replace("_", "-")}="{html.escape(shown, quote=True)}"')
    head = " ".join(parts)
    if not children:
        return f"<{head}/>"
    return f"<{head}>{''.join(children)}</{name}>"


def label(x: float, y: float, content: str, *, size: float, **attributes: Value) -> str:
    """A centred ``<text>`` (escaped) whose middle sits on (x, y)."""
    attributes.setdefault("text_anchor", "middle")
    return element(
        "text",
        text(content),
        x=x,
        y=y,
        font_size=size,
        dominant_baseline="central",
        **attributes,
    )


def points_attribute(xy: list[tuple[float, float]]) -> str:
    """The ``points`` attribute of a polyline or polygon."""
    return " ".join(f"{num(x)},{num(y)}" for x, y in xy)


def safe_colour(colour: str) -> str:
    """``colour`` if it is a hex colour or a colour name; ValueError otherwise."""
    if not isinstance(colour, str) or not _COLOUR.fullmatch(colour):
        raise ValueError(f"colour {colour!r}: expected #rrggbb, #rgb or a colour name")
    return colour
