// The solver page: the solve runs in a Web Worker (solve-worker.js) so the page stays responsive.
// `?auto` solves the default spot at once; `?auto&report` also posts the summary to /result (the
// end-to-end check in src/build/browser_check.ts uses it).
import { betFrequencyGrid, T1_SPOT } from "./kibitz.js";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
$("config").value = T1_SPOT;
if (params.has("iterations")) $("iterations").value = params.get("iterations");
let worker = null;

function status(text, error = false) {
  $("status").textContent = text;
  $("status").className = error ? "error" : "";
}

function showSummary(s, iterations, percent) {
  const bets = betFrequencyGrid(s);
  const ranks = "AKQJT98765432";
  let html = `<p>${iterations} iterations, exploitability ${percent.toFixed(3)}% of the pot</p>` +
    `<p>OOP EV ${s.ev[0].toFixed(2)}, equity ${(100 * s.equity[0]).toFixed(2)}% &middot; ` +
    `IP EV ${s.ev[1].toFixed(2)}, equity ${(100 * s.equity[1]).toFixed(2)}%</p>` +
    `<p>${(s.player ?? "").toUpperCase()} at the root: ` +
    s.actions.map((a, i) => `${a} ${(100 * s.frequencies[i]).toFixed(1)}%`).join(", ") + `</p>` +
    `<p>Bet/raise frequency by hand class (suited above the diagonal):</p><table class="grid">`;
  for (let row = 0; row < 13; row++) {
    html += "<tr>";
    for (let col = 0; col < 13; col++) {
      const f = bets[row][col];
      const name = row === col
        ? ranks[row] + ranks[col]
        : row < col
        ? ranks[row] + ranks[col] + "s"
        : ranks[col] + ranks[row] + "o";
      if (f === null) {
        html += `<td title="${name}" style="color:#bbb">${name}</td>`;
        continue;
      }
      const shade = `rgba(200, 60, 40, ${(0.1 + 0.8 * f).toFixed(2)})`;
      html += `<td title="${name}: ${(100 * f).toFixed(1)}%" style="background:${shade}">` +
        `${name}<br><b>${Math.round(100 * f)}</b></td>`;
    }
    html += "</tr>";
  }
  $("result").innerHTML = html + "</table>";
}

function solve() {
  worker?.terminate();
  $("result").innerHTML = "";
  status("starting...");
  $("solve").disabled = true;
  $("stop").disabled = false;
  worker = new Worker("./solve-worker.js", { type: "module" });
  worker.onmessage = async (e) => {
    const m = e.data;
    if (m.type === "progress") {
      status(
        `iteration ${m.iteration}: exploitability ${m.percent.toFixed(3)}% of the pot ` +
          `(${m.backend === "gpu" ? "GPU" : `${m.threads} thread${m.threads === 1 ? "" : "s"}`}, ` +
          `${m.seconds.toFixed(1)} s)`,
      );
    } else if (m.type === "done") {
      status(`done in ${m.seconds.toFixed(1)} s`);
      showSummary(m.summary, m.iteration, m.percent);
      finish();
      if (params.has("report")) {
        await fetch("/result", { method: "POST", body: JSON.stringify(m) });
      }
    } else if (m.type === "error") {
      status(m.message, true);
      finish();
      if (params.has("report")) {
        await fetch("/result", { method: "POST", body: JSON.stringify({ error: m.message }) });
      }
    }
  };
  worker.postMessage({
    config: $("config").value,
    iterations: Number($("iterations").value),
    target: Number($("target").value),
    // ?backend=cpu|gpu|auto overrides the config's solver.backend.
    backend: params.get("backend") ?? undefined,
  });
}

function finish() {
  $("solve").disabled = false;
  $("stop").disabled = true;
}

$("solve").onclick = solve;
$("stop").onclick = () => {
  worker?.terminate();
  status("stopped");
  finish();
};
if (params.has("auto")) solve();
