"""NeGo-R's assembly, its ablation switches and the weighted total loss on a toy batch."""

import pytest
import torch

from paper_pipelines.pipelines.nego import framework, training


def _batch(n_graphs=6):
    from torch_geometric.data import Batch, Data

    graphs = []
    for i in range(n_graphs):
        n = 4 + i % 3
        src = torch.arange(n - 1)
        ei = torch.stack([torch.cat([src, src + 1]), torch.cat([src + 1, src])])
        order = torch.argsort(ei[0] * n + ei[1])
        ei = ei[:, order]
        gt = (ei[0] >= n - 2).float() * (ei[1] >= n - 2).float()
        graphs.append(
            Data(
                x=torch.ones(n, 1),
                edge_index=ei,
                edge_gt=gt,
                y=torch.tensor([i % 3]),
                env=torch.tensor([i % 2]),
                num_nodes=n,
            )
        )
    return Batch.from_data_list(graphs)


def test_variant_table():
    assert framework.variant_of("nego_r", "film") == framework.Variant(True, "film", True)
    assert framework.variant_of("nego_r_no_np") == framework.Variant(False, "none", True)
    assert framework.variant_of("nego_r_no_ee") == framework.Variant(True, "none", True)
    assert framework.variant_of("nego_r_no_inv", "concat") == framework.Variant(
        True, "concat", False
    )
    assert framework.variant_of("gsat_lite") == framework.Variant(False, "none", False)
    with pytest.raises(ValueError, match="not an extractor method"):
        framework.variant_of("erm")


def test_pool_kinds():
    h = torch.tensor([[1.0], [3.0], [5.0]])
    batch = torch.tensor([0, 0, 1])
    assert framework.pool(h, batch, "mean", 2).flatten().tolist() == [2.0, 5.0]
    assert framework.pool(h, batch, "sum", 2).flatten().tolist() == [4.0, 5.0]
    assert framework.pool(h, batch, "max", 2).flatten().tolist() == [3.0, 5.0]


def test_forward_shapes_and_the_no_prompt_environment_is_zero():
    torch.manual_seed(0)
    data = _batch()
    model = framework.NeGoR(1, 3, 8, 2, framework.variant_of("nego_r")).eval()
    out = model(data)
    assert out["logits"].shape == (6, 3) and out["env"].shape == (6, 8)
    assert out["mask"].shape == (data.edge_index.shape[1],)
    assert ((out["mask"] > 0) & (out["mask"] < 1)).all()
    assert out["env"].abs().sum() > 0 and model.env_encoder is not None
    plain = framework.NeGoR(1, 3, 8, 2, framework.variant_of("gsat_lite")).eval()
    assert torch.equal(plain(data)["env"], torch.zeros(6, 8))
    assert plain.prompts is None and plain.env_encoder is None


def test_shared_encoder_reads_the_extractor_without_gradient():
    torch.manual_seed(0)
    data = _batch()
    model = framework.NeGoR(
        1, 3, 8, 2, framework.variant_of("nego_r"), encoder="shared_detached"
    ).eval()
    assert model.env_encoder is None
    out = model(data)
    out["env"].sum().backward()
    assert all(p.grad is None for p in model.extractor.parameters())
    assert model.prompts.prompts.grad is not None


def test_eval_masks_are_deterministic_and_symmetric():
    torch.manual_seed(0)
    data = _batch()
    model = framework.NeGoR(1, 3, 8, 2, framework.variant_of("nego_r")).eval()
    m1, m2 = model(data)["mask"], model(data)["mask"]
    assert torch.equal(m1, m2)
    ei = data.edge_index
    lookup = {(int(a), int(b)): float(v) for a, b, v in zip(ei[0], ei[1], m1.detach(), strict=True)}
    assert all(abs(lookup[(a, b)] - lookup[(b, a)]) < 1e-6 for a, b in lookup)
    model.train()
    t1 = model(data, generator=torch.Generator().manual_seed(0))["mask"]
    t2 = model(data, generator=torch.Generator().manual_seed(1))["mask"]
    assert not torch.allclose(t1, t2)  # concrete sampling in training


def test_swapped_environment_changes_the_conditioned_masks_only():
    torch.manual_seed(0)
    data = _batch()
    model = framework.NeGoR(1, 3, 8, 2, framework.variant_of("nego_r")).eval()
    out = model(data)
    other = out["env"] + 3.0 * torch.randn_like(out["env"])
    assert not torch.allclose(model.swapped_logits(data, out, other), out["logits"], atol=1e-4)
    assert torch.allclose(model.swapped_logits(data, out, out["env"]), out["logits"])
    blind = framework.NeGoR(1, 3, 8, 2, framework.variant_of("nego_r_no_ee")).eval()
    bout = blind(data)
    assert torch.allclose(blind.swapped_logits(data, bout, bout["env"] + 3.0), bout["logits"])


def test_total_loss_terms_per_variant():
    torch.manual_seed(0)
    data = _batch()
    weights = framework.LossWeights()
    for method, terms in [
        ("nego_r", {"ce", "ib", "neg", "cov", "div", "inv"}),
        ("nego_r_no_inv", {"ce", "ib", "neg", "cov", "div"}),
        ("nego_r_no_np", {"ce", "ib", "inv"}),
        ("gsat_lite", {"ce", "ib"}),
    ]:
        model = framework.NeGoR(1, 3, 8, 2, framework.variant_of(method)).train()
        loss, parts = framework.total_loss(model, data, weights, torch.Generator().manual_seed(0))
        assert set(parts) == terms, method
        assert loss.requires_grad
    vrex = framework.LossWeights(vrex=True, num_pseudo_envs=2)
    _, parts = framework.total_loss(
        framework.NeGoR(1, 3, 8, 2, framework.variant_of("nego_r")),
        data,
        vrex,
        torch.Generator().manual_seed(0),
    )
    assert "vrex" in parts


def test_total_loss_is_the_weighted_sum():
    torch.manual_seed(0)
    data = _batch()
    model = framework.NeGoR(
        1, 3, 8, 2, framework.variant_of("nego_r"), sampling="deterministic"
    ).train()
    w = framework.LossWeights(
        lambda_neg=0.3, lambda_inv=0.7, lambda_ib=0.2, lambda_cov=2.0, lambda_div=5.0
    )
    gen = torch.Generator().manual_seed(0)
    loss, parts = framework.total_loss(model, data, w, gen)
    expected = (
        parts["ce"]
        + 0.3 * parts["neg"]
        + 0.7 * parts["inv"]
        + 0.2 * parts["ib"]
        + 2.0 * parts["cov"]
        + 5.0 * parts["div"]
    )
    assert loss.item() == pytest.approx(expected, rel=1e-5)
    ent = framework.LossWeights(neg_mode="entropy")
    _, eparts = framework.total_loss(model, data, ent, torch.Generator().manual_seed(0))
    assert eparts["neg"] != pytest.approx(parts["neg"])


def test_training_runs_and_selects_an_epoch():
    data = [d for d in _batch(8).to_data_list()]
    for method in ("erm", "vrex_oracle", "nego_r"):
        cfg = training.RunConfig(
            method=method,
            num_classes=3,
            hidden=8,
            layers=2,
            pool="mean",
            dropout=0.0,
            epochs=3,
            batch_size=4,
            lr=0.01,
            weight_decay=0.0,
            eval_every=1,
            patience=1,
            select_on="ood_val",
        )
        out = training.fit(cfg, data, {"ood_val": data[:4], "id_val": data[4:]}, seed=0)
        log = out["log"]
        assert 1 <= out["epoch"] <= 3 and out["epoch"] == int(log.epoch[log.acc_ood_val.idxmax()])
        assert len(log) <= 3 and "loss_ce" in log
        pred = training.predict(out["model"], data, 4, "cpu")
        assert pred["pred"].shape == (8,)
        assert ("mask" in pred) == (method == "nego_r")
    assert training.labels_of(data).tolist() == [0, 1, 2, 0, 1, 2, 0, 1]
