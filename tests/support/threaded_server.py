"""A real service in-process for blocking test clients: its own event loop in a thread."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from okey101.platform.auth import AccessPolicy, JwksVerifier
from okey101.platform.config import settings_for_tests
from okey101.platform.logs import configure_logging
from okey101.platform.server import Register, ServerHandle


class ThreadedServer:
    """``name`` served on 127.0.0.1 port 0 (``handle.port``) until ``close``."""

    def __init__(
        self,
        name: str,
        register: Register,
        access: AccessPolicy,
        verifier: JwksVerifier,
        var_dir: Path,
    ) -> None:
        configure_logging("json", "warning")
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        settings = settings_for_tests(name, var_dir=var_dir)
        started = ServerHandle.start(name, register, settings, access=access, verifier=verifier)
        self.handle = asyncio.run_coroutine_threadsafe(started, self.loop).result(timeout=10)

    def close(self) -> None:
        async def stop() -> None:
            await self.handle.stop(grace=0)

        asyncio.run_coroutine_threadsafe(stop(), self.loop).result(timeout=10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        self.loop.close()
