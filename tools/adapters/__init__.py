"""Adapters: bridges from validated tool calls to the world.

Process and HTTP adapters need only the core install; ``DatabaseAdapter`` imports psycopg
only for PostgreSQL URLs and ``BrowserAdapter`` needs the ``browser`` extra.
"""

from execgraph.tools.adapters.base import (
    DEFAULT_OUTPUT_BUDGET,
    Adapter,
    AdapterOutput,
    InvokeContext,
    attach_output,
    output_of,
)
from execgraph.tools.adapters.browser import BrowserAdapter
from execgraph.tools.adapters.corpus import CorpusAdapter
from execgraph.tools.adapters.database import DatabaseAdapter
from execgraph.tools.adapters.fake import FakeAdapter
from execgraph.tools.adapters.files import FileAdapter
from execgraph.tools.adapters.http import HttpAdapter
from execgraph.tools.adapters.process import ProcessAdapter, ProcessExitError

__all__ = [
    "DEFAULT_OUTPUT_BUDGET",
    "Adapter",
    "AdapterOutput",
    "BrowserAdapter",
    "CorpusAdapter",
    "DatabaseAdapter",
    "FakeAdapter",
    "FileAdapter",
    "HttpAdapter",
    "InvokeContext",
    "ProcessAdapter",
    "ProcessExitError",
    "attach_output",
    "output_of",
]
