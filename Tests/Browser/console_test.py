#!/usr/bin/env python3
"""The console in a real browser: Debian's chromium through chromedriver and Selenium, headless.

Run by Tests/EndToEndTests/ConsoleBrowserTests.swift against a real loyalty-server:
    console_test.py --server URL --operator-token TOKEN --screenshots DIR
First at a laptop's 1280x900: signs in, finds, pages, creates, edits and removes offers (asked first), names a
beacon, makes one secure and checks the fleet's figures against the API's, reads the figures, edits stores, accepts codes at the
till with the keyboard alone, revokes a till key and rotates the API key (asked first; the CLI's old key keeps
its grace), imports a CSV and signs out. Then at a phone's 390x844 (mobile emulation): every page again.
On every page: no element past the screen's edge, no browser log error, axe-core with no serious or critical
finding, and a full-page screenshot. Prints one line per step; exits 0 when every check held, 1 naming the
first that did not.
"""
import argparse
import base64
import contextlib
import json
import os
import sys
import tempfile
import time
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import Select, WebDriverWait
from axe_selenium_python import Axe

WAIT_SECONDS = 30  # the longest wait for an event; a full `make test` loads both cores
PAGES = ["offers", "beacons", "figures", "stores", "till", "keys", "import"]
# The colours a shopper sees an offer's category on (DESIGN.md: food blue, clothing red, others neutral).
CATEGORY_COLOURS = {"food": "rgba(11, 79, 138, 1)", "clothing": "rgba(164, 22, 26, 1)"}


class CheckFailed(Exception):
    pass


def check(condition, message):
    if not condition:
        raise CheckFailed(message)


def call(server, method, path, token=None, body=None, headers=None):
    """One API request; returns (status, parsed JSON or text)."""
    data = None
    all_headers = dict(headers or {})
    if body is not None:
        data = json.dumps(body).encode()
        all_headers["Content-Type"] = "application/json"
    if token:
        all_headers["Authorization"] = "Bearer " + token
    request = urllib.request.Request(server + path, data=data, method=method, headers=all_headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            text = response.read().decode()
            status = response.status
    except urllib.error.HTTPError as error:
        text = error.read().decode()
        status = error.code
    try:
        return status, json.loads(text)
    except ValueError:
        return status, text


def timestamp(seconds_ago=0):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - seconds_ago))


def seed(server, operator_token):
    """A retailer with two stores and 25 offers (two pages): food, clothing, uncategorised, one ended; a
    shopper who saw 1:1 and redeemed it three times (codes for the till), saw 1:2 ten days ago (a quiet
    beacon) and 5:5 before its offer was removed (a beacon heard without an offer); a beacon named 9:9."""
    status, retailer = call(server, "POST", "/v1/retailers", operator_token, {"name": "Matey's <b>&amp;</b>"})
    check(status == 201, f"registering the retailer answered {status}: {retailer}")
    key = retailer["api_key"]
    for store_id, name, lat, lon, radius in [("carnaby", "Carnaby Street", 51.5136, -0.1365, 80),
                                             ("oxford", "Oxford Circus", 51.5154, -0.1420, 150)]:
        status, _ = call(server, "PUT", f"/v1/retailer/stores/{store_id}", key,
                         {"name": name, "latitude": lat, "longitude": lon, "radius_m": radius})
        check(status in (200, 201), f"store {store_id}: {status}")
    offers = {}
    drafts = [(1, 1, {"title": "30% off sushi <script>alert(1)</script>", "category": "food", "per_shopper_limit": 3}),
              (1, 2, {"title": "Buy one get one free at Tucci's Pizza", "category": "food", "total_limit": 100}),
              (2, 1, {"title": "50% off all ladies' clothing", "category": "clothing"}),
              (5, 5, {"title": "Summer sale", "category": "clothing"}),
              (4, 1, {"title": "Last week's flowers", "ends_at": timestamp(86_400)})]
    drafts += [(3, minor, {"title": f"Aisle offer {minor}"}) for minor in range(1, 22)]
    for major, minor, draft in drafts:
        status, offer = call(server, "PUT", f"/v1/retailer/offers/{major}/{minor}", key, draft)
        check(status == 201, f"offer {major}:{minor}: {status} {offer}")
        offers[(major, minor)] = offer
    status, shopper = call(server, "POST", "/v1/accounts", body={"name": "browser test"})
    check(status == 201, f"account: {status}")
    device = shopper["device_token"]
    status, answer = call(server, "POST", "/v1/seen", device, {"items": [
        {"offer_id": offers[(1, 1)]["id"], "seen_at": timestamp()},
        {"offer_id": offers[(1, 2)]["id"], "seen_at": timestamp(10 * 86_400)},
        {"offer_id": offers[(5, 5)]["id"], "seen_at": timestamp(3600)}]})
    check(status == 200, f"seen: {status} {answer}")
    codes = []
    for _ in range(3):
        status, redemption = call(server, "POST", "/v1/redemptions", device, {"offer_id": offers[(1, 1)]["id"]})
        check(status == 201, f"redeem: {status} {redemption}")
        codes.append(redemption["code"])
    status, _ = call(server, "DELETE", "/v1/retailer/offers/5/5", key)
    check(status == 204, f"removing 5:5 answered {status}")
    status, _ = call(server, "PUT", "/v1/retailer/fleet/9/9", key, {"name": "Back door", "placement": "above the exit"})
    check(status == 201, f"naming 9:9 answered {status}")
    return key, codes


class Console:
    """One headless chromium: a laptop's window or a phone's screen (mobile emulation: headless chromium's
    windows are 500 px wide at least)."""

    def __init__(self, server, screenshots, size):
        self.server = server
        self.screenshots = screenshots
        self.size = size
        self.shots = []
        self.accessibility = []
        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--disable-extensions", "--window-size=1280,900"]:
            options.add_argument(argument)
        if size == "phone":
            options.add_experimental_option("mobileEmulation", {
                "deviceMetrics": {"width": 390, "height": 844, "pixelRatio": 2, "touch": True},
                "userAgent": "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
                             "Chrome/120.0 Mobile Safari/537.36"})
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        if size == "laptop":
            # The window's 900 px include what headless chromium keeps for its own frame: set the page's.
            self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                        {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False})
        self.driver.set_page_load_timeout(WAIT_SECONDS * 2)
        self.wait = WebDriverWait(self.driver, WAIT_SECONDS)

    def quit(self):
        self.driver.quit()

    def by_id(self, element_id):
        return self.driver.find_element(By.ID, element_id)

    def css(self, selector):
        return self.driver.find_element(By.CSS_SELECTOR, selector)

    def visible(self, element_id):
        return self.wait.until(expected_conditions.visibility_of_element_located((By.ID, element_id)))

    def until(self, condition, what):
        try:
            return self.wait.until(lambda driver: condition())
        except Exception:
            raise CheckFailed(f"{self.size}: never {what}")

    def status_contains(self, text, element_id="status"):
        try:
            self.wait.until(expected_conditions.text_to_be_present_in_element((By.ID, element_id), text))
        except Exception:
            raise CheckFailed(f"{self.size}: #{element_id} never said {text!r}; it says {self.by_id(element_id).text!r}")

    def type(self, element_id, text):
        field = self.by_id(element_id)
        field.clear()
        field.send_keys(text)

    def shot(self, name):
        """The whole page, not only what fits the screen; a dialog as the screen shows it."""
        path = os.path.join(self.screenshots, f"{self.size}-{len(self.shots) + 1:02d}-{name}.png")
        if self.driver.find_elements(By.CSS_SELECTOR, "dialog[open]"):
            # axe scrolls what it checks into view: show the dialog from its top.
            self.driver.execute_script("for (const d of document.querySelectorAll('dialog[open]')) d.scrollTop = 0")
            self.driver.save_screenshot(path)
            self.shots.append(path)
            return
        metrics = self.driver.execute_cdp_cmd("Page.getLayoutMetrics", {})
        content = metrics["cssContentSize"]
        image = self.driver.execute_cdp_cmd("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": content["width"], "height": min(content["height"], 4000), "scale": 1}})
        with open(path, "wb") as file:
            file.write(base64.b64decode(image["data"]))
        self.shots.append(path)

    def page(self, name):
        self.css(f'nav a[href="#{name}"]').click()
        self.visible(f"page-{name}")

    def log_errors(self, allowed=()):
        """Browser log errors since the last call, less those of requests the step made to fail on purpose."""
        entries = self.driver.get_log("browser")
        return [e["message"] for e in entries
                if e["level"] == "SEVERE" and not any(part in e["message"] for part in allowed)]

    def overflowing(self):
        """Visible elements that reach past the screen's left or right edge, and the page's own overflow."""
        return self.driver.execute_script("""
            const width = document.documentElement.clientWidth;
            const out = [];
            if (document.documentElement.scrollWidth > width + 1)
              out.push('the page scrolls sideways: ' + document.documentElement.scrollWidth + ' > ' + width);
            for (const node of document.querySelectorAll('body *')) {
              if (!node.getClientRects().length || node.closest('.visually-hidden, table.cards thead')) continue;
              if (node.closest('dialog') && !node.closest('dialog').open) continue;
              const rect = node.getBoundingClientRect();
              if (rect.width && (rect.right > width + 1 || rect.left < -1))
                out.push(node.tagName.toLowerCase() + (node.id ? '#' + node.id : '') + '.' + node.className
                  + ' [' + Math.round(rect.left) + ', ' + Math.round(rect.right) + ']');
            }
            return out.slice(0, 8);""")

    def audit(self, name, allowed_log=()):
        """The page as it is now: within the screen, no log errors, axe-core clean, then its screenshot."""
        outside = self.overflowing()
        check(not outside, f"{self.size} {name}: past the screen's edge: {outside}")
        errors = self.log_errors(allowed_log)
        check(not errors, f"{self.size} {name}: browser log errors: {errors}")
        axe = Axe(self.driver)
        axe.inject()
        results = axe.run()
        bad = [v for v in results["violations"] if v.get("impact") in ("serious", "critical")]
        self.accessibility.append((f"{self.size} {name}", len(results["violations"]), len(bad)))
        check(not bad, f"{self.size} axe on {name}: " + "; ".join(
            f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']][:3]}" for v in bad))
        self.shot(name)

    def sign_in(self, key):
        self.driver.get(self.server + "/console/")
        self.visible("sign-in-form")
        self.until(lambda: not self.by_id("sign-in").get_attribute("hidden"), "showed the sign-in form")
        self.audit("sign-in")
        self.type("api-key", key)
        self.by_id("sign-in-form").submit()
        self.visible("app")
        self.status_contains("Signed in")

    def rows(self, table_id):
        return self.driver.find_elements(By.CSS_SELECTOR, f"#{table_id} tbody tr")

    def confirm_dialog(self):
        return self.until(lambda: self.by_id("confirm").get_attribute("open") is not None and self.by_id("confirm"),
                          "asked first")

    def answer(self, yes):
        self.confirm_dialog()
        self.by_id("confirm-ok" if yes else "confirm-cancel").click()
        self.until(lambda: self.by_id("confirm").get_attribute("open") is None, "closed the question")


def offers_page(console, server, key):
    driver = console.driver
    console.until(lambda: len(console.rows("offers-table")) == 20, "listed the first 20 offers")
    check(console.by_id("who").text == "Signed in as Matey's <b>&amp;</b>", "the retailer's name was not shown as text")
    check("30% off sushi <script>" in console.by_id("offers-table").text, "the title was not shown as text")
    check(console.by_id("offers-page").text == "Page 1 of 2", f"paging says {console.by_id('offers-page').text!r}")
    console.audit("offers")
    console.by_id("offers-next").click()
    console.until(lambda: console.by_id("offers-page").text == "Page 2 of 2", "paged to page 2")
    check(len(console.rows("offers-table")) == 5, "page 2 does not hold the last 5 offers")
    check(console.by_id("offers-next").get_attribute("disabled") is not None, "Next page on the last page")

    # The figures beside each offer are the API's.
    status, stats = call(server, "GET", "/v1/retailer/stats", key)
    check(status == 200, f"stats: {status}")
    console.by_id("offers-previous").click()
    sushi = console.until(lambda: console.css('#offers-table tr[data-beacon="1:1"]'), "listed 1:1")
    cells = [td.text for td in sushi.find_elements(By.CSS_SELECTOR, "td.number")]
    entry = next(s for s in stats["offers"] if (s["major"], s["minor"]) == (1, 1))
    check(cells == [str(entry["seen_by"]), str(entry["redemptions"]), str(entry["accepted"]), "unlimited"],
          f"1:1's figures read {cells}, the API says {entry}")

    # Search, category and state.
    console.type("offers-search", "pizza")
    console.until(lambda: len(console.rows("offers-table")) == 1, "found the pizza offer alone")
    check("1 of 25 offers match" in console.by_id("offers-count").text, console.by_id("offers-count").text)
    console.type("offers-search", "3:7")
    console.until(lambda: console.by_id("offers-table").text.count("Aisle offer 7") == 1, "found 3:7 by its beacon")
    console.by_id("offers-search").clear()
    console.by_id("offers-search").send_keys(" ")
    Select(console.by_id("offers-category")).select_by_value("clothing")
    console.until(lambda: len(console.rows("offers-table")) == 1, "filtered to clothing")
    Select(console.by_id("offers-category")).select_by_value("")
    Select(console.by_id("offers-state")).select_by_value("ended")
    console.until(lambda: [r.get_attribute("data-beacon") for r in console.rows("offers-table")] == ["4:1"],
                  "filtered to the ended offer")
    Select(console.by_id("offers-state")).select_by_value("")
    console.until(lambda: len(console.rows("offers-table")) == 20, "showed every offer again")
    for kind in ("food", "clothing"):
        chip = console.css(f"#offers-table .chip.{kind}")
        colour = chip.value_of_css_property("background-color")
        check(colour == CATEGORY_COLOURS[kind], f"a {kind} chip is {colour}")

    # A new offer in its drawer: the preview takes the category's colour.
    console.by_id("offer-new").click()
    console.visible("offer-form")
    console.type("offer-major", "2")
    console.type("offer-minor", "2")
    console.type("offer-title", "Coats at half price")
    console.type("offer-category", "clothing")
    console.type("offer-total", "40")
    console.type("offer-schedule", "Europe/London: weekdays 17:00-19:00")
    colour = console.by_id("offer-preview").value_of_css_property("background-color")
    check(colour == CATEGORY_COLOURS["clothing"], f"the clothing preview is {colour}")
    console.audit("offer-drawer")
    console.by_id("offer-save").click()
    console.status_contains("Saved offer 2:2")
    check(console.by_id("offer-drawer").get_attribute("open") is None, "the drawer stayed open")
    console.type("offers-search", "coats")
    row = console.until(lambda: console.css('#offers-table tr[data-beacon="2:2"]'), "listed the new offer")
    row.find_element(By.CSS_SELECTOR, 'button[aria-label="Edit offer 2:2"]').click()
    console.visible("offer-form")
    check(console.by_id("offer-title").get_attribute("value") == "Coats at half price", "edit did not fill the drawer")
    console.type("offer-title", "Coats at 60% off")
    console.by_id("offer-save").click()
    console.until(lambda: "Coats at 60% off" in console.by_id("offers-table").text, "showed the edited title")
    check("40 in all" in console.by_id("offers-table").text, "the total limit was not kept")
    check("on Europe/London: weekdays 17:00-19:00" in console.by_id("offers-table").text, "the weekly hours are not listed")
    status, listed = call(server, "GET", "/v1/retailer/offers", key)
    check(any(o.get("schedule") == "Europe/London: weekdays 17:00-19:00" for o in listed["offers"]),
          "the weekly hours were not saved")

    # Remove asks first: Cancel keeps the offer, yes removes it.
    console.css('button[aria-label="Remove offer 2:2"]').click()
    question = console.confirm_dialog()
    check("cannot be undone" in question.text and "till" in question.text, f"the question says {question.text!r}")
    console.audit("remove-question")
    console.answer(False)
    console.status_contains("Nothing removed")
    status, listed = call(server, "GET", "/v1/retailer/offers", key)
    check(any((o["major"], o["minor"]) == (2, 2) for o in listed["offers"]), "Cancel removed the offer")
    console.css('button[aria-label="Remove offer 2:2"]').click()
    console.answer(True)
    console.status_contains("Removed offer 2:2")
    status, listed = call(server, "GET", "/v1/retailer/offers", key)
    check(not any((o["major"], o["minor"]) == (2, 2) for o in listed["offers"]), "the offer was not removed")
    console.by_id("offers-search").clear()
    return "offers: paged, searched, filtered; created, edited, removed after asking"


def beacons_page(console, server, key):
    console.page("beacons")
    console.until(lambda: len(console.rows("beacons-table")) > 0, "listed the fleet")
    status, fleet = call(server, "GET", "/v1/retailer/fleet?days=14&quiet_days=7", key)
    check(status == 200, f"fleet: {status}")
    shown = {r.get_attribute("data-beacon"): (int(r.get_attribute("data-sightings")), r.get_attribute("data-quiet"))
             for r in console.rows("beacons-table")}
    expected = {f"{b['major']}:{b['minor']}": (sum(d["sightings"] for d in b["sightings"]), str(b["quiet"]).lower())
                for b in fleet["beacons"]}
    check(shown == expected, f"the fleet page shows {shown}, the API says {expected}")
    check(expected["1:1"] == (1, "false"), f"the seeded sightings: {expected}")
    heard = console.css('#beacons-table tr[data-beacon="5:5"]').text
    check("No offer" in heard and "heard by shoppers" in heard, f"5:5 reads {heard!r}")
    # A quiet beacon (1:2, heard ten days ago, where the server takes the sighting's time as reported) says why.
    for beacon in (b for b in fleet["beacons"] if b["quiet"]):
        text = console.css(f'#beacons-table tr[data-beacon="{beacon["major"]}:{beacon["minor"]}"]').text
        check("Quiet" in text and beacon["note"] in text, f"a quiet beacon reads {text!r}, the API says {beacon}")
    check("Back door" in console.css('#beacons-table tr[data-beacon="9:9"]').text, "9:9's name is missing")
    summary = console.by_id("beacons-summary").text
    check(f"{len(fleet['beacons'])} beacons" in summary, f"the summary says {summary!r}")
    console.by_id("beacons-flagged").click()
    to_check = sorted(f"{b['major']}:{b['minor']}" for b in fleet["beacons"]
                      if b["quiet"] or ("offer_id" not in b and "last_heard_at" in b))
    console.until(lambda: sorted(r.get_attribute("data-beacon") for r in console.rows("beacons-table")) == to_check,
                  f"listed only the beacons to check, {to_check}")
    console.audit("beacons")
    console.by_id("beacons-flagged").click()
    console.until(lambda: len(console.rows("beacons-table")) == len(expected), "listed every beacon again")
    overtaken_answer(console)
    console.css('button[aria-label="Name beacon 1:1"]').click()
    console.visible("beacon-form")
    console.type("beacon-name", "Sushi counter")
    console.type("beacon-placement", "On the shelf above the till")
    console.by_id("beacon-save").click()
    console.status_contains("Saved beacon 1:1")
    console.until(lambda: "Sushi counter" in console.css('#beacons-table tr[data-beacon="1:1"]').text, "showed the name")
    status, fleet = call(server, "GET", "/v1/retailer/fleet", key)
    named = next(b for b in fleet["beacons"] if (b["major"], b["minor"]) == (1, 1))
    check(named.get("name") == "Sushi counter" and named.get("placement") == "On the shelf above the till", f"{named}")
    # 9:9 (no offer: the till's codes stay free of the presence gate) made secure: asked first, the document once.
    console.css('button[aria-label="Make secure beacon 9:9"]').click()
    console.answer(True)
    console.status_contains("Beacon 9:9 is secure")
    document = json.loads(console.by_id("beacon-secured-document").text)
    check(len(document["identity_key"]) == 32 and (document["major"], document["minor"]) == (9, 9), f"{document}")
    check(console.by_id("beacon-secured-download").get_attribute("download") == "beacon-9-9.json", "no download link")
    console.until(lambda: console.css('#beacons-table tr[data-beacon="9:9"]').get_attribute("data-secure") == "true",
                  "marked 9:9 secure")
    status, fleet = call(server, "GET", "/v1/retailer/fleet", key)
    check(next(b for b in fleet["beacons"] if (b["major"], b["minor"]) == (9, 9))["secure"], "the API has 9:9 plain")
    console.audit("beacon-secured")
    return f"fleet: {len(expected)} beacons as the API counts them; 1:1 named; 9:9 made secure, its key shown once"


def overtaken_answer(console):
    """A 30-day fleet answer held back until after the 7-day one: the page draws the 7 days chosen last."""
    console.driver.execute_script("""
        window.fetchNow = window.fetch;
        window.fetch = (url, options) => String(url).includes("days=30")
          ? new Promise((resolve) => setTimeout(resolve, 1500)).then(() => window.fetchNow(url, options))
          : window.fetchNow(url, options);""")
    for days in ("30", "7"):
        Select(console.by_id("beacons-days")).select_by_value(days)
        console.css("#beacons-form button[type=submit]").click()
    summary = lambda: console.by_id("beacons-summary").text
    console.until(lambda: "in the last 7 days" in summary(), "summed 7 days of sightings")
    time.sleep(2.5)
    check("in the last 7 days" in summary(), f"a 30-day answer that came late replaced the 7 days chosen after it: {summary()!r}")
    console.driver.execute_script("window.fetch = window.fetchNow;")
    Select(console.by_id("beacons-days")).select_by_value("14")
    console.css("#beacons-form button[type=submit]").click()
    console.until(lambda: "in the last 14 days" in summary(), "summed 14 days of sightings again")


def figures_page(console, server, key):
    console.page("figures")
    Select(console.by_id("figures-days")).select_by_value("7")
    chart = console.until(lambda: console.by_id("figures-chart").get_attribute("data-shown") is not None
                          and "7 days" in console.driver.find_element(By.ID, "figures-chart-title").get_attribute("textContent")
                          and console.by_id("figures-chart"), "drew the chart")
    status, figures = call(server, "GET", "/v1/retailer/figures?days=7", key)
    api = {name: sum(day[name] for day in figures["total"]) for name in ("shown", "redeemed", "accepted")}
    drawn = {name: int(chart.get_attribute("data-" + name)) for name in api}
    check(drawn == api, f"the chart says {drawn}, the API {api}")
    totals = {li.get_attribute("data-total"): int(li.get_attribute("data-value"))
              for li in console.driver.find_elements(By.CSS_SELECTOR, "#figures-totals li[data-total]")}
    check(totals == api, f"the totals say {totals}, the API {api}")
    labels = [t.text for t in console.driver.find_elements(By.CSS_SELECTOR, "#figures-chart text")]
    check(figures["total"][-1]["date"][5:] in labels and "0" in labels, f"the chart's axes read {labels}")
    table = console.by_id("figures-offers").text
    check("1:1" in table and "30% off sushi" in table, "the per-offer table lacks 1:1")
    console.audit("figures")
    return f"figures: {drawn}"


def stores_page(console, server, key):
    console.page("stores")
    console.until(lambda: len(console.driver.find_elements(By.CSS_SELECTOR, "#stores-map circle")) == 4, "drew 2 geofences")
    scale = console.css("#stores-map g[data-scale-metres]").get_attribute("data-scale-metres")
    check(float(scale) > 0, "no scale bar")
    console.css('button[aria-label="Edit store carnaby"]').click()
    console.visible("store-form")
    console.type("store-radius", "120")
    console.by_id("store-save").click()
    console.status_contains("Saved store carnaby")
    status, stores = call(server, "GET", "/v1/retailer/stores", key)
    check(next(s for s in stores["stores"] if s["store_id"] == "carnaby")["radius_m"] == 120, "the radius was not saved")
    console.by_id("store-new").click()
    console.visible("store-form")
    for field, value in [("store-id", "soho"), ("store-name", "Soho Square"), ("store-latitude", "51.5155"),
                         ("store-longitude", "-0.1321"), ("store-radius", "60")]:
        console.type(field, value)
    console.by_id("store-save").click()
    console.until(lambda: len(console.driver.find_elements(By.CSS_SELECTOR, "#stores-map circle")) == 6, "drew the new store")
    console.audit("stores")
    console.css('button[aria-label="Remove store soho"]').click()
    console.answer(True)
    console.status_contains("Removed store soho")
    status, stores = call(server, "GET", "/v1/retailer/stores", key)
    check(sorted(s["store_id"] for s in stores["stores"]) == ["carnaby", "oxford"], f"stores: {stores}")
    return "stores: edited, added, removed after asking; drawn to scale"


# The table each page fills once its data came.
FILLED_TABLES = {"beacons": "beacons-table", "figures": "figures-offers", "stores": "stores-table",
                 "keys": "till-keys-table"}
TILL_ERRORS = ("/v1/till/accept - Failed to load resource: the server responded with a status of 409",
               "/v1/till/check - Failed to load resource: the server responded with a status of 404",
               "/v1/till/check - Failed to load resource: the server responded with a status of 422")


def till_with_keyboard(console, code):
    """The cashier types the code and presses Enter (check), then Enter again (accept)."""
    console.page("till")
    field = console.by_id("till-code")
    field.clear()
    field.send_keys(code[:5].lower() + "-" + code[5:].lower() + Keys.ENTER)
    console.until(lambda: console.by_id("till-result").get_attribute("data-verdict") == "valid", "said valid")
    active = console.driver.switch_to.active_element
    check(active.get_attribute("id") == "till-accept", "after a valid check Enter does not accept")
    active.send_keys(Keys.ENTER)
    console.until(lambda: console.by_id("till-result").get_attribute("data-verdict") == "accepted", "accepted")
    check("Accepted" in console.by_id("till-verdict").text, console.by_id("till-verdict").text)
    check(console.driver.switch_to.active_element.get_attribute("id") == "till-code", "the field lost the focus")
    size = console.by_id("till-verdict").value_of_css_property("font-size")
    check(float(size.rstrip("px")) >= 28, f"the verdict is {size}")


def till_page(console, codes):
    till_with_keyboard(console, codes[0])
    console.type("till-code", "2" * len(codes[1]))
    console.by_id("till-check").click()
    console.until(lambda: "Unknown code" in console.by_id("till-verdict").text, "said unknown")
    console.type("till-code", "O" + codes[1][1:])
    console.by_id("till-check").click()
    console.until(lambda: "Not a code" in console.by_id("till-verdict").text, "said a mistyped code is none")
    check("position 1" in console.by_id("till-detail").text, console.by_id("till-detail").text)
    console.type("till-code", codes[0])
    console.by_id("till-accept").click()
    console.until(lambda: console.by_id("till-result").get_attribute("data-verdict") == "used", "said already used")
    detail = console.by_id("till-detail").text
    check("console" in detail and "UTC" in detail, f"the second accept said {detail!r}")
    console.audit("till", TILL_ERRORS)
    return "till: accepted with the keyboard alone; used (when, where) and unknown said large"


def keys_page(console, server, key):
    console.page("keys")
    console.type("till-key-name", "Front till")
    console.css("#till-key-form button").click()
    console.status_contains("lt_", "new-till-key")
    console.until(lambda: "Front till" in console.by_id("till-keys-table").text, "listed the till key")
    till_key = console.by_id("new-till-key").text.split(": ")[-1]
    console.css('button[aria-label="Revoke till key Front till"]').click()
    question = console.confirm_dialog()
    check("can no longer" in question.text, f"the question says {question.text!r}")
    console.answer(True)
    console.status_contains("Revoked the till key Front till")
    status, _ = call(server, "POST", "/v1/till/check", till_key, {"code": "ABCDEFGH"})
    check(status == 401, f"the revoked till key answered {status}")

    console.by_id("rotate-key").click()
    question = console.confirm_dialog()
    check("24 hours" in question.text and "loyalty retailer key set" in question.text, f"{question.text!r}")
    console.answer(False)
    console.status_contains("not changed")
    check(call(server, "GET", "/v1/retailer", key)[0] == 200, "Cancel rotated the key")
    console.by_id("rotate-key").click()
    console.answer(True)
    console.status_contains("The API key was rotated")
    new_key = console.by_id("new-key-value").text
    check(new_key.startswith("lk_") and new_key != key, f"the new key reads {new_key!r}")
    check(console.by_id("new-key-command").text == "loyalty retailer key set", "no command for the CLI")
    # The CLI's saved (old) key keeps its grace period until the new key is first used.
    status, _ = call(server, "GET", "/v1/retailer", key)
    check(status == 200, f"the old key answered {status} right after a rotation from the console")
    console.audit("keys")
    # A console session lives no longer than the key it came from: sign in again with the new one.
    console.by_id("sign-out").click()
    console.visible("sign-in-form")
    console.type("api-key", new_key)
    console.by_id("sign-in-form").submit()
    console.status_contains("Signed in")
    check(call(server, "GET", "/v1/retailer", new_key)[0] == 200, "the new key does not work")
    return "keys: till key revoked and API key rotated after asking; the old key kept its grace", new_key


def import_page(console, server, key):
    console.page("import")
    with tempfile.NamedTemporaryFile("wb", suffix=".csv", delete=False) as good:
        good.write("\ufeffmajor,minor,title,category\r\n6,1,Imported one,food\r\n6,2,\"Imported, two\",food\r\n".encode())
    console.by_id("import-file").send_keys(good.name)
    console.by_id("import-form").submit()
    console.status_contains("Imported: 2 created")
    with tempfile.NamedTemporaryFile("wb", suffix=".csv", delete=False) as bad:
        bad.write(b"major,minor,title\n7,1,Fine\n7,2,\n")
    console.by_id("import-file").send_keys(bad.name)
    console.by_id("import-form").submit()
    console.until(lambda: "Line 3 (title)" in console.by_id("import-problems").text, "named line 3")
    status, offers = call(server, "GET", "/v1/retailer/offers", key)
    check(not any(o["major"] == 7 for o in offers["offers"]), "the bad file imported something")
    console.by_id("export").click()
    console.status_contains("Exported 27 offers")
    console.audit("import", ("/v1/retailer/offers/import - Failed to load resource: the server responded with a status of 422",))
    return "import: CSV imported; the bad file imported nothing and named line 3"


def sign_out(console, server):
    driver = console.driver
    cookie = next(c for c in driver.get_cookies() if c["name"] == "loyalty_console")
    check(cookie["httpOnly"] and cookie.get("sameSite") == "Strict", f"the cookie is {cookie}")
    console.by_id("sign-out").click()
    console.visible("sign-in-form")
    console.status_contains("Signed out")
    status, _ = call(server, "GET", "/v1/retailer", headers={"Cookie": "loyalty_console=" + cookie["value"]})
    check(status == 401, f"the cookie replayed after sign-out answered {status}")
    in_page = driver.execute_async_script(
        "const done = arguments[0]; fetch('/v1/console/session').then(r => done(r.status))")
    check(in_page == 204, f"the page's session probe answered {in_page} after sign-out")
    driver.refresh()
    console.visible("sign-in-form")
    check(not console.log_errors(), "signing out logged errors")
    return "signed out; the session is gone"


@contextlib.contextmanager
def browser(arguments, size):
    """A Console that, when a check fails, leaves a screenshot of the failure; its figures printed at the end."""
    console = Console(arguments.server, arguments.screenshots, size)
    try:
        yield console
    except CheckFailed:
        console.shot("failure")
        raise
    finally:
        console.quit()
        for name, violations, serious in console.accessibility:
            print(f"axe {name}: {violations} violations, {serious} serious or critical")
        for path in console.shots:
            print("screenshot: " + path)


def laptop(arguments, key, codes, steps):
    with browser(arguments, "laptop") as console:
        console.sign_in(key)
        check(key not in console.driver.current_url and key not in console.driver.page_source, "the key is in the page")
        stored = console.driver.execute_script(
            "return JSON.stringify([Object.assign({}, localStorage), Object.assign({}, sessionStorage)])")
        check(stored == "[{},{}]", f"web storage holds {stored}")
        steps.append(offers_page(console, arguments.server, key))
        steps.append(beacons_page(console, arguments.server, key))
        steps.append(figures_page(console, arguments.server, key))
        steps.append(stores_page(console, arguments.server, key))
        steps.append(till_page(console, codes))
        step, new_key = keys_page(console, arguments.server, key)
        steps.append(step)
        steps.append(import_page(console, arguments.server, new_key))
        steps.append(sign_out(console, arguments.server))
        return new_key


def phone(arguments, key, code, steps):
    """Every page at 390x844: cards, no sideways overflow, the till usable with one thumb."""
    with browser(arguments, "phone") as console:
        console.sign_in(key)
        console.until(lambda: len(console.rows("offers-table")) == 20, "listed offers")
        card = console.css('#offers-table tr[data-beacon="1:1"]')
        check(card.value_of_css_property("display") == "block", "offers are still a table row on a phone")
        console.audit("offers")
        console.css('button[aria-label="Edit offer 1:1"]').click()
        console.visible("offer-form")
        console.audit("offer-drawer")
        console.by_id("offer-cancel").click()
        console.css('button[aria-label="Remove offer 1:1"]').click()
        console.confirm_dialog()
        console.audit("remove-question")
        console.answer(False)
        for name in PAGES[1:]:
            console.page(name)
            if name == "till":
                till_with_keyboard(console, code)
                width = console.by_id("till-accept").size["width"]
                check(width >= 150, f"the Accept button is {width} px wide on a phone")
            elif name in FILLED_TABLES:
                console.until(lambda: len(console.rows(FILLED_TABLES[name])) > 0, f"filled {name}")
            console.audit(name)
        steps.append("phone: every page as cards within 390 px; the till accepted with the keyboard alone")


def run(arguments):
    os.makedirs(arguments.screenshots, exist_ok=True)
    key, codes = seed(arguments.server, arguments.operator_token)
    steps = []
    try:
        new_key = laptop(arguments, key, codes, steps)
        phone(arguments, new_key, codes[2], steps)
    except CheckFailed as failure:
        print("FAILED: " + str(failure))
        return 1
    finally:
        for step in steps:
            print("ok: " + step)
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--operator-token", required=True)
    parser.add_argument("--screenshots", required=True)
    sys.exit(run(parser.parse_args()))
