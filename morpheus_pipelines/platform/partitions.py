"""Partitions: CST (Asia/Shanghai) natural days, and weeks starting Monday.

A daily partition key ``D`` is the CST day whose signups it processes; the scheduled run made
on day D+1 at 07:30 CST processes partition D. See docs/partitions.md.
"""

from datetime import datetime

import dagster as dg

TIMEZONE = "Asia/Shanghai"
FIRST_DAY = "2026-01-01"

daily_partitions = dg.DailyPartitionsDefinition(start_date=FIRST_DAY, timezone=TIMEZONE)

# day_offset=1: weeks start on Monday.
weekly_partitions = dg.WeeklyPartitionsDefinition(
    start_date="2025-12-29", timezone=TIMEZONE, day_offset=1
)


def day_bounds(partition_key: str) -> tuple[datetime, datetime]:
    """``[00:00, 24:00)`` of the CST day named by a daily partition key, timezone-aware."""
    window = daily_partitions.time_window_for_partition_key(partition_key)
    return window.start, window.end
