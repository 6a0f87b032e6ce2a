"""What a run gives back: the summary and per-user tables as text or files (output.py), the
results per segment of users (segments.py) and the pictures (plot.py)."""
