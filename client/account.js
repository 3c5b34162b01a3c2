// Accounts in the header (docs/protocol.md, "Accounts"): a guest registers (keeping its player
// id and games) or logs in; an account logs out everywhere. The header button shows the
// account's username, or "Log in" for a guest. An account changes its password in the same
// dialog (`change_password`: its sessions stay logged in).
//
// After `logged_in` the page reconnects: the next `hello` carries the account's token, and its
// `welcome` (with `account`) is the page's identity from then on. `logout_everywhere` ends with
// the server closing the socket (4001); the reconnection's `hello` then has a dead token and the
// page is a new guest, as after clearing its storage.

import { t, errorText } from "./i18n.js";
import { TOKEN_KEY } from "./net.js";

const $ = (sel) => document.querySelector(sel);

export function initAccount(conn) {
  const dialog = $("#account-dialog");
  const button = $("#account-button");
  const form = $("#account-form");
  const error = $("#account-error");

  const render = () => {
    const account = conn.welcome?.account;
    button.textContent = account ?? t("account.login");
    $("#account-guest").hidden = Boolean(account);
    $("#account-member").hidden = !account;
    $("#account-name").textContent = account ? t("account.signed_in", { name: account }) : "";
  };
  conn.addEventListener("message", (ev) => {
    if (ev.detail.type === "welcome") render();
  });
  conn.addEventListener("state", render);

  button.addEventListener("click", () => {
    error.textContent = "";
    $("#account-changed").textContent = "";
    render();
    dialog.showModal();
  });
  $("#account-close").addEventListener("click", () => dialog.close());

  const submit = async (type) => {
    error.textContent = "";
    const body = { username: $("#account-username").value, password: $("#account-password").value };
    try {
      const reply = await conn.request(type, body);
      if (reply.token) localStorage.setItem(TOKEN_KEY, reply.token);
      $("#account-password").value = "";
      dialog.close();
      conn.reconnect();
    } catch (err) {
      error.textContent = errorText(err);
    }
  };
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    submit(ev.submitter?.value === "register" ? "register" : "login");
  });
  $("#account-change").addEventListener("click", async () => {
    error.textContent = "";
    $("#account-changed").textContent = "";
    try {
      await conn.request("change_password", { old: $("#account-old").value, new: $("#account-new").value });
      $("#account-old").value = "";
      $("#account-new").value = "";
      $("#account-changed").textContent = t("account.password_changed");
    } catch (err) {
      error.textContent = errorText(err);
    }
  });
  $("#account-logout").addEventListener("click", async () => {
    try {
      await conn.request("logout_everywhere");
      dialog.close();
    } catch (err) {
      error.textContent = errorText(err);
    }
  });
  render();
}
