"""OOD metrics and KNN scoring: jaxlab.ood against scikit-learn, in one run on this machine.

``jaxlab bench ood`` (or ``python benchmarks/ood.py [--quick]``) measures, with
``jaxlab.train.time_interleaved`` (warmed up, interleaved, medians):

* AUROC and FPR95 on 10⁶ scores (half ID, half OOD): ``jaxlab.ood.auroc`` / ``fpr_at_tpr``
  (jitted) against ``sklearn.metrics.roc_auc_score`` / ``roc_curve``;
* KNN scoring (k = 1, L2-normalised) of 10⁴ queries against a 5·10⁴ × 128 bank:
  ``jaxlab.ood.knn_score`` against ``sklearn.neighbors.NearestNeighbors`` (brute force).

``--quick`` uses 10⁵ scores and a 10⁴ × 128 bank (well under a minute).
"""

from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp
import numpy as np
from sklearn.metrics import roc_auc_score, roc_curve
from sklearn.neighbors import NearestNeighbors

from jaxlab.ood import auroc, fpr_at_tpr, knn_score
from jaxlab.train import ratios, time_interleaved


def _sk_fpr95(labels, scores):
    fpr, tpr, _ = roc_curve(labels, scores)
    return fpr[np.argmax(tpr >= 0.95)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, < 1 minute")
    args = parser.parse_args(argv)
    n_scores = 100_000 if args.quick else 1_000_000
    bank_size, n_queries, dim = (10_000, 2_000, 128) if args.quick else (50_000, 10_000, 128)
    rng = np.random.default_rng(0)
    s_id = rng.normal(1.0, 1.0, n_scores // 2).astype(np.float32)
    s_ood = rng.normal(0.0, 1.0, n_scores // 2).astype(np.float32)
    labels, pooled = np.r_[np.ones_like(s_id), np.zeros_like(s_ood)], np.r_[s_id, s_ood]
    j_id, j_ood = jnp.asarray(s_id), jnp.asarray(s_ood)
    j_auroc, j_fpr = jax.jit(auroc), jax.jit(fpr_at_tpr)
    rows = []
    times = time_interleaved(
        {
            "jaxlab": lambda: jax.block_until_ready(j_auroc(j_id, j_ood)),
            "sklearn": lambda: roc_auc_score(labels, pooled),
        },
        repeats=3,
    )
    rows.append(("AUROC", f"{n_scores:.0e} scores", times, ratios(times, "sklearn")))
    times = time_interleaved(
        {
            "jaxlab": lambda: jax.block_until_ready(j_fpr(j_id, j_ood)),
            "sklearn": lambda: _sk_fpr95(labels, pooled),
        },
        repeats=3,
    )
    rows.append(("FPR95", f"{n_scores:.0e} scores", times, ratios(times, "sklearn")))
    assert abs(float(j_auroc(j_id, j_ood)) - roc_auc_score(labels, pooled)) < 1e-4
    bank = rng.normal(size=(bank_size, dim)).astype(np.float32)
    queries = rng.normal(size=(n_queries, dim)).astype(np.float32)
    norm = lambda x: x / np.linalg.norm(x, axis=1, keepdims=True)  # noqa: E731
    j_knn = jax.jit(lambda q, b: knn_score(q, b, 1, block_size=2048))
    j_bank, j_q = jnp.asarray(bank), jnp.asarray(queries)

    def sklearn_knn():
        nn = NearestNeighbors(n_neighbors=1, algorithm="brute").fit(norm(bank))
        return -nn.kneighbors(norm(queries))[0][:, -1]

    times = time_interleaved(
        {
            "jaxlab": lambda: jax.block_until_ready(j_knn(j_q, j_bank)),
            "sklearn": sklearn_knn,
        },
        repeats=3,
    )
    rows.append(("KNN k=1", f"{n_queries}×{bank_size}×{dim}", times, ratios(times, "sklearn")))
    print(f"{'what':10s} {'size':22s} {'jaxlab s':>10s} {'sklearn s':>10s} {'speed-up':>9s}")
    for what, size, t, r in rows:
        print(
            f"{what:10s} {size:22s} {t['jaxlab']:10.4f} {t['sklearn']:10.4f} "
            f"{1.0 / r['jaxlab']:8.1f}×"
        )


if __name__ == "__main__":
    main()
