"""execgraph: a LangGraph runtime that turns tool-call candidates into controlled actions."""
