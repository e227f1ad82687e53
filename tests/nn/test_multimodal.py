"""LLark splicing, the answer-only loss, the projector's gradient and cached decoding.

Comparisons with a reference run under ``jax.default_matmul_precision("highest")``
(``docs/precision.md``): a GPU's default TF32 products miss them by ~1e-3.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

from jaxlab.audio.instructions import WordTokenizer, encode_example
from jaxlab.nn import AudioLM, answer_loss, generate, splice_audio
from jaxlab.nn.multimodal import init_cache

TOK = WordTokenizer.fit(["What key is this in?", "It is in C# minor at 96 BPM."])
AUDIO_ID = TOK.id("<audio>")


def _model(**kw):
    return AudioLM(
        vocab_size=len(TOK),
        audio_token_id=AUDIO_ID,
        max_len=32,
        dim=16,
        depth=2,
        num_heads=2,
        mlp_dim=32,
        **kw,
    )


def _batch():
    rows = [
        encode_example(TOK, "What key is this in?", "It is in C# minor.", 4, 32),
        encode_example(TOK, "What key?", "It is in C# minor at 96 BPM.", 4, 32),
    ]
    tokens = np.stack([r[0] for r in rows])
    mask = np.stack([r[1] for r in rows])
    audio = np.random.default_rng(0).standard_normal((2, 4, 5)).astype(np.float32)
    return tokens, mask, np.array([r[2] for r in rows]), audio


def test_markers_and_loss_mask():
    tokens, mask, prompt_len, _ = _batch()
    row = tokens[0]
    assert row[0] == TOK.id("<bos>") and row[1] == TOK.id("<audio_start>")
    np.testing.assert_array_equal(row[2:6], AUDIO_ID)
    assert row[6] == TOK.id("<audio_end>")
    sep = int(np.where(row == TOK.id("<sep>"))[0][0])
    assert prompt_len[0] == sep + 1
    eos = int(np.where(row == TOK.id("<eos>"))[0][0])
    np.testing.assert_array_equal(np.where(mask[0])[0], np.arange(sep + 1, eos + 1))
    assert TOK.decode(row[sep + 1 :]) == "It is in C# minor."
    with pytest.raises(ValueError, match="exceeds the context"):
        encode_example(TOK, "What key is this in?", "It is in C# minor.", 30, 32)


def test_splice_against_a_loop():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 7, 3))
    a = rng.standard_normal((2, 2, 3))
    is_audio = np.zeros((2, 7), bool)
    is_audio[0, [1, 2]] = True
    is_audio[1, [3, 4, 5]] = True  # one more placeholder than frames: keeps its embedding
    expected = x.copy()
    for b in range(2):
        for k, i in enumerate(np.where(is_audio[b])[0][:2]):
            expected[b, i] = a[b, k]
    np.testing.assert_allclose(np.asarray(jax.jit(splice_audio)(x, a, is_audio)), expected)
    with pytest.raises(ValueError, match="is_audio"):
        splice_audio(x, a, is_audio[:, :3])


def test_answer_loss_against_numpy_and_prompt_invariance():
    tokens, mask, _, audio = _batch()
    model = _model()
    params = model.init(jax.random.key(0), tokens, audio)
    logits = np.asarray(model.apply(params, tokens, audio), np.float64)
    logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    nll = [-logp[b, i - 1, tokens[b, i]] for b in range(2) for i in range(1, 32) if mask[b, i]]
    np.testing.assert_allclose(float(answer_loss(logits, tokens, mask)), np.mean(nll), rtol=1e-5)
    # changing the audio changes the answer loss; changing logits off the mask does not
    shifted = logits.copy()
    shifted[:, 0] += 3.0  # position 0 predicts token 1, never an answer token
    np.testing.assert_allclose(float(answer_loss(shifted, tokens, mask)), np.mean(nll), rtol=1e-5)
    other = float(answer_loss(model.apply(params, tokens, audio + 1.0), tokens, mask))
    assert abs(other - np.mean(nll)) > 1e-4


def test_projector_gradient_and_audio_only_reaches_placeholders():
    with jax.default_matmul_precision("highest"):
        tokens, mask, _, audio = _batch()
        model = _model()
        params = model.init(jax.random.key(0), tokens, audio)

        def loss(kernel):
            p = jax.tree.map(lambda x: x, params)
            p["params"]["projector"]["kernel"] = kernel
            return answer_loss(model.apply(p, tokens, audio), tokens, mask)

        kernel = params["params"]["projector"]["kernel"]
        check_grads(loss, (kernel,), order=1, modes=["rev"], atol=2e-2, rtol=2e-2)
        # the spliced inputs differ from the text-only ones exactly at the placeholders
        with_audio = model.apply(params, tokens, audio, method=AudioLM.embed_inputs)
        text_only = model.apply(params, tokens, None, method=AudioLM.embed_inputs)
        changed = np.asarray(jnp.any(with_audio != text_only, axis=-1))
        np.testing.assert_array_equal(changed, tokens == AUDIO_ID)


def test_cached_generation_equals_full_recompute_and_greedy_argmax():
    with jax.default_matmul_precision("highest"):
        tokens, _, prompt_len, audio = _batch()
        model = _model()
        params = model.init(jax.random.key(0), tokens, audio)
        key = jax.random.key(1)
        cached = jax.jit(lambda p, a: generate(p, model, tokens, prompt_len, a, key))(params, audio)
        full = generate(params, model, tokens, prompt_len, audio, key, use_cache=False)
        np.testing.assert_array_equal(np.asarray(cached), np.asarray(full))
        for b in range(2):
            np.testing.assert_array_equal(
                np.asarray(cached[b, : prompt_len[b]]), tokens[b, : prompt_len[b]]
            )
        # greedy: each generated token is the argmax of a full forward pass on the result
        logits = model.apply(params, cached, audio)
        for b in range(2):
            p = prompt_len[b]
            np.testing.assert_array_equal(
                np.asarray(cached[b, p:]), np.asarray(jnp.argmax(logits[b, p - 1 : -1], -1))
            )
        sampled = generate(params, model, tokens, prompt_len, audio, key, temperature=1.0)
        assert sampled.shape == tokens.shape


def test_bad_inputs():
    tokens, _, _, audio = _batch()
    model = _model()
    params = model.init(jax.random.key(0), tokens, audio)
    with pytest.raises(ValueError, match="exceeds the context"):
        model.apply(params, np.zeros((1, 40), np.int32))
    with pytest.raises(ValueError, match="tokens must be int"):
        model.apply(params, np.zeros((2, 8)), audio)
    with pytest.raises(ValueError, match="audio must be"):
        model.apply(params, tokens, audio[:1])


@pytest.mark.parametrize("normalizer", ["softmax", "sparsemax"])
def test_decode_steps_equal_the_full_forward(normalizer):
    """Cached decoding runs the same jaxlab blocks: its logits at every position equal the
    full causal forward pass, for any attention normaliser."""
    with jax.default_matmul_precision("highest"):
        tokens, _, _, audio = _batch()
        model = _model(normalizer=normalizer)
        params = model.init(jax.random.key(0), tokens, audio)
        full = np.asarray(model.apply(params, tokens, audio))
        embedded = model.apply(params, tokens, audio, method=AudioLM.embed_inputs)
        cache = init_cache(model, tokens.shape[0])
        step = jax.jit(lambda x, t, c: model.apply(params, x, t, c, method=AudioLM.decode_step))
        for t in range(tokens.shape[1]):
            logits, cache = step(embedded[:, t : t + 1], t, cache)
            np.testing.assert_allclose(np.asarray(logits[:, 0]), full[:, t], atol=2e-5)
        with pytest.raises(ValueError, match="multimax"):
            mm = _model(normalizer="multimax")
            generate(
                mm.init(jax.random.key(0), tokens, audio),
                mm,
                tokens,
                np.array([20, 20]),
                audio,
                jax.random.key(0),
            )
