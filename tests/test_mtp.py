"""The MTP module's structure (order of the concatenation, shared weights, causality), its loss,
and a short joint training in which it learns to draft two tokens ahead."""

import torch

from twopaths.experiments import mtp_draft
from twopaths.layers.mtp import Block, MTPHead, TinyLM, mtp_loss

V, D = 11, 16


def _pair(seed=0):
    torch.manual_seed(seed)
    main = TinyLM(V, d=D, layers=1, heads=2, hidden=32, max_len=32)
    return main, MTPHead(main, heads=2, hidden=32)


def test_shapes_and_shared_weights():
    main, mtp = _pair()
    tokens = torch.randint(V, (3, 9))
    h, logits = main(tokens)
    assert h.shape == (3, 9, D) and logits.shape == (3, 9, V)
    hk, mtp_logits = mtp(h[:, :-1], tokens[:, 1:])
    assert hk.shape == (3, 8, D) and mtp_logits.shape == (3, 8, V)
    assert mtp.embed is main.embed and mtp.head is main.head
    own = {id(p) for p in mtp.parameters()} - {id(p) for p in main.parameters()}
    # its own weights: enorm, hnorm, eh_proj (2d -> d), one block, its output norm
    expected = 3 * D + 2 * D * D + sum(p.numel() for p in Block(D, 2, 32).parameters())
    assert sum(p.numel() for p in mtp.parameters() if id(p) in own) == expected


def test_concatenation_order_is_embedding_then_hidden():
    """With eh_proj = [I | 0] and a block that adds nothing, the output is enorm(Emb(t_{i+1}))."""
    main, mtp = _pair()
    with torch.no_grad():
        mtp.eh_proj.weight.copy_(torch.cat([torch.eye(D), torch.zeros(D, D)], dim=1))
        mtp.block.out.weight.zero_()
        mtp.block.ffn.w_down.weight.zero_()
    tokens = torch.randint(V, (2, 7))
    h, _ = main(tokens)
    hk, _ = mtp(h, tokens)
    torch.testing.assert_close(hk, mtp.enorm(main.embed(tokens)))


def test_causal():
    main, mtp = _pair()
    a = torch.randint(V, (1, 10))
    b = a.clone()
    b[0, 6:] = (b[0, 6:] + 1) % V
    with torch.no_grad():
        ha, la = main(a)
        hb, lb = main(b)
        _, ma = mtp(ha[:, :-1], a[:, 1:])
        _, mb = mtp(hb[:, :-1], b[:, 1:])
    torch.testing.assert_close(la[:, :6], lb[:, :6])
    torch.testing.assert_close(ma[:, :5], mb[:, :5])     # position i reads t_{i+1}: i < 5 sees only t_0..t_5


def test_loss_weights_the_mtp_term():
    main, mtp = _pair()
    tokens = torch.randint(V, (4, 12))
    total, parts = mtp_loss(main, mtp, tokens, weight=0.3)
    assert abs(total.item() - (parts["main"] + 0.3 * parts["mtp"])) < 1e-5
    assert abs(mtp_loss(main, mtp, tokens, weight=0.0)[0].item() - parts["main"]) < 1e-6


def test_joint_training_teaches_the_mtp_module_to_look_two_ahead():
    """On a first-order Markov chain the best MTP prediction is chain[t_{i+1}]; training brings the
    MTP loss from about ln V to near the chain's entropy, and its drafts are then kept often."""
    chain = mtp_draft.markov_chain(V, order=1, concentration=0.2, seed=0)
    data = mtp_draft.sample_chain(chain, 256, 24, seed=1)
    main, mtp = _pair(1)
    history = mtp_draft.train(main, mtp, data, steps=120, batch=16, lr=1e-2, progress=False)
    floor = mtp_draft.chain_entropy(chain, data)
    assert history[0]["mtp"] > floor + 0.8
    assert sum(h["mtp"] for h in history[-10:]) / 10 < floor + 0.3
    _, stats = mtp_draft.decode(main.eval(), mtp.eval(), data[:1, :3], 20, gamma=2, seed=0)
    assert stats.tokens_per_pass > 1.5
    # each pass emits its kept drafts plus one token
    assert len(stats.accepted) == stats.passes and stats.emitted == sum(n + 1 for n in stats.accepted)
    assert stats.emitted >= 20


def test_bad_input(raises_param):
    raises_param("heads", TinyLM, V, d=10, heads=3)
    raises_param("vocab", TinyLM, 0)
    main, mtp = _pair()
    raises_param("tokens", main, torch.zeros(1, 40, dtype=torch.long))   # longer than max_len
    raises_param("gamma", mtp_draft.decode, main, mtp, torch.zeros(1, 3, dtype=torch.long), 5, 0)
    raises_param("concentration", mtp_draft.markov_chain, 5, 1, 0.0)
