"""A TCP forwarder in front of several server processes, as a load balancer would be: each new
connection goes to the first process that accepts it, in order (nginx's ``proxy_next_upstream
error``), so that bots reconnecting after their process died land on another one.

    async with Forwarder([srv_a.port, srv_b.port]) as front:
        BotClient(front.ws_url, ...)
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from types import TracebackType


class Forwarder:
    def __init__(self, ports: Sequence[int]) -> None:
        self.ports = list(ports)
        self.port = 0
        #: How many connections went to each upstream port.
        self.sent: dict[int, int] = dict.fromkeys(self.ports, 0)
        self._server: asyncio.Server | None = None
        self._pipes: set[asyncio.Task[None]] = set()

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    async def __aenter__(self) -> Forwarder:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._server is not None
        self._server.close()
        for pipe in list(self._pipes):
            pipe.cancel()
        await asyncio.gather(*self._pipes, return_exceptions=True)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for port in self.ports:
            try:
                up_reader, up_writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                continue  # that process is gone: the next one
            self.sent[port] += 1
            break
        else:
            writer.close()
            return
        pipes = [
            asyncio.create_task(_pipe(reader, up_writer)),
            asyncio.create_task(_pipe(up_reader, writer)),
        ]
        self._pipes.update(pipes)
        try:
            await asyncio.wait(pipes, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for pipe in pipes:
                pipe.cancel()
                self._pipes.discard(pipe)
            for w in (writer, up_writer):
                w.close()


async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    with contextlib.suppress(OSError, asyncio.IncompleteReadError):
        while data := await source.read(65536):
            sink.write(data)
            await sink.drain()
