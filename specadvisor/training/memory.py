"""GPU memory the trainer needs beside the target's server: sized from the draft head, stated roughly."""

from __future__ import annotations

import math

from specadvisor.domain import ModelProfile

_GIB = 1024**3


def hidden_size_estimate(profile: ModelProfile) -> int:
    """The target's hidden size from its parameter count and depth (12 h^2 parameters per layer)."""
    params = (profile.params_b or 1.0) * 1e9
    layers = max(profile.num_hidden_layers or 32, 1)
    return max(256, int(math.sqrt(params / (12 * layers))))


def trainer_gib(profile: ModelProfile, draft_vocab: int | None, total_seq_len: int, ttt_steps: int) -> float:
    """An upper estimate: the draft layer and fc (fp32 master weights, gradients and two optimizer
    moments: 16 bytes each), the frozen embedding and the target's head over the draft vocabulary
    (fp32), and one packed batch's activations, dominated by the logits over the draft vocabulary
    at each TTT step (value, softmax and gradient)."""
    hidden = hidden_size_estimate(profile)
    vocab = profile.vocab_size or 128_000
    draft_vocab = draft_vocab or vocab
    trained = 12 * hidden * hidden + 3 * hidden * hidden + draft_vocab * hidden
    frozen = vocab * hidden + draft_vocab * hidden
    activations = total_seq_len * (draft_vocab * 4 * 3 * ttt_steps + hidden * 4 * 40)
    return (trained * 16 + frozen * 4 + activations) / _GIB + 1.0
