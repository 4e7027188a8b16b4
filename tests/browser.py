"""Headless Chromium for the tests and tools that open the HTML report in a real browser.

Debian's `chromium` and `chromium-driver` packages (`apt-get install chromium chromium-driver`,
which `.ci/run` does) driven through Selenium (the `test` extra). `browser_missing()` says what
is absent, so a test can skip with the reason; `headless_chromium()` yields a driver that keeps
the page's console messages (`console_errors`).
"""
from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

BROWSERS = ("chromium", "chromium-browser")
DRIVER = "chromedriver"


def browser_missing() -> str | None:
    """Why no headless Chromium can be started here, or None."""
    try:
        import selenium  # noqa: F401  (the `test` extra)
    except ImportError:
        return "selenium is not installed (pip install 'sage-pddl[test]')"
    if not any(shutil.which(name) for name in BROWSERS):
        return "no chromium on PATH (apt-get install chromium chromium-driver)"
    if not shutil.which(DRIVER):
        return "no chromedriver on PATH (apt-get install chromium-driver)"
    return None


@contextmanager
def headless_chromium(width: int = 1400, height: int = 1000) -> Iterator[Any]:
    """A Selenium driver of a headless Chromium (closed afterwards)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    binary = next(shutil.which(name) for name in BROWSERS if shutil.which(name))
    options.binary_location = str(binary)
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu",
                     "--disable-dev-shm-usage", f"--window-size={width},{height}",
                     "--hide-scrollbars", "--force-device-scale-factor=1"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(shutil.which(DRIVER)))
    try:
        yield driver
    finally:
        driver.quit()


def console_errors(driver: Any) -> list[str]:
    """The page's console errors and uncaught exceptions since the last call."""
    return [entry["message"] for entry in driver.get_log("browser")
            if entry.get("level") == "SEVERE"]
