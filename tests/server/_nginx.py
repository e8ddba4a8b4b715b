"""Debian's nginx in front of several ``arena serve`` processes, with the configuration
docs/server.md gives (its ``nginx`` block, with the test's ports), run as a foreground process
with everything in a temporary folder:

    with Nginx(tmp_path, [srv_a.port, srv_b.port]) as front:
        BotClient(front.ws_url, ...)

``require_nginx()`` skips the test when nginx is missing, or fails it where
``ARENA_REQUIRE_NGINX=1`` (``.ci/run`` sets it after installing nginx).
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

import pytest
from _server_process import free_port

DOCS = Path(__file__).resolve().parents[2] / "docs" / "server.md"
#: The documented block begins with this comment line.
DOCUMENTED = "# nginx in front of several arena serve processes"


def nginx_binary() -> str | None:
    found = shutil.which("nginx")
    if found is None and os.access("/usr/sbin/nginx", os.X_OK):
        found = "/usr/sbin/nginx"
    return found


def require_nginx() -> str:
    found = nginx_binary()
    if found is not None:
        return found
    why = "no nginx on PATH or in /usr/sbin (Debian: apt-get install nginx)"
    if os.environ.get("ARENA_REQUIRE_NGINX") == "1":
        pytest.fail(f"the nginx test must run here (ARENA_REQUIRE_NGINX=1): {why}")
    pytest.skip(f"nginx test skipped: {why}")


def documented_config() -> str:
    """The ``nginx`` block of docs/server.md that starts with ``DOCUMENTED``."""
    for block in re.findall(r"```nginx\n(.*?)```", DOCS.read_text(), flags=re.S):
        if block.startswith(DOCUMENTED):
            return str(block)
    raise AssertionError(f"docs/server.md has no nginx block starting {DOCUMENTED!r}")


def nginx_config(folder: Path, port: int, upstreams: Sequence[int]) -> str:
    """The documented block on the test's ports, in a whole nginx.conf whose files are all in
    ``folder`` (no /var/log, /run or /var/lib/nginx needed)."""
    block = documented_config()
    documented_servers = re.findall(r"server 127\.0\.0\.1:\d+", block)
    assert len(documented_servers) == len(upstreams), documented_servers
    for documented, upstream in zip(documented_servers, upstreams, strict=True):
        block = block.replace(documented, f"server 127.0.0.1:{upstream}", 1)
    block, listens = re.subn(r"listen 80;", f"listen 127.0.0.1:{port};", block)
    assert listens == 1, block
    # As root, nginx's workers would run as nobody, who cannot use a folder of the test's.
    user = "user root;\n" if os.geteuid() == 0 else ""
    return f"""{user}daemon off;
worker_processes 1;
pid {folder}/nginx.pid;
error_log {folder}/error.log info;
events {{ worker_connections 1024; }}
http {{
    access_log {folder}/access.log;
    client_body_temp_path {folder}/client_body;
    proxy_temp_path {folder}/proxy;
    fastcgi_temp_path {folder}/fastcgi;
    uwsgi_temp_path {folder}/uwsgi;
    scgi_temp_path {folder}/scgi;
{block}
}}
"""


class Nginx:
    def __init__(self, folder: Path, upstreams: Sequence[int]) -> None:
        self.binary = require_nginx()
        self.folder = folder
        self.folder.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.conf = folder / "nginx.conf"
        self.conf.write_text(nginx_config(folder, self.port, upstreams))
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    def error_log(self) -> str:
        path = self.folder / "error.log"
        return path.read_text() if path.exists() else ""

    def __enter__(self) -> Nginx:
        self.proc = subprocess.Popen(
            # -e: the log of nginx's own start, before it has read the configuration.
            [self.binary, "-p", str(self.folder), "-c", str(self.conf), "-e",
             str(self.folder / "error.log")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 15
        while True:
            assert self.proc.poll() is None, f"nginx exited:\n{self.error_log()}"
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return self
            except OSError:
                pass
            assert time.monotonic() < deadline, f"nginx did not listen:\n{self.error_log()}"
            time.sleep(0.05)

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()  # fast shutdown: open WebSockets are closed, not waited for
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
