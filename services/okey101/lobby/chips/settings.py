"""What the operator sets about chips (``platform.config``, docs/configuration.md), as the lobby
uses it: the starting grant, the daily grant and its period, the stake levels and the table fee.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from okey101.lobby.records import US
from okey101.platform.config import Settings

HOUR_US: Final = 3600 * US


@dataclass(frozen=True)
class ChipSettings:
    """The chips' settings (``Settings.chips_*``, ``chip_*``; the defaults are theirs)."""

    starting_grant: int = 1000
    daily_amount: int = 100
    daily_hours: float = 24.0
    stakes: tuple[int, ...] = (10, 50, 100, 500, 1000)
    fee_percent: int = 5

    @classmethod
    def from_settings(cls, settings: Settings) -> ChipSettings:
        return cls(
            starting_grant=settings.chips_starting_grant,
            daily_amount=settings.chips_daily_amount,
            daily_hours=settings.chips_daily_hours,
            stakes=settings.chip_stakes,
            fee_percent=settings.chip_fee_percent,
        )

    @property
    def daily_period_us(self) -> int:
        """The time between two daily grants of a player."""
        return int(self.daily_hours * HOUR_US)


__all__ = ["HOUR_US", "ChipSettings"]
