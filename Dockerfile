# Ply Arena server: `docker compose up` (see docker-compose.yml), or
#   docker build -t ply-arena . && docker run -p 8000:8000 -v arena-data:/data ply-arena
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY games ./games
COPY protocol ./protocol
COPY reference_agents ./reference_agents
COPY server ./server
COPY ply_arena_top ./ply_arena_top
# With the PostgreSQL driver: docker-compose.yml runs the arena on PostgreSQL.
RUN pip install '.[postgres]' && rm -rf /src

# Run unprivileged; the database lives on the /data volume.
RUN useradd --create-home --uid 1000 arena && mkdir /data && chown arena /data
USER arena
WORKDIR /data
VOLUME ["/data"]

ENV ARENA_DB_URL=sqlite+aiosqlite:////data/arena.db
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/api/health', timeout=4)"]

# The same command CI and the README use; the admin token comes from ARENA_ADMIN_TOKEN or is
# printed once in the log on first start (`docker compose logs arena`).
CMD ["arena", "serve", "--host", "0.0.0.0", "--port", "8000"]
