// sift's page for people: what an agent gets for a URL, the caller's jobs, health.
// The token lives in this tab's sessionStorage only and goes in the Authorization header.
// Everything a fetched page says is written with textContent: it is data, never markup.

const KEY = "sift-token";
const $ = (id) => document.getElementById(id);

function token() {
  return sessionStorage.getItem(KEY) || "";
}

async function api(method, path, body) {
  const headers = {};
  if (token()) headers.Authorization = `Bearer ${token()}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const started = performance.now();
  const res = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: "no-store",
    credentials: "omit",
    redirect: "error",
  });
  const text = await res.text();
  const ms = performance.now() - started;
  let data;
  try {
    data = JSON.parse(text);
  } catch {
    data = { success: false, error: text.trim() || res.statusText };
  }
  return { status: res.status, ok: res.ok, data, text, ms };
}

function refusal(answer) {
  const { status, data } = answer;
  const hint = data.hint ? ` (hint: ${data.hint})` : "";
  return `${status} ${data.error || "error"}${hint}`;
}

function show(el, on) {
  el.hidden = !on;
}

function clear(el) {
  el.replaceChildren();
}

function shown(value) {
  if (value === null || value === undefined) return "—";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

// A definition list from [name, value] pairs; values left undefined are skipped.
function fill(dl, pairs) {
  clear(dl);
  for (const [name, value] of pairs) {
    if (value === undefined) continue;
    const dt = document.createElement("dt");
    const dd = document.createElement("dd");
    dt.textContent = name;
    dd.textContent = shown(value);
    dl.append(dt, dd);
  }
}

function cell(row, value) {
  const td = document.createElement("td");
  td.textContent = shown(value);
  row.append(td);
  return td;
}

// ---- the token

function tokenSaid(message, bad) {
  const status = $("token-status");
  status.textContent = message;
  status.classList.toggle("bad", Boolean(bad));
}

async function useToken(event) {
  event.preventDefault();
  const value = $("token").value.trim();
  $("token").value = "";
  if (!value) return;
  sessionStorage.setItem(KEY, value);
  await loadJobs();
}

function forget() {
  sessionStorage.removeItem(KEY);
  $("token").value = "";
  clear($("jobs"));
  tokenSaid("Forgotten. Type a token to use sift.");
}

// ---- a fetch

let last = null; // the last request's body, for its continuation

function request() {
  const body = { url: $("url").value.trim() };
  for (const name of ["pages", "grep", "question"]) {
    const value = $(name).value.trim();
    if (value) body[name] = value;
  }
  const max = $("max_tokens").value.trim();
  if (max) body.max_tokens = Number(max);
  if ($("render").checked) body.render = true;
  return body;
}

async function run(body) {
  last = body;
  $("go").disabled = true;
  show($("result"), true);
  $("summary").textContent = `fetching ${body.url} …`;
  show($("error"), false);
  show($("answer"), false);
  try {
    const answer = await api("POST", "/v1/fetch", body);
    $("raw").textContent = answer.text;
    if (answer.ok) {
      answered(answer, body);
    } else {
      refused(answer);
    }
  } catch (err) {
    $("summary").textContent = "";
    $("error").textContent = `sift could not be reached: ${err.message}`;
    show($("error"), true);
  } finally {
    $("go").disabled = false;
  }
}

function refused(answer) {
  $("summary").textContent = `refused in ${Math.round(answer.ms)} ms`;
  $("error").textContent = refusal(answer);
  show($("error"), true);
  if (answer.status === 401) tokenSaid("sift refused this token (401 unauthorized).", true);
}

function answered(answer, body) {
  const env = answer.data;
  $("summary").textContent =
    `${env.status} · ${env.kind} · ${env.tokens} tokens · ${env.chars} characters` +
    (env.truncated ? " · cut" : "") +
    ` · ${Math.round(answer.ms)} ms`;
  $("text").textContent = env.content;
  continuation(env);
  map(env);
  $("warnings").textContent = env.warning || "";
  show($("warnings-box"), Boolean(env.warning));
  injection(env.injection || []);
  const usage = Object.entries(env.usage || {});
  fill($("usage"), usage.length ? usage : [["said", "nothing about automated use"]]);
  fill($("trail"), [
    ["asked", env.url],
    ["final URL", env.final_url],
    ["upstream status", env.status],
    ["kind", env.kind],
    ["content type", env.content_type],
    ["title", env.title],
    ["fetched at", env.fetched_at],
    ["from the cache", env.cached],
    ["stale", env.stale || undefined],
    ["rendered", env.rendered || undefined],
    ["source", env.source ?? undefined],
    ["extraction", env.extraction ?? undefined],
    ["coverage", env.coverage ?? undefined],
    ["hidden removed", env.hidden_removed],
    ["hint", env.hint ?? undefined],
    ["OCR'd pages", env.ocr_pages],
    ["digest", env.digest],
    ["content hash", env.content_hash],
  ]);
  timings(answer, body);
  show($("answer"), true);
}

function continuation(env) {
  const next = env.next;
  show($("more"), next !== undefined && next !== null);
  if (next === undefined || next === null) return;
  const field = typeof next === "number" ? "offset" : "pages";
  $("next-note").textContent = `the rest: ${field} ${next}`;
  $("next").onclick = () => {
    const body = { ...last };
    delete body.offset;
    body[field] = next;
    run(body);
  };
}

function map(env) {
  const facts = env.pdf || env.sections || env.parts;
  show($("map-box"), Boolean(facts));
  clear($("outline"));
  if (!facts) return;
  const unit = facts.unit || (env.sections ? "section" : "page");
  fill($("map"), [
    [`${unit}s`, facts.pages],
    ["title", facts.title || undefined],
    ["shown", facts.returned ? facts.returned.join("–") : "none (the map)"],
    ["a map", facts.map],
    ["grep hits", facts.grep_hits],
    ["outline left out", facts.outline_more || undefined],
    ["note", facts.outline_note ?? undefined],
  ]);
  for (const item of facts.outline) {
    const li = document.createElement("li");
    li.dataset.level = String(Math.min(item.level, 4));
    li.textContent = `${item.title} — ${unit} ${item.page}`;
    $("outline").append(li);
  }
}

function injection(found) {
  const body = $("injection");
  clear(body);
  show($("injection-box"), found.length > 0);
  for (const place of found) {
    const row = document.createElement("tr");
    cell(row, place.where);
    cell(row, place.what);
    cell(row, place.excerpt);
    body.append(row);
  }
}

function timings(answer, body) {
  const seen = performance.getEntriesByType("resource").filter((e) => e.name.endsWith("/v1/fetch"));
  const entry = seen[seen.length - 1];
  performance.clearResourceTimings();
  const pairs = [["round trip", `${Math.round(answer.ms)} ms`]];
  if (entry && entry.responseStart > 0) {
    pairs.push(["sift's work (to the first byte)", `${Math.round(entry.responseStart - entry.requestStart)} ms`]);
    pairs.push(["the answer's transfer", `${Math.round(entry.responseEnd - entry.responseStart)} ms`]);
    pairs.push(["answer bytes (on the wire)", entry.encodedBodySize]);
  }
  pairs.push(["asked", JSON.stringify(body)]);
  fill($("timings"), pairs);
}

// ---- jobs

async function loadJobs() {
  if (!token()) {
    tokenSaid("No token yet: type one to use sift.");
    return;
  }
  const answer = await api("GET", "/v1/batch");
  const rows = $("jobs");
  clear(rows);
  if (!answer.ok) {
    if (answer.status === 401) {
      tokenSaid("sift refused this token (401 unauthorized).", true);
    } else {
      tokenSaid("Token kept for this tab.");
      $("jobs-status").textContent = refusal(answer);
    }
    return;
  }
  tokenSaid("Token accepted; kept for this tab only.");
  show($("jobs-table"), answer.data.jobs.length > 0);
  $("jobs-status").textContent = answer.data.jobs.length ? "" : "No job running or waiting.";
  for (const job of answer.data.jobs) {
    const row = document.createElement("tr");
    const open = document.createElement("button");
    open.type = "button";
    open.textContent = job.job_id;
    open.onclick = () => openJob(job.job_id);
    cell(row, "").append(open);
    cell(row, job.kind);
    cell(row, job.status);
    cell(row, `${job.targets_done}/${job.targets_total}`);
    cell(row, job.created_at);
    rows.append(row);
  }
}

async function openJob(id) {
  const answer = await api("GET", `/v1/batch/${encodeURIComponent(id)}`);
  $("jobs-status").textContent = answer.ok ? "" : refusal(answer);
  $("job").textContent = answer.ok ? JSON.stringify(answer.data, null, 2) : "";
  show($("job"), answer.ok);
}

// ---- health

async function loadHealth() {
  const answer = await api("GET", "/healthz");
  const h = answer.data;
  $("health-status").textContent = h.ok ? "ok" : refusal(answer);
  const pairs = [
    ["version", h.version],
    ["up for", h.uptime_s === undefined ? undefined : `${h.uptime_s} s`],
    ["workers", Object.entries(h.workers || {}).map(([role, n]) => `${role} ${n}`).join(", ")],
    ["down", h.down],
    ["draining", h.draining],
    ["store error", h.store_error],
  ];
  for (const [name, value] of Object.entries(h.capabilities || {})) {
    pairs.push([name, capability(value)]);
  }
  fill($("health"), pairs);
}

// `ready (languages: eng, osd)`, as `sift serve` prints it.
function capability(value) {
  const details = Object.entries(value)
    .filter(([key]) => key !== "state")
    .map(([key, v]) => `${key}: ${Array.isArray(v) ? v.join(", ") : v}`);
  return details.length ? `${value.state} (${details.join("; ")})` : value.state;
}

// ---- start

$("token-form").addEventListener("submit", useToken);
$("forget").addEventListener("click", forget);
$("fetch-form").addEventListener("submit", (event) => {
  event.preventDefault();
  run(request());
});
$("jobs-refresh").addEventListener("click", loadJobs);
$("job-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const id = $("job-id").value.trim();
  if (id) openJob(id);
});
loadHealth();
loadJobs();
document.body.dataset.ready = "true";
