// <rankwire-board>: a live leaderboard table for a lobby, served by the
// rankwire gateway at /widget/rankwire.js. Two lines embed it:
//
//   <script type="module" src="https://rank.example.com/widget/rankwire.js"></script>
//   <rankwire-board board="weekly" token="eyJ..." view="around" radius="3"></rankwire-board>
//
// Attributes: url (one gateway, or several separated by spaces), token,
// board, window, at, view (top | around | rank | members), limit, offset,
// radius, rank, member, members (comma-separated), locale, label, me, theme
// (light | dark). Properties: client (a shared
// RankwireClient), getToken (async () => token, for refresh), strings, and
// read-only state, rows, total, seq.
// Events (bubbling, composed): rankwire-state {state, previous, reason, code,
// hint}, rankwire-update {type, seq, total, rows}, rankwire-error {code,
// message}, rankwire-rank {member, rank, previous}, rankwire-token-expired
// {reason} (set a new token attribute to go on). States: loading, live,
// empty, error, reconnecting, expired, final (a tournament board whose
// ends_at has passed). A tournament board also shows a prize column, the
// countdown to its end, and a quiet marker on a row whose member has a
// submission under review; rows show the member's profile name and
// avatar where it has one. See docs/EMBED.md.
import { RankwireClient, sortedRows } from "./client.js";
import { styles } from "./styles.js";

// sheet is the shadow styles as one constructed stylesheet that every
// element adopts. A page whose Content-Security-Policy allows no inline
// styles (the console's: style-src 'self') blocks a <style> element, but
// not a stylesheet built through the CSSOM. undefined until the first
// element; null where the browser cannot construct one.
let sheet;

// adoptStyles gives root the shadow styles: the shared constructed sheet
// where the browser has them (returning no markup), else the markup of a
// <style> element for the caller to put first in root.
function adoptStyles(root) {
  if (sheet === undefined) {
    try {
      sheet = new CSSStyleSheet();
      sheet.replaceSync(styles);
    } catch {
      sheet = null; // no constructable stylesheets (an old browser, a DOM without CSSOM)
    }
  }
  if (sheet && "adoptedStyleSheets" in root) {
    root.adoptedStyleSheets = [sheet];
    return "";
  }
  return `<style>${styles}</style>`;
}

export { RankwireClient } from "./client.js";

const defaultStrings = {
  rank: "Rank", player: "Player", score: "Score", players: "players", you: "you",
  loading: "Loading…", empty: "No scores yet. Be the first!", reconnecting: "Reconnecting…",
  live: "Live", error: "Unavailable", expired: "Session expired",
  refused: "Access refused", limited: "Busy: trying again shortly…",
  cannotConnect: "Cannot connect. Check the gateway URL, the token and the gateway's allowed origins.",
  yourRank: (rank, moved) => `Your rank is now ${rank}${moved}.`,
  up: (n) => `, up ${n}`, down: (n) => `, down ${n}`,
  prize: "Prize", final: "Final", finalStandings: "Final standings", review: "Under review",
  endsIn: (t) => `Ends in ${t}`, startsIn: (t) => `Starts in ${t}`,
};

// duration writes ms as "2d 03:04:05", "03:04:05" or "04:05".
const duration = (ms) => {
  const s = Math.max(0, Math.ceil(ms / 1000));
  const d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600), m = Math.floor((s % 3600) / 60);
  const two = (n) => String(n).padStart(2, "0");
  const hms = h || d ? `${two(h)}:${two(m)}:${two(s % 60)}` : `${two(m)}:${two(s % 60)}`;
  return d ? `${d}d ${hms}` : hms;
};

// Why a message is shown instead of the table, by the protocol's error codes.
const errorText = {
  unauthorized: "Your session has expired. Reload to continue.",
  forbidden: "This leaderboard is not available to you.",
  not_found: "This leaderboard does not exist.",
  bad_request: "This leaderboard is misconfigured.",
  too_large: "This leaderboard asked for too much at once (a message over 64 KiB).",
};

// Attributes whose change means a different subscription.
const subscriptionAttrs = ["url", "token", "board", "window", "at", "view", "limit", "offset", "radius", "rank", "member", "members"];

// urls reads the url attribute: one gateway base URL, or several separated
// by spaces or commas (the client tries the next after a 1001 close).
// Undefined without one: the module's own origin.
const urls = (v) => {
  const list = (v || "").split(/[\s,]+/).filter(Boolean);
  return list.length > 1 ? list : list[0];
};

const int = (v, d) => (v === null || v === "" || !Number.isFinite(Number(v)) ? d : Math.trunc(Number(v)));

export class RankwireBoard extends HTMLElement {
  static observedAttributes = [...subscriptionAttrs, "locale", "label", "me"];

  constructor() {
    super();
    this.strings = { ...defaultStrings };
    this._state = "loading";
    this._view = null; // the client's view state: {seq, total, rows: Map}
    this._trs = new Map(); // member → <tr>, so a member's row keeps its markers rather than re-renders
    this._ranks = new Map(); // member → last rendered rank, for up/down markers
    this._moved = []; // the rows that climbed in the render under way, for _flash
    this._client = null; // set by the page, shared by several elements
    this._own = null; // a client this element made for itself
    this._getToken = null;
    this._sub = null;
    this._pending = false;
    this._root = this.attachShadow({ mode: "open" });
    this._root.innerHTML = `${adoptStyles(this._root)}
      <div class="frame" part="frame">
        <div class="badge" part="badge" aria-hidden="true"><span></span></div>
        <table part="table">
          <caption part="caption"><span class="label"></span><span class="total"></span><span class="countdown" part="countdown" hidden></span></caption>
          <thead><tr><th scope="col" class="rank"></th><th scope="col" class="player"></th><th scope="col" class="score"></th><th scope="col" class="prize" hidden></th></tr></thead>
          <tbody></tbody>
        </table>
        <p class="status" part="status" role="status"></p>
        <div class="sr-only" aria-live="polite" aria-atomic="true"></div>
      </div>`;
    const $ = (s) => this._root.querySelector(s);
    this._els = { tbody: $("tbody"), status: $(".status"), live: $("[aria-live]"), label: $(".label"), total: $(".total"), badge: $(".badge span"), head: $("thead tr"), countdown: $(".countdown") };
    this._board = null; // a tournament board's {starts_at, ends_at, prizes}, from its board message
    this._tick = null; // the countdown's interval
    this._onClientState = (e) => this._clientState(e.detail);
    this._onClientError = (e) => this._emit("rankwire-error", e.detail);
  }

  /** client is the RankwireClient this element subscribes through; setting it shares one connection between elements. */
  get client() { return this._client || this._own; }
  set client(c) { this._client = c; this._schedule(); }
  /** getToken, an async function returning a fresh token, lets the element refresh it before it expires. */
  get getToken() { return this._getToken; }
  set getToken(f) { this._getToken = f; this._dropOwnClient(); this._schedule(); }
  /** state is loading, live, empty, error or reconnecting. */
  get state() { return this._state; }
  /** rows are the current rows in rank order: {rank, member, score, subscore}. */
  get rows() { return this._view ? sortedRows(this._view) : []; }
  get total() { return this._view ? this._view.total : 0; }
  get seq() { return this._view ? this._view.seq : null; }

  connectedCallback() {
    this._renderHead();
    this._schedule();
  }

  disconnectedCallback() {
    this._unsubscribe();
    this._dropOwnClient();
    this._stopCountdown();
  }

  attributeChangedCallback(name, old, value) {
    if (old === value) return;
    // A new token on a working connection is sent as an auth message (the
    // subscription and its seq chain go on); otherwise a new client.
    if (name === "token" && this._own && value && this._own.state !== "error") return this._own.setToken(value);
    if (name === "url" || name === "token") this._dropOwnClient();
    if (subscriptionAttrs.includes(name)) this._schedule();
    else if (this._view) this._render();
    else this._renderHead();
  }

  // _schedule resubscribes once per task however many attributes changed.
  _schedule() {
    if (this._pending) return;
    this._pending = true;
    queueMicrotask(() => {
      this._pending = false;
      if (this.isConnected) this._resubscribe();
    });
  }

  _dropOwnClient() {
    if (!this._own) return;
    this._unsubscribe();
    this._own.close();
    this._own = null;
  }

  _unsubscribe() {
    this._sub?.close();
    this._sub = null;
    const c = this.client;
    c?.removeEventListener("state", this._onClientState);
    c?.removeEventListener("error", this._onClientError);
  }

  _spec() {
    const kind = this.getAttribute("view") || "top";
    const view = { kind };
    if (kind === "top") Object.assign(view, { limit: int(this.getAttribute("limit"), 10), offset: int(this.getAttribute("offset"), 0) });
    else if (kind === "around") {
      view.radius = int(this.getAttribute("radius"), 5);
      if (this.getAttribute("member")) view.member = this.getAttribute("member");
    } else if (kind === "rank") view.rank = int(this.getAttribute("rank"), 1);
    else if (kind === "members") view.members = (this.getAttribute("members") || "").split(",").map((s) => s.trim()).filter(Boolean);
    return { board: this.getAttribute("board"), window: this.getAttribute("window") || undefined, at: this.getAttribute("at") || undefined, view };
  }

  _resubscribe() {
    this._unsubscribe();
    this._view = null;
    this._ranks.clear();
    this._announced = undefined;
    this._setBoard(null);
    const spec = this._spec();
    if (!spec.board) return this._fail({ code: "bad_request", message: "set the board attribute" });
    if (!this._client && !this._own) {
      const token = this.getAttribute("token");
      if (!token && !this._getToken) return this._fail({ code: "unauthorized", message: "set the token attribute or getToken" });
      this._own = new RankwireClient({ url: urls(this.getAttribute("url")), token, getToken: this._getToken || undefined });
    }
    const c = this.client;
    c.addEventListener("state", this._onClientState);
    c.addEventListener("error", this._onClientError);
    this._setState(c.state === "reconnecting" ? "reconnecting" : "loading");
    this._sub = c.subscribe(spec, { update: (v, msg) => this._update(v, msg), error: (e) => this._fail(e, e.fatal), board: (b) => this._setBoard(b) });
  }

  // _setBoard takes a tournament board's times and prizes (null: none):
  // the prize column shows where it has prizes, the countdown where it has
  // an end, and the state turns final once the end has passed.
  _setBoard(b) {
    this._board = b;
    this._stopCountdown();
    this._renderHead();
    if (b && (b.ends_at || b.starts_at)) {
      this._countdown();
      this._tick = setInterval(() => this._countdown(), 1000);
    }
    if (this._view) this._render();
  }

  _stopCountdown() {
    clearInterval(this._tick);
    this._tick = null;
    this._els.countdown.hidden = true;
  }

  // _countdown shows the time to the start or the end, and turns the
  // element final at the end (its rows, frozen by the gateway, stay).
  _countdown() {
    const b = this._board, el = this._els.countdown, now = Date.now();
    const starts = b.starts_at ? Date.parse(b.starts_at) : NaN, ends = b.ends_at ? Date.parse(b.ends_at) : NaN;
    el.hidden = false;
    if (now < starts) el.textContent = this.strings.startsIn(duration(starts - now));
    else if (now < ends) el.textContent = this.strings.endsIn(duration(ends - now));
    else if (ends <= now) {
      el.textContent = this.strings.finalStandings;
      clearInterval(this._tick);
      this._tick = null;
      if (this._state !== "error") this._setState("final");
    } else el.hidden = true;
  }

  _ended() {
    return !!(this._board?.ends_at && Date.parse(this._board.ends_at) <= Date.now());
  }

  // _prize returns the prize of rank, or "".
  _prize(rank) {
    for (const p of this._board?.prizes || []) if (rank >= p.from && rank <= p.to) return p.prize;
    return "";
  }

  // _clientState follows the client's connection: the reason for a
  // reconnect, the hint after failed tries and a refusal reach the screen
  // and the rankwire-state event.
  _clientState({ state, code, reason, hint }) {
    if (state === "reconnecting") this._setState("reconnecting", { reason, code, hint });
    else if (state === "expired") {
      this._setState("expired", { reason, code });
      this._emit("rankwire-token-expired", { reason });
    } else if (state === "open" && this._view) this._setState(this._ended() ? "final" : this._view.rows.size ? "live" : "empty");
    else if (state === "error") this._fail({ code: code || "forbidden", message: reason || "connection refused", refused: code === "forbidden" }, true);
  }

  _update(view, msg) {
    this._view = view;
    this._render();
    this._setState(this._ended() ? "final" : view.rows.size ? "live" : "empty");
    this._emit("rankwire-update", { type: msg.type, seq: view.seq, total: view.total, rows: this.rows });
  }

  _fail(err, fromClient) {
    this._setState("error", { reason: err.message, code: err.code });
    // The client already reported its own fatal error as an event (the
    // subscription's error handler and the client's state both end here).
    if (!fromClient) this._emit("rankwire-error", { code: err.code, message: err.message, fatal: true });
    // A connection the gateway refused (close 4003) says so, with its reason.
    this._els.status.textContent = err.refused || err.close === 4003
      ? this.strings.refused + (err.message ? `: ${err.message}` : "")
      : errorText[err.code] || err.message;
  }

  // _setState shows state (and why) and reports it; the same state with a
  // new reason or hint is reported again.
  _setState(state, { reason, code, hint } = {}) {
    const key = `${state}|${reason}|${code}|${hint}`;
    if (key === this._stateKey && this.hasAttribute("state")) return;
    this._stateKey = key;
    const previous = this._state;
    this._state = state;
    this.setAttribute("state", state);
    this._els.badge.textContent = this.strings[state] || "";
    this._els.status.textContent = this._statusText(state, reason, code, hint);
    this._emit("rankwire-state", { state, previous, reason, code, hint });
  }

  _statusText(state, reason, code, hint) {
    const s = this.strings;
    if (state === "reconnecting") {
      if (hint) return s.cannotConnect;
      if (code === 4029) return s.limited + (reason ? ` (${reason})` : "");
      return s.reconnecting + (reason ? ` (${reason})` : "");
    }
    if (state === "expired") return s.expired + (reason ? ` (${reason})` : "");
    return { loading: s.loading, empty: s.empty }[state] || "";
  }

  _emit(type, detail) {
    this.dispatchEvent(new CustomEvent(type, { detail, bubbles: true, composed: true }));
  }

  _me() {
    return this.getAttribute("me") || this.client?.subject || "";
  }

  _fmt() {
    const locale = this.getAttribute("locale") || undefined;
    if (this._fmtLocale !== locale || !this._nf) {
      this._fmtLocale = locale;
      try {
        this._nf = new Intl.NumberFormat(locale, { maximumFractionDigits: 2 });
      } catch {
        this._nf = new Intl.NumberFormat(undefined, { maximumFractionDigits: 2 }); // a bad locale tag
      }
    }
    return this._nf;
  }

  _renderHead() {
    const [r, p, s, z] = this._els.head.children;
    r.textContent = this.strings.rank;
    p.textContent = this.strings.player;
    s.textContent = this.strings.score;
    z.textContent = this.strings.prize;
    z.hidden = !this._board?.prizes?.length;
    this.toggleAttribute("prizes", !z.hidden); // narrower scores, so that names keep their room
    this._els.label.textContent = this.getAttribute("label") || "Leaderboard";
  }

  _render() {
    this._renderHead();
    const nf = this._fmt();
    this._els.total.textContent = `${nf.format(this._view.total)} ${this.strings.players}`;
    const rows = this.rows;
    const me = this._me();
    const keep = new Set();
    this._moved = [];
    // Put rows in rank order, moving only those out of place: moving a node
    // restarts its CSS animations (the fade of a marker, a row's entrance).
    let at = this._els.tbody.firstElementChild;
    for (const row of rows) {
      keep.add(row.member);
      const tr = this._row(row, nf, me);
      if (tr === at) at = at.nextElementSibling;
      else this._els.tbody.insertBefore(tr, at);
    }
    for (const [member, tr] of this._trs) {
      if (!keep.has(member)) {
        tr.remove();
        this._trs.delete(member);
      }
    }
    this._flash(this._moved);
    this._announce(rows, me);
  }

  // _row returns member's <tr>, updated for row; its rank cell carries an up
  // or down marker when the member moved since the last render.
  _row(row, nf, me) {
    let tr = this._trs.get(row.member);
    const fresh = !tr;
    if (fresh) {
      tr = document.createElement("tr");
      // The prize shows twice: in its column, and under the name where the
      // element is too narrow for the column (styles.js picks one).
      tr.innerHTML = `<td class="rank"><span class="pos"></span></td><th scope="row" class="player"><span class="who"><img class="avatar" part="avatar" alt="" width="20" height="20" loading="lazy" referrerpolicy="no-referrer" hidden><span class="name"></span><span class="you" part="you" aria-hidden="true" hidden></span><span class="review" part="review" hidden></span></span><span class="prize-under" part="prize" hidden></span></th><td class="score"></td><td class="prize" part="prize" hidden></td>`;
      this._trs.set(row.member, tr);
      if (this._ranks.size) {
        tr.classList.add("enter"); // not on the first snapshot
        tr.addEventListener("animationend", () => tr.classList.remove("enter"), { once: true });
      }
    }
    const [rankTd, th, scoreTd, prizeTd] = tr.children;
    const [img, name, you, review] = th.firstChild.children;
    rankTd.firstChild.textContent = nf.format(row.rank);
    name.textContent = row.name || row.member; // a profile's name where the member has one
    th.title = row.member;
    // Only https avatars (the gateway accepts no other); a broken one hides.
    const avatar = typeof row.avatar === "string" && row.avatar.startsWith("https://") ? row.avatar : "";
    if (img.getAttribute("src") !== avatar) {
      if (avatar) img.src = avatar;
      else img.removeAttribute("src");
      img.hidden = !avatar;
      img.onerror = () => { img.hidden = true; };
    }
    // A quiet marker, with words for screen readers, on a member under review.
    review.hidden = !row.review;
    review.textContent = row.review ? "⚑" : "";
    review.title = row.review ? this.strings.review : "";
    if (row.review) review.setAttribute("aria-label", this.strings.review);
    else review.removeAttribute("aria-label");
    tr.classList.toggle("review", !!row.review);
    scoreTd.textContent = nf.format(row.score);
    const prize = this._prize(row.rank);
    prizeTd.hidden = !this._board?.prizes?.length;
    prizeTd.textContent = prize;
    th.lastChild.textContent = prize;
    th.lastChild.hidden = !prize;
    tr.toggleAttribute("data-podium", row.rank <= 3);
    const isMe = me !== "" && row.member === me;
    tr.classList.toggle("me", isMe);
    if (isMe) tr.setAttribute("aria-current", "true");
    else tr.removeAttribute("aria-current");
    you.hidden = !isMe;
    you.textContent = isMe ? this.strings.you : "";
    const was = this._ranks.get(row.member);
    if (was !== undefined && was !== row.rank) this._mark(rankTd, was - row.rank);
    // Only a climber flashes: the rows it passed get their ▼ marker, and
    // in an around view, where every row sinks together, nothing flashes.
    if (was !== undefined && was > row.rank) this._moved.push(tr);
    this._ranks.set(row.member, row.rank);
    return tr;
  }

  _mark(td, moved) {
    td.querySelector(".mark")?.remove(); // a new element restarts the fade
    const m = document.createElement("span");
    m.className = `mark ${moved > 0 ? "up" : "down"}`;
    m.textContent = `${moved > 0 ? "▲" : "▼"}${Math.abs(moved)}`;
    m.setAttribute("aria-hidden", "true"); // the own row's moves are announced in words
    m.addEventListener("animationend", () => m.remove(), { once: true });
    td.appendChild(m);
  }

  // _flash tints the rows that climbed, fading out. Rows never move on
  // screen: the DOM is already in its final order and each row sits in its
  // rank's slot, so a screenshot at any moment shows every rank once and no
  // row over another (a gliding row, FLIP, would cross its neighbours and
  // leave its new slot empty until it arrived).
  _flash(moved) {
    if (!moved.length) return;
    for (const tr of moved) tr.classList.remove("moved-up");
    void this._els.tbody.offsetWidth; // restart the fade of a row that climbs again
    for (const tr of moved) tr.classList.add("moved-up");
  }

  // _announce tells screen readers, politely, when the viewer's own rank
  // changed; other rows moving is not announced (it would never stop talking).
  _announce(rows, me) {
    const mine = me && rows.find((r) => r.member === me);
    if (!mine) return;
    const previous = this._announced;
    this._announced = mine.rank;
    if (previous === undefined || previous === mine.rank) return;
    const nf = this._fmt();
    const moved = previous > mine.rank ? this.strings.up(nf.format(previous - mine.rank)) : this.strings.down(nf.format(mine.rank - previous));
    this._els.live.textContent = this.strings.yourRank(nf.format(mine.rank), moved);
    this._emit("rankwire-rank", { member: me, rank: mine.rank, previous });
  }
}

if (!customElements.get("rankwire-board")) customElements.define("rankwire-board", RankwireBoard);
