"""The README's quickstart runs as printed.

The first ``python`` block under "## Quickstart" is taken from the README as it is and run
as a script, with what a user of ``init_chat_model("openai:...")`` has in their
environment: ``OPENAI_BASE_URL`` (here the scripted OpenAI-compatible server on
127.0.0.1) and ``OPENAI_API_KEY``. The server scripts the model; everything else — the
tools, the approval, the stream, the embedded store — is what the README shows.
"""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

from tests.support.openai_server import OpenAIServer, text, tool_call, tool_calls

README = Path(__file__).resolve().parents[2] / "README.md"
ANSWER = "It is sunny in Paris (22 °C); I emailed Ann."


def quickstart() -> str:
    """The quickstart's code, exactly as the README prints it."""
    section = README.read_text(encoding="utf-8").split("\n## Quickstart", 1)[1]
    found = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert found is not None, "the README's quickstart has no python block"
    return found.group(1)


def test_the_readme_quickstart_runs_as_printed(
    openai_server: OpenAIServer,
    home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key")
    email = {"to": "ann@example.com", "body": "Paris: sunny, 22 °C"}
    openai_server.add(
        tool_calls(tool_call("get_weather", {"city": "Paris"})),
        tool_calls(tool_call("send_email", email)),
        text(ANSWER),
    )
    script = tmp_path / "quickstart.py"
    script.write_text(quickstart(), encoding="utf-8")

    ran = runpy.run_path(str(script), run_name="__main__")

    printed = capsys.readouterr().out
    lines = [line for line in printed.splitlines() if line]
    assert lines == [
        "[get_weather] succeeded: Paris: sunny, 22 °C",
        f"approve? send_email {email}",  # asked before it ran
        "[send_email] succeeded: sent to ann@example.com",
        ANSWER,  # streamed token by token
        f"COMPLETED: {ANSWER}",
    ]
    out = ran["out"]
    assert out["contract"]["goal"] == "What's the weather in Paris? Email it to ann@example.com."
    sent = [r for r in out["results"].values() if r["tool_name"] == "send_email"]
    assert [r["status"] for r in sent] == ["OK"] and sent[0]["attempts"] == 1
    assert len(openai_server.requests) == 3 and not openai_server.unexpected
    assert all(r.body.get("stream") for r in openai_server.requests)  # tokens, over SSE
    assert (home / "exec.db").exists()  # the embedded default, under $EXECGRAPH_HOME
