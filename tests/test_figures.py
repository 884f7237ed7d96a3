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


def _crowding(draw) -> list[str]:
    figures.apply()
    fig, ax = plt.subplots()
    draw(fig, ax)
    try:
        return figures.crowding(fig)
    finally:
        plt.close(fig)


def test_a_legend_over_a_line_is_found_even_between_its_vertices():
    # two vertices only, both outside the legend: the segment between them runs under it
    def draw(fig, ax):
        ax.plot([0, 1], [0.95, 0.95], label="a long flat line")
        ax.plot([0, 1], [0, 0.5], label="another")
        ax.set_ylim(0, 1)
        ax.legend(loc="upper center")
    found = _crowding(draw)
    assert len(found) == 1 and "the legend covers" in found[0] and "plotted points" in found[0], found


def test_a_legend_over_bars_is_found_and_one_beside_them_is_not():
    def over(fig, ax):
        ax.bar(range(5), [10] * 5, label="tall bars")
        ax.legend(loc="upper left")

    def beside(fig, ax):
        ax.bar(range(5), [1] * 5, label="short bars")
        ax.set_ylim(0, 10)
        ax.legend(loc="upper left")
    assert any("5 bars" in f or "bars" in f for f in _crowding(over))
    assert _crowding(beside) == []


def test_a_legend_outside_the_axes_covers_nothing():
    def draw(fig, ax):
        ax.plot([0, 1], [0, 1], label="diagonal")
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1))
    assert _crowding(draw) == []


def test_overlapping_tick_labels_and_colliding_titles_are_found():
    def ticks(fig, ax):
        ax.set_xticks(range(12), [f"a long tick label {i}" for i in range(12)])
    found = _crowding(ticks)
    assert found and "x tick labels" in found[0], found

    figures.apply()
    fig, (a, b) = plt.subplots(1, 2, figsize=(3, 2), layout=None)
    a.set_title("a rather long title on the left")
    b.set_title("and one on the right")
    found = figures.crowding(fig)
    plt.close(fig)
    assert any("overlap" in f and "title on the left" in f for f in found), found


def test_a_legend_over_an_axis_label_is_found_and_legend_outside_clears_the_data():
    def under_label(fig, ax):
        ax.plot([0, 1], [0, 1], label="diagonal")
        ax.set_xlabel("a label the legend sits on")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.02))
    found = _crowding(under_label)
    assert any("covers the text" in f for f in found), found

    def outside(fig, ax):
        x = [i / 20 for i in range(21)]
        for k in range(3):
            ax.plot(x, [1 - k / 10] * len(x), label=f"flat {k}")   # lines along the top, where legends sit
        ax.set_ylim(0, 1)
        figures.legend_outside(ax)
    assert _crowding(outside) == []


def test_labels_written_over_each_other_on_the_plot_are_found():
    def draw(fig, ax):
        ax.plot([0, 1], [0, 1])
        ax.annotate("first model's name", (0.5, 0.5))
        ax.annotate("second model's name", (0.52, 0.5))
        ax.annotate("far away", (0.05, 0.9))
    found = _crowding(draw)
    assert found == ["panel 1: the labels \"first model's name\" and \"second model's name\" on the plot overlap"], found


def test_a_legend_in_small_print_is_found():
    def draw(fig, ax):
        ax.plot([0, 1], [0, 0.1], label="low line")
        ax.set_ylim(0, 1)
        ax.legend(loc="upper right", fontsize=7)
    assert _crowding(draw) == ["panel 1: legend text at 7 pt, under 9"]


def test_legend_outside_below_clears_a_two_line_x_label():
    def draw(fig, ax):
        for k in range(4):
            ax.plot([0, 1], [k, k + 1], label=f"line {k}")
        ax.set_title("a panel title, so the legend goes below")
        ax.set_xlabel("a label\non two lines")
        figures.legend_outside(ax, ncol=2)
    assert _crowding(draw) == []


def test_legend_outside_takes_fewer_columns_than_asked_where_a_row_would_not_fit():
    figures.apply()
    fig, ax = plt.subplots()
    for k in range(4):
        ax.plot([0, 1], [k, k], label=f"a very long legend label that takes space, number {k}")
    leg = figures.legend_outside(ax, ncol=4)
    box = leg.get_window_extent()
    assert leg._ncols < 4 and box.x0 >= 0 and box.x1 <= fig.bbox.width
    plt.close(fig)
