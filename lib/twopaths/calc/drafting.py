"""What drafting with an MTP layer and verifying the draft cost a decode step: bytes read, and FLOPs
where compute catches up with bandwidth.

Speculative decoding (``twopaths.layers.speculative``) yields E tokens per target pass for
``gamma`` draft steps and one target pass over gamma + 1 tokens per sequence, so its speed-up is
E / (gamma c + v) with c = draft step / plain step and v = that pass / a plain one-token step.
``draft_costs(model_id, context, kv_dtype)`` prices both from the public configs: weights in their
shipped formats (``specs.params``, ``calc.weights``), cache reads and attention FLOPs
(``calc.attention_flops``) and the experts a step's tokens touch (``calc.decode.experts_touched``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ParameterError, check_int
from ..specs import GPUSpec, model
from ..specs.params import param_counts
from .attention_flops import attention_flops, bytes_read_per_token, weight_flops
from .decode import experts_touched, step_time
from .moe import top_k as experts_per_token
from .request import activated_weight_bytes
from .weights import moe_shape, weight_bytes


@dataclass(frozen=True)
class DraftCosts:
    """What one decode step costs a model whose MTP layer drafts (public config, shipped formats).

    Bytes: the main model reads ``fixed`` (every non-expert weight, the output head included; not the
    embedding, a lookup) plus the share of ``routed`` (all routed-expert bytes) that the step's tokens
    touch, plus ``kv`` per sequence; an MTP step reads its non-expert weights and the shared head
    (``mtp_fixed``), the share of its experts touched (``mtp_routed``) and ``mtp_kv`` per sequence. A
    verification pass reads each sequence's cache once for all its gamma + 1 tokens.
    FLOPs per token: ``weight_flops`` (2 per activated parameter) and ``attn_flops`` (at the context),
    and the same for one MTP step.

    Times on a ``GPUSpec`` take the roofline: the larger of bytes over HBM bandwidth and FLOPs over
    peak (weights in FP8, attention in BF16). Spread evenly over the GPUs of a replica, both scale
    alike, so the ratios below hold for a replica as for one GPU. Without a GPU, the ratios are of
    bytes alone: decode bound by bandwidth, as the argument for speculative decoding assumes.
    """

    model: str
    fixed: float
    routed: float
    mtp_fixed: float
    mtp_routed: float
    experts: int
    top_k: int
    kv: float
    mtp_kv: float
    weight_flops: float
    attn_flops: float
    mtp_weight_flops: float
    mtp_attn_flops: float

    def target_step(self, batch: int, tokens_per_seq: int = 1) -> float:
        """Bytes a target pass reads for ``batch`` sequences of ``tokens_per_seq`` tokens each."""
        touched = float(experts_touched(batch * tokens_per_seq, self.top_k, self.experts))
        return self.fixed + self.routed * touched + batch * self.kv

    def draft_step(self, batch: int) -> float:
        """Bytes one MTP step reads for ``batch`` sequences (one drafted token each)."""
        touched = float(experts_touched(batch, self.top_k, self.experts))
        return self.mtp_fixed + self.mtp_routed * touched + batch * self.mtp_kv

    def target_seconds(self, gpu: GPUSpec, batch: int, tokens_per_seq: int = 1) -> float:
        n = batch * tokens_per_seq
        return _roofline(self.target_step(batch, tokens_per_seq), n * self.weight_flops, n * self.attn_flops, gpu)

    def draft_seconds(self, gpu: GPUSpec, batch: int) -> float:
        return _roofline(self.draft_step(batch), batch * self.mtp_weight_flops, batch * self.mtp_attn_flops, gpu)

    def cost_ratio(self, batch: int, gpu: GPUSpec | None = None) -> float:
        """c: one draft step over one ordinary decode step (bytes alone without ``gpu``)."""
        if gpu is None:
            return self.draft_step(batch) / self.target_step(batch)
        return self.draft_seconds(gpu, batch) / self.target_seconds(gpu, batch)

    def verify_ratio(self, batch: int, gamma: int, gpu: GPUSpec | None = None) -> float:
        """v: a pass over gamma + 1 tokens per sequence over an ordinary one-token step."""
        gamma = check_int("gamma", gamma, minimum=1)
        if gpu is None:
            return self.target_step(batch, gamma + 1) / self.target_step(batch)
        return self.target_seconds(gpu, batch, gamma + 1) / self.target_seconds(gpu, batch)


def _roofline(nbytes: float, weight_flops: float, attn_flops: float, gpu: GPUSpec) -> float:
    return max(float(step_time(nbytes, 0.0, gpu.hbm_bandwidth)), weight_flops / gpu.flops("fp8") + attn_flops / gpu.flops("bf16"))


def draft_costs(model_id: str, context: int, kv_dtype=None) -> DraftCosts:
    """``DraftCosts`` of a registry model with MTP layers, at ``context`` tokens per sequence.

    The MTP layer's cache read and attention FLOPs are taken as one average layer of the main model's.
    """
    spec = model(model_id)
    c = spec.config
    counts = param_counts(spec)
    mtp = counts.component("MTP")
    if not mtp.params:
        raise ParameterError("model_id", model_id, "a model whose config has MTP layers (num_nextn_predict_layers >= 1)")
    context = check_int("context", context, minimum=1)
    experts, top_k = moe_shape(counts, spec)[0], experts_per_token(model_id)
    routed = counts.component("routed experts")
    group = weight_bytes(spec, include_mtp=True)
    per_expert = routed.params // (routed.layers * experts)       # parameters of one expert
    mtp_routed_share = mtp.layers * experts * per_expert / mtp.params
    mtp_active = mtp.params - mtp.layers * (experts - top_k) * per_expert + counts.component("output head").params
    kv = bytes_read_per_token(spec, context, kv_dtype)
    attn = attention_flops(spec, context)
    layers = c["num_hidden_layers"]
    return DraftCosts(
        model=model_id,
        fixed=activated_weight_bytes(model_id, "public") - group["routed_experts"] * top_k / experts,
        routed=group["routed_experts"],
        mtp_fixed=group["mtp"] * (1 - mtp_routed_share) + group["head"],
        mtp_routed=group["mtp"] * mtp_routed_share,
        experts=experts, top_k=top_k, kv=kv, mtp_kv=kv / layers,
        weight_flops=weight_flops(spec), attn_flops=attn,
        mtp_weight_flops=2 * mtp_active, mtp_attn_flops=attn / layers)
