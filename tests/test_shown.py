"""What a chapter shows is what its results file records: ``chapter.show`` glues every cell of a
``report.Table`` and ``chapter.glue_figure`` every point a figure draws, read back by the runner
exactly as the prose's glued values are."""

import ast
import math

import pytest

from twopaths.machinery import chapter
from twopaths.machinery.report import Column, table
from twopaths.machinery.variation import EXACT, rounding


@pytest.fixture
def glued(monkeypatch):
    """The glued values, read back the way ``runner.glued`` reads an executed notebook."""
    out = {}

    def display(obj, raw, metadata):
        text = next(v for k, v in obj.items() if k.endswith("text/plain"))
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            value = text
        out[metadata["scrapbook"]["name"]] = (value, metadata["twopaths"]["unit"],
                                              metadata["twopaths"]["vary"]["kind"])
    monkeypatch.setattr("IPython.display.display", display)
    return out


T = table("Nodes on H200", ["model", Column("nodes", "nodes", "{:,}"),
                            Column("weights", "GB", "{:.1f} GB")],
          [["Kimi K3", 1176, 88.66], ["DeepSeek-V4-Pro", "no valid plan", None]])


def test_show_displays_the_formatted_table(glued):
    text = chapter.show("plans", T).data
    assert text.startswith('<a id="tbl-plans"></a>**Nodes on H200**')   # the anchor prose cites it by
    assert "| Kimi K3 | 1,176 | 88.7 GB |" in text
    assert "| DeepSeek-V4-Pro | no valid plan | n/a |" in text


def test_show_records_every_cell_with_its_unit(glued):
    chapter.show("plans", T)
    assert glued["plans.title"] == ("Nodes on H200", "text", "exact")
    assert glued["plans[0].nodes"] == (1176, "nodes", "exact")
    assert glued["plans[0].weights"] == (88.66, "GB", "exact")      # the value, not its rounding
    assert glued["plans[1].nodes"] == ("no valid plan", "text", "exact")   # words in a number column
    assert glued["plans[1].weights"] == (None, "text", "exact")
    assert len(glued) == 1 + 2 * 3


def test_a_row_of_the_wrong_length_is_refused():
    with pytest.raises(ValueError, match="one cell per column"):
        table("t", ["a", "b"], [[1]])


def test_glue_figure_records_the_series_and_drops_points_not_drawn(glued):
    chapter.glue_figure("fig", "Nodes against context", [1, 2, 3], "K tokens",
                        {"K3": [10.0, math.inf, 30.0]}, "nodes")
    assert glued["fig.title"][0] == "Nodes against context"
    assert glued["fig.x"] == ([1, 2, 3], "K tokens", "exact")
    assert glued["fig[K3]"] == ([10.0, None, 30.0], "nodes", "exact")
    with pytest.raises(ValueError, match=r"fig\[V4\]: 2 points against 3"):
        chapter.glue_figure("fig", "t", [1, 2, 3], "K", {"V4": [1, 2]}, "nodes")


def test_series_are_compared_point_by_point_within_their_tolerance():
    assert EXACT.agrees([1, 2.0, None], [1, 2.0, None])
    assert not EXACT.agrees([1, 2.0], [1, 2.0 + 1e-9])
    assert not EXACT.agrees([1, 2], [1, 2, 3])
    assert rounding(1e-6).agrees([1.0, 2.0], [1.0, 2.0 + 1e-7])
    assert not rounding(1e-6).agrees([1.0, 2.0], [1.0, 2.1])


WIDE = table("Plans", ["model", "GPU", *(Column(f"c{i}", "nodes", "{:,}") for i in range(8))],
             [["Kimi K3", "H200", *range(1000, 1008)], ["DeepSeek-V4-Pro", "B300", *range(8)]])


def test_a_wide_table_of_few_rows_is_shown_on_its_side(glued):
    text = chapter.show("wide", WIDE).data
    lines = text.split("\n\n")[1].split("\n")
    assert WIDE.sideways and len(lines) == 2 + 8          # header, rule, one row a numeric column
    assert lines[0] == "|  | Kimi K3, H200 | DeepSeek-V4-Pro, B300 |"   # the rows' names head their columns
    assert lines[2] == "| c0 | 1,000 | 0 |" and lines[-1] == "| c7 | 1,007 | 7 |"   # in the columns' order
    assert glued["wide[0].c7"] == (1007, "nodes", "exact")   # recorded as the table, not as shown


def test_a_table_at_the_limits_is_shown_as_it_is():
    at_columns = table("t", [Column(f"c{i}", "nodes") for i in range(8)], [list(range(8))])
    six_rows = table("t", ["name", *(f"c{i}" for i in range(8))], [[f"r{j}", *range(8)] for j in range(6)])
    assert not at_columns.sideways and not six_rows.sideways
    assert at_columns.markdown().data.split("\n")[2].startswith("| c0 | c1 |")
    # all numbers: the first column names the rows
    numeric = table("t", [Column(f"c{i}", "nodes") for i in range(9)], [list(range(9))])
    assert numeric.markdown().data.split("\n")[2] == "|  | 0 |"


def test_a_split_table_shows_one_table_per_value_of_its_first_column(glued):
    t = table("Weights", ["weights", "model", Column("GB", "GB", "{:.0f} GB")],
              [["as shipped", "Kimi K3", 594.5], ["as shipped", "V4-Pro", 865.2], ["all BF16", "Kimi K3", 2060.0]],
              split=True)
    text = chapter.show("w", t).data
    assert text.count("| model | GB |") == 2 and "| weights |" not in text   # the value heads its table
    # each part titled, so the site numbers each; the anchor prose cites is on the first
    assert text.startswith('<a id="tbl-w"></a>**Weights (weights: as shipped)**\n\n| model | GB |\n|---|---|\n'
                           "| Kimi K3 | 594 GB |\n| V4-Pro | 865 GB |\n\n**Weights (weights: all BF16)**")
    assert text.endswith("| Kimi K3 | 2060 GB |") and text.count("<a id=") == 1
    assert glued["w[2].weights"] == ("all BF16", "text", "exact") and glued["w[2].GB"] == (2060.0, "GB", "exact")
