"""An answer's citation numbers are 1, 2, ... in first-use order on every surface: ``ask`` and ``ask --json`` (the
CLI over the real store), ``/v1/ask`` and ``/v1/chat/completions`` (the real server). The question's offline answer
cites the second passage of its context, so numbering by passage left a gap (``[2]`` with no ``[1]``)."""

from __future__ import annotations

import json
import re

import httpx
from click.testing import CliRunner

from openbook.answer.cite import citation_ids
from openbook.cli import cli

QUESTION = "How are pieces packed and how long does delivery take?"


def _dense(text: str, numbers: list[int]) -> None:
    """The markers of ``text`` first use 1, 2, ... in order, and ``numbers`` (the sources list) are 1..m."""
    firsts = list(dict.fromkeys(citation_ids(text)))
    assert firsts == list(range(1, len(firsts) + 1)), text
    assert numbers == list(range(1, len(numbers) + 1)) and set(firsts) == set(numbers), (text, numbers)


def test_every_surface_numbers_sources_densely_in_first_use_order(served):
    runner = CliRunner()
    shown = runner.invoke(cli, ["ask", QUESTION, "--store", str(served.store), "--role", "staff"])
    assert shown.exit_code == 0, shown.output
    text, _, sources = shown.output.partition("\nSources:\n")
    listed = [int(m) for m in re.findall(r"^\[(\d+)\]", sources, re.M)]
    assert listed, shown.output
    _dense(text, listed)
    data = json.loads(runner.invoke(cli, ["ask", QUESTION, "--json", "--store", str(served.store), "--role",
                                          "staff"]).output)
    _dense(data["answer"], [c["n"] for c in data["citations"]])
    assert [p["n"] for p in data["passages"]] == list(range(1, len(data["passages"]) + 1))
    cited = {c["n"]: c["chunk_id"] for c in data["citations"]}
    assert all(next(p for p in data["passages"] if p["n"] == n)["chunk_id"] == chunk for n, chunk in cited.items())
    with httpx.Client(base_url=served.url, headers=served.auth("staff"), timeout=60) as c:
        ask = c.post("/v1/ask", json={"question": QUESTION}).json()
        chat = c.post("/v1/chat/completions", json={"model": "openbook",
                                                    "messages": [{"role": "user", "content": QUESTION}]}).json()
    _dense(ask["answer"], [c["n"] for c in ask["citations"]])
    content = chat["choices"][0]["message"]["content"]
    body, _, listing = content.partition("\n\nSources:\n")
    _dense(body, [int(m) for m in re.findall(r"^\[(\d+)\]", listing, re.M)])
    assert ask["answer"] == data["answer"] == body
