"""Node functions: plain top-level functions, one concept per file."""

__all__: list[str] = []
