"""REST views: parse input, call one selector or service, serialize the answer."""
