"""The book's figure style: plain log-axis labels and a figure the width of the column."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from twopaths.machinery import chapter, figures  # noqa: E402
from twopaths.errors import ParameterError  # noqa: E402


@pytest.mark.parametrize("value, si, label", [
    (0.5, True, "0.5"), (6, True, "6"), (30, True, "30"), (4000, True, "4k"), (1e6, True, "1M"),
    (2.5e9, True, "2.5G"), (1e-7, True, "$10^{-7}$"), (2e-5, True, "$2\\times10^{-5}$"),
    (1e8, False, "$10^{8}$"), (5000, False, "5000"), (0, True, "0"),
])
def test_plain_labels(value, si, label):
    assert figures.plain(value, si=si) == label


def test_log_axis_labels_a_short_range_in_plain_decimals():
    fig, ax = plt.subplots()
    ax.plot([6, 60], [6, 60])
    figures.log_axis(ax, "x")
    fig.canvas.draw()
    labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert labels and "10" in labels and not any("times" in t or "^" in t for t in labels), labels
    plt.close(fig)


def test_log_axis_refuses_a_third_axis():
    fig, ax = plt.subplots()
    with pytest.raises(ParameterError, match="which"):
        figures.log_axis(ax, "z")
    plt.close(fig)


def test_setup_applies_the_style_the_column_takes():
    matplotlib.rcParams["figure.figsize"] = (12, 4)
    chapter.setup("smoke", "cpu")
    width, _ = matplotlib.rcParams["figure.figsize"]
    assert width * matplotlib.rcParams["figure.dpi"] <= figures.MAX_PX
    assert matplotlib.rcParams["savefig.facecolor"] == "white" and not matplotlib.rcParams["savefig.transparent"]
    assert matplotlib.rcParams["xtick.labelsize"] >= 9 and matplotlib.rcParams["legend.fontsize"] >= 9
