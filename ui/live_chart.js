// KV Cache Lab: a Plotly chart that follows one slider in the browser, without waiting for the server.
//
// The server sends the figure for the slider's current value and, for every value the slider can
// take, the few figure attributes that change with it (computed by kvcore, see ui/live_chart.py).
// When the slider's value changes (a key press, a drag), the chart is redrawn at once from those
// values; the server's rerun then sends the same figure, which Plotly.react finds already drawn.
// Those attributes (the "follow") come whole once per content; later reruns send only their id.

const ROOT_CLASS = "kvlab-live-chart";

/** Plotly.js, loaded once per page from the server's copy of the plotly package. */
function loadPlotly(url, tries = 3) {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  window.__kvlabPlotly ??= new Promise((resolve, reject) => {
    const script = document.createElement("script");
    script.src = url;
    script.async = true;
    script.onload = () => resolve(window.Plotly);
    script.onerror = () => {
      script.remove();
      window.__kvlabPlotly = undefined;
      // A busy server or a dropped connection: try again after a moment before giving up.
      if (tries > 1) setTimeout(() => loadPlotly(url, tries - 1).then(resolve, reject), 1000);
      else reject(new Error(`Plotly did not load from ${url}`));
    };
    document.head.appendChild(script);
  });
  return window.__kvlabPlotly;
}

/** What a patch calls an item of a list: its uid, or its name; null for an unnamed item or a plain value. */
function identity(item) {
  if (item === null || typeof item !== "object" || Array.isArray(item)) return null;
  return item.uid ?? item.name ?? null;
}

/**
 * `path` with each named item of a list (a trace, a shape, an annotation) replaced by its position in the figure:
 * a text step into a list picks the one item known by that text (its uid or, without one, its name).
 * The same rule as resolved_path in live_chart.py, which has already checked every path before sending it.
 */
function resolvedPath(figure, path) {
  const resolved = [];
  let node = figure;
  path.forEach((step, depth) => {
    const where = resolved.join("/") || "the figure";
    if (Array.isArray(node) && typeof step === "string") {
      const matches = [];
      node.forEach((item, position) => {
        if (identity(item) === step) matches.push(position);
      });
      if (matches.length !== 1) {
        const known = node.map(identity).filter((name) => name !== null).map((name) => JSON.stringify(name));
        const found = matches.length === 0 ? "no item" : `${matches.length} items`;
        const holds = known.join(", ") || "no names";
        throw new Error(`patch ${JSON.stringify(path)}: ${found} named ${JSON.stringify(step)} in ${where} (it holds ${holds})`);
      }
      step = matches[0];
    }
    resolved.push(step);
    if (depth < path.length - 1) {
      node = node?.[step];
      if (node === undefined) throw new Error(`patch ${JSON.stringify(path)}: the figure has no ${step} in ${where}`);
    }
  });
  return resolved;
}

function setPath(target, path, value) {
  let node = target;
  for (const step of path.slice(0, -1)) node = node[step];
  node[path[path.length - 1]] = value;
}

/** The figure at the slider's `index`-th value: the server's figure with that value's patches. */
function figureAt(state, index) {
  const figure = structuredClone(state.figure);
  if (index !== null && index !== state.data.follow.index) {
    const follow = state.data.follow;
    // Every path is resolved against the figure as sent, before any patch is set.
    const paths = follow.patches.map((patch) => resolvedPath(figure, patch.path));
    // A patch without values takes the slider's own value (a marker at the chosen context).
    follow.patches.forEach((patch, number) => {
      setPath(figure, paths[number], patch.values === null ? gridValue(follow.values, index) : patch.values[index]);
    });
  }
  return figure;
}

/** The slider's thumb: Streamlit's slider is an <input type="range"> (react-aria) in a container named after its key. */
function sliderThumb(follow) {
  return document.querySelector(`.st-key-${CSS.escape(follow.key)} input[type="range"]`);
}

/** The slider's `index`-th value: its values are a list, or even steps {low, step, count}. */
function gridValue(grid, index) {
  return Array.isArray(grid) ? grid[index] : grid.low + index * grid.step;
}

/** Which of the follow's values the slider shows now (null: none of them, or no slider). */
function sliderIndex(follow, thumb) {
  if (!thumb) return null;
  const value = Number(thumb.value);
  if (!Number.isFinite(value)) return null;
  const tolerance = 1e-9 * Math.max(1, Math.abs(value));
  const grid = follow.values;
  if (!Array.isArray(grid)) {
    const index = Math.round((value - grid.low) / grid.step);
    const onGrid = index >= 0 && index < grid.count && Math.abs(gridValue(grid, index) - value) <= tolerance;
    return onGrid ? index : null;
  }
  const values = grid;
  let low = 0;
  let high = values.length - 1;
  while (low < high) {  // values ascend: the first one not below `value`
    const middle = (low + high) >> 1;
    if (values[middle] < value) low = middle + 1;
    else high = middle;
  }
  return Math.abs(values[low] - value) <= tolerance ? low : null;
}

function draw(state, index) {
  const figure = figureAt(state, index);
  state.shownIndex = index;
  state.Plotly.react(state.root, figure.data, figure.layout, state.data.config);
}

/** Redraw when the slider shows a value the chart does not (a key press, a drag, a preset). */
function follow(state) {
  const index = sliderIndex(state.data.follow, sliderThumb(state.data.follow));
  if (index !== null && index !== state.shownIndex) draw(state, index);
}

function watchSlider(state) {
  state.observer?.disconnect();
  const key = state.data.follow.key;
  state.observer = new MutationObserver((mutations) => {
    for (const mutation of mutations) {
      if (mutation.target.closest?.(`.st-key-${CSS.escape(key)}`)) {
        follow(state);
        return;
      }
    }
  });
  state.observer.observe(document.body, { subtree: true, attributes: true, attributeFilter: ["value"] });
}

/**
 * The follows this tab holds, by content id, the latest used last. The server sends a follow whole once,
 * then only its id while it is unchanged (ui/live_chart.py, follow_sent): on the page's global object, so that every
 * chart of the tab, and a chart mounted again, finds it.
 */
const HELD = (globalThis.__kvlabFollows ??= new Map());
const MAX_HELD = 16;

/** The follow `data` names: sent whole (kept from now on), or held; undefined when this tab lacks it. */
function heldFollow(data) {
  let along = HELD.get(data.follow_id);
  if (data.follow !== null) along = JSON.parse(data.follow);
  if (along === undefined) return undefined;
  HELD.delete(data.follow_id);
  HELD.set(data.follow_id, along);
  while (HELD.size > MAX_HELD) HELD.delete(HELD.keys().next().value);
  return along;
}

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  const root = parentElement.querySelector(`.${ROOT_CLASS}`);
  root.style.height = `${data.height}px`;
  const state = (root.__kvlab ??= { root, shownIndex: null });
  const along = heldFollow(data);
  if (along === undefined) {
    // Sent as its id only, and not held here (a message lost to a dropped connection): ask for it whole.
    setTriggerValue("missing", data.follow_id);
    return () => state.observer?.disconnect();
  }
  // The follow is the same for every slider value; the slider's index now comes beside it.
  state.data = { ...data, follow: { ...along, index: data.follow_index } };
  state.figure = JSON.parse(data.figure);
  const follow = state.data.follow;
  loadPlotly(data.plotly_url)
    .then((Plotly) => {
      state.Plotly = Plotly;
      // The slider may already be elsewhere (keys pressed while the server ran): draw where it is.
      const now = sliderIndex(follow, sliderThumb(follow));
      draw(state, now ?? follow.index);
      watchSlider(state);
      root.dataset.ready = "true";
    })
    .catch((error) => {
      root.textContent = data.error_text;
      root.dataset.error = String(error);
    });
  return () => state.observer?.disconnect();
}
