// openbook web page. Document text is untrusted: it is only ever put into the page with textContent or
// createTextNode, never with innerHTML, so markup inside a document shows as text and never runs.
"use strict";

const $ = (sel) => document.querySelector(sel);
const keyInput = $("#api-key");
keyInput.value = localStorage.getItem("openbook-key") || "";
keyInput.addEventListener("change", () => localStorage.setItem("openbook-key", keyInput.value.trim()));

function headers(extra = {}) {
  const h = { ...extra };
  const key = keyInput.value.trim();
  if (key) h["Authorization"] = "Bearer " + key;
  return h;
}

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === "text") node.textContent = v;
    else if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c);
  return node;
}

function showError(message) {
  const box = $("#error");
  box.textContent = message;
  box.hidden = !message;
}

async function api(method, path, body) {
  const init = { method, headers: headers(body && !(body instanceof FormData) ? { "Content-Type": "application/json" } : {}) };
  if (body) init.body = body instanceof FormData ? body : JSON.stringify(body);
  const resp = await fetch(path, init);
  const data = await resp.json().catch(() => ({}));
  if (!resp.ok && !(data && data.failed)) throw new Error((data.error && data.error.message) || resp.statusText);
  return data;
}

// ------------------------------------------------------------------ tabs
for (const tab of document.querySelectorAll(".tab")) {
  tab.addEventListener("click", () => {
    for (const t of document.querySelectorAll(".tab")) t.classList.toggle("active", t === tab);
    for (const name of ["ask", "search", "documents"]) $("#tab-" + name).hidden = name !== tab.dataset.tab;
    if (tab.dataset.tab === "documents") loadDocuments();
  });
}

// ------------------------------------------------------------------ viewer
function openViewer(title, meta, parts, suspect) {
  $("#viewer-title").textContent = title;
  $("#viewer-meta").textContent = meta;
  $("#viewer-warning").hidden = !suspect;
  const body = $("#viewer-body");
  body.replaceChildren(...parts.map((p) => el("div", { class: "chunk", text: p })));
  $("#viewer").hidden = false;
}
$("#viewer-close").addEventListener("click", () => { $("#viewer").hidden = true; });

function describe(p) {
  const bits = [p.doc_id];
  if (p.section) bits.push("§ " + p.section);
  if (p.page) bits.push("p. " + p.page);
  bits.push(p.updated ? "updated " + p.updated : "no date");
  return bits.join(" · ");
}

function openPassage(p) {
  openViewer(`[${p.n}] ${p.title || p.doc_id}`, describe(p), [p.text], p.suspect_instructions);
}

async function openDocument(docId) {
  try {
    const doc = await api("GET", "/v1/documents/" + encodeURIComponent(docId));
    openViewer(doc.title || doc.doc_id, describe(doc) + " · " + doc.source,
      doc.chunks.map((c) => (c.section ? "§ " + c.section + "\n" : "") + c.text), false);
  } catch (e) { showError(e.message); }
}

// ------------------------------------------------------------------ ask
let history = [];

function renderAnswer(box, text, passages, shown = new Map()) {
  // the answer text with each [n] turned into a button that opens passage n, labelled with the number the
  // sources list gives it (shown: passage n -> listed number, see sources.js)
  const byN = new Map((passages || []).map((p) => [p.n, p]));
  box.replaceChildren();
  let last = 0;
  for (const m of text.matchAll(/\[(\d+)\]/g)) {
    box.append(document.createTextNode(text.slice(last, m.index)));
    const p = byN.get(Number(m[1]));
    const listed = shown.get(Number(m[1]));
    const label = listed ? `[${listed}]` : m[0];
    if (p) box.append(el("button", { type: "button", class: "cite", text: label, title: describe(p), onclick: () => openPassage({ ...p, n: listed || p.n }) }));
    else box.append(document.createTextNode(m[0]));
    last = m.index + m[0].length;
  }
  box.append(document.createTextNode(text.slice(last)));
}

async function ask(question) {
  showError("");
  const turn = el("div", { class: "turn" }, el("div", { class: "q", text: question }));
  const box = el("div", { class: "answer streaming", "aria-live": "polite" });
  turn.append(box);
  $("#conversation").append(turn);
  $("#ask-button").disabled = true;
  let text = "";
  try {
    const resp = await fetch("/v1/ask", {
      method: "POST", headers: headers({ "Content-Type": "application/json", Accept: "text/event-stream" }),
      body: JSON.stringify({ question, stream: true, history }),
    });
    if (!resp.ok) {
      const data = await resp.json().catch(() => ({}));
      throw new Error((data.error && data.error.message) || resp.statusText);
    }
    const reader = resp.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const event = (block.match(/^event: (.*)$/m) || [])[1];
        const data = JSON.parse((block.match(/^data: (.*)$/m) || [])[1] || "null");
        if (event === "token") { text += data.text; box.textContent = text; }
        else if (event === "error") throw new Error(data.error.message);
        else if (event === "answer") finishAnswer(turn, box, data);
      }
    }
    history.push({ role: "user", content: question }, { role: "assistant", content: text });
  } catch (e) {
    box.remove();
    showError(e.message);
  } finally {
    box.classList.remove("streaming");
    $("#ask-button").disabled = false;
  }
}

function finishAnswer(turn, box, data) {
  const { shown, sources } = numberSources(data.answer, data.citations, data.passages);
  renderAnswer(box, data.answer, data.passages, shown);
  if (data.refused) {
    box.classList.add("refusal");
    box.prepend(el("div", { class: "badge", text: "Not in the documents" }), document.createElement("br"));
    return;
  }
  const list = el("ol", { class: "sources" });
  for (const { n, citation: c, passage: p } of sources) {
    list.append(el("li", {},
      el("a", { text: (c.title || c.doc_id), onclick: () => openPassage({ ...p, n }) }),
      document.createTextNode(" — " + describe(c))));
  }
  turn.append(list);
  if (data.question && data.question !== turn.querySelector(".q").textContent)
    turn.append(el("div", { class: "meta", text: "searched as: " + data.question }));
}

$("#ask-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const q = $("#question").value.trim();
  if (q) { $("#question").value = ""; ask(q); }
});
$("#question").addEventListener("keydown", (e) => {
  if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); $("#ask-form").requestSubmit(); }
});
$("#new-chat").addEventListener("click", () => { history = []; $("#conversation").replaceChildren(); });

// ------------------------------------------------------------------ search
$("#search-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  showError("");
  const query = $("#query").value.trim();
  if (!query) return;
  const where = $("#where").value.split(";").map((s) => s.trim()).filter(Boolean);
  const body = { query, k: 10, where };
  if ($("#mode").value) body.mode = $("#mode").value;
  try {
    const data = await api("POST", "/v1/search", body);
    const list = $("#results");
    list.replaceChildren();
    if (!data.hits.length) list.append(el("li", { text: "No results." }));
    for (const h of data.hits) {
      // the snippet marks matches with **word**: bold them with text nodes, never with markup from the text
      const snippet = el("div", { class: "snippet" });
      h.snippet.split(/\*\*/).forEach((part, i) => snippet.append(i % 2 ? el("b", { text: part }) : document.createTextNode(part)));
      list.append(el("li", {},
        el("a", { text: (h.title || h.doc_id), onclick: () => openDocument(h.doc_id) }),
        el("span", { class: "meta", text: "  " + describe(h) + " · score " + h.score.toFixed(3) }),
        snippet));
    }
  } catch (err) { showError(err.message); }
});

// ------------------------------------------------------------------ documents
async function loadDocuments() {
  try {
    const data = await api("GET", "/v1/documents");
    const body = $("#documents tbody");
    body.replaceChildren();
    for (const d of data.documents) {
      body.append(el("tr", { "data-doc": d.doc_id },
        el("td", {}, el("a", { text: d.doc_id, onclick: () => openDocument(d.doc_id) })),
        el("td", { text: d.title || "" }),
        el("td", { text: d.updated || "" }),
        el("td", { text: String(d.chunks) }),
        el("td", {}, el("button", { type: "button", class: "secondary delete", text: "Delete", onclick: () => removeDocument(d.doc_id) }))));
    }
  } catch (e) { showError(e.message); }
}

async function removeDocument(docId) {
  if (!confirm("Delete " + docId + " from the store?")) return;
  try {
    await api("DELETE", "/v1/documents/" + encodeURIComponent(docId));
    await loadDocuments();
  } catch (e) { showError(e.message); }
}

$("#upload-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  showError("");
  const files = $("#upload-files").files;
  if (!files.length) return;
  const form = new FormData();
  for (const f of files) form.append("files", f);
  $("#upload-status").textContent = "uploading…";
  try {
    const r = await api("POST", "/v1/ingest", form);
    const failed = r.failed.map((f) => f[1]).join("; ");
    $("#upload-status").textContent = `${r.added.length} added, ${r.updated.length} updated, ${r.unchanged.length} unchanged` +
      (failed ? `, failed: ${failed}` : "");
    $("#upload-files").value = "";
    await loadDocuments();
  } catch (err) { $("#upload-status").textContent = ""; showError(err.message); }
});
