// The participant's voting page. The server holds every answer: the page asks it what to
// show (state), sends each answer and shows the next pair only once the server has saved
// it. Keys as in the voting window: ← or 1 left, → or 2 right, Space or 0 cannot decide (if
// the study allows it), Backspace undo, P or Esc pause.
"use strict";

const MIN_VIEW_MS = 150;   // faster answers are taken as accidental key presses
const BREAK_EVERY = 60;    // a rest screen after this many answers
const token = location.pathname.split("/")[2] || "";
const $ = (id) => document.getElementById(id);

let state = null;          // the server's last answer
let page = "loading";
let shownAt = 0;           // when the shown pair's pictures were all on screen
let carriedMs = 0;         // time the shown pair was on screen before a pause
let shownIndex = null;
let busy = false;          // an answer is on its way: keys wait
let blocked = false;       // the shown pair's pictures did not load
let sinceBreak = 0;
let pending = null;        // an answer that could not be saved, to send again

function show(name) {
  if (name !== "vote") delete document.body.dataset.answerable;
  for (const section of document.querySelectorAll(".page")) section.hidden = section.id !== name;
  page = name;
}

async function call(path, body) {
  const options = body === undefined ? {} : {
    method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body),
  };
  try {
    const response = await fetch(`/s/${token}/${path}`, options);
    let data = {};
    try { data = await response.json(); } catch (e) { data = {}; }
    return {ok: response.ok, status: response.status, data};
  } catch (e) {
    return {ok: false, status: 0, data: {
      error: "The server cannot be reached. Every answer it confirmed is saved — try again."}};
  }
}

function picture(index, slot) { return `/s/${token}/img/${index}/${slot}`; }

function preload(trial) {
  if (!trial) return;
  for (const slot of ["left", "right"]) new Image().src = picture(trial.index, slot);
  trial.references.forEach((_, k) => { new Image().src = picture(trial.index, `ref${k}`); });
}

function problem(text) {
  $("problem-text").textContent = text;
  $("problem").hidden = !text;
}

async function load(img, src) {
  img.src = src;
  await img.decode();
}

async function render(keepTime) {
  const s = state;
  $("progress").max = Math.max(1, s.total);
  $("progress").value = s.position;
  if (s.status === "closed") { show("closed"); return; }
  if (s.status === "finished") {
    $("finished-text").textContent =
      `You answered all ${s.total} pairs; every answer is saved. You can close this page.`;
    $("finished-undo").hidden = s.last === null;
    show("finished");
    return;
  }
  if (sinceBreak >= BREAK_EVERY) {
    sinceBreak = 0;
    pauseScreen("Time for a short break", "Rest your eyes for a moment. Press P or Space to continue.");
    return;
  }
  const trial = s.trial;
  const refs = $("references");
  refs.replaceChildren();
  const loads = [load($("left"), picture(trial.index, "left")),
                 load($("right"), picture(trial.index, "right"))];
  trial.references.forEach((label, k) => {
    const figure = document.createElement("figure");
    const img = document.createElement("img");
    img.alt = label;
    const caption = document.createElement("figcaption");
    caption.textContent = label;
    figure.append(img, caption);
    refs.append(figure);
    loads.push(load(img, picture(trial.index, `ref${k}`)));
  });
  refs.hidden = trial.references.length === 0;
  $("count").textContent = `${s.position + 1} / ${s.total}`;
  $("b-tie").hidden = !s.allow_ties;
  $("b-undo").disabled = s.last === null;
  show("vote");
  blocked = true;
  delete document.body.dataset.answerable;
  try {
    await Promise.all(loads);
    blocked = false;
    if (!pending) problem("");
  } catch (e) {
    problem("This pair cannot be shown. Press P and tell the lab.");
    return;
  }
  if (!(keepTime && shownIndex === trial.index)) carriedMs = 0;
  shownIndex = trial.index;
  shownAt = performance.now();
  document.body.dataset.shown = String(trial.index);   // for tests: the pair is on screen…
  setTimeout(() => {                                    // …and can be answered
    if (shownIndex === trial.index && page === "vote") document.body.dataset.answerable = String(trial.index);
  }, MIN_VIEW_MS);
  preload(s.next);
}

function pauseScreen(title, text) {
  $("pause-title").textContent = title;
  $("pause-text").textContent = text;
  show("pause");
}

function pause() {
  if (page !== "vote") return;
  carriedMs += performance.now() - shownAt;
  pauseScreen("Paused",
    `${state.position} of ${state.total} answered — every answer is saved. ` +
    "Press P or Space to continue.");
}

async function answer(result) {
  if (result.ok) {
    state = result.data;
    pending = null;
    problem("");
    return true;
  }
  if (result.data.state) state = result.data.state;       // the server says what is current
  problem(result.data.error || `The server answered ${result.status}. Try again.`);
  return false;
}

async function send(vote) {
  busy = true;
  delete document.body.dataset.answerable;
  try {
    const saved = await answer(await call("vote", vote));
    if (saved) {
      sinceBreak += 1;
      await render(false);
    } else if (state && state.trial && state.trial.index === vote.trial) {
      pending = vote;                                        // kept: "Try again" sends it
    } else {
      pending = null;
      await render(false);
    }
  } finally {
    busy = false;
  }
}

async function choose(choice) {
  if (page !== "vote" || busy || blocked || pending) return;
  if (choice === "tie" && !state.allow_ties) return;
  const seen = performance.now() - shownAt;
  if (seen < MIN_VIEW_MS) return;
  await send({trial: state.trial.index, choice, rt_ms: carriedMs + seen});
}

async function undo() {
  if (busy || state.last === null || !["vote", "finished"].includes(page)) return;
  busy = true;
  try {
    pending = null;
    if (await answer(await call("undo", {trial: state.last}))) sinceBreak = Math.max(0, sinceBreak - 1);
    await render(false);
  } finally {
    busy = false;
  }
}

function resume() {
  if (page === "pause") render(true);
}

async function start() {
  const result = await call("state");
  if (!result.ok) {
    show("closed");
    $("closed").querySelector("h1").textContent = "This link does not open a study";
    $("closed-text").textContent = result.data.error || "Please check the link, or ask the lab.";
    return;
  }
  state = result.data;
  document.title = state.study;
  for (const el of document.querySelectorAll(".study-name")) el.textContent = state.study;
  $("instructions").textContent =
    "You will see pairs of maps of the same image. Each time, choose the map that better " +
    "matches the object" + (state.show_gt ? " outlined by the ground truth" : "") + ".";
  $("keys").textContent =
    "← or 1: the left map is better  ·  → or 2: the right map is better" +
    (state.allow_ties ? "  ·  Space or 0: cannot decide" : "") +
    "  ·  Backspace: undo the last answer  ·  P or Esc: pause. " +
    "On a tablet, tap the better map.";
  if (state.position > 0 && state.status === "vote") {
    $("welcome").textContent =
      `Welcome back: you have answered ${state.position} of ${state.total}.`;
    $("welcome").hidden = false;
    $("start-button").textContent = "Continue";
  }
  if (state.status !== "vote") { render(false); return; }
  show("start");
}

document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const k = event.key;
  let handled = true;
  if (page === "start" && (k === "Enter" || k === " ")) render(false);
  else if (page === "vote") {
    if (k === "ArrowLeft" || k === "1") choose("left");
    else if (k === "ArrowRight" || k === "2") choose("right");
    else if (k === " " || k === "0") choose("tie");
    else if (k === "Backspace") undo();
    else if (k === "p" || k === "P" || k === "Escape") pause();
    else handled = false;
  } else if (page === "pause" && ["p", "P", " ", "Enter"].includes(k)) resume();
  else if (page === "finished" && k === "Backspace") undo();
  else handled = false;
  if (handled) event.preventDefault();
});

$("start-button").addEventListener("click", () => render(false));
$("resume").addEventListener("click", resume);
$("left-box").addEventListener("click", () => choose("left"));
$("right-box").addEventListener("click", () => choose("right"));
$("b-left").addEventListener("click", () => choose("left"));
$("b-right").addEventListener("click", () => choose("right"));
$("b-tie").addEventListener("click", () => choose("tie"));
$("b-undo").addEventListener("click", undo);
$("b-pause").addEventListener("click", pause);
$("finished-undo").addEventListener("click", undo);
$("retry").addEventListener("click", () => { if (pending && !busy) send(pending); });
start();
