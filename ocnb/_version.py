"""The ocnb version (its own module so any part of the package can import it early)."""

__version__ = "0.1.0"
