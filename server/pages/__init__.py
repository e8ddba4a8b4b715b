"""The browser pages: HTML rendered on the server (Jinja2), boards and charts drawn as SVG by the
server, and a little plain JavaScript for live matches and replays. Every asset is served by the
app itself (classrooms and exam rooms are often offline: no CDN, no external font)."""
