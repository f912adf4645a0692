"""Side-by-side comparisons of this book's figures with each paper's published ones (one module per paper).

The core (``datasets``, ``metrics``, ``bias``, ``mitigation``, ``metaeval``) never imports this package.
"""
