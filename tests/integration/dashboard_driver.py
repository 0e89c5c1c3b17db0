"""Drives the coordinator's dashboard in headless Chromium (selenium + chromedriver).

usage: dashboard_driver.py BASE_URL BUILD_ID SCREENSHOT_PNG

Opens the fleet page, then the build's page; waits until the build shows shards and the
timeline has bars; saves a screenshot of the build page; prints what it saw as JSON.
Exits 1 (with the reason on stderr) when the page never shows the build.
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
  page_text: document.getElementById('main').innerText,
};
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


def main():
    base, build_id, screenshot = sys.argv[1], sys.argv[2], sys.argv[3]
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,1100"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
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
