// The Wheelfarm dashboard: reads the JSON API every 2 s and redraws. No framework, no
// network beyond the coordinator. Every value from the farm is set as text, never as HTML.
'use strict';

const REFRESH_MS = 2000;
const SHARD_COLORS = ['#2f6fd6', '#e07b25', '#2e9d5b', '#9b4dca', '#d0453a', '#138d90',
                      '#b58900', '#6c71c4', '#d33682', '#5b8c2a', '#8c564b', '#17becf'];

// The farm token, kept for this tab only (sessionStorage) and sent as a header, never in a
// URL: query strings end up in proxies' access logs and in the browser's history. It comes
// from the sign-in form shown when the API asks for it, or once from the fragment of
// /#token=T (a fragment is never sent to the server), which is then removed from the
// address bar. A ?token= in the address is not used (the server refuses it), only removed.
let token = (() => {
  const fromFragment = new URLSearchParams(location.hash.slice(1)).get('token');
  if (fromFragment) sessionStorage.setItem('farm-token', fromFragment);
  const query = new URLSearchParams(location.search);
  if (fromFragment || query.has('token')) {
    query.delete('token');
    const rest = query.toString();
    history.replaceState(null, '', location.pathname + (rest ? '?' + rest : ''));
  }
  return sessionStorage.getItem('farm-token') || '';
})();

class ApiError extends Error {
  constructor(message, status) { super(message); this.status = status; }
}

async function api(path) {
  const headers = token ? {Authorization: 'Bearer ' + token} : {};
  const res = await fetch('/api/v1/' + path, {headers, cache: 'no-store', credentials: 'omit'});
  const body = await res.json().catch(() => ({error: res.statusText}));
  if (!res.ok) throw new ApiError(body.error || res.statusText, res.status);
  return body;
}

// What a build printed, with control characters made visible the way farmctl shows them
// (libfarm/text/terminal_text.h): "\x1b" for C0 controls and DEL, "\u009b" for C1
// controls and bidi overrides; newline, tab and a CR before a newline stay. textContent
// already keeps markup out; this keeps escape sequences from hiding or faking text.
function visible(text) {
  return String(text || '').replace(
    /\r(?!\n)|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g, c => {
      const n = c.charCodeAt(0);
      if (c === '\r') return '\\r';
      return n < 0x80 ? '\\x' + n.toString(16).padStart(2, '0') : '\\u' + n.toString(16).padStart(4, '0');
    });
}

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') node.className = v;
    else if (k === 'style') node.style.cssText = v;
    else node.setAttribute(k, v);
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

const SVG = 'http://www.w3.org/2000/svg';
function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

function enumName(value, prefix) {
  return String(value || '').replace(prefix, '').toLowerCase() || 'unknown';
}
const buildState = b => enumName(b.state, 'BUILD_STATE_');
const actionState = a => enumName(a.state, 'ACTION_STATE_');
const workerState = w => enumName(w.state, 'WORKER_STATE_');
const num = v => Number(v || 0);

function bytes(n) {
  n = num(n);
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let u = 0;
  while (n >= 1024 && u < units.length - 1) { n /= 1024; u++; }
  return u === 0 ? n + ' B' : n.toFixed(1) + ' ' + units[u];
}

function duration(seconds) {
  seconds = Math.max(0, Math.round(seconds));
  if (seconds < 60) return seconds + 's';
  if (seconds < 3600) return Math.floor(seconds / 60) + 'm' + String(seconds % 60).padStart(2, '0') + 's';
  return Math.floor(seconds / 3600) + 'h' + String(Math.floor(seconds % 3600 / 60)).padStart(2, '0') + 'm';
}

const time = ts => (ts ? Date.parse(ts) : NaN);
function ago(ts) {
  const t = time(ts);
  return isNaN(t) ? '' : duration((Date.now() - t) / 1000) + ' ago';
}
function span(from, to) {
  const a = time(from);
  if (isNaN(a)) return '';
  const b = isNaN(time(to)) ? Date.now() : time(to);
  return duration((b - a) / 1000);
}

function stateBadge(name) { return el('span', {class: 'state ' + name}, name); }

// A stacked bar: done, cached, failed, running, cancelled over total.
function progressBar(s) {
  const total = Math.max(1, num(s.total));
  const part = (cls, n) => n > 0 ? el('span', {class: cls, style: `width:${100 * n / total}%`}) : null;
  const done = num(s.done) - num(s.cached);
  return el('div', {class: 'progress', title: `${num(s.done)}/${num(s.total)} done`},
            part('done', done), part('cached', num(s.cached)), part('failed', num(s.failed)),
            part('running', num(s.running)), part('cancelled', num(s.cancelled)));
}

// "12 of 14 calls split (2 from the compile cache); 2 ran plain nvcc: unknown nvcc option × 2",
// as `farmctl build` says it (cli/build_view.cc NvccCallsSummary); '' when none were reported.
function nvccSummary(c) {
  c = c || {};
  const total = num(c.total), cached = num(c.cached), fallbacks = num(c.fallbacks);
  if (!total) return '';
  let out = `${num(c.split) + cached} of ${total} calls split`;
  if (cached) out += ` (${cached} from the compile cache)`;
  out += fallbacks ? `; ${fallbacks} ran plain nvcc: ${fallbackReasons(c)}` : '; none ran plain nvcc';
  if (num(c.compile_errors)) out += `; ${num(c.compile_errors)} stopped at a compile error`;
  return out;
}

// "14 compiles: 10 on workers, 2 from the compile cache; 2 ran locally: ... × 2" for farm-cc's
// host compiles, as `farmctl build` says it (HostCompilesSummary); '' when none were reported.
function hostCompilesSummary(c) {
  c = c || {};
  const total = num(c.total), cached = num(c.cached), fallbacks = num(c.fallbacks);
  if (!total) return '';
  let out = `${total} ${total === 1 ? 'compile' : 'compiles'}: ${num(c.split)} on workers`;
  if (cached) out += `, ${cached} from the compile cache`;
  out += fallbacks ? `; ${fallbacks} ran locally: ${fallbackReasons(c)}` : '; none ran locally';
  if (num(c.compile_errors)) out += `; ${num(c.compile_errors)} stopped at a compile error`;
  return out;
}

// The fallback reasons (a code's name, "command_line", or an older launcher's class of text)
// with their counts, most frequent first.
function fallbackCounts(c) {
  return Object.entries(c.fallback_reasons || {}).map(([r, n]) => [r, num(n)])
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

// "command_line × 2, ...": most frequent first.
function fallbackReasons(c) {
  return fallbackCounts(c).map(([r, n]) => `${r} × ${n}`).join(', ');
}

// "command_line: not decomposable: unknown nvcc option '-Wextra'", one line per example the
// coordinator kept, as `farmctl build` lists them; null when none: the counts' tooltip.
function fallbackExamples(c) {
  c = c || {};
  const lines = fallbackCounts(c).flatMap(([r]) =>
    (((c.fallback_examples || {})[r] || {}).details || []).map(d => `${r}: ${visible(d)}`));
  return lines.length ? lines.join('\n') : null;
}

function buildTotals(b) {
  const t = {total: 0, done: 0, cached: 0, failed: 0, running: 0, cancelled: 0, queued: 0};
  for (const s of b.shards || []) for (const k of Object.keys(t)) t[k] += num(s[k]);
  return t;
}

// ---- fleet and builds list ----

async function renderHome() {
  const [status, workers, running, builds] = await Promise.all([
    api('status'), api('workers'), api('actions?state=running'), api('builds?limit=50')]);
  const byWorker = {};
  for (const a of running.actions || []) (byWorker[a.worker] = byWorker[a.worker] || []).push(a);
  let slots = 0, used = 0;
  for (const w of workers.workers || []) {
    if (workerState(w) === 'online' || workerState(w) === 'draining') {
      slots += num(w.capabilities && w.capabilities.slots);
      used += num(w.slots_in_use);
    }
  }
  const card = (n, label) => el('div', {class: 'card'}, el('div', {class: 'n'}, n), el('div', {class: 'muted'}, label));

  const workerRows = (workers.workers || []).map(w => {
    const c = w.capabilities || {};
    const load = num(c.slots) ? num(w.slots_in_use) / num(c.slots) : 0;
    const acts = byWorker[w.name] || [];
    return el('tr', {'data-worker': w.name},
      el('td', {}, w.name), el('td', {}, stateBadge(workerState(w))),
      el('td', {}, `${c.os || ''}/${c.cpu_arch || ''}`),
      el('td', {class: 'gpus'}, (c.gpus || []).length ? (c.gpus || []).map(g => el('div', {},
         g.sm, g.name ? ` ${g.name}` : '', num(g.memory_bytes) ? ` · ${bytes(g.memory_bytes)}` : '',
         g.driver_cuda_version ? ` · CUDA ${g.driver_cuda_version}` : '',
         g.declared ? el('span', {class: 'muted'}, ' (declared)') : '')) : el('span', {class: 'muted'}, '-')),
      el('td', {}, el('span', {class: 'load'}, el('span', {style: `width:${Math.round(100 * load)}%`})),
         `${num(w.slots_in_use)}/${num(c.slots)}`),
      el('td', {}, acts.length ? acts.map(a => el('div', {},
         a.build_id ? el('a', {href: '/builds/' + encodeURIComponent(a.build_id)}, a.build_id) : '(no build)',
         ' ', a.shard || '', ' ', el('span', {class: 'muted'}, span(a.started_at)))) : el('span', {class: 'muted'}, 'idle')),
      el('td', {class: 'muted'}, ago(w.last_seen)));
  });

  const buildRows = (builds.builds || []).map(b => {
    const t = buildTotals(b);
    const href = '/builds/' + encodeURIComponent(b.id);
    return el('tr', {'data-build': b.id},
      el('td', {}, el('a', {href}, b.id)),
      el('td', {}, enumName(b.kind, 'BUILD_KIND_')),
      el('td', {}, b.package ? `${b.package} ${b.version}` : ''),
      el('td', {}, stateBadge(buildState(b))),
      el('td', {}, progressBar(t), el('div', {class: 'muted'}, `${t.done}/${t.total} actions`)),
      el('td', {}, (b.shards || []).map(s => el('div', {}, `${s.name || '(none)'} ${num(s.done)}/${num(s.total)}`))),
      el('td', {class: 'muted'}, ago(b.submitted_at)),
      el('td', {class: 'muted'}, span(b.started_at, b.finished_at)));
  });

  document.getElementById('coordinator').textContent = `${status.grpc_address} · wheelfarm ${status.version}`;
  return [
    el('h1', {}, 'Fleet'),
    el('div', {class: 'cards'},
       card(num(status.workers_online), 'workers online'), card(num(status.workers_draining), 'draining'),
       card(num(status.workers_lost), 'lost'), card(`${used}/${slots}`, 'slots in use'),
       card((running.actions || []).length, 'actions running')),
    el('h2', {}, 'Workers'),
    workerRows.length
      ? el('table', {id: 'workers-table'}, el('thead', {}, el('tr', {},
          ['Name', 'State', 'Platform', 'GPUs', 'Load', 'Running', 'Last seen'].map(h => el('th', {}, h)))),
          el('tbody', {}, workerRows))
      : el('p', {class: 'muted'}, 'No workers registered.'),
    el('h2', {}, 'Builds'),
    buildRows.length
      ? el('table', {id: 'builds-table'}, el('thead', {}, el('tr', {},
          ['Build', 'Kind', 'Package', 'State', 'Progress', 'Shards', 'Submitted', 'Took'].map(h => el('th', {}, h)))),
          el('tbody', {}, buildRows))
      : el('p', {class: 'muted'}, 'No builds yet.'),
  ];
}

// ---- one build ----

function shardColor(names, shard) {
  const i = names.indexOf(shard);
  return SHARD_COLORS[(i < 0 ? 0 : i) % SHARD_COLORS.length];
}

// Lanes per worker, one bar per action from start to finish, coloured by shard.
function timeline(actions, shardNames) {
  const ran = actions.filter(a => a.started_at && a.worker);
  const width = 1100, lane = 22, left = 130, top = 20;
  if (!ran.length) return el('p', {class: 'muted', id: 'timeline-empty'}, 'No action has run yet.');
  const workers = [...new Set(ran.map(a => a.worker))].sort();
  const t0 = Math.min(...ran.map(a => time(a.started_at)));
  const t1 = Math.max(...ran.map(a => isNaN(time(a.finished_at)) ? Date.now() : time(a.finished_at)), t0 + 1000);
  const scale = (width - left - 10) / (t1 - t0);
  const height = top + workers.length * lane + 10;
  const root = svg('svg', {id: 'timeline', width, height, viewBox: `0 0 ${width} ${height}`, role: 'img',
                           'aria-label': 'actions per worker over time'});
  for (let i = 0; i <= 5; i++) {
    const x = left + i * (width - left - 10) / 5;
    root.append(svg('line', {x1: x, x2: x, y1: top - 4, y2: height - 6, stroke: '#e3e3de'}));
    root.append(svg('text', {x: x + 2, y: 12}, duration((t1 - t0) * i / 5000)));
  }
  const cpuOf = {};
  for (const a of ran) if (a.worker_cpu_arch) cpuOf[a.worker] = a.worker_cpu_arch;
  workers.forEach((w, i) => {
    const y = top + i * lane;
    root.append(svg('rect', {x: 0, y, width, height: lane - 2, fill: i % 2 ? '#fafaf8' : '#f1f1ed'}));
    root.append(svg('text', {x: 6, y: y + lane / 2 + 3}, cpuOf[w] ? `${w} · ${cpuOf[w]}` : w));
  });
  for (const a of ran) {
    const y = top + workers.indexOf(a.worker) * lane + 3;
    const start = time(a.started_at);
    const end = isNaN(time(a.finished_at)) ? Date.now() : time(a.finished_at);
    const failed = actionState(a) === 'failed' || (actionState(a) === 'completed' && num(a.exit_code) !== 0);
    const bar = svg('rect', {
      class: 'action-bar', 'data-shard': a.shard || '', x: left + (start - t0) * scale, y,
      width: Math.max(2, (end - start) * scale), height: lane - 8, rx: 2,
      fill: shardColor(shardNames, a.shard || ''), stroke: failed ? '#d0453a' : 'none', 'stroke-width': failed ? 2 : 0,
      opacity: actionState(a) === 'running' ? 0.6 : 1});
    bar.append(svg('title', {}, `${a.shard || '(no shard)'} on ${a.worker}` +
                                (a.worker_cpu_arch ? ` (${a.worker_cpu_arch})` : '') + `: ${actionState(a)}` +
                                (failed ? ` (exit ${num(a.exit_code)})` : '') + `, ${span(a.started_at, a.finished_at)}`));
    root.append(bar);
  }
  return el('div', {class: 'timeline-wrap'}, root);
}

let logState = {id: null, offset: 0, text: '', decoder: new TextDecoder()};

async function renderBuild(id) {
  const [b, acts] = await Promise.all([api('builds/' + encodeURIComponent(id)),
                                       api('builds/' + encodeURIComponent(id) + '/actions?limit=5000')]);
  if (logState.id !== id) logState = {id, offset: 0, text: '', decoder: new TextDecoder()};
  if (num(b.log_bytes) > logState.offset) {
    const chunk = await api(`builds/${encodeURIComponent(id)}/logs?offset=${logState.offset}&max_bytes=262144`);
    // One streaming decoder per log, so a character split between chunks stays whole.
    const data = logState.decoder.decode(Uint8Array.from(atob(chunk.data || ''), c => c.charCodeAt(0)),
                                         {stream: true});
    logState.text = (logState.text + data).slice(-200000);
    logState.offset = num(chunk.next_offset);
  }
  const shards = b.shards || [];
  const shardNames = shards.map(s => s.name || '');
  const t = buildTotals(b);
  document.title = `${b.id} · ${buildState(b)} · Wheelfarm`;

  const shardRows = shards.map(s => el('tr', {class: 'shard-row', 'data-shard': s.name || ''},
    el('td', {}, el('i', {style: `display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:6px;background:${shardColor(shardNames, s.name || '')}`}), s.name || '(none)'),
    el('td', {}, progressBar(s)),
    el('td', {class: 'num'}, `${num(s.done)}/${num(s.total)}`),
    el('td', {class: 'num'}, num(s.running)), el('td', {class: 'num'}, num(s.queued)),
    el('td', {class: 'num'}, num(s.failed)), el('td', {class: 'num'}, num(s.cached)),
    el('td', {class: 'shard-workers'}, (s.workers || []).map(w => {
      const cpu = (s.worker_cpu_archs || {})[w];
      return cpu ? `${w} (${cpu})` : w;
    }).join(', ')),
    el('td', {class: 'num'}, span(s.started_at, s.finished_at)),
    el('td', {class: 'num'}, duration(num(s.cpu_seconds)))));

  const failures = shards.filter(s => s.error || s.failed_action_id).map(s =>
    el('div', {class: 'failure', 'data-shard': s.name || ''},
       el('h3', {}, `${s.name || '(no shard)'}: action ${s.failed_action_id}` +
                    (num(s.failed_exit_code) ? ` exited ${num(s.failed_exit_code)}` : '')),
       el('pre', {class: 'error'}, s.error ? visible(s.error) : '(no error text)')));

  const wheel = b.wheel || {};
  const sizes = Object.entries(wheel.device_code_bytes || {}).sort();
  const maxSize = Math.max(1, ...sizes.map(([, v]) => num(v)));
  const v = b.verification || {};
  const facts = [
    ['Kind', enumName(b.kind, 'BUILD_KIND_')],
    b.package ? ['Package', `${b.package} ${b.version}`] : null,
    ['Archs', (b.archs || []).join(' ')],
    ['Submitted', ago(b.submitted_at)],
    ['Took', span(b.started_at, b.finished_at)],
    b.build_host ? ['Build host', b.build_host] : null,
    nvccSummary(b.nvcc) ? ['nvcc', el('span', {id: 'nvcc-calls', class: num((b.nvcc || {}).fallbacks) ? 'bad' : '', title: fallbackExamples(b.nvcc)}, nvccSummary(b.nvcc))] : null,
    hostCompilesSummary(b.host_compiles) ? ['Host compiles', el('span', {id: 'host-compiles', class: num((b.host_compiles || {}).fallbacks) ? 'bad' : '', title: fallbackExamples(b.host_compiles)}, hostCompilesSummary(b.host_compiles))] : null,
    (b.published_to || []).length ? ['Published to', b.published_to.join(', ')] : null,
  ].filter(Boolean);

  return [
    el('p', {}, el('a', {href: '/'}, '← fleet and builds')),
    el('h1', {id: 'build-title'}, b.id, ' ', stateBadge(buildState(b))),
    b.reason ? el('p', {id: 'build-reason', class: buildState(b) === 'failed' ? 'bad' : 'muted'}, visible(b.reason)) : null,
    el('dl', {class: 'kv'}, facts.map(([k, val]) => [el('dt', {}, k), el('dd', {}, val)])),
    el('h2', {}, `Shards · ${t.done}/${t.total} actions done`),
    shards.length
      ? el('table', {id: 'shards-table'}, el('thead', {}, el('tr', {},
          ['Shard', 'Progress', 'Done', 'Running', 'Queued', 'Failed', 'Cached', 'Workers', 'Wall', 'CPU']
            .map(h => el('th', {class: ['Shard', 'Progress', 'Workers'].includes(h) ? '' : 'num'}, h)))),
          el('tbody', {}, shardRows))
      : el('p', {class: 'muted', id: 'no-shards'}, 'No actions yet.'),
    failures.length ? [el('h2', {}, 'Failures'), el('div', {id: 'failures'}, failures)] : null,
    el('h2', {}, 'Timeline'),
    el('div', {class: 'legend'}, shardNames.map(n => el('span', {}, el('i', {style: `background:${shardColor(shardNames, n)}`}), n || '(none)'))),
    timeline(acts.actions || [], shardNames),
    wheel.filename ? [
      el('h2', {}, 'Wheel'),
      el('p', {}, el('code', {}, wheel.filename), ` · ${bytes(wheel.size_bytes)}`),
      el('table', {id: 'wheel-sizes'}, el('thead', {}, el('tr', {}, el('th', {}, 'Arch'), el('th', {}, 'Device code'))),
         el('tbody', {}, sizes.map(([arch, n]) => el('tr', {}, el('td', {}, arch),
           el('td', {}, el('span', {class: 'bar', style: `width:${Math.round(300 * num(n) / maxSize)}px`}), bytes(n))))))] : null,
    (v.rows || []).length || v.message ? [
      el('h2', {}, 'Verification'),
      el('p', {id: 'verification-result', class: v.ok ? 'ok' : 'bad'}, v.ok ? 'passed' : 'failed', v.message ? ': ' + visible(v.message) : ''),
      el('table', {id: 'verification-table'}, el('thead', {}, el('tr', {}, ['Arch', 'Present', 'Size', 'Note'].map(h => el('th', {}, h)))),
         el('tbody', {}, (v.rows || []).map(r => el('tr', {}, el('td', {}, r.arch),
           el('td', {class: r.present ? 'ok' : 'bad'}, r.present ? 'yes' : 'no'), el('td', {}, bytes(r.size_bytes)), el('td', {}, r.note || '')))))] : null,
    (b.smoke || []).length ? [
      el('h2', {}, 'Smoke tests'),
      el('table', {id: 'smoke-table'}, el('thead', {}, el('tr', {}, ['Arch', 'Result', 'GPU', 'Worker', 'Output'].map(h => el('th', {}, h)))),
         el('tbody', {}, b.smoke.map(r => el('tr', {'data-sm': r.sm},
           el('td', {}, r.sm), el('td', {class: r.state === 'passed' ? 'ok' : (r.state === 'failed' ? 'bad' : 'muted')}, r.state === 'not run' ? 'not smoke-tested' : r.state),
           el('td', {}, r.gpu_sm || '-'), el('td', {}, r.worker || '-'),
           el('td', {}, r.state === 'not run' || r.state === 'waiting' ? visible(r.reason || '') :
                        (r.output || r.reason) ? el('pre', {class: r.state === 'failed' ? 'error' : 'log'}, visible(r.output || r.reason)) : '')))))] : null,
    logState.text ? [el('h2', {}, 'Log'), el('pre', {class: 'log', id: 'build-log'}, visible(logState.text))] : null,
  ];
}

async function refresh() {
  const main = document.getElementById('main');
  const problem = document.getElementById('problem');
  try {
    const m = location.pathname.match(/^\/builds\/([^/]+)$/);
    const content = m ? await renderBuild(decodeURIComponent(m[1])) : await renderHome();
    const scroll = window.scrollY;
    main.replaceChildren(...content.flat(2).filter(Boolean));
    window.scrollTo(0, scroll);
    problem.hidden = true;
    document.getElementById('refreshed').textContent = 'updated ' + new Date().toLocaleTimeString();
    document.body.dataset.loaded = 'true';
  } catch (e) {
    if (e.status === 401) {
      showSignIn(problem, e.message);
    } else {
      problem.replaceChildren('Cannot read the farm: ' + e.message);
    }
    problem.hidden = false;
  }
  setTimeout(refresh, REFRESH_MS);
}

// Asks for the farm token in the page, in a password field. The form stays across the
// 2 s refreshes (they would otherwise wipe what is being typed).
function showSignIn(problem, message) {
  if (problem.querySelector('#token-form')) return;
  const input = el('input', {type: 'password', id: 'token-input', autocomplete: 'off',
                             placeholder: 'farm token (DATA_DIR/token)', size: 40});
  const form = el('form', {id: 'token-form'}, 'This coordinator needs the farm token to show the farm. ',
                  input, ' ', el('button', {type: 'submit'}, 'Sign in'),
                  el('div', {class: 'muted'}, message));
  form.addEventListener('submit', ev => {
    ev.preventDefault();
    token = input.value.trim();
    if (token) sessionStorage.setItem('farm-token', token);
    problem.replaceChildren();
    problem.hidden = true;
  });
  problem.replaceChildren(form);
}

refresh();
