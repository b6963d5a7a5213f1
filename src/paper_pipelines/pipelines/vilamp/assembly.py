"""ViLAMP's "mixed precision" visual sequence: full keyframe grids and one token per non-keyframe, in
temporal order, closed by one learned newline token (prepare_inputs_labels_for_multimodal)."""

from __future__ import annotations

import torch


def visual_token_count(n_frames: int, keyframes: int, patches: int, merged: bool = True) -> int:
    """K * M + (N - K) + 1 with merged non-keyframes; K * M + 1 when they are dropped."""
    if not 0 < keyframes <= n_frames:
        raise ValueError(f"need 0 < K <= N, got K={keyframes}, N={n_frames}")
    return keyframes * patches + ((n_frames - keyframes) if merged else 0) + 1


def assemble_sequence(
    patches: torch.Tensor,
    keyframes: list[int],
    merged: torch.Tensor | None,
    newline: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """(tokens (L, d), frame index of each token (L,); the newline gets N).

    ``patches`` (N, M, d) supplies each keyframe's grid; ``merged`` (N - K, d) holds the non-keyframes'
    tokens in temporal order (None: non-keyframes dropped, as composer_type=None and uniform_sample).
    """
    n, m, d = patches.shape
    device = patches.device
    is_key = torch.zeros(n, dtype=torch.bool, device=device)
    is_key[keyframes] = True
    count = torch.where(is_key, m, 1 if merged is not None else 0)
    frame_of = torch.repeat_interleave(torch.arange(n, device=device), count)
    tokens = patches.new_empty((int(count.sum()), d))
    key_rows = is_key[frame_of]
    tokens[key_rows] = patches[is_key].reshape(-1, d)
    if merged is not None:
        if merged.shape[0] != n - int(is_key.sum()):
            raise ValueError(
                f"{merged.shape[0]} merged tokens for {n - int(is_key.sum())} non-keyframes"
            )
        tokens[~key_rows] = merged.to(tokens)
    tokens = torch.cat([tokens, newline.reshape(1, d).to(tokens)])
    return tokens, torch.cat([frame_of, torch.tensor([n], device=device)])
