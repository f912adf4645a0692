"""Mitigation: debiasing adapters trained on counterfactual data (Sun et al. 2022, Section 3.2).

* :mod:`.cda` builds the training data: counterfactual triples ``(c1, c2, r)``
  for the debiasing loss and original sentence pairs for knowledge distillation;
* :mod:`.differentiable` scores pairs with gradients (BERTScore-F greedy
  matching, the regression metric's head) on a backbone carrying an adapter;
* :mod:`.training` trains, checkpoints, resumes, saves and loads adapters;
* :mod:`.evaluation` measures bias and metric quality before and after.
"""
