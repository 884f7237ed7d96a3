"""AttnRes against fla's ``naive_attnres``, the zero-query start, block sources, bad input.

fla's pure-torch reference is loaded by file path from the installed fla-core package: importing
``fla.ops`` would pull in every Triton kernel.
"""

import importlib.util
from pathlib import Path

import pytest
import torch

from twopaths.layers.attnres import AttnRes, DepthSources, depth_attention, source_count

TOL = 1e-5


def _naive_attnres():
    spec = importlib.util.find_spec("fla")
    path = Path(spec.origin).parent / "ops" / "attnres" / "naive.py"
    module_spec = importlib.util.spec_from_file_location("fla_attnres_naive", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module.naive_attnres


@pytest.mark.parametrize("n_sources,shape,scale", [(1, (3, 8), 1.0), (5, (2, 7, 16), 1.0), (9, (4, 32), 0.25)])
def test_matches_fla_naive_attnres(n_sources, shape, scale):
    torch.manual_seed(n_sources)
    dim = shape[-1]
    sources = [torch.randn(*shape) * (1 + i) for i in range(n_sources)]     # sizes differ on purpose
    query, key_weight = torch.randn(dim), 1 + 0.3 * torch.randn(dim)
    expected, expected_p = _naive_attnres()(query, sources, key_weight, rms_eps=1e-6, scale=scale, return_weights=True)
    got, p = depth_attention(query, sources, key_weight, eps=1e-6, scale=scale)
    assert (got - expected).abs().max().item() < TOL
    assert (p - expected_p).abs().max().item() < TOL


def test_module_matches_fla_with_its_pseudo_query_as_a_linear_weight():
    torch.manual_seed(1)
    mod = AttnRes(16)
    with torch.no_grad():
        mod.query.normal_()
        mod.key_weight.uniform_(0.5, 1.5)
    sources = [torch.randn(2, 3, 16) for _ in range(4)]
    expected = _naive_attnres()(mod.query.view(16, 1), sources, mod.key_weight)   # fla's Linear(D, 1) layout
    assert (mod(sources)[0] - expected).abs().max().item() < TOL


def test_zero_query_reads_the_plain_mean_and_values_keep_their_scale():
    mod = AttnRes(8)
    sources = [torch.randn(4, 8), 100 * torch.randn(4, 8)]
    out, p = mod(sources)
    assert torch.allclose(p, torch.full_like(p, 0.5))
    assert torch.allclose(out, (sources[0] + sources[1]) / 2)


def block_sources(embedding, outputs, block_size):
    """The sources after ``outputs``, from the paper's definition: the embedding, the sum of each
    completed block of ``block_size`` outputs in order, then the open block's partial sum if any."""
    done = len(outputs) - len(outputs) % block_size
    blocks = [sum(outputs[i:i + block_size]) for i in range(0, done, block_size)]
    return [embedding] + blocks + ([sum(outputs[done:])] if done < len(outputs) else [])


@pytest.mark.parametrize("block_size", [1, 2, 3, 12])
def test_block_sources_are_the_embedding_block_sums_and_the_partial_sum_in_order(block_size):
    emb = torch.zeros(2)
    outputs = [torch.full((2,), 2.0**i) for i in range(7)]        # powers of two: every sum is distinct
    src = DepthSources(emb, block_size)
    for i, out in enumerate(outputs):
        src.add(out)
        expected = block_sources(emb, outputs[:i + 1], block_size)
        assert len(src.values()) == len(expected)
        assert all(torch.equal(a, b) for a, b in zip(src.values(), expected))
        assert len(src.values()) == source_count(i + 1, block_size)
    # The sources sum to what a plain residual would hold: the embedding plus every output.
    assert torch.equal(sum(src.values()), emb + sum(outputs))


@pytest.mark.parametrize("block_size", [1, 2, 3])
def test_tiny_lm_reads_its_block_sources_as_fla_mixes_them(block_size):
    """The model's forward rebuilt from its own sublayers: each sublayer reads fla's mix of the
    sources the definition gives (``block_sources``), with random pseudo-queries so that the order
    and content of the sources matter."""
    from twopaths.experiments import attnres_lm as al

    torch.manual_seed(block_size)
    model = al.TinyLM(7, dim=8, layers=3, heads=2, block_size=block_size)
    with torch.no_grad():
        for read in model.depth:
            read.query.normal_()
            read.key_weight.uniform_(0.5, 1.5)
        tokens = torch.randint(0, 7, (2, 5))
        logits, _ = model(tokens)
        emb, outputs = model.embed(tokens), []
        for f, norm, read in zip(model.sublayers, model.norms, model.depth):
            u = _naive_attnres()(read.query, block_sources(emb, outputs, block_size), read.key_weight)
            outputs.append(f(norm(u)))
        u = _naive_attnres()(model.depth[-1].query, block_sources(emb, outputs, block_size), model.depth[-1].key_weight)
        expected = model.head(model.norms[-1](u))
    assert (logits - expected).abs().max().item() < TOL


def test_bad_input(raises_param):
    raises_param("sources", depth_attention, torch.zeros(4), [], torch.ones(4))
    raises_param("sources", depth_attention, torch.zeros(4), [torch.zeros(2, 4), torch.zeros(3, 4)], torch.ones(4))
    raises_param("query", depth_attention, torch.zeros(5), [torch.zeros(2, 4)], torch.ones(4))
    raises_param("key_weight", depth_attention, torch.zeros(4), [torch.zeros(2, 4)], torch.ones(3))
    raises_param("dim", AttnRes, 0)
    raises_param("block_size", DepthSources, torch.zeros(4), 0)
    raises_param("block_size", source_count, 10, 0)
    raises_param("sublayers", source_count, -1, 2)


# --- the small trained model the chapter runs ----------------------------------------------------------

def test_tiny_lm_starts_uniform_and_its_task_is_the_modular_sum():
    from twopaths.experiments import attnres_lm as al

    x, y = al.modular_sum_batch(4, 6, 5, torch.Generator().manual_seed(0))
    assert (y[:, 0] == -100).all() and torch.equal(y[:, 1:], (x[:, 1:] + x[:, :-1]) % 5)
    torch.manual_seed(0)
    model = al.TinyLM(5, dim=8, layers=2, heads=2, block_size=2)
    logits, weights = model(x)
    assert logits.shape == (4, 6, 5)
    assert [p.shape[0] for p in weights] == [1, 2, 2, 3, 3]         # blocks of two sublayers, partial sums
    assert all(torch.allclose(p, torch.full_like(p, 1 / p.shape[0])) for p in weights)


def test_tiny_lm_bad_input(raises_param):
    from twopaths.experiments import attnres_lm as al

    raises_param("heads", al.TinyLM, 5, dim=10, heads=4)
    raises_param("block_size", al.TinyLM, 5, dim=8, heads=2, block_size=0)
    raises_param("residual", al.TinyLM, 5, dim=8, heads=2, residual="dense")
    raises_param("steps", al.train, al.TinyLM(5, dim=8, heads=2), 0)
