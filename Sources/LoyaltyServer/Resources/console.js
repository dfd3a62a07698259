// The loyalty console. Every retailer string reaches the page as text (textContent, text nodes, SVG
// <title>), never as markup. The session is an HttpOnly cookie the script cannot read; the CSRF token lives
// in this script's memory only, and the API key is read from its field once and never kept.
"use strict";

const state = { csrf: null, offers: [], stats: new Map(), offersPage: 0, figures: null, stores: [] };
const offersPerPage = 20;

function $(id) { return document.getElementById(id); }

const svgTags = ["svg", "circle", "rect", "line", "text", "title", "g", "path"];

/// An element with attributes and children; strings become text nodes.
function el(tag, attributes, ...children) {
  const node = svgTags.includes(tag)
    ? document.createElementNS("http://www.w3.org/2000/svg", tag) : document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value !== null && value !== undefined && value !== false) node.setAttribute(name, String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(typeof child === "string" || typeof child === "number" ? document.createTextNode(String(child)) : child);
  }
  return node;
}

/// A table cell that, on a phone's card, is a line headed by its column's name (one value beside it).
function cell(label, attributes, ...children) {
  return el("td", Object.assign({ "data-label": label }, attributes || {}), el("span", { class: "value" }, ...children));
}

function button(text, label, onClick, className) {
  const node = el("button", { type: "button", "aria-label": label, class: className }, text);
  node.addEventListener("click", onClick);
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
    this.code = body && body.error && body.error.code;
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
    if (response.status === 401) showSignIn("Your session ended; sign in again.");
    throw new APIError(response.status, answer);
  }
  return answer;
}

/// The one way the console writes a beacon, as the CLI does: major:minor.
function beaconText(major, minor) { return major + ":" + minor; }
function beaconCell(major, minor) { return cell("Beacon", {}, el("span", { class: "beacon" }, beaconText(major, minor))); }

function dateText(value) { return value ? value.replace("T", " ").replace(/(:\d\d)(\.\d+)?Z$/, "$1 UTC") : ""; }
function dayText(value) { return value ? value.slice(0, 10) : ""; }
function toInput(value) { return value ? value.slice(0, 16) : ""; }
function fromInput(value) { return value ? value + ":00Z" : undefined; }
function numberOrUndefined(value) { return value === "" ? undefined : Number(value); }

// MARK: Asking first

/// Shows what an action will do and resolves true only when the retailer confirms it.
function confirmAction(title, text, confirmText) {
  const dialog = $("confirm");
  $("confirm-title").textContent = title;
  $("confirm-text").textContent = text;
  $("confirm-ok").textContent = confirmText;
  dialog.returnValue = "";
  dialog.showModal();
  $("confirm-cancel").focus();
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true });
  });
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
  // replaceState, not location.hash: that would fire hashchange and load the page a second time.
  if (!location.hash) history.replaceState(null, "", "#offers");
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
const loaderCalls = {};

/// A loader's call ticket: true while no newer call of the same loader has started. An answer that a newer
/// call overtook (a range changed twice, a reload after a save) is dropped, so the page draws the newest answer.
function latestCall(name) {
  const call = (loaderCalls[name] || 0) + 1;
  loaderCalls[name] = call;
  return () => loaderCalls[name] === call;
}

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

// MARK: Offers

/// food, clothing or other: the colour a shopper's screen shows the offer on.
function categoryKind(category) {
  const words = (category || "").toLowerCase();
  if (/\bfood\b/.test(words)) return "food";
  if (/\bclothing\b/.test(words)) return "clothing";
  return "other";
}

function chip(category) {
  return category ? el("span", { class: "chip " + categoryKind(category) }, category) : null;
}

/// live, scheduled, ended or used-up (its total limit reached), by this browser's clock.
function offerState(offer) {
  const now = Date.now();
  const stats = state.stats.get(offer.id);
  if (offer.ends_at && Date.parse(offer.ends_at) <= now) return "ended";
  if (offer.starts_at && Date.parse(offer.starts_at) > now) return "scheduled";
  if (stats && stats.remaining === 0) return "used-up";
  return "live";
}

const stateNames = { live: "Live", scheduled: "Scheduled", ended: "Ended", "used-up": "Limit reached" };

loaders.offers = async function () {
  const current = latestCall("offers");
  const [list, stats] = await Promise.all([api("GET", "/v1/retailer/offers"), api("GET", "/v1/retailer/stats")]);
  if (!current()) return;
  state.offers = list.offers;
  state.stats = new Map(stats.offers.map((entry) => [entry.offer_id, entry]));
  const select = $("offers-category");
  const chosen = select.value;
  const categories = [...new Set(state.offers.map((offer) => offer.category).filter(Boolean))].sort();
  select.replaceChildren(el("option", { value: "" }, "All categories"),
    ...categories.map((category) => el("option", { value: category }, category)));
  select.value = categories.includes(chosen) ? chosen : "";
  renderOffers();
};

function matchingOffers() {
  const words = $("offers-search").value.trim().toLowerCase();
  const category = $("offers-category").value;
  const wanted = $("offers-state").value;
  return state.offers.filter((offer) => {
    if (category && offer.category !== category) return false;
    if (wanted && offerState(offer) !== wanted) return false;
    if (!words) return true;
    return [offer.title, offer.description || "", offer.category || "", beaconText(offer.major, offer.minor)]
      .some((text) => text.toLowerCase().includes(words));
  });
}

function renderOffers() {
  const offers = matchingOffers();
  const pages = Math.max(1, Math.ceil(offers.length / offersPerPage));
  state.offersPage = Math.min(state.offersPage, pages - 1);
  const shown = offers.slice(state.offersPage * offersPerPage, (state.offersPage + 1) * offersPerPage);
  $("offers-table").tBodies[0].replaceChildren(...shown.map(offerRow));
  $("offers-count").textContent = offers.length === state.offers.length
    ? state.offers.length + " offers" : offers.length + " of " + state.offers.length + " offers match";
  $("offers-page").textContent = "Page " + (state.offersPage + 1) + " of " + pages;
  $("offers-previous").disabled = state.offersPage === 0;
  $("offers-next").disabled = state.offersPage >= pages - 1;
}

function offerRow(offer) {
  const beacon = beaconText(offer.major, offer.minor);
  const stats = state.stats.get(offer.id) || { seen_by: 0, redemptions: 0, accepted: 0 };
  const when = [offer.starts_at ? "from " + dateText(offer.starts_at) : "", offer.ends_at ? "until " + dateText(offer.ends_at) : ""]
    .filter(Boolean).join(" ") || "no end date";
  const limits = offer.per_shopper_limit + " per shopper" + (offer.total_limit ? ", " + offer.total_limit + " in all" : "")
    + (offer.shows_per_day ? ", shown " + offer.shows_per_day + " a day" : "");
  const kind = offerState(offer);
  return el("tr", { "data-beacon": beacon },
    beaconCell(offer.major, offer.minor),
    cell("Offer", { class: "lead" }, chip(offer.category), el("strong", {}, offer.title),
      el("span", { class: "sub" }, when + "; " + limits + (offer.schedule ? "; on " + offer.schedule : ""))),
    cell("State", {}, el("span", { class: "state " + kind }, stateNames[kind])),
    cell("Seen by", { class: "number" }, stats.seen_by, presenceText(stats)),
    cell("Redeemed", { class: "number" }, stats.redemptions),
    cell("Accepted", { class: "number" }, stats.accepted),
    cell("Remaining", { class: "number" }, stats.remaining === undefined ? "unlimited" : stats.remaining),
    cell("Actions", { class: "actions-cell" }, el("span", { class: "row-actions" },
      button("Edit", "Edit offer " + beacon, () => openOfferDrawer(offer), "plain"),
      button("Remove", "Remove offer " + beacon, () => removeOffer(offer), "danger"))));
}

/// Of those who saw an offer, how many a sighting of its secure beacon verified and how many only claimed it.
function presenceText(stats) {
  return stats.verified_by ? el("span", { class: "sub" }, stats.verified_by + " verified, " + stats.claimed_by + " claimed")
    : null;
}

/// The drawer for a new offer (optionally at a given beacon) or for editing one.
function openOfferDrawer(offer, beacon) {
  $("offer-form").reset();
  const editing = Boolean(offer);
  const at = offer || beacon;
  $("offer-form-title").textContent = editing ? "Edit offer " + beaconText(offer.major, offer.minor) : "New offer";
  $("offer-major").value = at ? at.major : "";
  $("offer-minor").value = at ? at.minor : "";
  $("offer-major").readOnly = editing;
  $("offer-minor").readOnly = editing;
  if (offer) {
    $("offer-title").value = offer.title;
    $("offer-description").value = offer.description || "";
    $("offer-category").value = offer.category || "";
    $("offer-image").value = offer.image_url || "";
    $("offer-starts").value = toInput(offer.starts_at);
    $("offer-ends").value = toInput(offer.ends_at);
    $("offer-per-shopper").value = offer.per_shopper_limit;
    $("offer-total").value = offer.total_limit || "";
    $("offer-reshow").value = offer.reshow_after_s === undefined ? "" : offer.reshow_after_s;
    $("offer-schedule").value = offer.schedule || "";
    $("offer-shows-per-day").value = offer.shows_per_day === undefined ? "" : offer.shows_per_day;
  }
  previewOffer();
  $("offer-drawer").showModal();
  // From the top: the heading says which offer this is.
  (editing || at ? $("offer-title") : $("offer-major")).focus({ preventScroll: true });
  $("offer-drawer").scrollTop = 0;
}

function previewOffer() {
  const preview = $("offer-preview");
  preview.className = "banner " + categoryKind($("offer-category").value);
  $("offer-preview-title").textContent = $("offer-title").value || "Title";
  $("offer-preview-description").textContent = $("offer-description").value;
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
    schedule: $("offer-schedule").value.trim() || undefined,
    shows_per_day: numberOrUndefined($("offer-shows-per-day").value),
  };
  try {
    await api("PUT", "/v1/retailer/offers/" + encodeURIComponent(major) + "/" + encodeURIComponent(minor), draft);
    $("offer-drawer").close();
    await reloadPage();
    say("Saved offer " + beaconText(major, minor) + ".");
  } catch (error) {
    say("Not saved: " + error.message, true);
  }
}

/// Reloads the page shown: an offer saved from the fleet page shows there.
function reloadPage() {
  const page = (location.hash || "#offers").slice(1);
  return loaders[page] ? loaders[page]() : Promise.resolve();
}

async function removeOffer(offer) {
  const beacon = beaconText(offer.major, offer.minor);
  const yes = await confirmAction("Remove the offer at " + beacon + "?",
    "\u201c" + offer.title + "\u201d leaves the catalog: shoppers' devices drop it at their next sync, and codes "
    + "already given out for it are refused at the till. Its figures leave the console. This cannot be undone; "
    + "an offer set at " + beacon + " later starts afresh.", "Remove the offer");
  if (!yes) { say("Nothing removed."); return; }
  try {
    await api("DELETE", "/v1/retailer/offers/" + offer.major + "/" + offer.minor);
    await loaders.offers();
    say("Removed offer " + beacon + ".");
  } catch (error) {
    say("Not removed: " + error.message, true);
  }
}

// MARK: Beacons (the fleet)

/// Bars of a beacon's sightings per day of the period (the answer lists only days with any), its total in the
/// title.
function sparkline(heard, firstDay, period, label) {
  const counts = new Map(heard.map((day) => [day.date, day.sightings]));
  const start = Date.parse(firstDay + "T00:00:00Z");
  const days = Array.from({ length: period },
    (_, index) => counts.get(new Date(start + index * 86400000).toISOString().slice(0, 10)) || 0);
  const top = Math.max(1, ...days);
  const width = 112 / days.length;
  const svg = el("svg", { class: "spark", viewBox: "0 0 112 26", role: "img", "aria-label": label },
    el("title", {}, label));
  days.forEach((sightings, index) => {
    const height = Math.max(sightings ? 2 : 0.5, 24 * sightings / top);
    svg.append(el("rect", { x: (index * width).toFixed(1), y: (25 - height).toFixed(1),
      width: Math.max(width - 1, 1).toFixed(1), height: height.toFixed(1), fill: sightings ? "#0b4f8a" : "#b0b0b0" }));
  });
  return svg;
}

/// Every page of the fleet, following next.
loaders.beacons = async function () {
  const days = $("beacons-days").value;
  const quiet = $("beacons-quiet").value || "7";
  const current = latestCall("beacons");
  const query = "/v1/retailer/fleet?days=" + encodeURIComponent(days) + "&quiet_days=" + encodeURIComponent(quiet);
  const fleet = await api("GET", query);
  for (let page = fleet; page.next; ) {
    page = await api("GET", query + "&after=" + encodeURIComponent(page.next));
    if (!current()) return;
    fleet.beacons.push(...page.beacons);
  }
  if (!current()) return;
  state.fleet = fleet;
  // The beacon drawer places a beacon in one of them.
  state.stores = (await api("GET", "/v1/retailer/stores")).stores;
  if (!current()) return;
  renderFleet();
};

/// A beacon to check: quiet, its battery low, or heard by shoppers with no offer on it.
function needsCheck(beacon) {
  return beacon.quiet || lowBattery(beacon) || (!beacon.offer_id && Boolean(beacon.last_heard_at));
}

function lowBattery(beacon) { return Boolean(beacon.telemetry && beacon.telemetry.low_battery); }

/// A secure beacon's last Eddystone-TLM: battery, temperature, uptime.
function telemetryCell(beacon) {
  const tlm = beacon.telemetry;
  if (!tlm) return cell("Battery", {}, beacon.secure ? "no telemetry yet" : "");
  const uptime = tlm.uptime_seconds === undefined ? null : tlm.uptime_seconds >= 86400
    ? Math.floor(tlm.uptime_seconds / 86400) + " d" : Math.floor(tlm.uptime_seconds / 3600) + " h";
  return cell("Battery", {},
    tlm.battery_mv === undefined ? "not measured" : el("span", { class: tlm.low_battery ? "flag" : "" },
      (tlm.battery_mv / 1000).toFixed(2) + " V" + (tlm.low_battery ? " low" : "")),
    el("span", { class: "sub" }, [tlm.temperature === undefined ? null : tlm.temperature.toFixed(1) + " °C",
      uptime === null ? null : "up " + uptime, "as of " + dateText(tlm.heard_at)].filter(Boolean).join(", ")));
}

function renderFleet() {
  const fleet = state.fleet;
  const shown = $("beacons-flagged").checked ? fleet.beacons.filter(needsCheck) : fleet.beacons;
  const rows = shown.map((beacon) => {
    const at = beaconText(beacon.major, beacon.minor);
    const total = beacon.sightings.reduce((sum, day) => sum + day.sightings, 0);
    const check = lowBattery(beacon) ? [el("span", { class: "flag" }, "Battery"), el("span", { class: "note" }, beacon.note)]
      : beacon.quiet ? [el("span", { class: "flag" }, "Quiet"), el("span", { class: "note" }, beacon.note)]
      : !beacon.offer_id && beacon.last_heard_at
        ? [el("span", { class: "flag" }, "No offer"), el("span", { class: "note" }, beacon.note)]
        : beacon.last_heard_at ? [el("span", { class: "ok" }, "Heard")] : ["Not heard yet"];
    const actions = [button(beacon.name ? "Rename" : "Name it", "Name beacon " + at, () => openBeaconDrawer(beacon), "plain"),
      button(beacon.secure ? "New key" : "Make secure", (beacon.secure ? "New identity key for beacon " : "Make secure beacon ")
        + at, () => secureBeacon(beacon), beacon.secure ? "danger" : "plain")];
    if (!beacon.offer_id) {
      actions.push(button("Add an offer", "Add an offer at beacon " + at,
        () => openOfferDrawer(null, { major: beacon.major, minor: beacon.minor }), "plain"));
    }
    return el("tr", { "data-beacon": at, "data-sightings": total, "data-quiet": String(beacon.quiet),
      "data-secure": String(beacon.secure), "data-low-battery": String(lowBattery(beacon)) },
      beaconCell(beacon.major, beacon.minor),
      cell("Name", { class: "lead" }, el("strong", {}, beacon.name || "Unnamed"),
        beacon.secure ? el("span", { class: "chip secure", title: "Heard only by sightings the service verified" }, "secure") : null,
        beacon.placement ? el("span", { class: "sub" }, beacon.placement) : null,
        beacon.store_id ? el("span", { class: "sub" }, "in store " + beacon.store_id) : null),
      cell("Offer", {}, beacon.offer_id ? chip(beacon.category) : null, beacon.offer_id ? beacon.title : "No offer"),
      cell("Last heard", {}, beacon.last_heard_at ? dateText(beacon.last_heard_at) : "never"),
      cell("Sightings", { class: "spark-cell" }, sparkline(beacon.sightings, fleet.first_day, fleet.days,
        total + " sightings in " + fleet.days + " days at " + at),
        " ", el("span", { class: "sightings-total" }, String(total))),
      telemetryCell(beacon),
      cell("Check", {}, ...check),
      cell("Actions", { class: "actions-cell" }, el("span", { class: "row-actions" }, ...actions)));
  });
  $("beacons-table").tBodies[0].replaceChildren(...rows);
  const quietCount = fleet.beacons.filter((beacon) => beacon.quiet).length;
  const withoutOffer = fleet.beacons.filter((beacon) => !beacon.offer_id).length;
  const sightings = fleet.beacons.reduce((sum, beacon) =>
    sum + beacon.sightings.reduce((days, day) => days + day.sightings, 0), 0);
  const lowCount = fleet.beacons.filter(lowBattery).length;
  $("beacons-summary").textContent = fleet.beacons.length + " beacons: " + quietCount + " quiet for "
    + fleet.quiet_days + " days, " + withoutOffer + " without an offer, " + lowCount + " with a low battery; "
    + sightings + " sightings in the last " + fleet.days + " days (a secure beacon's: verified ones only).";
}

/// Makes the beacon secure (or gives it a new identity key) and shows its provisioning document this once.
async function secureBeacon(beacon) {
  const at = beaconText(beacon.major, beacon.minor);
  const yes = await confirmAction(beacon.secure ? "Give beacon " + at + " a new identity key?" : "Make beacon " + at + " secure?",
    (beacon.secure ? "The key it has stops resolving at once: the beacon must be provisioned anew with the new one. "
      : "Its identifier will rotate every 17 minutes and only the service can resolve it; its offers are then seen "
        + "and redeemed only by shoppers whose visit the service verified. ")
      + "The identity key is shown only once, on this page.", beacon.secure ? "Make a new key" : "Make it secure");
  if (!yes) { say("Beacon " + at + " was not changed."); return; }
  try {
    const provisioning = await api("POST", "/v1/retailer/fleet/" + beacon.major + "/" + beacon.minor + "/secure", {});
    const text = JSON.stringify(provisioning, null, 2);
    $("beacon-secured-title").textContent = "Beacon " + at + " is secure (" + provisioning.form + ", a new identifier every 2^"
      + provisioning.exponent + " s).";
    $("beacon-secured-document").textContent = text;
    const link = $("beacon-secured-download");
    if (link.href.startsWith("blob:")) URL.revokeObjectURL(link.href);
    link.href = URL.createObjectURL(new Blob([text + "\n"], { type: "application/json" }));
    link.download = "beacon-" + beacon.major + "-" + beacon.minor + ".json";
    $("beacon-secured").hidden = false;
    await loaders.beacons();
    say("Beacon " + at + " is secure: its provisioning document is shown once, above the table.");
  } catch (error) { say("Not made secure: " + error.message, true); }
}

function openBeaconDrawer(beacon) {
  state.beacon = beacon;
  $("beacon-form-title").textContent = "Name beacon " + beaconText(beacon.major, beacon.minor);
  $("beacon-name").value = beacon.name || "";
  $("beacon-placement").value = beacon.placement || "";
  const stores = $("beacon-store");
  stores.replaceChildren(el("option", { value: "" }, "No store"),
    ...state.stores.map((store) => el("option", { value: store.store_id }, store.name + " (" + store.store_id + ")")));
  if (beacon.store_id && !state.stores.some((store) => store.store_id === beacon.store_id)) {
    stores.append(el("option", { value: beacon.store_id }, beacon.store_id));
  }
  stores.value = beacon.store_id || "";
  $("beacon-drawer").showModal();
  $("beacon-name").focus();
}

async function saveBeacon(event) {
  event.preventDefault();
  const beacon = state.beacon;
  try {
    await api("PUT", "/v1/retailer/fleet/" + beacon.major + "/" + beacon.minor,
      { name: $("beacon-name").value, placement: $("beacon-placement").value || undefined,
        store_id: $("beacon-store").value || undefined });
    $("beacon-drawer").close();
    await loaders.beacons();
    say("Saved beacon " + beaconText(beacon.major, beacon.minor) + ".");
  } catch (error) {
    say("Not saved: " + error.message, true);
  }
}

// MARK: Figures

const series = [["shown", "#767676"], ["redeemed", "#0b4f8a"], ["accepted", "#1b6e20"]];

loaders.figures = async function () {
  const current = latestCall("figures");
  const days = Number($("figures-days").value);
  // Twice the range, so each total can be set against the period before it.
  const [figures, stats] = await Promise.all([
    api("GET", "/v1/retailer/figures?days=" + Math.min(2 * days, 366)), api("GET", "/v1/retailer/stats")]);
  if (!current()) return;
  state.figures = { days, figures, stats: stats.offers };
  const select = $("figures-offer");
  const chosen = select.value;
  select.replaceChildren(el("option", { value: "" }, "All offers"), ...stats.offers.map((offer) =>
    el("option", { value: offer.offer_id }, beaconText(offer.major, offer.minor) + " " + offer.title)));
  select.value = stats.offers.some((offer) => offer.offer_id === chosen) ? chosen : "";
  drawFigures();
};

function sum(days, name) { return days.reduce((total, day) => total + day[name], 0); }

function emptyDays(like) { return like.map((day) => ({ date: day.date, shown: 0, redeemed: 0, accepted: 0, unique_shoppers: 0 })); }

function drawFigures() {
  const { days, figures, stats } = state.figures;
  const chosen = $("figures-offer").value;
  const entry = figures.offers.find((offer) => offer.offer_id === chosen);
  const all = chosen ? (entry ? entry.days : emptyDays(figures.total)) : figures.total;
  const current = all.slice(-days), previous = all.slice(0, all.length - days);
  const totals = $("figures-totals");
  const items = [["Shown", "shown"], ["Redeemed", "redeemed"], ["Accepted at the till", "accepted"]].map(([label, name]) => {
    const now = sum(current, name), before = sum(previous, name);
    const trend = previous.length < days ? "" : now === before ? "same as the " + days + " days before"
      : (now > before ? "\u25b2 " + (now - before) + " more" : "\u25bc " + (before - now) + " fewer") + " than the "
        + days + " days before";
    return el("li", { "data-total": name, "data-value": now }, label, el("span", { class: "figure" }, now),
      el("span", { class: "trend" }, trend));
  });
  const shown = sum(current, "shown");
  items.push(el("li", {}, "Conversion", el("span", { class: "figure" },
    shown ? Math.round(100 * sum(current, "accepted") / shown) + "%" : "\u2013"),
    el("span", { class: "trend" }, "accepted at the till per shown")));
  totals.replaceChildren(...items);
  drawChart(current, (entry ? beaconText(entry.major, entry.minor) + " " + entry.title : "All offers"));
  const inRange = new Map(figures.offers.map((offer) => [offer.offer_id, offer.days.slice(-days)]));
  $("figures-offers").tBodies[0].replaceChildren(...stats.map((offer) => {
    const range = inRange.get(offer.offer_id) || [];
    return el("tr", {}, beaconCell(offer.major, offer.minor), cell("Title", { class: "lead" }, offer.title),
      cell("Shown in range", { class: "number" }, sum(range, "shown")),
      cell("Redeemed in range", { class: "number" }, sum(range, "redeemed")),
      cell("Accepted in range", { class: "number" }, sum(range, "accepted")),
      cell("Seen by, all time", { class: "number" }, offer.seen_by, presenceText(offer)),
      cell("Redeemed, all time", { class: "number" }, offer.redemptions),
      cell("Accepted, all time", { class: "number" }, offer.accepted),
      cell("Remaining", { class: "number" }, offer.remaining === undefined ? "unlimited" : offer.remaining));
  }));
}

/// A round step for an axis: 1, 2 or 5 times a power of ten, giving about `count` ticks up to `top`.
function niceStep(top, count) {
  const raw = Math.max(top / count, 1);
  const power = Math.pow(10, Math.floor(Math.log10(raw)));
  return [1, 2, 5, 10].map((factor) => factor * power).find((step) => step >= raw);
}

/// Bars per day with a labelled count axis and dated day axis, drawn here (no chart library).
function drawChart(days, label) {
  const svg = $("figures-chart");
  // As wide as the screen gives it (so its 12 px text stays 12 px on a phone), 720 at most.
  const across = Math.round(Math.min(720, Math.max(300, svg.parentElement.clientWidth)));
  svg.setAttribute("viewBox", "0 0 " + across + " 300");
  const left = 56, right = across - 14, top = 16, bottom = 240;
  const totals = { shown: sum(days, "shown"), redeemed: sum(days, "redeemed"), accepted: sum(days, "accepted") };
  svg.replaceChildren(el("title", { id: "figures-chart-title" }, label + ", " + days.length + " days from "
    + days[0].date + " to " + days[days.length - 1].date + ": " + totals.shown + " shown, " + totals.redeemed
    + " redeemed, " + totals.accepted + " accepted"));
  for (const [name, value] of Object.entries(totals)) svg.setAttribute("data-" + name, value);
  const highest = Math.max(1, ...days.map((day) => Math.max(day.shown, day.redeemed, day.accepted)));
  const step = niceStep(highest, 4);
  const ceiling = Math.ceil(highest / step) * step;
  const y = (value) => bottom - (bottom - top) * value / ceiling;
  for (let value = 0; value <= ceiling; value += step) {
    svg.append(el("line", { x1: left, x2: right, y1: y(value), y2: y(value), stroke: value ? "#d0d7de" : "#595959" }),
      el("text", { x: left - 6, y: y(value) + 4, "font-size": "12", "text-anchor": "end", fill: "#1a1a1a" }, value));
  }
  svg.append(el("text", { x: 14, y: (top + bottom) / 2, "font-size": "12", "text-anchor": "middle", fill: "#1a1a1a",
    transform: "rotate(-90 14 " + (top + bottom) / 2 + ")" }, "per day"));
  const width = (right - left) / days.length;
  const labelEvery = Math.ceil(days.length / Math.max(2, Math.floor((right - left) / 64)));
  days.forEach((day, index) => {
    const x = left + index * width;
    series.forEach(([name, colour], bar) => {
      const height = bottom - y(day[name]);
      svg.append(el("rect", { x: (x + 1 + bar * (width - 2) / 3).toFixed(2), y: (bottom - height).toFixed(1),
        width: Math.max((width - 2) / 3, 0.5).toFixed(2), height: height.toFixed(1), fill: colour },
        el("title", {}, day.date + ": " + day[name] + " " + name)));
    });
    if (index % labelEvery === 0 || index === days.length - 1) {
      svg.append(el("line", { x1: x + width / 2, x2: x + width / 2, y1: bottom, y2: bottom + 5, stroke: "#595959" }),
        el("text", { x: (x + width / 2).toFixed(1), y: bottom + 20, "font-size": "12", "text-anchor": "middle",
          fill: "#1a1a1a" }, day.date.slice(5)));
    }
  });
  svg.append(el("text", { x: (left + right) / 2, y: 290, "font-size": "12", "text-anchor": "middle", fill: "#1a1a1a" },
    "UTC day (month-day), " + days[0].date.slice(0, 4)));
}

// MARK: Stores

loaders.stores = async function () {
  const current = latestCall("stores");
  const stores = (await api("GET", "/v1/retailer/stores")).stores;
  if (!current()) return;
  state.stores = stores;
  $("stores-table").tBodies[0].replaceChildren(...state.stores.map((store) => el("tr", {},
    cell("Store id", {}, el("span", { class: "beacon" }, store.store_id)),
    cell("Name", { class: "lead" }, el("strong", {}, store.name)),
    cell("Latitude", {}, store.latitude.toFixed(5)), cell("Longitude", {}, store.longitude.toFixed(5)),
    cell("Radius", { class: "number" }, store.radius_m + " m"),
    cell("Actions", { class: "actions-cell" }, el("span", { class: "row-actions" },
      button("Edit", "Edit store " + store.store_id, () => openStoreDrawer(store), "plain"),
      button("Remove", "Remove store " + store.store_id, () => removeStore(store), "danger"))))));
  drawStores(state.stores);
};

/// A length of 1, 2 or 5 times a power of ten metres, near a quarter of the map's width.
function scaleBarMetres(metresAcross) {
  const power = Math.pow(10, Math.floor(Math.log10(metresAcross / 4)));
  return [5, 2, 1].map((factor) => factor * power).find((length) => length <= metresAcross / 4) || power;
}

/// Geofences in an equirectangular projection around their mean latitude, metres to scale, with a scale bar.
function drawStores(stores) {
  const svg = $("stores-map");
  svg.replaceChildren(el("title", { id: "stores-map-title" }, stores.length + " store geofences"));
  if (stores.length === 0) {
    svg.append(el("text", { x: 20, y: 40, fill: "#1a1a1a" }, "No stores yet."));
    return;
  }
  const metresPerDegree = 111320;
  const meanLatitude = stores.reduce((total, s) => total + s.latitude, 0) / stores.length;
  const xScale = Math.cos(meanLatitude * Math.PI / 180) * metresPerDegree;
  const points = stores.map((s) => ({ store: s, x: s.longitude * xScale, y: -s.latitude * metresPerDegree }));
  const minX = Math.min(...points.map((p) => p.x - p.store.radius_m)), maxX = Math.max(...points.map((p) => p.x + p.store.radius_m));
  const minY = Math.min(...points.map((p) => p.y - p.store.radius_m)), maxY = Math.max(...points.map((p) => p.y + p.store.radius_m));
  const scale = Math.min(560 / Math.max(maxX - minX, 1), 330 / Math.max(maxY - minY, 1));
  const offsetX = 20 + (560 - (maxX - minX) * scale) / 2, offsetY = 20 + (330 - (maxY - minY) * scale) / 2;
  svg.setAttribute("data-metres-per-unit", (1 / scale).toFixed(4));
  // Text at 13 px on the screen whatever the map's drawn width.
  const fontSize = (13 * Math.max(1, 600 / Math.max(svg.clientWidth, 1))).toFixed(1);
  for (const p of points) {
    const cx = offsetX + (p.x - minX) * scale, cy = offsetY + (p.y - minY) * scale;
    svg.append(el("g", { "data-store": p.store.store_id },
      el("title", {}, p.store.name + " (" + p.store.store_id + "), radius " + p.store.radius_m + " m"),
      el("circle", { cx: cx.toFixed(1), cy: cy.toFixed(1), r: Math.max(p.store.radius_m * scale, 2).toFixed(1),
        fill: "#0b4f8a", "fill-opacity": "0.2", stroke: "#0b4f8a", "stroke-width": "2" }),
      el("circle", { cx: cx.toFixed(1), cy: cy.toFixed(1), r: 3, fill: "#0b4f8a" }),
      el("text", { x: cx.toFixed(1), y: (cy - 8).toFixed(1), "font-size": fontSize, "text-anchor": "middle",
        fill: "#1a1a1a" }, p.store.name)));
  }
  const metres = scaleBarMetres(560 / scale);
  const length = metres * scale;
  svg.append(el("g", { "data-scale-metres": metres },
    el("line", { x1: 20, x2: 20 + length, y1: 385, y2: 385, stroke: "#1a1a1a", "stroke-width": "3" }),
    el("line", { x1: 20, x2: 20, y1: 378, y2: 392, stroke: "#1a1a1a" }),
    el("line", { x1: 20 + length, x2: 20 + length, y1: 378, y2: 392, stroke: "#1a1a1a" }),
    el("text", { x: 28 + length, y: 390, "font-size": fontSize, fill: "#1a1a1a" },
      metres >= 1000 ? metres / 1000 + " km" : metres + " m")));
}

function openStoreDrawer(store) {
  $("store-form").reset();
  $("store-form-title").textContent = store ? "Edit store " + store.store_id : "New store";
  $("store-id").readOnly = Boolean(store);
  if (store) {
    $("store-id").value = store.store_id;
    $("store-name").value = store.name;
    $("store-latitude").value = store.latitude;
    $("store-longitude").value = store.longitude;
    $("store-radius").value = store.radius_m;
  }
  $("store-drawer").showModal();
  (store ? $("store-name") : $("store-id")).focus();
}

async function saveStore(event) {
  event.preventDefault();
  const id = $("store-id").value.trim();
  try {
    await api("PUT", "/v1/retailer/stores/" + encodeURIComponent(id), {
      name: $("store-name").value, latitude: Number($("store-latitude").value),
      longitude: Number($("store-longitude").value), radius_m: Number($("store-radius").value),
    });
    $("store-drawer").close();
    await loaders.stores();
    say("Saved store " + id + ".");
  } catch (error) {
    say("Not saved: " + error.message, true);
  }
}

async function removeStore(store) {
  const yes = await confirmAction("Remove the store " + store.name + "?",
    "Its geofence leaves the catalog: shoppers' devices drop it at their next sync and no longer notice arriving "
    + "there. Offers and beacons stay as they are. Setting a store with the id " + store.store_id
    + " later brings it back.", "Remove the store");
  if (!yes) { say("Nothing removed."); return; }
  try {
    await api("DELETE", "/v1/retailer/stores/" + encodeURIComponent(store.store_id));
    await loaders.stores();
    say("Removed store " + store.store_id + ".");
  } catch (error) {
    say("Not removed: " + error.message, true);
  }
}

// MARK: Till

/// verdict: accepted, valid, used or refused; the result panel says it large and in its colour.
function tillResult(verdict, headline, detail) {
  const result = $("till-result");
  result.className = "till-result " + verdict;
  result.dataset.verdict = verdict;
  $("till-verdict").textContent = headline;
  $("till-detail").textContent = detail;
  result.hidden = false;
}

function offerLine(answer) {
  return "\u201c" + answer.title + "\u201d (" + beaconText(answer.major, answer.minor) + "), redeemed "
    + dateText(answer.redeemed_at);
}

function usedLine(answer) {
  return "Used " + dateText(answer.accepted_at) + " at the till \u201c" + answer.accepted_till
    + "\u201d. Do not hand the offer over again. " + offerLine(answer);
}

async function till(operation) {
  const field = $("till-code");
  const code = field.value;
  if (!code.trim()) { field.focus(); return; }
  try {
    const answer = await api("POST", "/v1/till/" + operation, { code });
    if (operation === "accept") tillResult("accepted", "\u2714 Accepted", "Hand over: " + offerLine(answer));
    else if (answer.status === "accepted") tillResult("used", "\u2716 Already used", usedLine(answer));
    else tillResult("valid", "Valid, not used yet", offerLine(answer) + ". Accept it to hand the offer over.");
  } catch (error) {
    if (error.code === "code_already_accepted") {
      try {
        tillResult("used", "\u2716 Already used", usedLine(await api("POST", "/v1/till/check", { code })));
      } catch (again) { tillResult("used", "\u2716 Already used", error.message); }
    } else if (error.code === "code_unknown") {
      tillResult("refused", "\u2716 Unknown code", "No redemption of yours has this code: check it with the shopper.");
    } else if (error.status === 400 || error.status === 422) {
      tillResult("refused", "\u2716 Not a code", "The " + error.message + ".");
    } else {
      tillResult("refused", "\u2716 Not valid", error.message.charAt(0).toUpperCase() + error.message.slice(1) + ".");
    }
  }
  // One key leads on: after a valid check, Enter accepts; after anything else, the next code can be typed.
  if ($("till-result").dataset.verdict === "valid") $("till-accept").focus();
  else { field.focus(); field.select(); }
}

// MARK: Keys

loaders.keys = async function () {
  const current = latestCall("keys");
  const keys = (await api("GET", "/v1/retailer/till-keys")).till_keys;
  if (!current()) return;
  $("till-keys-table").tBodies[0].replaceChildren(...keys.map((key) => {
    const revoke = button("Revoke", "Revoke till key " + key.name, () => revokeTillKey(key), "danger");
    revoke.disabled = Boolean(key.revoked_at);
    return el("tr", {}, cell("Name", { class: "lead" }, el("strong", {}, key.name)),
      cell("Created", {}, dateText(key.created_at)),
      cell("Revoked", {}, key.revoked_at ? dateText(key.revoked_at) : "no"),
      cell("Actions", { class: "actions-cell" }, el("span", { class: "row-actions" }, revoke)));
  }));
};

async function revokeTillKey(key) {
  const yes = await confirmAction("Revoke the till key " + key.name + "?",
    "The till using it can no longer check or accept codes, from its next request on; codes it accepted stay "
    + "accepted and keep its name. A revoked key cannot be brought back: create a new one for that till.",
    "Revoke the key");
  if (!yes) { say("Nothing revoked."); return; }
  try {
    await api("DELETE", "/v1/retailer/till-keys/" + encodeURIComponent(key.id));
    await loaders.keys();
    say("Revoked the till key " + key.name + ".");
  } catch (error) { say(error.message, true); }
}

async function rotateKey() {
  const yes = await confirmAction("Rotate the API key?",
    "A new key replaces the current one and is shown only once. The CLI's saved key keeps working until the new "
    + "key is first used, or for 24 hours at most, so hand the new key to the CLI with loyalty retailer key set. "
    + "Consoles signed in elsewhere are signed out; sign in here again with the new key.", "Rotate the key");
  if (!yes) { say("The API key was not changed."); return; }
  try {
    const answer = await api("POST", "/v1/retailer/key");
    $("new-key-value").textContent = answer.api_key;
    $("new-key-command").textContent = "loyalty retailer key set";
    $("new-key").hidden = false;
    const until = answer.previous_key_expires_at ? ", until " + dateText(answer.previous_key_expires_at) + " at the latest" : "";
    say("The API key was rotated. The old key works until the new one is first used" + until + ": run loyalty "
      + "retailer key set on each machine whose CLI holds it, and sign in here again with the new key.");
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

// MARK: Import and export

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

// MARK: Start

function on(id, event, handler) { $(id).addEventListener(event, handler); }
function reporting(load) { return (event) => { if (event) event.preventDefault(); load().catch((error) => say(error.message, true)); }; }

document.addEventListener("DOMContentLoaded", async () => {
  on("sign-in-form", "submit", signIn);
  on("sign-out", "click", signOut);
  window.addEventListener("hashchange", showPage);
  for (const link of document.querySelectorAll("nav a")) link.addEventListener("click", () => say(""));
  on("offers-filter", "submit", (event) => event.preventDefault());
  for (const [id, event] of [["offers-search", "input"], ["offers-category", "change"], ["offers-state", "change"]]) {
    on(id, event, () => { state.offersPage = 0; renderOffers(); });
  }
  on("offers-previous", "click", () => { state.offersPage -= 1; renderOffers(); });
  on("offers-next", "click", () => { state.offersPage += 1; renderOffers(); });
  on("offer-new", "click", () => openOfferDrawer(null));
  on("offer-form", "submit", saveOffer);
  on("offer-form", "input", previewOffer);
  on("offer-cancel", "click", () => $("offer-drawer").close());
  on("beacons-form", "submit", reporting(() => loaders.beacons()));
  on("beacons-flagged", "change", () => { if (state.fleet) renderFleet(); });
  on("beacon-form", "submit", saveBeacon);
  on("beacon-cancel", "click", () => $("beacon-drawer").close());
  on("figures-form", "submit", (event) => event.preventDefault());
  on("figures-days", "change", reporting(() => loaders.figures()));
  on("figures-offer", "change", () => { if (state.figures) drawFigures(); });
  on("store-new", "click", () => openStoreDrawer(null));
  on("store-form", "submit", saveStore);
  on("store-cancel", "click", () => $("store-drawer").close());
  on("till-form", "submit", (event) => { event.preventDefault(); till("check"); });
  on("till-accept", "click", () => till("accept"));
  on("rotate-key", "click", rotateKey);
  on("till-key-form", "submit", createTillKey);
  on("import-form", "submit", importFile);
  on("export", "click", () => exportOffers().catch((error) => say(error.message, true)));
  const session = await api("GET", "/v1/console/session").catch(() => null);
  if (session) showApp(session);
  else showSignIn();
});
