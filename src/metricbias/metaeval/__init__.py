"""Meta-evaluation: correlations of metrics with human judgements, before and after gender swapping."""
