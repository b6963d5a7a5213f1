"""The log cadence dlp's training loops share (lm.train_tiny_llama, recovery.lora_finetune): a loss line
every max(1, steps // 5) steps and at the last step, numbered from 1."""

from __future__ import annotations

EVERY_FIFTH_AND_THE_LAST = [
    (7, [1, 2, 3, 4, 5, 6, 7]),  # 7 // 5 = 1: every step
    (10, [1, 3, 5, 7, 9, 10]),  # 10 // 5 = 2: every 2nd step, and the last
]
