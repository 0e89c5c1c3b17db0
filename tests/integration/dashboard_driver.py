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
        rows = driver.find_elements(By.CSS_SELECTOR, "tr.shard-row")
        seen["shards"] = {r.get_attribute("data-shard"): r.find_elements(By.TAG_NAME, "td")[2].text
                          for r in rows}
        seen["progress_bars"] = len(driver.find_elements(By.CSS_SELECTOR, "tr.shard-row .progress"))
        bars = driver.find_elements(By.CSS_SELECTOR, "svg#timeline rect.action-bar")
        seen["timeline_bars"] = len(bars)
        seen["timeline_shards"] = sorted({b.get_attribute("data-shard") for b in bars})
        seen["timeline_lanes"] = len(driver.find_elements(By.CSS_SELECTOR, "svg#timeline > text")) - 6
        seen["failures"] = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#failures pre.error")]
        seen["title"] = driver.find_element(By.ID, "build-title").text
        seen["problem"] = driver.find_element(By.ID, "problem").text
        seen["facts"] = driver.find_element(By.CSS_SELECTOR, "dl.kv").text
        seen["page_text"] = driver.find_element(By.TAG_NAME, "main").text
        driver.save_screenshot(screenshot)
        seen["console_errors"] = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    finally:
        driver.quit()
    json.dump(seen, sys.stdout)


if __name__ == "__main__":
    main()
