// The connection to the server: hello with the remembered token, automatic reconnection with
// backoff, and a small event interface. Knows the protocol's envelope (type, id, re), nothing of
// the game itself.

export const TOKEN_KEY = "caro-arena.token";
// How long a welcomed connection must last for its close to reconnect at once.
const HEALTHY_MS = 5000;

export class Connection extends EventTarget {
  constructor(url, getName) {
    super();
    this.url = url;
    this.getName = getName;
    this.ws = null;
    this.nextId = 1;
    this.pending = new Map();
    this.retry = 0;
    this.state = "connecting";
    this.welcome = null;
  }

  start() {
    this.open();
  }

  // Drops the connection and connects again at once (a new name is sent with the next hello).
  reconnect() {
    this.retry = 0;
    this.ws?.close(1000, "reconnecting");
  }

  setState(state) {
    this.state = state;
    this.dispatchEvent(new CustomEvent("state", { detail: state }));
  }

  open() {
    this.setState(this.retry === 0 ? "connecting" : "reconnecting");
    const ws = new WebSocket(this.url);
    this.ws = ws;
    ws.addEventListener("open", () => {
      const hello = { type: "hello", name: this.getName() || undefined };
      const token = localStorage.getItem(TOKEN_KEY);
      if (token) hello.token = token;
      this.raw(hello);
    });
    ws.addEventListener("message", (ev) => {
      let msg;
      try {
        msg = JSON.parse(ev.data);
      } catch {
        return;
      }
      if (msg.type === "welcome") {
        this.welcomedAt = Date.now();
        this.welcome = msg;
        localStorage.setItem(TOKEN_KEY, msg.token);
        this.setState("online");
      }
      if (msg.re !== undefined && this.pending.has(msg.re)) {
        const { resolve, reject } = this.pending.get(msg.re);
        this.pending.delete(msg.re);
        if (msg.type === "error") reject(msg);
        else resolve(msg);
      }
      this.dispatchEvent(new CustomEvent("message", { detail: msg }));
    });
    ws.addEventListener("close", (ev) => {
      if (this.ws !== ws) return;
      for (const { reject } of this.pending.values()) {
        reject({ code: "disconnected", message: "The connection was lost." });
      }
      this.pending.clear();
      // A connection that lasted starts the backoff afresh. One closed right after its welcome
      // (a cluster that cannot reach a room yet answers a resume with 1012) keeps backing off,
      // or the page would reconnect in a tight loop.
      if (this.welcome && Date.now() - this.welcomedAt >= HEALTHY_MS) this.retry = 0;
      this.welcome = null;
      this.setState("offline");
      // Back off: 0.5 s, 1 s, 2 s ... up to 10 s, with jitter so a restarted server is not
      // hit by every client at once.
      const delay = this.retry === 0 ? 0 : Math.min(10000, 500 * 2 ** this.retry) * (0.75 + Math.random() / 2);
      this.retry += 1;
      this.dispatchEvent(new CustomEvent("closed", { detail: { code: ev.code, reason: ev.reason } }));
      setTimeout(() => this.open(), delay);
    });
  }

  raw(msg) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) {
      this.ws.send(JSON.stringify(msg));
      return true;
    }
    return false;
  }

  // Sends a request and resolves with its direct reply (or rejects with its error).
  request(type, body = {}) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      if (!this.welcome || !this.raw({ type, id, ...body })) {
        reject({ code: "disconnected", message: "Not connected to the server yet." });
        return;
      }
      this.pending.set(id, { resolve, reject });
    });
  }

  // Sends a message whose answer arrives as a broadcast to the room (a move, a resignation):
  // only an error comes back with our id, so the returned promise rejects on an error and
  // otherwise resolves once the server had time to refuse it.
  fire(type, body = {}) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      if (!this.welcome || !this.raw({ type, id, ...body })) {
        reject({ code: "disconnected", message: "Not connected to the server." });
        return;
      }
      this.pending.set(id, { resolve, reject });
      setTimeout(() => {
        if (this.pending.delete(id)) resolve(null);
      }, 5000);
    });
  }
}
