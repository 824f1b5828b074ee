// The operator console's script (console.html), served as a module file
// rather than inline: the console's Content-Security-Policy allows scripts
// from the gateway only (api/static.go).
//
// Invariants: everything the API answers is rendered with textContent or
// text nodes (el, cells), never innerHTML, so a board, member or profile
// name is text whatever it holds; the token lives in sessionStorage only.
import "/widget/rankwire.js";

const $ = (id) => document.getElementById(id);
const tokenKey = "rankwire-console-token";
let token = sessionStorage.getItem(tokenKey) || "";
let current = ""; // the open board's name
let currentBoard = null; // the open board as GET /v1/boards/{b} answered

// ---- rendering helpers: text only ----

const nf = new Intl.NumberFormat();
const df = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });

// el builds an element with properties (textContent, className, ...) and
// children (strings become text nodes).
function el(tag, props, ...children) {
  const e = document.createElement(tag);
  Object.assign(e, props || {});
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(c == null ? "" : String(c)));
  return e;
}
function num(v) { return typeof v === "number" ? nf.format(v) : v == null ? "" : String(v); }
function numCell(v) { return el("td", { className: "num" }, num(v)); }

// when shows an RFC 3339 time in the viewer's zone, with the UTC value the
// API gave in the title; "—" for none.
function when(iso) {
  if (!iso) return el("span", { className: "muted" }, "—");
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return el("span", {}, iso);
  return el("time", { dateTime: iso, title: `UTC ${iso}` }, df.format(d));
}
function alertShow(msg) { $("alert").textContent = msg || ""; }
function notice(msg) { $("notice").textContent = msg || ""; }
function button(label, aria, onClick, className) {
  const b = el("button", { type: "button", className: className || "" }, label);
  if (aria) b.setAttribute("aria-label", aria);
  b.addEventListener("click", onClick);
  return b;
}

// confirmInline replaces slot's content with a question and two buttons;
// act runs on "yes" only. No window.confirm: it blocks the page.
function confirmInline(slot, question, yes, act, restore) {
  const no = button("Cancel", "", () => restore());
  const ok = button(yes, "", async () => { ok.disabled = true; await act(); }, "danger");
  slot.replaceChildren(el("span", { className: "confirm" }, question, " "), ok, " ", no);
  no.focus();
}

// ---- the API ----

// ApiError is an error answer of the gateway: its code, message and status.
class ApiError extends Error {
  constructor(status, code, message) {
    super(code ? `${code}: ${message}` : `HTTP ${status}`);
    Object.assign(this, { status, code, apiMessage: message || "" });
  }
}

// api calls the gateway's API with the token; an error answer throws an
// ApiError with the gateway's code and message.
async function api(method, path, body) {
  const headers = { Authorization: `Bearer ${token}` };
  const init = { method, headers };
  if (body !== undefined) { headers["Content-Type"] = "application/json"; init.body = JSON.stringify(body); }
  const r = await fetch(path, init);
  const answer = await r.json().catch(() => ({}));
  if (!r.ok) throw new ApiError(r.status, answer.error?.code, answer.error?.message);
  return answer;
}
const enc = encodeURIComponent;
const boardPath = (...rest) => ["/v1/boards", enc(current), ...rest].join("/");

// ---- sign-in ----

// claims decodes a JWT's payload without verifying it (the gateway
// verifies it on every request); null where it is not a JWT.
function claims(tok) {
  try {
    const p = tok.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
    const bytes = Uint8Array.from(atob(p + "=".repeat((4 - p.length % 4) % 4)), (c) => c.charCodeAt(0));
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch { return null; }
}

function showWho(c) {
  const who = $("who");
  who.replaceChildren();
  if (!c) { who.append("token not decodable"); return; }
  const roles = Array.isArray(c.roles) && c.roles.length ? c.roles.join(", ") : "none";
  who.append(el("span", { id: "who-tenant" }, `tenant ${c.tnt ?? "?"}`), " · ",
    el("span", { id: "who-roles" }, `roles ${roles}`),
    Array.isArray(c.boards) ? ` · boards ${c.boards.join(", ") || "none"}` : "", " · expires ",
    typeof c.exp === "number" ? when(new Date(c.exp * 1000).toISOString()) : "?",
    el("span", { className: "muted-light" }, " (decoded, not verified)"));
  who.title = "Decoded in the browser without checking the signature; the gateway checks it.";
}

async function signIn() {
  try {
    const t = await api("GET", "/v1/tenant");
    sessionStorage.setItem(tokenKey, token);
    showWho(claims(token));
    $("signin").hidden = true;
    $("signout").hidden = false;
    for (const id of ["tenant", "tokens", "boards"]) $(id).hidden = false;
    alertShow("");
    showTenant(t);
    await loadBoards(false);
  } catch (e) {
    alertShow(`Sign-in refused: ${e.message}`);
    sessionStorage.removeItem(tokenKey);
    $("signin").hidden = false;
  }
}

// signOut forgets the token and empties every view, the live widget's
// WebSocket included.
function signOut() {
  sessionStorage.removeItem(tokenKey);
  token = "";
  current = "";
  for (const id of ["tenant", "tokens", "boards", "board", "editor", "signout"]) $(id).hidden = true;
  hideToken();
  for (const id of ["who", "live-slot", "board-rows", "tenant-rows", "subs-rows", "held-rows", "member-rows", "standing-rows", "decisions", "dq-rows", "settle-slot", "audit-rows"]) $(id).replaceChildren();
  $("member-detail").hidden = true;
  $("token").value = "";
  $("signin").hidden = false;
  alertShow("");
  notice("Signed out: the token is gone from this tab.");
}

function showTenant(t) {
  const rows = $("tenant-rows");
  rows.replaceChildren();
  for (const [k, v] of [["Tenant", t.tenant], ["Submissions per second (limit)", t.limits.submissions_per_second], ["WebSocket connections (limit)", t.limits.connections],
    ["Boards (limit)", t.limits.boards], ["Boards", t.boards], ["WebSocket connections on this gateway", t.connections]]) {
    rows.append(el("tr", {}, el("th", { scope: "row" }, k), numCell(v)));
  }
  const subs = $("subs-rows");
  subs.replaceChildren();
  for (const [b, n] of Object.entries(t.subscriptions)) subs.append(el("tr", {}, el("td", {}, b), numCell(n)));
}

// ---- boards: list, paging, search ----

// boardsPage is the most boards one GET /v1/boards answers.
const boardsPage = 1000;
const boardName = /^[a-z0-9][a-z0-9_-]{0,63}$/;
// boardsNext is the cursor of the page after the boards shown ("": none);
// prefix the name prefix searched ("": every board).
let boardsNext = "", prefix = "";

// loadBoards lists the tenant's boards in name order, a page at a time:
// the first page, or with more, the page after the boards shown, added to
// them (PROTOCOL.md: GET /v1/boards pages with after and next). A prefix
// search is server-side: every name that starts with it is one, or follows
// it in name order (after=prefix), so the pages start there and stop at
// the first name without it. "More boards" shows while a next page exists.
// boardsGen counts listings begun: a listing whose answer arrives after a
// newer one began (a search typed while the first page loads) adds nothing,
// so two listings never interleave their rows.
let boardsGen = 0;
async function loadBoards(more) {
  const rows = $("board-rows");
  const gen = more ? boardsGen : ++boardsGen;
  if (!more) {
    rows.replaceChildren();
    boardsNext = "";
    if (prefix && !boardName.test(prefix)) return showBoardsEnd(false);
    if (prefix) {
      const exact = await api("GET", `/v1/boards/${enc(prefix)}`).catch((e) => { if (e.status !== 404) throw e; });
      if (gen !== boardsGen) return;
      if (exact) addBoardRow(exact);
    }
  }
  const after = more ? boardsNext : prefix;
  const { boards, next } = await api("GET", `/v1/boards?limit=${boardsPage}${after ? `&after=${enc(after)}` : ""}`);
  if (gen !== boardsGen) return;
  const matching = boards.filter((b) => b.name.startsWith(prefix));
  matching.forEach(addBoardRow);
  showBoardsEnd(next && matching.length === boards.length ? next : "");
}
function showBoardsEnd(next) {
  boardsNext = next || "";
  $("more-boards").hidden = !boardsNext;
  $("boards-empty").hidden = $("board-rows").rows.length > 0;
}
function addBoardRow(b) {
  const tr = el("tr", {}, el("td", {}, b.name), el("td", {}, `${b.policy} · ${b.order}`), numCell(b.members), el("td", {}, when(b.ends_at)),
    el("td", {}, button("Open", `Open board ${b.name}`, () => openBoard(b.name))));
  tr.dataset.board = b.name;
  $("board-rows").append(tr);
}

// ---- one board ----

async function openBoard(name) {
  current = name;
  $("board").hidden = false;
  $("editor").hidden = true;
  $("member-detail").hidden = true;
  $("decisions").replaceChildren();
  $("member-rows").replaceChildren();
  $("board-h").textContent = `Board ${name}`;
  try {
    showBoard(await api("GET", boardPath()));
    const w = document.createElement("rankwire-board");
    w.id = "live";
    for (const [k, v] of Object.entries({ board: name, view: "top", limit: "10", label: `${name} · live top 10`, token })) w.setAttribute(k, v);
    $("live-slot").replaceChildren(w);
    await Promise.all([loadHeld(false), loadTop(false), loadStandings(), loadAudit(false)]);
  } catch (e) { alertShow(e.message); }
}

function rulesText(r) {
  if (!r) return "none";
  const parts = [];
  if (r.min_score != null) parts.push(`lowest score ${num(r.min_score)}`);
  if (r.max_score != null) parts.push(`highest score ${num(r.max_score)}`);
  if (r.max_step != null) parts.push(`largest step ${num(r.max_step)}`);
  if (r.max_per_minute) parts.push(`${num(r.max_per_minute)} a minute per member`);
  return parts.join(" · ") || "none";
}

// showBoard renders a board's settings as a table, not as JSON.
function showBoard(b) {
  currentBoard = b;
  const rows = $("settings");
  rows.replaceChildren();
  for (const [k, v] of [["Order", b.order], ["Subscore order", b.subscore_order], ["Policy", b.policy], ["Tiebreak", b.tiebreak],
    ["Windows", (b.windows || []).join(", ")], ["Past windows kept", num(b.retention)], ["Starts", when(b.starts_at)], ["Ends", when(b.ends_at)],
    ["Anti-cheat rules", rulesText(b.rules)], ["Members", num(b.members)]]) {
    const tr = el("tr", {}, el("th", { scope: "row" }, k), el("td", {}, v));
    tr.dataset.setting = k;
    rows.append(tr);
  }
  const prizes = $("prizes");
  prizes.replaceChildren();
  for (const p of b.prizes || []) prizes.append(el("tr", {}, el("th", { scope: "row" }, p.from === p.to ? `rank ${num(p.from)}` : `ranks ${num(p.from)}–${num(p.to)}`), el("td", {}, p.prize)));
  if (!b.prizes?.length) prizes.append(el("tr", {}, el("td", { className: "muted" }, "none")));
  resetDelete();
}

function resetDelete() {
  const slot = $("delete-slot");
  slot.replaceChildren(button("Delete board", `Delete board ${current}`, () => confirmInline(slot,
    `Delete board ${current} and every entry on it?`, "Yes, delete", deleteBoard, resetDelete), "danger"));
}
async function deleteBoard() {
  try {
    const { deleted } = await api("DELETE", boardPath());
    $("board").hidden = true;
    $("live-slot").replaceChildren();
    notice(`Deleted board ${deleted}.`);
    await loadBoards(false);
  } catch (e) { alertShow(e.message); resetDelete(); }
}

// ---- the board form ----

// editing is the board being edited, or null while creating one.
let editing = null;
const selects = { order: "desc", subscore_order: "desc", policy: "best", tiebreak: "earliest" };
const ruleFields = ["min_score", "max_score", "max_step", "max_per_minute"];

// localInput is an RFC 3339 time as a datetime-local value in the
// viewer's zone ("" for none).
function localInput(iso) {
  if (!iso) return "";
  const d = new Date(iso), p = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

function openEditor(b) {
  editing = b;
  clearErrors($("board-form"));
  $("editor-h").textContent = b ? `Edit board ${b.name}` : "New board";
  $("f-name").value = b ? b.name : "";
  $("f-name").disabled = !!b;
  for (const [k, d] of Object.entries(selects)) $(`f-${k}`).value = b ? b[k] : d;
  const kinds = b ? b.windows : ["all"];
  for (const c of document.getElementsByName("window")) c.checked = kinds.includes(c.value);
  $("f-retention").value = b ? b.retention : "";
  for (const k of ["starts_at", "ends_at"]) {
    const input = $(`f-${k}`);
    input.value = localInput(b?.[k]);
    input.dataset.orig = b?.[k] || "";
    input.dataset.shown = input.value;
  }
  $("prize-rows").replaceChildren();
  for (const p of b?.prizes || []) addPrizeRow(p);
  for (const k of ruleFields) $(`f-${k}`).value = b?.rules?.[k] ?? "";
  $("editor").hidden = false;
  $("editor").scrollIntoView({ block: "start" });
  (b ? $("f-order") : $("f-name")).focus();
}

function addPrizeRow(p) {
  const tr = el("tr");
  for (const [k, type] of [["from", "number"], ["to", "number"], ["prize", "text"]]) {
    const input = el("input", { type, value: p?.[k] ?? "", className: `prize-${k}` });
    input.setAttribute("aria-label", `Prize ${k}`);
    if (type === "number") { input.min = "1"; input.step = "1"; }
    tr.append(el("td", {}, input));
  }
  tr.append(el("td", {}, button("Remove", "Remove this prize range", () => { tr.remove(); numberPrizes(); })));
  $("prize-rows").append(tr);
  numberPrizes();
}
// numberPrizes gives each prize input its JSON path, as the API names it.
function numberPrizes() {
  [...$("prize-rows").rows].forEach((tr, i) => {
    for (const k of ["from", "to", "prize"]) tr.querySelector(`.prize-${k}`).dataset.path = `prizes[${i}].${k}`;
  });
}

// FieldError is a value the form refuses before asking the API.
class FieldError extends Error {
  constructor(path, message) { super(`${path}: ${message}`); this.apiMessage = this.message; }
}
function finite(path, v, integer) {
  if (v === "") return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || (integer && !Number.isInteger(n))) throw new FieldError(path, integer ? "want an integer" : "want a finite number");
  return n;
}
function timeField(k) {
  const input = $(`f-${k}`);
  if (!input.value) return undefined;
  if (input.value === input.dataset.shown && input.dataset.orig) return input.dataset.orig; // unchanged: keep its milliseconds
  const d = new Date(input.value);
  if (Number.isNaN(d.getTime())) throw new FieldError(k, "not a date and time");
  return d.toISOString();
}

// windows are the kinds checked. The first is the board's primary window
// (PROTOCOL.md), so an edit keeps the board's own order and adds newly
// checked kinds after it.
function windows() {
  const checked = [...document.getElementsByName("window")].filter((c) => c.checked).map((c) => c.value);
  const kept = (editing?.windows || []).filter((w) => checked.includes(w));
  return [...kept, ...checked.filter((w) => !kept.includes(w))];
}

// boardBody reads the form into a PUT /v1/boards/{board} body: the whole
// settings, since a PUT replaces them; an empty field is left out (the
// gateway's default, or none).
function boardBody() {
  const body = {};
  for (const k of Object.keys(selects)) body[k] = $(`f-${k}`).value;
  if (windows().length) body.windows = windows();
  const retention = finite("retention", $("f-retention").value.trim(), true);
  if (retention !== undefined) body.retention = retention;
  for (const k of ["starts_at", "ends_at"]) { const v = timeField(k); if (v) body[k] = v; }
  const prizes = [...$("prize-rows").rows].map((tr, i) => ({
    from: finite(`prizes[${i}].from`, tr.querySelector(".prize-from").value.trim(), true) ?? 0,
    to: finite(`prizes[${i}].to`, tr.querySelector(".prize-to").value.trim(), true) ?? 0,
    prize: tr.querySelector(".prize-prize").value,
  }));
  if (prizes.length) body.prizes = prizes;
  const rules = {};
  for (const k of ruleFields) { const v = finite(`rules.${k}`, $(`f-${k}`).value.trim(), k === "max_per_minute"); if (v !== undefined) rules[k] = v; }
  if (Object.keys(rules).length) body.rules = rules;
  return body;
}

async function saveBoard() {
  const form = $("board-form");
  clearErrors(form);
  const name = editing ? editing.name : $("f-name").value.trim();
  try {
    if (!boardName.test(name)) throw new FieldError("board", `${JSON.stringify(name)} is not a board name: a-z, 0-9, _ and -, up to 64, starting with a letter or digit`);
    const b = await api("PUT", `/v1/boards/${enc(name)}`, boardBody());
    $("editor").hidden = true;
    notice(`${editing ? "Saved" : "Created"} board ${b.name}.`);
    await loadBoards(false);
    await openBoard(b.name);
  } catch (e) { showError(form, e); }
}

// ---- field errors ----

function clearErrors(form) {
  for (const p of form.querySelectorAll(".field-error")) p.textContent = "";
  for (const p of form.querySelectorAll(".field-error.dynamic")) p.remove();
  for (const i of form.querySelectorAll("[aria-invalid]")) i.removeAttribute("aria-invalid");
}

// showError puts an error next to the field its message names (the API
// starts a message with the field's JSON path: "prizes[0].to: ..."), the
// nearest enclosing field where that one has no input of its own, and
// on the form as a whole otherwise.
function showError(form, e) {
  const msg = e.apiMessage || e.message;
  const m = /^([a-z_]+(?:\[\d+\]|\.[a-z_]+)*): /.exec(msg);
  for (let path = m ? m[1] : ""; path; path = path.replace(/(\[\d+\]|\.[a-z_]+)$|^[a-z_]+$/, "")) {
    const target = form.querySelector(`[data-path="${CSS.escape(path)}"]`);
    if (!target) continue;
    const input = target.matches("input, select") ? target : target.matches("fieldset") ? null : target.querySelector("input, select");
    if (input) input.setAttribute("aria-invalid", "true");
    let p = target.matches("input, select") ? null : target.querySelector(":scope > .field-error");
    if (!p) {
      p = el("p", { className: "field-error dynamic", id: `err-${path.replace(/\W/g, "-")}` });
      if (target.matches("input, select")) target.after(p); else target.append(p);
    }
    p.textContent = e.status ? `${msg} (${e.code})` : msg;
    if (input) { input.setAttribute("aria-describedby", p.id); input.focus(); }
    return;
  }
  form.querySelector(":scope > .field-error").textContent = e.message;
}

// ---- standings and disputes ----

// reasonInline replaces slot's content with a required reason field and
// two buttons; act(reason) runs on the first. An error of the API (a 400
// naming reason, a 409 naming settled) shows next to the field, and the
// field stays for another try. No window.confirm: it blocks the page.
function reasonInline(slot, question, yes, act, restore) {
  const input = el("input", { required: true, className: "reason", autocomplete: "off" });
  input.setAttribute("aria-label", "Reason (required, recorded in the audit)");
  const err = el("span", { className: "field-error", role: "alert" });
  const no = button("Cancel", "", () => restore());
  const ok = button(yes, "", async () => {
    ok.disabled = true;
    try { await act(input.value); } catch (e) {
      err.textContent = e.status ? `${e.apiMessage || e.message} (${e.code || e.status})` : e.message;
      input.setAttribute("aria-invalid", "true");
      ok.disabled = false;
    }
  }, "danger");
  slot.replaceChildren(el("span", { className: "confirm" }, question, " "), input, " ", ok, " ", no, " ", err);
  input.focus();
}

// amend posts an amendment (disqualify, reinstate, void, settle) and shows the
// standings and the audit as they are after it; an error answer throws for
// reasonInline to show.
async function amend(verb, body, said) {
  const a = await api("POST", boardPath(verb), body);
  notice(`${said} (revision ${num(a.revision)}).`);
  await Promise.all([loadStandings(), loadAudit(false)]);
}

// isTournament: a board with a start, an end or prizes has standings.
const isTournament = (b) => !!(b.starts_at || b.ends_at || b.prizes?.length);

// loadStandings shows a tournament board's standings: the top 100 with
// their prizes (held ones marked), whether they are final or settled, the
// revision, and, until settled, the dispute actions.
async function loadStandings() {
  const b = currentBoard;
  $("standings").hidden = !isTournament(b);
  if ($("standings").hidden) return;
  const [s, out] = await Promise.all([api("GET", boardPath("standings?limit=100")), disqualified()]);
  const open = !s.settled;
  $("standings-state").replaceChildren(s.settled ? "Settled: the standings never change again. " : "",
    s.final ? "Final since " : s.ended_at ? "Ended at " : "Not ended: the standings may still change.",
    s.ended_at ? when(s.ended_at) : "", ` · ${num(s.total)} ranked · `, el("span", { id: "revision" }, `revision ${num(s.revision ?? 0)}`));
  $("standing-rows").replaceChildren(...s.rows.map((r) => standingRow(r, open)));
  $("settle-slot").replaceChildren();
  if (open && s.final) resetSettle();
  $("void-slot").replaceChildren();
  if (open) resetVoid();
  $("dq").hidden = !out.length;
  $("dq-rows").replaceChildren(...out.map((m) => dqRow(m, open)));
}

function standingRow(r, open) {
  const prize = el("td", {}, r.prize || "");
  if (r.prize_held) prize.append(" ", el("span", { className: "held" }, "prize held: under review"));
  const slot = el("td", { className: "action" });
  const tr = el("tr", {}, numCell(r.rank), el("td", {}, r.member), el("td", {}, r.name || ""), numCell(r.score), prize, slot);
  tr.dataset.member = r.member;
  const reset = () => slot.replaceChildren(button("Disqualify", `Disqualify ${r.member}`, () => reasonInline(slot,
    `Disqualify ${r.member}? Everyone below moves up a rank.`, "Yes, disqualify",
    (reason) => amend("disqualify", { member: r.member, reason }, `Disqualified ${r.member}`), reset), "danger"));
  if (open) reset();
  return tr;
}

function dqRow(m, open) {
  const slot = el("span", { className: "action" });
  const li = el("li", {}, el("span", {}, m), " ", slot);
  li.dataset.member = m;
  const reset = () => slot.replaceChildren(button("Reinstate", `Reinstate ${m}`, () => reasonInline(slot,
    `Reinstate ${m} with the entry they had?`, "Yes, reinstate",
    (reason) => amend("reinstate", { member: m, reason }, `Reinstated ${m}`), reset)));
  if (open) reset();
  return li;
}

function resetSettle() {
  const slot = $("settle-slot");
  slot.replaceChildren(button("Settle", `Settle board ${current}`, () => reasonInline(slot,
    `Settle board ${current}? The payout is done: no amendment is possible after.`, "Yes, settle",
    (reason) => amend("settle", { reason }, `Settled board ${current}`), resetSettle), "danger"));
}

// resetVoid offers to void one submission, named by the seq its result
// carried: the member's entry becomes what their other submissions make
// of it. A seq the board does not know is the API's 404 naming seq, shown
// next to the reason field.
function resetVoid() {
  const slot = $("void-slot");
  const seq = el("input", { type: "number", min: "1", step: "1", className: "seq", autocomplete: "off" });
  seq.setAttribute("aria-label", "Seq of the submission to void (the seq its result carried)");
  slot.replaceChildren("Void one submission, by the seq its result carried: ", seq, " ", button("Void", `Void a submission on board ${current}`, () => {
    const n = Number(seq.value);
    reasonInline(slot, `Void the submission with seq ${n}? Its member's entry becomes what their other submissions make.`, "Yes, void",
      (reason) => amend("void", { seq: n, reason }, `Voided the submission with seq ${n}`), resetVoid);
  }, "danger"));
}

// auditPage is the most actions one GET /v1/audit answers to the console.
const auditPage = 500;

// disqualified lists the members the board's audit leaves disqualified, in
// the order they were: the standings do not list them, the audit does
// (every disqualify and reinstate, oldest first; the last 1,000 are kept).
async function disqualified() {
  const out = new Map();
  for (let after = ""; ;) {
    const { actions, next } = await api("GET", `/v1/audit?board=${enc(current)}&limit=${auditPage}${after ? `&after=${enc(after)}` : ""}`);
    for (const a of actions) {
      if (a.action === "disqualify") out.set(a.member, true);
      if (a.action === "reinstate") out.delete(a.member);
    }
    if (next == null || !actions.length) return [...out.keys()];
    after = String(next);
  }
}

// ---- the audit ----

let auditNext = "";

// loadAudit lists the board's admin actions, oldest first, 100 at a time:
// who (the token's sub), what, when (local, UTC in the title) and why.
async function loadAudit(more) {
  const after = more && auditNext ? `&after=${enc(auditNext)}` : "";
  const { actions, next } = await api("GET", `/v1/audit?board=${enc(current)}&limit=100${after}`);
  const body = $("audit-rows");
  if (!more) body.replaceChildren();
  for (const a of actions) {
    const what = a.action === "void" ? `void seq ${a.voided}` : a.qid ? `${a.action} qid ${a.qid}` : a.action;
    const tr = el("tr", {}, el("td", {}, when(a.at)), el("td", {}, a.sub || ""), el("td", {}, what), el("td", {}, a.member || ""),
      el("td", {}, a.reason), numCell(a.revision));
    tr.dataset.seq = String(a.seq);
    body.append(tr);
  }
  auditNext = next == null ? "" : String(next);
  $("more-audit").hidden = !auditNext;
  $("audit-empty").hidden = body.rows.length > 0;
}

// ---- the quarantine ----

let heldNext = "";

async function loadHeld(more) {
  const { rows, next } = await api("GET", boardPath(`quarantine?limit=100${more && heldNext ? `&after=${enc(heldNext)}` : ""}`));
  const body = $("held-rows");
  if (!more) body.replaceChildren();
  for (const h of rows) {
    const slot = el("td", { className: "action" });
    const tr = el("tr", {}, el("td", {}, h.qid), el("td", {}, h.member), numCell(h.score), el("td", {}, h.reason), el("td", {}, when(h.at)), slot);
    tr.dataset.qid = h.qid;
    resetDecide(slot, h);
    body.append(tr);
  }
  heldNext = next || "";
  $("more-held").hidden = !heldNext;
  $("held-empty").hidden = body.rows.length > 0;
}

// resetDecide offers approve and reject for a held submission; each asks
// for a reason (optional) before it is sent.
function resetDecide(slot, h) {
  const what = `${h.member}'s ${num(h.score)} (qid ${h.qid})`;
  const ask = (verb, label, question) => () => decisionInline(slot, question, label, (reason) => decide(h, verb, reason), () => resetDecide(slot, h));
  slot.replaceChildren(button("Approve", `Approve ${what}`, ask("approve", "Yes, approve", `Approve ${what}? It is ranked now.`)), " ",
    button("Reject", `Reject ${what}`, ask("reject", "Yes, reject", `Reject ${what}? It is dropped.`), "danger"));
}

// decisionInline is reasonInline with the reason optional: a decision
// without one is recorded in the audit all the same, with who made it.
function decisionInline(slot, question, yes, act, restore) {
  reasonInline(slot, question, yes, act, restore);
  const input = slot.querySelector("input.reason");
  input.required = false;
  input.setAttribute("aria-label", "Reason (optional, recorded in the audit)");
}

// decide approves or rejects a held submission with reason ("": none),
// lists the answer and shows the audit, which records the decision, its
// reason and the token's sub. An error answer throws for reasonInline.
async function decide(h, verb, reason) {
  const r = await api("POST", boardPath("quarantine", enc(h.qid), verb), reason ? { reason } : undefined);
  const said = verb === "approve"
    ? `Approved qid ${h.qid}: ${r.member} ${r.applied ? `now rank ${num(r.rank)} with ${num(r.score)}` : `kept at ${num(r.score)} (not applied)`}`
    : `Rejected qid ${h.qid}: ${h.member}'s ${num(h.score)} dropped`;
  $("decisions").prepend(el("li", {}, said, " · ", when(new Date().toISOString())));
  alertShow("");
  await Promise.all([loadHeld(false), loadStandings(), loadAudit(false)]); // a decision clears a held prize
}

// ---- members ----

let topNext = "";
const memberRow = (r) => el("tr", {}, numCell(r.rank), el("td", {}, r.member), el("td", {}, r.name || ""), numCell(r.score),
  el("td", {}, button("Open", `Open member ${r.member}`, () => guard(openMember)(r.member))));

async function loadTop(more) {
  const { rows, next } = await api("GET", boardPath(`top?limit=50${more && topNext ? `&after=${enc(topNext)}` : ""}`));
  if (!more) $("member-rows").replaceChildren();
  for (const r of rows) $("member-rows").append(memberRow(r));
  topNext = next || "";
  $("more-members").hidden = !topNext;
}

let currentMember = "";

// openMember shows a member of the open board: its entry, the rows around
// it, its history and its profile (tenant-wide, so shown also where the
// member has no entry on this board).
async function openMember(m) {
  currentMember = m;
  $("member-detail").hidden = false;
  $("member-h").textContent = `Member ${m}`;
  clearErrors($("profile-form"));
  $("profile-state").textContent = "Loading…";
  const row = await api("GET", boardPath("members", enc(m))).catch((e) => { if (e.status === 404) return null; throw e; });
  $("member-row").textContent = row
    ? `${row.member}: rank ${num(row.rank)} of ${num(row.total)}, score ${num(row.score)}, top ${num(Math.round(row.top_percent * 100) / 100)} %${row.review ? " (under review)" : ""}`
    : `${m}: no entry on board ${current}.`;
  resetRemove(row);
  resetErase(m);
  await Promise.all([row && showAround(m), showHistory(row && m), showProfile(m)]);
}

async function showAround(m) {
  const { rows } = await api("GET", boardPath("members", enc(m), "around?radius=5"));
  $("member-rows").replaceChildren(...rows.map(memberRow));
  $("more-members").hidden = true;
}

async function showHistory(m) {
  const list = $("member-history");
  list.replaceChildren();
  if (!m) return;
  const { points } = await api("GET", boardPath("members", enc(m), "history"));
  for (const pt of points) list.append(el("li", {}, pt.at ? when(pt.at) : pt.window, `: rank ${num(pt.rank)} of ${num(pt.total)}, score ${num(pt.score)}`));
}

function resetRemove(row) {
  const slot = $("remove-slot");
  slot.replaceChildren();
  if (!row) return;
  slot.append(button("Remove from board", `Remove ${row.member} from board ${current}`, () => confirmInline(slot,
    `Remove ${row.member} from board ${current}? Its entry there is deleted; other boards keep theirs.`, "Yes, remove",
    () => removeMember(row.member), () => resetRemove(row)), "danger"));
}

async function removeMember(m) {
  try {
    const { removed } = await api("DELETE", boardPath("members", enc(m)));
    notice(`Removed ${removed} from board ${current}.`);
    await loadTop(false);
    await openMember(m);
  } catch (e) { alertShow(e.message); }
}

// resetErase offers the erasure of member m's personal data (its profile
// and aliases, on every board of the tenant), after a confirmation.
function resetErase(m) {
  const slot = $("erase-slot");
  slot.replaceChildren(button("Erase personal data", `Erase the personal data of ${m}`, () => confirmInline(slot,
    `Erase the personal data of ${m}? Its profile and aliases are deleted on every board, for good; its scores stay.`,
    "Yes, erase", () => erase(m), () => resetErase(m)), "danger"));
}

async function erase(m) {
  try {
    const e = await api("DELETE", `/v1/members/${enc(m)}/personal-data`);
    notice(`Erased the personal data of ${e.member}: ${e.profile ? "its profile and " : ""}${num(e.aliases)} alias${e.aliases === 1 ? "" : "es"}.`);
    await loadTop(false);
    await openMember(e.member); // an alias given names nobody now
  } catch (err) { alertShow(err.message); resetErase(m); }
}

async function showProfile(m) {
  const p = await api("GET", `/v1/members/${enc(m)}/profile`).catch((e) => { if (e.status === 404) return null; throw e; });
  $("profile-state").textContent = p ? "" : "No profile yet.";
  fillProfile(p);
}
function fillProfile(p) {
  $("p-name").value = p?.name || "";
  $("p-avatar").value = p?.avatar || "";
  $("p-country").value = p?.country || "";
}

// saveProfile puts the form's profile; empty avatar and country are left
// out, which removes them (a PUT replaces the profile).
async function saveProfile() {
  const form = $("profile-form");
  clearErrors(form);
  $("profile-state").textContent = "Saving…";
  const body = { name: $("p-name").value };
  for (const k of ["avatar", "country"]) { const v = $(`p-${k}`).value.trim(); if (v) body[k] = v; }
  try {
    const p = await api("PUT", `/v1/members/${enc(currentMember)}/profile`, body);
    notice(`Saved the profile of ${currentMember}.`);
    fillProfile(p); // the profile as stored (country upper case)
    $("profile-state").textContent = `Saved: ${p.name}`;
  } catch (e) { $("profile-state").textContent = "Not saved."; showError(form, e); }
}

// ---- tokens ----

// mintToken asks the gateway for a token of this tenant as the form says
// and shows it once, with a copy button: the gateway keeps no copy, and
// neither does the console past hideToken (or signing out).
async function mintToken() {
  const form = $("mint-form");
  clearErrors(form);
  hideToken();
  const body = { role: $("m-role").value };
  const boards = $("m-boards").value.split(",").map((b) => b.trim()).filter(Boolean);
  if (boards.length) body.boards = boards;
  for (const k of ["sub", "ttl"]) { const v = $(`m-${k}`).value.trim(); if (v) body[k] = v; }
  try {
    const t = await api("POST", "/v1/tokens", body);
    $("minted-token").value = t.token;
    $("minted-what").replaceChildren(`A ${t.role} token of tenant ${t.tenant}`, t.sub ? ` for ${t.sub}` : "",
      `, boards ${t.boards ? t.boards.join(", ") || "none" : "all"}, signed by key ${t.kid}, expires `, when(t.expires_at), ":");
    $("minted").hidden = false;
    $("minted-token").select();
  } catch (e) { showError(form, e); }
}

function hideToken() {
  $("minted-token").value = "";
  $("copy-state").textContent = "";
  $("minted").hidden = true;
}

// copyToken puts the token on the clipboard; where the browser refuses
// (no permission, not a secure context), it stays selected to copy by hand.
async function copyToken() {
  const input = $("minted-token");
  try {
    await navigator.clipboard.writeText(input.value);
    $("copy-state").textContent = "Copied.";
  } catch {
    input.select();
    $("copy-state").textContent = "Selected: copy it with Ctrl+C (the browser refused the clipboard).";
  }
}

// ---- wiring ----

function guard(f) { return (...a) => Promise.resolve(f(...a)).catch((e) => alertShow(e.message)); }
function onSubmit(id, f) { $(id).addEventListener("submit", (e) => { e.preventDefault(); notice(""); guard(f)(); }); }
onSubmit("signin-form", () => { token = $("token").value.trim(); return signIn(); });
onSubmit("board-search", () => { prefix = $("board-prefix").value.trim(); return loadBoards(false); });
onSubmit("board-form", saveBoard);
onSubmit("member-form", () => openMember($("member").value.trim()));
onSubmit("profile-form", saveProfile);
onSubmit("mint-form", mintToken);
$("copy-token").addEventListener("click", copyToken);
$("hide-token").addEventListener("click", hideToken);
$("signout").addEventListener("click", signOut);
$("more-boards").addEventListener("click", guard(() => loadBoards(true)));
$("more-held").addEventListener("click", guard(() => loadHeld(true)));
$("more-audit").addEventListener("click", guard(() => loadAudit(true)));
$("more-members").addEventListener("click", guard(() => loadTop(true)));
$("top-members").addEventListener("click", guard(() => { $("member-detail").hidden = true; return loadTop(false); }));
$("new-board").addEventListener("click", () => openEditor(null));
$("edit-board").addEventListener("click", () => openEditor(currentBoard));
$("cancel-board").addEventListener("click", () => { $("editor").hidden = true; });
$("add-prize").addEventListener("click", () => addPrizeRow(null));
$("profile-clear").addEventListener("click", () => { $("p-avatar").value = ""; $("p-country").value = ""; guard(saveProfile)(); });
setInterval(async () => { if (!$("tenant").hidden) try { showTenant(await api("GET", "/v1/tenant")); } catch {} }, 5000);
if (token) signIn();
window.consoleReady = true;
