"""Comparing runs on the same users: pairing and scoring them (compare.py), the paired tests and
intervals (stats.py), and the tidy rows and tables they are shown as (report.py)."""
