"""OfflinePolicyModel: a deterministic chat model that performs the research demo offline.

It is a *policy*, not a language model: it reads what the runtime shows it — the tools
bound for this turn, the tool outputs in the transcript, the verifier's rejections — and
proposes the next step of the research-assistant task (search the corpus, read the top
documents, draft a cited report, publish it, finish). It is deliberately frugal: it reads
two documents before drafting and cites a third it only saw in search results, so the
verifier rejects the first finish ("citation cannot be located"), the policy reads the
missing document, and the second finish is accepted — the whole gated loop, reproducibly,
under every architecture, with no network and no API key.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from execgraph.testing.binding import ToolBindingChatModel, offered_names
from execgraph.testing.scripted import estimate_tokens

__all__ = ["DEMO_QUERY", "OfflinePolicyModel"]

DEMO_QUERY = "RAG long context freshness cost traceability"
REPORT = "report.md"
_BLOCK = re.compile(r'<tool_output tool="([a-z_]+)"[^>]*>\n(.*?)\n</tool_output>', re.S)
_CITATION = re.compile(r"citation \[([a-z0-9-]+)\] cannot be located")


@dataclass
class _Seen:
    """What the transcript shows has happened so far."""

    hits: list[dict[str, Any]] = field(default_factory=list)
    read: dict[str, str] = field(default_factory=dict)
    written: bool = False
    published: bool = False
    missing: list[str] = field(default_factory=list)
    rejected: bool = False


def _outputs(messages: Sequence[BaseMessage]) -> Iterator[tuple[str, dict[str, Any]]]:
    for message in messages:
        text = message.content if isinstance(message.content, str) else str(message.content)
        for tool, body in _BLOCK.findall(text):
            try:
                yield tool, json.loads(body)
            except json.JSONDecodeError:
                yield tool, _salvage(body)  # a truncated observation: keep its head


def _salvage(body: str) -> dict[str, Any]:
    """Status and ids from the head of a truncated observation."""
    status = re.search(r'"status": "([A-Z_]+)"', body)
    doc = re.search(r'"doc_id": "([a-z0-9-]+)"', body)
    title = re.search(r'"title": "([^"]*)"', body)
    data = {"doc_id": doc.group(1), "title": title.group(1) if title else ""} if doc else {}
    return {"status": status.group(1) if status else "", "data": data}


def _observe(messages: Sequence[BaseMessage]) -> _Seen:
    seen = _Seen()
    for tool, body in _outputs(messages):
        data = body.get("data") or {}
        if body.get("status") != "OK":
            continue
        if tool == "search_corpus":
            seen.hits = list(data.get("hits", []))
        elif tool == "read_document":
            seen.read[data.get("doc_id", "")] = data.get("title", "")
        elif tool == "write_file":
            seen.written = True
        elif tool == "publish_report":
            seen.published = True
    for message in messages:
        text = str(message.content)
        if "finish rejected" in text or "rejected the result" in text or "evidence gap" in text:
            seen.rejected = True
            seen.missing = [m for m in _CITATION.findall(text) if m not in seen.read]
    return seen


def _report(seen: _Seen) -> str:
    cited = [h for h in seen.hits[:3]]
    lines = [
        "# RAG vs long context: freshness, cost and traceability",
        "",
        "## Freshness",
        f"Retrieval keeps answers current by re-indexing documents [{cited[0]['doc_id']}].",
        "",
        "## Cost",
        f"Long-context prompts pay for every token on every query [{cited[1]['doc_id']}].",
        "",
        "## Traceability",
        f"Retrieved passages can be cited, which makes answers checkable [{cited[2]['doc_id']}].",
        "",
        "## Sources",
        *[f"- [{h['doc_id']}] {h.get('title', '')}" for h in cited],
    ]
    return "\n".join(lines) + "\n"


def _summary(seen: _Seen) -> str:
    sources = ", ".join(f"[{d}]" for d in seen.read) or "none"
    return (
        "Report written to report.md comparing RAG and long-context models on freshness, "
        f"cost and traceability; sources read: {sources}."
    )


class OfflinePolicyModel(ToolBindingChatModel):
    """Deterministic stand-in for a chat model on the research demo (no network)."""

    query: str = DEMO_QUERY
    first_reads: int = 2

    @property
    def _llm_type(self) -> str:
        return "execgraph-offline-policy"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        offered = set(offered_names(kwargs))
        calls = self._decide(_observe(messages), offered)
        ids = itertools.count()
        tool_calls = [
            {
                "name": n,
                "args": a,
                "id": f"offline-{len(messages)}-{next(ids)}",
                "type": "tool_call",
            }
            for n, a in calls
        ]
        text_in = sum(estimate_tokens(str(m.content)) for m in messages)
        text_out = estimate_tokens(json.dumps(calls))
        message = AIMessage(
            content="",
            tool_calls=tool_calls,
            usage_metadata={
                "input_tokens": text_in,
                "output_tokens": text_out,
                "total_tokens": text_in + text_out,
            },
            response_metadata={"model_name": "offline-policy", "model_provider": "offline"},
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

    # ----------------------------------------------------------------- the policy

    def _decide(self, seen: _Seen, offered: set[str]) -> list[tuple[str, dict[str, Any]]]:
        if "submit_capabilities" in offered:  # a least-privilege contract: plan, from the request
            tools = ["search_corpus", "read_document", "write_file", "publish_report"]
            return [("submit_capabilities", {"tools": tools})]
        if "submit_plan" in offered:
            return [("submit_plan", {"steps": self._plan(seen)})]
        if "search_corpus" in offered and not seen.hits:
            return [("search_corpus", {"query": self.query, "limit": 5})]
        if "read_document" in offered and seen.missing:
            return [("read_document", {"doc_id": d}) for d in seen.missing]
        first = [h["doc_id"] for h in seen.hits[: self.first_reads]]
        if "read_document" in offered and any(d not in seen.read for d in first):
            return [("read_document", {"doc_id": d}) for d in first if d not in seen.read]
        if "write_file" in offered and not seen.written and len(seen.hits) >= 3:
            return [("write_file", {"path": REPORT, "content": _report(seen)})]
        if "publish_report" in offered and self._may_publish(seen):
            return [("publish_report", {"path": REPORT})]
        if "revise_plan" in offered and (seen.missing or not seen.written):
            why = "cited documents were never read" if seen.missing else "no report yet"
            return [("revise_plan", {"reason": why})]
        if "finish" in offered:
            return [("finish", {"output": _summary(seen)})]
        return [("abort", {"reason": "no offered tool fits the next step"})]

    @staticmethod
    def _may_publish(seen: _Seen) -> bool:
        """Publish only a written report the verifier has seen and whose sources were read."""
        return seen.written and not seen.published and seen.rejected and not seen.missing

    def _plan(self, seen: _Seen) -> list[dict[str, Any]]:
        """A DAG for plan-and-execute: search first; then reads, draft and (later) publish."""
        if not seen.hits:
            return [
                {
                    "id": "search",
                    "tool": "search_corpus",
                    "arguments": {"query": self.query, "limit": 5},
                }
            ]
        todo = seen.missing or [h["doc_id"] for h in seen.hits[: self.first_reads]]
        steps: list[dict[str, Any]] = [
            {
                "id": f"read-{d}",
                "tool": "read_document",
                "arguments": {"doc_id": d},
                "success": "document",
            }
            for d in todo
            if d not in seen.read
        ]
        reads = [s["id"] for s in steps]
        if not seen.written:
            steps.append(
                {
                    "id": "draft",
                    "tool": "write_file",
                    "depends_on": reads,
                    "arguments": {"path": REPORT, "content": _report(seen)},
                }
            )
        if seen.rejected and seen.written and not seen.published:
            steps.append(
                {
                    "id": "publish",
                    "tool": "publish_report",
                    "depends_on": reads,
                    "arguments": {"path": REPORT},
                }
            )
        return steps or [
            {
                "id": "recheck",
                "tool": "search_corpus",
                "arguments": {"query": self.query, "limit": 5},
            }
        ]
