// The operator console's script (console.html), served as a module file
// rather than inline: the console's Content-Security-Policy allows scripts
// from the gateway only (api/static.go).
import "/widget/rankwire.js";
const $ = (id) => document.getElementById(id);
let token = sessionStorage.getItem("rankwire-console-token") || "";
let current = "";

const text = (s) => document.createTextNode(s == null ? "" : String(s));
function cells(tr, values) {
  for (const v of values) {
    const td = document.createElement("td");
    if (v instanceof Node) td.append(v); else td.append(text(v));
    tr.append(td);
  }
  return tr;
}
function alertShow(msg) { $("alert").textContent = msg || ""; }

// api calls the gateway's API with the admin token; an error answer
// throws with the gateway's message.
async function api(method, path) {
  const r = await fetch(path, { method, headers: { Authorization: `Bearer ${token}` } });
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(body.error ? `${body.error.code}: ${body.error.message}` : `HTTP ${r.status}`);
  return body;
}

async function signIn() {
  try {
    const t = await api("GET", "/v1/tenant");
    sessionStorage.setItem("rankwire-console-token", token);
    $("who").textContent = `tenant ${t.tenant}`;
    $("signin").hidden = true;
    for (const id of ["tenant", "boards"]) $(id).hidden = false;
    alertShow("");
    showTenant(t);
    await loadBoards();
  } catch (e) {
    alertShow(`Sign-in refused: ${e.message}`);
    $("signin").hidden = false;
  }
}

function showTenant(t) {
  const rows = $("tenant-rows");
  rows.replaceChildren();
  for (const [k, v] of [["Submissions per second (limit)", t.limits.submissions_per_second], ["WebSocket connections (limit)", t.limits.connections],
    ["Boards (limit)", t.limits.boards], ["Boards", t.boards], ["WebSocket connections on this gateway", t.connections]]) {
    const tr = document.createElement("tr");
    const th = document.createElement("th");
    th.scope = "row";
    th.textContent = k;
    tr.append(th);
    rows.append(cells(tr, [v]));
  }
  const subs = $("subs-rows");
  subs.replaceChildren();
  for (const [b, n] of Object.entries(t.subscriptions)) subs.append(cells(document.createElement("tr"), [b, n]));
}

// boardsPage is the most boards one GET /v1/boards answers.
const boardsPage = 1000;
// boardsNext is the cursor of the page after the boards shown ("": none).
let boardsNext = "";

// loadBoards lists the tenant's boards in name order, a page at a time:
// the first page, or with more, the page after the boards shown, added to
// them (PROTOCOL.md: GET /v1/boards pages with after and next). "More
// boards" shows while a next page exists.
async function loadBoards(more) {
  const after = more && boardsNext ? `&after=${encodeURIComponent(boardsNext)}` : "";
  const { boards, next } = await api("GET", `/v1/boards?limit=${boardsPage}${after}`);
  const rows = $("board-rows");
  if (!more) rows.replaceChildren();
  for (const b of boards) {
    const open = document.createElement("button");
    open.textContent = "Open";
    open.setAttribute("aria-label", `Open board ${b.name}`);
    open.addEventListener("click", () => openBoard(b.name));
    rows.append(cells(document.createElement("tr"), [b.name, `${b.policy} · ${b.order}`, b.members, b.ends_at || "—", open]));
  }
  boardsNext = next || "";
  $("more-boards").hidden = !boardsNext;
}

async function openBoard(name) {
  current = name;
  $("board").hidden = false;
  $("board-h").textContent = `Board ${name}`;
  try {
    const b = await api("GET", `/v1/boards/${encodeURIComponent(name)}`);
    $("settings").textContent = JSON.stringify(b, null, 2);
    const el = document.createElement("rankwire-board");
    el.id = "live";
    for (const [k, v] of Object.entries({ board: name, view: "top", limit: "10", label: `${name} · live top 10`, token })) el.setAttribute(k, v);
    $("live-slot").replaceChildren(el);
    await loadHeld();
  } catch (e) { alertShow(e.message); }
}

async function loadHeld() {
  const { rows } = await api("GET", `/v1/boards/${encodeURIComponent(current)}/quarantine?limit=100`);
  const body = $("held-rows");
  body.replaceChildren();
  $("held-empty").hidden = rows.length > 0;
  for (const h of rows) {
    const approve = document.createElement("button");
    approve.textContent = "Approve";
    approve.setAttribute("aria-label", `Approve ${h.member}'s ${h.score} (qid ${h.qid})`);
    approve.addEventListener("click", () => decide(h.qid, "approve"));
    const reject = document.createElement("button");
    reject.textContent = "Reject";
    reject.className = "danger";
    reject.setAttribute("aria-label", `Reject ${h.member}'s ${h.score} (qid ${h.qid})`);
    reject.addEventListener("click", () => decide(h.qid, "reject"));
    const both = document.createElement("span");
    both.append(approve, text(" "), reject);
    const tr = cells(document.createElement("tr"), [h.qid, h.member, h.score, h.reason, h.at, both]);
    tr.dataset.qid = h.qid;
    body.append(tr);
  }
}

async function decide(qid, verb) {
  try {
    await api("POST", `/v1/boards/${encodeURIComponent(current)}/quarantine/${encodeURIComponent(qid)}/${verb}`);
    alertShow("");
    await loadHeld();
  } catch (e) { alertShow(e.message); }
}

async function findMember(m) {
  const out = $("member-out");
  out.replaceChildren();
  try {
    const b = encodeURIComponent(current), id = encodeURIComponent(m);
    const row = await api("GET", `/v1/boards/${b}/members/${id}`);
    const hist = await api("GET", `/v1/boards/${b}/members/${id}/history`);
    const p = document.createElement("p");
    p.id = "member-row";
    p.textContent = `${row.name || row.member}: rank ${row.rank} of ${row.total}, score ${row.score}${row.review ? " (under review)" : ""}`;
    const list = document.createElement("ol");
    list.id = "member-history";
    list.setAttribute("aria-label", "Recent changes, newest first");
    for (const pt of hist.points) {
      const li = document.createElement("li");
      li.textContent = `${pt.at || pt.window}: rank ${pt.rank} of ${pt.total}, score ${pt.score}`;
      list.append(li);
    }
    out.append(p, list);
  } catch (e) {
    const p = document.createElement("p");
    p.textContent = e.message;
    out.append(p);
  }
}

$("signin-form").addEventListener("submit", (e) => { e.preventDefault(); token = $("token").value.trim(); signIn(); });
$("more-boards").addEventListener("click", () => loadBoards(true).catch((e) => alertShow(e.message)));
$("member-form").addEventListener("submit", (e) => { e.preventDefault(); findMember($("member").value.trim()); });
setInterval(async () => { if (!$("tenant").hidden) try { showTenant(await api("GET", "/v1/tenant")); } catch {} }, 5000);
if (token) signIn();
window.consoleReady = true;
