"""Runs ``jaxlab`` with every mock split of a fixed size; writes the process's peak RSS.

    python tests/experiments/dry_run_rss.py NUM_EXAMPLES RSS_JSON run NAME --preset paper \
        --dry-run --workdir DIR

``jaxlab run --dry-run`` reads mock splits of ``2 × rows`` examples
(``jaxlab.report.runner``); here :func:`jaxlab.data.streaming.mock_datasets` is wrapped so
that every mock split has ``NUM_EXAMPLES`` examples, and at exit ``RSS_JSON`` gets
``{"self_kib": ..., "children_kib": ...}``: ``ru_maxrss`` (KiB on Linux) of this process
and of its largest waited-for child (data loader workers).
"""

from __future__ import annotations

import contextlib
import json
import resource
import sys
from collections.abc import Iterator, Sequence


def peak_rss_kib() -> dict[str, int]:
    """Peak resident set sizes so far (KiB): this process's and its largest child's."""
    return {
        "self_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "children_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
    }


def main(argv: Sequence[str]) -> int:
    """``argv``: ``NUM_EXAMPLES RSS_JSON`` and the ``jaxlab`` arguments; the exit code."""
    from jaxlab import cli
    from jaxlab.data import streaming

    size, out, args = int(argv[0]), argv[1], list(argv[2:])
    mock = streaming.mock_datasets

    @contextlib.contextmanager
    def fixed_size(num_examples: int = 16) -> Iterator[None]:
        del num_examples  # the runner's size; every mock split has ``size`` examples here
        with mock(num_examples=size):
            yield

    streaming.mock_datasets = fixed_size
    try:
        return cli.main(args)
    finally:
        with open(out, "w") as f:
            json.dump(peak_rss_kib(), f)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
