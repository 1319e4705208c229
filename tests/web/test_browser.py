"""A participant votes a whole small study in a real browser: Debian's headless Chromium,
driven by Selenium through Debian's ``/usr/bin/chromedriver`` (``.ci/run`` installs both;
nothing downloads a browser or a driver). With ``FMINSPECT_SCREENSHOTS=DIR`` the pages are
also saved there (the README's pictures come from this test)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from fminspect.ranking.store import StudyStore
from tests.processes import PATIENCE_S
from tests.web.studies import Server, demo_study, links, make_study

CHROMEDRIVER = Path("/usr/bin/chromedriver")
CHROMIUM = Path("/usr/bin/chromium")

pytestmark = [
    pytest.mark.skipif(
        not (CHROMEDRIVER.exists() and CHROMIUM.exists()),
        reason="Debian's chromium and chromium-driver are not installed",
    ),
    pytest.mark.slow,
]


@pytest.fixture
def browser() -> Iterator[object]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--window-size=1280,860",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(PATIENCE_S)
    driver.set_script_timeout(PATIENCE_S)
    try:
        yield driver
    finally:
        driver.quit()


def _shots() -> Path | None:
    folder = os.environ.get("FMINSPECT_SCREENSHOTS")
    return Path(folder) if folder else None


def test_a_participant_votes_a_whole_study_with_the_keyboard(tmp_path: Path, browser) -> None:  # type: ignore[no-untyped-def]
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    study = make_study(tmp_path, images=3, allow_ties=True, repeats=1, checks=1)
    if _shots():  # photographs a reader recognises
        study = demo_study(tmp_path, ("chelsea", "coffee"), ("RC", "GrabCut", "FT"))
    token = links(study, "ana")["ana"]
    server = Server(study)
    wait = WebDriverWait(browser, PATIENCE_S)

    def body(key: str) -> str | None:
        return browser.execute_script(f"return document.body.dataset.{key} || null")

    def press(key: str) -> None:
        ActionChains(browser).send_keys(key).perform()

    def page() -> str:
        return browser.execute_script(
            "return [...document.querySelectorAll('.page')].find(p => !p.hidden).id"
        )

    try:
        server.wait_ready()
        browser.get(f"{server.url}/s/{token}")
        wait.until(lambda d: page() == "start")
        assert "Space or 0: cannot decide" in browser.find_element(By.ID, "keys").text
        press(Keys.ENTER)
        keys = {"left": Keys.ARROW_LEFT, "right": Keys.ARROW_RIGHT, "tie": " "}
        pressed: dict[int, str] = {}
        undone = paused = False
        while True:
            wait.until(
                lambda d: (
                    page() in ("vote", "finished") and (page() == "finished" or body("answerable"))
                )
            )
            if page() == "finished":
                break
            index = int(body("answerable") or -1)
            if index == 1 and not paused:  # a pause keeps the pair and its time
                press("p")
                wait.until(lambda d: page() == "pause")
                press(" ")
                wait.until(lambda d, i=index: body("answerable") == str(i))
                paused = True
            if index == 2 and _shots():
                browser.save_screenshot(str(_shots() / "web_vote.png"))
            choice = ("left", "right", "tie")[len(pressed) % 3]
            press(keys[choice])
            pressed[index] = choice
            if index == 3 and not undone:  # take it back, answer again with the other side
                wait.until(lambda d, i=index: body("answerable") not in (None, str(i)))
                press(Keys.BACKSPACE)
                wait.until(lambda d, i=index: body("answerable") == str(i))
                pressed[index] = "left" if choice != "left" else "right"
                press(keys[pressed[index]])
                undone = True
            wait.until(lambda d, i=index: body("answerable") != str(i) or page() == "finished")
        assert "every answer is saved" in browser.find_element(By.ID, "finished-text").text
        assert undone and paused
        console = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
        assert console == []
        browser.get(server.admin.split(": ", 1)[1].strip())  # the lab's page
        wait.until(lambda d: "ana" in d.find_element(By.ID, "participants").text)
        rows = browser.find_element(By.ID, "participants").text
        assert f"{len(pressed)} / {len(pressed)}" in rows
        browser.find_element(By.ID, "scale-button").click()
        wait.until(lambda d: "from" in d.find_element(By.ID, "scale-note").text)
        if _shots():
            browser.save_screenshot(str(_shots() / "web_admin.png"))
    finally:
        server.stop()
    with StudyStore(study) as store:
        votes = store.votes("ana")
        total = len(store.trials("ana"))
    assert {v.trial: v.choice for v in votes} == pressed
    assert len(votes) == total == len(pressed)
    assert all(v.rt_ms >= 150 for v in votes)


def test_a_double_press_answers_one_pair_only(tmp_path: Path, browser) -> None:  # type: ignore[no-untyped-def]
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    study = make_study(tmp_path, images=2)
    if _shots():
        study = demo_study(tmp_path, ("astronaut",), ("GTdilate", "RC", "FT"))
    token = links(study, "bo")["bo"]
    server = Server(study)
    wait = WebDriverWait(browser, PATIENCE_S)
    try:
        server.wait_ready()
        browser.get(f"{server.url}/s/{token}")
        wait.until(lambda d: d.execute_script("return !document.getElementById('start').hidden"))
        ActionChains(browser).send_keys(Keys.ENTER).perform()
        wait.until(lambda d: d.execute_script("return document.body.dataset.answerable") == "0")
        ActionChains(browser).send_keys(Keys.ARROW_LEFT).send_keys(Keys.ARROW_LEFT).perform()
        wait.until(lambda d: d.execute_script("return document.body.dataset.answerable") == "1")
        if _shots():
            browser.set_window_size(820, 1180)  # a tablet, upright
            browser.save_screenshot(str(_shots() / "web_vote_tablet.png"))
    finally:
        server.stop()
    with StudyStore(study) as store:
        assert [v.trial for v in store.votes("bo")] == [0]
