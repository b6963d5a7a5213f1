"""SynthNIAH, the offline needle-in-a-video-haystack benchmark: shipped images as drifting scenes, sklearn
digits as coloured needle cards, three tasks (retrieval, ordering, counting) as in VNBench.

A video is stored as a small seeded spec (scenes, card events, question, answer, options) and rendered
on the fly, so a 10 000-frame video costs kilobytes on disk.
"""

from __future__ import annotations

from typing import Any

import numpy as np

# RGB of each card colour (the card's face; the digit is drawn dark on it)
COLOUR_RGB = {
    "red": (1.0, 0.1, 0.1),
    "green": (0.1, 0.9, 0.1),
    "blue": (0.15, 0.25, 1.0),
    "yellow": (1.0, 0.95, 0.1),
    "magenta": (1.0, 0.1, 1.0),
    "cyan": (0.1, 0.95, 1.0),
}
# Textures and photos inside scikit-image's wheel (skimage/data), read without any fetcher.
SHIPPED_IMAGES = (
    "astronaut.png", "brick.png", "camera.png", "chelsea.png", "coffee.png", "coins.png",
    "grass.png", "gravel.png", "horse.png", "hubble_deep_field.jpg", "ihc.png", "moon.png",
    "motorcycle_left.png", "page.png", "retina.jpg", "rocket.jpg", "text.png",
)  # fmt: skip
DIGITS = [str(d) for d in range(10)]
ORDER_WORDS = ("first",)

NO_CARD = "a textured scene with no card"


# ---------------------------------------------------------------- text
def question(task: str, colours: list[str]) -> str:
    """The question of a task about the given colour(s) (the selector's query and the reader's prompt)."""
    if task == "retrieval":
        return f"What digit is on the {colours[0]} card?"
    if task == "ordering":
        return f"Which card appears first, the {colours[0]} card or the {colours[1]} card?"
    if task == "counting":
        return f"How many {colours[0]} cards appear?"
    raise ValueError(f"unknown task {task!r}: use retrieval, ordering or counting")


def caption(colour: str | None, digit: int | None) -> str:
    """Selector pretraining caption of a frame: the visible card, or none."""
    return NO_CARD if colour is None else f"a {colour} card with the digit {digit}"


def all_questions(colours: list[str]) -> list[str]:
    out = [question("retrieval", [c]) for c in colours]
    out += [question("ordering", [a, b]) for a in colours for b in colours if a != b]
    out += [question("counting", [c]) for c in colours]
    return out


def all_captions(colours: list[str]) -> list[str]:
    return [NO_CARD] + [caption(c, d) for c in colours for d in range(10)]


def answer_vocabulary(colours: list[str], max_count: int) -> list[str]:
    """Every answer the reader's head can give: digits, counts, colours (ordering answers a colour)."""
    counts = [f"count {k}" for k in range(1, max_count + 1)]
    return [*DIGITS, *counts, *colours]


# ---------------------------------------------------------------- shipped assets
def load_shipped_images(names: tuple[str, ...] = SHIPPED_IMAGES) -> list[np.ndarray]:
    """The shipped images as float RGB arrays in [0, 1] (grey ones stacked to three channels)."""
    from pathlib import Path

    import skimage
    from skimage import io

    folder = Path(skimage.__file__).parent / "data"
    images = []
    for name in names:
        img = np.asarray(io.imread(folder / name), dtype=np.float32)
        img = img / (255.0 if img.max() > 1.5 else 1.0)
        if img.ndim == 2:
            img = np.stack([img] * 3, axis=-1)
        images.append(img[..., :3])
    return images


def crop_backgrounds(
    images: list[np.ndarray], n: int, size: int, rng: np.random.Generator
) -> np.ndarray:
    """``n`` random square crops resized to (size + drift margin); shape (n, 3, S, S), S = 1.5 * size."""
    from skimage.transform import resize

    side = size + size // 2  # the margin a scene's 32 px window drifts in
    # shrink each image once with anti-aliasing (crops then need only a cheap bilinear resize)
    small = []
    for img in images:
        scale = min(1.0, 6 * side / min(img.shape[:2]))
        shape = (max(side, round(img.shape[0] * scale)), max(side, round(img.shape[1] * scale)))
        small.append(resize(img, shape, anti_aliasing=scale < 1).astype(np.float32))
    out = np.empty((n, 3, side, side), np.float32)
    for i in range(n):
        img = small[rng.integers(len(small))]
        h, w = img.shape[:2]
        c = int(rng.integers(max(side, min(h, w) // 6), max(side + 1, min(h, w) // 2)))
        y, x = rng.integers(0, h - c + 1), rng.integers(0, w - c + 1)
        crop = resize(img[y : y + c, x : x + c], (side, side), order=1, anti_aliasing=False)
        out[i] = crop.transpose(2, 0, 1)
    return out


def load_glyphs() -> np.ndarray:
    """sklearn's 1797 8x8 digits in [0, 1] and their labels."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    return {"images": (digits.images / 16.0).astype(np.float32), "labels": digits.target}


def card_patch(glyph: np.ndarray, colour: str, patch: int) -> np.ndarray:
    """A (3, patch, patch) card: the colour's face with the digit's strokes darkened on it."""
    if glyph.shape[0] != patch:
        from skimage.transform import resize

        glyph = resize(glyph, (patch, patch), order=1)
    face = np.asarray(COLOUR_RGB[colour], np.float32)[:, None, None]
    return face * (1.0 - 0.8 * glyph[None])


# ---------------------------------------------------------------- video specs
def _scenes(n_frames: int, scene_len: list[int], n_backgrounds: int, rng) -> list[list[int]]:
    """[start, length, background, dx, dy] of consecutive scenes covering the video."""
    scenes, start = [], 0
    while start < n_frames:
        length = int(min(rng.integers(scene_len[0], scene_len[1] + 1), n_frames - start))
        dx, dy = (int(v) for v in rng.choice([-1, 0, 1], size=2))
        scenes.append([start, length, int(rng.integers(n_backgrounds)), dx, dy])
        start += length
    return scenes


def _place_runs(n_frames: int, lengths: list[int], rng, forbidden=None) -> list[int]:
    """Start frames of non-overlapping runs (one free frame between any two), in random order."""
    taken = np.zeros(n_frames + 1, bool) if forbidden is None else forbidden
    starts = []
    for length in lengths:
        for _ in range(1000):
            s = int(rng.integers(0, n_frames - length + 1))
            lo, hi = max(0, s - 1), min(n_frames, s + length + 1)
            if not taken[lo:hi].any():
                taken[s : s + length] = True
                starts.append(s)
                break
        else:
            raise ValueError(
                f"cannot place {len(lengths)} needle runs in a {n_frames}-frame video; lengthen it"
            )
    return starts


def make_video_spec(
    task: str,
    n_frames: int,
    data,
    glyph_labels: np.ndarray,
    rng: np.random.Generator,
    distractors_per_1k: float | None = None,
) -> dict[str, Any]:
    """One SynthNIAH video: scenes, card events [start, length, colour, glyph, cell, digit], question,
    answer, options; distractor cards (other colours) at ``distractors_per_1k`` (default: the data's)."""
    if n_frames < 1:
        raise ValueError(f"a video needs at least one frame, got n_frames={n_frames}")
    colours = list(data.colours)
    cells = data.grid**2
    by_digit = [np.flatnonzero(glyph_labels == d) for d in range(10)]

    def event(start, length, colour, digit=None):
        digit = int(rng.integers(10)) if digit is None else digit
        glyph = int(rng.choice(by_digit[digit]))
        return [int(start), int(length), colour, glyph, int(rng.integers(cells)), digit]

    def run_len():
        return int(rng.integers(data.needle_len[0], data.needle_len[1] + 1))

    taken = np.zeros(n_frames + 1, bool)
    if task == "retrieval":
        asked = [colours[rng.integers(len(colours))]]
        length = run_len()
        (s,) = _place_runs(n_frames, [length], rng, taken)
        events = [event(s, length, asked[0])]
        answer = DIGITS[events[0][5]]
        pool = [d for d in DIGITS if d != answer]
    elif task == "ordering":
        asked = [str(c) for c in rng.choice(colours, size=2, replace=False)]
        length = min(data.ordering_needle_len, n_frames // 4)
        starts = sorted(_place_runs(n_frames, [length, length], rng, taken))
        first = asked[int(rng.integers(2))]
        second = asked[1] if first == asked[0] else asked[0]
        events = [event(starts[0], length, first), event(starts[1], length, second)]
        answer, pool = first, [second]
    elif task == "counting":
        asked = [colours[rng.integers(len(colours))]]
        count = int(rng.integers(1, data.max_count + 1))
        lengths = [run_len() for _ in range(count)]
        events = [
            event(s, ln, asked[0])
            for s, ln in zip(_place_runs(n_frames, lengths, rng, taken), lengths, strict=True)
        ]
        answer = f"count {count}"
        pool = [f"count {k}" for k in range(1, data.max_count + 1) if k != count]
    else:
        raise ValueError(f"unknown task {task!r}: use retrieval, ordering or counting")
    needle_frames = sorted({f for e in events for f in range(e[0], e[0] + e[1])})
    others = [c for c in colours if c not in asked]
    rate = data.distractors_per_1k if distractors_per_1k is None else distractors_per_1k
    n_distractors = int(rng.poisson(rate * n_frames / 1000))
    for _ in range(n_distractors if others else 0):
        length = run_len()
        try:
            (s,) = _place_runs(n_frames, [length], rng, taken)
        except ValueError:  # a crowded short video: fewer distractors
            continue
        events.append(event(s, length, others[int(rng.integers(len(others)))]))
    options = [answer, *(str(o) for o in rng.permutation(pool)[:3])]
    return {
        "task": task,
        "n_frames": int(n_frames),
        "question": question(task, asked),
        "answer": answer,
        "options": sorted(options),
        "needle_frames": needle_frames,
        "scenes": _scenes(n_frames, data.scene_len, data.backgrounds, rng),
        "events": events,
        "noise_seed": int(rng.integers(2**31)),
    }


# ---------------------------------------------------------------- rendering
def drift_offset(t: int, direction: int, margin: int) -> int:
    """Window offset after t drift steps: a triangle wave in [0, margin] (1 px per step, bouncing)."""
    h = margin // 2
    if h == 0:
        return 0
    return h + direction * (abs((t + h) % (4 * h) - 2 * h) - h)


def render_video(spec: dict, assets: dict, data) -> np.ndarray:
    """All frames of a spec as float32 (n, 3, F, F) in [0, 1]."""
    n = spec["n_frames"]
    if n < 1:
        raise ValueError("a video with no frames cannot be rendered (n_frames = 0)")
    size, patch = data.frame_size, data.patch_size
    backgrounds = assets["backgrounds"]
    margin = backgrounds.shape[-1] - size
    # every size x size window of each background, as a view: (bg, oy, ox, 3, size, size)
    windows = np.lib.stride_tricks.sliding_window_view(backgrounds, (size, size), axis=(2, 3))
    out = np.empty((n, 3, size, size), np.float32)
    for start, length, bg, dx, dy in spec["scenes"]:
        steps = np.arange(length) // data.drift_every
        ox = [drift_offset(int(t), dx, margin) for t in steps]
        oy = [drift_offset(int(t), dy, margin) for t in steps]
        out[start : start + length] = windows[bg][:, oy, ox].transpose(1, 0, 2, 3)
    grid = size // patch
    for start, length, colour, glyph, cell, _digit in spec["events"]:
        card = card_patch(assets["glyphs"]["images"][glyph], colour, patch)
        y, x = (cell // grid) * patch, (cell % grid) * patch
        out[start : start + length, :, y : y + patch, x : x + patch] = card
    if data.noise > 0:
        # per-frame sensor noise drawn from the asset's bank (a fresh normal per pixel costs ~1 s
        # per 10 000 frames; the bank keeps consecutive frames from being exact duplicates all the same)
        bank = assets["noise"]
        pick = np.random.default_rng(spec["noise_seed"]).integers(len(bank), size=n)
        out += data.noise * bank[pick]
    return np.clip(out, 0.0, 1.0, out=out)


def caption_corpus(
    n: int, data, assets: dict, card_prob: float, rng: np.random.Generator
) -> list[dict]:
    """Selector pretraining pairs as specs: a background window with at most one card, and its caption."""
    size, grid = data.frame_size, data.grid
    margin = assets["backgrounds"].shape[-1] - size
    colours = list(data.colours)
    labels = assets["glyphs"]["labels"]
    rows = []
    for _ in range(n):
        row = {
            "background": int(rng.integers(len(assets["backgrounds"]))),
            "oy": int(rng.integers(0, margin + 1)),
            "ox": int(rng.integers(0, margin + 1)),
            "colour": -1,
            "glyph": -1,
            "digit": -1,
            "cell": int(rng.integers(grid * grid)),
            "noise": int(rng.integers(len(assets["noise"]))),
        }
        if rng.random() < card_prob:
            row["glyph"] = int(rng.integers(len(labels)))
            row["colour"], row["digit"] = int(rng.integers(len(colours))), int(labels[row["glyph"]])
        colour = colours[row["colour"]] if row["colour"] >= 0 else None
        row["caption"] = caption(colour, row["digit"])
        rows.append(row)
    return rows


def render_caption_frames(rows: list[dict], assets: dict, data) -> np.ndarray:
    """The frames of caption-corpus rows, (n, 3, F, F)."""
    size, patch, grid = data.frame_size, data.patch_size, data.grid
    colours = list(data.colours)
    frames = np.empty((len(rows), 3, size, size), np.float32)
    for i, r in enumerate(rows):
        frames[i] = assets["backgrounds"][
            r["background"], :, r["oy"] : r["oy"] + size, r["ox"] : r["ox"] + size
        ]
        if r["colour"] >= 0:
            y, x = (r["cell"] // grid) * patch, (r["cell"] % grid) * patch
            card = card_patch(assets["glyphs"]["images"][r["glyph"]], colours[r["colour"]], patch)
            frames[i, :, y : y + patch, x : x + patch] = card
        frames[i] += data.noise * assets["noise"][r["noise"]]
    return np.clip(frames, 0, 1, out=frames)


def build_assets(data, rng: np.random.Generator, noise_bank: int = 512) -> dict[str, Any]:
    """Everything rendering needs: background crops, sklearn digits, a bank of noise frames."""
    size = data.frame_size
    return {
        "backgrounds": crop_backgrounds(load_shipped_images(), data.backgrounds, size, rng),
        "glyphs": load_glyphs(),
        "noise": rng.standard_normal((noise_bank, 3, size, size), dtype=np.float32),
    }
