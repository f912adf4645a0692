"""Datasets: loaders of released data and builders of paired-candidate sets."""
