"""Checks for the hardware figures and the ratios the article draws from them (``hardware.yaml``).

Article: the accelerator facts of ``specs/gpus.yaml`` (the datasheet values the article uses too),
its deployment assumptions (``specs/deployment.yaml``: one byte a parameter, 104B and 49B activated,
8 GPUs a node) and the figures it carries from one step to the next (``calc.request``'s "stated"
basis with the article's rounding: a 500K-token request of 30.9 GB and 6.1 GB). Public: the configs'
activated parameters in their shipped formats, and the caches the configs define.
"""

from __future__ import annotations

from ...calc import cost, kv, placement
from ...calc.article_fleet import article_plan
from ...calc.disagg import link_bandwidth
from ...calc.request import activated_weight_bytes, model_weight_bytes
from ...calc.weights import WEIGHT_FORMATS
from ...specs import gpu
from ...specs.deployment import deployment, hardware
from ...specs.params import param_counts
from ...specs.serving import assumptions
from .. import all_claims
from ..audit import check
from .kv_cache import art, pub, request

K3, PRO = "kimi-k3", "deepseek-v4-pro"


def hbm(gpu_id: str) -> float:
    return gpu(gpu_id).hbm_bytes


def bandwidth(gpu_id: str) -> float:
    return gpu(gpu_id).hbm_bandwidth


def active_share(model: str, gpu_id: str, basis: str = "stated") -> float:
    """Activated weight bytes over one GPU's HBM: the article's 141 GB / 288 GB, or under the public
    configs the bytes the book's serving assumptions give weights plus cache (specs.serving)."""
    room = hbm(gpu_id) if basis == "stated" else placement.cache_capacity(gpu_id, assumptions("book"))
    return activated_weight_bytes(model, basis) / room


# ---- Number formats ----

check("bf16-bytes")(lambda: kv.FORMATS["bf16"].value_bytes)
check("fp8-bytes", public=lambda: model_weight_bytes(K3, "public") / param_counts(K3).total,
      explain="public: K3's checkpoint as shipped (MXFP4 routed experts, BF16 elsewhere), scales included, per parameter")(
    lambda: WEIGHT_FORMATS["fp8"].bits / 8)

# ---- H200, B300 and the links (per GPU unless the claim says node) ----


def datasheet(claim_id: str, value, **explained):
    """Register a figure the article takes from a GPU's datasheet: both columns read specs/gpus.yaml,
    so the inputs judgment compares the printed figure with the spec sheet."""
    check(claim_id, public=value, basis="the datasheet figures of specs/gpus.yaml", **explained)(value)


# The claim names the datasheet's HBM; what a serving engine is given of it is a fact of the claims
# that divide by it (specs/alternatives.yaml h200-capacity), not of this one.
datasheet("h200-hbm", lambda: hbm("h200"))
datasheet("h200-bandwidth", lambda: bandwidth("h200"))
check("hgx-h200-gpus-per-node", public=lambda: gpu("h200").gpus_per_node, fact=True,
      basis=gpu("h200").node_source, cite=gpu("h200").node_source)(lambda: gpu("h200").gpus_per_node)
check("dgx-b300-gpus-per-node", public=lambda: gpu("b300").gpus_per_node, fact=True,
      basis=gpu("b300").node_source, cite=gpu("b300").node_source)(lambda: gpu("b300").gpus_per_node)
check("ib-bandwidth", public=lambda: gpu("h200").scale_out_bandwidth, fact=True,
      basis="one 400 Gb/s NIC a GPU in an HGX H200 (specs/gpus.yaml scale_out_bandwidth)",
      cite="specs/gpus.yaml h200 scale_out_bandwidth: one ConnectX-7 400 Gb/s NIC a GPU (AIConfigurator "
           "systems/h200_sxm.yaml inter_node_bw)")(lambda: gpu("h200").scale_out_bandwidth)
datasheet("h200-nvlink-bandwidth", lambda: 2 * gpu("h200").nvlink_bandwidth,
          explain="per GPU, both directions together (450 GB/s each way)",
          reasoning="900 GB/s is one GPU's NVLink bandwidth, not the node's aggregate the claim names "
                    "(8 times that), which is the basis of B300's 14.4 TB/s beside it")
check("ib-link-bytes")(lambda: link_bandwidth(all_claims()["ib-bandwidth"].value))
datasheet("b300-hbm", lambda: hbm("b300"))
datasheet("b300-bandwidth", lambda: bandwidth("b300"))
datasheet("dgx-b300-hbm", lambda: hardware().gpus_per_node * hbm("b300"))
datasheet("b300-nvlink-bandwidth", lambda: hardware().gpus_per_node * 2 * gpu("b300").nvlink_bandwidth,
          explain="per node: 8 GPUs x 1.8 TB/s, where the H200 figure is per GPU")
datasheet("b300-over-h200-memory", lambda: hbm("b300") / hbm("h200"))
datasheet("b300-over-h200-bandwidth", lambda: bandwidth("b300") / bandwidth("h200"),
          explain="8 / 4.8 = 1.67, which one printed digit rounds to 2; the 28 to 17 ms beside it is that 1.67")

# ---- Activated weights against HBM ----

ACTIVE_NOT_RESIDENT = "activated bytes are what a decode step reads; what a GPU must hold is its share of all the weights"
check("k3-active-share-h200", public=lambda: active_share(K3, "h200", "public"), explain=ACTIVE_NOT_RESIDENT,
      reasoning=ACTIVE_NOT_RESIDENT)(lambda: active_share(K3, "h200"))
check("k3-active-share-b300", public=lambda: active_share(K3, "b300", "public"), explain=ACTIVE_NOT_RESIDENT,
      reasoning=ACTIVE_NOT_RESIDENT)(lambda: active_share(K3, "b300"))
check("v4-active-share-h200", public=lambda: active_share(PRO, "h200", "public"), explain=ACTIVE_NOT_RESIDENT,
      reasoning=ACTIVE_NOT_RESIDENT)(lambda: active_share(PRO, "h200"))

# ---- Unit inference cost ----

check("decode-bandwidth-ratio", public=lambda: cost.bandwidth_ratio(PRO, K3, basis="public"))(
    lambda: cost.bandwidth_ratio(PRO, K3, rounding="article"))
def fleet_ratio(gpu_id: str = "h200") -> float:
    """DSV4's nodes over K3's for the same 10,000 sessions, as the article's own fleet counts them."""
    return article_plan(PRO, gpu_id).nodes / article_plan(K3, gpu_id).nodes


UNIT_COST = (f"one request's decode step is not a cost per unit of inference, which is what a fleet costs "
             f"for the sessions it serves: the article's own fleets give {article_plan(PRO).nodes} / "
             f"{article_plan(K3).nodes} = {fleet_ratio():.2f} on H200 and {article_plan(PRO, 'b300').nodes} / "
             f"{article_plan(K3, 'b300').nodes} = {fleet_ratio('b300'):.2f} on B300, and the book's plans "
             f"less (the chapter on hardware and cost)")
check("unit-cost-ratio", public=lambda: cost.bandwidth_ratio(PRO, K3, basis="public"),
      explain="the ratio it restates is 0.41, i.e. 41%, printed as about 40%", reasoning=UNIT_COST)(
    lambda: cost.bandwidth_ratio(PRO, K3, rounding="article"))
check("active-param-ratio", public=lambda: param_counts(K3).activated() / param_counts(PRO).activated())(
    lambda: deployment(K3).activated_params / deployment(PRO).activated_params)
check("assessment-kv-fifth", public=lambda: request(pub(K3)) / request(pub(PRO)))(
    lambda: request(art(K3)) / request(art(PRO)))
