"""Bias measures: pairwise (Sun et al. Eq. 1-2) and, in later modules, generalized, distributional and association tests."""
