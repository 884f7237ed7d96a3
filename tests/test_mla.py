"""MLA and Gated MLA against transformers' DeepSeek-V3 and Kimi Linear attention; the absorbed path
against the naive one; decoding with the cache; cache bytes against the calculator; bad input."""

import pytest
import torch

from twopaths.calc import kv
from twopaths.layers.mla import MLA, GatedMLA

TOL = 1e-5
DIMS = dict(d_model=48, heads=3, kv_lora_rank=16, qk_nope_dim=8, qk_rope_dim=6, v_dim=10)


def _randomise(module, seed):
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(0.3 * torch.randn(p.shape, generator=gen))
    return module


def _hf_config(cls, q_lora_rank):
    return cls(hidden_size=DIMS["d_model"], num_attention_heads=DIMS["heads"], num_key_value_heads=DIMS["heads"],
               q_lora_rank=q_lora_rank, kv_lora_rank=DIMS["kv_lora_rank"], qk_nope_head_dim=DIMS["qk_nope_dim"],
               qk_rope_head_dim=DIMS["qk_rope_dim"], v_head_dim=DIMS["v_dim"], num_hidden_layers=1)


def _map_weights(ours, ref, q_lora_rank):
    q = ({"q_proj.weight": ref.q_proj.weight} if q_lora_rank is None else
         {"q_proj.0.weight": ref.q_a_proj.weight, "q_proj.1.weight": ref.q_a_layernorm.weight,
          "q_proj.2.weight": ref.q_b_proj.weight})
    own = {k: v for k, v in ours.state_dict().items() if k.startswith("gate.")}   # the gate has no counterpart
    ours.load_state_dict({**q, **own, "kv_a.weight": ref.kv_a_proj_with_mqa.weight,
                          "kv_norm.weight": ref.kv_a_layernorm.weight, "kv_b.weight": ref.kv_b_proj.weight,
                          "o_proj.weight": ref.o_proj.weight})


def _causal_mask(B, T):
    return torch.full((T, T), float("-inf")).triu(1).expand(B, 1, T, T)


@pytest.mark.parametrize("q_lora_rank", [None, 20])
def test_mla_matches_transformers_deepseek_v3(q_lora_rank):
    from transformers.models.deepseek_v3 import configuration_deepseek_v3, modeling_deepseek_v3 as ds

    config = _hf_config(configuration_deepseek_v3.DeepseekV3Config, q_lora_rank)
    config.rope_interleave = True                            # DeepSeek's own layout, which ours follows
    config.rope_parameters = {"rope_type": "default", "rope_theta": 10_000.0}
    config._attn_implementation = "eager"
    ref = _randomise(ds.DeepseekV3Attention(config, 0).float(), 0)
    ours = MLA(**DIMS, q_lora_rank=q_lora_rank)
    _map_weights(ours, ref, q_lora_rank)
    B, T = 2, 13
    x = torch.randn(B, T, DIMS["d_model"], generator=torch.Generator().manual_seed(1))
    cos_sin = ds.DeepseekV3RotaryEmbedding(config)(x, torch.arange(T).expand(B, T))
    with torch.no_grad():
        expected, _ = ref(x, cos_sin, _causal_mask(B, T))
        assert (ours(x) - expected).abs().max() < TOL
        assert (ours(x, absorbed=True) - expected).abs().max() < TOL


@pytest.mark.parametrize("q_lora_rank", [None, 20])
def test_gated_mla_matches_transformers_kimi_linear_plus_the_gate(q_lora_rank):
    """Kimi Linear's MLA is NoPE without a gate; K3's gate sigma(W_g x) multiplies its pre-projection output."""
    from transformers.models.kimi_linear import configuration_kimi_linear, modeling_kimi_linear as kl

    config = _hf_config(configuration_kimi_linear.KimiLinearConfig, q_lora_rank)
    config._attn_implementation = "eager"
    ref = _randomise(kl.KimiLinearAttention(config, 0).float(), 2)
    ours = _randomise(GatedMLA(**DIMS, q_lora_rank=q_lora_rank), 3)
    _map_weights(ours, ref, q_lora_rank)
    B, T = 2, 11
    x = torch.randn(B, T, DIMS["d_model"], generator=torch.Generator().manual_seed(4))
    seen = {}
    ref.o_proj.register_forward_hook(lambda mod, args, out: seen.update(attn=args[0]))
    with torch.no_grad():
        ref(x, _causal_mask(B, T))
        expected = ref.o_proj(torch.sigmoid(ours.gate(x)) * seen["attn"])
        for absorbed in (False, True):
            assert (ours(x, absorbed=absorbed) - expected).abs().max() < TOL


@pytest.mark.parametrize("layer", [MLA(**DIMS, q_lora_rank=20), GatedMLA(**DIMS)])
def test_decoding_with_the_cache_both_paths(layer):
    x = torch.randn(2, 17, DIMS["d_model"], generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        full = layer(x)
        for absorbed in (False, True):
            cache = layer.new_cache(2)
            steps = [layer(x[:, :9], cache, absorbed)] + [layer(x[:, t:t + 1], cache, absorbed) for t in range(9, 17)]
            assert (torch.cat(steps, 1) - full).abs().max() < TOL
            assert cache.length == 17


@pytest.mark.parametrize("dtype,fmt", [(torch.float32, "fp32"), (torch.bfloat16, "bf16")])
def test_cache_bytes_equal_the_calculator(dtype, fmt):
    layer = GatedMLA(**DIMS)
    cache = layer.new_cache(1, dtype=dtype)
    with torch.no_grad():
        for T in (1, 5, 1, 1):
            layer(torch.randn(1, T, DIMS["d_model"]), cache)
            per_token = kv.mla_bytes_per_token(DIMS["kv_lora_rank"], DIMS["qk_rope_dim"], kv.FORMATS[fmt])
            assert cache.nbytes == cache.length * per_token


def test_bad_input_names_the_argument(raises_param):
    raises_param("heads", MLA, **{**DIMS, "heads": 0})
    raises_param("qk_rope_dim", MLA, **{**DIMS, "qk_rope_dim": 5})
    raises_param("q_lora_rank", MLA, **DIMS, q_lora_rank=0)
    raises_param("x", MLA(**DIMS), torch.zeros(2, 3, 7))
    raises_param("x", MLA(**DIMS), torch.zeros(3, DIMS["d_model"]))


def test_rotate_turns_adjacent_pairs():
    """DeepSeek's interleaved RoPE: channels (0, 1) form pair 0 and turn by p, (2, 3) pair 1 and turn by
    p * theta^(-2/4); with theta = 100 that is p / 10. Worked by hand for x = [1, 0, 0, 2] at p = 0 and 3."""
    import math

    from twopaths.layers.mla import rotate

    x = torch.tensor([[1.0, 0.0, 0.0, 2.0]]).expand(2, 4)
    got = rotate(x, torch.tensor([0, 3]), theta=100.0)
    # pair (a, b) -> (a cos - b sin, b cos + a sin)
    expected = torch.tensor([[1.0, 0.0, 0.0, 2.0],
                             [math.cos(3), math.sin(3), -2 * math.sin(0.3), 2 * math.cos(0.3)]])
    torch.testing.assert_close(got, expected)
