"""What the chapters' re-run tests share: the figures of a made-up GPU, and one chapter executed in
the smoke profile with a reader's parameters, read back as the values its results file holds."""

from pathlib import Path

from twopaths.machinery import runner

# A made-up accelerator: HBM bytes, bytes/s, dense BF16 and FP8 FLOP/s, link bytes/s a direction.
FIGURES = {"hbm_bytes": 192e9, "hbm_bandwidth": 8e12, "bf16_flops": 2.5e15, "fp8_flops": 5e15,
           "nvlink_bandwidth": 900e9}
MY_GPU = {"my-gpu": FIGURES}
NO_HBM = {"my-gpu": {k: v for k, v in FIGURES.items() if k != "hbm_bytes"}}


def entries(nb: Path, out_dir: Path, params: dict) -> dict:
    """``nb`` run uncached in smoke on the CPU with ``params``: each glued name's value, unit and
    tolerance. A chapter that stops raises ``runner.RunError`` naming the cell and the error."""
    result = runner.run(profile="smoke", device="cpu", notebooks=[nb], params=params, out_dir=out_dir,
                        use_cache=False)
    return result["notebooks"][nb.stem]["values"]


def values(nb: Path, out_dir: Path, params: dict) -> dict:
    """``entries`` as ``{name: value}``."""
    return {k: v["value"] for k, v in entries(nb, out_dir, params).items()}
