"""Examples shipped with zymase, run by ``zymase demo``."""
