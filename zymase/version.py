"""zymase's version (read by the disk cache, which keys entries on it)."""

__version__ = "0.1.0"
