"""Settings of the benchmark server: the product's own, plus a bare view beside the API."""

from xmemo.settings import *  # noqa: F403

ROOT_URLCONF = "bench.urls"
