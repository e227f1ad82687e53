"""Benchmark: the cost of each curriculum relative to the no-op baseline, and MW-Net's step.

    jaxlab bench curriculum [--quick]

1. One training epoch (Fashion-MNIST-sized random 14×14 images, LeNet, batch 50, one seed)
   of every curriculum in ``jaxlab.curriculum.METHODS`` through the same trainer, as a
   ratio to the baseline's epoch, timed interleaved (``jaxlab.train.time_interleaved``).
   Reference ordering: CurBench Table 8a (meta-gradient methods 4–7× the baseline).
2. MW-Net's meta-gradient step (look-ahead by ``jax.grad`` through the inner update, jitted)
   against the same step in PyTorch's ``torch.func`` (``functional_call`` + ``grad`` on a
   copied parameter dict), CPU build, when torch is installed (else "skipped").

``--quick`` (≤ 1 min on an idle 2-core CPU): 4 methods, 200 images.
"""

from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp
import numpy as np

from jaxlab import curriculum as cl
from jaxlab.curriculum.mw_net import init_weight_net
from jaxlab.nn.lenet import LeNet
from jaxlab.train import ratios, time_interleaved
from jaxlab.trainers.curriculum import CurriculumData, CurriculumTrainer


def _task(n: int, size: int = 14):
    rng = np.random.default_rng(0)
    x = rng.uniform(size=(n, size, size, 1)).astype(np.float32)
    y = rng.integers(0, 10, n).astype(np.int32)
    return CurriculumData(x, y, x[:100], y[:100], x[:100], y[:100], 10, teacher_losses=None)


def epoch_ratios(methods, n: int, repeats: int) -> dict[str, float]:
    data = _task(n)
    rng = np.random.default_rng(1)
    data = data._replace(
        teacher_losses=rng.uniform(size=n),
        teacher_logits=rng.normal(size=(n, 10)).astype(np.float32),
    )
    model = LeNet(num_classes=10)
    dummy = jnp.zeros((1, 14, 14, 1))
    init_fn = lambda k: model.init(k, dummy)["params"]
    apply_fn = lambda p, x, a: model.apply({"params": p}, x, a.get("sigma"))
    fns = {}
    for name in methods:
        trainer = CurriculumTrainer(
            cl.get_curriculum(name),
            init_fn,
            apply_fn,
            batch_size=50,
            optimizer={"name": "adam", "learning_rate": 1e-3},
        )
        fns[name] = lambda t=trainer: t.run(data, [0], 1)["val_acc"]
    return time_interleaved(fns, repeats=repeats)


def mw_net_step_times(repeats: int) -> dict[str, float] | None:
    """MW-Net meta step, jaxlab vs torch.func, on a 784-256-10 MLP, batch 100."""
    try:
        import torch
        from torch.func import functional_call, grad
    except ImportError:
        return None
    rng = np.random.default_rng(0)
    x, xm = rng.normal(size=(2, 100, 784)).astype(np.float32)
    y, ym = rng.integers(0, 10, (2, 100))
    w1, w2 = (
        (rng.normal(size=(784, 256)) * 0.05).astype(np.float32),
        (rng.normal(size=(256, 10)) * 0.05).astype(np.float32),
    )
    v = init_weight_net(jax.random.key(0))

    def loss_fn(p, a, b):
        logits = jax.nn.relu(a @ p["w1"]) @ p["w2"]
        return -jax.nn.log_softmax(logits)[jnp.arange(b.shape[0]), b]

    params = {"w1": jnp.asarray(w1), "w2": jnp.asarray(w2)}
    ours = jax.jit(jax.grad(cl.mw_net_meta_loss), static_argnums=2)
    args = (
        v,
        params,
        loss_fn,
        jnp.asarray(x),
        jnp.asarray(y),
        jnp.asarray(xm),
        jnp.asarray(ym),
        0.1,
        jnp.ones(100),
    )

    net = torch.nn.Sequential(
        torch.nn.Linear(784, 256, bias=False), torch.nn.ReLU(), torch.nn.Linear(256, 10, bias=False)
    )
    vnet = torch.nn.Sequential(
        torch.nn.Linear(1, 100), torch.nn.ReLU(), torch.nn.Linear(100, 1), torch.nn.Sigmoid()
    )
    tx, ty = torch.from_numpy(x), torch.from_numpy(y)
    txm, tym = torch.from_numpy(xm), torch.from_numpy(ym)
    ce = torch.nn.functional.cross_entropy

    def torch_step():
        theta = {k: p.detach() for k, p in net.named_parameters()}  # the model copy
        vnet.zero_grad()

        def inner(th):
            losses = ce(functional_call(net, th, (tx,)), ty, reduction="none")
            return torch.mean(vnet(losses[:, None])[:, 0] * losses)

        g = grad(inner)(theta)
        new = {k: theta[k] - 0.1 * g[k] for k in theta}
        meta = ce(functional_call(net, new, (txm,)), tym)
        meta.backward()
        return [p.grad for p in vnet.parameters()]

    return time_interleaved(
        {"jaxlab": lambda: ours(*args), "torch.func": torch_step}, repeats=repeats
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    methods = ("baseline", "spl", "superloss", "mw_net") if args.quick else tuple(cl.METHODS)
    times = epoch_ratios(methods, n=200 if args.quick else 1000, repeats=2 if args.quick else 3)
    print("| curriculum | epoch (s) | × baseline |\n|---|---|---|")
    for name, ratio in ratios(times, "baseline").items():
        print(f"| {name} | {times[name]:.3f} | {ratio:.2f} |")
    step = mw_net_step_times(3 if args.quick else 10)
    if step is None:
        print("\nMW-Net meta step vs torch.func: skipped (torch is not installed)")
    else:
        print(
            f"\nMW-Net meta step: jaxlab {1e3 * step['jaxlab']:.2f} ms, torch.func "
            f"{1e3 * step['torch.func']:.2f} ms, ratio torch/jaxlab "
            f"{step['torch.func'] / step['jaxlab']:.2f}"
        )


if __name__ == "__main__":
    main()
