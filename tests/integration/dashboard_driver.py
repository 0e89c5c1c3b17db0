"""Drives the coordinator's dashboard in headless Chromium (selenium + chromedriver).

usage: dashboard_driver.py BASE_URL BUILD_ID SCREENSHOT_PNG
       dashboard_driver.py --sign-in BASE_URL BUILD_ID TOKEN

Opens the fleet page, then the build's page; waits until the build shows shards and the
timeline has bars; saves a screenshot of the build page; prints what it saw as JSON.
Exits 1 (with the reason on stderr) when the page never shows the build.

With --sign-in (a coordinator that needs the token): signs in through the page's form
(a wrong token first), opens the build's page in the same tab, then opens /#token=TOKEN
in a fresh browser; prints what it saw, including every URL the pages requested.
"""
import json
import sys
import time

from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


SNAPSHOT = """
const q = s => [...document.querySelectorAll(s)];
const bars = q('svg#timeline rect.action-bar');
const shards = {};
for (const r of q('tr.shard-row')) shards[r.dataset.shard] = r.querySelectorAll('td')[2].textContent;
return {
  shards,
  progress_bars: q('tr.shard-row .progress').length,
  timeline_bars: bars.length,
  timeline_shards: [...new Set(bars.map(b => b.dataset.shard))].sort(),
  timeline_lanes: q('svg#timeline > text').length - 6,
  failures: q('#failures pre.error').map(e => e.textContent),
  title: (document.getElementById('build-title') || {}).textContent || '',
  problem: document.getElementById('problem').hidden ? '' : document.getElementById('problem').textContent,
  facts: (document.querySelector('dl.kv') || {}).innerText || '',
  host_compiles_examples: (document.getElementById('host-compiles') || {}).title || '',
  page_text: document.getElementById('main').innerText,
  log: (document.getElementById('build-log') || {}).textContent || '',
};
"""

# Every URL the page asked for, and where the address bar is now.
REQUESTS = """
return {urls: performance.getEntriesByType('resource').map(e => e.name).concat([location.href]),
        href: location.href};
"""


def wait_for(predicate, timeout, what):
    deadline = time.time() + timeout
    last_error = None
    while time.time() < deadline:
        try:
            value = predicate()
            if value:
                return value
        except WebDriverException as e:  # the page is between refreshes
            last_error = e
        time.sleep(0.2)
    raise SystemExit(f"dashboard: timed out waiting for {what} ({last_error})")


def start_browser():
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,1100"):
        options.add_argument(arg)
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


def sign_in(base, build_id, token):
    seen = {}
    driver = start_browser()
    try:
        driver.get(base + "/")
        form = wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, "#token-form"), 15,
                        "the sign-in form")
        seen["asked"] = form[0].text
        driver.find_element(By.CSS_SELECTOR, "#token-input").send_keys("not-the-token")
        driver.find_element(By.CSS_SELECTOR, "#token-form button").click()
        wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, "#token-form"), 15,
                 "the form again after a wrong token")
        driver.find_element(By.CSS_SELECTOR, "#token-input").send_keys(token)
        driver.find_element(By.CSS_SELECTOR, "#token-form button").click()
        wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, f'#builds-table tr[data-build="{build_id}"]'),
                 15, "the build in the builds list after signing in")
        # A link on the page keeps the session: the build page loads without asking again.
        driver.find_element(By.CSS_SELECTOR, f'#builds-table tr[data-build="{build_id}"] a').click()
        wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, "tr.shard-row"), 15,
                 "the build page after following its link")
        seen["signed_in"] = driver.execute_script(REQUESTS)
    finally:
        driver.quit()

    driver = start_browser()
    try:
        driver.get(f"{base}/builds/{build_id}#token={token}")
        wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, "tr.shard-row"), 15,
                 "the build page opened with #token=")
        seen["fragment"] = driver.execute_script(REQUESTS)
        seen["fragment_problem"] = driver.execute_script(
            "return document.getElementById('problem').hidden ? '' : "
            "document.getElementById('problem').textContent;")
        seen["console_errors"] = [e["message"] for e in driver.get_log("browser")
                                  if e["level"] == "SEVERE" and "401" not in e["message"]]
    finally:
        driver.quit()
    json.dump(seen, sys.stdout)


def main():
    if sys.argv[1] == "--sign-in":
        sign_in(sys.argv[2], sys.argv[3], sys.argv[4])
        return
    base, build_id, screenshot = sys.argv[1], sys.argv[2], sys.argv[3]
    driver = start_browser()
    seen = {}
    try:
        driver.get(base + "/")
        wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, f'#builds-table tr[data-build="{build_id}"]'),
                 15, "the build in the builds list")
        seen["home_workers"] = len(driver.find_elements(By.CSS_SELECTOR, "#workers-table tbody tr"))

        driver.get(f"{base}/builds/{build_id}")
        wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, "tr.shard-row"), 15, "shard rows")
        wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, "svg#timeline rect.action-bar"), 15,
                 "bars in the timeline")
        # Let a build in progress move on a little, so the picture shows running and done work.
        time.sleep(1.5)
        # One snapshot taken inside the page: it redraws every 2 s, which would leave element
        # handles taken one by one stale.
        seen.update(driver.execute_script(SNAPSHOT))
        driver.save_screenshot(screenshot)
        seen["console_errors"] = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    finally:
        driver.quit()
    json.dump(seen, sys.stdout)


if __name__ == "__main__":
    main()
