"""Every check on the toy layers' arguments, at its boundary: the last allowed value is accepted and
the first value past it is refused with an error naming the argument. (Mutation testing found the
bounds unpinned: a minimum moved by one, or dropped, passed every other test.)"""

import pytest
import torch

from twopaths.layers import attnres, compressor, csa_hca, dsa, hyper_connections, kda, latent_moe, mhc
from twopaths.layers import quantile_balancing, routers
from twopaths.layers import indexer, mla, mtp, speculative, window

TINY = 1e-9
MOE = dict(d=8, latent=4, n_experts=4, top_k=2, hidden=8)
MLA = dict(d_model=8, heads=2, kv_lora_rank=4, qk_nope_dim=2, qk_rope_dim=2, v_dim=2)
KDA = dict(d_model=8, heads=1, head_dim_k=4)


def lightning_indexer(index_dim):
    """The indexer's width is its ``dim`` argument, named index_dim in its errors (as DSA's and CSA's)."""
    return indexer.LightningIndexer(8, 4, dim=index_dim)


# (callable, fixed arguments, argument checked, last allowed value, first refused value)
CASES = [
    (attnres.AttnRes, {}, "dim", 1, 0),
    (attnres.AttnRes, {"dim": 4}, "eps", TINY, 0.0),
    (attnres.source_count, {"block_size": 1}, "sublayers", 0, -1),
    (attnres.source_count, {"sublayers": 3}, "block_size", 1, 0),
    (attnres.DepthSources, {"embedding": torch.zeros(2)}, "block_size", 1, 0),
    (compressor.KVCompressor, {"d_model": 8, "ratio": 4, "overlap": True}, "dim", 1, 0),
    (compressor.KVCompressor, {"d_model": 8, "dim": 4, "overlap": False}, "ratio", 1, 0),
    (csa_hca.CSA, {"d_model": 8, "head_dim": 8, "rope_dim": 2}, "index_loss", 0.0, -TINY),
    (csa_hca.HCA, {"d_model": 8, "head_dim": 8, "rope_dim": 2}, "ratio", 1, 0),
    (lightning_indexer, {}, "index_dim", 1, 0),
    (indexer.LightningIndexer, {"d_model": 8, "q_rank": 4}, "topk", 1, 0),
    (mla.MLA, dict(MLA, d_model=None), "d_model", 1, 0),
    (mla.MLA, dict(MLA, qk_rope_dim=None), "qk_rope_dim", 0, -2),
    (mla.MLA, dict(MLA, v_dim=None), "v_dim", 1, 0),
    (mla.MLA, MLA, "rope_theta", TINY, 0.0),
    (dsa.DSA, {}, "d_model", 1, 0),
    (dsa.DSA, {"d_model": 8}, "heads", 1, 0),
    (dsa.DSA, {"d_model": 8}, "latent_dim", 1, 0),
    (dsa.DSA, {"d_model": 8}, "rope_dim", 0, -1),
    (dsa.DSA, {"d_model": 8}, "rope_theta", TINY, 0.0),
    (dsa.DSA, {"d_model": 8}, "q_rank", 1, 0),
    (dsa.DSA, {"d_model": 8}, "index_loss", 0.0, -TINY),
    (latent_moe.LatentMoE, dict(MOE, latent=None), "latent", 1, 0),
    (latent_moe.LatentMoE, MOE, "n_shared", 0, -1),
    (hyper_connections.HyperConnection, {}, "dim", 1, 0),
    (hyper_connections.HyperConnection, {"dim": 4}, "streams", 1, 0),
    (hyper_connections.HyperConnection, {"dim": 4}, "layer", 0, -1),
    (hyper_connections.HyperConnection, {"dim": 4}, "norm_eps", TINY, 0.0),
    (hyper_connections.expand_streams, {"x": torch.zeros(2, 3)}, "streams", 1, 0),
    (mhc.MHC, {}, "dim", 1, 0),
    (mhc.MHC, {"dim": 4}, "streams", 1, 0),
    (mhc.MHC, {"dim": 4}, "sinkhorn_iters", 1, 0),
    (mhc.MHC, {"dim": 4}, "eps", 0.0, -TINY),
    (mhc.MHC, {"dim": 4}, "norm_eps", TINY, 0.0),
    (mhc.MHC, {"dim": 4}, "init_std", 0.0, -TINY),
    (mhc.MHCHead, {}, "dim", 1, 0),
    (mhc.MHCHead, {"dim": 4}, "streams", 1, 0),
    (mhc.MHCHead, {"dim": 4}, "eps", 0.0, -TINY),
    (mhc.MHCHead, {"dim": 4}, "norm_eps", TINY, 0.0),
    (mhc.MHCHead, {"dim": 4}, "init_std", 0.0, -TINY),
    (mhc.sinkhorn, {"logits": torch.zeros(3, 3)}, "iters", 1, 0),
    (mhc.sinkhorn, {"logits": torch.zeros(3, 3)}, "eps", 0.0, -TINY),
    (quantile_balancing.QuantileBalancer, {"n_experts": 4, "top_k": 2}, "bins", 1, 0),
    (quantile_balancing.QuantileBalancer, {"n_experts": 4, "top_k": 2}, "margin", 0.0, -TINY),
    (quantile_balancing.allreduce_bytes, {"n_experts": 4, "ranks": 2}, "bins", 1, 0),
    (quantile_balancing.allreduce_bytes, {"n_experts": 4, "bins": 8}, "ranks", 1, 0),
    (quantile_balancing.gather_bytes, {"n_experts": 4, "ranks": 2}, "tokens_per_rank", 1, 0),
    (quantile_balancing.gather_bytes, {"n_experts": 4, "tokens_per_rank": 8}, "ranks", 1, 0),
    (routers.check_top_k, {"top_k": 1}, "n_experts", 1, 0),
    (routers.check_groups, {"n_experts": 4, "top_k": 2, "topk_group": 1}, "n_group", 1, 0),
    (routers.check_groups, {"n_experts": 4, "top_k": 4, "topk_group": 4}, "n_group", 4, 5),
    (routers.check_groups, {"n_experts": 4, "top_k": 2, "n_group": 2}, "topk_group", 1, 0),
    (routers.TopKRouter, {"d": 4, "n_experts": 4, "top_k": 2}, "scale", TINY, 0.0),
    (routers.hash_table, {"n_experts": 4, "top_k": 2}, "vocab", 1, 0),
    (routers.aux_free_update, {"bias": torch.zeros(4), "load": torch.ones(4)}, "rate", TINY, 0.0),
    (speculative.expected_tokens, {"gamma": 2}, "alpha", 0.0, -TINY),
    (speculative.expected_tokens, {"gamma": 2}, "alpha", 1.0, 1 + TINY),
    (speculative.expected_tokens, {"alpha": 0.5}, "gamma", 1, 0),
    (speculative.speedup, {"gamma": 2, "cost_ratio": 0.1}, "tokens_per_pass", 1.0, 1 - TINY),
    (speculative.speedup, {"tokens_per_pass": 2.0, "cost_ratio": 0.1}, "gamma", 1, 0),
    (speculative.speedup, {"tokens_per_pass": 2.0, "gamma": 2}, "cost_ratio", 0.0, -TINY),
    (speculative.speedup, {"tokens_per_pass": 2.0, "gamma": 2, "cost_ratio": 0.1}, "verify_ratio", 1.0, 1 - TINY),
    (window.WindowAttention, {}, "d_model", 1, 0),
    (window.WindowAttention, {"d_model": 8}, "heads", 1, 0),
    (window.WindowAttention, {"d_model": 8, "rope_dim": 2}, "head_dim", 2, 1),
    (window.WindowAttention, {"d_model": 8}, "window", 1, 0),
    (window.WindowAttention, {"d_model": 8}, "rope_dim", 0, -2),            # -1 is also odd
    (window.WindowAttention, {"d_model": 8, "head_dim": 8}, "rope_dim", 8, 10),
    (window.WindowAttention, {"d_model": 8}, "rope_theta", TINY, 0.0),
    (window.WindowAttention, {"d_model": 8}, "q_rank", 1, 0),
    (kda.KDA, dict(KDA, heads=None), "heads", 1, 0),
    (kda.KDA, KDA, "value_heads", 1, 0),
    (kda.KDA, dict(KDA, head_dim_k=None), "head_dim_k", 1, 0),
    (kda.KDA, KDA, "head_dim_v", 1, 0),
    (kda.KDA, KDA, "conv_kernel", 1, 0),
    (kda.KDA, KDA, "lower_bound", 0.0, TINY),
    (kda.KDA, KDA, "chunk_size", 1, 0),
    *[(mtp.TinyLM, {"vocab": 8, "heads": 1}, name, 1, 0) for name in ("d", "layers", "hidden", "max_len")],
    (mtp.TinyLM, {"vocab": 8}, "heads", 1, 0),
    (mtp.TinyLM, {}, "vocab", 1, 0),
    (kda.tile_factor_exponents, {"g": -torch.ones(4, 2)}, "tile", 1, 0),
    (kda.largest_safe_gate, {"dtype": torch.bfloat16}, "tile", 1, 0),
]


@pytest.mark.filterwarnings("ignore:Initializing zero-element tensors")     # rope_dim=0: an empty projection
@pytest.mark.parametrize("fn,fixed,name,allowed,refused", CASES,
                         ids=[f"{c[0].__name__}-{c[2]}-{c[3]}" for c in CASES])
def test_the_boundary_value_is_accepted_and_the_next_refused(raises_param, fn, fixed, name, allowed, refused):
    fixed = {k: v for k, v in fixed.items() if v is not None}
    fn(**fixed, **{name: allowed})
    err = raises_param(name, fn, **fixed, **{name: refused})
    assert err.got == refused


def test_the_chunked_kernel_refuses_a_chunk_of_zero(raises_param):
    q, k, v, g, beta = kda.random_inputs(1, 5, 1, 4, 4)
    assert kda.kda_chunked(q, k, v, g, beta, chunk_size=1)[0].shape == v.shape
    raises_param("chunk_size", kda.kda_chunked, q, k, v, g, beta, chunk_size=0)


def test_a_tensor_alpha_counts_as_its_value():
    assert speculative.expected_tokens(torch.tensor(0.5), 3) == speculative.expected_tokens(0.5, 3) == 1.875
