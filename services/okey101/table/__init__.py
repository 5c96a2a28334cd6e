"""The table service: live tables, turns, timers and per-seat streams."""
