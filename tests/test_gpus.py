"""The accelerators added for re-runs (GB200, GB300, MI300X, MI355X): each loads, carries its
sources, and gives the capacity and usable bytes the serving assumptions say it should."""

from dataclasses import replace

import pytest

from twopaths import specs
from twopaths.calc import fleet
from twopaths.specs.serving import assumptions

ADDED = ("gb200", "gb300", "mi300x", "mi355x")


@pytest.fixture(autouse=True)
def registry_untouched():
    """A corpus model the plan command resolves (Qwen--Qwen3-32B) leaves with the test: other test
    modules count the registry's entries."""
    models = set(specs._model_files())
    yield
    for key in set(specs._model_files()) - models:
        del specs._model_files()[key]


@pytest.mark.parametrize("gpu_id", ADDED)
def test_entry_loads_with_sources(gpu_id):
    g = specs.gpu(gpu_id)
    assert g.id == gpu_id and g.name
    for field in ("hbm_bytes", "hbm_bandwidth", "bf16_flops", "fp8_flops", "nvlink_bandwidth", "device_bytes"):
        assert isinstance(getattr(g, field), float) and getattr(g, field) > 0, field
    assert g.source and g.device_source and g.alternatives
    # FP4 throughput and GPUs per node have no field of their own: the source must name them.
    assert "FP4" in g.source and ("GPUs a" in g.source or "accelerators_per_node" in g.source)


@pytest.mark.parametrize("gpu_id", ADDED)
def test_dense_fp8_is_twice_bf16(gpu_id):
    # Every one of these parts doubles its dense rate from BF16 to FP8; a sparse figure typed in
    # for one of them (twice the dense) would break the ratio.
    g = specs.gpu(gpu_id)
    assert g.fp8_flops == pytest.approx(2 * g.bf16_flops, rel=1e-3)


@pytest.mark.parametrize("gpu_id, device_gb", [("gb200", 198.67), ("gb300", 298.01), ("mi300x", 206.14),
                                               ("mi355x", 288.0)])
def test_capacity_follows_the_convention(gpu_id, device_gb):
    g = specs.gpu(gpu_id)
    book = assumptions("book")
    assert book.capacity_bytes(g) == g.device_bytes == pytest.approx(device_gb * 1e9, rel=1e-4)
    assert book.capacity_bytes(gpu_id) == g.device_bytes                # by id too
    assert book.usable_bytes(g) == g.device_bytes       # all of it; the runtime reserve comes out of it
    assert book.but(usable_fraction=0.9).usable_bytes(g) == pytest.approx(0.9 * g.device_bytes)
    nominal = book.but(capacity="nominal")
    assert nominal.capacity_bytes(g) == g.hbm_bytes
    assert nominal.but(usable_fraction=0.5).usable_bytes(g) == pytest.approx(0.5 * g.hbm_bytes)
    # What the driver exposes sits within 10% of the datasheet figure (GiB read as GB both ways).
    assert 0.9 < g.device_bytes / g.hbm_bytes < 1.1


def test_a_gpu_without_a_driver_figure_is_refused_under_device_capacity(raises_param):
    g = replace(specs.gpu("mi355x"), device_bytes=None)
    raises_param("capacity", assumptions("book").capacity_bytes, g)
    assert assumptions("book", capacity="nominal").capacity_bytes(g) == 288e9


def test_more_memory_means_fewer_nodes():
    # V4-Pro at the article's workload: the GB300's 298 GB holds more requests a GPU than the
    # GB200's 199 GB, so its plan needs fewer nodes; both plans are valid.
    a, work = assumptions("book"), fleet.workload(rho=0.25)
    small, big = fleet.plan("deepseek-v4-pro", "gb200", a, work), fleet.plan("deepseek-v4-pro", "gb300", a, work)
    assert big.decode.requests > small.decode.requests
    assert big.nodes < small.nodes
    mi = fleet.plan("deepseek-v4-pro", "mi300x", a, work)
    assert mi.decode.usable == 206141652992


# The five parts added for practitioners, each figure typed by hand from the datasheet its entry
# names (per-direction link rates: half the bidirectional figure a datasheet prints). fp8 None: the
# part has no FP8 tensor cores.
PRACTITIONER = {
    # id: (HBM bytes, HBM bytes/s, dense BF16, dense FP8, link a direction, device bytes, GPUs a node, scale-up)
    "a100-40gb": (40e9, 1555e9, 312e12, None, 300e9, 40960 * 2**20, 8, "fabric"),
    "a100-80gb": (80e9, 2039e9, 312e12, None, 300e9, 81920 * 2**20, 8, "fabric"),
    "l40s": (48e9, 864e9, 362.05e12, 733e12, 32e9, 46068 * 2**20, 8, "pcie"),
    "h20": (96e9, 4.0e12, 148e12, 296e12, 450e9, 97_871 * 2**20, 8, "fabric"),     # nvidia-smi 97,871 MiB
    "mi325x": (256e9, 6.0e12, 1307.4e12, 2614.9e12, 448e9, 256e9, 8, "fabric"),
}


@pytest.mark.parametrize("gpu_id", PRACTITIONER)
def test_practitioner_gpus_carry_their_datasheet_figures(gpu_id):
    hbm, bw, bf16, fp8, link, device, per_node, scale_up = PRACTITIONER[gpu_id]
    g = specs.gpu(gpu_id)
    assert (g.hbm_bytes, g.hbm_bandwidth, g.bf16_flops, g.fp8_flops) == (hbm, bw, bf16, fp8)
    assert (g.nvlink_bandwidth, g.device_bytes, g.gpus_per_node, g.scale_up) == (link, device, per_node, scale_up)
    assert g.name and g.source and g.alternatives and g.device_source and g.node_source
    assert "FP4" in g.source                                # none of the five has FP4; the source says so
    assert "dense" in g.source and ("sparsity" in g.source or "sparse" in g.source or gpu_id == "h20")
    assert 0.9 < g.device_bytes / g.hbm_bytes < 1.1


def test_weak_figures_say_so():
    # The H20 has no public NVIDIA datasheet, the L40S's node size and NIC come from no reference
    # design, the MI325X's per-link rate is the MI300X's: each entry says which.
    assert specs.gpu("h20").source.startswith("weak")
    assert "weak" in specs.gpu("h20").node_source and "weak" in specs.gpu("l40s").node_source
    assert "weakly sourced" in specs.gpu("l40s").source and "weak" in specs.gpu("mi325x").source
    assert "97,871 MiB" in specs.gpu("h20").device_source and "none found" in specs.gpu("mi325x").device_source


@pytest.mark.parametrize("gpu_id", ["l40s", "h20", "mi325x"])
def test_dense_fp8_doubles_bf16_where_there_is_fp8(gpu_id):
    # The L40S datasheet's own table is 1.2% off a doubling (BF16 362.05, sparse 733; FP8 733): its
    # figures are kept as printed, and a sparse figure typed in for a dense one (2x) still fails.
    g = specs.gpu(gpu_id)
    assert g.flops("fp8") == g.fp8_flops == pytest.approx(2 * g.flops("bf16"), rel=0.015)


@pytest.mark.parametrize("gpu_id", ["a100-40gb", "a100-80gb"])
def test_a_format_a_gpu_lacks_is_refused_by_name(gpu_id, raises_param):
    from twopaths.calc import prefill
    g = specs.gpu(gpu_id)
    assert g.flops("bf16") == 312e12
    err = raises_param("dtype", g.flops, "fp8")
    assert g.name in str(err) and gpu_id in str(err) and "bf16" in err.allowed
    # A bound that reads the FP8 rate refuses it too, never dividing by 0 or None ...
    raises_param("dtype", prefill.ttft_bound, "deepseek-v4-pro", gpu_id, 1000, 8)
    # ... and one that asks for BF16 is priced at the BF16 rate.
    t = prefill.ttft_bound("deepseek-v4-pro", gpu_id, 1000, 8, dtype="bf16")
    assert t == prefill.time_bound(prefill.matmul_flops(prefill._activated("deepseek-v4-pro", "stated"), 1000),
                                   8, 312e12)


def _plan_json(capsys, *argv) -> dict:
    import json
    from twopaths import plan as cli
    status = cli.main([*argv, "--format", "json"])
    out = capsys.readouterr().out
    assert status == 0
    return json.loads(out)


@pytest.mark.parametrize("gpu_id", PRACTITIONER)
def test_the_plan_command_takes_each_new_gpu(capsys, gpu_id):
    r = _plan_json(capsys, "Qwen--Qwen3-32B", "--gpu", gpu_id, "--context", "32K", "--concurrency", "1000")
    assert r["gpu"] == gpu_id and r["best"] is not None and r["plans"]
    assert r["scale_up"] == PRACTITIONER[gpu_id][7]
    for p in r["placements"]:                               # every placement shown fits its GPU
        assert p["used_bytes_per_gpu"] <= p["usable_bytes"]


def test_qwen3_32b_fits_one_a100_80gb(capsys):
    # 65.5 GB of BF16 weights and one 32K-token request (8.4 GB) fit the 85.9 GB the driver
    # exposes; the 40 GB part needs two GPUs at least.
    big = _plan_json(capsys, "Qwen--Qwen3-32B", "--gpu", "a100-80gb", "--context", "32K", "--concurrency", "1000")
    assert "dense, one GPU" in {p["placement"] for p in big["plans"]}
    small = _plan_json(capsys, "Qwen--Qwen3-32B", "--gpu", "a100-40gb", "--context", "32K", "--concurrency", "1000")
    assert "dense, one GPU" not in {p["placement"] for p in small["plans"]}


def test_a_pcie_node_is_no_nvlink_domain(capsys):
    from twopaths.calc import all_to_all
    from twopaths.views import plan_report
    l40s, h200 = specs.gpu("l40s"), specs.gpu("h200")
    # Within a node the all-to-all moves no more than the GPUs' own link carries: PCIe Gen4 x16,
    # 32 GB/s a direction, below DeepEP's EP8 row (98 / 127 GB/s on NVLink, scaled to the NIC) ...
    assert all_to_all.bandwidths(8, 8, l40s) == (32e9, 32e9)
    # ... while an NVLink node keeps the measured row, and across nodes the NIC rules either way.
    assert all_to_all.bandwidths(8, 8, h200) == (98e9, 127e9)
    assert all_to_all.bandwidths(16, 8, l40s) == pytest.approx((63e9 / 2, 74e9 / 2))
    # DCP's merge goes over the same 32 GB/s, and the table says the node is PCIe alone.
    a, work = assumptions("book"), fleet.workload(1000, 32_000)
    p = fleet.plan(_registered_qwen(), "l40s", a, work)
    from twopaths.calc import decode
    assert decode.plan_step(p).link_bandwidth == 32e9
    r = _plan_json(capsys, "Qwen--Qwen3-32B", "--gpu", "l40s", "--context", "32K", "--concurrency", "1000")
    assert (r["scale_up"], r["scale_up_bandwidth"]) == ("pcie", 32e9)
    text = plan_report.table(r)
    assert "has no NVLink" in text and "32 GB/s a direction" in text
    assert "has no NVLink" not in plan_report.table(
        _plan_json(capsys, "Qwen--Qwen3-32B", "--gpu", "a100-80gb", "--context", "32K", "--concurrency", "1000"))


def _registered_qwen() -> str:
    from twopaths.specs.lookup import resolve_model
    return resolve_model("Qwen--Qwen3-32B")
