"""A toy draft/target pair: a small decoder and its MTP module, trained together on the CPU, then
used for speculative decoding with the MTP module as the draft.

The data is a seeded random Markov chain of order ``order`` over a small vocabulary (each context
allows a few likely next tokens), so the best possible prediction is known exactly. Decoding
recomputes the whole prefix at every target pass (no KV cache): the toy measures how many tokens
each target pass yields, not how fast a pass is.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from tqdm.auto import tqdm

from ..errors import check_int, check_real
from ..layers.mtp import MTPHead, TinyLM, mtp_loss
from ..layers.speculative import acceptance_rate, verify, verify_greedy
from . import one_cpu_thread


# --- data ------------------------------------------------------------------------------------------

def markov_chain(vocab: int, order: int = 2, concentration: float = 0.1, seed: int = 0) -> torch.Tensor:
    """Transition probabilities [V]*order + [V]: each context's next-token distribution drawn from
    a symmetric Dirichlet(``concentration``); small values leave few likely successors."""
    check_int("vocab", vocab, minimum=2)
    check_int("order", order, minimum=1, maximum=4)
    concentration = check_real("concentration", concentration, minimum=0, open_min=True)
    gen = torch.Generator().manual_seed(seed)
    gamma = torch._standard_gamma(torch.full((vocab,) * (order + 1), concentration), generator=gen)
    return gamma / gamma.sum(-1, keepdim=True)


def sample_chain(chain: torch.Tensor, n: int, length: int, seed: int = 0) -> torch.Tensor:
    """``n`` sequences [n, length] from ``chain``, the first ``order`` tokens uniform."""
    order, vocab = chain.dim() - 1, chain.shape[-1]
    check_int("length", length, minimum=order + 1)
    gen = torch.Generator().manual_seed(seed)
    seqs = torch.randint(vocab, (n, length), generator=gen)
    with one_cpu_thread(seqs.device):
        for t in range(order, length):
            probs = chain[tuple(seqs[:, t - order + j] for j in range(order))]     # [n, V]
            seqs[:, t] = torch.multinomial(probs, 1, generator=gen)[:, 0]
    return seqs


def chain_entropy(chain: torch.Tensor, seqs: torch.Tensor) -> float:
    """Mean next-token entropy (nats) of ``chain`` over the contexts in ``seqs``: the best loss possible."""
    order = chain.dim() - 1
    probs = chain[tuple(seqs[:, j: seqs.shape[1] - order + j] for j in range(order))]   # [n, L-order, V]
    return -(probs * probs.clamp_min(1e-30).log()).sum(-1).mean().item()


# --- training --------------------------------------------------------------------------------------

def train(main: TinyLM, mtp: MTPHead, data: torch.Tensor, steps: int, batch: int = 32, lr: float = 3e-3,
          mtp_weight: float = 0.3, seed: int = 0, progress: bool = True) -> list[dict]:
    """Joint training (next-token loss + ``mtp_weight`` x MTP loss) with AdamW; returns the losses."""
    check_int("steps", steps, minimum=1)
    check_int("batch", batch, minimum=1, maximum=data.shape[0])
    params = torch.nn.ModuleList([main, mtp]).parameters()        # shared embedding/head counted once
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=0.0)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps, pct_start=0.1)
    gen = torch.Generator().manual_seed(seed)
    device = next(main.parameters()).device
    history = []
    with one_cpu_thread(device):
        for _ in tqdm(range(steps), desc="train target + MTP", disable=not progress):
            rows = torch.randint(data.shape[0], (batch,), generator=gen)
            loss, parts = mtp_loss(main, mtp, data[rows].to(device), mtp_weight)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            history.append(parts)
    return history


# --- speculative decoding with the MTP module as the draft -------------------------------------------

@dataclass
class DecodeStats:
    gamma: int
    greedy: bool
    passes: int = 0                                     # target passes after the prompt
    emitted: int = 0                                    # tokens those passes produced
    accepted: list[int] = field(default_factory=list)   # drafts kept, per pass
    alpha: list[list[float]] = field(default_factory=list)  # sum min(p, q) at each position reached

    @property
    def tokens_per_pass(self) -> float:
        return self.emitted / self.passes

    def position_rates(self) -> list[float]:
        """Measured chance that draft i is kept given drafts 1..i-1 were: passes reaching i+1 over i."""
        n = torch.tensor(self.accepted)
        return [((n >= i).sum() / (n >= i - 1).sum()).item() for i in range(1, self.gamma + 1)]

    def mean_alpha(self) -> list[float]:
        """sum_x min(p, q) at each draft position, averaged over the passes that verified it;
        positions no pass reached are left off the end (nothing was measured there)."""
        reached = [[a[i] for a in self.alpha if len(a) > i] for i in range(self.gamma)]
        return [sum(r) / len(r) for r in reached if r]


@torch.no_grad()
def draft(mtp: MTPHead, h: torch.Tensor, seq: torch.Tensor, gamma: int, greedy: bool,
          generator: torch.Generator | None) -> tuple[torch.Tensor, torch.Tensor]:
    """``gamma`` drafts past ``seq`` [1, m+1] from the MTP module applied ``gamma`` times.

    ``h`` [1, m, d]: the main model's states at positions 0..m-1 (the newest token t_m has none yet).
    Depth k reads depth k-1's states and the tokens k steps ahead (drafts where the sequence ends).
    Returns (drafts [1, gamma], q [1, gamma, V]).
    """
    ahead, drafts, qs = seq[:, 1:], [], []
    for _ in range(gamma):
        h, logits = mtp(h, ahead)
        q = logits[:, -1].float().softmax(-1)                                    # [1, V]
        x = q.argmax(-1, keepdim=True) if greedy else torch.multinomial(q, 1, generator=generator)
        drafts.append(x)
        qs.append(q)
        ahead = torch.cat([ahead[:, 1:], x], dim=1)    # one step further ahead, the draft at the end
    return torch.cat(drafts, 1), torch.stack(qs, 1)


@torch.no_grad()
def decode(main: TinyLM, mtp: MTPHead, prompt: torch.Tensor, new_tokens: int, gamma: int,
           greedy: bool = False, seed: int = 0, stats: DecodeStats | None = None) -> tuple[torch.Tensor, DecodeStats]:
    """Generate ``new_tokens`` after ``prompt`` [1, P] with MTP drafts verified by ``main``."""
    check_int("gamma", gamma, minimum=1)
    check_int("new_tokens", new_tokens, minimum=1, maximum=main.max_len - prompt.shape[1] - gamma - 1)
    gen = torch.Generator(device=prompt.device).manual_seed(seed)
    stats = stats or DecodeStats(gamma, greedy)
    with one_cpu_thread(prompt.device):
        seq = _decode(main, mtp, prompt, prompt.shape[1] + new_tokens, gamma, greedy, gen, stats)
    return seq, stats


def _decode(main, mtp, prompt, goal, gamma, greedy, gen, stats) -> torch.Tensor:
    """The loop of ``decode``: prefill, then draft / verify / append until ``goal`` tokens."""
    h, logits = main(prompt)                                          # the prefill pass
    p = logits[:, -1:].float().softmax(-1)
    seq = torch.cat([prompt, p.argmax(-1) if greedy else torch.multinomial(p[:, 0], 1, generator=gen)], 1)
    while seq.shape[1] < goal:
        xs, q = draft(mtp, h, seq, gamma, greedy, gen)
        h_all, logits = main(torch.cat([seq, xs], 1))                 # one target pass over gamma+1 positions
        p = logits[:, -gamma - 1:].float().softmax(-1)               # [1, gamma+1, V]
        out = verify_greedy(xs, p) if greedy else verify(xs, q, p, gen)
        n = int(out.n_accepted)
        stats.passes += 1
        stats.emitted += n + 1
        stats.accepted.append(n)
        stats.alpha.append(acceptance_rate(p[0, : min(n + 1, gamma)], q[0, : min(n + 1, gamma)]).tolist())
        seq = torch.cat([seq, out.tokens[:, : n + 1]], 1)
        h = h_all[:, : seq.shape[1] - 1]                               # states of every position but the newest
    return seq[:, :goal]
