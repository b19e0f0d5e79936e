"""Our power samples written as InferenceX's `gpu_metrics.csv`: nvidia-smi's CSV header and cell formats.

nvidia-smi (`--query-gpu=timestamp,index,uuid,power.draw,temperature.gpu,utilization.gpu,clocks.sm,clocks.mem
--format=csv`) writes wall-clock timestamps without a zone (`2026/12/01 01:23:45.678`). The harness writes them
in UTC and says so in `gpu_metrics_context.json` (InferenceX reads a CSV without that file as host-local time);
the host's own UTC offset goes beside as `agentic_power_timezone_offset.txt` (`+HH:MM`), which InferenceX applies
to AIPerf's naive local window times. Runs recorded before the context file wrote local times with their offset:
`utc_csv` moves those to UTC. Unknown cells are `[N/A]`, as nvidia-smi writes them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

from harness.artifacts import write_text
from harness.errors import UserError
from harness.power.samples import PowerSample

HEADER = ("timestamp, index, uuid, power.draw [W], temperature.gpu, utilization.gpu [%], "
          "clocks.current.sm [MHz], clocks.current.memory [MHz]")
CSV_NAME = "gpu_metrics.csv"
OFFSET_NAME = "agentic_power_timezone_offset.txt"


def _local(ns: int, tz: timezone) -> str:
    return datetime.fromtimestamp(ns / 1e9, tz).strftime("%Y/%m/%d %H:%M:%S.%f")[:-3]


def _cell(value: int | None, unit: str = "") -> str:
    return "[N/A]" if value is None else f"{value}{unit}"


def gpu_metrics_csv(samples: Iterable[PowerSample], tz: timezone) -> str:
    lines = [HEADER]
    for s in sorted(samples, key=lambda s: (s.timestamp_ns, s.gpu_index)):
        lines.append(", ".join((_local(s.timestamp_ns, tz), str(s.gpu_index), s.gpu_uuid or "[N/A]",
                                f"{s.power_w:.2f} W", _cell(s.temp_c), _cell(s.util_pct, " %"),
                                _cell(s.sm_clock_mhz, " MHz"), _cell(s.mem_clock_mhz, " MHz"))))
    return "\n".join(lines) + "\n"


def utc_offset_text(tz: timezone) -> str:
    seconds = int(tz.utcoffset(None).total_seconds())
    sign = "+" if seconds >= 0 else "-"
    return f"{sign}{abs(seconds) // 3600:02d}:{abs(seconds) % 3600 // 60:02d}"


_OFFSET = re.compile(r"^([+-])(\d{2}):?(\d{2})$")
_STAMP = "%Y/%m/%d %H:%M:%S.%f"


def parse_offset(text: str) -> timezone | None:
    """`+05:30` / `-0800` (what the offset file holds) as a fixed zone; None when it is not one."""
    m = _OFFSET.match(text.strip())
    if not m:
        return None
    minutes = int(m.group(2)) * 60 + int(m.group(3))
    return timezone(timedelta(minutes=-minutes if m.group(1) == "-" else minutes))


def utc_csv(text: str, offset_text: str | None, source: Path) -> str:
    """`gpu_metrics.csv` text written at the UTC offset `offset_text` (the offset file), its timestamps moved
    to UTC; every other cell as it was. A file without its offset is taken as written in UTC already."""

    tz = UTC if offset_text is None else parse_offset(offset_text)
    if tz is None:
        raise UserError(f"{source.parent / OFFSET_NAME}: {str(offset_text).strip()[:40]!r}: expected a UTC "
                        "offset like +00:00")
    lines = text.splitlines()
    out = lines[:1]
    for number, line in enumerate(lines[1:], start=2):
        stamp, sep, rest = line.partition(",")
        try:
            when = datetime.strptime(stamp.strip(), _STAMP).replace(tzinfo=tz)
        except ValueError:
            raise UserError(f"{source}:{number}: {stamp.strip()[:40]!r}: expected a timestamp like "
                            "2026/12/01 01:23:45.678") from None
        out.append(when.astimezone(UTC).strftime(_STAMP)[:-3] + sep + rest)
    return "\n".join(out) + ("\n" if out else "")


def write_gpu_metrics(samples: Sequence[PowerSample], out_dir: Path) -> Path | None:
    """Write `gpu_metrics.csv` with UTC timestamps (its context file says so: `harness.power.inferencex_evidence`)
    and the offset file holding this host's UTC offset, which AIPerf's naive local window times need; None when
    there is no sample."""
    if not samples:
        return None
    local = datetime.now().astimezone().tzinfo
    write_text(out_dir / OFFSET_NAME, utc_offset_text(local if isinstance(local, timezone) else UTC) + "\n")
    return write_text(out_dir / CSV_NAME, gpu_metrics_csv(samples, UTC))
