// The loyalty console. Every retailer string reaches the page as text (textContent, text nodes, SVG
// <title>), never as markup. The session is an HttpOnly cookie the script cannot read; the CSRF token lives
// in this script's memory only, and the API key is read from its field once and never kept.
"use strict";

const state = { csrf: null, offersAfter: [], offersNext: null, figures: null };

function $(id) { return document.getElementById(id); }

/// An element with attributes and children; strings become text nodes.
function el(tag, attributes, ...children) {
  const svg = ["svg", "circle", "rect", "line", "text", "title", "g"].includes(tag);
  const node = svg ? document.createElementNS("http://www.w3.org/2000/svg", tag) : document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value !== null && value !== undefined) node.setAttribute(name, String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(typeof child === "string" || typeof child === "number" ? document.createTextNode(String(child)) : child);
  }
  return node;
}

function say(message, isError) {
  const status = $("status");
  status.textContent = message;
  status.classList.toggle("error", Boolean(isError));
}

class APIError extends Error {
  constructor(status, body) {
    super((body && body.error && body.error.message) || "the server answered " + status);
    this.status = status;
    this.body = body;
  }
}

/// Calls the API with the session cookie; writes carry the CSRF token. A 401 means the session ended.
async function api(method, path, body, contentType) {
  const headers = {};
  if (method !== "GET" && state.csrf) headers["X-CSRF-Token"] = state.csrf;
  let payload;
  if (body !== undefined) {
    headers["Content-Type"] = contentType || "application/json";
    payload = contentType ? body : JSON.stringify(body);
  }
  const response = await fetch(path, { method, headers, body: payload, credentials: "same-origin", cache: "no-store" });
  if (response.status === 204) return null;
  const type = response.headers.get("Content-Type") || "";
  const answer = type.startsWith("application/json") ? await response.json() : await response.text();
  if (!response.ok) {
    if (response.status === 401 && path !== "/v1/console/session") showSignIn("Your session ended; sign in again.");
    throw new APIError(response.status, answer);
  }
  return answer;
}

// MARK: Session

function showSignIn(message) {
  state.csrf = null;
  $("app").hidden = true;
  $("sign-out").hidden = true;
  $("who").textContent = "";
  $("sign-in").hidden = false;
  $("page-title").textContent = "Sign in";
  say(message || "", Boolean(message));
}

function showApp(session) {
  state.csrf = session.csrf_token;
  $("sign-in").hidden = true;
  $("app").hidden = false;
  $("sign-out").hidden = false;
  $("who").textContent = "Signed in as " + session.retailer.name;
  if (!location.hash) location.hash = "#offers";
  showPage();
}

async function signIn(event) {
  event.preventDefault();
  const field = $("api-key");
  const key = field.value.trim();
  field.value = "";
  try {
    showApp(await api("POST", "/v1/console/session", { api_key: key }));
    say("Signed in.");
  } catch (error) {
    say("Sign-in failed: " + error.message, true);
  }
}

async function signOut() {
  try { await api("DELETE", "/v1/console/session"); } catch (error) { /* signed out either way */ }
  showSignIn("Signed out.");
  $("status").classList.remove("error");
}

// MARK: Pages

const loaders = {};

function showPage() {
  if ($("app").hidden) return;
  const name = (location.hash || "#offers").slice(1);
  const page = $("page-" + name) ? name : "offers";
  for (const section of document.querySelectorAll(".page")) section.hidden = section.id !== "page-" + page;
  for (const link of document.querySelectorAll("nav a")) {
    if (link.getAttribute("href") === "#" + page) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  $("page-title").textContent = $("page-" + page).dataset.title;
  if (loaders[page]) loaders[page]().catch((error) => say(error.message, true));
}

function dateText(value) { return value ? value.replace("T", " ").replace(/\.\d+Z$|Z$/, " UTC") : ""; }
function toInput(value) { return value ? value.slice(0, 16) : ""; }
function fromInput(value) { return value ? value + ":00Z" : undefined; }
function numberOrUndefined(value) { return value === "" ? undefined : Number(value); }

// Offers

loaders.offers = async function () {
  const after = state.offersAfter[state.offersAfter.length - 1];
  const page = await api("GET", "/v1/retailer/offers?limit=100" + (after ? "&after=" + encodeURIComponent(after) : ""));
  state.offersNext = page.next || null;
  $("offers-next").disabled = !state.offersNext;
  $("offers-first").disabled = state.offersAfter.length === 0;
  const rows = page.offers.map((offer) => {
    const window = [offer.starts_at ? "from " + dateText(offer.starts_at) : "", offer.ends_at ? "until " + dateText(offer.ends_at) : ""]
      .filter(Boolean).join(" ") || "always";
    const limits = offer.per_shopper_limit + " per shopper" + (offer.total_limit ? ", " + offer.total_limit + " in all" : "");
    const edit = el("button", { type: "button" }, "Edit");
    edit.addEventListener("click", () => fillOfferForm(offer));
    const remove = el("button", { type: "button" }, "Remove");
    remove.setAttribute("aria-label", "Remove offer " + offer.major + "." + offer.minor);
    edit.setAttribute("aria-label", "Edit offer " + offer.major + "." + offer.minor);
    remove.addEventListener("click", () => removeOffer(offer));
    return el("tr", {}, el("td", {}, offer.major), el("td", {}, offer.minor), el("td", {}, offer.title),
      el("td", {}, offer.category || ""), el("td", {}, window), el("td", {}, limits), el("td", {}, edit, " ", remove));
  });
  $("offers-table").tBodies[0].replaceChildren(...rows);
  if (rows.length === 0) say("No offers on this page.");
};

function fillOfferForm(offer) {
  $("offer-form-title").textContent = "Edit offer " + offer.major + "." + offer.minor;
  $("offer-major").value = offer.major;
  $("offer-minor").value = offer.minor;
  $("offer-title").value = offer.title;
  $("offer-description").value = offer.description || "";
  $("offer-category").value = offer.category || "";
  $("offer-image").value = offer.image_url || "";
  $("offer-starts").value = toInput(offer.starts_at);
  $("offer-ends").value = toInput(offer.ends_at);
  $("offer-per-shopper").value = offer.per_shopper_limit;
  $("offer-total").value = offer.total_limit || "";
  $("offer-reshow").value = offer.reshow_after_s === undefined ? "" : offer.reshow_after_s;
  $("offer-title").focus();
}

function clearOfferForm() {
  $("offer-form").reset();
  $("offer-form-title").textContent = "New offer";
}

async function saveOffer(event) {
  event.preventDefault();
  const major = $("offer-major").value, minor = $("offer-minor").value;
  const draft = {
    title: $("offer-title").value,
    description: $("offer-description").value || undefined,
    category: $("offer-category").value || undefined,
    image_url: $("offer-image").value || undefined,
    starts_at: fromInput($("offer-starts").value),
    ends_at: fromInput($("offer-ends").value),
    per_shopper_limit: numberOrUndefined($("offer-per-shopper").value),
    total_limit: numberOrUndefined($("offer-total").value),
    reshow_after_s: numberOrUndefined($("offer-reshow").value),
  };
  try {
    await api("PUT", "/v1/retailer/offers/" + encodeURIComponent(major) + "/" + encodeURIComponent(minor), draft);
    say("Saved offer " + major + "." + minor + ".");
    clearOfferForm();
    await loaders.offers();
  } catch (error) {
    say("Not saved: " + error.message, true);
  }
}

async function removeOffer(offer) {
  try {
    await api("DELETE", "/v1/retailer/offers/" + offer.major + "/" + offer.minor);
    say("Removed offer " + offer.major + "." + offer.minor + ".");
    await loaders.offers();
  } catch (error) {
    say("Not removed: " + error.message, true);
  }
}

// Import and export

async function importFile(event) {
  event.preventDefault();
  const file = $("import-file").files[0];
  if (!file) return;
  const problems = $("import-problems");
  problems.replaceChildren();
  try {
    const result = await api("POST", "/v1/retailer/offers/import", await file.arrayBuffer(), "text/csv");
    say("Imported: " + result.created + " created, " + result.updated + " updated, " + result.unchanged + " unchanged.");
  } catch (error) {
    say(error.message, true);
    const rows = (error.body && error.body.error && error.body.error.rows) || [];
    problems.replaceChildren(...rows.map((row) =>
      el("li", {}, "Line " + row.line + (row.field ? " (" + row.field + ")" : "") + ": " + row.message)));
  }
}

async function exportOffers() {
  const text = await api("GET", "/v1/retailer/offers/export");
  const link = $("export-link");
  if (link.href) URL.revokeObjectURL(link.href);
  link.href = URL.createObjectURL(new Blob([text], { type: "text/csv" }));
  link.hidden = false;
  say("Exported " + Math.max(0, text.split("\r\n").length - 2) + " offers.");
}

// Stores

loaders.stores = async function () {
  const stores = (await api("GET", "/v1/retailer/stores")).stores;
  $("stores-table").tBodies[0].replaceChildren(...stores.map((store) => el("tr", {},
    el("td", {}, store.store_id), el("td", {}, store.name), el("td", {}, store.latitude.toFixed(5)),
    el("td", {}, store.longitude.toFixed(5)), el("td", {}, store.radius_m))));
  drawStores(stores);
};

/// Geofences in an equirectangular projection around their mean latitude, metres to scale.
function drawStores(stores) {
  const svg = $("stores-map");
  svg.replaceChildren(el("title", { id: "stores-map-title" }, stores.length + " store geofences"));
  if (stores.length === 0) {
    svg.append(el("text", { x: 20, y: 40 }, "No stores yet."));
    return;
  }
  const metresPerDegree = 111320;
  const meanLatitude = stores.reduce((sum, s) => sum + s.latitude, 0) / stores.length;
  const xScale = Math.cos(meanLatitude * Math.PI / 180) * metresPerDegree;
  const points = stores.map((s) => ({ store: s, x: s.longitude * xScale, y: -s.latitude * metresPerDegree }));
  const minX = Math.min(...points.map((p) => p.x - p.store.radius_m)), maxX = Math.max(...points.map((p) => p.x + p.store.radius_m));
  const minY = Math.min(...points.map((p) => p.y - p.store.radius_m)), maxY = Math.max(...points.map((p) => p.y + p.store.radius_m));
  const scale = Math.min(560 / Math.max(maxX - minX, 1), 360 / Math.max(maxY - minY, 1));
  for (const p of points) {
    const cx = 20 + (p.x - minX) * scale, cy = 20 + (p.y - minY) * scale;
    svg.append(el("g", {},
      el("title", {}, p.store.name + " (" + p.store.store_id + "), radius " + p.store.radius_m + " m"),
      el("circle", { cx: cx.toFixed(1), cy: cy.toFixed(1), r: Math.max(p.store.radius_m * scale, 2).toFixed(1),
        fill: "#0b4f8a", "fill-opacity": "0.25", stroke: "#0b4f8a" }),
      el("text", { x: cx.toFixed(1), y: cy.toFixed(1), "font-size": "12", "text-anchor": "middle" }, p.store.store_id)));
  }
}

// Figures

loaders.figures = async function () {
  const days = $("figures-days").value;
  state.figures = await api("GET", "/v1/retailer/figures?days=" + encodeURIComponent(days));
  const select = $("figures-offer");
  const chosen = select.value;
  select.replaceChildren(el("option", { value: "" }, "All offers"), ...state.figures.offers.map((offer) =>
    el("option", { value: offer.offer_id }, offer.major + "." + offer.minor + " " + offer.title)));
  select.value = state.figures.offers.some((offer) => offer.offer_id === chosen) ? chosen : "";
  drawFigures();
};

function drawFigures() {
  const chosen = state.figures.offers.find((offer) => offer.offer_id === $("figures-offer").value);
  const days = chosen ? chosen.days : state.figures.total;
  const label = chosen ? chosen.major + "." + chosen.minor + " " + chosen.title : "All offers";
  $("figures-table").tBodies[0].replaceChildren(...days.map((day) => el("tr", {},
    el("td", {}, day.date), el("td", {}, day.shown), el("td", {}, day.unique_shoppers), el("td", {}, day.redeemed),
    el("td", {}, day.accepted), el("td", {}, day.conversion === undefined ? "" : (day.conversion * 100).toFixed(0) + "%"))));
  const svg = $("figures-chart");
  const totals = days.reduce((sum, day) => ({ shown: sum.shown + day.shown, redeemed: sum.redeemed + day.redeemed,
    accepted: sum.accepted + day.accepted }), { shown: 0, redeemed: 0, accepted: 0 });
  const summary = label + ", " + days.length + " days: " + totals.shown + " shown, " + totals.redeemed + " redeemed, "
    + totals.accepted + " accepted";
  svg.replaceChildren(el("title", { id: "figures-chart-title" }, summary));
  svg.setAttribute("data-shown", totals.shown);
  svg.setAttribute("data-redeemed", totals.redeemed);
  svg.setAttribute("data-accepted", totals.accepted);
  const top = Math.max(1, ...days.map((day) => Math.max(day.shown, day.redeemed, day.accepted)));
  const width = 600 / days.length;
  svg.append(el("line", { x1: 30, y1: 230, x2: 630, y2: 230, stroke: "#595959" }),
    el("text", { x: 2, y: 20, "font-size": "12" }, top), el("text", { x: 2, y: 230, "font-size": "12" }, "0"));
  days.forEach((day, index) => {
    const x = 30 + index * width;
    const bars = [["shown", day.shown, "#767676"], ["redeemed", day.redeemed, "#0b4f8a"], ["accepted", day.accepted, "#1b6e20"]];
    bars.forEach(([name, value, colour], bar) => {
      const height = 210 * value / top;
      svg.append(el("rect", { x: (x + bar * width / 3).toFixed(1), y: (230 - height).toFixed(1),
        width: Math.max(width / 3 - 1, 1).toFixed(1), height: height.toFixed(1), fill: colour },
        el("title", {}, day.date + ": " + value + " " + name)));
    });
  });
  svg.append(el("text", { x: 30, y: 250, "font-size": "12" }, days[0].date),
    el("text", { x: 630, y: 250, "font-size": "12", "text-anchor": "end" }, days[days.length - 1].date));
}

// Beacon health

loaders.beacons = async function () {
  const days = $("beacons-days").value || "7";
  const health = await api("GET", "/v1/retailer/beacons?quiet_days=" + encodeURIComponent(days));
  $("beacons-table").tBodies[0].replaceChildren(...health.beacons.map((beacon) => el("tr", {},
    el("td", {}, beacon.major), el("td", {}, beacon.minor), el("td", {}, beacon.title),
    el("td", {}, beacon.last_heard_at ? dateText(beacon.last_heard_at) : "never"),
    el("td", beacon.check_battery ? { class: "flag" } : {}, beacon.check_battery ? "Check its battery" : "OK"))));
  const quiet = health.beacons.filter((beacon) => beacon.check_battery).length;
  say(quiet + " of " + health.beacons.length + " beacons unheard for " + health.quiet_days + " days.");
};

// Till

async function till(operation) {
  const result = $("till-result");
  const code = $("till-code").value;
  try {
    const answer = await api("POST", "/v1/till/" + operation, { code });
    result.classList.remove("error");
    result.textContent = answer.status === "accepted"
      ? (operation === "accept" ? "Accepted: " : "Already used at " + dateText(answer.accepted_at) + " at the till \u201c"
        + answer.accepted_till + "\u201d: ") + answer.title
      : "Valid: " + answer.title + " (" + answer.major + "." + answer.minor + "), redeemed " + dateText(answer.redeemed_at);
  } catch (error) {
    result.classList.add("error");
    result.textContent = "Not accepted: " + error.message;
  }
}

// Keys

loaders.keys = async function () {
  const keys = (await api("GET", "/v1/retailer/till-keys")).till_keys;
  $("till-keys-table").tBodies[0].replaceChildren(...keys.map((key) => {
    const revoke = el("button", { type: "button", "aria-label": "Revoke till key " + key.name }, "Revoke");
    revoke.disabled = Boolean(key.revoked_at);
    revoke.addEventListener("click", async () => {
      try {
        await api("DELETE", "/v1/retailer/till-keys/" + encodeURIComponent(key.id));
        say("Revoked the till key " + key.name + ".");
        await loaders.keys();
      } catch (error) { say(error.message, true); }
    });
    return el("tr", {}, el("td", {}, key.name), el("td", {}, dateText(key.created_at)),
      el("td", {}, key.revoked_at ? dateText(key.revoked_at) : ""), el("td", {}, revoke));
  }));
};

async function rotateKey() {
  try {
    const answer = await api("POST", "/v1/retailer/key");
    $("new-key").textContent = "New API key, shown only now: " + answer.api_key;
    say("The API key was rotated. The old key, and this session made with it, keep reading and syncing until "
      + dateText(answer.previous_key_expires_at) + " or the new key's first use, but cannot rotate or make till keys: "
      + "put the new key in place and sign in with it.");
  } catch (error) { say(error.message, true); }
}

async function createTillKey(event) {
  event.preventDefault();
  try {
    const answer = await api("POST", "/v1/retailer/till-keys", { name: $("till-key-name").value });
    $("new-till-key").textContent = "Till key for " + answer.name + ", shown only now: " + answer.till_key;
    $("till-key-form").reset();
    await loaders.keys();
  } catch (error) { say(error.message, true); }
}

// MARK: Start

document.addEventListener("DOMContentLoaded", async () => {
  $("sign-in-form").addEventListener("submit", signIn);
  $("sign-out").addEventListener("click", signOut);
  window.addEventListener("hashchange", showPage);
  for (const link of document.querySelectorAll("nav a")) link.addEventListener("click", () => say(""));
  $("offer-form").addEventListener("submit", saveOffer);
  $("offer-clear").addEventListener("click", clearOfferForm);
  $("offers-next").addEventListener("click", () => { state.offersAfter.push(state.offersNext); loaders.offers(); });
  $("offers-first").addEventListener("click", () => { state.offersAfter = []; loaders.offers(); });
  $("import-form").addEventListener("submit", importFile);
  $("export").addEventListener("click", () => exportOffers().catch((error) => say(error.message, true)));
  $("figures-form").addEventListener("submit", (event) => { event.preventDefault(); loaders.figures().catch((e) => say(e.message, true)); });
  $("figures-offer").addEventListener("change", () => { if (state.figures) drawFigures(); });
  $("beacons-form").addEventListener("submit", (event) => { event.preventDefault(); loaders.beacons().catch((e) => say(e.message, true)); });
  $("till-form").addEventListener("submit", (event) => { event.preventDefault(); till("check"); });
  $("till-accept").addEventListener("click", () => till("accept"));
  $("rotate-key").addEventListener("click", rotateKey);
  $("till-key-form").addEventListener("submit", createTillKey);
  try {
    showApp(await api("GET", "/v1/console/session"));
  } catch (error) {
    showSignIn();
  }
});
