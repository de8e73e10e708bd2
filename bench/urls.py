"""The product's URLs plus ``/bench/bare``: the yardstick the recall figures are compared with."""

from django.urls import path

from bench.views import bare_view
from xmemo.urls import urlpatterns as product_urlpatterns

urlpatterns = [path("bench/bare", bare_view), *product_urlpatterns]
