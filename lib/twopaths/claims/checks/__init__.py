"""Recomputations of the article's claims, one module per claims topic; importing registers them."""

from . import kv_cache  # noqa: F401
from . import architecture  # noqa: F401
from . import trends  # noqa: F401
from . import benchmarks  # noqa: F401
from . import hardware  # noqa: F401
from . import parallelism  # noqa: F401
from . import serving  # noqa: F401
from . import attribution  # noqa: F401
