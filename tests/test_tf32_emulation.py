"""The TF32 emulation of ``tests/tf32.py`` against float64 products, and what it records.

The plugin changes how the process lowers products, so it runs in a subprocess.
"""

import os
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp

from tests.precision import HIGH, HIGHEST, recorded_precisions

REPO = Path(__file__).resolve().parents[1]

PROBE = """
import numpy as np, jax, jax.numpy as jnp
import tests.tf32
tests.tf32.emulate_tf32()
rng = np.random.default_rng(0)
x, y = (rng.normal(size=(64, 64)).astype(np.float32) for _ in range(2))
img, k = rng.normal(size=(1, 8, 8, 4)), rng.normal(size=(3, 3, 4, 5))
img, k = img.astype(np.float32), k.astype(np.float32)
exact = x.astype(np.float64) @ y.astype(np.float64)
conv = lambda a, b: jax.lax.conv_general_dilated(
    a, b, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
)
def tf32(a):  # TF32 keeps 11 significant bits: mantissa in [0.5, 1) times 2^11, rounded
    m, e = np.frexp(a.astype(np.float64))
    return np.ldexp(np.round(np.ldexp(m, 11)), e - 11)
def rel(a, b):
    return float(np.abs(np.asarray(a, np.float64) - b).max() / np.abs(b).max())
print("default", rel(jax.jit(jnp.matmul)(x, y), exact))
print("tf32_reference", rel(jax.jit(jnp.matmul)(x, y), tf32(x) @ tf32(y)))
print("explicit", rel(jnp.matmul(x, y, precision="highest"), exact))
with jax.default_matmul_precision("highest"):
    print("scoped", rel(jax.jit(jnp.matmul)(x, y), exact))
    conv_exact = np.asarray(conv(img, k), np.float64)
print("conv", rel(conv(img, k), conv_exact))
h, g = x.astype(np.float16), y.astype(np.float16)
print("float16", rel(jnp.matmul(h, g), h.astype(np.float64) @ g.astype(np.float64)))
"""


def test_products_below_highest_are_rounded_to_tf32_and_highest_ones_are_not():
    path = f"{REPO}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"
    env = {**os.environ, "PYTHONPATH": path, "JAX_PLATFORMS": "cpu"}  # a CPU lowering
    out = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=REPO, env=env, capture_output=True, text=True, check=True
    ).stdout
    err = {name: float(value) for name, value in (line.split() for line in out.splitlines())}
    assert err["default"] > 1e-4  # TF32: ~2^-11 relative per operand
    assert err["tf32_reference"] < 1e-5  # exactly the rounded operands, float32 accumulation
    assert err["explicit"] < 1e-5 and err["scoped"] < 1e-5  # "highest": full float32
    assert err["conv"] > 1e-4
    assert err["float16"] < 1e-2  # other dtypes are left alone


def test_recorded_precisions_reads_nested_programs():
    def fn(x):
        y = jax.lax.scan(lambda c, _: (jnp.dot(c, x, precision="highest"), None), x, None, 2)[0]
        return jax.jit(lambda z: z @ z)(y)

    with jax.default_matmul_precision("high"):
        assert recorded_precisions(fn, jnp.ones((2, 2))) == [HIGHEST, HIGH]
