"""A paper preset's dry run holds the records it uses, not its splits: peak RSS is flat in
the mock split size.

Each experiment's ``paper`` dry run (:func:`tests.experiments.test_dry_run.dry_run`, on one
CPU device) runs twice through ``dry_run_rss.py``, with every mock split of ``SMALL`` and of
``LARGE[name]`` examples; the two peak RSS of the dry-run process (the larger of its own and
its largest child's) differ by less than ``MARGIN_KIB``.

The margin. Holding the large splits costs at least (float32 or int32, 4 B a value):
``nem_explanations``, Fashion-MNIST's train and test splits of 20,000 images of 784 pixels,
2 × 20,000 × 784 × 4 B = 125 MB; ``diffusion_reproducibility``, CIFAR-10's train split of
20,000 images of 3072 values, 20,000 × 3072 × 4 B = 246 MB; ``curbench_text``, GLUE's train
and validation splits of 200,000 byte windows of 128, 2 × 200,000 × 128 × 4 B = 205 MB.
``MARGIN_KIB``, 64 MiB (67 MB), is about half the smallest of these; two dry runs of the
same experiment at the same split size can differ in peak RSS by a few tens of MB
(compilation threads, the allocator), which the margin leaves room for.
"""

import json
import sys
from pathlib import Path

import pytest

from .test_dry_run import check_outputs, dry_run

DRIVER = Path(__file__).with_name("dry_run_rss.py")
SMALL = 64  # examples in every mock split of the small dry run
# Paper presets whose programs read from their sources only the records they use, and the
# examples in every mock split of their large dry run (see the margin above).
LARGE = {"curbench_text": 200_000, "diffusion_reproducibility": 20_000, "nem_explanations": 20_000}
MARGIN_KIB = 64 * 1024


def peak_rss_kib(name: str, workdir: Path, num_examples: int) -> int:
    """The dry run's peak RSS (KiB), every mock split of ``num_examples`` examples."""
    rss = workdir / "rss.json"
    summary = dry_run(name, workdir, devices=1, launcher=(str(DRIVER), str(num_examples), str(rss)))
    check_outputs(name, workdir, summary)
    peak = json.loads(rss.read_text())
    return max(peak["self_kib"], peak["children_kib"])


@pytest.mark.slow
@pytest.mark.pod
@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss is in KiB on Linux")
@pytest.mark.parametrize("name", sorted(LARGE))
def test_paper_dry_run_peak_rss_is_flat_in_the_split_size(name, tmp_path):
    small = peak_rss_kib(name, tmp_path / "small", SMALL)
    large = peak_rss_kib(name, tmp_path / "large", LARGE[name])
    assert large - small < MARGIN_KIB, (
        f"{name}: peak RSS {small} KiB with {SMALL}-example splits, {large} KiB with "
        f"{LARGE[name]}: grows by {(large - small) / 1024:.0f} MiB (margin "
        f"{MARGIN_KIB // 1024} MiB)"
    )
