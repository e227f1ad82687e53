"""Explanations per second: NEM-U's masking network vs RELAX (N = 1000) vs gradient saliency.

``jaxlab bench explain`` (or ``python benchmarks/explain.py [--quick]``) builds one CNN
encoder with four stages on 48×48 grey images (the ``nem_explanations`` experiment's
architecture; ``--quick``: its widths 8-16-32-32, a batch of 8 images; default: widths
16-32-64-128, 32 images) and a NEM-U decoder on its stages, and times, with
``jaxlab.train.time_interleaved``, explaining the same batch with (a) NEM-U: one encoder
pass plus one decoder pass, (b) RELAX with N = 1000 smooth masks in chunks of 100 (N
encoder passes per image), (c) gradient saliency (one forward and one backward pass).
Timing does not depend on training, so the parameters are random.
"""

from __future__ import annotations

import argparse
import functools

import jax

from jaxlab.explain import (
    MaskDecoder,
    NEMParams,
    StagedEncoder,
    gradient_saliency,
    nem_mask,
    relax,
)
from jaxlab.train import ratios, time_interleaved


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a run of under a minute")
    parser.add_argument("--masks", type=int, default=1000, help="RELAX's N")
    args = parser.parse_args(argv)
    if args.quick:
        widths, channels, batch, repeats = (8, 16, 32, 32), (16, 8, 8, 4), 8, 3
    else:
        widths, channels, batch, repeats = (16, 32, 64, 128), (64, 32, 16, 8), 32, 5
    enc = StagedEncoder(widths)
    dec = MaskDecoder(channels=channels)
    key = jax.random.key(0, impl="rbg")
    x = jax.random.uniform(key, (batch, 48, 48, 1))
    enc_params = enc.init(key, x[:2])
    params = NEMParams(enc_params, dec.init(key, enc.apply(enc_params, x[:2])[1], (48, 48)))

    def encode(z):
        return enc.apply(enc_params, z)[0]

    nem = jax.jit(lambda p, z: nem_mask(enc.apply, dec, p, z)[0])
    one = functools.partial(relax, encode, num_masks=args.masks, chunk_size=100)
    relax_all = jax.jit(
        lambda z, k: jax.lax.map(lambda a: one(a[0], a[1]), (z, jax.random.split(k, z.shape[0])))
    )
    saliency = jax.jit(lambda z: gradient_saliency(encode, z))
    times = time_interleaved(
        {
            "nem": lambda: nem(params, x),
            "relax": lambda: relax_all(x, key),
            "saliency": lambda: saliency(x),
        },
        repeats=repeats,
    )
    speed = ratios(times, "relax")
    print(
        f"explain {batch} images 48x48, encoder widths {widths}, decoder {channels}, "
        f"RELAX N={args.masks}, {jax.default_backend()}"
    )
    print(f"{'method':9s} {'seconds':>9s} {'expl/s':>10s} {'t/RELAX':>9s}")
    for name in ("nem", "relax", "saliency"):
        print(f"{name:9s} {times[name]:9.4f} {batch / times[name]:10.1f} {speed[name]:9.5f}")
    print(f"NEM speed-up over RELAX: {times['relax'] / times['nem']:.0f}x")


if __name__ == "__main__":
    main()
