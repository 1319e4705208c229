// The lab's admin page: progress and quality of every participant (refreshed every few
// seconds), stop/reopen, and the current scale on demand.
"use strict";

const token = location.pathname.split("/")[2] || "";
const $ = (id) => document.getElementById(id);
let open = true;

function cell(row, text, cls) {
  const td = document.createElement("td");
  td.textContent = text;
  if (cls) td.className = cls;
  row.append(td);
}

function num(value, digits) {
  return value === null || value === undefined ? "–" : Number(value).toFixed(digits);
}

async function get(path, method) {
  const response = await fetch(`/admin/${token}/${path}`, {method: method || "GET"});
  if (!response.ok) throw new Error(`${response.status}`);
  return response.json();
}

function draw(status) {
  open = status.open;
  document.title = `${status.study} — admin`;
  $("title").textContent = status.study;
  const started = status.participants.filter((p) => p.started);
  const done = started.filter((p) => p.answered >= p.planned);
  $("summary").textContent =
    `${status.design} design, ${status.groups} groups · ${status.participants.length} ` +
    `participants (${started.length} started, ${done.length} finished) · ${status.votes} votes · ` +
    (open ? "open for voting" : "STOPPED: links show 'closed'");
  $("toggle").textContent = open ? "Stop voting" : "Reopen voting";
  const body = $("participants").tBodies[0];
  body.replaceChildren();
  for (const p of status.participants) {
    const row = document.createElement("tr");
    cell(row, p.participant);
    cell(row, p.origin);
    if (!p.started) {
      cell(row, "not started");
      for (let k = 0; k < 6; k++) cell(row, "");
    } else {
      cell(row, `${p.answered} / ${p.planned}`, "num");
      cell(row, p.last_vote ? p.last_vote.replace("T", " ").slice(0, 19) : "–");
      cell(row, p.attention[1] ? `${p.attention[0]} / ${p.attention[1]}` : "–", "num");
      cell(row, p.consistency[1] ? `${p.consistency[0]} / ${p.consistency[1]}` : "–", "num");
      cell(row, num(p.left_share, 2), "num");
      cell(row, p.median_rt_ms === null ? "–" : `${num(p.median_rt_ms, 0)} ms`, "num");
      cell(row, p.flags.join("; "), "flags");
      if (p.flags.length) row.className = "flagged";
    }
    body.append(row);
  }
}

async function refresh() {
  try {
    draw(await get("status"));
    $("message").textContent = "";
  } catch (e) {
    $("message").textContent = `The server did not answer (${e.message}); retrying…`;
  }
}

async function toggle() {
  try {
    draw(await get(open ? "stop" : "reopen", "POST"));
  } catch (e) {
    $("message").textContent = `Not changed (${e.message}).`;
  }
}

async function scale() {
  $("scale-note").textContent = "computing…";
  $("scale-section").hidden = false;
  try {
    const result = await get("scale");
    const body = $("scale").tBodies[0];
    body.replaceChildren();
    for (const g of result.groups) {
      const row = document.createElement("tr");
      cell(row, g.group);
      cell(row, g.sample);
      cell(row, String(g.votes), "num");
      cell(row, g.consensus || "—");
      cell(row, g.reason);
      // separated votes: the distances are the prior's, not the votes' (as rank aggregate says)
      cell(row, g.separated ? `${g.jod} — separated, no interval: ${g.separated}` : g.jod || "–");
      body.append(row);
    }
    $("scale-note").textContent = `from ${result.votes} votes, the study's default rule`;
  } catch (e) {
    $("scale-note").textContent = `could not be computed (${e.message})`;
  }
}

$("toggle").addEventListener("click", toggle);
$("scale-button").addEventListener("click", scale);
refresh();
setInterval(refresh, 5000);
