"""Server-drawn SVG for the browser pages: game boards (``boards``) and charts (``charts``).

Pure functions from data to markup, with no inline style or script (the pages' Content-Security-
Policy forbids them) and no external reference (classrooms are often offline).
"""
