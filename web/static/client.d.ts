// Types of client.js: the rankwire live-view client. See docs/PROTOCOL.md
// ("Live views over WebSocket") for the messages.

/** A row of a view; name, avatar and country where the member has a profile. */
export interface Row {
  rank: number;
  member: string;
  score: number;
  subscore: number;
  name?: string;
  avatar?: string;
  country?: string;
  /** The member has a submission under review (quarantined). */
  review?: boolean;
}

/** A view as the client holds it: its rows keyed by rank. */
export interface ViewState {
  seq: number | null;
  total: number;
  rows: Map<number, Row>;
}

/** A server message of a subscription. */
export interface SnapshotMessage { type: "snapshot"; id: string; seq: number; total: number; rows: Row[] }
export interface DiffMessage { type: "diff"; id: string; seq: number; prev: number; total: number; rows: Row[]; gone: number[] }
export interface ErrorMessage { type: "error"; id: string | null; code: string; message: string }
export interface Prize { from: number; to: number; prize: string }
/** A tournament board's times and prizes, before the first snapshot. */
export interface BoardMessage { type: "board"; id: string; board: string; starts_at?: string; ends_at?: string; prizes?: Prize[] }
/** Sent by the gateway every --heartbeat-interval; clients may ignore it, or move to another gateway when it stops, its seq stalls or writable is false. */
export interface HeartbeatMessage { type: "heartbeat"; seq: number; writable: boolean; at: string }
export type ServerMessage = SnapshotMessage | DiffMessage | ErrorMessage | BoardMessage;

export type ViewSpec =
  | { kind: "top"; limit?: number; offset?: number }
  | { kind: "around"; member?: string; radius?: number }
  | { kind: "rank"; rank: number }
  | { kind: "members"; members: string[] };

export interface SubscribeSpec {
  board: string;
  /** all (default), day, week or month */
  window?: string;
  /** a past window: YYYY-MM-DD, a date of the board's time_zone */
  at?: string;
  /** follow the current day, week or month window: at the board's local midnight the view's next update is the new window's snapshot (not with at) */
  follow?: boolean;
  view: ViewSpec;
}

/** Why a subscription ended: handed to its error handler, once. */
export interface SubscriptionError {
  /** The protocol's error code: forbidden (a 4003 refusal), too_large (1009), not_found, unauthorized... */
  code: string;
  /** The server's message, or the close's reason. */
  message: string;
  /** Set where the whole connection ended for good (every subscription gets it); absent where the server refused this view alone. */
  fatal?: true;
  /** The WebSocket close code (4003, 1009) where a close ended it. */
  close?: number;
}

export interface Handlers {
  update?(view: ViewState, msg: SnapshotMessage | DiffMessage): void;
  /** The view ended: the server refused it, or the connection ended for good. Not called on close(), nor for `unavailable` (a gateway behind its log: the view is asked again, through the next gateway). */
  error?(err: SubscriptionError): void;
  board?(msg: BoardMessage): void;
}

export type ClientState = "idle" | "connecting" | "open" | "reconnecting" | "expired" | "error" | "closed";

export interface StateDetail {
  state: ClientState;
  code?: number | string;
  reason?: string;
  hint?: string;
}

export interface Timers {
  set(fn: () => void, ms: number): unknown;
  clear(t: unknown): void;
}

export interface ClientOptions {
  /** A gateway base URL, or several (tried in turn); default: where the module came from. */
  url?: string | string[];
  /** A read token (JWT). */
  token?: string;
  /** Returns a fresh token: called before the current one expires and after a 4001 close. */
  getToken?: () => Promise<string>;
  WebSocket?: typeof WebSocket;
  backoff?: { base?: number; max?: number };
  random?: () => number;
  timers?: Timers;
  /** auto (default): a WebSocket, and Server-Sent Events (GET /v1/stream) after fallbackAfter WebSockets in a row failed to open, a WebSocket again every retryWebSocket ms. */
  transport?: Transport | "auto";
  /** WebSockets in a row that never opened before the client moves to SSE; default 2. */
  fallbackAfter?: number;
  /** ms a WebSocket may take to open before it counts as failed; default 10000. */
  openTimeout?: number;
  /** ms on SSE before a WebSocket is tried again; default 60000. */
  retryWebSocket?: number;
  /** The streams' fetch; default globalThis.fetch. */
  fetch?: typeof fetch;
}

/** The transport carrying the views: one WebSocket, or one event stream per view. */
export type Transport = "websocket" | "sse";

/** The detail of the client's "transport" event: it moved to SSE, or back to a WebSocket. */
export interface TransportDetail {
  transport: Transport;
}

/** A connection to a gateway carrying any number of live views. Events: "state" (StateDetail), "error", "tokenexpired", "transport" (TransportDetail). */
export class RankwireClient extends EventTarget {
  constructor(opts?: ClientOptions);
  readonly urls: string[];
  url: string;
  token: string | null;
  getToken: (() => Promise<string>) | null;
  state: ClientState;
  /** The transport in use. */
  transport: Transport;
  /** The token's sub: the viewer's member id, or "". */
  readonly subject: string;
  subscribe(spec: SubscribeSpec, handlers?: Handlers): { close(): void };
  setToken(token: string): void;
  close(): void;
}

export function emptyView(): ViewState;
/** Applies a snapshot or diff; null where a diff does not follow state (resubscribe). */
export function applyMessage(state: ViewState, msg: SnapshotMessage | DiffMessage): ViewState | null;
export function sortedRows(state: ViewState): Row[];
export function backoffDelay(n: number, opts?: { base?: number; max?: number; random?: () => number }): number;
export function tokenClaims(token: string): { sub?: string; exp?: number; [claim: string]: unknown };
export function refreshDelay(exp: number | undefined, now?: number): number | null;
export function closeAction(code: number): "fatal" | "too-large" | "refresh" | "limit" | "failover" | "retry";
export function limitDelay(n: number, opts?: { random?: () => number }): number;
export const failedTriesHint: number;
export const connectHint: string;
export function wsURL(base?: string): string;
/** The Server-Sent Events endpoint (http(s)://…/v1/stream) of a WebSocket endpoint. */
export function streamURL(ws: string): string;
/** The query of GET /v1/stream for a subscribe message, the token as access_token. */
export function streamQuery(msg: { board: string; id: string; window?: string; at?: string; follow?: boolean; view: ViewSpec; since?: number }, token: string): string;
/** Splits event-stream text into complete events and the incomplete rest. */
export function parseEvents(buf: string): { events: { event: string; data: string }[]; rest: string };
/** The WebSocket close code an HTTP refusal of a stream stands for; 0 where it refuses the view alone. */
export function refusalClose(status: number, body: unknown, token: string, now?: number): number;
/** The views over Server-Sent Events, behind a WebSocket's shape (RankwireClient uses it after a fallback). */
export class StreamSocket {
  constructor(url: string, opts?: { fetch?: typeof fetch });
  readonly url: string;
  readyState: number;
  onopen: (() => void) | null;
  onmessage: ((e: { data: string }) => void) | null;
  onclose: ((e: { code: number; reason: string }) => void) | null;
  send(text: string): void;
  close(): void;
}
