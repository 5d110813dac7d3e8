"""The page's list of an answer's sources: numbered 1, 2, 3 in the order the answer first cites them, one entry
per distinct source, the answer's markers renumbered to match. The page's own script (``static/sources.js``,
fetched from a real server) runs under node on the server's real answers and on an answer in the same shape
whose markers come out of order, with gaps and with one source cited through two passages."""

from __future__ import annotations

import json
import shutil
import subprocess

import httpx
import pytest

_RUN = """
const { numberSources } = require(process.argv[1]);
const cases = JSON.parse(require("fs").readFileSync(0, "utf8"));
console.log(JSON.stringify(cases.map((d) => {
  const { shown, sources } = numberSources(d.answer, d.citations, d.passages);
  return { shown: [...shown.entries()], sources: sources.map((s) => [s.n, s.citation.doc_id, s.citation.n]) };
})));
"""


def _numbered(script, cases):
    node = shutil.which("node")
    if node is None:
        pytest.skip("no node here to run the page's script (apt-get install -y nodejs)")
    out = subprocess.run([node, "-e", _RUN, str(script)], input=json.dumps(cases), capture_output=True, text=True,
                         timeout=60, check=True)
    return json.loads(out.stdout)


def _citation(n, doc_id, section):
    return {"n": n, "doc_id": doc_id, "chunk_id": f"{doc_id}#{n}", "title": doc_id, "page": None,
            "section": section, "updated": None}


def test_sources_are_numbered_in_citation_order_without_gaps_or_repeats(served, tmp_path):
    with httpx.Client(base_url=served.url, headers=served.auth("staff"), timeout=60) as c:
        page = c.get("/").text
        script = tmp_path / "sources.js"
        script.write_bytes(c.get("/static/sources.js").raise_for_status().content)
        real = [c.post("/v1/ask", json={"question": q}).json()
                for q in ("How many days of annual leave do full-time employees get?",
                          "How much does the staff parking permit cost and when is it renewed?")]
    assert page.index("/static/sources.js") < page.index("/static/app.js")
    crafted = {"answer": "Kilns cool overnight [4]. Glaze needs a day [1]. Cooling takes twelve hours [3]. "
                         "Open the lid at 80 degrees [4].",
               "citations": [_citation(4, "kiln.md", "Cooling"), _citation(1, "glaze.md", "Drying"),
                             _citation(3, "kiln.md", "Cooling")],
               "passages": []}
    *answers, odd = _numbered(script, [*real, crafted])
    assert odd == {"shown": [[4, 1], [1, 2], [3, 1]], "sources": [[1, "kiln.md", 4], [2, "glaze.md", 1]]}
    for data, out in zip(real, answers):
        assert data["citations"], data
        listed = [n for n, _, _ in out["sources"]]
        assert listed == list(range(1, len(listed) + 1))
        firsts = []
        for n, shown in out["shown"]:
            if shown not in firsts:
                firsts.append(shown)
        assert firsts == listed  # first cited, first listed
        keys = [(c["doc_id"], c["section"], c["page"]) for c in data["citations"]]
        assert len(out["sources"]) == len(set(keys))
