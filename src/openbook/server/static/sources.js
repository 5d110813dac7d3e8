// The sources of an answer as the page lists them: numbered 1, 2, 3 ... in the order the answer first cites
// them, one entry per distinct source (the same document, section and page cited through two passages is one
// entry), and the answer's [n] markers renumbered to match. A plain function, no DOM: the page and its tests
// (node) load the same file.
"use strict";

function sourceKey(c) {
  return [c.doc_id, c.section || "", c.page || ""].join("\u0000");
}

// answer: the answer text with [n] markers (n: passage numbers); citations, passages: as /v1/ask returns them.
// Returns { shown: Map(passage n -> listed number), sources: [{ n: listed number, citation, passage }] }, the
// sources in listed order: first those the text cites, in order of first citation, then any other citation.
function numberSources(answer, citations, passages) {
  const byN = new Map((passages || []).map((p) => [p.n, p]));
  const cited = new Map((citations || []).map((c) => [c.n, c]));
  const order = [];
  for (const m of String(answer || "").matchAll(/\[(\d+)\]/g)) {
    const n = Number(m[1]);
    if (cited.has(n) && !order.includes(n)) order.push(n);
  }
  for (const c of citations || []) if (!order.includes(c.n)) order.push(c.n);
  const shown = new Map();
  const byKey = new Map();
  const sources = [];
  for (const n of order) {
    const citation = cited.get(n);
    const key = sourceKey(citation);
    if (!byKey.has(key)) {
      byKey.set(key, sources.length + 1);
      sources.push({ n: sources.length + 1, citation, passage: byN.get(n) || citation });
    }
    shown.set(n, byKey.get(key));
  }
  return { shown, sources };
}

if (typeof module !== "undefined") module.exports = { numberSources };
