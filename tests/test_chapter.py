import json

import pytest
import torch

from twopaths.machinery import chapter


def test_setup_checks_profile_and_device(raises_param):
    raises_param("profile", chapter.setup, "huge", "auto")
    raises_param("device", chapter.setup, "default", "tpu")
    if not torch.cuda.is_available():
        err = raises_param("device", chapter.setup, "default", "cuda")
        assert "'cpu'" in str(err)
    assert chapter.setup("smoke", "cpu").device.type == "cpu"


def test_setup_seeds():
    chapter.setup("smoke", "cpu", seed=3)
    a = torch.rand(3)
    chapter.setup("smoke", "cpu", seed=3)
    assert torch.equal(a, torch.rand(3))


def test_glue_writes_myst_nb_glue_with_unit(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj, raw, metadata: shown.append((obj, metadata)))
    import numpy as np

    chapter.glue("x", np.int64(61440), "B")
    data, meta = shown[0]
    assert meta["scrapbook"]["name"] == "x"
    assert meta["twopaths"] == {"unit": "B", "vary": {"kind": "exact"}}
    assert list(data.values()) == ["61440"]     # a plain number, not "np.int64(61440)"
    json.dumps(meta)


def test_glue_uses_the_prefix_myst_nb_reads():
    # chapter spells the prefix so that a chapter runs without myst-nb; the site reads it with myst-nb
    from myst_nb.ext.glue import GLUE_PREFIX

    assert chapter.GLUE_PREFIX == GLUE_PREFIX


def test_each_profile_runs_its_experiments_over_distinct_seeds():
    seeds = {p: chapter.setup(p, "cpu").seeds for p in chapter.PROFILES}
    assert seeds == {"smoke": (0, 1), "default": (0, 1, 2), "gpu": (0, 1, 2, 3, 4)}
    assert chapter.setup("smoke", "cpu", seed=7).seeds == (7, 8)   # the chapter's seed comes first


def test_glue_bound_glues_the_bound_and_refuses_a_value_above_it(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj, raw, metadata: shown.append((obj, metadata)))
    chapter.glue_bound("diff", 3e-8, 1e-5, "1")
    data, meta = shown[0]
    assert list(data.values()) == ["'1e-5'"] and meta["twopaths"]["vary"] == {"kind": "bound", "limit": 1e-5}
    with pytest.raises(AssertionError, match="diff: 0.001 1 is not below the stated bound 1e-05"):
        chapter.glue_bound("diff", 1e-3, 1e-5, "1")
