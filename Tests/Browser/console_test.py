#!/usr/bin/env python3
"""The console in a real browser: Debian's chromium through chromedriver and Selenium, headless.

Run by Tests/EndToEndTests/ConsoleBrowserTests.swift against a real loyalty-server:
    console_test.py --server URL --operator-token TOKEN --screenshots DIR
Signs in, creates, edits and removes an offer, imports a CSV, reads a chart, accepts a code at the till page,
signs out and checks the session is gone; saves a screenshot of each step and runs axe-core on each page.
Prints one line per step; exits 0 when every check held, 1 naming the first that did not.
"""
import argparse
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
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait
from axe_selenium_python import Axe

WAIT_SECONDS = 10


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


def seed(server, operator_token):
    """A retailer with a store, an offer a shopper saw and redeemed: its code is for the till page."""
    status, retailer = call(server, "POST", "/v1/retailers", operator_token, {"name": "Matey's <b>&amp;</b>"})
    check(status == 201, f"registering the retailer answered {status}: {retailer}")
    key = retailer["api_key"]
    for store_id, lat, lon, radius in [("carnaby", 51.5136, -0.1365, 80), ("oxford", 51.5154, -0.1420, 150)]:
        status, _ = call(server, "PUT", f"/v1/retailer/stores/{store_id}", key,
                         {"name": f"Store {store_id}", "latitude": lat, "longitude": lon, "radius_m": radius})
        check(status in (200, 201), f"store {store_id}: {status}")
    status, offer = call(server, "PUT", "/v1/retailer/offers/1/1", key,
                         {"title": "30% off sushi <script>alert(1)</script>", "per_shopper_limit": 3})
    check(status == 201, f"offer: {status} {offer}")
    status, shopper = call(server, "POST", "/v1/accounts", body={"name": "browser test"})
    check(status == 201, f"account: {status}")
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    status, _ = call(server, "POST", "/v1/seen", shopper["device_token"],
                     {"items": [{"offer_id": offer["id"], "seen_at": now}]})
    check(status == 200, f"seen: {status}")
    codes = []
    for _ in range(2):
        status, redemption = call(server, "POST", "/v1/redemptions", shopper["device_token"], {"offer_id": offer["id"]})
        check(status == 201, f"redeem: {status} {redemption}")
        codes.append(redemption["code"])
    return key, codes


class Console:
    def __init__(self, server, screenshots):
        self.server = server
        self.screenshots = screenshots
        self.shots = []
        self.accessibility = []
        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--window-size=1280,1000", "--disable-extensions"]:
            options.add_argument(argument)
        self.driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        self.driver.set_page_load_timeout(WAIT_SECONDS * 2)
        self.wait = WebDriverWait(self.driver, WAIT_SECONDS)

    def quit(self):
        self.driver.quit()

    def by_id(self, element_id):
        return self.driver.find_element(By.ID, element_id)

    def visible(self, element_id):
        return self.wait.until(expected_conditions.visibility_of_element_located((By.ID, element_id)))

    def status_contains(self, text, element_id="status"):
        try:
            self.wait.until(expected_conditions.text_to_be_present_in_element((By.ID, element_id), text))
        except Exception:
            raise CheckFailed(f"#{element_id} never said {text!r}; it says {self.by_id(element_id).text!r}")

    def type(self, element_id, text):
        field = self.by_id(element_id)
        field.clear()
        field.send_keys(text)

    def shot(self, name):
        self.driver.execute_script("window.scrollTo(0, 0)")
        path = os.path.join(self.screenshots, f"{len(self.shots) + 1:02d}-{name}.png")
        self.driver.save_screenshot(path)
        self.shots.append(path)

    def page(self, name):
        self.driver.find_element(By.CSS_SELECTOR, f'nav a[href="#{name}"]').click()
        self.visible(f"page-{name}")

    def audit(self, name):
        """axe-core on the page as it is now; serious and critical violations fail the run."""
        axe = Axe(self.driver)
        axe.inject()
        results = axe.run()
        bad = [v for v in results["violations"] if v.get("impact") in ("serious", "critical")]
        self.accessibility.append((name, len(results["violations"]), len(bad)))
        check(not bad, f"axe on {name}: " + "; ".join(
            f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']][:3]}" for v in bad))

    def table_text(self, element_id):
        return self.by_id(element_id).text


def run(arguments):
    os.makedirs(arguments.screenshots, exist_ok=True)
    key, codes = seed(arguments.server, arguments.operator_token)
    console = Console(arguments.server, arguments.screenshots)
    steps = []
    try:
        driver = console.driver
        driver.get(arguments.server + "/console/")
        console.visible("sign-in-form")
        console.audit("sign-in")
        console.shot("sign-in")
        console.type("api-key", key)
        console.by_id("sign-in-form").submit()
        console.visible("app")
        console.status_contains("Signed in")
        check(key not in driver.current_url, "the API key is in the URL")
        stored = driver.execute_script(
            "return JSON.stringify([Object.assign({}, localStorage), Object.assign({}, sessionStorage)])")
        check(key not in stored and stored == "[{},{}]", f"web storage holds {stored}")
        check(key not in driver.page_source, "the API key is still in the page")
        check(console.by_id("who").text == "Signed in as Matey's <b>&amp;</b>", "the retailer's name was not shown as text")
        console.wait.until(lambda d: "30% off sushi <script>" in console.table_text("offers-table"))
        console.audit("offers")
        console.shot("offers")
        steps.append("signed in; retailer text shown escaped")

        # Create, edit and remove an offer.
        console.type("offer-major", "2")
        console.type("offer-minor", "1")
        console.type("offer-title", "50% off ladies' clothing")
        console.type("offer-category", "clothing")
        console.type("offer-total", "40")
        console.by_id("offer-save").click()
        console.status_contains("Saved offer 2.1")
        console.wait.until(lambda d: "50% off ladies' clothing" in console.table_text("offers-table"))
        console.shot("offer-created")
        driver.find_element(By.CSS_SELECTOR, 'button[aria-label="Edit offer 2.1"]').click()
        check(console.by_id("offer-title").get_attribute("value") == "50% off ladies' clothing", "edit did not fill the form")
        console.type("offer-title", "60% off ladies' clothing")
        console.by_id("offer-save").click()
        console.wait.until(lambda d: "60% off ladies' clothing" in console.table_text("offers-table"))
        check("40 in all" in console.table_text("offers-table"), "the total limit was not kept")
        console.shot("offer-edited")
        driver.find_element(By.CSS_SELECTOR, 'button[aria-label="Remove offer 2.1"]').click()
        console.status_contains("Removed offer 2.1")
        console.wait.until(lambda d: "ladies' clothing" not in console.table_text("offers-table"))
        status, offers = call(arguments.server, "GET", "/v1/retailer/offers", key)
        check([o["major"] for o in offers["offers"]] == [1], f"after removal the API lists {offers}")
        steps.append("offer created, edited and removed")

        # Import a CSV (BOM, CRLF), then one with a bad row, which imports nothing.
        console.page("import")
        with tempfile.NamedTemporaryFile("wb", suffix=".csv", delete=False) as good:
            good.write("\ufeffmajor,minor,title,category\r\n3,1,Imported one,food\r\n3,2,\"Imported, two\",food\r\n".encode())
        console.by_id("import-file").send_keys(good.name)
        console.by_id("import-form").submit()
        console.status_contains("Imported: 2 created")
        with tempfile.NamedTemporaryFile("wb", suffix=".csv", delete=False) as bad:
            bad.write(b"major,minor,title\n4,1,Fine\n4,2,\n")
        console.by_id("import-file").send_keys(bad.name)
        console.by_id("import-form").submit()
        console.wait.until(lambda d: "Line 3 (title)" in console.by_id("import-problems").text)
        console.audit("import")
        console.shot("import")
        status, offers = call(arguments.server, "GET", "/v1/retailer/offers", key)
        check(sorted((o["major"], o["minor"]) for o in offers["offers"]) == [(1, 1), (3, 1), (3, 2)],
              f"after the imports the API lists {offers}")
        console.by_id("export").click()
        console.status_contains("Exported 3 offers")
        steps.append("CSV imported; the bad file imported nothing and named line 3")

        # Stores and their geofences.
        console.page("stores")
        console.wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#stores-map circle")) == 2)
        console.audit("stores")
        console.shot("stores")

        # Accept a code at the till page (typed in lower case with a dash), then again.
        console.page("till")
        typed = codes[0][:5].lower() + "-" + codes[0][5:].lower()
        console.type("till-code", typed)
        console.by_id("till-accept").click()
        console.status_contains("Accepted", "till-result")
        console.by_id("till-accept").click()
        console.status_contains("was used at", "till-result")
        check("console" in console.by_id("till-result").text, "the second accept did not say where")
        console.type("till-code", "O" + codes[1][1:])
        console.by_id("till-check").click()
        console.status_contains("no code holds", "till-result")
        console.audit("till")
        console.shot("till")
        steps.append("code accepted once at the till page; the second accept said when and where")

        # Read the chart: the figures of the last 7 days, all offers.
        console.page("figures")
        console.wait.until(lambda d: console.by_id("figures-chart").get_attribute("data-shown") is not None)
        chart = console.by_id("figures-chart")
        figures = {name: int(chart.get_attribute("data-" + name)) for name in ("shown", "redeemed", "accepted")}
        check(figures == {"shown": 1, "redeemed": 2, "accepted": 1}, f"the chart says {figures}")
        title = driver.find_element(By.ID, "figures-chart-title").get_attribute("textContent")
        check("1 shown, 2 redeemed, 1 accepted" in title, f"the chart's title says {title!r}")
        check(len(driver.find_elements(By.CSS_SELECTOR, "#figures-chart rect")) == 90, "not 3 bars a day for 30 days")
        console.audit("figures")
        console.shot("figures")
        steps.append(f"chart read: {figures}")

        console.page("beacons")
        console.wait.until(lambda d: "Imported one" in console.table_text("beacons-table"))
        console.audit("beacons")
        console.shot("beacons")

        console.page("keys")
        console.type("till-key-name", "Front till")
        driver.find_element(By.CSS_SELECTOR, "#till-key-form button").click()
        console.status_contains("lt_", "new-till-key")
        console.wait.until(lambda d: "Front till" in console.table_text("till-keys-table"))
        console.audit("keys")
        console.shot("keys")
        steps.append("till key created")

        # Sign out: the cookie, replayed, is refused.
        cookie = next(c for c in driver.get_cookies() if c["name"] == "loyalty_console")
        check(cookie["httpOnly"] and cookie.get("sameSite") == "Strict", f"the cookie is {cookie}")
        console.by_id("sign-out").click()
        console.visible("sign-in-form")
        console.status_contains("Signed out")
        console.shot("signed-out")
        replay = {"Cookie": "loyalty_console=" + cookie["value"]}
        status, _ = call(arguments.server, "GET", "/v1/retailer", headers=replay)
        check(status == 401, f"the cookie replayed after sign-out answered {status}")
        in_page = driver.execute_async_script(
            "const done = arguments[0]; fetch('/v1/console/session').then(r => done(r.status))")
        check(in_page == 401, f"the page's session answered {in_page} after sign-out")
        driver.refresh()
        console.visible("sign-in-form")
        steps.append("signed out; the session is gone")
    except CheckFailed as failure:
        console.shot("failure")
        print("FAILED: " + str(failure))
        return 1
    finally:
        for step in steps:
            print("ok: " + step)
        for name, violations, serious in console.accessibility:
            print(f"axe {name}: {violations} violations, {serious} serious or critical")
        for path in console.shots:
            print("screenshot: " + path)
        console.quit()
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--operator-token", required=True)
    parser.add_argument("--screenshots", required=True)
    sys.exit(run(parser.parse_args()))
