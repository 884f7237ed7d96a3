"""calc.ep's EP sizes, checked by hand: whole-node sizes that divide the expert slots, up to and
including the maximum."""

from twopaths.calc import ep


def test_whole_node_sizes_reach_the_maximum():
    # V4-Pro's 256 experts over 8-GPU nodes: every multiple of 8 up to 128 that divides 256
    assert ep.whole_node_eps("deepseek-v4-pro", maximum=128) == [8, 16, 32, 64, 128]
    # K3's 896 = 2^7 x 7: multiples of 8 up to 128 that divide it (56 = 8 x 7, 112 = 16 x 7)
    assert ep.whole_node_eps("kimi-k3", maximum=128) == [8, 16, 32, 56, 64, 112, 128]
    assert [r.ep for r in ep.ep_table("deepseek-v4-pro", "h200")] == [8, 16, 32, 64, 128]
