"""The figures tell their methods apart (the name hash alone gives parametric and OC one colour)."""

import pandas as pd

from paper_pipelines.pipelines.si_pipeline.figures import null_qq_figure, power_figure


def test_power_bars_of_parametric_and_oc_differ_in_colour():
    power = pd.DataFrame({"dag": ["op1"], "delta": [0.4], "parametric": [0.6], "oc": [0.3]})
    ax = power_figure(power, {}, 0.05).axes[0]
    colours = {tuple(c.patches[0].get_facecolor()) for c in ax.containers}
    assert len(colours) == 2


def test_qq_plot_draws_each_method_in_its_own_colour():
    null = pd.DataFrame(
        {
            "sigma_mode": ["known"] * 3,
            "p_parametric": [0.1, 0.5, 0.9],
            "p_oc": [0.2, 0.4, 0.8],
            "p_naive": [0.01, 0.02, 0.3],
        }
    )
    ax = null_qq_figure(null).axes[0]
    methods = [line for line in ax.lines if line.get_label() in ("parametric", "OC", "naive")]
    assert len({line.get_color() for line in methods}) == 3
