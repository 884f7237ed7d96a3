"""The accelerators added for re-runs (GB200, GB300, MI300X, MI355X): each loads, carries its
sources, and gives the capacity and usable bytes the serving assumptions say it should."""

from dataclasses import replace

import pytest

from twopaths import specs
from twopaths.calc import fleet
from twopaths.specs.serving import assumptions

ADDED = ("gb200", "gb300", "mi300x", "mi355x")


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
