"""calc.request: a request's cache and a model's weights, against the article's stated figures."""

from twopaths.calc import kv
from twopaths.calc.request import activated_weight_bytes, model_weight_bytes, request_bytes
from twopaths.specs import model as model_spec


def test_stated_request_adds_the_fixed_state():
    # deployment.yaml: K3 keeps 207 MB of KDA state plus 61.4 kB a token; 1,000 tokens -> 268.4 MB
    assert abs(request_bytes("kimi-k3", 1000) - 268.4e6) < 1e-3


def test_stated_weights_headline_and_activated():
    # K3: 2.8T parameters at 1 byte (2.8 TB) in all, 104 GB activated
    assert model_weight_bytes("kimi-k3") == 2.8e12
    assert activated_weight_bytes("kimi-k3") == 104e9


def test_public_activated_bytes_do_not_read_the_embedding():
    # a token reads one row of the embedding table, not its share: its format cannot change the sum
    bf16 = activated_weight_bytes("kimi-k3", "public", {"embedding": "bf16"})
    fp8 = activated_weight_bytes("kimi-k3", "public", {"embedding": "fp8"})
    assert bf16 == fp8


def test_public_request_passes_the_state_dtype_on():
    # an empty context of K3 is its KDA state alone, which calc.kv prices in the dtype asked for
    spec = model_spec("kimi-k3", "public")
    assert request_bytes("kimi-k3", 0, "public", state_dtype="fp32") == kv.request_kv_bytes(spec, 0, None, "fp32")
    assert kv.request_kv_bytes(spec, 0, None, "fp32") != kv.request_kv_bytes(spec, 0, None, "bf16")
