"""Each architecture's graph, drawn from the compiled graph itself (LangGraph's mermaid).

The drawing is what ``build_graph`` compiles today, over a scripted model and one tool of
each effect class, in a throw-away home: a node renamed or an edge added shows on the
architecture's page at the next build.
"""

from __future__ import annotations

import tempfile

__all__ = ["mermaid"]


def mermaid(arch: str) -> str:
    """A collapsed block holding a mermaid fence that draws the compiled graph of ``arch``
    (the site's theme renders it when opened; without its script, the source shows)."""
    from execgraph import ScriptedChatModel, build_graph, tool_spec

    @tool_spec(effect="read")
    def look(query: str) -> str:
        """Read something."""
        return query

    @tool_spec(effect="write")
    def note(text: str) -> str:
        """Write something."""
        return text

    @tool_spec(effect="irreversible")
    def publish(text: str) -> str:
        """Publish something."""
        return text

    with tempfile.TemporaryDirectory(prefix="execgraph-docs-") as home:
        app = build_graph(
            arch,
            model=ScriptedChatModel([]),
            tools=[look, note, publish],
            home=home,
            checkpointer=False,
        )
        drawing = app.get_graph().draw_mermaid()
    fence = ["```mermaid", *drawing.strip().splitlines(), "```"]
    body = "\n".join(f"    {line}" if line else "" for line in fence)
    return f'??? abstract "The compiled graph of `{arch}`, as LangGraph draws it"\n\n{body}\n'
