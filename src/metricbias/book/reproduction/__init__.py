"""Side-by-side comparisons of this book's figures with each paper's published ones (one module per paper), and the
chapters' tables and sentences (one module per chapter or figure).

Neither the core nor the book engine (:mod:`metricbias.book`) imports this package.
"""
