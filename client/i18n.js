// The page's language: Vietnamese or English. Every string the page shows comes from one
// catalogue per language (i18n/en.js, i18n/vi.js, the same keys in both; e2e/tests/i18n.test.js
// checks it). The language is the player's saved choice (the VI / EN switch in the header,
// remembered in localStorage), else the browser's first language that is one of ours, else
// English. A switch saves the choice and reloads the page: the token keeps the seats, and every
// view is drawn again in the new language.
//
// Server errors are shown by their `code` (docs/protocol.md, "Errors"); a code the catalogue does
// not know shows the server's English `message`.

import en from "./i18n/en.js";
import vi from "./i18n/vi.js";

const LANG_KEY = "caro-arena.lang";
export const CATALOGUES = { vi, en };

function detect() {
  const saved = localStorage.getItem(LANG_KEY);
  if (saved in CATALOGUES) return saved;
  const wanted = navigator.languages?.length ? navigator.languages : [navigator.language || ""];
  for (const tag of wanted) {
    const primary = String(tag).toLowerCase().split("-")[0];
    if (primary in CATALOGUES) return primary;
  }
  return "en";
}

export const lang = detect();
const catalogue = CATALOGUES[lang];

// The text of `key` in the page's language, with `{name}` replaced by `params.name`. A key
// missing from the catalogue falls back to English, then to the key itself (visible, so a
// forgotten key is noticed).
export function t(key, params = {}) {
  const text = catalogue[key] ?? en[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (whole, name) => (name in params ? String(params[name]) : whole));
}

// Whether the catalogue has `key` (for texts that are translated only when known).
export function has(key) {
  return key in catalogue;
}

// A server error (or the client's own `disconnected`) as the player reads it: translated by its
// code, with the server's message as `{message}` for codes whose details vary; an unknown code
// shows the server's message as it came.
export function errorText(err) {
  if (!err) return "";
  const key = `error.${err.code}`;
  if (err.code && has(key)) return t(key, { message: err.message ?? "" });
  return err.message || String(err.code || err);
}

// A bot level's description: the shipped levels' are translated, recognised by their name and
// their shipped English text (an operator's own description of a level is shown as written).
export function botDescription(bot) {
  const key = `bot.${bot.name}`;
  return en[key] === bot.description ? t(key) : bot.description;
}

// Fills the static page: `data-i18n` sets an element's text, `data-i18n-<attr>` (placeholder,
// title, aria-label) one of its attributes. `<html lang>` follows the language, and the switch
// marks the current one.
export function translatePage(root = document) {
  document.documentElement.lang = lang;
  for (const el of root.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
  for (const attr of ["placeholder", "title", "aria-label"]) {
    for (const el of root.querySelectorAll(`[data-i18n-${attr}]`)) {
      el.setAttribute(attr, t(el.getAttribute(`data-i18n-${attr}`)));
    }
  }
  for (const b of root.querySelectorAll("[data-lang]")) {
    b.setAttribute("aria-pressed", String(b.dataset.lang === lang));
    b.addEventListener("click", () => setLang(b.dataset.lang));
  }
}

// Saves the choice and draws the page again in it.
export function setLang(next) {
  if (!(next in CATALOGUES)) return;
  localStorage.setItem(LANG_KEY, next);
  if (next !== lang) location.reload();
}
