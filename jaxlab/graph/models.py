"""Node-classification models: MLP / linear (:func:`node_mlp`), GCN, SGC features and APPNP.

Graph models take the propagation as a function ``propagate_fn: v ↦ Â v`` so one model
runs on a sparse graph (training) and on a dense relaxed adjacency (gradient attacks).
GADC's decoupled form is "diffuse once (``jaxlab.graph.gadc``), then an MLP/linear model".

References:
  Kipf, Welling. "Semi-Supervised Classification with Graph Convolutional Networks".
  ICLR 2017. Wu et al. "Simplifying Graph Convolutional Networks". ICML 2019.
  Gasteiger, Bojchevski, Günnemann. "Predict then Propagate". ICLR 2019.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp

from jaxlab._checks import check_integer
from jaxlab.graph.diffusion import neumann_series
from jaxlab.nn.mlp import MLP, Dropout

Propagate = Callable[[jax.Array], jax.Array]


def reference_init(key: jax.Array, shape: Sequence[int], dtype=jnp.float32) -> jax.Array:
    """The GADC reference's layer init: normal with mean −s and std s, s = 1/√fan_out.

    (``weight.normal_(-stdv, stdv)`` in the reference scripts; it biases the first
    layer's pre-activations negative. Used for a faithful Table 1 reproduction.)
    """
    s = 1.0 / jnp.sqrt(shape[-1])
    return (-s + s * jax.random.normal(key, shape)).astype(dtype)


def _reference_bias_init(key, shape, dtype=jnp.float32):
    return reference_init(key, (1, *shape), dtype)[0]


def _dense_inits(init_scheme: str) -> tuple[Callable, Callable]:
    """``(kernel_init, bias_init)`` of an init scheme."""
    if init_scheme == "reference":
        return reference_init, _reference_bias_init
    if init_scheme == "default":
        return nn.linear.default_kernel_init, nn.initializers.zeros_init()
    raise ValueError(f"init must be 'reference' or 'default', got {init_scheme!r}")


def node_mlp(
    hidden: Sequence[int],
    num_classes: int,
    dropout: float = 0.5,
    init_scheme: str = "default",
    *,
    name: str | None = None,
) -> MLP:
    """The node classifiers' :class:`jaxlab.nn.mlp.MLP`: Dropout → Dense → ReLU → … →
    Dropout → Dense, layers ``dense_0 …``; ``hidden=()`` is a linear model.

    Args:
      hidden: hidden widths.
      num_classes: output width.
      dropout: dropout rate applied before every layer (none before a linear model).
      init_scheme: ``"default"`` (flax LeCun normal) or ``"reference"`` (see ``reference_init``).
      name: the module's name in its parent.

    Returns:
      The module; call it as ``apply(params, x [n, d], train=...)`` → logits ``[n, c]``.

    Example:
      >>> from jaxlab.graph.models import node_mlp
      >>> params = node_mlp((4,), 2).init(jax.random.key(0), jnp.ones((3, 5)), train=False)
      >>> sorted(params["params"])
      ['dense_0', 'dense_1']
    """
    kernel_init, bias_init = _dense_inits(init_scheme)
    return MLP(
        num_classes,
        hidden,
        dropout=dropout,
        kernel_init=kernel_init,
        bias_init=bias_init,
        layer_name="dense",
        name=name,
    )


class GCN(nn.Module):
    """Two-layer GCN ``Â σ(Â X W₀ + b₀) W₁ + b₁`` (Kipf & Welling Eq. (2)), the one GCN.

    Biases are added after propagation (Kipf & Welling; PyTorch Geometric's ``GCNConv``).
    Dropout before the hidden layer's weights always, before the first layer when
    ``input_dropout`` (Kipf & Welling drop both; Mujkanovic et al.'s ``gb`` GCN, used by
    GADC's adaptive attacks, only the hidden one). ``activation="none"`` is the linear
    two-hop model of GADC's adaptive scripts; it is then evaluated as
    ``Â(Â(X W₀W₁) + b₀W₁) + b₁``, propagating ``c`` columns instead of ``hidden``.

    Attributes:
      hidden: hidden width.
      num_classes: output width.
      dropout: dropout rate in ``[0, 1)``.
      activation: ``"relu"`` or ``"none"``.
      input_dropout: dropout on the input features too.
      init_scheme: ``"default"`` (flax LeCun normal) or ``"glorot"`` (Glorot uniform, the
        PyTorch Geometric init ``gb`` uses); biases start at 0.
    """

    hidden: int
    num_classes: int
    dropout: float
    activation: str = "relu"
    input_dropout: bool = True
    init_scheme: str = "default"

    @nn.compact
    def __call__(self, x: jax.Array, propagate_fn: Propagate, *, train: bool) -> jax.Array:
        """``x: [n, d]``, ``propagate_fn: [n, k] → [n, k]`` (Â v) → logits ``[n, c]``."""
        if self.activation not in ("relu", "none"):
            raise ValueError(f"activation must be 'relu' or 'none', got {self.activation!r}")
        inits = {
            "default": nn.initializers.lecun_normal(),
            "glorot": nn.initializers.glorot_uniform(),
        }
        if self.init_scheme not in inits:
            raise ValueError(f"init_scheme must be 'default' or 'glorot', got {self.init_scheme!r}")
        init = inits[self.init_scheme]
        w0 = self.param("w0", init, (x.shape[-1], self.hidden))
        b0 = self.param("b0", nn.initializers.zeros, (self.hidden,))
        w1 = self.param("w1", init, (self.hidden, self.num_classes))
        b1 = self.param("b1", nn.initializers.zeros, (self.num_classes,))
        if self.input_dropout:
            x = Dropout(self.dropout)(x, train=train)
        if self.activation == "none" and (not train or self.dropout == 0.0):
            # Linear model: Â(Â X W₀ + b₀) W₁ = Â(Â (X W₀ W₁) + b₀ W₁), c columns instead of h.
            h = propagate_fn(x @ (w0 @ w1)) + (b0 @ w1)[None, :]
            return propagate_fn(h) + b1[None, :]
        h = propagate_fn(x @ w0) + b0[None, :]  # Â X W₀ + b₀
        if self.activation == "relu":
            h = nn.relu(h)
        h = Dropout(self.dropout)(h, train=train)
        return propagate_fn(h @ w1) + b1[None, :]


class APPNP(nn.Module):
    """Predict then propagate: an MLP's logits diffused by ``α Σ_k ((1−α)Â)^k``."""

    hidden: int
    num_classes: int
    alpha: float = 0.1
    num_terms: int = 10
    dropout: float = 0.5

    @nn.compact
    def __call__(self, x: jax.Array, propagate_fn: Propagate, *, train: bool) -> jax.Array:
        """``x: [n, d]`` → diffused logits ``[n, c]``."""
        logits = node_mlp((self.hidden,), self.num_classes, self.dropout, name="mlp")(
            x, train=train
        )
        return neumann_series(propagate_fn, logits, 1.0 - self.alpha, self.alpha, self.num_terms)


def sgc_features(propagate_fn: Propagate, x: jax.Array, num_terms: int) -> jax.Array:
    """SGC pre-processing ``Â^K x`` (Wu et al. 2019), ``K ≥ 0``; train a linear model on it."""
    check_integer("num_terms", num_terms, low=0)
    return jax.lax.fori_loop(0, num_terms, lambda _, v: propagate_fn(v), x)
