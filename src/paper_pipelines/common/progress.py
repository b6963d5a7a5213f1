"""One progress helper for every loop that can run longer than ~10 s."""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")
_log = logging.getLogger("paper_pipelines.progress")


def progress(
    items: Iterable[T],
    desc: str,
    total: int | None = None,
    logger: logging.Logger | None = None,
    every: float = 0.1,
) -> Iterator[T]:
    """Yield ``items``; a tqdm bar on a terminal, else an INFO line at every ``every`` of the way.

    Logs (scheduled runs, CI) get lines like ``desc: 30/100 (30%) 12.1 s``; nothing is printed when
    the total is unknown and stderr is not a terminal, apart from the final line.
    """
    if total is None:
        total = len(items) if hasattr(items, "__len__") else None  # type: ignore[arg-type]
    if sys.stderr.isatty():
        from tqdm.auto import tqdm

        yield from tqdm(items, desc=desc, total=total, leave=False)
        return
    log = logger or _log
    started = time.perf_counter()
    step = max(1, round(total * every)) if total else None
    done = 0
    for item in items:
        yield item
        done += 1
        if step and (done % step == 0) and done != total:
            pct = 100 * done / total
            log.info(
                "%s: %d/%d (%.0f%%) %.1f s", desc, done, total, pct, time.perf_counter() - started
            )
    log.info("%s: %d done in %.1f s", desc, done, time.perf_counter() - started)
