"""calc.moe: expert counts as the sizing modules read them, checked against the specs' own numbers."""

from twopaths.calc.moe import is_moe, routed_experts, top_k


def test_routed_experts_article_and_public_differ_for_v4_pro():
    # deployment.yaml: the article sizes V4-Pro with 256 routed experts; its public config has 384
    assert routed_experts("deepseek-v4-pro", "article") == 256
    assert routed_experts("deepseek-v4-pro", "public") == 384


def test_top_k_reads_either_spelling():
    # V4-Pro's config writes num_experts_per_tok: 6; K3's writes num_experts_per_token: 16
    assert top_k("deepseek-v4-pro") == 6
    assert top_k("kimi-k3") == 16


def test_is_moe():
    # V4-Pro has routed experts and no dense FFN layers; Llama 3.1 405B is dense
    assert is_moe("deepseek-v4-pro") is True
    assert is_moe("kimi-k3") is True
    assert is_moe("llama-3.1-405b") is False
