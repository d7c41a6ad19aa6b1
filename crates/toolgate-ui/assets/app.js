// toolgate ui: the browser side. One ES module, no framework, no build step.
//
// The page shows text written by a model and by tools, which may be hostile,
// and it runs under a strict Content-Security-Policy. So this file keeps to
// three rules:
// - every piece of data goes into the DOM as text (h() / textContent /
//   createTextNode), never as HTML;
// - no inline handlers, styles or scripts: listeners are added here, and
//   things are shown and hidden with classes and the `hidden` attribute;
// - links are internal (`#/…`) and built from the constant page list; the
//   one exception is a Markdown link in the agent's text, made by mdLink()
//   only for an http(s) URL.

// ---------------------------------------------------------------------------
// DOM helpers

const PAGES = ['chat', 'sessions', 'rules', 'mcp', 'sandbox', 'audit', 'tools'];

// The element properties h() may set. Nothing here can turn text into markup
// or load anything: no property that parses HTML, takes a URL, styles or
// holds a handler.
const SAFE_PROPS = new Set([
  'className', 'textContent', 'type', 'value', 'disabled', 'title', 'hidden',
  'checked', 'selected', 'open', 'placeholder', 'rows', 'name', 'htmlFor',
  'tabIndex', 'id', 'spellcheck', 'autocomplete', 'colSpan',
]);

/**
 * Creates an element. `props` may hold the SAFE_PROPS, `dataset`, `testid`
 * (data-testid), `role`, `aria` ({label: …} → aria-label), `on`
 * ({click: fn}) and `page` (an internal link to one of PAGES). Children are
 * nodes or strings (added as text); null, undefined and false are skipped.
 */
function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null) continue;
    if (key === 'dataset') {
      for (const [k, v] of Object.entries(value)) {
        if (v !== undefined && v !== null) el.dataset[k] = String(v);
      }
    } else if (key === 'testid') {
      el.dataset.testid = value;
    } else if (key === 'role') {
      el.setAttribute('role', String(value));
    } else if (key === 'aria') {
      for (const [k, v] of Object.entries(value)) el.setAttribute(`aria-${k}`, String(v));
    } else if (key === 'on') {
      for (const [k, fn] of Object.entries(value)) el.addEventListener(k, fn);
    } else if (key === 'page') {
      if (!PAGES.includes(value)) throw new Error(`h: unknown page ${value}`);
      el.setAttribute('href', `#/${value}`);
    } else if (SAFE_PROPS.has(key)) {
      el[key] = value;
    } else {
      throw new Error(`h: refusing to set ${key}`);
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

function clear(el) {
  el.replaceChildren();
  return el;
}

const $ = (id) => document.getElementById(id);

function plural(n, one, many = `${one}s`) {
  return `${n} ${n === 1 ? one : many}`;
}

function fmtTime(ms) {
  if (ms === null || ms === undefined || ms === '') return '';
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? String(ms) : d.toLocaleString();
}

// Arguments arrive as JSON text (tool calls) or as values (approvals).
function prettyJson(value) {
  if (typeof value === 'string') {
    try {
      return JSON.stringify(JSON.parse(value), null, 2);
    } catch {
      return value;
    }
  }
  return JSON.stringify(value, null, 2);
}

function shortId(id) {
  const s = String(id || '');
  // Session ids are `s` + time + process id: the end tells them apart.
  return s.length > 24 ? `…${s.slice(-12)}` : s;
}

// ---------------------------------------------------------------------------
// Errors: one dismissable banner

class ApiError extends Error {
  constructor(status, error, hint) {
    super(error);
    this.status = status;
    this.hint = hint || null;
  }
}

function showError(error, hint) {
  $('banner-error').textContent = error;
  $('banner-hint').textContent = hint || '';
  $('banner-hint').hidden = !hint;
  $('banner').hidden = false;
}

function hideError() {
  $('banner').hidden = true;
}

// Runs an action whose API errors the banner already shows; anything else
// is a bug and is shown too.
async function act(fn) {
  try {
    return await fn();
  } catch (e) {
    if (!(e instanceof ApiError)) {
      console.error(e);
      showError(`Something went wrong in the page: ${e && e.message}`, 'Reload the page.');
    }
    return undefined;
  }
}

// ---------------------------------------------------------------------------
// HTTP

/**
 * Calls the API. A failure is shown in the banner (unless `quiet`) and
 * thrown as an ApiError carrying the server's `error` and `hint`.
 */
async function api(method, path, body, { quiet = false } = {}) {
  const init = { method, credentials: 'same-origin', headers: { Accept: 'application/json' } };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let resp;
  try {
    resp = await fetch(path, init);
  } catch {
    const err = new ApiError(0, 'The toolgate server cannot be reached.', 'Is `toolgate ui` still running?');
    if (!quiet) showError(err.message, err.hint);
    throw err;
  }
  const text = await resp.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (!resp.ok) {
    const fallbackHint = resp.status === 401
      ? 'This browser is not signed in: open the address `toolgate ui` printed again.'
      : null;
    const err = new ApiError(
      resp.status,
      (data && data.error) || `${method} ${path} failed (HTTP ${resp.status})`,
      (data && data.hint) || fallbackHint,
    );
    if (!quiet) showError(err.message, err.hint);
    throw err;
  }
  return data;
}

const enc = encodeURIComponent;

// ---------------------------------------------------------------------------
// Shared state

const state = {
  info: null, // GET /api/state (workspace, version, approver_only)
  agents: [], // [{name, permission, mode, locked}]
  agent: null, // the agent picked for new chats
  runs: new Map(), // session → {agent, task}: runs going on
  pending: new Map(), // approval id → {approval, el, seen}
  skipped: 0, // folded cards the last "Approve all" passed by
  route: { page: 'chat', arg: null },
};

// Events of runs, per session, since the page loaded: a run started from
// here may send events before POST /api/runs has answered with its session,
// and they are replayed once it has.
const liveEvents = new Map();
// How many runs of each session ended (`done` / `run_error`) since the page loaded.
const ended = new Map();
const endedRuns = (session) => ended.get(session) || 0;
const LIVE_SESSIONS = 20;
const LIVE_EVENTS = 1000;

function remember(ev) {
  let list = liveEvents.get(ev.session);
  if (!list) {
    if (liveEvents.size >= LIVE_SESSIONS) liveEvents.delete(liveEvents.keys().next().value);
    list = [];
    liveEvents.set(ev.session, list);
  }
  if (list.length < LIVE_EVENTS) list.push(ev);
}

// ---------------------------------------------------------------------------
// Diffs

// Whether a line opens a unified diff: `--- ` followed by `+++ `.
function diffStart(lines) {
  for (let i = 0; i + 1 < lines.length; i++) {
    if (lines[i].startsWith('--- ') && lines[i + 1].startsWith('+++ ')) return i;
  }
  return -1;
}

function diffLineClass(line) {
  if (line.startsWith('+++ ') || line.startsWith('--- ')) return 'meta';
  if (line.startsWith('@@')) return 'hunk';
  if (line.startsWith('+')) return 'add';
  if (line.startsWith('-')) return 'del';
  if (line.startsWith('\\')) return 'meta';
  return 'ctx';
}

/** A diff, one element per line, classed add / del / hunk / meta / ctx. */
function diffView(text) {
  const lines = String(text).replace(/\n$/, '').split('\n');
  return h('div', { className: 'diff', testid: 'diff' },
    lines.map((line) => h('div', { className: `line ${diffLineClass(line)}` }, line === '' ? ' ' : line)));
}

/** Tool output: plain text, with a unified diff in it shown as a diff. */
function outputView(output) {
  const text = String(output ?? '');
  const lines = text.split('\n');
  const start = diffStart(lines);
  if (start < 0) return h('pre', { className: 'output' }, text);
  const before = lines.slice(0, start).join('\n');
  return h('div', { className: 'output-with-diff' },
    before.trim() ? h('pre', { className: 'output' }, before) : null,
    diffView(lines.slice(start).join('\n')));
}

function hasDiff(output) {
  return diffStart(String(output ?? '').split('\n')) >= 0;
}

// ---------------------------------------------------------------------------
// The agent's Markdown, rendered into elements, never through HTML
//
// A small subset, read line by line: fenced code blocks, headings, lists,
// quotes, rules and paragraphs; inline code, **strong**, *emphasis* and
// [links](https://…). Every piece of text is a text node, so markup in the
// model's text stays text; a link is made only for an http or https URL,
// anything else (javascript:, data:, a relative path) stays as written.

const MD_FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)/;
const MD_HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const MD_ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const MD_QUOTE = /^ {0,3}>\s?(.*)$/;
const MD_RULE = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;
const MD_INLINE = /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)|\[([^\]\n]+)\]\(([^()\s]+)\)|\*\*(?=\S)([\s\S]*?\S)\*\*|\*(?=[^\s*])([^*]*?[^\s*])\*(?!\*)/g;

/** A link to `url` if it is http or https; null otherwise. */
function mdLink(url, children) {
  let parsed;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return null;
  const a = h('a', { testid: 'md-link' }, children);
  a.setAttribute('href', parsed.href);
  a.setAttribute('rel', 'noopener noreferrer nofollow');
  a.setAttribute('target', '_blank');
  return a;
}

/** Inline Markdown of one block's text, as nodes. */
function mdInline(text) {
  const out = [];
  let last = 0;
  for (const m of text.matchAll(MD_INLINE)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    if (m[1] !== undefined) {
      out.push(h('code', {}, m[2].length > 2 && m[2].startsWith(' ') && m[2].endsWith(' ') ? m[2].slice(1, -1) : m[2]));
    } else if (m[3] !== undefined) {
      out.push(mdLink(m[4], mdInline(m[3])) || m[0]);
    } else if (m[5] !== undefined) {
      out.push(h('strong', {}, mdInline(m[5])));
    } else {
      out.push(h('em', {}, mdInline(m[6])));
    }
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

/** The agent's Markdown text as block elements. */
function markdown(text) {
  const lines = String(text ?? '').split('\n');
  const blocks = [];
  let para = [];
  let list = null; // {el, ordered}
  const endPara = () => {
    if (para.length) blocks.push(h('p', {}, mdInline(para.join('\n'))));
    para = [];
  };
  const endList = () => {
    list = null;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = MD_FENCE.exec(line);
    if (fence) {
      endPara();
      endList();
      const body = [];
      const close = new RegExp(`^ {0,3}${fence[1][0] === '`' ? '`' : '~'}{${fence[1].length},}\\s*$`);
      for (i++; i < lines.length && !close.test(lines[i]); i++) body.push(lines[i]);
      const code = h('code', {}, body.join('\n'));
      if (fence[2]) code.dataset.lang = fence[2];
      blocks.push(h('pre', { className: 'md-code' }, code));
      continue;
    }
    if (!line.trim()) {
      endPara();
      // A blank line between items keeps the list going.
      if (list && !MD_ITEM.test(lines[i + 1] || '')) endList();
      continue;
    }
    const heading = MD_HEADING.exec(line);
    if (heading) {
      endPara();
      endList();
      blocks.push(h(`h${Math.min(heading[1].length + 2, 6)}`, { className: 'md-h' }, mdInline(heading[2])));
      continue;
    }
    if (MD_RULE.test(line)) {
      endPara();
      endList();
      blocks.push(h('hr', {}));
      continue;
    }
    const item = MD_ITEM.exec(line);
    if (item) {
      endPara();
      const ordered = /\d/.test(item[2]);
      if (!list || list.ordered !== ordered) {
        list = { el: h(ordered ? 'ol' : 'ul', {}), ordered };
        if (ordered && Number.parseInt(item[2], 10) !== 1) list.el.setAttribute('start', String(Number.parseInt(item[2], 10)));
        blocks.push(list.el);
      }
      list.el.append(h('li', {}, mdInline(item[3])));
      continue;
    }
    const quote = MD_QUOTE.exec(line);
    if (quote) {
      endPara();
      endList();
      const prev = blocks[blocks.length - 1];
      if (prev && prev.tagName === 'BLOCKQUOTE' && lines[i - 1] && MD_QUOTE.test(lines[i - 1])) {
        prev.append('\n', ...mdInline(quote[1]));
      } else {
        blocks.push(h('blockquote', {}, mdInline(quote[1])));
      }
      continue;
    }
    if (list && /^\s+\S/.test(line)) {
      // An indented line continues the last item.
      list.el.lastChild.append('\n', ...mdInline(line.trim()));
      continue;
    }
    endList();
    para.push(line);
  }
  endPara();
  return blocks;
}

// ---------------------------------------------------------------------------
// Transcript components (live events and stored sessions use the same ones)

function userBubble(text) {
  return h('div', { className: 'msg user', testid: 'user-text' },
    h('div', { className: 'who' }, 'You'),
    h('div', { className: 'body' }, text));
}

function assistantBubble(text) {
  const body = h('div', { className: 'body md', testid: 'assistant-text' }, markdown(text || ''));
  const el = h('div', { className: 'msg assistant' }, h('div', { className: 'who' }, 'Agent'), body);
  return { el, body };
}

/** One card per tool call (a `tool_call` event or a stored transcript item). */
function toolCard(call, label) {
  const ok = !!call.success;
  const diff = hasDiff(call.output);
  const output = String(call.output ?? '');
  const outputLines = output ? output.split('\n').length : 0;
  return h('article', {
    className: `card tool-card ${ok ? 'ok' : 'failed'}`,
    testid: 'tool-card',
    dataset: { name: call.name, decision: call.decision, success: String(ok) },
  },
  h('header', { className: 'card-head' },
    h('span', { className: `mark ${ok ? 'ok' : 'failed'}`, title: ok ? 'succeeded' : 'failed', aria: { label: ok ? 'succeeded' : 'failed' } }, ok ? '✓' : '✗'),
    label ? h('span', { className: 'muted' }, label) : null,
    h('code', { className: 'tool-name', testid: 'tool-name' }, call.name),
    h('span', { className: `pill decision d-${String(call.decision).replace(/[^a-z_]/g, '')}`, testid: 'decision' }, call.decision),
    call.recovered ? h('span', { className: 'pill', title: 'The model wrote this call as text; toolgate recovered it' }, 'recovered') : null,
    h('span', { className: 'spacer' }),
    call.duration_ms !== undefined ? h('span', { className: 'muted small' }, `${call.duration_ms} ms`) : null),
  h('pre', { className: 'args', testid: 'tool-args' }, prettyJson(call.arguments ?? {})),
  h('details', { className: 'output-details', open: diff || !ok },
    h('summary', {}, output ? `Output (${plural(outputLines, 'line')})` : 'Output (empty)'),
    h('div', { testid: 'tool-output' }, outputView(output))));
}

function outcomeLine(done) {
  const parts = [String(done.outcome)];
  if (done.steps !== undefined) parts.push(plural(done.steps, 'step'));
  if (Array.isArray(done.tool_calls)) parts.push(plural(done.tool_calls.length, 'tool call'));
  const files = Array.isArray(done.files_changed) && done.files_changed.length
    ? done.files_changed.join(', ') : 'none';
  parts.push(`files changed: ${files}`);
  if (done.tokens) parts.push(`${done.tokens.input} in / ${done.tokens.output} out tokens`);
  if (typeof done.cost_usd === 'number') parts.push(`$${done.cost_usd.toFixed(4)}`);
  return h('div', {
    className: `outcome o-${String(done.outcome).replace(/[^a-z_]/g, '')}`,
    testid: 'outcome',
    dataset: { outcome: done.outcome },
  },
  h('span', { className: 'outcome-label' }, 'Run ended'),
  parts.join(' · '),
  done.error ? h('div', { className: 'error-text' }, done.error) : null);
}

function runErrorBox(ev) {
  return h('div', { className: 'run-error', testid: 'run-error', role: 'status' },
    h('strong', {}, 'The run failed: '), ev.error || 'unknown error',
    ev.hint ? h('div', { className: 'hint' }, ev.hint) : null);
}

function note(text, kind = '') {
  return h('div', { className: `note ${kind}`, testid: 'note' }, text);
}

// ---------------------------------------------------------------------------
// Chat

const chat = {
  session: null, // the session shown; null: a new chat
  sessionAgent: null, // its agent, when it is a stored session
  bubble: null, // the assistant bubble text deltas go to
  bubbleText: '', // the Markdown text of that bubble so far
  textSinceCall: false, // whether model text was shown since the last call
  sending: false,
  loadGen: 0, // guards against a stale GET /api/sessions/{id}
};

function transcript() {
  return $('transcript');
}

function addToTranscript(node) {
  const stick = nearBottom();
  transcript().append(node);
  if (stick) scrollToBottom();
}

function nearBottom() {
  const doc = document.scrollingElement || document.documentElement;
  return doc.scrollHeight - doc.scrollTop - doc.clientHeight < 160;
}

function scrollToBottom() {
  if (state.route.page !== 'chat') return;
  const doc = document.scrollingElement || document.documentElement;
  doc.scrollTop = doc.scrollHeight;
}

function appendText(delta) {
  if (!chat.bubble) {
    const { el, body } = assistantBubble('');
    addToTranscript(el);
    chat.bubble = body;
    chat.bubbleText = '';
  }
  const stick = nearBottom();
  // Rendered whole at each piece: a fence or a list may only close later.
  chat.bubbleText += delta;
  chat.bubble.replaceChildren(...markdown(chat.bubbleText));
  if (delta.trim()) chat.textSinceCall = true;
  if (stick) scrollToBottom();
}

/** Shows one event of a run of the session the chat shows. */
function renderRunEvent(ev) {
  switch (ev.type) {
    case 'start':
      chat.bubble = null;
      chat.textSinceCall = false;
      showModel({ model: ev.model, server: ev.server }, true);
      break;
    case 'step':
      chat.bubble = null;
      break;
    case 'text':
      appendText(String(ev.delta ?? ''));
      break;
    case 'tool_call':
      chat.bubble = null;
      chat.textSinceCall = false;
      addToTranscript(toolCard(ev));
      break;
    case 'done':
      chat.bubble = null;
      // Text is normally streamed as `text` events; the report's final text
      // is shown only when none was.
      if (!chat.textSinceCall && ev.final_text) addToTranscript(assistantBubble(ev.final_text).el);
      addToTranscript(outcomeLine(ev));
      break;
    case 'run_error':
      chat.bubble = null;
      addToTranscript(runErrorBox(ev));
      break;
    case 'subagent':
      renderSubagent(ev);
      break;
    case 'summary':
      addToTranscript(note(`Stopping: ${ev.reason}; asking the model for a summary.`));
      chat.bubble = null;
      break;
    case 'warning':
      addToTranscript(note(`Warning: ${ev.message}`, 'warn'));
      break;
    case 'gate_failed':
      addToTranscript(note(`Quality gate failed: ${ev.name}; its output went back to the model.`, 'warn'));
      break;
    case 'budget_warning':
      addToTranscript(note(`Budget: $${Number(ev.spent_usd).toFixed(4)} of $${Number(ev.budget_usd).toFixed(4)} spent.`, 'warn'));
      break;
    case 'context_compress':
      addToTranscript(note(`Context compressed: ${ev.removed_chars} characters elided.`));
      break;
    case 'provider_switch':
      addToTranscript(note(`Model: ${ev.from} → ${ev.to} (${ev.reason})`));
      break;
    case 'plan':
      addToTranscript(note(ev.mode
        ? `Plan approved: the run goes on in mode ${ev.mode}.`
        : ev.answer === 'keep_planning'
          ? 'Plan not approved yet: plan mode stays on.'
          : 'Nobody could approve the plan: plan mode stays on.'));
      break;
    case 'routed': {
      const cats = Array.isArray(ev.categories) && ev.categories.length ? ev.categories.join(', ') : 'no category';
      const n = Array.isArray(ev.tools) ? ev.tools.length : 0;
      addToTranscript(note(`Routing: ${cats} — ${plural(n, 'tool')}${ev.reason ? ` (${ev.reason})` : ''}`));
      break;
    }
    default:
      break;
  }
}

// A delegated run: its tool calls get cards, the rest one-line notes.
function renderSubagent(ev) {
  const inner = ev.event || {};
  const who = `subagent ${ev.agent}`;
  if (inner.type === 'tool_call') addToTranscript(toolCard(inner, who));
  else if (inner.type === 'text') return;
  else if (inner.type === 'step') addToTranscript(note(`${who}: step ${inner.step}`));
  else addToTranscript(note(`${who}: ${inner.type}`));
}

/**
 * The model line under the chat toolbar: the configured model and server,
 * until a run's `start` event says which ones it really uses (`used`).
 */
function showModel(llm, used = false) {
  const el = $('chat-model');
  const model = llm && llm.model;
  const server = llm && llm.server;
  el.dataset.source = used ? 'run' : 'config';
  clear(el).append(
    h('span', { className: 'muted' }, used ? 'Model' : 'Model (configured)'), ' ',
    model ? h('code', { testid: 'model-name' }, model)
      : h('span', { className: 'muted', testid: 'model-name' }, 'the one the server serves'),
    ' ', h('span', { className: 'muted' }, 'on'), ' ',
    server ? h('code', { testid: 'model-server' }, server)
      : h('span', { className: 'muted', testid: 'model-server' }, 'a server found when a run starts (Ollama, llama.cpp, LM Studio, vLLM), or the provider\'s API'));
}

function updateChatControls() {
  const running = chat.session !== null && state.runs.has(chat.session);
  const approverOnly = !!(state.info && state.info.approver_only);
  $('stop').hidden = !running;
  $('working').hidden = !(running || chat.sending);
  const send = $('send');
  send.disabled = running || chat.sending || approverOnly;
  send.title = running ? 'A run of this session is going: wait for it or stop it.' : '';
  // Under `run|mcp serve --approver ui` the page only answers approvals.
  $('composer').hidden = approverOnly;
  $('chat-toolbar').hidden = approverOnly;
  $('chat-model').hidden = approverOnly;
  $('approver-only').hidden = !approverOnly;
  $('transcript').hidden = approverOnly && chat.session === null;
  // A new chat has no title: the button next to it says "New chat" already.
  $('chat-title').textContent = chat.session ? `Session ${shortId(chat.session)}` : '';
  $('chat-title').hidden = !chat.session;
  $('chat-title').title = chat.session || '';
  const select = $('agent-select');
  // A resumed session keeps its agent.
  select.disabled = chat.session !== null || approverOnly;
  select.title = chat.session !== null ? 'A session keeps its agent' : '';
  renderPermission();
}

function resetChat() {
  chat.loadGen++;
  showModel(state.info && state.info.llm);
  chat.session = null;
  chat.sessionAgent = null;
  chat.bubble = null;
  chat.textSinceCall = false;
  clear(transcript());
  renderAgents();
  renderApprovals();
  updateChatControls();
}

function currentAgent() {
  return chat.sessionAgent || state.agent;
}

async function send() {
  const input = $('task-input');
  const task = input.value.trim();
  if (!task || chat.sending) return;
  chat.sending = true;
  updateChatControls();
  const session = chat.session;
  const agent = currentAgent();
  const gen = chat.loadGen;
  const endedBefore = session ? endedRuns(session) : 0;
  chat.bubble = null;
  chat.textSinceCall = false;
  const bubble = userBubble(task);
  addToTranscript(bubble);
  scrollToBottom();
  try {
    const resp = await api('POST', '/api/runs', { task, agent, session });
    input.value = '';
    // A fast run may have ended before this answer came: only a run whose
    // `done` has not been seen yet is marked as going.
    if (endedRuns(resp.session) === endedBefore) state.runs.set(resp.session, { agent, task });
    if (session === null && chat.session === null && gen === chat.loadGen) adoptSession(resp.session, agent);
  } catch (e) {
    bubble.classList.add('unsent');
    if (!(e instanceof ApiError)) throw e;
  } finally {
    chat.sending = false;
    updateChatControls();
  }
}

// A new chat became a session: show the events it already sent.
function adoptSession(session, agent) {
  chat.session = session;
  chat.sessionAgent = agent;
  history.replaceState(null, '', `#/chat/${enc(session)}`);
  state.route = { page: 'chat', arg: session };
  for (const ev of liveEvents.get(session) || []) renderRunEvent(ev);
  renderApprovals();
}

async function stop() {
  if (!chat.session) return;
  $('stop').disabled = true;
  try {
    // The run says what happens next (`summary`, then `done`).
    await api('POST', `/api/runs/${enc(chat.session)}/stop`);
  } finally {
    $('stop').disabled = false;
  }
}

/** Shows a stored session (`#/chat/<id>`); sending a message resumes it. */
async function openSession(id) {
  const gen = ++chat.loadGen;
  chat.session = id;
  chat.sessionAgent = null;
  chat.bubble = null;
  chat.textSinceCall = false;
  clear(transcript());
  renderApprovals();
  updateChatControls();
  addToTranscript(note('Loading the session…'));
  let data;
  try {
    data = await api('GET', `/api/sessions/${enc(id)}`);
  } catch (e) {
    if (gen === chat.loadGen) clear(transcript()).append(note('This session could not be loaded.', 'warn'));
    throw e;
  }
  if (gen !== chat.loadGen) return;
  clear(transcript());
  const s = data.session || {};
  chat.sessionAgent = s.agent || null;
  addToTranscript(h('div', { className: 'session-head', testid: 'session-head' },
    h('strong', {}, s.task || '(no task)'),
    h('span', { className: 'muted small' },
      [`agent ${s.agent}`, plural(s.runs || 0, 'run'), plural(s.steps || 0, 'step'), `updated ${fmtTime(s.updated)}`].join(' · '))));
  for (const item of data.transcript || []) {
    if (item.kind === 'user') addToTranscript(userBubble(item.text));
    else if (item.kind === 'assistant') addToTranscript(assistantBubble(item.text).el);
    else if (item.kind === 'tool_call') addToTranscript(toolCard(item));
  }
  if (s.outcome && !s.running) {
    addToTranscript(h('div', { className: 'outcome stored', testid: 'session-summary', dataset: { outcome: s.outcome } },
      h('span', { className: 'outcome-label' }, 'Last outcome'), `${s.outcome} · type below to continue this session`));
  }
  if (s.running) state.runs.set(id, { agent: s.agent, task: s.task });
  renderAgents();
  updateChatControls();
  scrollToBottom();
  let cps = null;
  try {
    cps = await api('GET', `/api/sessions/${enc(id)}/checkpoints`, undefined, { quiet: true });
  } catch {
    cps = null;
  }
  if (cps && gen === chat.loadGen) addToTranscript(checkpointsPanel(id, cps.checkpoints || [], !!s.running));
}

/** Each step of a session that changed files, with a rewind action; and
 * the undo of the last rewind. A rewind is POST /api/sessions/{id}/rewind. */
function checkpointsPanel(id, checkpoints, running) {
  const changed = checkpoints.filter((c) => (c.changes || []).length);
  // A rewind changes files: the first click arms the button (its text
  // becomes the question), the second does it. No native dialog.
  const rewind = (button, body, question) => {
    if (button.dataset.armed !== 'true') {
      button.dataset.armed = 'true';
      button.dataset.label = button.textContent;
      button.textContent = `${question} Click again to confirm`;
      button.classList.add('armed');
      setTimeout(() => {
        if (!button.isConnected || button.dataset.armed !== 'true') return;
        button.dataset.armed = 'false';
        button.textContent = button.dataset.label;
        button.classList.remove('armed');
      }, 8000);
      return;
    }
    button.dataset.armed = 'false';
    return rewindNow(body);
  };
  const rewindNow = (body) => act(async () => {
    const r = await api('POST', `/api/sessions/${enc(id)}/rewind`, body);
    const conflicts = (r.conflicts || []).map((c) => c.path);
    await openSession(id);
    addToTranscript(note(`${plural((r.restored || []).length, 'file')} put back` +
      (conflicts.length ? `; changed since by someone else, left alone: ${conflicts.join(', ')}` : ''),
    conflicts.length ? 'warn' : ''));
  });
  const rows = changed.map((c) => h('li', { className: 'checkpoint', testid: 'checkpoint', dataset: { step: String(c.step) } },
    h('strong', {}, `Step ${c.step}`),
    c.rewound_by ? h('span', { className: 'pill', title: `undone by rewind ${c.rewound_by}` }, 'rewound') : null,
    h('span', { className: 'muted small' }, ' ' + c.changes.map((x) => `${changeKind(x)} ${x.path}`).join(', ')),
    c.incomplete ? h('div', { className: 'hint' }, `Cannot be fully undone: ${c.incomplete}`) : null,
    h('button', {
      type: 'button', className: 'small-button', testid: 'rewind-step', disabled: running,
      title: running ? 'Stop the run first' : 'Put the files back as they were before this step',
      on: { click: (e) => rewind(e.currentTarget, { to_step: c.step, what: 'code' }, `Put the workspace back as it was before step ${c.step}?`) },
    }, `Rewind to before step ${c.step}`)));
  return h('details', { className: 'card checkpoints', testid: 'checkpoints', open: false },
    h('summary', {}, `Checkpoints (${plural(changed.length, 'step')} changed files)`),
    rows.length ? h('ul', {}, ...rows) : note('No step of this session changed files.'),
    h('button', {
      type: 'button', className: 'small-button', testid: 'rewind-undo', disabled: running,
      on: { click: (e) => rewind(e.currentTarget, { undo: true }, 'Undo the last rewind of this session?') },
    }, 'Undo the last rewind'));
}

function changeKind(c) {
  if (!c.before || c.before.kind === 'absent') return 'created';
  if (!c.after || c.after.kind === 'absent') return 'deleted';
  return 'modified';
}

// ---------------------------------------------------------------------------
// Agents and the permission toggle

function agentInfo(name) {
  return state.agents.find((a) => a.name === name) || null;
}

function renderAgents() {
  const select = $('agent-select');
  const shown = currentAgent();
  clear(select);
  const names = state.agents.map((a) => a.name);
  if (shown && !names.includes(shown)) names.push(shown);
  for (const name of names) select.append(h('option', { value: name, selected: name === shown }, name));
  renderPermission();
}

const MODE_NOTES = {
  plan: 'plan mode: only read-only calls run until you approve the model\'s plan',
};

const PERMISSION_NOTES = {
  sandbox: 'asks before sensitive calls',
  full: 'no approvals; workspace limits and the sandbox still apply',
  plan: MODE_NOTES.plan,
};

function renderPermission() {
  const agent = agentInfo(currentAgent());
  const group = $('permission-toggle');
  const permission = agent ? agent.permission : null;
  group.dataset.permission = permission || '';
  for (const button of group.querySelectorAll('button')) {
    button.setAttribute('aria-pressed', String(button.dataset.value === permission));
    button.disabled = !agent || !!agent.locked || !!(state.info && state.info.approver_only);
    button.title = agent && agent.locked
      ? `Set on the command line (--mode ${agent.mode})`
      : button.dataset.value === 'full'
        ? 'Run without approvals (saved in your config)'
        : button.dataset.value === 'plan'
          ? 'Start runs in plan mode: read-only until you approve the plan (saved in your config)'
          : 'Ask before sensitive calls';
  }
  // The agent's own mode when it says more than the toggle (plan mode).
  const own = agent && MODE_NOTES[agent.mode];
  const noteText = agent
    ? `${agent.locked ? `locked by --mode: ${agent.mode}` : own || PERMISSION_NOTES[permission] || `mode ${agent.mode}`}`
    : '';
  $('permission-note').textContent = noteText;
  $('permission-note').title = noteText;
}

async function setPermission(permission) {
  const name = currentAgent();
  const agent = agentInfo(name);
  if (!agent || agent.permission === permission) return;
  const resp = await api('PUT', `/api/agents/${enc(name)}/permission`, { permission });
  agent.permission = resp.permission;
  agent.mode = resp.mode;
  renderPermission();
}

// ---------------------------------------------------------------------------
// Approvals
//
// A card shows the gate's one description of the call: the same lines the
// terminal prompt prints (the server built them, neutralised), coloured by
// their role. A long description comes folded, with its head and tail and
// exactly how much is left out; nothing but Deny is taken from a folded card
// until the person has shown everything (the server refuses it too).

const ANSWER_WORDS = {
  allow: 'allowed',
  deny: 'denied',
  session: 'allowed for this session',
  always: 'always allowed (rule saved)',
  cancelled: 'cancelled (the run stopped)',
  keep_planning: 'kept planning',
  'accept-edits': 'plan approved: accept-edits',
  'confirm-sensitive': 'plan approved: confirm-sensitive',
  yolo: 'plan approved: yolo',
};

function ruleText(rule) {
  if (!rule) return '';
  let s = `${rule.decision || 'allow'} ${rule.tool}`;
  if (rule.command) s += ` command ${rule.command}`;
  if (rule.path) s += ` path ${rule.path}`;
  return s;
}

// What an answered call was about, for its one-line record in the chat.
function approvalSubject(a) {
  const actions = (a.view && Array.isArray(a.view.actions)) ? a.view.actions : [];
  let subject = '';
  const paths = actions.filter((x) => x.path).map((x) => x.path);
  const commands = actions.filter((x) => x.kind === 'command').map((x) => x.command);
  if (paths.length) subject = paths.join(', ');
  else if (commands.length) subject = commands.join('; ');
  else if (a.view && a.view.origin && a.view.origin.kind === 'mcp') subject = `${a.view.origin.server} / ${a.view.origin.tool}`;
  const max = 160;
  return subject.length > max ? `${subject.slice(0, max)}… (${subject.length - max} more characters)` : subject;
}

function argsView(args, summary) {
  const pre = h('pre', { className: 'args', testid: 'approval-args' }, prettyJson(args ?? {}));
  return summary ? h('details', { className: 'args-details' }, h('summary', {}, summary), pre) : pre;
}

// The lines of an approval but its title (the card's head says it), one
// element each; `role` picks the colour.
function approvalLines(lines) {
  return (lines || []).filter((l) => l.role !== 'title').map((l) => h('div', {
    className: `aline role-${String(l.role).replace(/[^a-z_]/g, '')}`,
  }, l.text === '' ? ' ' : l.text));
}

function isMine(a) {
  return !!a.session && a.session === chat.session;
}

// Where the call comes from: this chat, or else who asks (the run, an MCP
// client's session) and the session to open.
function approvalSource(a) {
  if (isMine(a)) return h('span', { className: 'pill this-chat' }, 'this chat');
  const scope = a.view && a.view.scope;
  return h('span', { className: 'approval-source' },
    scope ? h('span', { className: 'muted small', testid: 'approval-scope' }, `asked by ${scope}`) : null,
    a.session ? h('button', {
      type: 'button', className: 'link', testid: 'open-session', title: a.session,
      on: { click: () => { location.hash = `#/chat/${enc(a.session)}`; } },
    }, `session ${shortId(a.session)}`) : null);
}

// The tool's origin, when it is not one of toolgate's own.
function approvalOrigin(a) {
  const origin = a.view && a.view.origin;
  if (!origin) return null;
  if (origin.kind === 'mcp') {
    return h('span', {
      className: 'pill origin', testid: 'approval-origin',
      title: `tool ${origin.tool} of the MCP server ${origin.server}`,
    }, `MCP ${origin.server}`);
  }
  if (origin.kind === 'dynamic') {
    return h('span', { className: 'pill origin', testid: 'approval-origin' }, 'model-written tool');
  }
  return null;
}

// What each mode a plan may go on in means, for its button's title.
const PLAN_MODE_NOTES = {
  'accept-edits': 'File edits in the workspace run without asking; commands ask as usual',
  'confirm-sensitive': 'Ask before every sensitive call (the default)',
  yolo: 'Ask nothing (blocked commands, guardrails and the sandbox still apply)',
};

/** A plan the model presents to leave plan mode: the plan as text, a
 * button per mode to go on in, and "Keep planning" with feedback. */
function planCard(entry) {
  const a = entry.approval;
  const feedback = h('input', {
    type: 'text', className: 'plan-feedback', testid: 'plan-feedback',
    placeholder: 'What should the model change? (optional)',
  });
  const answer = (body) => act(async () => {
    const buttons = card.querySelectorAll('.actions button');
    for (const b of buttons) b.disabled = true;
    try {
      const resp = await api('POST', `/api/approvals/${enc(a.id)}/plan`, body);
      resolveApproval(a.id, resp && resp.mode ? resp.mode : 'keep_planning');
    } catch (e) {
      for (const b of buttons) b.disabled = false;
      if (e instanceof ApiError && e.status === 404) await refreshApprovals();
      throw e;
    }
  });
  const modes = (a.choices || []).map((mode, i) => h('button', {
    type: 'button', className: i === 0 ? 'primary' : '', testid: 'plan-mode',
    dataset: { mode }, title: PLAN_MODE_NOTES[mode] || mode,
    on: { click: () => answer({ mode }) },
  }, `Approve: ${mode}`));
  const card = h('article', {
    className: `card approval-card plan-card${isMine(a) ? ' mine' : ''}`,
    testid: 'plan-card',
    dataset: { id: a.id, session: a.session || '' },
  },
  h('header', { className: 'card-head' },
    h('span', { className: 'approval-label' }, 'Plan'),
    h('code', { className: 'tool-name', testid: 'tool-name' }, a.tool),
    a.agent ? h('span', { className: 'muted small' }, `agent ${a.agent}`) : null,
    h('span', { className: 'spacer' }),
    approvalSource(a)),
  h('p', { className: 'why', testid: 'why' }, a.why || ''),
  h('pre', { className: 'plan-text', testid: 'plan-text' }, a.plan || ''),
  h('div', { className: 'actions' },
    ...modes,
    h('button', {
      type: 'button', className: 'danger', testid: 'keep-planning',
      title: 'The run stays in plan mode; the model gets your feedback',
      on: { click: () => answer({ feedback: feedback.value }) },
    }, 'Keep planning')),
  feedback);
  return card;
}

/** A pending call's card: what it would do, and the four answers. */
function approvalCard(entry) {
  const a = entry.approval;
  if (a.kind === 'plan') return planCard(entry);
  const mine = isMine(a);
  const folded = a.folded || { lines: a.lines || [], hidden: null };
  const hidden = folded.hidden || null;
  const always = a.always ? ruleText(a.always) : null;
  const noRule = 'No narrow rule fits this call; allow it, or allow it for the session';
  const button = (answer, label, testid, cls, title) => h('button', {
    type: 'button', className: cls, testid, title, dataset: { answer, title },
    on: { click: () => act(() => answerApproval(a.id, answer)) },
  }, label);
  const actions = h('div', { className: 'actions' },
    button('allow', 'Allow', 'approve', 'primary', 'Allow this call (key a)'),
    button('deny', 'Deny', 'deny', 'danger', 'Deny this call; the model is told (key d)'),
    button('session', 'Allow for session', 'allow-session', '',
      'Allow this and later calls of this tool with the same sensitivity in this session'),
    button('always', 'Always allow', 'always-allow', '',
      always ? `Saves the rule “${always}” in your config, then allows` : noRule));
  const lines = h('div', { className: 'approval-lines', testid: 'approval-lines' },
    approvalLines(entry.seen ? a.lines : folded.lines));
  const fold = hidden && !entry.seen ? h('div', { className: 'folded-bar' },
    h('button', {
      type: 'button', className: 'expand', testid: 'approval-expand',
      on: {
        click: () => {
          entry.seen = true;
          append(clear(lines), [approvalLines(a.lines)]);
          fold.remove();
          setAnswerable(card, entry, always);
          renderApprovalsNote();
        },
      },
    }, `Show everything (${hidden.text})`),
    h('span', { className: 'small' }, 'This card leaves part of the call out: allowing waits until you have seen it all.')) : null;
  const card = h('article', {
    className: `card approval-card${mine ? ' mine' : ''}`,
    testid: 'approval-card',
    dataset: { id: a.id, session: a.session || '' },
  },
  h('header', { className: 'card-head' },
    h('span', { className: 'approval-label' }, 'Approve?'),
    h('code', { className: 'tool-name', testid: 'tool-name' }, a.tool),
    approvalOrigin(a),
    a.agent ? h('span', { className: 'muted small' }, `agent ${a.agent}`) : null,
    h('span', { className: 'spacer' }),
    approvalSource(a)),
  h('p', { className: 'why', testid: 'why' }, a.why || ''),
  a.worker_gone ? h('p', { className: 'note warn', testid: 'worker-gone' },
    `The worker that asked (${a.worker}) has stopped. The client retries such a call with the same key, `
    + 'and your answer is what the retry gets: answer as for the call itself.') : null,
  lines,
  fold,
  actions,
  h('div', { className: 'muted small always-rule', testid: always ? 'always-rule' : undefined },
    always ? `Always allow saves: ${always}` : `Always allow: ${noRule.toLowerCase()}`));
  setAnswerable(card, entry, always);
  return card;
}

// Whether a card's answers can be given, and the buttons' titles saying
// why one cannot.
function setAnswerable(card, entry, always) {
  const unseen = isUnseen(entry);
  if (unseen) card.dataset.unseen = '1';
  else delete card.dataset.unseen;
  for (const b of card.querySelectorAll('.actions button')) {
    const { answer } = b.dataset;
    if (answer === 'deny') continue;
    if (unseen) {
      b.disabled = true;
      b.title = `Show everything first: ${entry.approval.folded.hidden.text}`;
    } else {
      b.disabled = answer === 'always' && !always;
      b.title = b.dataset.title;
    }
  }
}

function sortedPending() {
  return [...state.pending.values()].sort((x, y) => (x.approval.created || 0) - (y.approval.created || 0));
}

const newEntry = (a) => ({ approval: a, el: null, seen: false });

function addApproval(a) {
  if (!a || a.id === undefined || state.pending.has(String(a.id))) return;
  const entry = newEntry(a);
  state.pending.set(String(a.id), entry);
  renderApprovals();
  if (state.route.page === 'chat' && entry.el) revealCard(entry.el);
}

// Brings a new card into view: whole, its answers included, when it fits
// below the page's head; else from its top.
function revealCard(el) {
  const top = $('head').getBoundingClientRect().bottom;
  const r = el.getBoundingClientRect();
  const margin = 8;
  if (r.top >= top && r.bottom <= window.innerHeight) return;
  if (r.height + 2 * margin <= window.innerHeight - top) {
    window.scrollBy(0, r.top < top ? r.top - top - margin : r.bottom - window.innerHeight + margin);
  } else {
    window.scrollBy(0, r.top - top - margin);
  }
}

// The list anew from the server (the page connected, or fell behind): cards
// still pending keep what the person did with them.
function replaceApprovals(list) {
  const before = state.pending;
  state.pending = new Map();
  for (const a of list || []) {
    const id = String(a.id);
    state.pending.set(id, before.get(id) || newEntry(a));
  }
  renderApprovals();
}

/** An answered approval leaves the list; in its own chat it leaves a record. */
function resolveApproval(id, answer) {
  const entry = state.pending.get(String(id));
  if (!entry) return;
  state.pending.delete(String(id));
  const a = entry.approval;
  if (isMine(a)) {
    chat.bubble = null;
    const subject = approvalSubject(a);
    addToTranscript(h('div', {
      className: `approval-record a-${answer}`, testid: 'approval-record', dataset: { answer },
    }, h('code', {}, a.tool), subject ? ` ${subject}` : '', ` — ${ANSWER_WORDS[answer] || answer}`));
  }
  renderApprovals();
}

// Rebuilds the pending list (cards are cheap; answers in flight keep their
// disabled buttons because their cards are reused).
function renderApprovals() {
  const list = $('approvals-list');
  const entries = sortedPending();
  clear(list);
  for (const entry of entries) {
    if (!entry.el || entry.el.classList.contains('mine') !== isMine(entry.approval)) entry.el = approvalCard(entry);
    list.append(entry.el);
  }
  const n = entries.length;
  $('approvals').hidden = n === 0;
  // While calls wait, the task box stays below them instead of over them.
  $('page-chat').classList.toggle('waiting', n > 0);
  $('approvals-count').textContent = n === 1 ? '1 call waits for you' : `${n} calls wait for you`;
  $('approve-all').hidden = n < 2;
  $('deny-all').hidden = n < 2;
  renderApprovalsNote();
  const badge = document.querySelector('[data-testid="nav-badge"]');
  badge.textContent = String(n);
  badge.hidden = n === 0;
  document.title = n ? `(${n}) toolgate` : 'toolgate';
}

// Whether a card is folded and the person has not shown it whole yet:
// then nothing but Deny is taken, and "Approve all" passes it by.
const isUnseen = (entry) => !!(entry.approval.folded && entry.approval.folded.hidden) && !entry.seen;
const unseenPending = () => sortedPending().filter(isUnseen);

// Says what "Approve all" does with folded cards: before, that it will
// skip them; after, that it did.
function renderApprovalsNote() {
  const unseen = unseenPending().length;
  if (!unseen) state.skipped = 0;
  const them = unseen === 1 ? 'it' : 'each';
  let text = '';
  if (state.skipped) {
    text = `Approve all left ${plural(state.skipped, 'folded card')} waiting: show everything on ${them}, then answer ${them}.`;
  } else if (unseen && state.pending.size > 1) {
    text = `Approve all skips ${plural(unseen, 'folded card')}: show everything on ${them} first.`;
  }
  $('approvals-note').textContent = text;
  $('approvals-note').hidden = !text;
}

async function answerApproval(id, answer) {
  const entry = state.pending.get(String(id));
  if (!entry) return;
  if (answer !== 'deny' && isUnseen(entry)) {
    showError('This card leaves part of the call out: show everything on it before allowing it.');
    return;
  }
  const buttons = entry.el ? entry.el.querySelectorAll('.actions button') : [];
  const wasDisabled = [...buttons].map((b) => b.disabled);
  for (const b of buttons) b.disabled = true;
  try {
    const resp = await api('POST', `/api/approvals/${enc(id)}`, { answer, seen: entry.seen });
    resolveApproval(id, (resp && resp.answer) || answer);
  } catch (e) {
    buttons.forEach((b, i) => { b.disabled = wasDisabled[i]; });
    // Answered elsewhere or the run stopped: the list is stale.
    if (e instanceof ApiError && e.status === 404) await refreshApprovals();
    throw e;
  }
}

async function answerAll(answer) {
  const entries = sortedPending();
  if (!entries.length) return;
  const ids = entries.map((e) => String(e.approval.id));
  // Folded cards the person has not shown whole stay pending on "Approve
  // all" (the server passes them by too).
  const seen = entries.filter((e) => e.seen).map((e) => String(e.approval.id));
  const skipped = answer === 'allow' ? unseenPending().length : 0;
  const resp = await api('POST', '/api/approvals', { answer, ids, seen });
  state.skipped = skipped;
  for (const id of (resp && resp.resolved) || []) resolveApproval(id, answer);
  renderApprovalsNote();
}

async function refreshApprovals() {
  const list = await api('GET', '/api/approvals', undefined, { quiet: true });
  replaceApprovals(list);
}

// `a` / `d` answer the oldest pending call, unless the person is typing.
function onKey(e) {
  if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey || e.repeat) return;
  if (e.key !== 'a' && e.key !== 'd') return;
  if (state.route.page !== 'chat') return;
  const t = e.target;
  if (t && (t.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(t.tagName))) return;
  const first = sortedPending()[0];
  // A plan is answered with its own buttons, never by a key.
  if (!first || first.approval.kind === 'plan') return;
  e.preventDefault();
  act(() => answerApproval(first.approval.id, e.key === 'a' ? 'allow' : 'deny'));
}

// ---------------------------------------------------------------------------
// Events

const RUN_EVENTS = new Set([
  'start', 'step', 'text', 'tool_call', 'routed', 'provider_switch', 'subagent',
  'context_compress', 'gate_failed', 'budget_warning', 'summary', 'warning', 'done', 'run_error',
]);

function onEvent(ev) {
  switch (ev.type) {
    case 'hello':
      replaceApprovals(ev.pending);
      setRuns(ev.runs);
      return;
    case 'approval':
      addApproval(ev);
      return;
    case 'approval_resolved':
      resolveApproval(ev.id, ev.answer);
      return;
    case 'rules_changed':
      if (state.route.page === 'rules') act(() => showPage('rules'));
      return;
    case 'permission_changed': {
      const agent = agentInfo(ev.agent);
      if (agent) {
        agent.permission = ev.permission;
        agent.mode = ev.mode;
      }
      renderPermission();
      return;
    }
    case 'lagged':
      // The page fell behind the event stream and missed events: reload
      // what it shows.
      act(async () => {
        await loadState();
        if (chat.session) await openSession(chat.session);
      });
      return;
    case 'dynamic_changed':
      if (state.route.page === 'tools') act(() => showPage('tools'));
      return;
    default:
      break;
  }
  if (!RUN_EVENTS.has(ev.type) || !ev.session) return;
  if (ev.type === 'start') state.runs.set(ev.session, { agent: ev.agent, task: ev.task });
  if (ev.type === 'done' || ev.type === 'run_error') {
    state.runs.delete(ev.session);
    ended.set(ev.session, endedRuns(ev.session) + 1);
  }
  remember(ev);
  if (ev.session === chat.session) renderRunEvent(ev);
  updateChatControls();
  if (state.route.page === 'sessions' && (ev.type === 'start' || ev.type === 'done' || ev.type === 'run_error')) {
    act(() => showPage('sessions'));
  }
}

function setRuns(runs) {
  state.runs.clear();
  for (const r of runs || []) state.runs.set(r.session, r);
  updateChatControls();
}

let events = null;
let reconnectTimer = null;

// EventSource reconnects by itself after a dropped connection; after a
// refused one (say 401) it gives up, so it is opened again after a while.
function connectEvents() {
  if (events) events.close();
  setConn('connecting');
  events = new EventSource('/api/events');
  events.addEventListener('open', () => setConn('live'));
  events.addEventListener('message', (msg) => {
    let ev;
    try {
      ev = JSON.parse(msg.data);
    } catch {
      return;
    }
    if (ev && typeof ev === 'object') onEvent(ev);
  });
  events.addEventListener('error', () => {
    if (events.readyState === EventSource.CLOSED) {
      setConn('offline');
      clearTimeout(reconnectTimer);
      reconnectTimer = setTimeout(connectEvents, 3000);
    } else {
      setConn('connecting');
    }
  });
}

function setConn(s) {
  const el = $('conn');
  el.dataset.state = s;
  el.textContent = s;
  el.title = {
    live: 'Receiving events',
    connecting: 'Connecting to the event stream',
    offline: 'Not connected: retrying',
  }[s];
}

// ---------------------------------------------------------------------------
// Other pages

let pageGen = 0;

function pageTitle(text, ...extra) {
  return h('div', { className: 'page-head' }, h('h1', {}, text), ...extra);
}

function empty(text) {
  return h('p', { className: 'empty muted', testid: 'empty' }, text);
}

function table(headers, rows, testid) {
  return h('div', { className: 'table-wrap' }, h('table', { className: 'table', testid },
    // A header is its text, or [text, class].
    h('thead', {}, h('tr', {}, headers.map((t) => (Array.isArray(t) ? h('th', { className: t[1] }, t[0]) : h('th', {}, t))))),
    h('tbody', {}, rows)));
}

async function sessionsPage() {
  const sessions = await api('GET', '/api/sessions');
  const rows = (sessions || []).map((s) => {
    const open = () => {
      // Opened from this list, a session is read again from the store, even
      // when the chat already shows it.
      if (chat.session === s.id) chat.session = null;
      location.hash = `#/chat/${enc(s.id)}`;
    };
    return h('tr', {
      className: 'clickable', testid: 'session-row', tabIndex: 0,
      title: 'Open this session in the chat',
      dataset: { id: s.id, runs: s.runs, outcome: s.outcome },
      on: { click: open, keydown: (e) => { if (e.key === 'Enter') open(); } },
    },
    h('td', { className: 'task-cell' }, h('div', { className: 'task-text' }, s.task || '(no task)'), h('div', { className: 'muted small mono' }, shortId(s.id))),
    h('td', {}, s.agent || ''),
    h('td', {}, s.running
      ? h('span', { className: 'pill running', testid: 'running' }, 'running')
      : h('span', { className: `pill o-${String(s.outcome).replace(/[^a-z_]/g, '')}` }, s.outcome || '')),
    h('td', { className: 'num', testid: 'session-runs' }, String(s.runs ?? '')),
    h('td', { className: 'num' }, String(s.steps ?? '')),
    h('td', { className: 'num muted' }, `${s.input_tokens ?? 0} / ${s.output_tokens ?? 0}`),
    h('td', { className: 'muted' }, fmtTime(s.updated)));
  });
  return [
    pageTitle('Sessions', h('span', { className: 'muted small' }, 'newest first · open one to read it or continue it')),
    rows.length
      ? table(['Task', 'Agent', 'Outcome', 'Runs', 'Steps', 'Tokens', 'Updated'], rows, 'sessions')
      : empty('No sessions yet: start one in the chat.'),
  ];
}

async function rulesPage() {
  const data = await api('GET', '/api/rules');
  const rules = (data && data.rules) || [];
  const stored = (r) => r.source === 'store';
  const rows = rules.map((r) => h('tr', { testid: 'rule-row', dataset: stored(r) ? { id: r.id, source: 'store' } : { number: r.number, source: 'file' } },
    h('td', { className: 'num' }, stored(r) ? `store ${r.id}` : String(r.number)),
    h('td', {}, h('code', {}, r.tool)),
    h('td', {}, r.command ? h('code', {}, r.command) : h('span', { className: 'muted' }, 'any')),
    h('td', {}, r.path ? h('code', {}, r.path) : h('span', { className: 'muted' }, 'any')),
    h('td', {}, h('span', { className: `pill rule-${String(r.decision).replace(/[^a-z]/g, '')}` }, r.decision)),
    h('td', {}, h('button', {
      type: 'button', className: 'danger small-button', testid: 'rule-remove',
      on: { click: () => act(async () => { await api('DELETE', stored(r) ? `/api/rules/store/${enc(r.id)}` : `/api/rules/${enc(r.number)}`); await showPage('rules'); }) },
    }, 'Remove'))));
  return [
    pageTitle('Rules', h('span', { className: 'muted small' }, 'confirmation.rules in ', h('code', {}, (data && data.file) || 'your config'),
      data && data.store ? ' · "store N": saved in the shared store, applied by every worker' : '')),
    rows.length
      ? table(['#', 'Tool', 'Command prefix', 'Path glob', 'Decision', ''], rows, 'rules')
      : empty('No rules: every sensitive call asks.'),
    ruleForm(Boolean(data && data.store)),
  ];
}

// One form, kept across refreshes of the page (a `rules_changed` event
// reloads the table while the person may be typing).
let ruleFormEl = null;

// With a shared store, a rule added here is saved there (every worker
// applies it), not in the person's config file: the heading says which.
function ruleForm(shared) {
  if (!ruleFormEl) ruleFormEl = buildRuleForm();
  ruleFormEl.querySelector('h2').textContent = shared ? 'Add a rule to the shared store' : 'Add a rule';
  return ruleFormEl;
}

function buildRuleForm() {
  const tool = h('input', { type: 'text', placeholder: 'run_command', testid: 'rule-tool', spellcheck: false });
  const command = h('input', { type: 'text', placeholder: 'cargo test (optional)', testid: 'rule-command', spellcheck: false });
  const path = h('input', { type: 'text', placeholder: 'src/** (optional)', testid: 'rule-path', spellcheck: false });
  const decision = h('select', { testid: 'rule-decision' },
    ['allow', 'ask', 'deny'].map((d) => h('option', { value: d }, d)));
  const error = h('div', { className: 'form-error', testid: 'rule-error', role: 'status', hidden: true });
  const add = h('button', { type: 'button', className: 'primary', testid: 'rule-add' }, 'Add rule');
  add.addEventListener('click', () => act(async () => {
    error.hidden = true;
    const body = {
      tool: tool.value.trim(),
      command: command.value.trim() || null,
      path: path.value.trim() || null,
      decision: decision.value,
    };
    try {
      await api('POST', '/api/rules', body, { quiet: true });
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      clear(error).append(h('strong', {}, e.message), e.hint ? h('div', {}, e.hint) : null);
      error.hidden = false;
      return;
    }
    for (const input of [tool, command, path]) input.value = '';
    await showPage('rules');
  }));
  return h('div', { className: 'card form-card' },
    h('h2', {}, 'Add a rule'),
    h('div', { className: 'form-row' },
      h('label', {}, 'Tool', tool),
      h('label', {}, 'Command prefix', command),
      h('label', {}, 'Path glob', path),
      h('label', {}, 'Decision', decision),
      add),
    error);
}

async function mcpPage() {
  const servers = (await api('GET', '/api/mcp')) || [];
  return [
    pageTitle('MCP servers'),
    servers.length
      ? servers.map((s) => h('article', { className: 'card', testid: 'mcp-server', dataset: { state: s.state } },
        h('header', { className: 'card-head' },
          h('code', { className: 'tool-name' }, s.name),
          h('span', { className: `pill state-${String(s.state).replace(/[^a-z]/g, '')}` }, s.state),
          s.transport ? h('span', { className: 'muted small' }, String(s.transport)) : null,
          h('span', { className: 'spacer' }),
          h('span', { className: 'muted small' }, plural((s.tools || []).length, 'tool'))),
        s.detail ? h('p', { className: 'muted' }, s.detail) : null,
        (s.tools || []).length ? h('ul', { className: 'tag-list' }, s.tools.map((t) => h('li', {}, h('code', {}, t)))) : null))
      : empty('No MCP servers are configured.'),
  ];
}

async function sandboxPage() {
  const sb = (await api('GET', '/api/sandbox')) || {};
  const rows = (sb.checks || []).map((c) => h('tr', { testid: 'sandbox-check' },
    h('td', { className: 'shrink' }, h('span', { className: `mark ${c.ok ? 'ok' : 'failed'}` }, c.ok ? '✓' : '✗')),
    h('td', {}, c.name),
    h('td', { className: 'muted' }, c.detail || '')));
  const limits = (sb.limits || []).map((l) => h('tr', { testid: 'sandbox-limit' },
    h('td', { className: 'shrink' }, h('span', { className: `mark ${l.enforced ? 'ok' : 'failed'}` }, l.enforced ? '✓' : '✗')),
    h('td', {}, h('code', {}, l.name)),
    h('td', {}, l.value),
    h('td', { className: 'muted' }, l.enforced ? l.how : `not enforced: ${l.how}`)));
  return [
    pageTitle('Sandbox'),
    h('div', { className: 'card' },
      h('p', {}, 'Level: ', h('span', { className: `pill level-${String(sb.level).replace(/[^a-z]/g, '')}`, testid: 'sandbox-level' }, sb.level || 'unknown')),
      sb.summary ? h('p', {}, sb.summary) : null),
    rows.length ? table(['', 'Check', 'Detail'], rows, 'sandbox-checks') : null,
    limits.length ? h('h2', {}, 'Limits per command (commands.limits)') : null,
    limits.length ? table(['', 'Limit', 'Value', 'Enforced by'], limits, 'sandbox-limits') : null,
  ];
}

const AUDIT_DECISIONS = [
  'executed', 'denied', 'rule_denied', 'guardrail', 'hook_blocked', 'no_approver', 'aborted',
  'not_found', 'invalid_arguments', 'dry_run', 'timed_out', 'panicked',
];

// The audit page's filters survive a refresh of the page's data.
const auditFilter = { decision: '', text: '' };

function effectText(effects) {
  if (effects === null || effects === undefined) return '';
  if (typeof effects === 'string') return effects;
  const list = Array.isArray(effects) ? effects : effects.known;
  if (!Array.isArray(list)) return JSON.stringify(effects);
  if (!list.length) return 'none';
  return list.map((e) => {
    if (!e || typeof e !== 'object') return String(e);
    const kind = e.kind || e.type || e.effect;
    const inner = kind ? e : Object.values(e)[0];
    const name = kind || Object.keys(e)[0];
    if (!inner || typeof inner !== 'object') return name;
    const target = inner.path || inner.command || inner.url || (inner.from ? `${inner.from} → ${inner.to}` : '');
    return target ? `${name} ${target}` : name;
  }).join(', ');
}

async function auditPage() {
  const query = new URLSearchParams({ limit: '200' });
  if (auditFilter.decision) query.set('decision', auditFilter.decision);
  const entries = (await api('GET', `/api/audit?${query}`)) || [];
  const select = h('select', { testid: 'audit-decision', aria: { label: 'Decision' } },
    h('option', { value: '' }, 'all decisions'),
    AUDIT_DECISIONS.map((d) => h('option', { value: d, selected: d === auditFilter.decision }, d)));
  select.addEventListener('change', () => {
    auditFilter.decision = select.value;
    act(() => showPage('audit'));
  });
  const text = h('input', {
    type: 'search', placeholder: 'filter: tool, session, error…', value: auditFilter.text,
    testid: 'audit-text', aria: { label: 'Filter' },
  });
  // One row of short cells per call, whose words never break, and under it
  // a row as wide as the table for what can be long (effects, the error),
  // shown whole: nothing is clipped and nothing scrolls sideways.
  const rows = entries.map((e) => {
    const effects = effectText(e.effects);
    const hay = [e.tool, e.decision, e.rule, e.session_id, e.call_id, e.error, effects].filter(Boolean).join(' ').toLowerCase();
    const main = h('tr', { className: 'audit-main', testid: 'audit-row', dataset: { decision: e.decision, hay } },
      // The date and the time may go on two lines; a word never breaks.
      h('td', { className: 'muted small', title: String(e.ts ?? '') }, fmtTime(typeof e.ts === 'string' ? Date.parse(e.ts) || e.ts : e.ts)),
      h('td', { className: 'nowrap' }, h('code', {}, e.tool)),
      h('td', { className: 'nowrap' },
        h('span', { className: `pill decision d-${String(e.decision).replace(/[^a-z_]/g, '')}` }, e.decision)),
      h('td', {}, h('span', { className: `mark ${e.success ? 'ok' : 'failed'}`, aria: { label: e.success ? 'succeeded' : 'failed' } }, e.success ? '✓' : '✗')),
      h('td', { className: 'num muted nowrap opt' }, e.duration_us !== undefined ? `${(e.duration_us / 1000).toFixed(1)} ms` : ''),
      h('td', { className: 'mono small nowrap opt', title: String(e.session_id ?? '') }, shortId(e.session_id)));
    const details = [
      e.rule ? h('div', { className: 'muted small' }, h('span', { className: 'label' }, 'rule '), e.rule) : null,
      effects && effects !== 'none' ? h('div', { className: 'mono small', testid: 'audit-effects' }, h('span', { className: 'label' }, 'effects '), effects) : null,
      e.error ? h('div', { className: 'small error-text', testid: 'audit-error' }, e.error) : null,
    ].filter(Boolean);
    const detail = details.length
      ? h('tr', { className: 'audit-detail', testid: 'audit-detail' }, h('td', { colSpan: 6 }, details))
      : null;
    if (detail) main.classList.add('has-detail');
    return { main, detail };
  });
  const filterRows = () => {
    auditFilter.text = text.value;
    const needle = text.value.trim().toLowerCase();
    for (const { main, detail } of rows) {
      main.hidden = !!needle && !main.dataset.hay.includes(needle);
      if (detail) detail.hidden = main.hidden;
    }
  };
  text.addEventListener('input', filterRows);
  filterRows();
  return [
    pageTitle('Audit log', h('span', { className: 'muted small' }, 'newest first')),
    h('div', { className: 'filters' }, select, text),
    rows.length
      ? table(['Time', 'Tool', 'Decision', 'OK', ['Duration', 'opt'], ['Session', 'opt']],
        rows.flatMap(({ main, detail }) => (detail ? [main, detail] : [main])), 'audit')
      : empty('No audit entries match.'),
  ];
}

// A static-analysis finding: {category, reason, matched, line} (other
// shapes are shown as they come).
function findingText(f) {
  if (typeof f === 'string') return f;
  if (f && typeof f === 'object') {
    const msg = f.reason || f.message || f.detail;
    if (msg) {
      const where = f.line ? `line ${f.line}: ` : '';
      const what = f.category || f.severity ? `${f.category || f.severity}: ` : '';
      return `${where}${what}${msg}${f.matched ? ` (${f.matched})` : ''}`;
    }
  }
  return JSON.stringify(f);
}

async function toolsPage() {
  const data = (await api('GET', '/api/dynamic')) || {};
  if (!data.enabled) {
    return [pageTitle('Dynamic tools'), empty('Dynamic tools are off (tools.dynamic in the config).')];
  }
  const pending = data.pending || [];
  const decide = (t, verb) => act(async () => {
    await api('POST', `/api/dynamic/${enc(t.id)}/${verb}`);
    await showPage('tools');
  });
  return [
    pageTitle('Dynamic tools', h('span', { className: 'muted small' }, 'tools the model wrote, waiting for review')),
    pending.length
      ? pending.map((t) => {
        // API.md names them `findings`; the review records call them `advice`.
        const findings = Array.isArray(t.findings) ? t.findings : Array.isArray(t.advice) ? t.advice : [];
        const about = [t.interpreter && `interpreter ${t.interpreter}`, t.scope && `scope ${t.scope}`,
          t.created_by && `by ${t.created_by}`, t.status].filter(Boolean).join(' · ');
        return h('article', { className: 'card', testid: 'dynamic-tool', dataset: { id: t.id } },
          h('header', { className: 'card-head' },
            h('code', { className: 'tool-name' }, t.name),
            h('span', { className: 'pill' }, t.kind || t.type),
            h('span', { className: 'spacer' }),
            h('span', { className: 'muted small' }, about)),
          t.description ? h('p', {}, t.description) : null,
          h('pre', { className: 'source', testid: 'dynamic-source' }, String(t.source ?? '')),
          t.parameters ? argsView(t.parameters, 'Parameters') : null,
          findings.length
            ? h('ul', { className: 'findings', testid: 'findings' }, findings.map((f) => h('li', {}, findingText(f))))
            : h('p', { className: 'muted small' }, 'No findings.'),
        h('div', { className: 'actions' },
          h('button', { type: 'button', className: 'primary', testid: 'dynamic-approve', on: { click: () => decide(t, 'approve') } }, 'Approve'),
          h('button', { type: 'button', className: 'danger', testid: 'dynamic-reject', on: { click: () => decide(t, 'reject') } }, 'Reject')));
      })
      : empty('No tools wait for review.'),
  ];
}

const PAGE_RENDERERS = {
  sessions: sessionsPage,
  rules: rulesPage,
  mcp: mcpPage,
  sandbox: sandboxPage,
  audit: auditPage,
  tools: toolsPage,
};

/** Loads and shows one of the pages other than the chat. */
async function showPage(page) {
  const gen = ++pageGen;
  const content = await PAGE_RENDERERS[page]();
  if (gen !== pageGen || state.route.page !== page) return;
  const el = $('page-other');
  // Keep the scroll position when a page refreshes itself after an event.
  const doc = document.scrollingElement || document.documentElement;
  const top = doc.scrollTop;
  clear(el);
  append(el, [content]);
  el.dataset.page = page;
  doc.scrollTop = top;
}

// ---------------------------------------------------------------------------
// Routing: #/chat, #/chat/<session>, #/sessions, #/rules, …

function parseRoute() {
  const m = /^#\/([a-z]+)(?:\/(.+))?$/.exec(location.hash);
  if (!m || !PAGES.includes(m[1])) return { page: 'chat', arg: null };
  let arg = null;
  if (m[2]) {
    try {
      arg = decodeURIComponent(m[2]);
    } catch {
      arg = null;
    }
  }
  return { page: m[1], arg };
}

function route() {
  const r = parseRoute();
  state.route = r;
  for (const a of document.querySelectorAll('.nav a')) {
    if (a.dataset.page === r.page) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  const isChat = r.page === 'chat';
  $('page-chat').hidden = !isChat;
  $('page-other').hidden = isChat;
  if (isChat) {
    if (r.arg && r.arg !== chat.session) act(() => openSession(r.arg));
    else if (!r.arg && chat.session) history.replaceState(null, '', `#/chat/${enc(chat.session)}`);
    renderApprovals();
    return;
  }
  clear($('page-other')).append(empty('Loading…'));
  window.scrollTo(0, 0);
  act(() => showPage(r.page));
}

// ---------------------------------------------------------------------------
// Start

async function loadState() {
  const s = await api('GET', '/api/state');
  state.info = s;
  state.agents = s.agents || [];
  if (!state.agent || !agentInfo(state.agent)) {
    state.agent = (state.agents.find((a) => a.name === 'build') || state.agents[0] || {}).name || null;
  }
  $('workspace').textContent = s.workspace || '';
  $('workspace').title = `toolgate ${s.version || ''} · workspace ${s.workspace || ''}`;
  // The configuration is re-read per request: show it unless a run of the
  // chat said what it uses.
  if ($('chat-model').dataset.source !== 'run') showModel(s.llm);
  renderAgents();
  setRuns(s.runs);
  replaceApprovals(s.pending);
}

function bind() {
  $('banner-dismiss').addEventListener('click', hideError);
  $('send').addEventListener('click', () => act(send));
  $('stop').addEventListener('click', () => act(stop));
  $('new-chat').addEventListener('click', () => {
    resetChat();
    if (location.hash !== '#/chat') location.hash = '#/chat';
    $('task-input').focus();
  });
  $('task-input').addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      act(send);
    }
  });
  $('agent-select').addEventListener('change', (e) => {
    state.agent = e.target.value;
    renderPermission();
  });
  for (const button of $('permission-toggle').querySelectorAll('button')) {
    button.addEventListener('click', () => act(() => setPermission(button.dataset.value)));
  }
  $('approve-all').addEventListener('click', () => act(() => answerAll('allow')));
  $('deny-all').addEventListener('click', () => act(() => answerAll('deny')));
  document.addEventListener('keydown', onKey);
  window.addEventListener('hashchange', route);
}

async function main() {
  bind();
  route();
  await act(loadState);
  updateChatControls();
  connectEvents();
}

main();
