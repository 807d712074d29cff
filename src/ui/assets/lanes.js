// SPDX-License-Identifier: Apache-2.0
// lanes.js: the page's canvas, its colors, and the lanes top to bottom with
// the legend that explains them.  Loaded first: every later file draws on
// these.
'use strict';

const $ = (id) => document.getElementById(id);
const canvas = $('canvas');
const ctx = canvas.getContext('2d', { alpha: false });

const COLOR = {
  bg: '#111217', grid: '#23262f', text: '#e6e7eb', dim: '#8b8d98',
  err: '#e5484d', warn: '#f5a524', note: '#3e9bff', ok: '#46a758',
  plain: '#7c8190', named: '#b18cff', anon: 'rgba(177,140,255,0.28)',
  db: '#2fb3a6', mainq: '#c86bff', http: '#3e9bff', mem: '#46a758',
  // Block I/O by who issued it, the colors of `report --html`'s io
  // lanes: the app's main thread, the rest of the app, other processes.
  ioMain: '#c62828', ioApp: '#ef8f00', ioOther: '#9aa5b1',
};
// The system under the app (a merged system trace's thread states).
const SYS_COLOR = { running: '#46a758', runnable: '#f5a524', sleeping: '#3a4150', io: '#e5484d', blocked: '#ff7ab6', freq: '#3e9bff' };
const LABEL_W = 132, AXIS_H = 22;

// Lanes, top to bottom.  `need` names the hello collectors that feed a
// lane: an empty lane says which is missing instead of looking quiet.
const LANES = [
  { id: 'findings', name: 'Findings', h: 50 },
  { id: 'recompose', name: 'Recompositions', h: 44, need: ['recompositions'], what: 'recompositions' },
  { id: 'frames', name: 'Frames', h: 34, need: ['frames'], what: 'frame timing' },
  { id: 'main', name: 'Main thread', h: 34, need: ['main_thread'], what: 'the main-thread watchdog' },
  { id: 'nav', name: 'Navigation', h: 26, need: ['nav_state', 'input'], what: 'navigation' },
  { id: 'http', name: 'HTTP', h: 44, need: ['curl', 'inflight', 'okhttp'], what: 'curl' },
  { id: 'db', name: 'DB', h: 44, need: ['sqlite', 'room'], what: 'SQLite' },
  { id: 'work', name: 'Work', h: 34, need: ['jobs', 'workmanager'], what: 'the job API' },
  { id: 'memory', name: 'Memory', h: 36, need: ['memory'], what: 'memory sampling' },
  { id: 'device', name: 'Device', h: 26, need: ['device'], what: 'device events' },
  { id: 'warnings', name: 'Warnings (W+)', h: 26, need: ['logs'], what: 'logs' },
  // The system under the app, from a system trace chosen in the menu:
  // shown (sysH tall) only while one is, above the block I/O lane.
  { id: 'sys', name: 'Main thread (sched)', h: 0, sysH: 28, system: true },
  { id: 'cpufreq', name: 'CPU frequency', h: 0, sysH: 30, system: true },
  { id: 'io', name: 'Block I/O', h: 40, what: 'block I/O' },
];
const laneById = {};
LANES.forEach((l) => { laneById[l.id] = l; });

// The legend: every color and mark the canvas draws, by lane (the
// test checks that each color a mark carries is named here).  kind is
// the swatch's shape: a bar, a point, a line, an outline or a band.
const LEGEND = [
  ['findings', 'Findings', [[COLOR.err, 'error'], [COLOR.warn, 'warning'], [COLOR.note, 'info'], ['rgba(255,255,255,0.16)', 'selected finding\'s window', 'band']]],
  ['recompose', 'Recompositions', [[COLOR.named, 'named state write'], [COLOR.plain, 'recomposition', 'point'], [COLOR.anon, 'anonymous write (Framework)']]],
  ['frames', 'Frames', [[COLOR.warn, 'late frame'], [COLOR.err, 'very late (3+ missed, 250 ms+)'], [COLOR.dim, 'height: refreshes missed', 'line']]],
  ['main', 'Main thread', [[COLOR.err, 'stall'], [COLOR.mainq, 'query on the main thread']]],
  ['http', 'HTTP', [[COLOR.http, 'call'], [COLOR.warn, 'slow (3 s+)'], [COLOR.err, 'failed or 4xx/5xx']]],
  ['db', 'DB', [[COLOR.db, 'query'], [COLOR.mainq, 'on the main thread'], [COLOR.err, 'failed']]],
  ['io', 'Block I/O', [[COLOR.ioMain, 'main thread'], [COLOR.ioApp, 'app'], [COLOR.ioOther, 'other process']]],
  ['sys', 'System', [[SYS_COLOR.running, 'running'], [SYS_COLOR.runnable, 'runnable (waiting for a CPU)'], [SYS_COLOR.sleeping, 'sleeping'], [SYS_COLOR.io, 'blocked in I/O'], [SYS_COLOR.blocked, 'blocked (uninterruptible, not I/O)'], [SYS_COLOR.freq, 'CPU frequency, one line per CPU', 'line']]],
  ['work', 'Work', [[COLOR.ok, 'succeeded'], [COLOR.warn, 'retried or other'], [COLOR.err, 'failed']]],
  ['memory', 'Memory', [[COLOR.mem, 'RSS', 'line'], [COLOR.warn, 'GC pause']]],
  ['nav', 'Navigation', [[COLOR.note, 'route change', 'point'], [COLOR.ok, 'tap answered < 100 ms'], [COLOR.warn, 'tap 100–500 ms'], [COLOR.err, 'tap > 500 ms'], [COLOR.text, 'mark', 'point']]],
  ['device', 'Device', [[COLOR.plain, 'device event', 'point'], [COLOR.warn, 'low memory', 'point'], [COLOR.note, 'startup, app restarted']]],
  ['warnings', 'Warnings', [[COLOR.warn, 'W log line', 'point'], [COLOR.err, 'E/F line, crash, exit, leak', 'point']]],
  ['selection', 'Selection', [[COLOR.text, 'selected mark', 'box'], [COLOR.text, 'cursor (log line)', 'line']]],
];
