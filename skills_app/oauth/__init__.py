"""OAuth 2.1 for MCP clients on django-oauth-toolkit (docs/contract.md §12).

``resource`` says which audience this server is; ``tokens`` turns an OAuth access token into the
consented ``ApiToken`` for ``gateway.auth``; ``validator`` adds the product's rules to the library's
token endpoint. The routes (metadata, registration, token endpoint) and the consent page belong
to the console door: ``console/oauth_urls.py`` and ``console/views/oauth.py``.
"""
