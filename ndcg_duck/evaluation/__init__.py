"""Evaluating one run on one machine: load and check the inputs (inputs.py), score the users with
the SQL macros, in batches of users when they are many (evaluate.py, batches.py), and show the
progress of a long run (progress.py)."""
