"""The model runtime of Level 0's semantic search: the sentence encoder (``embedding.py``), its
tuned weights (``weights/``) and the model's tokenizer (``tokenizer/``), shipped as package data.
Below the search code that uses it (``selectors/search/``, ``services/embeddings.py``)."""
