"""Small seeded training and measurement loops the chapters run."""

from contextlib import contextmanager

import torch


@contextmanager
def one_cpu_thread(device: torch.device):
    """On the CPU, run the toy on one thread: its tensors are so small that handing work between
    threads costs more than it saves (several times more on a busy machine)."""
    if device.type != "cpu":
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)
