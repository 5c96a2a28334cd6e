"""What the terminal client keeps of a table across a restart: the log, and the rack as the
player arranged it (tiles and gaps), so that coming back to a match (``q``, then ``okey101
play``) shows the same log and the same ıstaka.

One file per table under ``var_dir/client/`` beside the guest identity, readable by the owner
only (it holds the player's own tiles). Nothing here is authoritative: a file that cannot be
read is ignored, and the rack's arrangement is used only for the hand it was made in.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

#: Log lines kept per table (the screen's log holds as many).
LOG_LINES = 200


@dataclass
class Kept:
    """A table's log and the player's arrangement of the hand ``hand_id``'s rack."""

    log: list[str] = field(default_factory=list)
    hand_id: str = ""
    arrangement: list[int] = field(default_factory=list)


class TableMemory:
    """The kept state of each table, one JSON file each."""

    def __init__(self, var_dir: Path) -> None:
        self.directory = var_dir / "client"

    def path(self, table_id: str) -> Path:
        safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in table_id)
        return self.directory / f"table-{safe}.json"

    def load(self, table_id: str) -> Kept:
        try:
            data = json.loads(self.path(table_id).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return Kept()
        if not isinstance(data, dict):
            return Kept()
        log = data.get("log")
        arrangement = data.get("arrangement")
        return Kept(
            log=[str(line) for line in log][-LOG_LINES:] if isinstance(log, list) else [],
            hand_id=str(data.get("hand_id", "")),
            arrangement=(
                [tile for tile in arrangement if isinstance(tile, int)]
                if isinstance(arrangement, list)
                else []
            ),
        )

    def save(self, table_id: str, kept: Kept) -> None:
        """Written to a temporary file then renamed, readable by the owner only."""
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.path(table_id)
        temporary = path.with_suffix(".tmp")
        text = json.dumps(
            {"log": kept.log[-LOG_LINES:], "hand_id": kept.hand_id, "arrangement": kept.arrangement}
        )
        with contextlib.suppress(OSError):
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(text)
            os.replace(temporary, path)
