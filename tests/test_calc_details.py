"""Calculator details no other test pins, each by hand: a partial scale group, the busiest GPU under
uneven expert spreading, a grouped-value KDA layer's convolution width, a sensitivity bar's span."""

from twopaths.calc import kv, weights
from twopaths.calc.sensitivity import Bar


def test_a_partial_scale_group_still_takes_its_scale():
    # MXFP4: 33 values of 4 bits (16.5 B) and ceil(33 / 32) = 2 one-byte scales
    assert weights.WEIGHT_FORMATS["mxfp4"].bytes(33) == 16.5 + 2


def test_the_busiest_gpu_under_uneven_spreading():
    # 10 expert slots over 4 GPUs: 3, 3, 2, 2 (the first 10 % 4 ranks take one more)
    assert weights.experts_per_gpu(10, 4, uneven=True) == 3


def test_grouped_value_heads_widen_the_convolution_by_their_own_count():
    # 1 key head, 2 value heads of 2 x 2 (BF16): state 2 x 2 x 2 x 2 B = 16; the conv keeps kernel - 1 = 1
    # input of q and k (1 head x 2 each) and v (2 heads x 2): 8 values x 2 B = 16
    assert kv.kda_state_bytes(1, 2, 2, conv_kernel=2, value_heads=2) == 32


def test_a_bar_spans_the_distance_whichever_end_is_higher():
    assert Bar("x", 0, 1, 10, 4, 7).span == 6 and Bar("x", 0, 1, 4, 10, 7).span == 6
