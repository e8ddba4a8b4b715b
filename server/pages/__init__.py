"""Server-rendered pieces of the browser pages (SVG boards and charts in ``server.pages.svg``)."""
