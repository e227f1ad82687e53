"""Smoke run of multimax_vit's quick preset, shrunk (digits instead of Fashion-MNIST)."""

import math

from jaxlab.report.registry import get_experiment


def test_quick_preset_smoke(tmp_path):
    experiment = get_experiment("multimax_vit")
    config = experiment.get_config("quick")
    assert config.dataset == "fashion_mnist" and config.num_seeds >= 3
    config.dataset, config.patch_size, config.dim, config.mlp_dim = "digits", 4, 16, 32
    config.num_steps, config.warmup_steps, config.batch_size = 3, 1, 16
    config.eval_images, config.sparsity_images = 64, 16
    config.depth, config.num_heads = 1, 2
    results = experiment.train_and_evaluate(config, str(tmp_path))
    for normalizer in ("softmax", "multimax"):
        assert 0.0 <= results[f"test_accuracy_{normalizer}"] <= 100.0
        for layer in range(config.depth):
            assert 0.0 <= results[f"attention_sparsity_layer{layer}_{normalizer}"] <= 1.0
    for claim in experiment.claims:
        assert math.isfinite(results[claim.metric])
