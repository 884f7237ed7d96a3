import json

import torch

from twopaths import chapter


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
