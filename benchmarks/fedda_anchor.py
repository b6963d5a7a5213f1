"""fedda anchor: parity of our FedDDA forward and FedAvg with the released code on a tiny random CLIP.

    python benchmarks/fedda_anchor.py --official <checkout of MoratalYang/FedDDA> [--deps <dir>]

The released ``trainers/FEDDDA.py`` (``CustomCLIP``: PromptLearner with the middle class position and
"with a style of", the adapters, the gate) and ``utils/fed_utils.average_weights`` are imported from a
read-only checkout that the user supplies (nothing is fetched or vendored); their Dassl / torchvision /
prettytable imports, unused by these classes, are stubbed. A tiny OpenAI-architecture CLIP with random
weights is built from the checkout's ``clip/model.py``; our ``OpenAIClipText`` + ``federated.Model``
run on the same module and the same prompt, adapter and gate tensors. Checks: equal logits (fp32, atol
1e-5), equal aggregated G / A_s after one simulated round, and one local epoch timed side by side.
``--deps`` adds a folder to sys.path (the released tokenizer needs ftfy). Without ``--official`` the
anchor is skipped.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import types
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))


def stub_unused_imports() -> None:
    """Empty stand-ins for the modules FEDDDA.py / clip.py / fed_utils.py import but these classes never use."""

    def module(name: str, **attrs) -> None:
        mod = types.ModuleType(name)
        mod.__dict__.update(attrs)
        sys.modules[name] = mod

    anything = type("Anything", (), {"__init__": lambda self, *a, **k: None})
    module("torchvision")
    module(
        "torchvision.transforms",
        Compose=anything, Resize=anything, CenterCrop=anything, ToTensor=anything,
        Normalize=anything, InterpolationMode=types.SimpleNamespace(BICUBIC=3),
    )  # fmt: skip
    module("prettytable", PrettyTable=anything)
    for name in ("Dassl", "Dassl.dassl", "Dassl.dassl.engine"):
        module(name)
    module("Dassl.dassl.engine.trainer", TrainerX=object)
    utils = (
        "Registry load_pretrained_weights load_checkpoint MetricMeter AverageMeter tolist_if_not"
    )
    utils += " count_num_param save_checkpoint mkdir_if_missing resume_from_checkpoint"
    module("Dassl.dassl.utils", **{n: anything for n in utils.split()})
    module("Dassl.dassl.metrics", compute_accuracy=anything)
    module("Dassl.dassl.optim", build_optimizer=anything, build_lr_scheduler=anything)
    module("Dassl.dassl.data", DataManager=anything)


def cfg(n_ctx: int, size: int):
    ns = types.SimpleNamespace
    fedda = ns(N_CTX=n_ctx, CSC=False, CTX_INIT=False, N=2, CLASS_TOKEN_POSITION="middle")
    return ns(TRAINER=ns(FEDDDA=fedda), INPUT=ns(SIZE=(size, size)))


def run(official: Path, n_ctx: int, batches: int, batch: int) -> dict:
    stub_unused_imports()
    sys.path.insert(0, str(official))
    from clip.model import CLIP  # the released model code, from the user's checkout
    from clip.simple_tokenizer import SimpleTokenizer
    from trainers.FEDDDA import CustomCLIP
    from utils.fed_utils import average_weights

    from paper_pipelines.pipelines.fedda.federated import (
        Client,
        LocalTraining,
        Model,
        aggregate,
        fedavg_weights,
        local_update,
        personalise,
    )  # fmt: skip
    from paper_pipelines.pipelines.fedda.methods import spec
    from paper_pipelines.pipelines.fedda.towers import OpenAIClipText

    torch.manual_seed(0)
    design = {"trainer": "FEDDDA", "vision_depth": 0, "language_depth": 0, "vision_ctx": 0,
              "language_ctx": 0}  # fmt: skip
    clip_model = CLIP(64, 32, 2, 64, 8, 77, 49408, 64, 2, 2, design).float().eval()
    classes = ["golden retriever", "cat", "house", "guitar", "person"]
    theirs = CustomCLIP(cfg(n_ctx, 32), classes, clip_model).float()
    tok = SimpleTokenizer()
    sot, eot = tok.encoder["<|startoftext|>"], tok.encoder["<|endoftext|>"]
    tower = OpenAIClipText(clip_model, tok.encode, sot, eot).eval()
    scale = float(clip_model.logit_scale.detach().exp())
    ours = Model(spec("fedda"), tower, classes, n_ctx, scale, "with a style of", "{}")

    def state_of(model) -> dict[str, torch.Tensor]:
        sd = model.state_dict()
        return {
            "global_ctx": sd["prompt_learner.ctx"][0].clone(),
            "personal_ctx": sd["prompt_learner.ctx"][1].clone(),
            "shared_adapter.w1": sd["shared_adapter.layer.0.weight"].clone(),
            "shared_adapter.w2": sd["shared_adapter.layer.2.weight"].clone(),
            "specific_adapter.w1": sd["specific_adapter.layer.0.weight"].clone(),
            "specific_adapter.w2": sd["specific_adapter.layer.2.weight"].clone(),
            "gate.w": sd["gate.wg.weight"].clone(),
        }

    images = torch.randn(8, 3, 32, 32)
    with torch.no_grad():
        official_logits = theirs(images)
        our_logits = ours.logits(clip_model.visual(images), state_of(theirs))
    logit_gap = float((official_logits - our_logits).abs().max())
    # the prompt layout: the released tokenized_prompts are ours with "x" in every context slot
    slots = torch.zeros_like(ours.bank.ids, dtype=torch.bool)
    for rows, cols in ours.bank.slots.values():
        slots[rows, cols] = True
    theirs_ids = theirs.tokenized_prompts
    x_id = tok.encode("x")[0]
    same_ids = bool(
        torch.equal(theirs_ids[~slots], ours.bank.ids[~slots])
        and (theirs_ids[slots] == x_id).all()
        and torch.equal(ours.bank.eot, theirs_ids.argmax(-1))
    )

    # one simulated round: two clients' locally trained states (here: perturbed copies), sizes 30 / 90
    sizes = [30, 90]
    local = []
    for k in range(2):
        s = state_of(theirs)
        local.append({key: v + 0.01 * (k + 1) * torch.randn_like(v) for key, v in s.items()})
    w = fedavg_weights(sizes)
    avg = aggregate(local, w, ("global_ctx", "shared_adapter.w1", "shared_adapter.w2"))
    agg_gap = 0.0
    for key in avg:
        official_avg = average_weights([local[0][key], local[1][key]], [0, 1], sizes, islist=True)
        agg_gap = max(agg_gap, float((official_avg - avg[key]).abs().max()))
    personalised = personalise(local[1], avg)
    local_kept = all(
        torch.equal(personalised[k], local[1][k])
        for k in ("personal_ctx", "specific_adapter.w1", "specific_adapter.w2", "gate.w")
    )

    # one local epoch, forward + backward + SGD step, the image encoder run by both (same batches)
    data = torch.randn(batches * batch, 3, 32, 32)
    labels = torch.randint(len(classes), (batches * batch,))
    trainable = [p for n, p in theirs.named_parameters()
                 if any(k in n for k in ("prompt_learner", "adapter", "gate"))]  # fmt: skip
    ids = {id(p) for p in trainable}
    for p in theirs.parameters():
        p.requires_grad_(id(p) in ids)
    opt = torch.optim.SGD(trainable, lr=1e-3, momentum=0.9, weight_decay=5e-4)
    t0 = time.perf_counter()
    for i in range(batches):
        sl = slice(i * batch, (i + 1) * batch)
        loss = torch.nn.functional.cross_entropy(theirs(data[sl]), labels[sl])
        opt.zero_grad()
        loss.backward()
        opt.step()
    official_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    with torch.no_grad():
        feats = clip_model.visual(
            data
        )  # ours caches features; timed here as the released code runs it
    client = Client("c", feats, labels, feats[:1], labels[:1])
    local_update(
        ours, state_of(theirs), client,
        LocalTraining("sgd", 1e-3, 0.9, 5e-4, batch, None, 1), torch.Generator().manual_seed(0),
    )  # fmt: skip
    ours_s = time.perf_counter() - t0
    return {
        "max_abs_logit_difference": logit_gap,
        "logits_equal_atol_1e-5": logit_gap <= 1e-5,
        "prompt_token_layout_equal": same_ids,
        "max_abs_aggregation_difference": agg_gap,
        "aggregation_equal": agg_gap <= 1e-7,
        "personal_parts_kept_local": local_kept,
        "official_epoch_seconds": official_s,
        "ours_epoch_seconds": ours_s,
        "ours_over_official": ours_s / official_s,
        "batches": batches,
        "batch": batch,
        "n_ctx": n_ctx,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--official", type=Path, help="checkout of MoratalYang/FedDDA (read only)")
    parser.add_argument(
        "--deps", type=Path, help="extra folder on sys.path (ftfy for their tokenizer)"
    )
    parser.add_argument("--n-ctx", type=int, default=4)
    parser.add_argument("--batches", type=int, default=10)
    parser.add_argument("--batch", type=int, default=32)
    args = parser.parse_args()
    if args.official is None:
        print("fedda anchor skipped: pass --official <checkout of MoratalYang/FedDDA>")
        return
    if args.deps:
        sys.path.insert(0, str(args.deps))
    torch.set_num_threads(1)
    print(json.dumps(run(args.official, args.n_ctx, args.batches, args.batch), indent=2))


if __name__ == "__main__":
    main()
