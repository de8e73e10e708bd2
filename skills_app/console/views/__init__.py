"""Console views, one module per area; ``console/urls.py`` maps them."""
